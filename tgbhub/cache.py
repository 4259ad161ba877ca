"""The verified local cache: layout, per-version lock, temp -> verify -> rename, ``COMPLETE`` marker.

Layout: ``<root>/<family>/<name>/<version>/`` holds the manifest's files plus one ``.npy`` per column (memory-mapped
by loads; written from the columns a source holds in memory, else derived from the verified Parquet file a
block of rows at a time, so installing a file of any length takes the memory of a block), and ``COMPLETE``, written
last, records every file's size, mtime and hash. A load compares sizes and mtimes only; anything that changed is
re-verified and repaired, or the entry is dropped and fetched again.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import uuid
from collections.abc import Callable, Collection, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from filelock import FileLock

from tgbhub.columns import HDF5_ENCODING, open_parquet, parquet_column_blocks, read_columns
from tgbhub.errors import CacheWriteError, DiskFullError, IntegrityError
from tgbhub.hashing import ContentDigest, column_sha256, content_digest, file_sha256
from tgbhub.manifest import FileEntry, Manifest
from tgbhub.memory import give_back_memory

MARKER = "COMPLETE"


@dataclass(frozen=True)
class Fetched:
    """What a source put in the staging folder: file paths, and the columns if it already has them in memory.

    ``rebuilt`` marks files regenerated locally: their bytes may come from another writer version, so they may pass
    on the manifest's logical digest. Downloaded files must match the published sha256.
    """

    files: Mapping[str, Path]
    columns: Mapping[str, Mapping[str, np.ndarray]] | None = None
    rebuilt: bool = False


@dataclass(frozen=True)
class CacheEntry:
    """A verified dataset version in the cache; ``sha256`` is each file's as recorded when it was verified."""

    folder: Path
    files: Mapping[str, Path]
    columns: Mapping[str, Mapping[str, Path]]
    sha256: Mapping[str, str]


def version_dir(root: Path, manifest: Manifest) -> Path:
    """``<root>/<family>/<name>/<version>``; names were validated before they reached a manifest."""
    return root / manifest.family / manifest.short_name / manifest.version


def column_file(entry: FileEntry, column: str) -> str:
    return f"{entry.name}.{column}.npy"


def _stat_record(path: Path) -> dict[str, int]:
    info = path.stat()
    return {"size": info.st_size, "mtime_ns": info.st_mtime_ns}


def _unchanged(path: Path, record: Mapping[str, Any]) -> bool:
    try:
        return _stat_record(path) == {"size": record["size"], "mtime_ns": record["mtime_ns"]}
    except OSError:
        return False


def _read_marker(folder: Path) -> dict[str, Any] | None:
    try:
        return json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a private temporary file: a reader never sees half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    try:
        temp.write_text(text, encoding="utf-8")
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)  # gone after the rename; a failed write (full disk) leaves no .tmp behind


#: numpy reports a short write (``tofile``, ``np.save``) as an OSError with no errno; on a local file it means the
#: disk filled up
_SHORT_WRITE = re.compile(r"\d+ requested and \d+ written")


