"""The cache without the columns in memory: each column's ``.npy`` derived from its verified Parquet file a row group at
a time (install, repair, reverify), byte-identical to ``np.save`` of the whole column, in memory bounded by a row
group."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from generators import ranking
from generators.tgb import tgbl
from tgbhub import cache
from tgbhub.api import resolve
from tgbhub.cache import Fetched
from tgbhub.columns import read_parquet_columns
from tgbhub.errors import IntegrityError
from tgbhub.hashing import content_digest, file_sha256
from tgbhub.local.gateway import BuildSource
from tgbhub.manifest import FileEntry, Manifest

NAME = "t-grab/pdet-2-1"
PARQUET = "application/x-parquet"
NEGATIVES = ("t", "src", "dst", "negatives", "count")


def _write_files(folder: Path, rows: int, monkeypatch: pytest.MonkeyPatch, group: int = 64) -> dict[str, Path]:
    """An edges file (with a 2-D message column) and a negatives file, by the real writers, ``group`` rows a row
    group."""
    monkeypatch.setattr(tgbl, "ROW_GROUP_ROWS", group)
    monkeypatch.setattr(ranking, "NEGATIVES_ROW_GROUP", group)
    rng = np.random.default_rng(rows)
    folder.mkdir(parents=True, exist_ok=True)
    tgbl.write_parquet({"src": rng.integers(0, 100, rows), "dst": rng.integers(0, 100, rows),
                        "t": np.sort(rng.integers(0, 1 << 40, rows)), "w": rng.standard_normal(rows),
                        "msg": rng.standard_normal((rows, 3)).astype(np.float32)}, folder / "edges.parquet")
    ranking.write_negatives({"t": np.sort(rng.integers(0, 1000, rows)), "src": rng.integers(0, 9, rows, np.int32),
                             "dst": rng.integers(0, 9, rows, np.int32),
                             "negatives": rng.integers(-1, 50, (rows, 5), np.int32),
                             "count": np.full(rows, 5, np.int32)}, folder / "negatives.parquet")
    return {"edges.parquet": folder / "edges.parquet", "negatives.parquet": folder / "negatives.parquet"}


def _manifest(files: Mapping[str, Path]) -> Manifest:
    """The bundled pdet-2-1 manifest, its files replaced by ``files`` (every column, with their digests)."""
    entries = []
    for name, path in files.items():
        columns = tuple(pq.ParquetFile(path).schema_arrow.names)
        entries.append(FileEntry(name=name, sha256=file_sha256(path), size=path.stat().st_size, encoding=PARQUET,
                                 digest=content_digest(read_parquet_columns(path, columns)), columns=columns))
    return dataclasses.replace(resolve(NAME), files=tuple(entries))


def _copying(files: Mapping[str, Path]):
    """A source handing copies of ``files`` and no columns (as a download does)."""
    def fetch(staging: Path) -> Fetched:
        return Fetched(files={name: Path(shutil.copy(path, staging / name)) for name, path in files.items()})
    return fetch


def _saved(values: np.ndarray) -> bytes:
    """What np.save writes for ``values`` (today's column file)."""
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(values), allow_pickle=False)
    return buffer.getvalue()


