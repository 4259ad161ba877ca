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
from tgbhub.sources.build import BuildSource

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
