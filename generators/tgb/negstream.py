"""TGB's negatives matched to a split's edges in memory that does not grow with the split or its pickle.

:func:`~generators.tgb.tgbl.convert_negatives` finds each edge's key by sorting all keys, so it holds the pickle's
keys and values whole. py-tgb's generator writes its dict in edge order: for each val/test edge, in the order the
edges are stored (by time), it sets ``dict[(src, dst, t)]``. A dict keeps a key where it was first set, so the keys
come in the order of each distinct edge's first appearance, and an edge given twice (same src, dst and t, so within
one run of equal times) has the key of its first appearance. :func:`stream_negatives` relies on that order:

1. the pickle is scanned (:func:`~generators.tgb.negpickle.scan_chunks`) into spill files, chunk by chunk: the keys,
   each entry's length, and the values of each chunk in a file of its own (the chunks differ in width);
2. the edges are walked in blocks that end where a run of equal times ends, beside the keys, whose times never
   decrease: a block's keys are those up to its last time. Within a block the distinct edges in order of first
   appearance must be the distinct keys in order of first appearance; each edge then takes the row of the LAST
   entry of its key (the value the dict keeps for a key the pickle holds twice). Where a block's edges and keys are
   the same rows and its times rise strictly (every key once, no edge twice), that is the identity, without a sort;
3. the values of those rows are copied into the ``negatives`` matrix, a block at a time, as wide as the longest
   entry an edge uses.

Anything else (an edge with no key, a key no edge uses, keys out of the edges' order or a time going back, an entry
an edge uses that is not integer node ids, a pickle the scan gives up on, edges not in time order) returns None
with the spill files removed: the caller then takes the whole path, which raises its errors or converts as before.
What is held at a time is one block of the stream (:data:`~generators.tgb.negpickle.BLOCK_BYTES`), one chunk of
the scan, and one block of edges with its keys and values (:data:`GATHER_BYTES`); a single run of equal times is
held whole, however long (a block never splits one).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..spill import Column, ColumnWriter, DiskColumn, new_file
from .negpickle import BLOCK_BYTES, CHUNK_ROWS, Bounds, scan_chunks, too_large
from .release import Release

#: bytes of values one block of edges gathers (its keys' values and its rows of the matrix): fewer edges a block
#: for wide entries
GATHER_BYTES = 8 << 20
#: the fewest and the most edges a block holds (a run of equal times longer than that is held whole)
MIN_BLOCK_ROWS, MAX_BLOCK_ROWS = 1 << 10, 1 << 18
#: the most entries a block's keys may hold besides one per distinct edge (keys the pickle holds twice: a dict's
#: pickle has none, an edited one may); more leave the pickle to the whole path
REPEATS = 1 << 10


class _Unmatched(Exception):
    """The pickle is not py-tgb's dict in edge order for these edges: the caller takes the whole path."""


def stream_negatives(release: Release, member: str, bounds: Bounds | None, t: Column, src: Column, dst: Column,
                     spill: Path, *, block_rows: int | None = None, chunk_rows: int = CHUNK_ROWS,
                     block_bytes: int = BLOCK_BYTES) -> dict[str, Column] | None:
    """The queries of one split, one per edge (``t`` int64, ``src`` and ``dst`` int32, in stored order, read a
    block at a time), with the negatives of TGB's pickle ``member`` as spill columns in ``spill``: what
    ``convert_negatives(read_negatives(release, member, bounds), t, src, dst, member)`` gives, in bounded memory.

    Args:
        release: the opened release holding ``member``.
        member: the split's negatives pickle.
        bounds: what the pickle may hold (:func:`~generators.tgb.tgbl.negative_bounds`), or None for no bound.
        t, src, dst: the split's edges in time order.
        spill: an existing folder for the spill files (the scanned pickle while this runs, the two columns after).
        block_rows: edges a block holds (default: :data:`GATHER_BYTES` of the widest entry's values).
        chunk_rows: the most entries of one chunk of the scan (:func:`~generators.tgb.negpickle.scan_chunks`).
        block_bytes: bytes of the decompressed pickle read at a time.

    Returns:
        ``{"t": t, "src": src, "dst": dst, "negatives": int32 [n, q], "count": int32 [n]}``, the last two
        :class:`~generators.spill.DiskColumn` files in ``spill`` (the caller removes them); or None, every file
        this made removed, where the pickle is not py-tgb's dict in the edges' order (see the module's docstring).

    Raises:
        GenerationError: if ``member`` is larger than ``bounds`` allow (before anything is read), as
            :func:`~generators.tgb.tgbl.read_negatives` does.
    """
    size = release.size(member)
    if bounds is not None and size > bounds.stream_bytes:
        raise too_large(member, size, bounds)
    files = _SpillFiles(spill)
    try:
        scanned = _scanned(release, member, bounds, size, files, chunk_rows, block_bytes)
        block = block_rows or int(np.clip(GATHER_BYTES // (4 * max(scanned.widest, 1)), MIN_BLOCK_ROWS,
                                          MAX_BLOCK_ROWS))
        matched = _matched(t, src, dst, scanned, files, block)
        files.remove(scanned.keys.path, scanned.width.path)  # their disk space back before the matrix is written
        negatives = _gathered(matched, scanned, files)
    except _Unmatched:
        files.clear()
        return None
    except BaseException:
        files.clear()
        raise
    files.clear(keep=(negatives.path, matched.count.path))
    return {"t": t, "src": src, "dst": dst, "negatives": negatives, "count": matched.count}


