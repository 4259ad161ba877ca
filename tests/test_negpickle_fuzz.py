"""A bounded import of TGB's negatives pickles: whatever the pickle, the import reads what pickle reads or refuses it
with one :class:`~tgbhub.errors.GenerationError`, in work linear in the pickle and memory within what the release
declares (its split's edges) and the catalogue allows (``q``).

The reference is pickle's own pure-Python unpickler (``pickle._Unpickler``, which checks frames; ``_pickle``
does not) with the one refusal ``_pickle`` adds (a FRAME longer than the rest of the stream), and recorders in
place of numpy's reconstruction, turned into numpy values only where they are exactly what numpy writes (a plain
numeric dtype with numpy's own state, an array's bytes exactly its shape's). It refuses what the import documents
it refuses beyond pickle (persistent ids, extension codes, out-of-band buffers, INST/OBJ, a memo index beyond the
bytes before it). Its dict is converted by the dict path (:func:`generators.tgb.tgbl.convert_negatives`); the
import's result (the scan's arrays, or the fallback's dict) must convert to the same table, or both must refuse.
"""

from __future__ import annotations

import builtins
import io
import json
import math
import os
import pickle
import pickletools
import subprocess
import sys
import time
import tracemalloc
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pytest

from generators.tgb import catalogue, negpickle, tgbl
from generators.tgb.negpickle import Bounds
from generators.tgb.release import Release, silent
from scripts import _tgb_scale
from tests import tgb_formats as formats
from tgbhub.errors import GenerationError

i8 = np.int64
MEMBER = "tgbl-wiki_val_ns_v2.pkl"
#: numpy's plain numeric dtypes as numpy pickles them (the code and every state numpy writes for it)
_PLAIN = {np.dtype(code).__reduce__()[1][0]: {np.dtype(code).newbyteorder(order).__reduce__()[2]
                                              for order in ("<", ">")}
          for code in ("?", "b", "h", "i", "q", "B", "H", "I", "Q", "e", "f", "d", "F", "D")}


# --- the reference ------------------------------------------------------------------------------------------------

class _Refused(Exception):
    """The reference refuses the pickle."""


class _Dtype:
    def __init__(self, code: object) -> None:
        if type(code) is not str or code not in _PLAIN:
            raise _Refused(f"dtype {code!r}")
        self.code, self.used = code, False
        self.state: Any = None

    def __setstate__(self, state: object) -> None:
        if self.state is not None or self.used or not any(
                type(state) is tuple and len(state) == len(plain) and all(
                    type(a) is type(b) and a == b for a, b in zip(state, plain, strict=True)) for plain in _PLAIN[
                    self.code]):
            raise _Refused(f"dtype state {state!r:.60}")
        self.state = state

    def numpy(self) -> np.dtype:
        self.used = True
        dtype = np.dtype(self.code)
        return dtype if self.state is None else dtype.newbyteorder(">" if self.state[1] == ">" else "<")


def _dtype_of(item: object) -> np.dtype:
    if not isinstance(item, _Dtype):
        raise _Refused("not a dtype")
    return item.numpy()


def _array(data: object, dtype: np.dtype, shape: object, order: Literal["C", "F"]) -> np.ndarray:
    if type(shape) is not tuple or not all(type(n) is int and n >= 0 for n in shape):
        raise _Refused(f"shape {shape!r:.40}")
    if not isinstance(data, (bytes, bytearray)) or len(data) != math.prod(shape) * dtype.itemsize:
        raise _Refused("array data")
    return np.frombuffer(data, dtype=dtype).reshape(shape, order=order)


class _Pending:
    def __init__(self, shape: object) -> None:
        if type(shape) is not tuple or not all(type(n) is int and n >= 0 for n in shape):
            raise _Refused(f"shape {shape!r:.40}")
        self.array: np.ndarray | None = None

    def __setstate__(self, state: Any) -> None:
        if type(state) is not tuple or len(state) != 5 or type(state[0]) is not int or state[0] != 1 or type(
                state[3]) is not bool:
            raise _Refused("array state")
        self.array = _array(state[4], _dtype_of(state[2]), state[1], "F" if state[3] else "C")


_NDARRAY = object()