def disk_full(exc: BaseException | None) -> OSError | None:
    """The error saying the disk (or the quota) is full, if ``exc`` is one or was raised from one; else ``None``.

    A source or a generator may wrap the error it met (a download's ``FetchError``, a ``GenerationError``), and
    numpy's short write carries no errno, so the chain is followed and the message read.
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and (exc.errno in (errno.ENOSPC, errno.EDQUOT)
                                         or (exc.errno is None and _SHORT_WRITE.search(str(exc)))):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def mount_point(path: Path) -> Path:
    """The mount point of the disk ``path`` is on (or will be on, for a folder not made yet)."""
    mount = Path(os.path.abspath(path))
    while not mount.exists() and mount != mount.parent:
        mount = mount.parent
    mount = mount.resolve()
    while not os.path.ismount(mount) and mount != mount.parent:
        mount = mount.parent
    return mount


def disk_full_error(full: OSError, root: Path, what: str, declared: int | None = None,
                    written: int | None = None) -> DiskFullError:
    """The error for a full disk under the cache ``root`` while writing ``what``: its mount point, the free bytes
    ``shutil.disk_usage`` reports now (after the failed install removed its files), ``declared`` (the bytes the
    manifest declares for the files being installed) and ``written`` (what had been written when it filled)."""
    mount = mount_point(root)
    try:
        free: int | None = shutil.disk_usage(mount).free
    except OSError:
        free = None
    return DiskFullError(what, str(root), str(mount), free, declared, written, full)


@contextmanager
def naming_the_disk(root: Path, what: str, declared: int | None = None) -> Iterator[None]:
    """Turn a full disk met inside the block (however a source or generator wrapped it) into a
    :class:`~tgbhub.errors.DiskFullError` naming the cache's disk; other errors pass unchanged.

    Raises:
        DiskFullError: if the block failed because the disk or quota under ``root`` is full.
    """
    try:
        yield
    except CacheWriteError:
        raise
    except BaseException as exc:
        full = disk_full(exc)
        if full is None:
            raise
        raise disk_full_error(full, root, what, declared) from exc


def declared_bytes(manifest: Manifest) -> int:
    """The bytes ``manifest`` declares for its files (the column arrays the cache keeps beside them come on top)."""
    return sum(entry.size for entry in manifest.files)


def stored_manifest_path(root: Path, name: str, version: str) -> Path:
    """Where a cache keeps the manifest of a dataset it made itself (a variant built on request, an import):
    ``<root>/<family>/<name>/<version>.manifest.json``, next to the version's entry."""
    family, short = name.split("/", 1)
    return root / family / short / f"{version}.manifest.json"


def in_place(entry: FileEntry) -> bool:
    """Whether a file's arrays are read in place (HDF5: memory-mapped or read lazily) instead of derived ``.npy``."""
    return entry.encoding == HDF5_ENCODING


def _entry(folder: Path, manifest: Manifest, marker: Mapping[str, Any]) -> CacheEntry:
    # An in-place file's arrays all map to the file itself.
    return CacheEntry(folder=folder, files={f.name: folder / f.name for f in manifest.files},
                      columns={f.name: {c: folder / (f.name if in_place(f) else column_file(f, c)) for c in f.columns}
                               for f in manifest.files},
                      sha256={f.name: marker["files"][f.name]["sha256"] for f in manifest.files})


def verify_file(entry: FileEntry, path: Path,
                rebuilt: bool = False) -> tuple[str, dict[str, np.ndarray] | None, str]:
    """Check a file against its manifest entry; return how (``"sha256"`` or ``"digest"``), any decoded columns, and
    the file's sha256.

    Bytes that equal the published sha256 pass. Otherwise a ``rebuilt`` file (made locally, perhaps by another writer
    version) passes if the values decoded from it equal the manifest's logical digest.

    Raises:
        IntegrityError: naming the file and both hashes, if neither check passes.
    """
    actual = file_sha256(path)
    if actual == entry.sha256:
        return "sha256", None, actual
    fix = "The bytes are not the published data; nothing was installed."
    if not rebuilt or entry.digest is None:
        raise IntegrityError(f"{entry.name}: sha256", entry.sha256, actual, fix)
    try:
        values = read_columns(path, entry.encoding, entry.columns)
    except (OSError, ValueError) as exc:  # pyarrow's and h5py's decode errors subclass these
        raise IntegrityError(f"{entry.name}: sha256", entry.sha256, f"{actual} (and undecodable: {exc})", fix) from exc
    actual_digest = content_digest(values)
    if actual_digest != entry.digest:
        # A rebuild made other values: not a writer-version difference but different data (e.g. another libm).
        raise IntegrityError(f"{entry.name}: sha256 and content digest", f"sha256 {entry.sha256} or digest "
                             f"{entry.digest}", f"sha256 {actual} and digest {actual_digest}",
                             f"This machine's rebuild holds different values from the published data "
                             f"({_differing(entry, values)}), so it was not installed. Fetch the dataset from a hub "
                             "or mirror (TGBHUB_ENDPOINT / TGBHUB_MIRRORS), and please report the machine: "
                             "`tgbhub doctor` prints what matters.")
    return "digest", values, actual


