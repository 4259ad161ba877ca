"""The verified cache: install, cheap checks, repair, integrity failures, interrupted fetches, concurrency."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

import numpy as np
import pytest

import tgbhub
from tgbhub import cache
from tgbhub.api import resolve
from tgbhub.cache import Fetched
from tgbhub.errors import IntegrityError
from tgbhub.local.gateway import BuildSource

NAME = "t-grab/pdet-2-1"


def _build(manifest, staging: Path) -> Fetched:
    return BuildSource().fetch(manifest, staging)


def test_install_then_lookup_hits(cache_dir: Path) -> None:
    manifest = resolve(NAME)
    entry, installed = cache.install(manifest, cache_dir, lambda s: _build(manifest, s))
    assert installed and entry.folder == cache_dir / "t-grab" / "pdet-2-1" / "1.0.0"
    assert (entry.folder / cache.MARKER).exists()
    assert cache.lookup(manifest, cache_dir) == entry
    assert not list(entry.folder.parent.glob(".*staging")), "staging folders are removed"
    again, installed_again = cache.install(manifest, cache_dir, lambda s: pytest.fail("must not refetch"))
    assert not installed_again and again == entry


def test_touched_but_intact_file_is_reverified_and_kept(cache_dir: Path) -> None:
    manifest = resolve(NAME)
    entry, _ = cache.install(manifest, cache_dir, lambda s: _build(manifest, s))
    path = entry.files["edges.parquet"]
    os.utime(path, ns=(1, 1))
    assert cache.lookup(manifest, cache_dir) is not None
    marker = json.loads((entry.folder / cache.MARKER).read_text())
    assert marker["files"]["edges.parquet"]["mtime_ns"] == 1


def test_plan_decides_without_writing_and_the_repair_runs_under_the_lock(cache_dir: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    manifest = resolve(NAME)
    assert cache.plan(manifest, cache_dir).action == "miss"
    entry, _ = cache.install(manifest, cache_dir, lambda s: _build(manifest, s))
    assert cache.plan(manifest, cache_dir) == cache.Plan("hit", entry=entry)
    os.utime(entry.files["edges.parquet"], ns=(1, 1))
    marker = (entry.folder / cache.MARKER).read_bytes()
    decided = cache.plan(manifest, cache_dir)
    assert decided.action == "repair" and "edges.parquet" in decided.reason and decided.entry is None
    assert (entry.folder / cache.MARKER).read_bytes() == marker  # plan() wrote nothing
    locked = []
    real_lock = cache.entry_lock
    monkeypatch.setattr(cache, "entry_lock", lambda *args: locked.append(args) or real_lock(*args))
    assert cache.lookup(manifest, cache_dir) == entry and locked == [(cache_dir, NAME, "1.0.0")]
    assert cache.plan(manifest, cache_dir).action == "hit"  # repaired: the record now has the touched mtime
    (entry.folder / "edges.parquet").unlink()
    assert cache.plan(manifest, cache_dir).action == "miss"


def test_damaged_artifact_invalidates_and_load_repairs(cache_dir: Path) -> None:
    tgbhub.load_dataset(NAME, cache_dir=cache_dir)
    manifest = resolve(NAME)
    path = cache.version_dir(cache_dir, manifest) / "edges.parquet"
    data = bytearray(path.read_bytes())
    data[100] ^= 0xFF
    path.write_bytes(bytes(data))
    assert cache.lookup(manifest, cache_dir) is None
    repaired = tgbhub.load_dataset(NAME, cache_dir=cache_dir)
    assert repaired.source == "build" and repaired.num_rows == 10_560


def test_damaged_column_file_is_rederived_from_the_verified_artifact(cache_dir: Path) -> None:
    first = tgbhub.load_dataset(NAME, cache_dir=cache_dir)
    expected = np.array(first.src)
    column = cache.version_dir(cache_dir, first.manifest) / "edges.parquet.src.npy"
    np.save(column, np.zeros(3, dtype=np.int32))
    again = tgbhub.load_dataset(NAME, cache_dir=cache_dir)
    assert again.source == "cache" and np.array_equal(again.src, expected)


def test_wrong_bytes_name_the_file_and_both_hashes_and_install_nothing(cache_dir: Path) -> None:
    manifest = resolve(NAME)

    def corrupt(staging: Path) -> Fetched:
        path = staging / "edges.parquet"
        BuildSource().fetch(manifest, staging)
        data = bytearray(path.read_bytes())
        data[200] ^= 0x01
        path.write_bytes(bytes(data))
        return Fetched(files={"edges.parquet": path})

    with pytest.raises(IntegrityError) as info:
        cache.install(manifest, cache_dir, corrupt)
    message = str(info.value)
    assert "edges.parquet" in message and manifest.files[0].sha256 in message
    folder = cache.version_dir(cache_dir, manifest)
    assert not folder.exists() or not any(folder.iterdir())
    assert not list(folder.parent.glob(".*staging"))


def test_interrupted_fetch_leaves_no_visible_partial_file(cache_dir: Path) -> None:
    manifest = resolve(NAME)

    def dies_half_way(staging: Path) -> Fetched:
        (staging / "edges.parquet").write_bytes(b"PAR1 half")
        raise ConnectionError("connection reset mid-transfer")

    with pytest.raises(ConnectionError):
        cache.install(manifest, cache_dir, dies_half_way)
    folder = cache.version_dir(cache_dir, manifest)
    assert not (folder / "edges.parquet").exists() and cache.lookup(manifest, cache_dir) is None
    assert tgbhub.load_dataset(NAME, cache_dir=cache_dir).num_rows == 10_560


def test_rebuild_with_other_writer_bytes_is_accepted_by_logical_digest(cache_dir: Path) -> None:
    manifest = resolve(NAME)

    def other_writer(staging: Path) -> Fetched:
        import pyarrow as pa
        import pyarrow.parquet as pq

        built = BuildSource().fetch(manifest, staging)
        path = staging / "edges.parquet"
        pq.write_table(pa.table(dict(built.columns["edges.parquet"])), path, compression="snappy")  # other bytes
        return Fetched(files={**built.files, "edges.parquet": path}, rebuilt=True)

    entry, _ = cache.install(manifest, cache_dir, other_writer)
    with pytest.raises(IntegrityError):  # the same bytes as a download must match the published sha256
        cache.install(manifest, cache_dir / "other",
                      lambda s: Fetched(files=other_writer(s).files, rebuilt=False))
    marker = json.loads((entry.folder / cache.MARKER).read_text())
    assert marker["files"]["edges.parquet"]["verified_by"] == "digest"
    assert cache.lookup(manifest, cache_dir) is not None


def _load_in_process(cache_dir: str, queue) -> None:
    queue.put(tgbhub.load_dataset("t-grab/ce-1", cache_dir=cache_dir).source)


def test_concurrent_processes_build_once(cache_dir: Path) -> None:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    workers = [context.Process(target=_load_in_process, args=(str(cache_dir), queue)) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    sources = sorted(queue.get(timeout=5) for _ in workers)
    assert sources == ["build", "cache", "cache"]


def _flip_keeping_mtime(path: Path, offset: int = 100) -> None:
    """Bit rot: one byte changed, size and mtime as before (the quick check cannot see it)."""
    info = path.stat()
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))


def test_verify_finds_a_flipped_byte_with_its_mtime_kept_and_repairs_it(cache_dir: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from tgbhub.cli import main

    good = tgbhub.load_dataset(NAME, cache_dir=cache_dir, offline=True)
    manifest = resolve(NAME)
    folder = cache.version_dir(cache_dir, manifest)
    _flip_keeping_mtime(folder / "edges.parquet")
    assert cache.plan(manifest, cache_dir).action == "hit"  # invisible to the cheap check
    assert main(["--cache-dir", str(cache_dir), "verify", NAME, "--offline", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"name": NAME, "version": "1.0.0", "status": "repaired",
                                                    "files": ["edges.parquet"]}]
    assert cache.reverify(manifest, cache_dir) == ("ok", [])
    again = tgbhub.load_dataset(NAME, cache_dir=cache_dir, offline=True)
    assert again.digest == good.digest and np.array_equal(again.dst, good.dst)
    _flip_keeping_mtime(folder / "edges.parquet.dst.npy", offset=-3)  # a derived column file: re-derived in place
    assert tgbhub.api.verify([NAME], cache_dir=cache_dir) == [{"name": NAME, "version": "1.0.0",
                                                              "status": "repaired", "files": ["edges.parquet"]}]
    assert np.array_equal(tgbhub.load_dataset(NAME, cache_dir=cache_dir, offline=True).dst, good.dst)


def test_load_with_full_verification_refetches_a_rotten_file(cache_dir: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from tgbhub.cli import main

    tgbhub.load_dataset(NAME, cache_dir=cache_dir, offline=True)
    _flip_keeping_mtime(cache.version_dir(cache_dir, resolve(NAME)) / "edges.parquet")
    assert tgbhub.load_dataset(NAME, cache_dir=cache_dir, offline=True, verify="full").source == "build"
    assert tgbhub.api.verify(cache_dir=cache_dir, repair=False) == [{"name": NAME, "version": "1.0.0",
                                                                    "status": "ok", "files": []}]
    _flip_keeping_mtime(cache.version_dir(cache_dir, resolve(NAME)) / "edges.parquet")
    assert main(["--cache-dir", str(cache_dir), "verify", "--all", "--no-repair"]) == 1
    assert "damaged" in capsys.readouterr().out and cache.plan(resolve(NAME), cache_dir).action == "miss"
    with pytest.raises(tgbhub.InvalidNameError, match="verify='deep'"):
        tgbhub.load_dataset(NAME, cache_dir=cache_dir, verify="deep")


def test_a_failed_write_leaves_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    def full(self, text, *args, **kwargs):  # the disk fills up half way through the write
        self.write_bytes(text[: len(text) // 2].encode())
        raise OSError(errno.ENOSPC, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_text", full)
    with pytest.raises(OSError, match="No space left"):
        cache.write_text_atomic(tmp_path / "a.json", '{"a": 1}')
    assert list(tmp_path.iterdir()) == []