def _scalar(dtype: object, data: object) -> Any:
    real = _dtype_of(dtype)
    if type(data) is not bytes or len(data) != real.itemsize:
        raise _Refused("scalar data")
    return np.frombuffer(data, dtype=real)[0]


def _frombuffer(buf: object, dtype: object, shape: object, order: object) -> np.ndarray:
    if order not in ("C", "F"):
        raise _Refused("order")
    return _array(buf, _dtype_of(dtype), shape, "F" if order == "F" else "C")


def _reconstruct(cls: object, shape: object, dtype: object) -> _Pending:
    if cls is not _NDARRAY:
        raise _Refused("not ndarray")
    return _Pending(shape)


def _builtin(kind: type) -> Callable[..., Any]:
    return lambda *args: kind(*args)  # a function, not the type: NEWOBJ refuses it, as it refuses the import's


_RECORDERS: dict[tuple[str, str], Any] = {
    **{(module, "_reconstruct"): _reconstruct for module in ("numpy.core.multiarray", "numpy._core.multiarray")},
    **{(module, "scalar"): _scalar for module in ("numpy.core.multiarray", "numpy._core.multiarray")},
    **{(module, "_frombuffer"): _frombuffer for module in ("numpy.core.numeric", "numpy._core.numeric")},
    ("numpy", "ndarray"): _NDARRAY, ("numpy", "dtype"): lambda code, align=False, copy=True: _Dtype(code),
    **{("builtins", name): _builtin(getattr(builtins, name))
       for name in ("tuple", "dict", "list", "int", "float", "set", "frozenset")},
}


#: pickle's pure-Python unpickler (its internals, which typeshed does not describe)
_PurePython: Any = pickle._Unpickler


class _Reference(_PurePython):
    """pickle's pure-Python unpickler with the refusals the module docstring lists."""

    dispatch = dict(_PurePython.dispatch)

    def __init__(self, raw: bytes) -> None:
        self.source = io.BytesIO(raw)
        super().__init__(self.source)

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _RECORDERS:
            raise _Refused(f"{module}.{name}")
        return _RECORDERS[(module, name)]

    def position(self) -> int:
        frame = self._unframer.current_frame
        if frame is None:
            return self.source.tell()
        return self.source.tell() - (frame.getbuffer().nbytes - frame.tell())

    def load_frame(self) -> None:
        at = self.position()
        size = int.from_bytes(self.source.getbuffer()[at:at + 8], "little") if at + 8 <= len(
            self.source.getbuffer()) else -1
        if size < 0 or at + 8 + size > len(self.source.getbuffer()):
            raise _Refused("a frame past the end (_pickle's truncation)")
        _PurePython.load_frame(self)

    def refuse(self) -> None:
        raise _Refused("an opcode the import refuses")

    def memo_put(self, size: int) -> None:
        at = self.position() - 1
        index = int.from_bytes(self.read(size), "little")
        if index > at:
            raise _Refused("memo index")
        self.memo[index] = self.stack[-1]

    def load_binput(self) -> None:
        self.memo_put(1)

    def load_long_binput(self) -> None:
        self.memo_put(4)

    def load_put(self) -> None:
        at = self.position() - 1
        line = self.readline()[:-1]
        if not line.isdigit() or int(line) > at:
            raise _Refused("memo index")
        self.memo[int(line)] = self.stack[-1]

    dispatch[pickle.FRAME[0]] = load_frame
    dispatch[pickle.BINPUT[0]] = load_binput
    dispatch[pickle.LONG_BINPUT[0]] = load_long_binput
    dispatch[pickle.PUT[0]] = load_put
    for _code in (pickle.PERSID, pickle.BINPERSID, pickle.EXT1, pickle.EXT2, pickle.EXT4, pickle.NEXT_BUFFER,
                  pickle.READONLY_BUFFER, pickle.INST, pickle.OBJ):
        dispatch[_code[0]] = refuse


def _bytearray8(self: _Reference) -> None:
    size = int.from_bytes(self.read(8), "little")
    if size > len(self.source.getbuffer()):
        raise _Refused("bytearray past the end")
    data = self.read(size)
    if len(data) != size:
        raise _Refused("truncated")
    self.append(bytearray(data))


_Reference.dispatch[pickle.BYTEARRAY8[0]] = _bytearray8