def _differing(entry: FileEntry, values: Mapping[str, np.ndarray]) -> str:
    """Which columns differ, as far as the manifest's per-column hashes tell."""
    known = [c for c in entry.columns if c in entry.column_sha256]
    differing = [c for c in known if column_sha256(values[c]) != entry.column_sha256[c]]
    unknown = [c for c in entry.columns if c not in entry.column_sha256]
    if differing:
        return "differing: " + ", ".join(differing)
    if unknown:
        return f"among {', '.join(unknown)}" if known else "the manifest has no per-column hashes to tell which"
    return "every column matches its own hash, so their order or names differ"


#: threads writing column files and hashing artifacts at install: both release the GIL (``tofile``, sha256), and
#: each file's bytes are its own, so the count changes only the speed
_IO_WORKERS = 2


def _write_through_temp(final: Path, write: Callable[[BinaryIO], None]) -> dict[str, int]:
    """Have ``write`` fill a private temporary file, then give it the name ``final``; return its stat record."""
    temp = final.with_name(f".{final.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    try:
        with open(temp, "wb") as handle:
            write(handle)
        os.replace(temp, final)
    except BaseException:
        temp.unlink(missing_ok=True)  # a failed write (full disk) leaves no .tmp behind
        raise
    return _stat_record(final)


def _write_column(folder: Path, entry: FileEntry, column: str, values: np.ndarray) -> dict[str, int]:
    """Write one column's ``.npy`` from its values in memory; return its stat record."""
    return _write_through_temp(folder / column_file(entry, column),
                               lambda handle: np.save(handle, np.ascontiguousarray(values), allow_pickle=False))


def _derive_column(folder: Path, entry: FileEntry, column: str) -> dict[str, int]:
    """Write one column's ``.npy`` from the Parquet file ``entry`` in ``folder``, a block of rows at a time, so the
    memory it takes is one block of that column whatever the file's length; return its stat record.

    The bytes are those ``np.save`` writes for the whole column as :func:`~tgbhub.columns.read_columns` reads it:
    the header for the whole shape (from the file's metadata), then each block's values in C order.

    Raises:
        IntegrityError: if the file lacks the column, or it does not read back as the fixed-width numbers its schema
            declares (nulls, text), which no published artifact holds.
    """
    with open_parquet(folder / entry.name) as parquet:
        dtype, shape, groups = _parquet_column(parquet, entry, column)

        def write(handle: BinaryIO) -> None:
            header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": shape}
            np.lib.format.write_array_header_1_0(handle, header)  # the version np.save picks for such a header
            for values in groups:
                np.ascontiguousarray(values).tofile(handle)  # how np.save writes a C-order array to a file

        return _write_through_temp(folder / column_file(entry, column), write)


def _derive_columns(folder: Path, entry: FileEntry) -> dict[str, dict[str, int]]:
    """Write every column of ``entry`` as ``.npy`` from its Parquet file (:func:`_derive_column`); return their stat
    records."""
    return {column: _derive_column(folder, entry, column) for column in entry.columns}


def _parquet_digest(path: Path, entry: FileEntry) -> str:
    """The content digest of ``entry``'s columns in the Parquet file ``path``, read a block of one column at a time.

    Raises:
        IntegrityError: as :func:`_derive_column`.
    """
    digest = ContentDigest()
    with open_parquet(path) as parquet:
        for column in entry.columns:
            dtype, shape, groups = _parquet_column(parquet, entry, column)
            digest.start(column, dtype, shape[0])
            for values in groups:
                digest.update(values)
    return digest.hexdigest()


def _parquet_column(parquet: pq.ParquetFile, entry: FileEntry,
                    column: str) -> tuple[np.dtype[Any], tuple[int, ...], Iterator[np.ndarray]]:
    """The dtype and whole shape ``column`` reads back as (a fixed-size list as ``[rows, size]``), from the file's
    metadata alone, and its values a block of rows at a time, each checked against them as it is read.

    Raises:
        IntegrityError: if the file lacks the column or its type is not fixed-width numbers (at once), or a row group
            reads back otherwise (nulls) or the row groups' rows do not add up (as the values are read).
    """
    try:
        kind = parquet.schema_arrow.field(column).type
    except KeyError as exc:
        raise _unreadable(entry, column, "a column", "none") from exc
    rows = int(parquet.metadata.num_rows)
    shape = (rows, int(kind.list_size)) if pa.types.is_fixed_size_list(kind) else (rows,)
    value = kind.value_type if pa.types.is_fixed_size_list(kind) else kind
    if not (pa.types.is_integer(value) or pa.types.is_floating(value) or pa.types.is_boolean(value)):
        raise _unreadable(entry, column, "fixed-width numbers", f"Arrow type {kind}")
    dtype = np.dtype(value.to_pandas_dtype())

    def groups() -> Iterator[np.ndarray]:
        read = 0
        for values in parquet_column_blocks(parquet, column):
            give_back_memory()  # the block before: else a long column's blocks pile up resident
            if values.dtype != dtype or values.shape[1:] != shape[1:]:
                raise _unreadable(entry, column, f"{dtype} rows of shape {shape[1:]}",
                                  f"{values.dtype} rows of shape {values.shape[1:]} from row {read}")
            read += len(values)
            yield values
        if read != rows:
            raise _unreadable(entry, column, f"{rows} rows (the file's metadata)", f"{read} in its row groups")

    return dtype, shape, groups()


def _unreadable(entry: FileEntry, column: str, expected: str, actual: str) -> IntegrityError:
    """The error for a column that is missing or does not read back as the numbers its schema declares."""
    return IntegrityError(f"{entry.name}: column {column}", expected, actual,
                          "The file does not hold the columns of fixed-width numbers its manifest lists, which every "
                          "tgbhub artifact does, so it cannot be cached. Report the dataset.")


#: bytes of a column file :func:`_npy_digest` reads at a time
_NPY_BLOCK = 8 << 20


def _npy_digest(paths: Mapping[str, Path]) -> str:
    """The content digest of the column files ``paths`` (column name -> ``.npy``), each read a block of rows at a
    time with plain reads (the pages of a memory-mapped sweep would stay in the resident set).

    Raises:
        ValueError: if a file is not a C-order ``.npy`` of numbers (format 1.0 or 2.0) or is cut short.
        OSError: if a file cannot be read.
    """
    digest = ContentDigest()
    for column, path in paths.items():
        with open(path, "rb") as handle:
            version = np.lib.format.read_magic(handle)
            if version not in ((1, 0), (2, 0)):
                raise ValueError(f"{path}: .npy format {version}, which tgbhub does not write")
            read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
                np.lib.format.read_array_header_2_0
            shape, fortran_order, dtype = read_header(handle)
            if fortran_order or dtype.hasobject or not shape:
                raise ValueError(f"{path}: not a C-order column of numbers ({dtype}, shape {shape})")
            row_bytes = dtype.itemsize * int(np.prod(shape[1:], dtype=np.int64))
            step = max(1, _NPY_BLOCK // max(1, row_bytes))
            digest.start(column, dtype, shape[0])
            for first in range(0, shape[0], step):
                block = np.empty((min(step, shape[0] - first), *shape[1:]), dtype=dtype)
                if handle.readinto(block.reshape(-1).view(np.uint8).data) != block.nbytes:
                    raise ValueError(f"{path}: cut short before row {first + len(block)} of {shape[0]}")
                digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class Plan:
    """What a cache entry needs, decided by reading only (:func:`plan`).

    ``action`` is ``"hit"`` (complete and untouched: ``entry`` is ready), ``"repair"`` (complete, but a file's size or
    mtime changed since install: it must be re-verified under the lock, see :func:`install`) or ``"miss"`` (absent,
    incomplete, or another version's: fetch it). ``reason`` says why, for messages.
    """

    action: str
    entry: CacheEntry | None = None
    reason: str = ""


def plan(manifest: Manifest, root: Path) -> Plan:
    """Decide, without writing anything or hashing any file, whether ``manifest``'s cache entry is a hit, needs a
    repair or misses: the marker must name this version and record every file, and a hit needs every file's (and
    derived column file's) size and mtime to be the ones recorded."""
    folder = version_dir(root, manifest)
    marker = _read_marker(folder)
    if marker is None or marker.get("version") != manifest.version or marker.get("name") != manifest.name:
        return Plan("miss", reason="no complete entry")
    touched = []
    for entry in manifest.files:
        record = marker["files"].get(entry.name)
        if record is None or (record.get("sha256") != entry.sha256 and record.get("verified_by") != "digest"):
            return Plan("miss", reason=f"{entry.name} was verified against another manifest")
        if not (folder / entry.name).exists():
            return Plan("miss", reason=f"{entry.name} is missing")
        columns = marker["columns"].get(entry.name, {})
        if not _unchanged(folder / entry.name, record) or (not in_place(entry) and any(
                not _unchanged(folder / column_file(entry, c), columns.get(c, {})) for c in entry.columns)):
            touched.append(entry.name)
    if touched:
        return Plan("repair", reason=f"changed since install: {', '.join(touched)}")
    return Plan("hit", entry=_entry(folder, manifest, marker))


def is_complete(root: Path, name: str, version: str) -> bool:
    """Whether the cache at ``root`` holds a complete entry of ``name@version`` (its ``COMPLETE`` marker; a load still
    checks it)."""
    family, short = name.split("/", 1)
    return (root / family / short / version / MARKER).is_file()


def entry_lock(root: Path, name: str, version: str) -> FileLock:
    """The per-version lock every writer of ``name@version``'s entry takes (install, repair, on-request builds and
    the manifest they store); not re-entrant across instances, so take it once per operation."""
    family, short = name.split("/", 1)
    folder = root / family / short
    folder.mkdir(parents=True, exist_ok=True)
    return FileLock(str(folder / version) + ".lock")


def lookup(manifest: Manifest, root: Path) -> CacheEntry | None:
    """The cached entry if it is complete and untouched, or repairable; ``None`` means fetch it again.

    A hit is decided by :func:`plan` without writing; an entry whose files changed since install is repaired under
    the per-version lock (see :func:`_repair`), so no two processes rewrite one entry at once.

    Raises:
        DiskFullError: if the disk under ``root`` fills up while a repair rewrites a column file.
    """
    decided = plan(manifest, root)
    if decided.action != "repair":
        return decided.entry
    with naming_the_disk(root, f"{manifest.name}@{manifest.version}"), \
            entry_lock(root, manifest.name, manifest.version):
        return _repair(manifest, root)


def _repair(manifest: Manifest, root: Path) -> CacheEntry | None:
    """Under the entry's lock: re-verify every file whose size or mtime changed. A good artifact only gets its
    record refreshed, damaged column files are re-derived from their verified artifact, and a damaged artifact
    invalidates the entry (``None``)."""
    decided = plan(manifest, root)  # another process may have repaired or replaced it while we waited
    if decided.action != "repair":
        return decided.entry
    folder = version_dir(root, manifest)
    marker = _read_marker(folder)
    if marker is None:  # removed by hand since plan() read it
        return None
    for entry in manifest.files:
        record = marker["files"][entry.name]
        path = folder / entry.name
        if not _unchanged(path, record):
            if not path.is_file() or file_sha256(path) != record["sha256"]:
                return None
            record.update(_stat_record(path))
        if in_place(entry):
            continue
        columns = marker["columns"].get(entry.name, {})
        if any(not _unchanged(folder / column_file(entry, c), columns.get(c, {})) for c in entry.columns):
            if _parquet_digest(path, entry) != entry.digest:
                return None
            marker["columns"][entry.name] = _derive_columns(folder, entry)
    write_text_atomic(folder / MARKER, json.dumps(marker, indent=1))
    return _entry(folder, manifest, marker)


def reverify(manifest: Manifest, root: Path) -> tuple[str, list[str]]:
    """Re-hash every file of ``manifest``'s cache entry, whatever its size and mtime say (bit rot keeps both), under
    the entry's lock; return ``(status, damaged files)``.

    ``status`` is ``"ok"`` (every artifact has the sha256 recorded when it was verified and every column file holds
    the manifest's values), ``"repaired"`` (only column files were damaged: re-derived from their verified
    artifacts), ``"damaged"`` (an artifact's bytes changed: the entry is withdrawn, its ``COMPLETE`` removed, so the
    next load fetches or rebuilds it) or ``"missing"`` (no complete entry).

    Raises:
        DiskFullError: if the disk under ``root`` fills up while a column file is re-derived.
    """
    with naming_the_disk(root, f"{manifest.name}@{manifest.version}"), \
            entry_lock(root, manifest.name, manifest.version):
        folder = version_dir(root, manifest)
        marker = _read_marker(folder)
        if plan(manifest, root).action == "miss" or marker is None:
            return "missing", []
        damaged = [entry.name for entry in manifest.files
                   if file_sha256(folder / entry.name) != marker["files"][entry.name]["sha256"]]
        if damaged:
            (folder / MARKER).unlink()
            return "damaged", damaged
        rederived = []
        for entry in manifest.files:
            if in_place(entry):
                continue
            paths = {c: folder / column_file(entry, c) for c in entry.columns}
            expected = entry.digest or _parquet_digest(folder / entry.name, entry)
            try:
                intact = _npy_digest(paths) == expected
            except (OSError, ValueError):  # a truncated or garbled .npy
                intact = False
            if not intact:
                marker["columns"][entry.name] = _derive_columns(folder, entry)
                rederived.append(entry.name)
        for entry in manifest.files:  # the artifacts were re-read: their records stay, with today's mtimes
            marker["files"][entry.name].update(_stat_record(folder / entry.name))
        write_text_atomic(folder / MARKER, json.dumps(marker, indent=1))
        return ("repaired", rederived) if rederived else ("ok", [])


def install(manifest: Manifest, root: Path, fetch: Callable[[Path], Fetched]) -> tuple[CacheEntry, bool]:
    """Fetch into a private staging folder, verify, then move into place; return ``(entry, installed_now)``.

    A per-version file lock makes concurrent processes fetch once: the second finds the first's entry (a touched
    entry is repaired here, under the lock). Correctness does not rest on the lock: every file takes its final name
    only after verification, ``COMPLETE`` last.

    Raises:
        IntegrityError: if fetched bytes do not match the manifest (what was staged is removed).
        DiskFullError: if the disk or quota under ``root`` fills up on the way (what was written is removed).
        Exception: whatever ``fetch`` raises, after removing what was staged.
    """
    declared = declared_bytes(manifest)
    with naming_the_disk(root, f"{manifest.name}@{manifest.version}", declared), \
            entry_lock(root, manifest.name, manifest.version):
        existing = _repair(manifest, root)
        if existing is not None:
            return existing, False
        return install_locked(root, manifest.name, manifest.version, fetch, lambda fetched, staging: manifest,
                              declared=declared)[1], True


def install_locked(root: Path, name: str, version: str, fetch: Callable[[Path], Fetched],
                   describe: Callable[[Fetched, Path], Manifest],
                   declared: int | None = None) -> tuple[Manifest, CacheEntry]:
    """:func:`install`'s work, for a caller that already holds :func:`entry_lock` of ``name@version``: fetch into a
    private staging folder, verify against the manifest ``describe(fetched, staging)`` returns (the published one,
    or for a dataset built on request the one its build wrote), move into place, ``COMPLETE`` last.

    Every way out but success (an error of the source, the build or the disk, a mismatch, Ctrl-C) removes the
    staging folder and whatever was already moved into the version's folder, so a failed install leaves no bytes
    behind; staging and temporary files a killed process left are removed first.

    Args:
        declared: the bytes the manifest declares for the files, when the caller knows the manifest before the
            fetch (else they are read from the described manifest, if the failure came after it); a full disk's
            message names them.

    Raises:
        IntegrityError: if fetched bytes do not match the manifest, or the manifest is of another dataset version.
        DiskFullError: if the disk or quota under ``root`` fills up on the way, however the source or the build
            reported it.
        Exception: whatever ``fetch`` or ``describe`` raises.
    """
    family, short = name.split("/", 1)
    folder = root / family / short / version
    # Whoever fetches holds the lock, so any staging folder or temporary file seen now was left by a process that
    # died mid-install (every writer of this entry takes the lock).
    for stale in folder.parent.glob(f".{version}.*.staging"):
        shutil.rmtree(stale, ignore_errors=True)
    for stale in folder.parent.glob(f".{version}.manifest.json.*.tmp"):  # a stored manifest's half-written text
        stale.unlink(missing_ok=True)
    _discard_unfinished(folder, ())
    staging = folder.parent / f".{version}.{os.getpid()}.{uuid.uuid4().hex}.staging"
    described: list[Manifest] = []
    try:
        staging.mkdir()
        fetched = fetch(staging)
        manifest = describe(fetched, staging)
        described.append(manifest)
        if (manifest.name, manifest.version) != (name, version):
            raise IntegrityError(f"{name}@{version}: manifest", f"{name}@{version}",
                                 f"{manifest.name}@{manifest.version}", "The source described another dataset "
                                 "version; nothing was installed. Report it: it is a bug in that source.")
        marker = _verify_and_move(manifest, fetched, staging, folder)
        write_text_atomic(folder / MARKER, json.dumps(marker, indent=1))
    except BaseException as exc:
        names = {entry.name for entry in described[0].files} if described else set()
        written = _bytes_under(staging) + _discard_unfinished(folder, names)
        shutil.rmtree(staging, ignore_errors=True)
        full = None if isinstance(exc, CacheWriteError) else disk_full(exc)
        if full is None:
            raise
        if declared is None and described:
            declared = declared_bytes(described[0])
        raise disk_full_error(full, root, f"{name}@{version}", declared, written) from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return manifest, _entry(folder, manifest, marker)


def _bytes_under(folder: Path) -> int:
    """The bytes of the files under ``folder`` (0 if it is gone)."""
    total = 0
    for path in folder.rglob("*"):
        with suppress(OSError):
            total += path.stat().st_size if path.is_file() else 0
    return total


def _discard_unfinished(folder: Path, names: Collection[str]) -> int:
    """Remove what an install left unfinished in the version's ``folder``: temporary files, and, unless a
    ``COMPLETE`` marker vouches for them, the files ``names`` and their column arrays; then the folder, if that
    empties it. Returns the bytes removed. Only under the entry's lock: every writer of the folder takes it.
    """
    if not folder.is_dir():
        return 0
    vouched = (folder / MARKER).exists()
    removed = 0
    for path in folder.iterdir():
        temporary = path.name.startswith(".") and path.name.endswith(".tmp")
        unfinished = not vouched and (path.name in names or (path.name.endswith(".npy") and any(
            path.name.startswith(f"{name}.") for name in names)))
        if (temporary or unfinished) and path.is_file():
            with suppress(OSError):
                size = path.stat().st_size
                path.unlink()
                removed += size
    with suppress(OSError):  # not empty: another entry's files, or a complete entry
        folder.rmdir()
    return removed


def _verify_and_move(manifest: Manifest, fetched: Fetched, staging: Path, folder: Path) -> dict[str, Any]:
    with ThreadPoolExecutor(max_workers=_IO_WORKERS) as pool:
        # every file is verified before any is moved; results are read in manifest order, so the first missing
        # or bad file in that order is the one reported, as when they were checked one by one
        checks = {entry.name: pool.submit(verify_file, entry, fetched.files[entry.name], fetched.rebuilt)
                  for entry in manifest.files if fetched.files.get(entry.name) is not None}
        verified = {}
        for entry in manifest.files:
            if entry.name not in checks:
                raise IntegrityError(f"{manifest.name}@{manifest.version}: file {entry.name}", "present", "missing",
                                     "The source served an incomplete dataset; nothing was installed.")
            how, decoded, sha = checks[entry.name].result()
            # Columns a source holds in memory produced the verified bytes; decoded ones are the verified bytes.
            given = decoded if decoded is not None else (fetched.columns or {}).get(entry.name)
            verified[entry.name] = (how, given, sha)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / MARKER).unlink(missing_ok=True)
        marker: dict[str, Any] = {"name": manifest.name, "version": manifest.version, "files": {}, "columns": {}}
        writes = {}
        for entry in manifest.files:
            how, given, sha = verified[entry.name]
            final = folder / entry.name
            os.replace(fetched.files[entry.name], final)
            marker["files"][entry.name] = {**_stat_record(final), "sha256": sha, "verified_by": how}
            if in_place(entry):
                continue
            # without the values in memory, each column is derived from the verified file a block at a time
            writes[entry.name] = {column: pool.submit(_write_column, folder, entry, column, given[column])
                                  if given is not None else pool.submit(_derive_column, folder, entry, column)
                                  for column in entry.columns}
        for name, columns in writes.items():
            marker["columns"][name] = {column: future.result() for column, future in columns.items()}
    return marker
