"""The verified cache: install, cheap checks, repair, integrity failures, interrupted fetches, concurrency."""

from __future__ import annotations

import errno
import json
import multiprocessing
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

import tgbhub
from tgbhub import cache
from tgbhub.api import resolve
from tgbhub.cache import Fetched
from tgbhub.errors import DiskFullError, GenerationError, IntegrityError
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


# --- a full disk, and every other way an install can fail: nothing it wrote stays behind ---------------------------


@contextmanager
def small_disk(folder: Path, size: str) -> Iterator[Path]:
    """A real file system of ``size`` (a tmpfs) mounted at ``folder``; the test is skipped where mounting is not
    allowed (the simulated full-disk tests below cover those machines)."""
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a {size} tmpfs here ({mounted.stderr.strip() or mounted.returncode})")
    try:
        yield folder
    finally:
        # lazily: a memory-mapped column the test still holds must not keep the mount alive after the test
        subprocess.run(["umount", "--lazy", str(folder)], capture_output=True)


def leftovers(root: Path) -> list[Path]:
    """Every file under a cache root but the per-version lock files (which hold no data)."""
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.name.endswith(".lock"))


def _enospc(path: object) -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))


def test_a_real_full_disk_names_the_disk_and_the_bytes_and_leaves_nothing(tmp_path: Path) -> None:
    """A 2 MiB disk: pdet-2-16 (4 MiB in the cache) fails with a message naming the mount point, the free bytes and
    the manifest's declared bytes, removes every byte it wrote, and pdet-2-1 (300 KiB) then fits."""
    with small_disk(tmp_path / "disk", "2m") as disk:
        root = disk / "cache"
        with pytest.raises(DiskFullError) as failed:
            tgbhub.load_dataset("t-grab/pdet-2-16", cache_dir=root, offline=True)
        error = failed.value
        declared = cache.declared_bytes(resolve("t-grab/pdet-2-16"))
        assert error.errno == errno.ENOSPC and error.mount == str(disk) and error.folder == str(root)
        assert error.declared == declared and error.free is not None and error.free > 1 << 20
        message = str(error)
        assert f"cannot write t-grab/pdet-2-16@1.0.0 into the cache at {root}: the disk is full" in message
        assert re.search(f"The disk mounted at {re.escape(str(disk))} has [0-9.]+ [KM]iB free", message)
        assert re.search("this install needs more: its manifest declares [0-9.]+ KiB of files", message)
        assert "--cache-dir DIR or TGBHUB_CACHE" in message and "ffline" not in message
        assert leftovers(root) == [], "a failed install left files behind"
        assert tgbhub.load_dataset("t-grab/pdet-2-1", cache_dir=root, offline=True).num_rows == 10_560


