"""Arrays kept on disk while an import runs, so that its memory does not grow with the release.

A :class:`DiskColumn` is a column (``[n]``) or a matrix (``[n, d]``) in a raw file, C order, native byte order,
read a slice of rows at a time with plain file reads. Plain reads and not ``mmap`` on purpose: the pages of a mapped
file a process has touched count in its resident set until unmapped, so sweeping a mapped 4 GB column would grow
the import's peak memory by 4 GB, while read pages stay in the kernel's page cache, which the system reclaims. The
one use of mappings, :class:`MappedReads`, is for rows a reader must be given whole (a Parquet row group handed to
Arrow zero-copy): a thread drops their resident pages behind it, so only what it touched last is resident.

A :class:`ColumnWriter` appends blocks of rows and gives the finished column. Code that reads columns a slice at a
time (``column[start:stop]``, ``len``, ``dtype``, ``shape``, ``ndim``) takes an ``np.ndarray`` or a
:class:`DiskColumn` alike (:data:`Column`).
"""

from __future__ import annotations

import mmap
import os
import tempfile
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import cast

import numpy as np

#: rows a :meth:`DiskColumn.blocks` sweep reads at a time by default (8 MiB of int64)
READ_ROWS = 1 << 20


class DiskColumn:
    """Rows ``[start, start + len)`` of a raw array file of ``dtype`` whose rows hold ``tail`` values each
    (``()`` for a column, ``(d,)`` for a matrix); nothing is read until rows are asked for."""

    def __init__(self, path: Path, dtype: np.dtype | type, rows: int, tail: tuple[int, ...] = (), start: int = 0,
                 stored: np.dtype | type | None = None) -> None:
        self.path = path
        self.dtype = np.dtype(dtype)  # what reads give
        self.stored = np.dtype(stored if stored is not None else dtype)  # what the file holds
        self.tail = tail
        self.rows = rows
        self.start = start

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.rows, *self.tail)

    @property
    def ndim(self) -> int:
        return 1 + len(self.tail)

    def __len__(self) -> int:
        return self.rows

    @property
    def row_bytes(self) -> int:
        return int(self.stored.itemsize * int(np.prod(self.tail, dtype=np.int64)))

    def __getitem__(self, rows: slice) -> np.ndarray:
        """Rows ``rows`` (a slice of step 1) read from the file into a new array."""
        if not isinstance(rows, slice) or rows.step not in (None, 1):
            raise TypeError(f"a DiskColumn reads a slice of rows of step 1, not {rows!r}")
        start, stop, _ = rows.indices(self.rows)
        count = max(0, stop - start)
        values = np.empty((count, *self.tail), dtype=self.stored)
        if count and self.row_bytes:
            with open(self.path, "rb") as handle:
                handle.seek((self.start + start) * self.row_bytes)
                read = handle.readinto(values.data.cast("B"))  # .data: memoryview(values)
            if read != values.nbytes:
                raise OSError(f"{self.path}: {read} bytes read of {values.nbytes}; the spilled column was cut short")
        return values if self.stored == self.dtype else values.astype(self.dtype)

    def astype(self, dtype: np.dtype | type) -> DiskColumn:
        """The same rows read as ``dtype`` (numpy's unchecked cast, as ``ndarray.astype``)."""
        return DiskColumn(self.path, dtype, self.rows, self.tail, self.start, self.stored)

    def view(self, start: int, stop: int) -> DiskColumn:
        """Rows ``start:stop`` as a column of their own (no copy)."""
        start, stop = max(0, start), min(self.rows, stop)
        return DiskColumn(self.path, self.dtype, max(0, stop - start), self.tail, self.start + start, self.stored)

#: what readers of a column a slice at a time accept
Column = np.ndarray | DiskColumn


def blocks(column: Column, rows: int | None = None) -> Iterator[np.ndarray]:
    """The column's rows in order, ``rows`` at a time, each block in memory; by default :data:`READ_ROWS`, fewer for
    rows wider than 8 bytes (a matrix), so that a block holds at most ``READ_ROWS`` int64s' worth."""
    step = rows or _default_rows(column)
    for first in range(0, len(column), step):
        yield np.asarray(column[first:first + step])


