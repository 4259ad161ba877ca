"""Leaderboards on a hub: submit to a local git: hub, grade with `tgbhub leaderboard update` (never trusting a claim or
a meta.json), serve the hub and read the board from a second client and cache; hostile submissions in one push beside
an honest one."""

from __future__ import annotations

import json
import statistics
import subprocess
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tgbhub
from tgbhub import api
from tgbhub.cli import main
from tgbhub.evaluate.directions import higher_is_better, primary_metric
from tgbhub.evaluate.graded import Graded
from tgbhub.hub.serve import LocalHub, start_local_hub
from tgbhub.publish import parse_target, publish
from tgbhub.results import records
from tgbhub.results.grader import update
from tgbhub.results.ranking import COLUMNS, Entry, board_rows
from tgbhub.results.submissions import submit

NAME = "t-grab/pdet-2-1"
TASK = "snapshot-f1"
FIXED = datetime(2025, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def _forge(record: dict[str, Any], **metrics: float) -> dict[str, Any]:
    """A record whose metrics were edited and re-hashed: intact as a record, but not what its file earns."""
    forged = {k: v for k, v in record.items() if k != records.SHA_FIELD}
    forged["metrics"] = {**forged["metrics"], **metrics}
    forged[records.SHA_FIELD] = records.record_sha256(forged)
    return forged


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A family subset published to git:ROOT, three submissions (valid, malformed, forged claim), one update, and the
    hub served for the readers."""
    folder = tmp_path_factory.mktemp("leaderboard")
    cache, root = folder / "cache", folder / "hub"
    publish("t-grab", "1.0.0", parse_target(f"git:{root}"), datasets=["pdet-2-1"], cache_dir=cache)
    hub = f"git:{root}"
    common = ["--cache-dir", str(cache), "--offline", "--quiet"]
    valid, valid_record = folder / "valid.parquet", folder / "valid.json"
    assert main([*common, "baseline", "edgebank", NAME, "--out", str(valid), "--record", str(valid_record)]) == 0
    assert main([*common, "submit", NAME, str(valid), "--hub", hub, "--model", "edgebank", "--record",
                 str(valid_record), "--paper", "https://example.org/edgebank"]) == 0
    malformed = folder / "malformed.parquet"
    pq.write_table(pa.table({"a": [1, 2], "b": [0.5, 0.25]}), malformed)
    submit(NAME, malformed, to=hub, model="broken", task=TASK, cache_dir=cache, offline=True)
    forged_file = folder / "forged.parquet"
    graded = api.run_baseline("persistence", NAME, out=forged_file, cache_dir=cache, offline=True)
    forged = _forge(records.make_record(graded, cache_dir=cache, offline=True), f1=0.99)
    submit(NAME, forged_file, to=hub, model="persistence", record=forged, cache_dir=cache, offline=True)
    report = update(hub, cache_dir=cache, offline=True)
    with start_local_hub(root) as served:
        yield {"folder": folder, "cache": cache, "root": root, "hub": hub, "served": served, "report": report,
               "valid": valid, "valid_metrics": records.read_record(valid_record)["metrics"],
               "forged": forged_file, "forged_metrics": dict(graded.metrics)}


def _ids(*files: Path) -> list[str]:
    from tgbhub.results.submissions import submission_id

    return [submission_id(f) for f in files]


def test_update_grades_rejects_and_flags(board: dict[str, Any]) -> None:
    report = board["report"]
    valid, forged = _ids(board["valid"], board["forged"])
    assert sorted(report.graded) == sorted([valid, forged]) and len(report.rejected) == 1
    assert report.flagged == [forged] and report.boards == [f"leaderboards/{NAME}/{TASK}.parquet"]
    assert report.commit is not None


def test_a_second_client_reads_the_board_with_regraded_values(board: dict[str, Any], tmp_path: Path) -> None:
    served: LocalHub = board["served"]
    rows = tgbhub.leaderboard(NAME, endpoint=served.url, cache_dir=tmp_path / "second-client")
    assert [row["status"] for row in rows] == ["ranked", "ranked", "rejected"]
    first, second, rejected = rows
    assert (first["rank"], first["model"], first["metric"]) == (1, "edgebank", "f1")
    assert first["mean"] == board["valid_metrics"]["f1"] and first["verified"] and not first["flagged"]
    assert first["claimed"] == first["mean"] and first["paper"] == "https://example.org/edgebank"
    assert first["n"] == 1 and first["std"] is None and first["dataset"] == f"{NAME}@1.0.0"
    # the forged claim says 0.99; its file earns less, and that is the value on the board
    assert (second["rank"], second["model"], second["flagged"]) == (2, "persistence", True)
    assert second["mean"] == board["forged_metrics"]["f1"] < 0.99 and second["claimed"] == 0.99
    assert "claimed f1 0.99" in second["message"] and "re-graded values stand" in second["message"]
    # the malformed file: the evaluator's own message, no score
    assert rejected["rank"] is None and rejected["mean"] is None and not rejected["verified"]
    assert rejected["message"].startswith("submission column 't'") and rejected["record"] == ""
    columns = pq.read_schema(next((tmp_path / "second-client").rglob("*.parquet"))).names
    assert columns == [name for name, _ in COLUMNS]


def test_the_cli_prints_the_board(board: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = board["served"].url
    assert main(["--cache-dir", str(tmp_path / "c"), "leaderboard", "show", NAME, "--task", TASK, "--endpoint",
                 url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["rank", "model", "metric", "mark", "date", "record"]
    assert lines[1].split()[:3] == ["1", "edgebank", "f1"] and "verified" in lines[1] and "(1 seed)" in lines[1]
    assert "FLAGGED" in lines[2] and "rejected" in lines[3]
    assert main(["--cache-dir", str(tmp_path / "c"), "leaderboard", "show", NAME, "--task", "ranking", "--endpoint",
                 url]) == 2  # no submission to that task: no board
    assert "leaderboard update" in capsys.readouterr().err


def test_the_graders_record_verifies_and_a_tampered_file_fails(board: dict[str, Any], tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import hf_hub_download

    url, cache = board["served"].url, board["cache"]
    row = tgbhub.leaderboard(NAME, endpoint=url, cache_dir=tmp_path / "c")[0]
    record = hf_hub_download("tgbhub/results", row["record"], repo_type="dataset", endpoint=url,
                             cache_dir=tmp_path / "hf")
    submitted = hf_hub_download("tgbhub/submissions", f"submissions/{NAME}/1.0.0/{TASK}/{row['submission']}/"
                                "submission.parquet", repo_type="dataset", endpoint=url, cache_dir=tmp_path / "hf")
    assert Path(submitted).read_bytes() == board["valid"].read_bytes()
    assert records.read_record(record)["model"]["name"] == "edgebank"
    checked = records.verify(record, submitted, cache_dir=cache, offline=True, endpoint=url)
    assert checked.ok and checked.identity_checked and "record (hub's copy)" in [c["check"] for c in checked.checks]
    assert "identity included" in checked.lines()[-1]
    monkeypatch.delenv("TGBHUB_ENDPOINT", raising=False)
    alone = records.verify(record, submitted, cache_dir=cache, offline=True)
    assert alone.ok and not alone.identity_checked and "NOT checked" in alone.lines()[-1]
    table = pq.read_table(submitted)
    scores = table.column("score").to_numpy().copy()
    scores[int((scores >= 0.5).nonzero()[0][0])] = 0.0
    tampered = tmp_path / "tampered.parquet"
    pq.write_table(table.set_column(table.schema.get_field_index("score"), "score", pa.array(scores)), tampered)
    found = records.verify(record, tampered, cache_dir=cache, offline=True)
    assert not found.ok and {"submission sha256", "metric f1"} <= set(found.mismatched)


def _head(root: Path, repo: str) -> str:
    return subprocess.run(["git", "-C", str(root / "datasets" / "tgbhub" / repo), "rev-parse", "main"],
                          capture_output=True, text=True, check=True).stdout.strip()


def test_update_is_idempotent_and_a_new_seed_joins_its_row(board: dict[str, Any], tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    root, hub, cache = board["root"], board["hub"], board["cache"]
    before = _head(root, "results")
    assert main(["--cache-dir", str(cache), "--offline", "leaderboard", "update", "--hub", hub, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"graded": [], "rejected": [], "flagged": [], "boards": [],
                                                   "commit": None, "skipped": [], "messages": {}}
    assert _head(root, "results") == before
    # two seeds of one model: the new one and a second one aggregate into one row (the older rows stay)
    values = {}
    for seed in (1, 2):
        out = tmp_path / f"seed{seed}.parquet"
        table = pq.read_table(board["valid"])
        scores = table.column("score").to_numpy().copy()
        scores[int((scores >= 0.5).nonzero()[0][seed])] = 0.0  # each seed's run differs a little
        pq.write_table(table.set_column(table.schema.get_field_index("score"), "score", pa.array(scores)), out)
        values[seed] = api.grade(NAME, out, cache_dir=cache, offline=True).metrics["f1"]
        submit(NAME, out, to=hub, model="gclstm", seed=seed, cache_dir=cache, offline=True)
    report = update(hub, cache_dir=cache, offline=True)
    assert len(report.graded) == 2 and not report.rejected and not report.flagged
    with start_local_hub(root) as served:
        rows = tgbhub.leaderboard(NAME, endpoint=served.url, cache_dir=tmp_path / "reader")
    assert [row["model"] for row in rows] == ["edgebank", "gclstm", "persistence", "broken"]
    seeded = rows[1]
    assert (seeded["n"], json.loads(seeded["seeds"]), seeded["rank"]) == (2, [1, 2], 2)
    assert seeded["mean"] == pytest.approx(statistics.fmean(values.values()))
    assert seeded["std"] == pytest.approx(statistics.stdev(values.values()))
    assert seeded["claimed"] is None and not seeded["flagged"] and "," in seeded["submission"]


# --- the board itself: direction, ties, seeds (pure) -------------------------------------------------------------

def _entry(model: str, seed: int | None, metrics: dict[str, float], sid: str, day: int = 2) -> Entry:
    manifest = api.resolve(NAME)
    result = {"dataset": NAME, "version": manifest.version, "digest": "d", "digests": {"edges.parquet": "d"},
              "task": TASK, "task_type": "snapshot-link-prediction", "split": "test", "metrics": metrics}
    record = records.make_record(Graded("evaluate", result, model=model, run={"seed": seed}), manifest=manifest,
                                 now=FIXED)
    meta = {"model": model, "seed": seed, "dataset": f"{NAME}@{manifest.version}",
            "submitted": f"2025-01-0{day}T00:00:00Z",
            "paper": None, "split": "test", "task": TASK}
    return Entry(sid, (NAME, TASK), meta, record=record)


def test_ranking_follows_the_metric_direction_and_ties_share_a_rank() -> None:
    entries = [_entry("a", None, {"f1": 0.5, "mse": 0.3}, "a0"), _entry("b", None, {"f1": 0.7, "mse": 0.1}, "b0"),
               _entry("c", None, {"f1": 0.5, "mse": 0.3}, "c0", day=3)]
    up = board_rows(entries, {"name": TASK, "metric": "f1"})
    assert [(r["model"], r["rank"]) for r in up] == [("b", 1), ("a", 2), ("c", 2)]
    down = board_rows(entries, {"name": TASK, "primary_metric": "mse"})
    assert [(r["model"], r["rank"], r["metric"]) for r in down] == [("b", 1, "mse"), ("a", 2, "mse"), ("c", 2, "mse")]
    assert [r["model"] for r in board_rows(entries, {"name": TASK, "metric": "f1", "higher_is_better": False})] == \
        ["a", "c", "b"]


def test_seeds_of_one_model_aggregate_and_a_repeated_seed_stands_apart() -> None:
    values = [0.5, 0.625, 0.875]
    entries = [_entry("m", seed, {"f1": v}, f"s{seed}") for seed, v in enumerate(values)]
    entries.append(_entry("m", 0, {"f1": 0.1}, "again", day=3))  # seed 0 a second time: not counted twice
    rows = board_rows(entries, {"name": TASK, "metric": "f1"})
    assert [(r["n"], r["seeds"]) for r in rows] == [(3, "[0, 1, 2]"), (1, "[0]")]
    assert rows[0]["mean"] == pytest.approx(statistics.fmean(values))
    assert rows[0]["std"] == pytest.approx(statistics.stdev(values)) and rows[1]["std"] is None
    assert rows[0]["submission"] == "s0,s1,s2" and rows[0]["record"].endswith("/s0.json")


def test_metric_directions_and_primary_metrics() -> None:
    assert higher_is_better("mrr") and higher_is_better("hits@10") and higher_is_better("vpt")
    assert not higher_is_better("nrmse_at_12") and not higher_is_better("mse") and not higher_is_better("test_mse")
    assert primary_metric({"metric": "f1"}) == "f1" and primary_metric({"metrics": ["mrr", "hits@1"]}) == "mrr"
    assert primary_metric({"primary_metric": "vpt", "metrics": ["x"]}) == "vpt"
    with pytest.raises(tgbhub.ManifestError, match="primary_metric"):
        primary_metric({"name": "bare"})


def test_seed_baselines_puts_every_task_on_the_board(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache, root = tmp_path / "cache", tmp_path / "hub"
    publish("t-grab", "1.0.0", parse_target(f"git:{root}"), datasets=["pdet-2-1"], cache_dir=cache)
    args = ["--cache-dir", str(cache), "--offline", "--quiet", "leaderboard", "seed", "--hub", f"git:{root}",
            "--datasets", "t-grab/pdet-2-1", "--models", "edgebank,persistence", "--json"]
    assert main(args) == 0
    done = json.loads(capsys.readouterr().out)
    tasks = [str(t["name"]) for t in api.with_task_documents(api.resolve(NAME)).tasks]
    assert {item["task"] for item in done} == set(tasks) and "window-forecast" in tasks
    assert len(done) == 2 * len(tasks) and {item["status"] for item in done} == {"submitted"}
    assert main(args) == 0 and {i["status"] for i in json.loads(capsys.readouterr().out)} == {"exists"}
    report = update(f"git:{root}", cache_dir=cache, offline=True)
    assert len(report.graded) == len(done) and not report.rejected and not report.flagged
    assert report.boards == sorted(f"leaderboards/{NAME}/{task}.parquet" for task in tasks)
    with start_local_hub(root) as served:
        for task in tasks:
            rows = tgbhub.leaderboard(NAME, task, endpoint=served.url, cache_dir=tmp_path / "reader")
            assert {r["model"] for r in rows} == {"edgebank", "persistence"}
            assert all(r["status"] == "ranked" and r["verified"] and not r["flagged"] and r["claimed"] == r["mean"]
                       for r in rows)
            assert [r["rank"] for r in rows] in ([1, 2], [1, 1])


def test_seed_baselines_puts_the_chaosnet_reference_predictors_on_the_board(tmp_path: Path) -> None:
    """The reference predictors of a ChaosNet instance (rollout task) are seeded the same way: one row each, ranked
    by VPT (higher is better), every one re-graded."""
    from tgbhub.baselines.registry import models_for
    from tgbhub.results.leaderboards import seed_baselines

    cache, root, name = tmp_path / "cache", tmp_path / "hub", "chaosnet/mini-k0.5-rho0.1-n8"
    publish("chaosnet", "1.1.0", parse_target(f"git:{root}"), datasets=["mini-k0.5-rho0.1-n8"], cache_dir=cache)
    done = seed_baselines(f"git:{root}", family="chaosnet", datasets=["mini-k0.5-rho0.1-n8"], cache_dir=cache,
                          offline=True)
    models = set(models_for("rollout-forecasting"))  # the task's type: persistence, linear, zero
    assert {item.task for item in done} == {"rollout"} and len(done) >= 2
    report = update(f"git:{root}", cache_dir=cache, offline=True)
    assert len(report.graded) == len(done) and not report.rejected and not report.flagged
    with start_local_hub(root) as served:
        rows = tgbhub.leaderboard(name, "rollout", endpoint=served.url, cache_dir=tmp_path / "reader")
    assert len(rows) == len(done) and all(r["status"] == "ranked" and r["metric"] == "vpt" for r in rows)
    assert {r["model"] for r in rows} == models
    means = [r["mean"] for r in rows]
    assert means == sorted(means, reverse=True)


def test_update_grades_on_a_dask_cluster_as_it_does_here(tmp_path: Path) -> None:
    """`leaderboard update --scheduler local:1` grades each submission as a task on a real LocalCluster: the same
    records' metrics and the same board as grading in this process."""
    pytest.importorskip("distributed")
    from tgbhub.results.leaderboards import seed_baselines

    cache = tmp_path / "cache"
    boards = {}
    for where, scheduler in (("here", None), ("cluster", "local:1")):
        root = tmp_path / where
        publish("t-grab", "1.0.0", parse_target(f"git:{root}"), datasets=["pdet-2-1"], cache_dir=cache)
        seed_baselines(f"git:{root}", datasets=["pdet-2-1"], models=["edgebank", "persistence"], cache_dir=cache,
                       offline=True)
        report = update(f"git:{root}", scheduler=scheduler, cache_dir=cache, offline=True)
        assert report.graded and not report.rejected and not report.flagged
        with start_local_hub(root) as served:
            # the date and the record's path (named by the folder's state: its meta.json holds the submission
            # time) differ between the two hubs; every graded value must not
            boards[where] = {Path(path).stem: [{k: v for k, v in row.items() if k not in ("date", "record")}
                                               for row in tgbhub.leaderboard(NAME, Path(path).stem,
                                                                             endpoint=served.url,
                                                                             cache_dir=tmp_path / f"reader-{where}")]
                             for path in report.boards}
    assert boards["cluster"] == boards["here"] and len(boards["here"]) >= 2


def test_trained_runs_join_the_board_one_row_for_their_seeds(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """`tgbhub train --record` runs, submitted with `leaderboard seed --runs`, are re-graded like any submission and
    their seeds aggregate into one row; a run folder without its record is refused, saying how to write one."""
    pytest.importorskip("torch")
    cache, root, name = tmp_path / "cache", tmp_path / "hub", "chaosnet/mini-k0.5-rho0.1-n8"
    publish("chaosnet", "1.1.0", parse_target(f"git:{root}"), datasets=["mini-k0.5-rho0.1-n8"], cache_dir=cache)
    runs = []
    for seed in (42, 43):
        out = tmp_path / f"dlinear-s{seed}"
        assert main(["--cache-dir", str(cache), "--offline", "--quiet", "train", "dlinear", name, "--seed",
                     str(seed), "--device", "cpu", "--epochs", "1", "--limit-batches", "3", "--out", str(out),
                     "--record", str(out / "record.json")]) == 0
        runs.append(str(out))
    capsys.readouterr()
    args = ["--cache-dir", str(cache), "--offline", "--quiet", "leaderboard", "seed", "--hub", f"git:{root}"]
    assert main([*args, "--runs", *runs, "--json"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert [item["status"] for item in done] == ["submitted", "submitted"]
    report = update(f"git:{root}", cache_dir=cache, offline=True)
    assert len(report.graded) == 2 and not report.rejected and not report.flagged
    with start_local_hub(root) as served:
        rows = tgbhub.leaderboard(name, "rollout", endpoint=served.url, cache_dir=tmp_path / "reader")
    assert len(rows) == 1 and rows[0]["model"] == "dlinear" and json.loads(rows[0]["seeds"]) == [42, 43], rows
    assert rows[0]["verified"] and rows[0]["status"] == "ranked"
    empty = tmp_path / "no-record"
    empty.mkdir()
    assert main([*args, "--runs", str(empty)]) == 2
    assert "has no record.json" in capsys.readouterr().err


def test_the_hubs_site_shows_the_graded_board(board: dict[str, Any], tmp_path: Path) -> None:
    """The results repo that ``update`` committed is what the served site renders: its leaderboard page ranks the
    valid run with the re-graded value, flags the forged claim and shows the rejection, and each ranked row's record
    is downloadable, byte for byte the grader's."""
    import requests

    from tgbhub.site.boards import hub_results
    from tgbhub.site.builder import build_site

    results_repo = hub_results(board["root"])
    assert results_repo is not None
    build_site(tmp_path / "site", family="t-grab", results=results_repo)
    with start_local_hub(board["root"], site=tmp_path / "site") as served:
        page = requests.get(f"{served.url}/site/leaderboards/{NAME}/{TASK}.html", timeout=30)
        assert page.status_code == 200, page.text[:500]
        text = page.text
        f1 = board["valid_metrics"]["f1"]
        assert "edgebank" in text and "persistence" in text and "broken" in text
        assert f"{f1:.4f}" in text  # the re-graded value, as the page rounds it
        assert "submission column" in text  # the evaluator's message on the rejected row
        rows = tgbhub.leaderboard(NAME, task=TASK, endpoint=served.url, cache_dir=tmp_path / "reader")
        ranked = [row for row in rows if row["status"] == "ranked"]
        for row in ranked:
            record = requests.get(f"{served.url}/site/{row['record']}", timeout=30)
            assert record.status_code == 200 and records.record_sha256(record.json()) == \
                record.json()[records.SHA_FIELD]


# --- one push of hostile submissions beside an honest one ----------------------------------------------------------

FOLDER = f"submissions/{NAME}/1.0.0/{TASK}"
EVIL = "evil\x1b[2J\x1b]0;owned\x07\u202e"


def _meta(model: str, **changes: Any) -> bytes:
    """A meta.json as `tgbhub submit` writes it, with ``changes`` (a value of ``None`` drops the key)."""
    meta = {"model": model, "paper": None, "submitted": "2025-01-02T03:04:05Z", "dataset": f"{NAME}@1.0.0",
            "task": TASK, "split": "test", "seed": None, "hyperparameters": None, **changes}
    return json.dumps({k: v for k, v in meta.items() if v is not None or k not in changes}).encode()


def _push(root: Path, files: dict[str, bytes | Path], message: str) -> None:
    """``files`` committed onto the submissions repo in one commit, as a client writing the repo directly would."""
    import hashlib

    from tgbhub.hub.git import GitTarget
    from tgbhub.hub.layout import RepoFile
    from tgbhub.hub.release import commit_files

    planned = [RepoFile(path, hashlib.sha256(data).hexdigest(), len(data), data=data) if isinstance(data, bytes)
               else RepoFile(path, hashlib.sha256(data.read_bytes()).hexdigest(), data.stat().st_size, local=data)
               for path, data in files.items()]
    with GitTarget(root).open_repo("tgbhub/submissions", write=True) as session:
        assert session is not None
        commit_files(session, planned, message)


def _variant(base: Path, out: Path, step: int) -> Path:
    """A valid file with other bytes than ``base`` (one low score nudged), so it has its own submission id."""
    table = pq.read_table(base)
    scores = table.column("score").to_numpy().copy()
    low = (scores < 0.5).nonzero()[0]
    scores[int(low[step])] = np.float32(0.001 * (step + 1))
    pq.write_table(table.set_column(table.schema.get_field_index("score"), "score", pa.array(scores)), out)
    return out


def _oracle(cache: Path, path: Path) -> Path:
    """A perfect file built from the public test edges: score 1 exactly where the test split has an edge."""
    dataset = tgbhub.load_dataset(NAME, cache_dir=cache, offline=True)
    keys = dataset.evaluator.submission_keys("test")
    truth = dataset.split("test")
    n = int(dataset.manifest.graph["num_nodes"])
    code = lambda t, s, d: (np.asarray(t, np.int64) * n + np.asarray(s)) * n + np.asarray(d)  # noqa: E731
    score = np.isin(code(keys["t"], keys["src"], keys["dst"]), code(truth.t, truth.src, truth.dst))
    pq.write_table(pa.table({**keys, "score": score.astype(np.float32)}), path)
    return path


def _bomb(path: Path) -> Path:
    """2x10^8 rows of the task's own columns in about 1.4 MB: constant columns, dictionary- and run-length-encoded."""
    rows = 25_000_000
    chunk = pa.table({"t": np.full(rows, 90, dtype=np.int64), "src": np.zeros(rows, dtype=np.int32),
                      "dst": np.ones(rows, dtype=np.int32), "score": np.zeros(rows, dtype=np.float32)})
    with pq.ParquetWriter(path, chunk.schema, compression="none", write_statistics=False) as writer:
        for _ in range(8):
            writer.write_table(chunk, row_group_size=rows)
    return path


def _board_rows(root: Path) -> list[dict[str, Any]]:
    from tgbhub.site.boards import hub_results, read_results

    return [dict(row) for row in read_results(hub_results(root)).boards[(NAME, TASK)].rows]  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One push: an honest submission beside a foreign meta, a split mismatch, a non-JSON meta, a meta without its
    dataset, an unknown dataset (named in a meta, and as the folder's place), a folder without meta, a 2x10^8-row
    bomb, a claim re-hashed under another model's name, a model name with terminal escapes, a perfect file built
    from the test edges and a file whose grading never ends; then one update."""
    import resource

    from tgbhub import scale
    from tgbhub.results.submissions import prepare, submission_id

    folder = tmp_path_factory.mktemp("hostile")
    cache, root = folder / "cache", folder / "hub"
    publish("t-grab", "1.0.0", parse_target(f"git:{root}"), datasets=["pdet-2-1"], cache_dir=cache)
    honest = folder / "honest.parquet"
    graded = api.run_baseline("edgebank", NAME, out=honest, cache_dir=cache, offline=True)
    honest_record = records.make_record(graded, cache_dir=cache, offline=True)
    base = folder / "base.parquet"
    persistence = api.run_baseline("persistence", NAME, out=base, cache_dir=cache, offline=True)
    files = {name: _variant(base, folder / f"{name}.parquet", step) for step, name in enumerate(
        ("foreign", "split", "nonjson", "nodataset", "unknown", "nometa", "forged", "escaped", "slow"))}
    files["bomb"] = _bomb(folder / "bomb.parquet")
    files["oracle"] = _oracle(cache, folder / "oracle.parquet")
    ids = {name: submission_id(path) for name, path in files.items()}
    forged_claim = records.make_record(api.grade(NAME, files["forged"], cache_dir=cache, offline=True),
                                       cache_dir=cache, offline=True)
    forged_claim = {k: v for k, v in forged_claim.items() if k != records.SHA_FIELD}
    forged_claim["model"] = {**forged_claim["model"], "name": "sota-net"}
    forged_claim[records.SHA_FIELD] = records.record_sha256(forged_claim)
    push: dict[str, bytes | Path] = {item.path: item.data if item.data is not None else item.local  # type: ignore
                                     for item in prepare(NAME, honest, model="edgebank", record=honest_record,
                                                         cache_dir=cache, offline=True).files}
    metas = {"foreign": _meta("foreign", dataset="t-grab/pdet-2-16@1.0.0"), "split": _meta("split", split="val"),
             "nonjson": b"{not json", "nodataset": _meta("nodataset", dataset=None),
             "unknown": _meta("unknown", dataset="t-grab/no-such@1.0.0"), "forged": _meta("persistence"),
             "escaped": _meta(EVIL), "slow": _meta("slow"), "bomb": _meta("bomb"), "oracle": _meta("oracle")}
    for name, path in files.items():
        push[f"{FOLDER}/{ids[name]}/submission.parquet"] = path
        if name in metas:
            push[f"{FOLDER}/{ids[name]}/meta.json"] = metas[name]
    push[f"{FOLDER}/{ids['forged']}/claim.json"] = records.canonical_json(forged_claim)
    elsewhere = f"submissions/t-grab/no-such/1.0.0/{TASK}/{ids['unknown']}"  # an unknown dataset as the place
    push[f"{elsewhere}/submission.parquet"] = files["unknown"]
    push[f"{elsewhere}/meta.json"] = _meta("unknown", dataset="t-grab/no-such@1.0.0")
    _push(root, push, "one batch: honest and hostile")
    read_table, touched = pq.read_table, folder / "bomb-was-read"

    def guarded_read(source: Any, *args: Any, **kwargs: Any) -> Any:  # the bomb must be refused from its footer
        if ids["bomb"] in str(source):
            touched.write_text("read")
        return read_table(source, *args, **kwargs)

    grade_task = scale.grade_task

    def slow_grade(name: str, file: str, options: Any) -> Any:  # a grading that never ends
        if ids["slow"] in file:
            import time

            time.sleep(600)
        return grade_task(name, file, options)

    api.grade(NAME, honest, cache_dir=cache, offline=True)  # kernels compiled here, inherited by the grader
    memory = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pq, "read_table", guarded_read)
        patch.setattr(scale, "grade_task", slow_grade)
        report = update(f"git:{root}", cache_dir=cache, offline=True, time_limit=5)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - memory
    # the largest child of the session so far, or the graders of this update if they were larger
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, children_before
    with start_local_hub(root) as served:
        yield {"root": root, "cache": cache, "report": report, "ids": ids, "honest": honest, "files": files,
               "honest_record": honest_record, "persistence": persistence, "bomb_read": touched.exists(),
               "memory_kib": (grown, children), "served": served, "rows": _board_rows(root)}


def test_one_push_of_hostile_submissions_grades_the_honest_one(hostile: dict[str, Any]) -> None:
    report, ids, rows = hostile["report"], hostile["ids"], hostile["rows"]
    honest = [r for r in rows if r["model"] == "edgebank"]
    assert len(honest) == 1 and honest[0]["status"] == "ranked" and honest[0]["verified"]
    assert not honest[0]["flagged"] and honest[0]["mean"] == hostile["honest_record"]["metrics"]["f1"]
    assert report.commit is not None and sorted(report.graded) == sorted(
        [honest[0]["submission"], ids["forged"], ids["escaped"], ids["oracle"]])
    rejected = {r["submission"]: r["message"] for r in rows if r["status"] == "rejected"}
    expected = {"foreign": ["'t-grab/pdet-2-16@1.0.0'", "'t-grab/pdet-2-1@1.0.0'"], "split": ["'val'", "'test'"],
                "nonjson": ["meta.json is not JSON"], "nodataset": ["meta.json has no 'dataset'"],
                "unknown": ["'t-grab/no-such@1.0.0'", "'t-grab/pdet-2-1@1.0.0'"], "nometa": ["no meta.json"],
                "bomb": ["200000000 rows", "at most 79200", "unread"], "slow": ["longer than 5 s"]}
    for name, words in expected.items():
        assert all(word in rejected[ids[name]] for word in words), (name, rejected[ids[name]])
    # the unknown place has no board; its rejection is in the report and the results repo
    assert "no-such" in report.messages[ids["unknown"]] and report.boards == [f"leaderboards/{NAME}/{TASK}.parquet"]
    forged = next(r for r in rows if r["submission"] == ids["forged"])
    assert forged["status"] == "ranked" and forged["flagged"] and forged["model"] == "persistence"
    assert "the claim names model.name 'sota-net', the submission 'persistence'" in forged["message"]
    # a file built from the public test edges reaches the ceiling: ranked first, and flagged as an oracle would be
    oracle = next(r for r in rows if r["submission"] == ids["oracle"])
    assert (oracle["rank"], oracle["mean"], oracle["flagged"]) == (1, 1.0, True)
    assert "the task's ceiling" in oracle["message"] and "oracle" in oracle["message"]
    assert sorted(report.flagged) == sorted([ids["forged"], ids["oracle"]])


def test_the_bomb_is_refused_from_its_footer_in_bounded_memory(hostile: dict[str, Any]) -> None:
    bomb = hostile["files"]["bomb"]
    assert bomb.stat().st_size < 4 << 20 and pq.read_metadata(bomb).num_rows == 200_000_000
    assert not hostile["bomb_read"]  # no process read its rows
    grown, (children, before) = hostile["memory_kib"]
    assert grown < 1 << 20 and children <= max(before, 2 << 20)  # KiB: far below the 4 GB its rows decode to
    with pytest.raises(tgbhub.SubmissionError, match="200000000 rows"):  # the same bound in `tgbhub evaluate`
        api.grade(NAME, bomb, cache_dir=hostile["cache"], offline=True)


def test_escaped_names_print_as_escapes(hostile: dict[str, Any], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    from tgbhub.results.leaderboards import table_lines

    row = next(r for r in hostile["rows"] if r["submission"] == hostile["ids"]["escaped"])
    assert row["model"] == EVIL and row["status"] == "ranked"  # stored as written: the site escapes it for HTML
    assert main(["--cache-dir", str(tmp_path), "leaderboard", "show", NAME, "--task", TASK, "--endpoint",
                 hostile["served"].url]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "evil\\x1b[2J\\x1b]0;owned\\x07\\u202e" in out
    assert all("\x1b" not in line for line in table_lines(hostile["rows"]))


def test_a_rehashed_record_fails_against_the_hubs_copy(hostile: dict[str, Any], tmp_path: Path) -> None:
    from huggingface_hub import hf_hub_download

    url, cache = hostile["served"].url, hostile["cache"]
    row = next(r for r in hostile["rows"] if r["model"] == "edgebank")
    record = records.read_record(hf_hub_download("tgbhub/results", row["record"], repo_type="dataset",
                                                 endpoint=url, cache_dir=tmp_path / "hf"))
    assert record["hub"]["folder"] == f"{FOLDER}/{row['submission']}" and record["hub"]["path"] == row["record"]
    for field, value in (("model", {**record["model"], "name": "renamed", "seed": 7}),
                         ("environment", {**record["environment"], "cpu": "faster"}),
                         ("created", "2020-01-01T00:00:00Z")):
        forged = {k: v for k, v in record.items() if k != records.SHA_FIELD}
        forged[field] = value
        forged[records.SHA_FIELD] = records.record_sha256(forged)
        path = tmp_path / f"{field}.json"
        records.write_record(forged, path)
        found = records.verify(path, hostile["honest"], cache_dir=cache, offline=True, endpoint=url)
        assert not found.ok and found.mismatched == ["record (hub's copy)"], found.checks
        assert f"differs in {field}" in found.lines()[-3] or any(f"differs in {field}" in line
                                                                for line in found.lines())
    moved = {k: v for k, v in record.items() if k != records.SHA_FIELD}
    moved["hub"] = {**record["hub"], "folder": f"submissions/t-grab/pdet-2-16/1.0.0/{TASK}/{row['submission']}"}
    moved[records.SHA_FIELD] = records.record_sha256(moved)
    records.write_record(moved, tmp_path / "moved.json")
    found = records.verify(tmp_path / "moved.json", hostile["honest"], cache_dir=cache, offline=True)
    assert "place" in found.mismatched and not found.identity_checked


def test_a_foreign_meta_cannot_rename_a_graded_row_and_updates_are_idempotent(hostile: dict[str, Any]) -> None:
    root, cache = hostile["root"], hostile["cache"]
    honest = next(r for r in hostile["rows"] if r["model"] == "edgebank")
    before = _head(root, "results")
    assert update(f"git:{root}", cache_dir=cache, offline=True).commit is None and _head(root, "results") == before
    _push(root, {f"{FOLDER}/{honest['submission']}/meta.json": _meta("thief")}, "overwrite another's meta")
    report = update(f"git:{root}", cache_dir=cache, offline=True)
    assert report.rejected == [honest["submission"]] and not report.graded
    assert "now names model 'thief', but this folder was first graded as model 'edgebank'" in \
        report.messages[honest["submission"]]
    rows = _board_rows(root)
    kept = [r for r in rows if r["submission"] == honest["submission"]]
    assert [(r["model"], r["status"], r["record"]) for r in kept] == [
        ("edgebank", "ranked", honest["record"]), ("thief", "rejected", "")]
    again = _head(root, "results")
    assert update(f"git:{root}", cache_dir=cache, offline=True).commit is None and _head(root, "results") == again


# --- trained reproductions: `leaderboard seed --trained` --------------------------------------------------------

MINI = "chaosnet/mini-k2.0-rho0.1-n8"


def test_the_reproduction_catalogue_names_what_runs_and_what_was_published() -> None:
    """By default: ChaosNet DLinear and LSTM on the instances with published numbers (each run carries its number),
    T-GRAB GC-LSTM and TGN bounded in epochs on small datasets; the numbers are upstream's as the docs quote them."""
    from tgbhub.results import reproductions

    planned = reproductions.plan()
    chaosnet = [r for r in planned if r.dataset.startswith("chaosnet/")]
    tgrab = [r for r in planned if r.dataset.startswith("t-grab/")]
    assert {(r.dataset, r.model) for r in chaosnet} == {(d, m) for d in ("chaosnet/k0.5-rho0.3-n8",
                                                                         "chaosnet/k2.0-rho0.2-n8")
                                                        for m in ("dlinear", "lstm")}
    assert all(r.published is not None and r.epochs is None and r.seeds == (42, 43, 44) for r in chaosnet)
    assert {r.model for r in tgrab} == {"gclstm", "tgn"} and all(r.epochs == reproductions.TGRAB_EPOCHS
                                                                 and r.published is None for r in tgrab)
    for name in {r.dataset for r in planned}:
        api.resolve(name)  # every catalogued dataset exists
    quoted = json.loads((Path(__file__).parents[1] / "docs" / "figures" / "training-runs.json").read_text())
    for row in quoted["published"]:
        found = reproductions.PUBLISHED[(row["dataset"], row["model"])].metrics
        assert (found["test_mse"]["mean"], found["test_mse"]["std"], found["vpt"]["mean"]) == (
            row["test_mse_mean"], row["test_mse_std"], row["vpt_mean"])
    narrowed = reproductions.plan("t-grab", models=["tgn"], seeds=[1], epochs=2)
    assert [(r.model, r.seeds, r.epochs) for r in narrowed] == [("tgn", (1,), 2)] * 2
    for bad, words in (({"family": "tgb"}, "has no trained reproductions"),
                       ({"datasets": ["t-grab/pdet-2-1"], "models": ["dlinear"]}, "'dlinear'"),
                       ({"datasets": ["tgb/tgbl-wiki"]}, "'tgb/tgbl-wiki'"), ({"seeds": []}, "--seeds"),
                       ({"epochs": 0}, "--epochs 0")):
        with pytest.raises(tgbhub.InvalidNameError, match=words):
            reproductions.plan(**bad)


@pytest.mark.usefixtures("one_torch_thread")
def test_seed_trained_puts_reproductions_beside_the_heuristics(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """`leaderboard seed --trained` trains each configured run, writes its record (with the paper's number where
    one is published) and submits all in one commit; after `update` a ChaosNet and a T-GRAB board each rank a
    verified trained row, its seeds joined, beside the heuristics."""
    pytest.importorskip("torch")
    pytest.importorskip("torch_geometric")
    from tgbhub.errors import RecordError
    from tgbhub.results import reproductions
    from tgbhub.results.leaderboards import RUN_RECORD, seed_baselines, seed_trained

    cache, root, hub = tmp_path / "cache", tmp_path / "hub", f"git:{tmp_path / 'hub'}"
    publish("chaosnet", "1.1.0", parse_target(hub), datasets=[MINI.split("/")[1]], cache_dir=cache)
    publish("t-grab", "1.0.0", parse_target(hub), datasets=["pdet-2-1"], cache_dir=cache)
    heuristics = [*seed_baselines(hub, family="chaosnet", datasets=[MINI], models=["persistence"], cache_dir=cache,
                                  offline=True),
                  *seed_baselines(hub, datasets=[NAME], models=["edgebank"], cache_dir=cache, offline=True)]
    # a published number for the mini instance, so the run shows where the paper's number goes
    quoted = reproductions.Published({"vpt": {"mean": 1.5}}, "a test's quote", 3)
    monkeypatch.setitem(reproductions.PUBLISHED, (MINI, "dlinear"), quoted)
    common = ["--cache-dir", str(cache), "--offline", "--quiet", "leaderboard", "seed", "--hub", hub]
    runs = tmp_path / "runs"
    assert main([*common, "--trained", "--datasets", MINI, "--models", "dlinear,lstm", "--seeds", "42,43",
                 "--epochs",
                 "1", "--limit-batches", "3", "--device", "cpu", "--out", str(runs), "--json"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert [item["status"] for item in done] == ["submitted"] * 4 and len({item["commit"] for item in done}) == 1
    record = records.read_record(runs / f"{MINI.replace('/', '-')}-dlinear-s42" / RUN_RECORD)
    assert record["reproduction"]["published"] == quoted.to_json()
    assert record["reproduction"]["paper"] == reproductions.CHAOSNET_PAPER and record["model"]["seed"] == 42
    assert records.read_record(runs / f"{MINI.replace('/', '-')}-lstm-s43" / RUN_RECORD)["reproduction"][
        "published"] is None  # none quoted for this instance and model
    tiny = {"gclstm": {"channels": 8}, "tgn": {"memory_dim": 8, "time_dim": 8, "embedding_dim": 8}}
    trained = seed_trained(hub, datasets=[NAME], seeds=[1, 2], epochs=1, hparams=tiny, limit_batches=8,
                           device="cpu", cache_dir=cache, offline=True)
    assert [(item.dataset, item.task, item.status) for item in trained] == [(f"{NAME}@1.0.0", TASK, "submitted")] * 4
    # kept runs are submitted as they are, not trained again; a kept run of other settings is refused
    kept = {"datasets": [MINI], "models": ["dlinear"], "seeds": [42, 43], "out": runs, "cache_dir": cache,
            "offline": True}
    again = seed_trained(hub, epochs=1, limit_batches=3, **kept)  # type: ignore[arg-type]
    assert [item.status for item in again] == ["exists", "exists"]
    with pytest.raises(RecordError, match="its reproduction is .*delete the folder"):
        seed_trained(hub, limit_batches=3, **kept)  # type: ignore[arg-type]
    report = update(hub, cache_dir=cache, offline=True)
    assert len(report.graded) == 8 + len(heuristics) and not report.rejected and not report.flagged
    with start_local_hub(root) as served:
        boards = {name: tgbhub.leaderboard(name, task, endpoint=served.url, cache_dir=tmp_path / "reader")
                  for name, task in ((MINI, "rollout"), (NAME, TASK))}
    for name, models, seeds, paper, heuristic in ((MINI, ("dlinear", "lstm"), [42, 43],
                                                   reproductions.CHAOSNET_PAPER, "persistence"),
                                                  (NAME, ("gclstm", "tgn"), [1, 2], reproductions.TGRAB_PAPER,
                                                   "edgebank")):
        rows = boards[name]
        assert sorted(row["model"] for row in rows) == sorted([*models, heuristic]), rows
        for model in models:
            row = next(r for r in rows if r["model"] == model)
            assert row["status"] == "ranked" and row["verified"] and not row["flagged"] and row["rank"] in (1, 2, 3)
            assert json.loads(row["seeds"]) == seeds and row["n"] == 2 and row["paper"] == paper
            assert row["claimed"] == pytest.approx(row["mean"])  # the claims are the runs' records, re-graded alike
            assert row["record"].startswith(f"records/{name}/") and row["record"].endswith(".json")
    heuristic_row = next(r for r in boards[NAME] if r["model"] == "edgebank")
    assert heuristic_row["paper"] is None and heuristic_row["status"] == "ranked"
    for wrong, words in ((["--seeds", "1"], "add --trained"), (["--trained", "--runs", str(runs)], "one or the other"),
                         (["--trained", "--family", "tgb"], "has no trained reproductions"),
                         (["--trained", "--seeds", "1,x"], "'x' is not an integer seed")):
        assert main([*common, *wrong]) == 2
        assert words in capsys.readouterr().err, wrong



def test_a_tgb_board_ranks_trained_tgn_and_graphmixer_beside_edgebank(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A TGB-format dataset (a tiny tgbl-wiki release, imported and published): continuous-time runs of tgn and
    graphmixer, written with their records and submitted with `leaderboard seed --runs`, are re-graded and ranked,
    verified, on the same board as EdgeBank."""
    pytest.importorskip("torch")
    pytest.importorskip("torch_geometric")
    from tests import tgb_formats as formats
    from tgbhub.local.imports import import_tgb
    from tgbhub.registry import Registry
    from tgbhub.results.leaderboards import seed_baselines

    files = formats.write_tgbl(tmp_path / "files", "tgbl-wiki", n_edges=600, seed=0, feat_dim=4)
    truth = files.truth
    shifted = truth["dst"] + truth["src"].max() + 1  # py-tgb's ids: items after users
    stats = {"num_nodes": int(len(np.union1d(truth["src"], shifted))), "num_edges": len(truth["src"])}
    cache, root, hub = tmp_path / "cache", tmp_path / "hub", f"git:{tmp_path / 'hub'}"
    manifest = import_tgb("tgbl-wiki", formats.zip_dataset(files, tmp_path / "zips"), cache_dir=cache,
                          expected_stats=stats, manifests=tmp_path / "manifests")
    registry = Registry(tmp_path / "manifests")
    monkeypatch.setattr(api, "_REGISTRY", registry)
    publish("tgb", manifest.version, parse_target(hub), datasets=["tgbl-wiki"], cache_dir=cache, registry=registry)
    name = "tgb/tgbl-wiki"
    seed_baselines(hub, datasets=[name], models=["edgebank"], cache_dir=cache, offline=True)
    sizes = {"tgn": {"memory_dim": 8, "time_dim": 8, "embedding_dim": 8},
             "graphmixer": {"neighbors": 4, "time_dim": 8, "embedding_dim": 8, "node_dim": 8, "layers": 1}}
    runs = []
    for model, hparams in sizes.items():
        out = tmp_path / model
        assert main(["--cache-dir", str(cache), "--offline", "--quiet", "train", model, name, "--seed", "1",
                     "--device", "cpu", "--epochs", "1", "--out", str(out), "--record", str(out / "record.json"),
                     *[f"--hparam={k}={v}" for k, v in hparams.items()]]) == 0
        runs.append(str(out))
    assert main(["--cache-dir", str(cache), "--offline", "--quiet", "leaderboard", "seed", "--hub", hub, "--runs",
                 *runs]) == 0
    report = update(hub, cache_dir=cache, offline=True)
    assert len(report.graded) == 3 and not report.rejected and not report.flagged
    with start_local_hub(root) as served:
        rows = tgbhub.leaderboard(name, "ranking", endpoint=served.url, cache_dir=tmp_path / "reader")
    assert sorted(row["model"] for row in rows) == ["edgebank", "graphmixer", "tgn"], rows
    assert all(row["status"] == "ranked" and row["verified"] for row in rows), rows
