"""The Dask backend (tgbhub.scale) against a real LocalCluster of two worker processes on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tgbhub
from tgbhub import cache, scale
from tgbhub.errors import InvalidNameError, MissingExtraError, SchedulerUnavailableError, UnsupportedTaskError
from tgbhub.evaluate.submission import write_submission
from tgbhub.columns import read_columns
from tgbhub.manifest import read_manifest
from tgbhub.hashing import content_digest, file_sha256

distributed = pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parent.parent
# the four ChaosNet minis and two small t-grab datasets: a trajectory family and a temporal-graph one
SMALL = ["chaosnet/mini-k0.5-rho0.1-n8", "chaosnet/mini-k0.5-rho0.3-n8", "chaosnet/mini-k2.0-rho0.1-n8",
         "chaosnet/mini-k2.0-rho0.3-n8", "t-grab/pdet-2-4", "t-grab/pdet-2-8"]
# full ChaosNet instances: about a second each, long enough to be killed in the middle of
SLOW = ["chaosnet/k0.5-rho0.05-n8", "chaosnet/k0.5-rho0.075-n8", "chaosnet/k0.5-rho0.1-n8"]


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with distributed.LocalCluster(**scale.local_cluster_options(2)) as cluster, distributed.Client(cluster) as c:
        yield c


def _trusted(root: Path, name: str) -> cache.CacheEntry | None:
    if "~" in name:  # a variant's manifest is derived into the cache that built it
        stored = cache.stored_manifest_path(root, name, "1.0.0")
        return cache.lookup(read_manifest(stored), root) if stored.is_file() else None
    return cache.lookup(tgbhub.resolve(name), root)


def _logical(entry: cache.CacheEntry, name: str) -> dict[str, str]:
    """Each file's logical content digest, decoded from the bytes on disk. (Byte equality with a serial build is the
    usual case, but the cache accepts a rebuilt file on its logical digest, architecture sections 3 and 5; once in
    ~30 runs a cluster-built HDF5 file here differed in bytes, not in values, so the test checks what is promised.)"""
    return {f.name: content_digest(read_columns(entry.files[f.name], f.encoding, f.columns))
            for f in tgbhub.resolve(name).files}


def _staging(root: Path) -> list[Path]:
    return sorted(root.glob("*/*/.*.staging"))


def test_a_family_builds_on_the_cluster_to_the_serial_digests(client: Any, tmp_path: Path) -> None:
    report = scale.build(SMALL, client=client, cache_dir=tmp_path / "cluster")
    serial = scale.build(SMALL, cache_dir=tmp_path / "serial")
    assert report.ok and serial.ok, (report, serial)
    assert [r.status for r in report.rows] == ["built"] * len(SMALL) == [r.status for r in serial.rows]
    # the cluster's workers built them (not this process), to the serial build's content digests, and every file on
    # disk is what the cache verified and recorded
    assert {r.worker for r in report.rows} <= set(client.scheduler_info()["workers"])
    assert {r.pid for r in report.rows} <= set(client.run(os.getpid).values())
    assert [(r.name, r.version, r.digest) for r in report.rows] == [(r.name, r.version, r.digest) for r in serial.rows]
    for row in report.rows:
        entries = [_trusted(tmp_path / kind, row.name) for kind in ("cluster", "serial")]
        assert entries[0] is not None and entries[1] is not None
        assert {f: file_sha256(p) for f, p in entries[0].files.items()} == dict(row.sha256)
        assert _logical(entries[0], row.name) == _logical(entries[1], row.name) == {
            f.name: f.digest for f in tgbhub.resolve(row.name).files}
    assert _staging(tmp_path / "cluster") == []
    again = scale.build(SMALL[:2], client=client, cache_dir=tmp_path / "cluster")
    assert [r.status for r in again.rows] == ["cached", "cached"]


def test_failures_are_rows_and_summarised(client: Any, tmp_path: Path) -> None:
    report = scale.build(["t-grab/ce-65", SMALL[0]], client=client, cache_dir=tmp_path)
    assert [r.status for r in report.rows] == ["failed", "built"] and not report.ok
    assert "unknown dataset 't-grab/ce-65'" in report.rows[0].error and report.rows[0].worker
    with pytest.raises(tgbhub.GenerationError, match=r"1 of 2 dataset\(s\) failed .* t-grab/ce-65: unknown"):
        report.raise_for_failures()
    assert "| t-grab/ce-65 |  | failed |" in report.table()


def test_a_worker_killed_mid_build_leaves_nothing_trusted_and_the_build_completes(client: Any,
                                                                                 tmp_path: Path) -> None:
    root = tmp_path / "cache"
    workers = set(client.run(os.getpid).values())
    result: dict[str, Any] = {}
    runner = threading.Thread(target=lambda: result.update(report=scale.build(SLOW, client=client, cache_dir=root)))
    runner.start()
    killed, deadline = None, time.monotonic() + 60
    while killed is None and time.monotonic() < deadline:
        # ".<version>.<pid>.<uuid>.staging": that worker is inside install, holding the version's lock
        for staging in _staging(root):
            pid = int(staging.name.split(".")[-3])
            if pid in workers:
                os.kill(pid, signal.SIGKILL)
                killed = (pid, staging)
                # right after the kill, before any rerun could finish (a build takes over a second): not trusted
                name = f"{staging.parent.parent.name}/{staging.parent.name}"
                assert _trusted(root, name) is None
                break
        time.sleep(0.005)
    runner.join(timeout=120)
    assert killed is not None, "no build was caught in progress"
    report = result["report"]
    assert report.ok, report
    assert all(r.status == "built" and r.pid != killed[0] for r in report.rows)
    for row in report.rows:  # every entry is verified and holds the published data
        manifest = tgbhub.resolve(row.name)
        entry = _trusted(root, row.name)
        assert entry is not None and row.digest == manifest.files[0].digest
        assert {f: file_sha256(p) for f, p in entry.files.items()} == {f.name: f.sha256 for f in manifest.files}
    # the dead worker's staging folder was never trusted and is gone: the rerun's install cleared it
    assert not killed[1].exists() and _staging(root) == []


def _cli_build(root: Path, names: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TGBHUB_NO_PROGRESS": "1"}
    return subprocess.Popen([sys.executable, "-m", "tgbhub.cli", "--cache-dir", str(root), "build", *names,
                             "--scheduler", "local:1", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=ROOT)


def test_two_concurrent_build_commands_build_each_dataset_once(tmp_path: Path) -> None:
    names = SMALL[:4]
    first, second = _cli_build(tmp_path, names), _cli_build(tmp_path, names[::-1])
    outputs = [process.communicate(timeout=180) for process in (first, second)]
    assert first.returncode == 0 and second.returncode == 0, outputs
    rows = [row for out, _ in outputs for row in json.loads(out)]
    built = sorted(row["name"] for row in rows if row["status"] == "built")
    assert built == sorted(names), rows  # each built exactly once; the other command found it verified
    assert sorted(row["name"] for row in rows if row["status"] == "cached") == sorted(names)
    assert len({row["digest"] for row in rows}) == len(names) and _staging(tmp_path) == []


def test_evaluate_grades_many_files_as_tasks(client: Any, tmp_path: Path) -> None:
    from tgbhub.baselines import run_baseline

    name, root = "t-grab/pdet-2-4", tmp_path / "cache"
    dataset = tgbhub.load_dataset(name, cache_dir=root, offline=True)
    task = dataset.manifest.task_named("ranking")
    files = []
    for model in ("edgebank", "persistence"):
        files.append(tmp_path / f"{model}.parquet")
        write_submission(run_baseline(model, dataset, task, "test"), files[-1])
    bad = tmp_path / "bad.parquet"
    submission = dict(run_baseline("edgebank", dataset, task, "test"))
    write_submission({**submission, "pos_score": np.full(len(submission["pos_score"]), np.nan, np.float32)}, bad)
    rows = scale.evaluate(name, [*files, bad], client=client, cache_dir=root, offline=True)
    assert [r["status"] for r in rows] == ["ok", "ok", "failed"] and rows[2]["file"] == str(bad)
    assert "column 'pos_score', row 0" in rows[2]["error"] and "metrics" not in rows[2]
    # files of one name in two folders (how a hub's submissions arrive) are two tasks, each graded as itself
    same_name = [tmp_path / model / "submission.parquet" for model in ("edgebank", "persistence")]
    for file, copy in zip(files, same_name):
        copy.parent.mkdir()
        copy.write_bytes(file.read_bytes())
    twins = scale.evaluate(name, same_name, client=client, cache_dir=root, offline=True)
    assert [r["file"] for r in twins] == [str(f) for f in same_name]
    assert [r["metrics"] for r in twins] == [r["metrics"] for r in rows[:2]]
    assert rows[0]["metrics"] != rows[1]["metrics"]
    for row, file in zip(rows, files):  # the same numbers as a serial grade, with the data's digest
        serial = tgbhub.api.grade(name, file, cache_dir=root, offline=True)
        assert row["metrics"] == serial["metrics"] and row["digest"] == serial["digest"] == dataset.digest
        assert row["worker"].startswith("tcp://127.0.0.1:")
    with pytest.raises(UnsupportedTaskError, match="--teacher-forced applies to rollout-forecasting tasks only"):
        tgbhub.api.grade(name, files[0], teacher_forced=files[1], cache_dir=root, offline=True)


def test_cli_evaluate_several_files_prints_one_json_line_each(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from tgbhub.baselines import run_baseline
    from tgbhub.cli import main

    name, root = "t-grab/pdet-2-4", tmp_path / "cache"
    dataset = tgbhub.load_dataset(name, cache_dir=root, offline=True)
    good = tmp_path / "good.parquet"
    write_submission(run_baseline("edgebank", dataset, dataset.manifest.task_named("ranking"), "test"), good)
    (tmp_path / "junk.parquet").write_bytes(b"not parquet")
    assert main(["--cache-dir", str(root), "evaluate", name, str(good), str(tmp_path / "junk.parquet")]) == 1
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["status"] for line in lines] == ["ok", "failed"] and set(lines[0]["metrics"]) >= {"mrr"}


def test_scheduler_forms_and_the_missing_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert scale._local_workers("local:3") == 3 and scale._local_workers("tcp://10.0.0.1:8786") is None
    assert scale._local_workers("local") == (os.cpu_count() or 1)
    for bad in ("localhost:8786", "local:0", "tcp://"):
        with pytest.raises(InvalidNameError, match="--scheduler"):
            scale.build(["t-grab/pdet-2-4"], scheduler=bad, cache_dir=tmp_path)
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if tgbhub[dask] were not installed
    with pytest.raises(MissingExtraError, match=r"pip install -e '\.\[dask\]'"):
        scale.build(["t-grab/pdet-2-4"], scheduler="local:1", cache_dir=tmp_path)
    serial = scale.build(["t-grab/pdet-2-4"], cache_dir=tmp_path)  # the serial path needs no Dask
    assert serial.ok and serial.rows[0].status == "built" and serial.scheduler == "serial"


def test_nothing_imports_dask_until_a_cluster_is_asked_for() -> None:
    code = ("import sys, tgbhub, tgbhub.scale, tgbhub.cli; tgbhub.cli.build_parser(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip() == "[]"


def test_counterfactual_builds_its_variants_as_tasks(client: Any, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from tgbhub.cli import main

    options = dict(kinds=["shuffle"], seeds=[0, 1], cache_dir=tmp_path / "cluster", offline=True)
    report = scale.counterfactual("t-grab/pdet-2-1", "persistence", client=client, **options)
    # every variant is in the cache, verified, before the scoring ran here; the rows equal a serial run's
    for variant in ("t-grab/pdet-2-1~shuffle-s0", "t-grab/pdet-2-1~shuffle-s1"):
        assert _trusted(tmp_path / "cluster", variant) is not None
    serial = tgbhub.counterfactual("t-grab/pdet-2-1", "persistence", **{**options, "cache_dir": tmp_path / "serial"})
    assert report.rows == serial.rows
    with pytest.raises(SystemExit) as refused:  # the generative check reads few variants and runs here
        main(["counterfactual", "edgebank", "t-grab/pdet-2-1", "--generative", "x.parquet", "--scheduler",
              "local:1"])
    assert refused.value.code == 2 and "tgbhub generative has no option '--scheduler'" in capsys.readouterr().err


def test_an_unreachable_scheduler_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on: bound, then released
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setattr(scale, "CONNECT_TIMEOUT", "1s")
    expected = rf"could not reach the Dask scheduler at 'tcp://127.0.0.1:{port}'"
    with pytest.raises(SchedulerUnavailableError, match=expected):
        scale.build(["t-grab/pdet-2-4"], scheduler=f"tcp://127.0.0.1:{port}", cache_dir=tmp_path)


def test_a_worker_with_another_catalogue_refuses(tmp_path: Path) -> None:
    expected = scale._expected("t-grab/pdet-2-4")
    assert expected is not None and expected["version"] == tgbhub.resolve("t-grab/pdet-2-4").version
    other = {**expected, "files": {name: ["0" * 64, digest] for name, (_, digest) in expected["files"].items()}}
    row = scale.build_task("t-grab/pdet-2-4", str(tmp_path), True, other)
    assert row["status"] == "failed" and "this worker's catalogue resolves it" in row["error"]
    assert "install the client's tgbhub version on every worker" in row["error"]