def _reference_dict(raw: bytes) -> dict[Any, Any]:
    """The dict the reference reads. Raises _Refused, or whatever pickle raises, where it refuses."""
    loaded = _Reference(raw).load()
    if not isinstance(loaded, dict):
        raise _Refused("not a dict")
    for key, value in list(loaded.items()):
        if isinstance(value, _Pending):
            if value.array is None:
                raise _Refused("an array without BUILD")
            loaded[key] = value.array
    return loaded


# --- both sides as one outcome ---------------------------------------------------------------------------------------

class _Bytes:
    """A release holding one member, ``raw``: what :func:`tgbl.read_negatives` uses of :class:`Release`."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self.progress = silent

    def size(self, member: str) -> int:
        return len(self.raw)

    def open(self, member: str) -> io.BytesIO:
        return io.BytesIO(self.raw)


Edges = tuple[np.ndarray, np.ndarray, np.ndarray]


def _outcome(read: Callable[[], Any], edges: Edges) -> tuple[str, Any]:
    """("read", the converted table) or ("refused", why)."""
    t, src, dst = edges
    try:
        table = read()
        return "read", tgbl.convert_negatives(table, t, src, dst, MEMBER)
    except GenerationError as exc:
        return "refused", str(exc)


def _ours(raw: bytes, edges: Edges, bounds: Bounds) -> tuple[str, Any, str]:
    """The import's outcome, and which path it took (scan, unpickled, refused)."""
    path = []

    def read() -> Any:
        table = tgbl.read_negatives(_Bytes(raw), MEMBER, bounds)  # type: ignore[arg-type]
        path.append("scan" if isinstance(table, negpickle.ScannedNegatives) else "unpickled")
        return table
    kind, result = _outcome(read, edges)
    return kind, result, path[0] if path else "refused"


def _theirs(raw: bytes, edges: Edges, bounds: Bounds) -> tuple[str, Any]:
    def read() -> Any:
        try:
            table = _reference_dict(raw)
        except Exception as exc:  # noqa: BLE001 - whatever pickle raises, it refuses
            raise GenerationError(f"reference: {type(exc).__name__}: {exc}") from exc
        tgbl._check_bounds(table, MEMBER, bounds)
        return table
    return _outcome(read, edges)


def _same(ours: tuple[str, Any], theirs: tuple[str, Any]) -> bool:
    if ours[0] != theirs[0]:
        return False
    if ours[0] == "refused":
        return True
    return ours[1].keys() == theirs[1].keys() and all(
        ours[1][k].dtype == theirs[1][k].dtype and np.array_equal(ours[1][k], theirs[1][k]) for k in ours[1])


# --- the corpus: py-tgb's pickles and their mutations ----------------------------------------------------------------

def _pytgb_like(n: int, q: int, seed: int) -> tuple[dict[Any, Any], Edges]:
    """A split's negatives as py-tgb writes them: int64 keys ``(src, dst, t)``, int64 arrays of q negatives, a
    few ragged, a few float64 (a source without history: upstream concatenates ``np.array([])``)."""
    rng = np.random.default_rng(seed)
    src, dst, t = rng.integers(0, 30, n), rng.integers(30, 60, n), np.sort(rng.integers(0, 10 * n, n))
    table: dict[Any, Any] = {}
    for s, d, ts in zip(src, dst, t, strict=True):
        width = q if rng.random() < 0.9 else int(rng.integers(2, q))
        value = rng.choice(np.arange(30, 60), width, replace=False)
        table[(i8(s), i8(d), i8(ts))] = value.astype(np.float64) if rng.random() < 0.1 else value
    return table, (t.astype(np.int64), src.astype(np.int64), dst.astype(np.int64))


def _seeds(tmp: Path) -> list[tuple[str, bytes, Edges]]:
    seeds = []
    for protocol in (4, 5):
        for n, q in ((30, 8), (12, 20)):
            table, edges = _pytgb_like(n, q, seed=n + protocol)
            seeds.append((f"pickle-p{protocol}-{n}x{q}", pickle.dumps(table, protocol=protocol), edges))
    table, edges = _pytgb_like(400, 24, seed=7)  # > 64 KB: several frames
    seeds.append(("pickle-p5-frames", pickle.dumps(table, protocol=5), edges))
    rng = np.random.default_rng(9)
    keys = (rng.integers(0, 30, 40), rng.integers(30, 60, 40), np.arange(40) * 3)
    _tgb_scale.write_pickled_negatives(tmp / "scale.pkl", keys, rng.integers(30, 60, (40, 6)))
    seeds.append(("scale-encoder", (tmp / "scale.pkl").read_bytes(), (keys[2].astype(np.int64),
                                                                      keys[0].astype(np.int64),
                                                                      keys[1].astype(np.int64))))
    return seeds


