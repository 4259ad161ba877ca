"""A Parquet row group's fixed-size list column handed to Arrow in slices, with the bytes of one whole write.

Given a list column whole, Arrow's Parquet writer first computes the repetition and definition levels of every value
in the row group (two int16 buffers grown by doubling: a 128 MiB buffer for a negatives row group of 2^20 queries x
20); given the same column as a chunked array, it computes them a slice at a time. Slices change the bytes only
through where the writer checks its limits, so they end where a whole write checks too, and the written pages are
checked afterwards. How the writer (pyarrow 26, V1 pages, no page index, default limits) places its checks:

- It hands a list column's values to the encoder in batches: a batch ends at the first row boundary at least
  ``write_batch_size`` (1024) values after its start (``ceil(1024 / width)`` rows), or where its page reaches
  ``max_rows_per_page`` (20,000) rows. A page starts a batch.
- After each batch it ends the page if the page holds 20,000 rows or its estimated encoded size reached
  ``data_pagesize`` (1 MiB), then falls back from dictionary to plain encoding if the dictionary reached
  ``dictionary_pagesize_limit`` (1 MiB); a fallback ends the page too.
- A slice's last batch ends at the slice's end and is handed over in two parts (all its rows but the last, then the
  last row): one check more than a whole write makes, one row before the slice's end.

So a slice gives the whole write's bytes when (1) it ends where a whole write's batch ends (a multiple of the batch
rows after the start of its page, or 20,000 rows after it), and (2) the extra check does nothing. :func:`plan`
simulates the whole write's checks (the dictionary's size from counting distinct values, a page's estimated size
from Arrow's bound for RLE-encoded indices) and ends a slice at a batch end where the extra check is quiet;
:func:`unfaithful_groups` then reads the page headers the writer wrote and checks (1) at every slice end against
the pages as written. An extra check that acted would have ended a page one row before the slice's end, which (1)
rejects when a batch holds more than one row, and when it holds one the extra check sees the state the whole write's
check left. The simulation only chooses where slices end; the page headers decide whether they were right, and a
row group that fails is written again whole by the caller.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import BinaryIO

import numba
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .jit import announce_compile

#: Arrow's defaults the simulation and the check assume: values per batch, rows and bytes per page, dictionary bytes
WRITE_BATCH_VALUES = 1024
PAGE_ROWS = 20_000
PAGE_BYTES = 1 << 20
DICTIONARY_BYTES = 1 << 20
#: values per slice (at least): large enough that a slice's overhead is negligible, small enough that its levels
#: are a few MB
SLICE_VALUES = 1 << 18
#: the widest range of values whose distinct count the simulation tracks (a byte each, so at most 16 MiB beside a
#: row group that slicing saves more than that on); wider columns go whole
MOST_SPAN = 1 << 24
#: the pyarrow that places its checks as above (checked by tests/test_list_slices.py); any other writes whole
SLICED_PYARROW = 26
_SLICING = int(pa.__version__.split(".")[0]) == SLICED_PYARROW


def batch_rows(width: int) -> int:
    """Rows of a whole write's batch for a list ``width`` values wide (after a page starts)."""
    return max(1, -(-WRITE_BATCH_VALUES // width))


def plan(matrix: np.ndarray) -> np.ndarray:
    """Where the slices of ``matrix`` (one row group of an int32 fixed-size list column, rows x width) end: row
    numbers, the last one ``len(matrix)``; ``[len(matrix)]`` (one whole array) when the row group is small, the
    values span more than :data:`MOST_SPAN`, or the installed pyarrow is not the one the simulation was checked on.
    """
    rows, width = matrix.shape
    slice_rows = max(1, SLICE_VALUES // max(width, 1))
    if rows < 2 * slice_rows or not _SLICING:
        return np.array([rows], dtype=np.int64)
    lo, hi = int(matrix.min()), int(matrix.max())
    if hi - lo >= MOST_SPAN:
        return np.array([rows], dtype=np.int64)
    arguments = (matrix, lo, hi - lo + 1, batch_rows(width), slice_rows)
    announce_compile(_slice_ends, arguments, "the list-slice planner", "2 s")
    return np.asarray(_slice_ends(*arguments))


def sliced(matrix: np.ndarray, ends: np.ndarray) -> pa.ChunkedArray:
    """``matrix`` (int32, rows x width) as a fixed-size list column whose chunks end at ``ends`` (zero-copy)."""
    width = matrix.shape[1]
    lists = pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1)), width)
    starts = np.concatenate([[0], ends[:-1]])
    return pa.chunked_array([lists.slice(int(a), int(b - a)) for a, b in zip(starts, ends, strict=True)],
                            type=lists.type)


def unfaithful_groups(path: str | os.PathLike[str], column: int, width: int,
                      ends: Sequence[np.ndarray]) -> list[int]:
    """The row groups of the Parquet file at ``path`` whose list ``column`` (``width`` values a row), written in
    slices ending at ``ends[group]``, may not hold the bytes of one whole write: a slice end that is not a batch end
    of the pages as written, or pages this reader does not know. Row groups written whole are never listed.
    """
    if all(len(group_ends) < 2 for group_ends in ends):
        return []  # nothing sliced: nothing to read back
    metadata = pq.read_metadata(path)
    every_batch = batch_rows(width)
    unfaithful = []
    with open(path, "rb") as file:
        for group, group_ends in enumerate(ends):
            if len(group_ends) < 2:
                continue
            starts = _page_starts(file, metadata.row_group(group).column(column), width)
            if starts is None or not _batch_ends(starts, np.asarray(group_ends[:-1]), every_batch):
                unfaithful.append(group)
    return unfaithful


