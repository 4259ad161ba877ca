"""TGB's negatives matched to a split's edges in bounded memory (``generators/tgb/negstream.py``): what the whole
path (``convert_negatives(read_negatives(...))``) gives, for pickles as py-tgb writes them (``pickle.dump`` of the
dict it fills edge by edge) and the scale bench's encoder writes them, wherever the scan's chunks and the walk's
blocks cut them; None, with the spill folder left empty, for anything not in the edges' order; and the scan's
chunks handed to a sink (``negpickle.scan_chunks``) are what ``scan`` joins."""

from __future__ import annotations

import io
import pickle
import pickletools
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from generators.tgb import negpickle, negstream, tgbl
from generators.tgb.release import Release
from generators.spill import ColumnWriter, DiskColumn
from scripts import _tgb_scale
from tgbhub.errors import GenerationError

MEMBER = "tgbl-x_val_ns.pkl"
Edges = tuple[np.ndarray, np.ndarray, np.ndarray]  # t int64, src int32, dst int32


def _release(tmp_path: Path, raw: bytes) -> Release:
    folder = tmp_path / "release"
    folder.mkdir(exist_ok=True)
    (folder / MEMBER).write_bytes(raw)
    return Release(folder, {"val_ns": MEMBER})


def _spill(tmp_path: Path) -> Path:
    folder = tmp_path / "spill"
    folder.mkdir(exist_ok=True)
    return folder


def _whole(release: Release, edges: Edges, bounds: negpickle.Bounds | None = None) -> dict[str, np.ndarray]:
    t, src, dst = edges
    return tgbl.convert_negatives(tgbl.read_negatives(release, MEMBER, bounds), t, src, dst, MEMBER)


def _streamed(release: Release, edges: Edges, spill: Path, bounds: negpickle.Bounds | None = None,
              **knobs: Any) -> dict[str, Any] | None:
    t, src, dst = edges
    return negstream.stream_negatives(release, MEMBER, bounds, t, src, dst, spill, **knobs)


def _assert_same(got: dict[str, Any] | None, expected: dict[str, np.ndarray]) -> None:
    assert got is not None, "streamed nothing where the whole path converts"
    assert got.keys() == expected.keys()
    for name, column in expected.items():
        value = got[name][0:len(got[name])]
        assert value.dtype == column.dtype and value.shape == column.shape, (name, value.shape, column.shape)
        np.testing.assert_array_equal(value, column, err_msg=name)
    assert isinstance(got["negatives"], DiskColumn) and isinstance(got["count"], DiskColumn)


def _edges(rng: np.random.Generator, n: int) -> Edges:
    """Edges in time order with runs of equal times, and edges given twice within a run."""
    t = np.cumsum(rng.integers(0, 3, n)).astype(np.int64) + 100
    src = rng.integers(0, 4, n).astype(np.int32)
    dst = rng.integers(4, 7, n).astype(np.int32)
    return t, src, dst


def _value(rng: np.random.Generator, q: int) -> np.ndarray:
    """A ragged entry: int64 mostly, whole float64 sometimes (a source with no history, as py-tgb writes it)."""
    value = rng.integers(0, 1000, int(rng.integers(0, q + 1)))
    return value.astype(np.float64) if rng.random() < 0.2 else value


def _py_tgb_dict(rng: np.random.Generator, edges: Edges, q: int, floats: bool) -> dict[Any, Any]:
    """py-tgb's generator: one entry set per edge in edge order (an edge given twice sets its key again)."""
    table: dict[Any, Any] = {}
    for t, s, d in zip(*edges, strict=True):
        kind = np.float64 if floats and rng.random() < 0.3 else np.int64
        table[(kind(s), kind(d), kind(t))] = _value(rng, q)
    return table


#: int64 key parts no test's edge has, patched afterwards into a key the pickle then holds twice
_PLACEHOLDER = 7_000_000_000