def _ops(raw: bytes) -> list[tuple[str, Any, int]]:
    return [(op.name, arg, pos or 0) for op, arg, pos in pickletools.genops(raw)]


def _mutants(name: str, raw: bytes, rng: np.random.Generator, count: int) -> Iterator[tuple[str, bytes]]:
    """``count`` seeded mutations of ``raw``: byte flips, truncations, frame lengths off, a key made a duplicate
    of another, a dtype code swapped, a byte inserted or deleted."""
    ops = _ops(raw)
    frames = [pos for op, _, pos in ops if op == "FRAME"]
    keys = [pos + 2 for op, arg, pos in ops if op == "SHORT_BINBYTES" and len(arg) == 8]
    codes = [pos + 2 for op, arg, pos in ops if op == "SHORT_BINUNICODE" and arg in ("i8", "f8")]
    swaps = [b"i8", b"f8", b"u8", b"i4", b"V8", b"M8", b"m8", b"O8", b"b1", b"c8", b"f4", b"S8", b"U8", b"u1"]
    kinds = ["flip", "flip", "truncate", "frame", "duplicate", "dtype", "insert", "delete", "flips"]
    for i in range(count):
        kind = kinds[i % len(kinds)]
        data = bytearray(raw)
        if kind in ("flip", "flips"):
            for _ in range(1 if kind == "flip" else int(rng.integers(2, 6))):
                data[int(rng.integers(0, len(data)))] = int(rng.integers(0, 256))
        elif kind == "truncate":
            del data[int(rng.integers(1, len(data))):]
        elif kind == "frame" and frames:
            at = frames[int(rng.integers(0, len(frames)))] + 1
            length = int.from_bytes(data[at:at + 8], "little")
            delta = int(rng.choice([-9, -2, -1, 1, 2, 9, 1 << 20, 1 << 40]))
            data[at:at + 8] = max(0, length + delta).to_bytes(8, "little")
        elif kind == "duplicate" and len(keys) >= 6:
            group = int(rng.integers(1, len(keys) // 3))
            for part in range(3):
                source, target = keys[part], keys[3 * group + part]
                data[target:target + 8] = data[source:source + 8]
        elif kind == "dtype" and codes:
            at = codes[int(rng.integers(0, len(codes)))]
            data[at:at + 2] = swaps[int(rng.integers(0, len(swaps)))]
        elif kind == "insert":
            data.insert(int(rng.integers(0, len(data))), int(rng.choice([0x28, 0x30, 0x94, 0x95, 0x8C, 0x2E,
                                                                         int(rng.integers(0, 256))])))
        elif kind == "delete":
            del data[int(rng.integers(0, len(data)))]
        yield f"{name}/{kind}/{i}", bytes(data)


#: mutants per seed pickle (fewer of the one of several frames, 20 times larger): the fuzz test's size, about
#: 1,600 pickles in ten seconds
MUTANTS_PER_SEED, MUTANTS_OF_THE_LARGE_SEED = 300, 60


def test_the_import_reads_what_pickle_reads_or_refuses(tmp_path: Path) -> None:
    """Every mutant: both refuse, or both read the same table; never an exception other than GenerationError. Both
    paths of the import (the scan, the fallback) and both outcomes occur in the corpus."""
    rng = np.random.default_rng(2024)
    seen = {"scan": 0, "unpickled": 0, "refused": 0, "read": 0}
    mismatches = []
    for name, raw, edges in _seeds(tmp_path):
        bounds = Bounds(len(edges[0]), 64, "the test's bound")
        ours, theirs = _ours(raw, edges, bounds), _theirs(raw, edges, bounds)
        assert ours[0] == "read" and ours[2] == "scan" and _same(ours[:2], theirs), name
        count = MUTANTS_OF_THE_LARGE_SEED if len(raw) > 65536 else MUTANTS_PER_SEED
        for label, mutant in _mutants(name, raw, rng, count):
            ours = _ours(mutant, edges, bounds)
            theirs = _theirs(mutant, edges, bounds)
            seen[ours[2]] += 1
            seen[ours[0]] += 1
            if not _same(ours[:2], theirs):
                mismatches.append(f"{label}: import {ours[0]} ({ours[2]}; {str(ours[1])[:200]}), reference "
                                  f"{theirs[0]} ({str(theirs[1])[:200]})")
    assert not mismatches, f"{len(mismatches)} mismatches, the first: " + "\n".join(mismatches[:5])
    assert min(seen.values()) > 50, seen  # each path and outcome met often


# --- crafted inputs -------------------------------------------------------------------------------------------------

class _Run:
    """A pickle that is mostly one byte repeated (``prefix + fill * count + suffix``), written without being held."""

    def __init__(self, prefix: bytes, fill: bytes, count: int, suffix: bytes) -> None:
        self.prefix, self.fill, self.count, self.suffix = prefix, fill, count, suffix

    def chunks(self) -> Iterator[bytes]:
        yield self.prefix
        block = self.fill * (1 << 24)
        for start in range(0, self.count, 1 << 24):
            yield block[:min(1 << 24, self.count - start)]
        yield self.suffix


def _key_bytes(key: tuple[Any, ...]) -> bytes:
    """Three numpy int64 scalars as numpy pickles them, after the prelude of :func:`_prelude` (memo 3: scalar,
    memo 9: int64)."""
    return b"".join(b"h\x03h\x09C\x08" + int(part).to_bytes(8, "little", signed=True) + b"\x86R" for part in key
                    ) + b"\x87"


def _prelude() -> bytes:
    return _tgb_scale._pickle_prelude()[0]


def _reconstruct_without_data(key: tuple[Any, ...], length: int) -> bytes:
    """``{key: _reconstruct(ndarray, (length,), int64)}`` and no BUILD: an array numpy would allocate (6.4 GB
    for 800M), never given its data."""
    module = np.arange(2)[::2].__reduce__()[0].__module__.encode()
    return (_prelude() + _key_bytes(key) + b"\x8c" + bytes([len(module)]) + module + b"\x8c\x0c_reconstruct\x93"
            + b"\x8c\x05numpy\x8c\x07ndarray\x93" + b"J" + length.to_bytes(4, "little") + b"\x85" + b"h\x09\x87R"
            + b"s.")


def _crafted(table: dict[Any, Any]) -> dict[str, tuple[bytes | _Run, str]]:
    """Each hostile input as the val pickle of a small tgbl-wiki release whose val negatives are ``table``, and
    what it must give: "read" (as pickle reads it) or a phrase of its refusal."""
    first = next(iter(table))
    wide, wider, void, dates = dict(table), dict(table), dict(table), dict(table)
    wide[first] = np.arange(4000, dtype=np.int64)
    wider[first] = np.arange(30000, dtype=np.int64)
    void[first] = np.zeros(4, dtype="V8")
    dates[first] = np.arange(4).astype("M8[D]")
    extra = dict(table)
    extra[(i8(999_999), i8(999_999), i8(999_999))] = table[first][::-1].copy()
    duplicate = bytearray(pickle.dumps(extra, protocol=5))
    keys = [pos + 2 for op, arg, pos in _ops(bytes(duplicate)) if op == "SHORT_BINBYTES" and len(arg) == 8]
    for part in range(3):  # the extra key made the first's: the dict keeps the first's place and the extra's value
        duplicate[keys[-3 + part]:keys[-3 + part] + 8] = duplicate[keys[part]:keys[part] + 8]
    honest = pickle.dumps(table, protocol=5)
    payload = [pos for op, _, pos in _ops(honest) if op == "BYTEARRAY8"][-1] + 20  # inside the last entry's data
    short, long = bytearray(honest), bytearray(honest)
    short[3:11] = (payload - 11).to_bytes(8, "little")  # the frame ends inside an opcode's data
    long[3:11] = (int.from_bytes(long[3:11], "little") + 64).to_bytes(8, "little")  # past the end of the pickle
    infinite = {((np.float64(np.inf), *first[1:]) if key is first else key): value for key, value in table.items()}
    return {
        "wide-4000": (pickle.dumps(wide, protocol=5), "an entry holds 4,000 negatives"),
        "wide-30000": (pickle.dumps(wider, protocol=5), "an entry holds 30,000 negatives"),
        "reconstruct-without-data": (_reconstruct_without_data(first, 800_000_000), "never gave its data"),
        "mark-flood": (_Run(_prelude(), b"(", 380 << 20, b"."), "bytes once decompressed"),
        "mark-flood-within-size": (_Run(_prelude(), b"(", 1 << 20, b"."), "MARKs nested deeper"),
        "duplicate-key": (bytes(duplicate), "read"),
        "frame-short": (bytes(short), "past the end of its frame"),
        "frame-long": (bytes(long), "past the end of the pickle"),
        "void-values": (pickle.dumps(void, protocol=5), "the numpy dtype 'V8'"),
        "datetime-values": (pickle.dumps(dates, protocol=5), "the numpy dtype 'M8'"),
        "inf-key": (pickle.dumps(infinite, protocol=5), "holds inf"),
    }


def _zipped(files: formats.FormatFiles, val: bytes | _Run, path: Path) -> Path:
    """The release of ``files`` with ``val`` as its val pickle, written by stream (a 380 MB member never held)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for role, member in sorted(files.files.items()):
            with archive.open(member.name, "w", force_zip64=True) as out:
                if role != "val_ns":
                    out.write(member.read_bytes())
                elif isinstance(val, bytes):
                    out.write(val)
                else:
                    for chunk in val.chunks():
                        out.write(chunk)
    return path


@contextmanager
def _opened(path: Path) -> Iterator[Release]:
    release = Release(path, dict(catalogue.entry("tgbl-wiki").files))
    try:
        yield release
    finally:
        release.close()


def _val_negatives(path: Path, table: dict[Any, Any] | None = None) -> tuple[str, Any]:
    """The release's val negatives as the import converts them (or, given ``table``, as the dict path converts
    that dict for the release's val edges): ("read", columns) or ("refused", the message)."""
    item = catalogue.entry("tgbl-wiki")
    try:
        with _opened(path) as release:
            files, info = tgbl.convert(item, release)
    except GenerationError as exc:
        return "refused", str(exc)
    if table is None:
        return "read", files["negatives-val.parquet"]
    lo, hi = info["splits"]["val"]
    edges = files[tgbl.EDGES_FILE]
    return "read", tgbl.convert_negatives(table, edges["t"][lo:hi], edges["src"][lo:hi], edges["dst"][lo:hi], MEMBER)


CRAFTED = ("wide-4000", "wide-30000", "reconstruct-without-data", "mark-flood", "mark-flood-within-size",
           "duplicate-key", "frame-short", "frame-long", "void-values", "datetime-values", "inf-key")


@pytest.fixture(scope="module")
def crafted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str, bytes | _Run]]:
    """Each crafted input's release zip, what it must give, and its val pickle."""
    tmp = tmp_path_factory.mktemp("crafted")
    files = formats.write_tgbl(tmp / "files", "tgbl-wiki", n_edges=400, seed=11)
    table = pickle.loads(files.files["val_ns"].read_bytes())
    return {name: (_zipped(files, raw, tmp / f"{name}.zip"), expect, raw)
            for name, (raw, expect) in _crafted(table).items()}