def _batch_ends(starts: np.ndarray, ends: np.ndarray, every: int) -> bool:
    """Whether every row in ``ends`` is a batch end of a whole write whose pages start at ``starts``."""
    page = starts[np.searchsorted(starts, ends - 1, side="right") - 1]
    return bool(np.all(((ends - page) % every == 0) | (ends - page == PAGE_ROWS)))


def _page_starts(file: BinaryIO, chunk: pq.ColumnChunkMetaData, width: int) -> np.ndarray | None:
    """The first row of each data page of a column chunk (read from its page headers), or None for a page kind
    other than V1 data and dictionary pages, or a header this reader cannot follow."""
    start = chunk.dictionary_page_offset if chunk.has_dictionary_page else chunk.data_page_offset
    stop = start + chunk.total_compressed_size
    rows, position = [0], start
    while position < stop:
        file.seek(position)
        head = file.read(_HEADER_BYTES)
        try:
            header, used = _read_struct(head, 0)
        except (IndexError, ValueError):
            return None
        kind, body = header.get(1), header.get(3)
        if not isinstance(body, int) or kind not in (_DATA_PAGE, _DICTIONARY_PAGE):
            return None
        if kind == _DATA_PAGE:
            page = header.get(5)
            if not isinstance(page, dict) or not isinstance(page.get(1), int) or page[1] % width:
                return None
            rows.append(rows[-1] + page[1] // width)
        position += used + body
    return np.asarray(rows[:-1], dtype=np.int64)


#: bytes read for one page header (an int32 column's header with its statistics takes well under 100)
_HEADER_BYTES = 512
#: PageHeader.type values (parquet.thrift)
_DATA_PAGE, _DICTIONARY_PAGE = 0, 2


def _varint(data: bytes, position: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, position


def _read_struct(data: bytes, position: int) -> tuple[dict[int, object], int]:
    """A Thrift compact-protocol struct at ``position``: field id -> integer, struct (dict) or skipped value; and
    the position after it. Raises IndexError on truncated data, ValueError on a type the protocol lacks."""
    fields: dict[int, object] = {}
    last = 0
    while True:
        head = data[position]
        position += 1
        if head == 0:
            return fields, position
        kind, delta = head & 0x0F, head >> 4
        if delta:
            last += delta
        else:
            raw, position = _varint(data, position)
            last = (raw >> 1) ^ -(raw & 1)
        fields[last], position = _read_value(data, position, kind)


def _read_value(data: bytes, position: int, kind: int) -> tuple[object, int]:
    if kind in (1, 2):  # booleans live in the field header
        return kind == 1, position
    if kind == 3:
        return data[position], position + 1
    if kind in (4, 5, 6):
        raw, position = _varint(data, position)
        return (raw >> 1) ^ -(raw & 1), position
    if kind == 7:
        return None, position + 8
    if kind == 8:
        size, position = _varint(data, position)
        return None, position + size
    if kind in (9, 10):
        head = data[position]
        position += 1
        size, element = head >> 4, head & 0x0F
        if size == 15:
            size, position = _varint(data, position)
        for _ in range(size):
            _, position = _read_value(data, position, element)
        return None, position
    if kind == 11:
        size, position = _varint(data, position)
        if size:
            types = data[position]
            position += 1
            for _ in range(size):
                _, position = _read_value(data, position, types >> 4)
                _, position = _read_value(data, position, types & 0x0F)
        return None, position
    if kind == 12:
        return _read_struct(data, position)
    raise ValueError(f"Thrift compact type {kind}")


@numba.njit(cache=True, nogil=True)
def _bit_width(entries: int) -> int:
    if entries <= 1:
        return entries
    width = 0
    while (1 << width) < entries:
        width += 1
    return width


@numba.njit(cache=True, nogil=True)
def _page_full(rows: int, entries: int, plain: bool, width: int) -> bool:
    """Whether a page of ``rows`` rows ends at a check: its row limit, or its estimated size (plain int32 values,
    or RLE-encoded dictionary indices at the dictionary's bit width, Arrow's worst-case bound)."""
    if rows >= PAGE_ROWS:
        return True
    values = rows * width
    if plain:
        return values * 4 >= PAGE_BYTES
    bits = _bit_width(entries)
    runs = (values + 7) // 8
    most = max(runs + runs * bits, runs * (1 + (bits + 7) // 8))
    least = max(1 + (512 * bits + 7) // 8, 5 + (bits + 7) // 8)
    return 1 + most + least >= PAGE_BYTES


@numba.njit(cache=True, nogil=True)
def _slice_ends(values: np.ndarray, lo: int, span: int, every: int, slice_rows: int) -> np.ndarray:
    """The whole write's checks, simulated row by row; a slice ends at a batch end at least ``slice_rows`` rows
    after the last where the extra check (one row earlier) would act on nothing."""
    rows, width = values.shape
    seen = np.zeros(span, dtype=np.uint8)
    ends = np.empty(rows // slice_rows + 2, dtype=np.int64)
    count = entries = page_start = batch_start = slice_start = 0
    plain = False
    most_entries = DICTIONARY_BYTES // 4
    for row in range(rows):
        before = entries
        if not plain:
            for column in range(width):
                value = values[row, column] - lo
                if seen[value] == 0:
                    seen[value] = 1
                    entries += 1
        stop = row + 1
        if stop - batch_start < every and stop - page_start < PAGE_ROWS and stop < rows:
            continue
        if stop < rows and stop - slice_start >= slice_rows:
            acts = _page_full(stop - 1 - page_start, before, plain, width) or (not plain and before >= most_entries)
            if not acts:
                ends[count] = stop
                count += 1
                slice_start = stop
        if _page_full(stop - page_start, entries, plain, width):
            page_start = stop
        if not plain and entries >= most_entries:
            plain = True
            page_start = stop
        batch_start = stop
    ends[count] = rows
    return ends[:count + 1]