class _SpillFiles:
    """The files one :func:`stream_negatives` makes in its spill folder, each with a name of its own."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.writers: list[ColumnWriter] = []

    def writer(self, what: str, dtype: type, tail: tuple[int, ...]) -> ColumnWriter:
        """A writer of a new file for ``what``."""
        writer = ColumnWriter(new_file(self.folder, f"negatives-{what}"), dtype, tail)
        self.writers.append(writer)
        return writer

    def remove(self, *paths: Path) -> None:
        """The files at ``paths`` removed."""
        self.clear(keep=tuple(writer.path for writer in self.writers if writer.path not in paths))

    def clear(self, keep: tuple[Path, ...] = ()) -> None:
        """Every file made removed but those in ``keep``."""
        for writer in self.writers:
            if writer.path not in keep:
                writer.close()
                writer.path.unlink(missing_ok=True)
        self.writers = [writer for writer in self.writers if writer.path in keep]


@dataclass
class _Scanned:
    """The pickle on disk: ``keys`` ``int64 [k, 3]`` (src, dst, t in the dict's order), ``width`` ``int64 [k]``,
    the values chunk by chunk (``values[i]`` holds rows ``starts[i]`` on, as wide as that chunk), the widest
    entry."""

    keys: DiskColumn
    width: DiskColumn
    values: list[DiskColumn]
    starts: list[int]
    widest: int

    def rows(self, first: int, stop: int, q: int) -> np.ndarray:
        """Values of rows ``first:stop`` as ``int32 [stop - first, q]`` (-1 past a chunk narrower than ``q``; a
        wider chunk's columns past ``q`` hold only -1 for the rows an edge uses)."""
        out = np.full((stop - first, q), -1, dtype=np.int32)
        at = first
        chunk = bisect_right(self.starts, at) - 1
        while at < stop:
            column, start = self.values[chunk], self.starts[chunk]
            end = min(stop, start + len(column))
            block = column[at - start:end - start]
            held = min(q, block.shape[1])
            out[at - first:end - first, :held] = block[:, :held]
            at, chunk = end, chunk + 1
        return out


class _DiskSink:
    """The scan's chunks written to spill files as they come (:class:`~generators.tgb.negpickle.Sink`)."""

    def __init__(self, files: _SpillFiles) -> None:
        self.files = files
        self.keys = files.writer("keys", np.int64, (3,))
        self.width = files.writer("width", np.int64, ())
        self.values: list[DiskColumn] = []
        self.starts: list[int] = []

    def __call__(self, keys: np.ndarray, values: np.ndarray, width: np.ndarray) -> None:
        if not len(keys):
            return
        self.starts.append(self.keys.rows)
        self.keys.append(keys)
        self.width.append(width)
        chunk = self.files.writer("values", np.int32, (values.shape[1],))
        chunk.append(values)
        self.values.append(chunk.finish())


def _scanned(release: Release, member: str, bounds: Bounds | None, size: int, files: _SpillFiles,
             chunk_rows: int, block_bytes: int) -> _Scanned:
    """The pickle scanned into spill files, in a progress stage in bytes as
    :func:`~generators.tgb.tgbl.read_negatives` shows it.

    Raises:
        _Unmatched: where the scan gives up.
    """
    sink = _DiskSink(files)
    with closing(release.progress(f"scanning TGB's negatives pickle {member}", size, "B")) as bar:
        with release.open(member) as stream:
            widest = scan_chunks(stream, sink, block_bytes, bar.update, bounds, size, chunk_rows)
    if widest is None:
        raise _Unmatched
    return _Scanned(sink.keys.finish(), sink.width.finish(), sink.values, sink.starts, widest)


@dataclass
class _Matched:
    """Each edge's row among the keys (``rows`` ``int64 [n]``), its entry's length (``count`` ``int32 [n]``), the
    blocks walked (first edge, past the last, first key row, past the last) and the longest entry used."""

    rows: DiskColumn
    count: DiskColumn
    blocks: list[tuple[int, int, int, int]]
    q: int


def _matched(t: Column, src: Column, dst: Column, scanned: _Scanned, files: _SpillFiles, block_rows: int
             ) -> _Matched:
    """The edges walked beside the keys, block by block (see the module's docstring).

    Raises:
        _Unmatched: for edges out of time order, keys out of the edges' order or not the edges' (one missing, one
            unused, more than :data:`REPEATS` repeats in a block), or an entry an edge uses that is not node ids.
    """
    rows_out, count_out = files.writer("rows", np.int64, ()), files.writer("count", np.int32, ())
    blocks: list[tuple[int, int, int, int]] = []
    taken, q = 0, 0  # keys walked so far, the longest entry used
    for first, edges in _edge_blocks(t, src, dst, block_rows):
        keys = _block_keys(scanned.keys, taken, int(edges[-1, 2]), len(edges) + REPEATS)
        rows = _block_rows(edges, keys)
        used = scanned.width[taken:taken + len(keys)][rows]
        if len(used) and int(used.min()) < 0:
            raise _Unmatched  # not integer node ids: the whole path names the row
        q = max(q, int(used.max()) if len(used) else 0)
        rows_out.append(rows + taken)
        count_out.append(used)
        blocks.append((first, first + len(edges), taken, taken + len(keys)))
        taken += len(keys)
    if taken != len(scanned.keys):
        raise _Unmatched  # keys after the last edge's time: no edge uses them
    return _Matched(rows_out.finish(), count_out.finish(), blocks, q)


def _edge_blocks(t: Column, src: Column, dst: Column, rows: int) -> Iterator[tuple[int, np.ndarray]]:
    """The edges as ``(first row, int64 [m, 3] (src, dst, t))`` blocks of about ``rows``, each ending where a run of
    equal times ends (a run longer than ``rows`` is one block).

    Raises:
        _Unmatched: if the times decrease somewhere.
    """
    total, first, last = len(t), 0, None
    while first < total:
        stop = min(total, first + rows)
        times = np.asarray(t[first:stop], dtype=np.int64)
        run = int(times[-1])
        if stop < total and int(t[stop:stop + 1][0]) == run:  # the block's last run goes on past it
            cut = int(np.searchsorted(times, run, side="left"))
            if cut > 0:
                times, stop = times[:cut], first + cut
            else:  # the block is one run: read on to its end
                pieces = [times]
                while stop < total and int(t[stop:stop + 1][0]) == run:
                    more = np.asarray(t[stop:stop + rows], dtype=np.int64)
                    within = int(np.searchsorted(more, run, side="right"))
                    pieces.append(more[:within])
                    stop += within
                times = np.concatenate(pieces)
        if np.any(times[1:] < times[:-1]) or last is not None and times[0] < last:
            raise _Unmatched  # not in time order: the whole path's sort does not care
        last = int(times[-1])
        yield first, np.stack([np.asarray(src[first:stop], dtype=np.int64),
                               np.asarray(dst[first:stop], dtype=np.int64), times], axis=1)
        first = stop


def _block_keys(keys: DiskColumn, taken: int, last: int, most: int) -> np.ndarray:
    """The keys from row ``taken`` whose times are at most ``last`` (a block's), at most ``most`` of them.

    Raises:
        _Unmatched: if the keys' times decrease, or more than ``most`` keys have times up to ``last``.
    """
    piece = keys[taken:taken + most + 1]
    times = piece[:, 2]
    if np.any(times[1:] < times[:-1]):
        raise _Unmatched  # not the order py-tgb writes
    cut = int(np.searchsorted(times, last, side="right"))
    if cut == len(piece) and taken + cut < len(keys):
        raise _Unmatched  # a block's repeats beyond the slack: the whole path reads them in one
    return piece[:cut]


def _block_rows(edges: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Each edge's row among ``keys`` (both ``[*, 3]``): the last entry of its key.

    Raises:
        _Unmatched: unless the distinct edges and the distinct keys, each in order of first appearance, are equal.
    """
    times = edges[:, 2]
    if len(keys) == len(edges) and bool(np.all(times[1:] > times[:-1])) and np.array_equal(keys, edges):
        return np.arange(len(edges), dtype=np.int64)
    edge_rank, edge_first, _ = _groups(edges)
    _, key_first, key_last = _groups(keys)
    if len(edge_first) != len(key_first) or not np.array_equal(edges[edge_first], keys[key_first]):
        raise _Unmatched
    return key_last[edge_rank]


def _groups(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct rows of ``[r, 3]`` ranked by first appearance: each row's rank, and each rank's first and last
    row."""
    order = np.lexsort((rows[:, 0], rows[:, 1], rows[:, 2]))  # stable: equal rows keep their order
    ordered = rows[order]
    new = np.ones(len(rows), dtype=bool)
    new[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
    starts = np.flatnonzero(new)
    first, last = order[starts], order[np.append(starts[1:], len(rows)) - 1]
    by_first = np.argsort(first, kind="stable")
    rank_of_group = np.empty(len(starts), dtype=np.int64)
    rank_of_group[by_first] = np.arange(len(starts))
    rank = np.empty(len(rows), dtype=np.int64)
    rank[order] = rank_of_group[np.cumsum(new) - 1]
    return rank, first[by_first].astype(np.int64), last[by_first].astype(np.int64)


def _gathered(matched: _Matched, scanned: _Scanned, files: _SpillFiles) -> DiskColumn:
    """The values of each edge's row, ``int32 [n, q]``, written a block at a time."""
    out = files.writer("negatives", np.int32, (matched.q,))
    for first, stop, key_first, key_stop in matched.blocks:
        values = scanned.rows(key_first, key_stop, matched.q)
        out.append(values[matched.rows[first:stop] - key_first])
    return out.finish()