@pytest.mark.parametrize("name", CRAFTED)
def test_a_crafted_release_is_read_as_pickle_reads_it_or_refused(
        name: str, crafted: dict[str, tuple[Path, str, bytes | _Run]]) -> None:
    path, expect, raw = crafted[name]
    started = time.perf_counter()
    kind, result = _val_negatives(path)
    assert time.perf_counter() - started < SECONDS
    if expect != "read":
        assert kind == "refused" and expect in result and "\n" not in result, result
        return
    assert isinstance(raw, bytes)
    expected = _val_negatives(path, pickle.loads(raw))
    assert kind == "read" and expected[0] == "read", result
    for column, values in expected[1].items():
        np.testing.assert_array_equal(result[column], values)
        assert result[column].dtype == values.dtype


def test_a_wide_entry_within_the_bounds_allocates_for_what_was_read() -> None:
    """A 4 KB pickle with one entry of 4,000 negatives, within the bounds: the scan allocates for one entry of
    4,000 (chunks grow with the entries read), not a chunk of 262,144 rows that wide (4.3 GB)."""
    table = {(i8(1), i8(2), i8(3)): np.arange(4000, dtype=np.int16), (i8(1), i8(2), i8(4)): np.arange(3)}
    raw = pickle.dumps(table, protocol=5)
    tracemalloc.start()
    try:
        scanned = negpickle.scan(io.BytesIO(raw), bounds=Bounds(10, 4000, "the test's bound"), size=len(raw))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert scanned is not None and scanned.values.shape == (2, 4000)
    assert peak < 64 << 20, peak