def test_a_full_disk_mid_generation_is_named_and_leaves_no_staging(cache_dir: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The generator's second Parquet file meets a full disk half way (as pyarrow reports it); the build is not
    reported as a source failure and nothing of the first file stays."""
    import pyarrow.parquet as pq

    # every Parquet writer (pq.write_table too) writes its row groups through ParquetWriter.write_table
    real = pq.ParquetWriter.write_table
    files: list[str] = []

    def fills_up(writer, table, *args, **kwargs):
        if str(writer.where) not in files:
            files.append(str(writer.where))
        if len(files) < 2:
            return real(writer, table, *args, **kwargs)
        with open(writer.where, "ab") as handle:
            handle.write(b"\0" * 4096)  # the part that fitted
        raise OSError(errno.ENOSPC, "[Errno 28] Error writing bytes to file. Detail: [errno 28] No space left on "
                      "device")

    monkeypatch.setattr(pq.ParquetWriter, "write_table", fills_up)
    with pytest.raises(DiskFullError, match="the disk is full") as failed:
        tgbhub.load_dataset(NAME, cache_dir=cache_dir, offline=True)
    assert len(files) >= 2 and "ffline" not in str(failed.value)
    assert failed.value.written and failed.value.written > 4096  # the first file and the part of the second
    assert leftovers(cache_dir) == []
    monkeypatch.setattr(pq.ParquetWriter, "write_table", real)
    assert tgbhub.load_dataset(NAME, cache_dir=cache_dir, offline=True).num_rows == 10_560


def test_a_short_column_write_is_a_full_disk(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """numpy reports a full disk as a short write with no errno ("N requested and M written"): still a full disk,
    after artifacts were already moved into the version's folder, which is emptied again."""
    real = np.save
    calls = []

    def short(handle, values, *args, **kwargs):
        calls.append(1)
        if len(calls) < 3:
            return real(handle, values, *args, **kwargs)
        handle.write(b"\x93NUMPY")
        raise OSError(f"{values.nbytes} requested and 6 written")

    monkeypatch.setattr(np, "save", short)
    with pytest.raises(DiskFullError, match="the disk is full"):
        tgbhub.load_dataset(NAME, cache_dir=cache_dir, offline=True)
    assert leftovers(cache_dir) == [] and not cache.version_dir(cache_dir, resolve(NAME)).exists()


def test_a_full_disk_at_the_final_rename_is_named_and_leaves_nothing(cache_dir: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.replace
    moved = []

    def fails_second(src, dst, *args, **kwargs):
        if str(dst).startswith(str(cache_dir)) and not Path(dst).name.startswith("."):
            moved.append(dst)
            if len(moved) == 2:
                raise _enospc(dst)
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", fails_second)
    with pytest.raises(DiskFullError) as failed:
        cache.install(resolve(NAME), cache_dir, lambda s: _build(resolve(NAME), s))
    assert failed.value.declared == cache.declared_bytes(resolve(NAME))
    assert leftovers(cache_dir) == []


@pytest.mark.parametrize("failure", ["KeyboardInterrupt", "EIO", "GenerationError", "IntegrityError"])
def test_every_failed_install_removes_what_it_wrote(failure: str, cache_dir: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C or another OSError half way through the moves, a generator error after files were staged, a
    mismatch: the error is the one raised (not a full disk), and neither staging nor moved files stay."""
    manifest = resolve(NAME)
    real = os.replace
    moved = []

    def failing(src, dst, *args, **kwargs):
        if str(dst).startswith(str(cache_dir)) and not Path(dst).name.startswith("."):
            moved.append(dst)
            if len(moved) == 2:
                raise KeyboardInterrupt if failure == "KeyboardInterrupt" else OSError(errno.EIO, "I/O error", dst)
        return real(src, dst, *args, **kwargs)

    def fetch(staging: Path) -> Fetched:
        fetched = _build(manifest, staging)
        if failure == "GenerationError":
            raise GenerationError("the generator failed after writing its first files")
        if failure == "IntegrityError":
            (staging / "edges.parquet").write_bytes(b"PAR1 not the published bytes")
        return fetched

    monkeypatch.setattr(os, "replace", failing)
    expected = {"KeyboardInterrupt": KeyboardInterrupt, "EIO": OSError, "GenerationError": GenerationError,
                "IntegrityError": IntegrityError}[failure]
    with pytest.raises(expected) as failed:
        cache.install(manifest, cache_dir, fetch)
    assert not isinstance(failed.value, DiskFullError)
    assert leftovers(cache_dir) == []


def test_a_killed_installs_leftovers_are_swept_by_the_next_install(cache_dir: Path) -> None:
    """A process killed mid-install leaves its staging folder, a temporary file and moved files without COMPLETE;
    the next install of that version (under the lock, so none of it is in use) removes them."""
    manifest = resolve(NAME)
    folder = cache.version_dir(cache_dir, manifest)
    stale = folder.parent / ".1.0.0.999999.0123456789abcdef.staging"
    stale.mkdir(parents=True)
    (stale / "edges.parquet").write_bytes(b"x" * 1000)
    folder.mkdir()
    (folder / ".edges.parquet.src.npy.999999.0123.tmp").write_bytes(b"x" * 1000)
    (folder / "edges.parquet").write_bytes(b"moved but never marked")
    half_manifest = folder.parent / ".1.0.0.manifest.json.999999.0123.tmp"
    half_manifest.write_text('{"name": ')
    entry, installed = cache.install(manifest, cache_dir, lambda s: _build(manifest, s))
    assert installed and not stale.exists() and not half_manifest.exists()
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]
    assert cache.lookup(manifest, cache_dir) == entry


_HOLDER = """
import sys, time
from pathlib import Path
from tgbhub import cache
root, staging = Path(sys.argv[1]), Path(sys.argv[2])
with cache.entry_lock(root, "t-grab/pdet-2-1", "1.0.0"):
    staging.mkdir(parents=True)
    print("holding", flush=True)
    time.sleep(2)
    print("intact" if staging.is_dir() else "removed", flush=True)
    staging.rmdir()
"""


def test_the_sweep_leaves_a_staging_folder_in_use_alone(cache_dir: Path) -> None:
    """Another process installing the version holds its lock: the second install waits for it instead of sweeping
    that process's staging folder away."""
    staging = cache_dir / "t-grab" / "pdet-2-1" / ".1.0.0.1.feed.staging"
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(cache_dir), str(staging)], stdout=subprocess.PIPE,
                              text=True, cwd=Path(__file__).resolve().parent.parent)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
    manifest = resolve(NAME)
    cache.install(manifest, cache_dir, lambda s: _build(manifest, s))
    assert holder.stdout.readline().strip() == "intact" and holder.wait(timeout=60) == 0


def test_a_full_disk_while_writing_a_variant_is_named_and_leaves_nothing(cache_dir: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A variant built on request: its parent installs, then the variant's own file meets a full disk; neither
    its staging nor its stored manifest stays, and a later load builds it."""
    import pyarrow.parquet as pq

    variant = f"{NAME}~shuffle-s0"
    tgbhub.load_dataset(NAME, cache_dir=cache_dir, offline=True)
    real = pq.write_table

    def fills_up(table, where, *args, **kwargs):
        if "~shuffle" in str(where):
            raise OSError(errno.ENOSPC, "[Errno 28] Error writing bytes to file. Detail: [errno 28] No space left "
                          "on device")
        return real(table, where, *args, **kwargs)

    monkeypatch.setattr(pq, "write_table", fills_up)
    with pytest.raises(DiskFullError, match=f"cannot write {re.escape(variant)}@1.0.0 into the cache"):
        tgbhub.load_dataset(variant, cache_dir=cache_dir, offline=True)
    assert leftovers(cache_dir / "t-grab" / "pdet-2-1~shuffle-s0") == []
    monkeypatch.setattr(pq, "write_table", real)
    assert tgbhub.load_dataset(variant, cache_dir=cache_dir, offline=True).source == "build"


def test_a_full_disk_error_survives_a_pickle(tmp_path: Path) -> None:
    """A Dask worker sends its error back pickled: the message and the fields arrive as raised."""
    import pickle

    error = cache.disk_full_error(_enospc(tmp_path), tmp_path, NAME + "@1.0.0", declared=1000, written=2000)
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is DiskFullError and str(again) == str(error) and again.errno == errno.ENOSPC
    assert (again.mount, again.free, again.declared, again.written) == (error.mount, error.free, 1000, 2000)