def _with_repeats(rng: np.random.Generator, table: dict[Any, Any], repeats: int, edges: Edges) -> bytes:
    """``table`` pickled with ``repeats`` more entries whose keys repeat one of the same time set before them
    (each inserted right after some entry of that time), as a pickle holding a key twice reads."""
    items = list(table.items())
    times = np.array([int(key[2]) for key, _ in items], dtype=np.int64)
    patches: list[tuple[bytes, tuple[int, ...]]] = []
    for n in range(repeats):
        at = int(rng.integers(0, len(items)))
        same_time = [i for i in range(at + 1) if times[i] == times[at] and int(items[i][0][0]) < _PLACEHOLDER]
        key = tuple(int(part) for part in items[int(rng.choice(same_time))][0])
        placeholder = tuple(np.int64(_PLACEHOLDER + 3 * n + part) for part in range(3))
        patches.append((b"".join(part.tobytes() for part in placeholder), key))
        items.insert(at + 1, (placeholder, _value(rng, 4)))
        times = np.insert(times, at + 1, times[at])
    raw = bytearray(pickle.dumps(dict(items), protocol=5))
    data = {arg: (pos or 0) for op, arg, pos in pickletools.genops(bytes(raw)) if op.name == "SHORT_BINBYTES"}
    for placeholder_bytes, key in patches:
        for part in range(3):
            at = data[placeholder_bytes[8 * part:8 * part + 8]] + 2
            raw[at:at + 8] = np.int64(key[part]).tobytes()
    return bytes(raw)