#: the child's whole address space (``RLIMIT_AS``): the interpreter with numpy, numba and pyarrow takes about 0.5 GiB
#: of it once imported (with :data:`LEAN`), the crafted inputs the rest
CAP = 1 << 30
#: one malloc arena and one thread per pool: each further arena reserves 64 MiB of address space, which a cap that
#: counts reservations would spend on nothing
LEAN = {"MALLOC_ARENA_MAX": "1", "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
#: seconds a crafted input may take in the child, imports excluded
SECONDS = 30

_CHILD = """
import io, json, pickle, resource, sys, time
from pathlib import Path
import numpy as np
from generators.tgb import catalogue, negpickle, release as rel, tgbl
from tgbhub.errors import GenerationError
warm = pickle.dumps({(np.int64(1), np.int64(2), np.int64(3)): np.arange(3)}, protocol=5)
negpickle.scan(io.BytesIO(warm)); rel.load_pickle(warm, "warm")  # the kernels, loaded from numba's cache
def status(field):
    return int(open("/proc/self/status").read().split(field + ":")[1].split()[0]) << 10
baseline = status("VmPeak")
cap = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
item = catalogue.entry("tgbl-wiki")
for name, path in json.loads(sys.argv[2]).items():
    open("/proc/self/clear_refs", "w").write("5")  # resets VmHWM: each input's own resident peak
    started = time.perf_counter()
    try:
        opened = rel.Release(Path(path), dict(item.files))
        try:
            tgbl.convert(item, opened)
        finally:
            opened.close()
        outcome = "read"
    except GenerationError as exc:
        outcome = "refused: " + str(exc)
    print(json.dumps({"name": name, "outcome": outcome, "seconds": round(time.perf_counter() - started, 3),
                      "baseline": baseline, "cap": cap, "vm_peak": status("VmPeak"), "rss_peak": status("VmHWM")}))
"""


def test_crafted_releases_stay_within_memory_and_time(crafted: dict[str, tuple[Path, str, bytes | _Run]]) -> None:
    """Every crafted release imported in one child process whose whole address space is capped at 1 GiB
    (``RLIMIT_AS``, :data:`CAP`; the interpreter with numpy, numba and pyarrow takes about half of it once imported).
    Each must end within :data:`SECONDS`, read or refused with a GenerationError, never a MemoryError or a raw
    traceback. The child prints each input's time and resident peak (``VmHWM``, reset between inputs) and the
    process's address-space peak (``VmPeak``)."""
    root = Path(__file__).resolve().parents[1]
    paths = {name: str(path) for name, (path, _, _) in crafted.items()}
    done = subprocess.run([sys.executable, "-c", _CHILD, str(CAP), json.dumps(paths)], capture_output=True,
                          text=True, timeout=SECONDS * len(paths) + 60, cwd=root,
                          env={**os.environ, "TGBHUB_QUIET": "1", **LEAN})
    assert done.returncode == 0, done.stderr[-3000:]
    reports = {report["name"]: report for report in map(json.loads, done.stdout.strip().splitlines())}
    for name, (_, expect, _) in crafted.items():
        report = reports[name]
        print(json.dumps(report)[:400])
        assert report["seconds"] < SECONDS, report
        assert report["vm_peak"] <= report["cap"], report
        if expect == "read":
            assert report["outcome"] == "read", report
        else:
            assert report["outcome"].startswith("refused: ") and expect in report["outcome"], report
