"""The scan of TGB's negatives pickles (``generators/tgb/negpickle.py``) gives what the dict path gives
(``_keys`` + ``_stacked_values`` of the unpickled dict) for pickles written by ``pickle.dumps`` itself (protocols 4
and 5) and by the scale bench's encoder, wherever the blocks cut the stream; and returns None (the caller unpickles)
for anything else, so what is refused stays refused with the same error."""

from __future__ import annotations

import io
import pickle
import pickletools
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from generators.tgb import catalogue, negpickle, tgbl
from generators.tgb.release import Release, load_pickle
from scripts import _tgb_scale
from tests import tgb_formats as formats
from tgbhub.errors import GenerationError

i8 = np.int64


def _dict_path(table: dict[Any, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    keys = tgbl._keys(table, "m.pkl")
    values, width = tgbl._stacked_values(dict(table), "m.pkl")
    return keys, values, width


def _assert_same(raw: bytes, block_bytes: int = negpickle.BLOCK_BYTES, stream: Any = None) -> None:
    scanned = negpickle.scan(stream or io.BytesIO(raw), block_bytes)
    assert isinstance(scanned, negpickle.ScannedNegatives), "the scan fell back on a pickle py-tgb could write"
    keys, values, width = _dict_path(pickle.loads(raw))
    for got, expected in zip(scanned, (keys, values, width), strict=True):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)


def _tgb_like(n: int, q: int = 5, seed: int = 0) -> dict[Any, Any]:
    rng = np.random.default_rng(seed)
    return {(i8(s), i8(d), i8(t)): rng.integers(0, 1000, q) for s, d, t in zip(
        rng.integers(0, 50, n), rng.integers(50, 100, n), np.arange(n) * 3, strict=True)}


def _mixed() -> dict[Any, Any]:
    """Entries of different lengths and dtypes: empty, 1-byte data (CPython shares those bytes objects), a float
    entry that is whole and one that is not (length -1), a strided array (protocol 5 pickles it as protocol 4)."""
    return {(i8(1), i8(2), i8(3)): np.array([4, 5, 6]), (i8(1), i8(2), i8(4)): np.array([7]),
            (i8(2), i8(3), i8(5)): np.array([], dtype=np.int64), (i8(2), i8(3), i8(6)): np.array([9], dtype=np.int8),
            (i8(3), i8(4), i8(7)): np.array([1.0, 2.0]), (i8(3), i8(4), i8(8)): np.array([1.0, 2.5, 3.0]),
            (i8(4), i8(5), i8(9)): np.arange(20)[::2], (np.int32(5), np.uint16(6), i8(10)): np.array(
                [1, 2], dtype=np.uint16), (i8(6), i8(7), i8(11)): np.array([3.0, np.nan], dtype=np.float32),
            (i8(7), i8(8), i8(12)): np.array([], dtype=np.int64), (i8(8), i8(9), i8(13)): np.array([9], np.int8)}


@pytest.mark.parametrize("protocol", [4, 5])
@pytest.mark.parametrize("table", [
    _tgb_like(50), _mixed(), {}, _tgb_like(1000, q=3), _tgb_like(1001, q=3), _tgb_like(1, q=2),
    {(np.float64(1.0), np.float64(2.0), np.float64(3.0)): np.array([1, 2]),
     (np.float64(4.0), np.float64(5.0), np.float64(6.5)): np.array([3, 4])},  # a float first key: 6.5 -> -1s
    {(i8(1), i8(2), i8(3)): np.array([1, 2]), (np.float64(4.0), i8(5), np.float64(6.5)): np.array([3, 4])},
], ids=["tgb", "mixed", "empty", "1000", "1001", "one", "float-keys", "int-first-then-float"])
def test_the_scan_reads_what_unpickling_reads(table: dict[Any, Any], protocol: int) -> None:
    _assert_same(pickle.dumps(table, protocol=protocol))


class _Cut(io.RawIOBase):
    """``raw`` read as two pieces cut at ``cut``, whatever size is asked for."""

    def __init__(self, raw: bytes, cut: int) -> None:
        self.pieces = [raw[:cut], raw[cut:]]

    def read(self, size: int = -1) -> bytes:
        return self.pieces.pop(0) if self.pieces else b""


@pytest.mark.parametrize("protocol", [4, 5])
def test_blocks_cut_anywhere(protocol: int) -> None:
    raw = pickle.dumps(_mixed(), protocol=protocol)
    for cut in range(1, len(raw)):
        _assert_same(raw, stream=_Cut(raw, cut))
    for block in (1, 2, 3, 7, 64):
        _assert_same(raw, block)


def test_the_scale_benchs_encoder(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    n = 2500  # three batches of 1,000
    keys = (rng.integers(0, 90, n), rng.integers(90, 200, n), np.arange(n) * 7)
    _tgb_scale.write_pickled_negatives(tmp_path / "val.pkl", keys, rng.integers(0, 200, (n, 20)))
    raw = (tmp_path / "val.pkl").read_bytes()
    _assert_same(raw)
    _assert_same(raw, 4099)


def test_a_zip_member_is_read_in_pieces_into_one_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A zip member's stream is asked for READ_BYTES a call, filling one buffer in place: what the scan allocates
    (traced) stays within 1.5 blocks of the stream, where asking the member for whole blocks holds its compressed
    input and output beside them (about 3 blocks); the rows handed over are the pickle's."""
    monkeypatch.setattr(negpickle, "READ_BYTES", 64 << 10)
    n, q, block = 1 << 14, 20, 2 << 20
    rng = np.random.default_rng(7)
    columns = (rng.integers(0, 1000, n), rng.integers(1000, 2000, n), np.arange(n) * 3)
    rows = rng.integers(0, 2000, (n, q))
    _tgb_scale.write_pickled_negatives(tmp_path / "val.pkl", columns, rows)
    raw = (tmp_path / "val.pkl").read_bytes()
    assert len(raw) > block
    release, expected = _member(tmp_path, raw), np.stack(columns, axis=1)
    seen = [0]

    def sink(keys: np.ndarray, values: np.ndarray, width: np.ndarray) -> None:
        lo, hi = seen[0], seen[0] + len(keys)
        assert np.array_equal(keys, expected[lo:hi]) and np.array_equal(values, rows[lo:hi])
        assert bool(np.all(width == q))
        seen[0] = hi

    negpickle.scan(io.BytesIO(pickle.dumps(_tgb_like(1), protocol=5)))  # the kernels loaded before tracing
    tracemalloc.start()
    try:
        with release.open("tgbl-x_val_ns.pkl") as stream:
            widest = negpickle.scan_chunks(stream, sink, block, bounds=negpickle.Bounds(n, q, "the test's"),
                                           size=len(raw), chunk_rows=1 << 10)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        release.close()
    assert widest == q and seen[0] == n
    assert peak < 1.5 * block, f"{peak:,} bytes traced for blocks of {block:,}"


def _member(tmp_path: Path, raw: bytes) -> Release:
    path = tmp_path / "release.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("tgbl-x_val_ns.pkl", raw)
    return Release(path, {"val_ns": "tgbl-x_val_ns.pkl"})


class _Foreign:
    pass


@pytest.mark.parametrize("table", [
    {(i8(1), i8(2), i8(3)): [4, 5]},  # a list value
    {(i8(1), i8(2)): np.array([4, 5])},  # a 2-tuple key
    {(1, 2, 3): np.array([4, 5])},  # Python int keys
    {(i8(1), i8(2), i8(3)): np.array([4, 5], dtype=">i8")},  # big-endian
    {(i8(1), i8(2), i8(3)): np.array([[4, 5]])},  # not flat: the dict path's error
    {(i8(1), i8(2), i8(3)): np.array([True, False])},  # bool: the dict path's error
    {(i8(1), i8(2), i8(3)): np.array([1 << 40])},  # beyond int32: left to the dict path
], ids=["list", "pair-key", "int-keys", "big-endian", "2d", "bool", "int64-big"])
@pytest.mark.parametrize("protocol", [3, 5])  # protocol 3 is the pattern with BINPUT and no STACK_GLOBAL
def test_anything_else_falls_back_to_unpickling(table: dict[Any, Any], protocol: int, tmp_path: Path) -> None:
    raw = pickle.dumps(table, protocol=protocol)
    assert negpickle.scan(io.BytesIO(raw)) is None
    release = _member(tmp_path, raw)
    try:
        read = tgbl.read_negatives(release, "tgbl-x_val_ns.pkl")
    finally:
        release.close()
    assert isinstance(read, dict) and read.keys() == table.keys()  # unpickled: the dict path decides, as before


@pytest.mark.parametrize("raw, said", [
    (pickle.dumps({(i8(1), i8(2), i8(3)): np.array([4]), (i8(5), i8(6), i8(7)): _Foreign()}, protocol=5),
     "asks for tests.test_negpickle._Foreign"),
    (pickle.dumps(_tgb_like(20), protocol=5)[:-40], "not a readable pickle"),
], ids=["foreign-class", "truncated"])
def test_a_foreign_class_and_a_truncated_pickle_are_refused_as_before(raw: bytes, said: str, tmp_path: Path) -> None:
    with pytest.raises(GenerationError) as expected:
        load_pickle(raw, "tgbl-x_val_ns.pkl")
    assert negpickle.scan(io.BytesIO(raw)) is None
    release = _member(tmp_path, raw)
    try:
        with pytest.raises(GenerationError) as raised:
            tgbl.read_negatives(release, "tgbl-x_val_ns.pkl")
    finally:
        release.close()
    assert str(raised.value) == str(expected.value) and said in str(raised.value)


def test_an_import_scans_py_tgbs_pickles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tgbl release in TGB's exact format converts without unpickling, to the files the dict path gives."""
    files = formats.write_tgbl(tmp_path / "files", "tgbl-wiki", n_edges=1500, seed=4)
    zipped = formats.zip_dataset(files, tmp_path / "zips")
    item = catalogue.entry("tgbl-wiki")

    def converted() -> dict[str, dict[str, np.ndarray]]:
        opened = Release(zipped, dict(item.files))
        try:
            return tgbl.convert(item, opened)[0]
        finally:
            opened.close()

    def refuse(*args: Any) -> None:
        raise AssertionError("unpickled a pickle py-tgb wrote")

    monkeypatch.setattr(tgbl, "load_pickle", refuse)
    scanned = converted()
    monkeypatch.setattr(tgbl, "load_pickle", load_pickle)
    monkeypatch.setattr(tgbl, "scan", lambda *args, **kwargs: None)
    unpickled = converted()
    assert scanned.keys() == unpickled.keys()
    for file in scanned:
        for column in scanned[file]:
            np.testing.assert_array_equal(scanned[file][column], unpickled[file][column])
            assert scanned[file][column].dtype == unpickled[file][column].dtype


def _read_and_convert(tmp_path: Path, raw: bytes, edges: list[tuple[int, int, int]],
                      bounds: negpickle.Bounds | None = None) -> dict[str, np.ndarray]:
    """The import's reading of ``raw`` as a release member, converted for ``edges`` (src, dst, t)."""
    release = _member(tmp_path, raw)
    try:
        table = tgbl.read_negatives(release, "tgbl-x_val_ns.pkl", bounds)
    finally:
        release.close()
    src, dst, t = (np.array(column, dtype=np.int64) for column in zip(*edges, strict=True))
    return tgbl.convert_negatives(table, t, src, dst, "tgbl-x_val_ns.pkl")


def test_a_key_given_twice_gives_its_last_value_as_pickle_does(tmp_path: Path) -> None:
    """The dict pickle builds keeps the last value of a key given twice (in the first one's place); the scan reads
    both entries and the conversion takes the last."""
    table = {(i8(1), i8(2), i8(3)): np.array([7, 8]), (i8(4), i8(5), i8(6)): np.array([9]),
             (i8(9), i8(9), i8(9)): np.array([10, 11, 12])}
    raw = bytearray(pickle.dumps(table, protocol=5))
    keys = [(pos or 0) + 2 for op, arg, pos in pickletools.genops(bytes(raw)) if op.name == "SHORT_BINBYTES"]
    for part in range(3):  # the third key made the first's
        raw[keys[6 + part]:keys[6 + part] + 8] = raw[keys[part]:keys[part] + 8]
    loaded = pickle.loads(bytes(raw))
    assert list(loaded) == [(1, 2, 3), (4, 5, 6)] and list(loaded[(1, 2, 3)]) == [10, 11, 12]
    scanned = negpickle.scan(io.BytesIO(bytes(raw)))
    assert scanned is not None and len(scanned.keys) == 3
    edges = [(1, 2, 3), (4, 5, 6), (1, 2, 3)]
    got = _read_and_convert(tmp_path, bytes(raw), edges)
    src, dst, t = (np.array(column, dtype=np.int64) for column in zip(*edges, strict=True))
    expected = tgbl.convert_negatives(loaded, t, src, dst, "tgbl-x_val_ns.pkl")
    for column in expected:
        np.testing.assert_array_equal(got[column], expected[column])
    assert got["negatives"].tolist() == [[10, 11, 12], [9, -1, -1], [10, 11, 12]]


@pytest.mark.parametrize("table, said", [
    ({(i8(1), i8(2), i8(3)): np.array([(1 << 64) - 1], dtype=np.uint64)}, "beyond the int32 node ids"),
    ({(i8(1), i8(2), i8(3)): np.array([1 << 40, 5])}, "beyond the int32 node ids"),
    ({(i8(1), i8(2), i8(3)): np.array([np.inf, 5.0])}, "the value inf"),
    ({(i8(1), i8(2), i8(3)): np.array([1 + 2j])}, "complex128 values"),
    ({(i8(1), i8(2), i8(3)): np.array([1, 2], dtype="M8[D]")}, "the numpy dtype 'M8'"),
    ({(i8(1), i8(2), i8(3)): np.zeros(2, dtype="V8")}, "the numpy dtype 'V8'"),
    ({(np.float64(np.nan), i8(2), i8(3)): np.array([1])}, "holds nan"),
    ({(np.uint64((1 << 64) - 1), i8(2), i8(3)): np.array([1])}, "beyond int64"),
    ({(np.bool_(True), i8(2), i8(3)): np.array([1])}, "holds a bool"),
    ({(np.complex128(1), i8(2), i8(3)): np.array([1])}, "holds a complex128"),
], ids=["uint64-max", "int64-big", "inf-value", "complex", "datetime64", "void", "nan-key", "uint64-key", "bool-key",
        "complex-key"])
def test_what_no_node_id_is_refused_in_one_line(table: dict[Any, Any], said: str, tmp_path: Path) -> None:
    """Values and keys numpy would cast silently (a uint64 wraps to -1, a datetime becomes a number) or fail on
    with a raw ValueError or OverflowError are refused with one GenerationError line naming the value."""
    with pytest.raises(GenerationError) as raised:
        _read_and_convert(tmp_path, pickle.dumps(table, protocol=5), [(1, 2, 3)])
    assert said in str(raised.value) and "\n" not in str(raised.value), str(raised.value)


def test_the_bounds_refuse_more_entries_and_wider_ones(tmp_path: Path) -> None:
    """Beyond its split's edges or the width bound, a pickle is refused, by the scan (which gives up before it
    allocates) and by the unpickled dict's check alike; a member larger than the bounds allow, before it is read."""
    raw = pickle.dumps(_tgb_like(20, q=5), protocol=5)
    few = negpickle.Bounds(19, 5, "the test's bound")
    narrow = negpickle.Bounds(20, 4, "the test's bound")
    assert negpickle.scan(io.BytesIO(raw), bounds=few) is None
    assert negpickle.scan(io.BytesIO(raw), bounds=narrow) is None
    assert negpickle.scan(io.BytesIO(raw), bounds=negpickle.Bounds(20, 5, "the test's bound")) is not None
    for bounds, said in ((few, "20 entries, more than the 19 edges"), (narrow, "an entry holds 5 negatives")):
        release = _member(tmp_path, raw)
        try:
            with pytest.raises(GenerationError, match=said):
                tgbl.read_negatives(release, "tgbl-x_val_ns.pkl", bounds)
            with pytest.raises(GenerationError, match=said):  # the dict path's check
                tgbl._check_bounds(load_pickle(raw, "tgbl-x_val_ns.pkl"), "tgbl-x_val_ns.pkl", bounds)
        finally:
            release.close()
    tiny = negpickle.Bounds(0, 0, "the test's bound")
    release = _member(tmp_path, b"\x80\x05" + b"N" * (2 << 20) + b".")
    try:
        with pytest.raises(GenerationError, match="bytes once decompressed"):
            tgbl.read_negatives(release, "tgbl-x_val_ns.pkl", tiny)
    finally:
        release.close()