def _default_rows(column: Column) -> int:
    """:data:`READ_ROWS`, scaled down for a column whose rows are wider than one int64 (read as stored, the wider)."""
    values = int(np.prod(column.shape[1:], dtype=np.int64))
    itemsize = max(column.dtype.itemsize, column.stored.itemsize if isinstance(column, DiskColumn) else 0)
    return max(1, min(READ_ROWS, READ_ROWS * 8 // max(1, values * itemsize)))


class ColumnWriter:
    """Appends blocks of rows (``[k, *tail]`` of ``dtype``) to a raw file; :meth:`finish` gives the column."""

    def __init__(self, path: Path, dtype: np.dtype | type, tail: tuple[int, ...] | None = None) -> None:
        self.path = path
        self.dtype = np.dtype(dtype)
        self.tail = tail
        self.rows = 0
        self._handle = open(path, "wb")  # noqa: SIM115 (closed by finish or close)

    def append(self, block: np.ndarray) -> None:
        """Write ``block``'s rows after the ones written so far.

        Raises:
            ValueError: if the block's rows do not have the shape of the rows before it.
        """
        tail = tuple(block.shape[1:])
        if self.tail is None:
            self.tail = tail
        elif tail != self.tail:
            raise ValueError(f"{self.path.name}: a block of rows {tail} after rows {self.tail}")
        np.ascontiguousarray(block, dtype=self.dtype).tofile(self._handle)
        self.rows += len(block)

    def finish(self) -> DiskColumn:
        """The column written (the file closed)."""
        self.close()
        return DiskColumn(self.path, self.dtype, self.rows, self.tail or ())

    def close(self) -> None:
        if not self._handle.closed:
            self._handle.close()


class ColumnSink:
    """Named columns gathered block by block: in raw files under ``folder`` (:class:`DiskColumn`), or, without a
    folder, in memory (joined once at :meth:`finish`, one column at a time)."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self._writers: dict[str, ColumnWriter] = {}
        self._pieces: dict[str, list[np.ndarray]] = {}

    def extend(self, blocks: list[dict[str, np.ndarray]]) -> None:
        """Append each block's columns (every block has the same names); the blocks are emptied on the way."""
        for block in blocks:
            for name in list(block):
                values = block.pop(name)
                if self.folder is None:
                    self._pieces.setdefault(name, []).append(values)
                    continue
                if name not in self._writers:
                    self._writers[name] = ColumnWriter(new_file(self.folder, name), values.dtype)
                self._writers[name].append(values)

    def finish(self) -> dict[str, Column]:
        """The columns, in the order the first block named them."""
        if self.folder is None:  # a column at a time, each column's blocks dropped once joined
            return {name: np.concatenate(self._pieces.pop(name)) for name in list(self._pieces)}
        return {name: writer.finish() for name, writer in self._writers.items()}

    def discard(self) -> None:
        """Drop what was gathered (a reading that starts over)."""
        for writer in self._writers.values():
            writer.close()
            os.unlink(writer.path)
        self._writers, self._pieces = {}, {}


#: seconds between two drops of the resident pages of :class:`MappedReads`' mappings
DROP_SECONDS = 0.01


class MappedReads:
    """Rows of spilled columns read through read-only file mappings whose resident pages a thread drops every
    :data:`DROP_SECONDS` while the context is open.

    For a reader that sweeps rows it must be given whole (Arrow's Parquet writer, handed a row group zero-copy):
    of the rows, only what it touched in the last few milliseconds is resident, not all of them. A dropped page that
    is read again is mapped again from the page cache (the file's, which nothing changes while it is read: the same
    bytes). Where pages cannot be dropped (no ``madvise``), or the rows are in memory or read as another dtype than
    stored, :meth:`rows` reads them as ``column[start:stop]`` does. The arrays :meth:`rows` gives must be released
    before the context closes; a mapping still in use then is unmapped when its last array is.
    """

    def __init__(self) -> None:
        self._maps: list[mmap.mmap] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._drop, name="spill-page-drop", daemon=True)

    def __enter__(self) -> MappedReads:
        return self  # the thread starts with the first mapping: rows in memory need none

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        for mapping in self._maps:
            try:
                mapping.close()
            except BufferError:  # an array over it is still alive: unmapped with the array
                pass
        self._maps.clear()

    def rows(self, column: Column, start: int, stop: int) -> np.ndarray:
        """Rows ``start:stop`` of ``column`` (read-only when mapped)."""
        start, stop = max(0, start), min(len(column), stop)
        if (not isinstance(column, DiskColumn) or column.stored != column.dtype or stop <= start
                or not column.row_bytes or not hasattr(mmap, "MADV_DONTNEED")):
            return np.asarray(column[start:stop])
        first = (column.start + start) * column.row_bytes
        aligned = first - first % mmap.ALLOCATIONGRANULARITY
        size = (stop - start) * column.row_bytes
        with open(column.path, "rb") as handle:
            mapping = mmap.mmap(handle.fileno(), first - aligned + size, access=mmap.ACCESS_READ, offset=aligned)
        self._maps.append(mapping)
        if not self._thread.is_alive():
            self._thread.start()
        values = np.frombuffer(mapping, dtype=column.dtype, count=size // column.dtype.itemsize,
                               offset=first - aligned)
        return values.reshape(stop - start, *column.tail)

    def _drop(self) -> None:
        while not self._stop.wait(DROP_SECONDS):
            for mapping in list(self._maps):
                try:
                    mapping.madvise(mmap.MADV_DONTNEED)
                except ValueError:  # closed meanwhile
                    pass


def new_file(folder: Path, what: str) -> Path:
    """A new empty file in ``folder`` for ``what``, named so that no other spill file is overwritten."""
    handle, name = tempfile.mkstemp(prefix=f"{what}-", suffix=".raw", dir=folder)
    os.close(handle)
    return Path(name)


def spilled(column: Column, folder: Path | None, name: str) -> Column:
    """``column`` written to a raw file under ``folder`` (as it is without a folder)."""
    if folder is None or isinstance(column, DiskColumn):
        return column
    writer = ColumnWriter(new_file(folder, name), column.dtype)
    writer.append(column)
    return writer.finish()


def in_memory(files: Mapping[str, Mapping[str, Column]]) -> dict[str, dict[str, np.ndarray]] | None:
    """``files`` (file -> column -> values) where every column is in memory, else ``None``."""
    if all(isinstance(values, np.ndarray) for columns in files.values() for values in columns.values()):
        return {name: {column: cast(np.ndarray, values) for column, values in columns.items()}
                for name, columns in files.items()}
    return None


def rewrite(column: DiskColumn, change: np.ndarray | int, rows: int = READ_ROWS) -> None:
    """Add ``change`` to every row of ``column`` in its file, a block at a time (in place, no second file)."""
    with open(column.path, "r+b") as handle:
        for first in range(0, column.rows, rows):
            block = column[first:first + rows]
            block += np.asarray(change, dtype=block.dtype)
            handle.seek((column.start + first) * column.row_bytes)
            block.tofile(handle)


def remove(columns: list[DiskColumn]) -> None:
    """Delete the columns' files (their space back as soon as a column is no longer needed)."""
    for column in columns:
        try:
            os.unlink(column.path)
        except FileNotFoundError:
            pass

