"""The scan of TGB's negatives pickles (``generators/tgb/negpickle.py``, issue 24) gives what the dict path gives
(``_keys`` + ``_stacked_values`` of the unpickled dict) for pickles written by ``pickle.dumps`` itself (protocols 4
and 5) and by the scale bench's encoder, wherever the blocks cut the stream; and returns None (the caller unpickles)
for anything else, so what is refused stays refused with the same error."""

from __future__ import annotations

import io
import pickle
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scripts import _tgb_scale
from tests import tgb_formats as formats
from tgbhub.errors import GenerationError
from generators.tgb import catalogue, negpickle, tgbl
from generators.tgb.release import Release, load_pickle

i8 = np.int64


def _dict_path(table: dict[Any, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    keys = tgbl._keys(table, "m.pkl")
    values, width = tgbl._stacked_values(dict(table), "m.pkl")
    return keys, values, width


def _assert_same(raw: bytes, block_bytes: int = negpickle.BLOCK_BYTES, stream: Any = None) -> None:
    scanned = negpickle.scan(stream or io.BytesIO(raw), block_bytes)
    assert isinstance(scanned, negpickle.ScannedNegatives), "the scan fell back on a pickle py-tgb could write"
    keys, values, width = _dict_path(pickle.loads(raw))
    for got, expected in zip(scanned, (keys, values, width)):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)


def _tgb_like(n: int, q: int = 5, seed: int = 0) -> dict[Any, Any]:
    rng = np.random.default_rng(seed)
    return {(i8(s), i8(d), i8(t)): rng.integers(0, 1000, q) for s, d, t in zip(
        rng.integers(0, 50, n), rng.integers(50, 100, n), np.arange(n) * 3)}


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


def _member(tmp_path: Path, raw: bytes) -> Release:
    path = tmp_path / "release.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("tgbl-x_val_ns.pkl", raw)
    return Release(path, {"val_ns": "tgbl-x_val_ns.pkl"})


class _Foreign:
    pass


@pytest.mark.parametrize("table", [
    {(i8(1), i8(2), i8(3)): [4, 5]},  # a list value
    {(i8(1), i8(2), i8(3)): np.array([4, None], dtype=object)},
    {(i8(1), i8(2)): np.array([4, 5])},  # a 2-tuple key
    {(1, 2, 3): np.array([4, 5])},  # Python int keys
    {(i8(1), i8(2), i8(3)): np.array([4, 5], dtype=">i8")},  # big-endian
    {(i8(1), i8(2), i8(3)): np.array([[4, 5]])},  # not flat: the dict path's error
    {(i8(1), i8(2), i8(3)): np.array([True, False])},  # bool: the dict path's error
    {(i8(1), i8(2), i8(3)): np.array([1 << 40])},  # beyond int32: left to the dict path
], ids=["list", "object", "pair-key", "int-keys", "big-endian", "2d", "bool", "int64-big"])
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