@pytest.mark.parametrize("seed", range(24))
def test_streamed_is_the_whole_paths_conversion(seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Random splits with runs of equal times, edges given twice, ragged entries, float keys, keys the pickle holds
    twice, cut into small chunks of the scan, blocks of the stream and blocks of the walk."""
    rng = np.random.default_rng(seed)
    edges = _edges(rng, int(rng.integers(1, 120)))
    table = _py_tgb_dict(rng, edges, q=int(rng.integers(0, 9)), floats=seed % 3 == 0)
    raw = _with_repeats(rng, table, int(rng.integers(0, 4)), edges) if seed % 2 else pickle.dumps(table, protocol=5)
    if seed % 4 == 1:  # chunks handed over before they widen
        monkeypatch.setattr(negpickle, "SINK_CHUNK_BYTES", int(rng.integers(4, 64)))
    release = _release(tmp_path, raw)
    expected = _whole(release, edges)
    got = _streamed(release, edges, _spill(tmp_path), block_rows=int(rng.integers(1, 12)),
                    chunk_rows=int(rng.integers(1, 20)), block_bytes=int(rng.integers(7, 300)))
    _assert_same(got, expected)
    assert got is not None and sorted(path.name for path in _spill(tmp_path).iterdir()) == sorted(
        [got["negatives"].path.name, got["count"].path.name]), "the scan's files were left behind"


def test_a_key_given_twice_gives_every_edge_its_last_value(tmp_path: Path) -> None:
    """The pickle holds (1, 2, 10) twice: its edges (one of them given twice) take the second value, as the dict
    pickle builds keeps it."""
    t = np.array([10, 10, 10, 11], np.int64)
    src, dst = np.array([1, 3, 1, 1], np.int32), np.array([2, 4, 2, 2], np.int32)
    table = {(np.int64(1), np.int64(2), np.int64(10)): np.array([5, 6]),
             (np.int64(3), np.int64(4), np.int64(10)): np.array([7]),
             (np.int64(_PLACEHOLDER), np.int64(_PLACEHOLDER + 1), np.int64(_PLACEHOLDER + 2)): np.array([8, 9, 10]),
             (np.int64(1), np.int64(2), np.int64(11)): np.array([11])}
    raw = bytearray(pickle.dumps(table, protocol=5))
    keys = [(pos or 0) + 2 for op, _, pos in pickletools.genops(bytes(raw)) if op.name == "SHORT_BINBYTES"]
    for part in range(3):
        raw[keys[6 + part]:keys[6 + part] + 8] = raw[keys[part]:keys[part] + 8]
    release = _release(tmp_path, bytes(raw))
    got = _streamed(release, (t, src, dst), _spill(tmp_path))
    assert got is not None
    assert got["negatives"][0:4].tolist() == [[8, 9, 10], [7, -1, -1], [8, 9, 10], [11, -1, -1]]
    _assert_same(got, _whole(release, (t, src, dst)))


def test_the_scale_benchs_pickle_in_bounded_memory(tmp_path: Path) -> None:
    """A pickle of 1M entries (the scale bench's encoder) streamed with small blocks: the allocations traced stay
    a small fraction of the whole path's keys and matrix, and the values are the pickle's."""
    n, q = 1 << 20, 2
    rng = np.random.default_rng(5)
    t = np.cumsum(rng.integers(1, 40, n)).astype(np.int64)
    src, dst = rng.integers(0, 1000, n), rng.integers(1000, 2000, n)
    rows = rng.integers(0, 2000, (n, q))
    folder = tmp_path / "release"
    folder.mkdir()
    _tgb_scale.write_pickled_negatives(folder / MEMBER, (src, dst, t), rows)
    columns = []
    for name, column, dtype in (("t", t, np.int64), ("src", src, np.int32), ("dst", dst, np.int32)):
        writer = ColumnWriter(tmp_path / f"{name}.raw", dtype)
        writer.append(column)
        columns.append(writer.finish())
    del t, src, dst
    release = Release(folder, {"val_ns": MEMBER})
    spill = _spill(tmp_path)
    negpickle.scan(io.BytesIO(pickle.dumps({(np.int64(1), np.int64(2), np.int64(3)): np.arange(2)}, protocol=5)))
    tracemalloc.start()  # after the scan's compiled code is loaded: compiling allocates, and is no import's size
    try:
        got = negstream.stream_negatives(release, MEMBER, negpickle.Bounds(n, q, "the test's"), columns[0],
                                         columns[1], columns[2], spill, block_rows=1 << 14, chunk_rows=1 << 14,
                                         block_bytes=1 << 20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    whole = n * (3 * 8 + q * 4 + 8)  # the scan's keys, matrix and widths, before the sort of the keys
    assert got is not None and peak < 8 << 20 < whole // 4, f"{peak:,} bytes traced, the whole path holds {whole:,}"
    np.testing.assert_array_equal(got["negatives"][0:n], rows)
    assert got["count"][0:n].tolist() == [q] * n


def _cases(rng: np.random.Generator) -> tuple[Edges, dict[Any, Any]]:
    edges = _edges(rng, 40)
    return edges, _py_tgb_dict(rng, edges, q=3, floats=False)


def _shuffled(table: dict[Any, Any]) -> dict[Any, Any]:
    items = list(table.items())
    items[3], items[7] = items[7], items[3]
    return dict(items)


def _missing(table: dict[Any, Any]) -> dict[Any, Any]:
    return dict(list(table.items())[:-1])


def _extra(table: dict[Any, Any]) -> dict[Any, Any]:
    return {**table, (np.int64(9), np.int64(9), np.int64(1 << 40)): np.array([1])}


def _unused_in_the_middle(table: dict[Any, Any]) -> dict[Any, Any]:
    items = list(table.items())
    (s, d, t), _ = items[10]
    items.insert(11, ((np.int64(99), np.int64(99), t), np.array([1])))
    return dict(items)


def _not_node_ids(table: dict[Any, Any]) -> dict[Any, Any]:
    first = next(iter(table))
    return {**table, first: np.array([1.5, 2.0])}


def _foreign(table: dict[Any, Any]) -> dict[Any, Any]:
    return {key: list(value) for key, value in table.items()}  # lists: the scan gives up, unpickling reads them


@pytest.mark.parametrize("change, whole_raises", [
    (_shuffled, False), (_missing, True), (_extra, False), (_unused_in_the_middle, False), (_not_node_ids, True),
    (_foreign, False)], ids=["shuffled", "missing-key", "extra-key", "unused-key", "not-node-ids", "foreign"])
def test_anything_else_leaves_it_to_the_whole_path(change: Any, whole_raises: bool, tmp_path: Path) -> None:
    """Keys out of the edges' order, an edge with no key, a key no edge uses, an entry that is not node ids, a pickle
    the scan gives up on: None and an empty spill folder; the whole path converts or raises as before."""
    edges, table = _cases(np.random.default_rng(1))
    release = _release(tmp_path, pickle.dumps(change(table), protocol=5))
    spill = _spill(tmp_path)
    assert _streamed(release, edges, spill, block_rows=8, chunk_rows=5) is None
    assert not list(spill.iterdir())
    if whole_raises:
        with pytest.raises(GenerationError):
            _whole(release, edges)
    else:
        _whole(release, edges)


def test_edges_out_of_time_order_are_left_to_the_whole_path(tmp_path: Path) -> None:
    (t, src, dst), table = _cases(np.random.default_rng(2))
    release = _release(tmp_path, pickle.dumps(table, protocol=5))
    reversed_edges = (t[::-1].copy(), src[::-1].copy(), dst[::-1].copy())
    assert _streamed(release, reversed_edges, _spill(tmp_path), block_rows=4) is None
    assert not list(_spill(tmp_path).iterdir())


def test_the_bounds_and_the_progress_are_read_negatives(tmp_path: Path) -> None:
    """A member larger than the bounds allow is refused with read_negatives' error before it is read; one the scan
    finds beyond them is left to the whole path, which refuses it; the scan shows the same stage in bytes."""
    edges, table = _cases(np.random.default_rng(3))
    tiny = negpickle.Bounds(0, 0, "the test's bound")
    release = _release(tmp_path, b"\x80\x05" + b"N" * (2 << 20) + b".")
    with pytest.raises(GenerationError) as streamed:
        _streamed(release, edges, _spill(tmp_path), tiny)
    with pytest.raises(GenerationError) as whole:
        _whole(release, edges, tiny)
    assert str(streamed.value) == str(whole.value) and "bytes once decompressed" in str(streamed.value)
    raw = pickle.dumps(table, protocol=5)
    release = _release(tmp_path, raw)
    narrow = negpickle.Bounds(len(table), 2, "the test's bound")
    assert _streamed(release, edges, _spill(tmp_path), narrow) is None
    with pytest.raises(GenerationError, match="an entry holds 3 negatives"):
        _whole(release, edges, narrow)
    stages: list[tuple[str, float | None, str, float]] = []

    class Bar:
        def __init__(self, desc: str, total: float | None, unit: str) -> None:
            stages.append((desc, total, unit, 0))

        def update(self, n: float = 1) -> None:
            desc, total, unit, done = stages[-1]
            stages[-1] = (desc, total, unit, done + n)

        def set_postfix_str(self, s: str = "") -> None:
            pass

        def close(self) -> None:
            pass

    release.progress = Bar
    assert _streamed(release, edges, _spill(tmp_path)) is not None
    assert stages == [(f"scanning TGB's negatives pickle {MEMBER}", len(raw), "B", len(raw))]


def test_the_scans_chunks_are_what_scan_joins() -> None:
    """scan_chunks hands over, in order, the rows scan returns; chunks narrower than the widest padded with -1."""
    rng = np.random.default_rng(4)
    edges = _edges(rng, 300)
    raw = pickle.dumps(_py_tgb_dict(rng, edges, q=12, floats=True), protocol=5)
    whole = negpickle.scan(io.BytesIO(raw), 64)
    chunks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    widest = negpickle.scan_chunks(io.BytesIO(raw), lambda k, v, w: chunks.append((k.copy(), v.copy(), w.copy())),
                                   64, chunk_rows=16)
    assert whole is not None and widest == whole.values.shape[1] and len(chunks) > 3
    assert max(len(keys) for keys, _, _ in chunks) <= 16
    padded = [np.pad(v[:, :widest], ((0, 0), (0, widest - min(widest, v.shape[1]))), constant_values=-1)
              for _, v, _ in chunks]
    np.testing.assert_array_equal(np.concatenate([k for k, _, _ in chunks]), whole.keys)
    np.testing.assert_array_equal(np.concatenate(padded), whole.values)
    np.testing.assert_array_equal(np.concatenate([w for _, _, w in chunks]), whole.width)
    assert negpickle.scan_chunks(io.BytesIO(pickle.dumps([1, 2], protocol=5)), lambda *a: None) is None


def test_a_run_of_equal_times_longer_than_a_block(tmp_path: Path) -> None:
    """A block never splits a run of equal times: one longer than the block (edges given twice in it) is read on to
    its end and matched whole."""
    rng = np.random.default_rng(6)
    t = np.concatenate([[5, 6], np.full(50, 7), [8, 8, 9]]).astype(np.int64)
    src, dst = rng.integers(0, 3, len(t)).astype(np.int32), rng.integers(3, 6, len(t)).astype(np.int32)
    table = _py_tgb_dict(rng, (t, src, dst), q=4, floats=False)
    release = _release(tmp_path, pickle.dumps(table, protocol=5))
    got = _streamed(release, (t, src, dst), _spill(tmp_path), block_rows=4, chunk_rows=3)
    _assert_same(got, _whole(release, (t, src, dst)))
