"""`tgbhub submit`: cheap checks only (never a grade), the submissions repo's layout, and one id per file's bytes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tgbhub import api
from tgbhub.cli import main
from tgbhub.errors import InvalidNameError, ManifestError, PublishError, RecordError
from tgbhub.results import records
from tgbhub.results.submissions import prepare, submission_id, submit

NAME = "t-grab/pdet-2-1"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict]:
    folder = tmp_path_factory.mktemp("submit")
    cache, sub = folder / "cache", folder / "sub.parquet"
    graded = api.run_baseline("edgebank", NAME, out=sub, cache_dir=cache, offline=True)
    return cache, sub, records.make_record(graded, cache_dir=cache, offline=True)


def _tree(repo: Path) -> list[str]:
    return subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "--name-only", "main"], capture_output=True,
                          text=True, check=True).stdout.split()


def test_submit_lays_out_file_meta_and_claim_once(run: tuple[Path, Path, dict], tmp_path: Path) -> None:
    cache, sub, record = run
    done = submit(NAME, sub, to=f"git:{tmp_path}", model="edgebank", record=record, cache_dir=cache, offline=True)
    sid = submission_id(sub)
    assert (done.id, done.status, done.task, done.dataset) == (sid, "submitted", "snapshot-f1", f"{NAME}@1.0.0")
    folder = f"submissions/{NAME}/1.0.0/snapshot-f1/{sid}"
    repo = tmp_path / "datasets" / "tgbhub" / "submissions"
    assert set(_tree(repo)) == {".gitattributes", *(f"{folder}/{f}" for f in
                                                     ("submission.parquet", "meta.json", "claim.json"))}
    meta = json.loads(subprocess.run(["git", "-C", str(repo), "show", f"main:{folder}/meta.json"], capture_output=True,
                                     text=True, check=True).stdout)
    assert {k: meta[k] for k in ("model", "dataset", "task", "split", "seed")} == \
        {"model": "edgebank", "dataset": f"{NAME}@1.0.0", "task": "snapshot-f1", "split": "test", "seed": None}
    assert meta["submitted"].endswith("Z")
    again = submit(NAME, sub, to=f"git:{tmp_path}", model="edgebank", cache_dir=cache, offline=True)
    assert again.status == "exists" and again.commit == done.commit


def test_cheap_checks_refuse_before_pushing(run: tuple[Path, Path, dict], tmp_path: Path) -> None:
    cache, sub, record = run
    hub = f"git:{tmp_path / 'hub'}"
    with pytest.raises(InvalidNameError, match="does not exist"):
        prepare(NAME, tmp_path / "none.parquet", model="m", cache_dir=cache, offline=True)
    text = tmp_path / "sub.csv"
    text.write_text("t,src,dst,score\n")
    with pytest.raises(InvalidNameError, match="not a Parquet file"):
        prepare(NAME, text, model="m", cache_dir=cache, offline=True)
    with pytest.raises(ManifestError):
        prepare(NAME, sub, model="m", task="no-such-task", cache_dir=cache, offline=True)
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"x": [1]}), other)
    with pytest.raises(RecordError, match="submission sha256"):  # the claim graded another file
        prepare(NAME, other, model="m", record=record, cache_dir=cache, offline=True)
    edited = {**record, "metrics": {**record["metrics"], "f1": 1.0}}
    with pytest.raises(RecordError, match="changed after it was written"):
        prepare(NAME, sub, model="m", record=edited, cache_dir=cache, offline=True)
    with pytest.raises(InvalidNameError, match="report split, not 'val'"):  # the board ranks the report split
        prepare(NAME, sub, model="m", split="val", cache_dir=cache, offline=True)
    many = tmp_path / "many.parquet"
    rows = 100_000  # more rows than the task has keys (79,200): refused from the footer, before any push
    pq.write_table(pa.table({"t": [90] * rows, "src": [0] * rows, "dst": [1] * rows, "score": [0.0] * rows}), many)
    with pytest.raises(InvalidNameError, match="holds 100000 rows; task 'snapshot-f1' on split 'test' of "
                       "t-grab/pdet-2-1 expects at most 79200"):
        prepare(NAME, many, model="m", cache_dir=cache, offline=True)
    with pytest.raises(PublishError, match="mirror"):
        submit(NAME, sub, to=f"mirror:{tmp_path / 'm'}", model="m", cache_dir=cache, offline=True)
    assert not (tmp_path / "hub").exists()
    assert main(["--cache-dir", str(cache), "--offline", "submit", NAME, str(text), "--hub", hub, "--model", "m"]) == 2


def test_leaderboard_options_belong_to_their_form(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as refused:  # a usage error: show reads a board, update grades into one
        main(["leaderboard", "show", NAME, "--hub", f"git:{tmp_path}"])
    assert refused.value.code == 2 and "tgbhub leaderboard show has no option '--hub'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:
        main(["leaderboard", "update"])
    assert refused.value.code == 2 and "required: --hub" in capsys.readouterr().err
    assert main(["leaderboard", "show", NAME]) == 2  # no hub configured
    assert "TGBHUB_ENDPOINT" in capsys.readouterr().err


def test_submit_and_update_through_the_hub_api(run: tuple[Path, Path, dict], tmp_path: Path) -> None:
    """--to hf / --hub hf: the same repos written through the Hub's write API (the loopback test double in front of
    a real local Hub), read back with huggingface_hub."""
    from tests.servers import FakeHubWrites, serving
    from tgbhub.hub.hfapi import HfTarget
    from tgbhub.hub.serve import start_local_hub
    from tgbhub.results.grader import update
    from tgbhub.results.leaderboards import leaderboard

    cache, sub, record = run
    (tmp_path / "root").mkdir()
    with start_local_hub(tmp_path / "root", allow_empty=True) as hub, \
            serving(FakeHubWrites(tmp_path / "root", hub.url)) as fake:
        target = HfTarget(fake.url, token="hf_test_token")
        done = submit(NAME, sub, to=target, model="edgebank", record=record, cache_dir=cache, offline=True)
        assert done.status == "submitted" and "POST /api/repos/create" in fake.calls
        report = update(target, cache_dir=cache, offline=True)
        assert report.graded == [done.id] and not report.flagged
        rows = leaderboard(NAME, endpoint=hub.url, cache_dir=tmp_path / "reader")
    assert [(r["rank"], r["model"], r["mean"]) for r in rows] == [(1, "edgebank", record["metrics"]["f1"])]