@pytest.mark.parametrize("rows", [0, 1, 300])
def test_an_install_without_columns_writes_what_np_save_of_the_whole_column_writes(
        rows: int, tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = _write_files(tmp_path / "made", rows, monkeypatch)
    assert pq.ParquetFile(files["edges.parquet"]).num_row_groups == max(1, -(-rows // 64))
    manifest = _manifest(files)
    entry, installed = cache.install(manifest, cache_dir, _copying(files))
    assert installed and cache.plan(manifest, cache_dir).action == "hit"  # the marker records what is on disk
    marker = json.loads((entry.folder / cache.MARKER).read_text())
    for file in manifest.files:
        whole = read_parquet_columns(files[file.name], file.columns)
        assert set(marker["columns"][file.name]) == set(file.columns)
        for column in file.columns:
            derived = entry.columns[file.name][column]
            assert derived.read_bytes() == _saved(whole[column]), f"{file.name}.{column}"
            assert marker["columns"][file.name][column] == {"size": derived.stat().st_size,
                                                            "mtime_ns": derived.stat().st_mtime_ns}
    assert np.load(entry.columns["negatives.parquet"]["negatives"]).shape == (rows, 5)
    assert not [p for p in entry.folder.iterdir() if p.name.endswith(".tmp")]


def test_a_built_dataset_installed_without_its_columns_gets_the_same_column_files(tmp_path: Path) -> None:
    manifest = resolve(NAME)

    def build(keep_columns: bool):
        def fetch(staging: Path) -> Fetched:
            built = BuildSource().fetch(manifest, staging)
            return built if keep_columns else Fetched(files=built.files, rebuilt=True)
        return fetch

    given, _ = cache.install(manifest, tmp_path / "given", build(True))
    derived, _ = cache.install(manifest, tmp_path / "derived", build(False))
    for file in manifest.files:
        for column in file.columns:
            assert derived.columns[file.name][column].read_bytes() == given.columns[file.name][column].read_bytes()
    markers = [json.loads((e.folder / cache.MARKER).read_text()) for e in (given, derived)]
    assert [{f: set(c) for f, c in m["columns"].items()} for m in markers][0] == \
        {f: set(c) for f, c in markers[1]["columns"].items()}


#: run in a fresh interpreter, so that its Arrow pool's peak is the install's alone (swapping the default pool
#: in-process for a counting one crashes when a buffer outlives the pool it came from). Arguments: a JSON list of
#: [file entry, path, cache root], a small file first (installed to import what the install imports, which
#: tracemalloc would count), then the large one (installed, then read whole); prints the peaks of both steps.
MEASURE = """
import dataclasses, json, shutil, sys, tracemalloc
from pathlib import Path
import pyarrow as pa
from tgbhub import cache
from tgbhub.api import resolve
from tgbhub.cache import Fetched
from tgbhub.columns import read_parquet_columns
from tgbhub.manifest import FileEntry

def install(fields, made, root):
    entry = FileEntry(**{**fields, "columns": tuple(fields["columns"])})
    manifest = dataclasses.replace(resolve("t-grab/pdet-2-1"), files=(entry,))
    copy = lambda staging: Fetched(files={entry.name: Path(shutil.copy(made, staging / entry.name))})
    cache.install(manifest, Path(root), copy)

(small, large) = json.loads(sys.argv[1])
install(*small)
peaks = {}
for step in ("install", "whole"):
    tracemalloc.start()
    if step == "install":
        install(*large)
    else:
        read_parquet_columns(large[1], tuple(large[0]["columns"]))
    peaks[step] = pa.default_memory_pool().max_memory() + tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
print(json.dumps(peaks))
"""


def test_the_install_holds_a_block_of_a_column_at_a_time(tmp_path: Path, cache_dir: Path) -> None:
    """Columns of 24 MiB in one row group of 1M rows (as the importer writes them): reading the file whole takes
    over 24 MiB, the install a fixed few (a block of rows of a column per I/O worker, the file hash's 1 MiB reads),
    counting Arrow's allocations through its default pool and Python's and numpy's as tracemalloc sees them."""
    files = []
    for rows in (10, 1 << 20):
        path = tmp_path / str(rows) / "edges.parquet"
        path.parent.mkdir()
        tgbl.write_parquet({"t": np.arange(rows, dtype=np.int64),
                            "msg": np.broadcast_to(np.arange(4, dtype=np.float32), (rows, 4))}, path)
        entry = _manifest({"edges.parquet": path}).files[0]
        fields = {key: getattr(entry, key) for key in ("name", "sha256", "size", "encoding", "digest", "columns")}
        files.append([fields, str(path), str(tmp_path / f"cache-{rows}")])
    measured = subprocess.run([sys.executable, "-c", MEASURE, json.dumps(files)], capture_output=True, text=True,
                              check=True)
    peaks = json.loads(measured.stdout)
    assert peaks["whole"] > 24 << 20
    assert peaks["install"] < 16 << 20, f"the install held {peaks['install'] / 2**20:.1f} MiB"
    folder = cache.version_dir(tmp_path / f"cache-{1 << 20}", resolve(NAME))
    assert np.array_equal(np.load(folder / "edges.parquet.t.npy", mmap_mode="r"), np.arange(1 << 20))


def _flip_keeping_size_and_mtime(path: Path, offset: int) -> None:
    info = path.stat()
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))


def test_repair_and_reverify_rederive_a_damaged_column_file_row_group_by_row_group(
        tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = _write_files(tmp_path / "made", 300, monkeypatch)
    manifest = _manifest(files)
    entry, _ = cache.install(manifest, cache_dir, _copying(files))
    msg = entry.columns["edges.parquet"]["msg"]
    negatives = entry.columns["negatives.parquet"]["negatives"]
    good = {path: path.read_bytes() for path in (msg, negatives)}
    msg.write_bytes(good[msg][:-7])  # cut short: the cheap check sees it
    assert cache.lookup(manifest, cache_dir) == entry
    assert msg.read_bytes() == good[msg]
    _flip_keeping_size_and_mtime(negatives, -3)  # bit rot: only a reverify sees it
    assert cache.reverify(manifest, cache_dir) == ("repaired", ["negatives.parquet"])
    assert negatives.read_bytes() == good[negatives]
    assert cache.reverify(manifest, cache_dir) == ("ok", [])
    assert cache.plan(manifest, cache_dir).action == "hit"


def test_a_column_that_is_not_numbers_fails_the_install_by_name_and_leaves_nothing(tmp_path: Path,
                                                                                   cache_dir: Path) -> None:
    path = tmp_path / "odd.parquet"
    pq.write_table(pa.table({"n": pa.array([1, 2, 3], pa.int64()), "k": pa.array([1, None, 3], pa.int64())}), path)
    entry = FileEntry(name="edges.parquet", sha256=file_sha256(path), size=path.stat().st_size, encoding=PARQUET,
                      digest=None, columns=("n", "k"))
    manifest = dataclasses.replace(resolve(NAME), files=(entry,))
    with pytest.raises(IntegrityError, match=r"edges\.parquet: column k: .*int64 rows.*float64 rows.*from row 0"):
        cache.install(manifest, cache_dir, _copying({"edges.parquet": path}))
    assert sorted(p for p in cache_dir.rglob("*") if p.is_file() and not p.name.endswith(".lock")) == []
