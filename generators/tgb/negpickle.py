"""TGB's negatives pickles read as arrays, never as the dict they pickle.

py-tgb's ``save_pkl`` writes each split's negatives as ``pickle.dump({(src, dst, t): np.ndarray[q]}, protocol=5)``:
one dict, keys tuples of numpy scalars (``numpy.core.multiarray.scalar(dtype, bytes)``, ``numpy._core`` with numpy
2), values arrays (``numpy.core.numeric._frombuffer(bytearray, dtype, shape, "C")`` with protocol 5's in-band
buffer; ``_reconstruct`` + a ``BUILD`` state with protocol 4 and for an array that is not contiguous), items in
batches of 1,000 (``MARK ... SETITEMS``, ``SETITEM`` for a batch of one). Every class, dtype and order string is
pickled once and memoised; each later entry refers to them with ``BINGET``. Unpickling builds 10M small Python
objects at 67M rows (4-5 GB, half of an import's time); :func:`scan` instead reads the stream in blocks of
:data:`BLOCK_BYTES` and turns each entry into one row of ``int64 [k, 3]`` keys and an ``int32 [k, q]`` matrix + each
entry's length, exactly as :func:`generators.tgb.tgbl.convert_negatives` converts the dict (-1 after a shorter
entry; a float entry's non-integral values -1 and its length -1; a non-integral float key ``(-1, -1, -1)`` when the
first key holds a float).

The entries that only refer to known objects are read by a compiled scan (:func:`_scan`); an entry that defines
something (the first, one with a new dtype) is read by a small Python interpreter of the same opcodes
(:func:`_entry`), which accepts only numpy's scalar, dtype and array reconstruction of plain little-endian integer
and float dtypes. Anything else (another opcode or class, a list or object array, a big-endian dtype, protocol < 4,
a value outside int32 or a key outside int64, a truncated stream) makes :func:`scan` return None, and the caller
unpickles with :func:`~generators.tgb.release.load_pickle` instead, whose allow-list and errors stay the ones
every pickle meets: the scan changes how fast and in how much memory, never what is read or refused.

Both read within :class:`Bounds`, the split's (its edge count, the catalogue's ``q`` or the node count), checked
before anything that size is allocated: the scan's chunks grow with the entries read and widen to the widest
entry read, never past the bounds; and :func:`walk` reads every opcode as pickle does (lengths within the stream,
frames that frame whole reads, as ``pickle.py`` requires, and no longer than the stream, as ``_pickle`` requires)
in linear time and a block of memory, in the scan as the blocks arrive and before every unpickling. A key the
pickle holds twice is read as pickle reads it: the last value (the conversion looks up the last of equal keys).

:func:`scan_chunks` reads the same rows but hands each chunk to a sink as it fills instead of joining them
(:mod:`generators.tgb.negstream` writes them to disk), so that what the scan holds does not grow with the pickle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import IO, Any, NamedTuple, Protocol

import numba
import numpy as np

from tgbhub.errors import GenerationError

from ..jit import announce_compile

#: bytes of the decompressed pickle read at a time (an entry cut by a block's end is carried over to the next)
BLOCK_BYTES = 8 << 20
#: bytes the scan asks its stream for in one call while it fills a block: a zip member's stream reads about as many
#: compressed bytes a call and builds its output and the rest of its input as new objects, so asking for a whole
#: block at once would hold several blocks' worth beside the block itself
READ_BYTES = 1 << 20
#: entries of the largest output chunk; the chunks are joined into one matrix once the pickle is read
CHUNK_ROWS = 1 << 18
#: the most bytes of values one chunk handed to a sink (:func:`scan_chunks`) holds: fewer rows for wide entries, and
#: a chunk that would widen past it is handed over as it is and a wider one begun, so the scan's memory stays
#: within a few of these whatever the pickle's length and widths
SINK_CHUNK_BYTES = 8 << 20
#: entries of the first chunk: each later chunk holds as many entries as all before it (up to :data:`CHUNK_ROWS`),
#: so the rows allocated stay within twice the entries read, whatever the pickle's length
FIRST_CHUNK_ROWS = 1 << 6
#: bytes of the pickle one negative may take: 8 in an int64 array, 5 to 10 as a Python int, about 17 as a numpy
#: scalar in a list; 32 leaves room for any of them
BYTES_PER_NEGATIVE = 32
#: bytes of one entry besides its negatives: its key (three numpy scalars, about 75 bytes) and the array's
#: reconstruction (about 60 bytes), with room to spare
BYTES_PER_ENTRY = 1024
#: bytes besides the entries: the protocol, the classes and dtypes defined once, the frames
SLACK_BYTES = 1 << 20
#: opcodes one negative may take (a list of numpy scalars takes 6 each: two BINGETs, the bytes, TUPLE2, REDUCE,
#: MEMOIZE), and one entry besides its negatives, and the pickle besides its entries
OPCODES_PER_NEGATIVE, OPCODES_PER_ENTRY, SLACK_OPCODES = 8, 128, 1 << 16
#: the most known objects (classes, dtypes, strings) the scan keeps for its compiled reader: a pickle of TGB's
#: pattern memoises about ten; more sends the pickle to unpickling, where nothing is looked up one by one
KNOWN_OBJECTS = 1024
#: the width bound of a scan given no bounds (tests; every import passes the split's)
UNBOUNDED_WIDTH = 1 << 20


class Bounds(NamedTuple):
    """What one split's negatives pickle may hold, from what the release declares and the catalogue allows: the
    scan and the unpickling check every size against it before they allocate.

    ``entries``: the most entries, the split's edge count (py-tgb writes one entry per distinct edge of the split);
    ``width``: the most negatives of one entry; ``reason``: where ``width`` comes from, for the message that
    refuses a wider entry.
    """

    entries: int
    width: int
    reason: str

    @property
    def stream_bytes(self) -> int:
        """The most bytes the decompressed pickle may have (:data:`BYTES_PER_NEGATIVE` a negative,
        :data:`BYTES_PER_ENTRY` an entry, :data:`SLACK_BYTES` besides)."""
        return self.entries * (self.width * BYTES_PER_NEGATIVE + BYTES_PER_ENTRY) + SLACK_BYTES

    @property
    def opcodes(self) -> int:
        """The most opcodes the pickle may have; each builds at most one small object, so this bounds what
        unpickling allocates besides the bytes the pickle holds."""
        return self.entries * (self.width * OPCODES_PER_NEGATIVE + OPCODES_PER_ENTRY) + SLACK_OPCODES


def too_large(member: str, size: int, bounds: Bounds) -> GenerationError:
    """The error for a pickle of ``size`` bytes (decompressed), more than ``bounds`` allow."""
    return GenerationError(f"{member}: {size:,} bytes once decompressed, more than the {bounds.stream_bytes:,} that "
                           f"{bounds.entries:,} entries of at most {bounds.width:,} negatives ({bounds.reason}) can "
                           "take; refusing it (the release may be corrupt or not TGB's: download it again)")


def too_many_entries(member: str, count: int, bounds: Bounds) -> GenerationError:
    """The error for a pickle of ``count`` entries, more than its split has edges."""
    return GenerationError(f"{member}: {count:,} entries, more than the {bounds.entries:,} edges of its split (py-tgb "
                           "writes one entry per distinct edge); is it the pickle of this release's edge list?")


def too_wide(member: str, width: int, bounds: Bounds) -> GenerationError:
    """The error for an entry of ``width`` negatives, more than ``bounds`` allow."""
    return GenerationError(f"{member}: an entry holds {width:,} negatives, more than {bounds.width:,} "
                           f"({bounds.reason}); refusing it (the release may be corrupt or not TGB's)")


class ScannedNegatives(NamedTuple):
    """A negatives dict as :func:`generators.tgb.tgbl.convert_negatives` converts it: ``keys`` ``int64 [k, 3]``
    (src, dst, t in the dict's order), ``values`` ``int32 [k, q]`` (-1 after a shorter entry), ``width``
    ``int64 [k]`` (each entry's length, -1 for an entry that is not integer node ids)."""

    keys: np.ndarray
    values: np.ndarray
    width: np.ndarray


class Sink(Protocol):
    """Takes each finished chunk of a :func:`scan_chunks`, in the pickle's order: ``keys`` ``int64 [r, 3]``,
    ``values`` ``int32 [r, w]`` (``w`` the chunk's width, at least its longest entry; -1 after a shorter entry),
    ``width`` ``int64 [r]``, as :class:`ScannedNegatives` holds them. A sink that keeps them past its return copies
    them."""

    def __call__(self, keys: np.ndarray, values: np.ndarray, width: np.ndarray) -> None: ...


# the opcodes of TGB's pattern (pickletools' names)
_MARK, _STOP, _SETITEM, _SETITEMS, _TUPLE, _REDUCE, _BUILD = 0x28, 0x2E, 0x73, 0x75, 0x74, 0x52, 0x62
_TUPLE1, _TUPLE2, _TUPLE3, _EMPTY_TUPLE, _NONE, _NEWTRUE, _NEWFALSE = 0x85, 0x86, 0x87, 0x29, 0x4E, 0x88, 0x89
_BININT, _BININT1, _BININT2 = 0x4A, 0x4B, 0x4D
_SHORT_BINBYTES, _BINBYTES, _BINBYTES8, _BYTEARRAY8 = 0x43, 0x42, 0x8E, 0x96
_SHORT_BINUNICODE, _BINUNICODE = 0x8C, 0x58
_MEMOIZE, _BINPUT, _LONG_BINPUT, _BINGET, _LONG_BINGET = 0x94, 0x71, 0x72, 0x68, 0x6A
_PROTO, _FRAME, _EMPTY_DICT, _STACK_GLOBAL, _POP = 0x80, 0x95, 0x7D, 0x93, 0x30

# what a memo index the compiled scan may meet refers to (dtypes: _DTYPE + their row in the dtype table)
_SCALAR, _FROMBUFFER, _RECONSTRUCT, _NDARRAY, _ORDER_C, _BYTES_B, _DTYPE = 1, 2, 3, 4, 5, 6, 16
# what the compiled scan says when it stops
_DONE, _MORE, _SLOW, _FULL, _WIDER, _FOREIGN = 0, 1, 2, 3, 4, 5
# the top level between entries: before a batch, inside MARK ... SETITEMS, after a lone entry (SETITEM next)
_TOP, _BATCH, _LONE = 0, 1, 2
# positions the compiled helpers return instead of the next one
_NEED, _NOT = -1, -2
#: dtype kinds of the dtype table: signed and unsigned integers, floats
_INT, _UINT, _FLOAT = 0, 1, 2
_DTYPES = {f"{kind}{size}": (code, size)
           for kind, code, sizes in (("i", _INT, (1, 2, 4, 8)), ("u", _UINT, (1, 2, 4, 8)), ("f", _FLOAT, (4, 8)))
           for size in sizes}
_GLOBALS = {("numpy.core.multiarray", "scalar"): _SCALAR, ("numpy._core.multiarray", "scalar"): _SCALAR,
            ("numpy.core.numeric", "_frombuffer"): _FROMBUFFER, ("numpy._core.numeric", "_frombuffer"): _FROMBUFFER,
            ("numpy.core.multiarray", "_reconstruct"): _RECONSTRUCT,
            ("numpy._core.multiarray", "_reconstruct"): _RECONSTRUCT,
            ("numpy", "ndarray"): _NDARRAY, ("numpy", "dtype"): _DTYPE}


# --- the compiled scan ---------------------------------------------------------------------------------------------

@numba.njit(cache=True, nogil=True)
def _op(buf: np.ndarray, p: int, end: int) -> int:
    """The position of the next opcode from ``p``, FRAMEs skipped (they only announce a length); _NEED at the end."""
    while p < end and buf[p] == _FRAME:
        p += 9
    return p if p < end else _NEED


@numba.njit(cache=True, nogil=True)
def _unsigned(buf: np.ndarray, p: int, size: int) -> int:
    value = 0
    for i in range(size):
        value |= np.int64(buf[p + i]) << (8 * i)
    return value


@numba.njit(cache=True, nogil=True)
def _expect(buf: np.ndarray, p: int, end: int, opcode: int) -> int:
    if p < 0:
        return p
    p = _op(buf, p, end)
    if p < 0:
        return p
    return p + 1 if buf[p] == opcode else _NOT


@numba.njit(cache=True, nogil=True)
def _memo(buf: np.ndarray, p: int, end: int, state: np.ndarray) -> int:
    """Past a MEMOIZE (or BINPUT of the next index) if there is one, counting the memo in ``state[0]``."""
    if p < 0:
        return p
    at = _op(buf, p, end)
    if at < 0:
        return at
    if buf[at] == _MEMOIZE:
        state[0] += 1
        return at + 1
    if buf[at] == _BINPUT or buf[at] == _LONG_BINPUT:
        size = 1 if buf[at] == _BINPUT else 4
        if at + 1 + size > end:
            return _NEED
        if _unsigned(buf, at + 1, size) != state[0]:
            return _NOT  # overwrites an entry: the Python reader decides
        state[0] += 1
        return at + 1 + size
    return p


@numba.njit(cache=True, nogil=True)
def _get(buf: np.ndarray, p: int, end: int, refs: np.ndarray, state: np.ndarray) -> int:
    """Past a BINGET / LONG_BINGET of a known memo entry, its code in ``state[1]``."""
    if p < 0:
        return p
    p = _op(buf, p, end)
    if p < 0:
        return p
    if buf[p] != _BINGET and buf[p] != _LONG_BINGET:
        return _NOT
    size = 1 if buf[p] == _BINGET else 4
    if p + 1 + size > end:
        return _NEED
    index = _unsigned(buf, p + 1, size)
    for i in range(refs.shape[0]):
        if refs[i, 0] == index:
            state[1] = refs[i, 1]
            return p + 1 + size
    return _NOT


@numba.njit(cache=True, nogil=True)
def _int(buf: np.ndarray, p: int, end: int, state: np.ndarray) -> int:
    """Past a BININT1 / BININT2 / BININT, its value in ``state[1]``."""
    if p < 0:
        return p
    p = _op(buf, p, end)
    if p < 0:
        return p
    size = 1 if buf[p] == _BININT1 else 2 if buf[p] == _BININT2 else 4 if buf[p] == _BININT else 0
    if size == 0:
        return _NOT
    if p + 1 + size > end:
        return _NEED
    value = _unsigned(buf, p + 1, size)
    state[1] = value - (1 << 32) if size == 4 and value >= 1 << 31 else value
    return p + 1 + size


@numba.njit(cache=True, nogil=True)
def _bytes(buf: np.ndarray, p: int, end: int, bytearray_too: bool, state: np.ndarray) -> int:
    """Past a bytes (or BYTEARRAY8) opcode and its data; the data's offset in ``state[2]``, length in ``state[3]``."""
    if p < 0:
        return p
    p = _op(buf, p, end)
    if p < 0:
        return p
    code = buf[p]
    size = 1 if code == _SHORT_BINBYTES else 4 if code == _BINBYTES else 8 if code == _BINBYTES8 else (
        8 if code == _BYTEARRAY8 and bytearray_too else 0)
    if size == 0:
        return _NOT
    if p + 1 + size > end:
        return _NEED
    length = _unsigned(buf, p + 1, size)
    if length < 0 or p + 1 + size + length > end:
        return _NEED if length >= 0 else _NOT
    state[2], state[3] = p + 1 + size, length
    return p + 1 + size + length


@numba.njit(cache=True, nogil=True)
def _key_part(buf: np.ndarray, at: int, kind: int, size: int, state: np.ndarray) -> bool:
    """One key part as ``_keys`` reads it (``np.fromiter(..., int64)`` truncates a float) into ``state[1]``;
    ``state[2]`` set to 1 where it was a float with a fraction. False where numpy would fail or overflow (the
    dict path then says what it says)."""
    if kind == _FLOAT:
        value = buf[at:at + 8].view(np.float64)[0] if size == 8 else np.float64(buf[at:at + 4].view(np.float32)[0])
        if not (-9.2e18 < value < 9.2e18):  # NaN, inf and beyond int64: left to the dict path
            return False
        whole = np.int64(value)
        state[1] = whole
        if np.float64(whole) != value:
            state[2] = 1
        return True
    if kind == _UINT and size == 8 and buf[at + 7] >= 0x80:
        return False
    value = _unsigned(buf, at, size)
    if kind == _INT and size < 8 and value >= 1 << (8 * size - 1):
        value -= 1 << (8 * size)
    state[1] = value
    return True


@numba.njit(cache=True, nogil=True)
def _store(buf: np.ndarray, key_at: np.ndarray, key_dtype: np.ndarray, value_at: int, length: int, value_dtype: int,
           dtypes: np.ndarray, float_rule: bool, keys: np.ndarray, values: np.ndarray, width: np.ndarray, row: int,
           state: np.ndarray) -> bool:
    """One entry into row ``row`` of the outputs; False where the dict path must decide (a value beyond int32, a
    float key beyond int64)."""
    state[2] = 0
    for j in range(3):
        if not _key_part(buf, key_at[j], dtypes[key_dtype[j], 0], dtypes[key_dtype[j], 1], state):
            return False
        keys[row, j] = state[1]
    if float_rule and state[2] == 1:
        keys[row, 0] = keys[row, 1] = keys[row, 2] = -1
    kind, size = dtypes[value_dtype, 0], dtypes[value_dtype, 1]
    count = length
    if kind == _INT and (size == 8 or size == 4):  # TGB's int64 (and int32): read as such, not byte by byte
        if size == 8:
            ids = buf[value_at:value_at + 8 * length].view(np.int64)
            for i in range(length):
                if not (-2147483648 <= ids[i] <= 2147483647):
                    return False
                values[row, i] = ids[i]
        else:
            values[row, :length] = buf[value_at:value_at + 4 * length].view(np.int32)
        values[row, length:] = -1
        width[row] = count
        return True
    for i in range(length):
        at = value_at + i * size
        if kind == _FLOAT:
            value = buf[at:at + 8].view(np.float64)[0] if size == 8 else np.float64(buf[at:at + 4].view(np.float32)[0])
            if value != np.floor(value):  # a fraction, or NaN: -1 and the entry is no node ids
                values[row, i] = -1
                count = -1
                continue
            if not (-2147483648.0 <= value <= 2147483647.0):
                return False
            values[row, i] = np.int32(value)
        else:
            if kind == _UINT and size == 8 and buf[at + 7] >= 0x80:
                return False
            whole = _unsigned(buf, at, size)
            if kind == _INT and size < 8 and whole >= 1 << (8 * size - 1):
                whole -= 1 << (8 * size)
            if not (-2147483648 <= whole <= 2147483647):
                return False
            values[row, i] = whole
    values[row, length:] = -1
    width[row] = count
    return True


@numba.njit(cache=True, nogil=True)
def _entry_fast(buf: np.ndarray, p: int, end: int, refs: np.ndarray, dtypes: np.ndarray, state: np.ndarray,
                key_at: np.ndarray, key_dtype: np.ndarray) -> int:
    """Past one entry that refers to known objects only; the value's offset, length and dtype in ``state[4:7]``,
    the memo count in ``state[0]`` (the caller restores it if this fails)."""
    for j in range(3):
        p = _get(buf, p, end, refs, state)
        if p < 0 or state[1] != _SCALAR:
            return p if p < 0 else _NOT
        p = _get(buf, p, end, refs, state)
        if p < 0 or state[1] < _DTYPE:
            return p if p < 0 else _NOT
        key_dtype[j] = state[1] - _DTYPE
        p = _bytes(buf, p, end, False, state)
        if p < 0 or state[3] != dtypes[key_dtype[j], 1] or state[3] < 2:  # 1-byte bytes are shared objects
            return p if p < 0 else _NOT
        key_at[j] = state[2]
        p = _memo(buf, _expect(buf, _memo(buf, _expect(buf, _memo(buf, p, end, state), end, _TUPLE2), end, state),
                                end, _REDUCE), end, state)
    p = _memo(buf, _expect(buf, p, end, _TUPLE3), end, state)
    p = _get(buf, p, end, refs, state)
    if p < 0:
        return p
    if state[1] == _FROMBUFFER:
        p = _bytes(buf, _expect(buf, p, end, _MARK), end, True, state)
        if p < 0:
            return p
        state[4], state[5] = state[2], state[3]
        p = _get(buf, _memo(buf, p, end, state), end, refs, state)
        if p < 0 or state[1] < _DTYPE:
            return p if p < 0 else _NOT
        state[6] = state[1] - _DTYPE
        p = _int(buf, p, end, state)
        if p < 0:
            return p
        length = state[1]
        p = _get(buf, _memo(buf, _expect(buf, p, end, _TUPLE1), end, state), end, refs, state)
        if p < 0 or state[1] != _ORDER_C:
            return p if p < 0 else _NOT
        p = _memo(buf, _expect(buf, _memo(buf, _expect(buf, p, end, _TUPLE), end, state), end, _REDUCE), end, state)
    elif state[1] == _RECONSTRUCT:
        p = _get(buf, p, end, refs, state)
        if p < 0 or state[1] != _NDARRAY:
            return p if p < 0 else _NOT
        p = _int(buf, p, end, state)
        if p < 0 or state[1] != 0:
            return p if p < 0 else _NOT
        p = _get(buf, _memo(buf, _expect(buf, p, end, _TUPLE1), end, state), end, refs, state)
        if p < 0 or state[1] != _BYTES_B:
            return p if p < 0 else _NOT
        p = _memo(buf, _expect(buf, _memo(buf, _expect(buf, p, end, _TUPLE3), end, state), end, _REDUCE), end, state)
        p = _int(buf, _expect(buf, p, end, _MARK), end, state)
        if p < 0 or state[1] != 1:
            return p if p < 0 else _NOT
        p = _int(buf, p, end, state)
        if p < 0:
            return p
        length = state[1]
        p = _get(buf, _memo(buf, _expect(buf, p, end, _TUPLE1), end, state), end, refs, state)
        if p < 0 or state[1] < _DTYPE:
            return p if p < 0 else _NOT
        state[6] = state[1] - _DTYPE
        p = _bytes(buf, _expect(buf, p, end, _NEWFALSE), end, False, state)
        if p < 0 or state[3] < 2:  # b"" and 1-byte bytes are shared objects, memoised once: the Python reader
            return p if p < 0 else _NOT
        state[4], state[5] = state[2], state[3]
        p = _expect(buf, _memo(buf, _expect(buf, _memo(buf, p, end, state), end, _TUPLE), end, state), end, _BUILD)
    else:
        return _NOT
    if p < 0:
        return p
    if length < 0 or state[5] != length * dtypes[state[6], 1]:
        return _NOT
    state[5] = length
    return p


@numba.njit(cache=True, nogil=True)
def _scan(buf: np.ndarray, p: int, level: int, memo: int, refs: np.ndarray, dtypes: np.ndarray, float_rule: bool,
          keys: np.ndarray, values: np.ndarray, width: np.ndarray, row: int, widest: int
          ) -> tuple[int, int, int, int, int, int, int]:
    """Entries from ``p`` into the outputs from ``row`` until something needs the caller: returns ``(status,
    position, level, memo count, next row, width needed, widest entry so far)``; the position is where to go on
    (an entry's start for every status but _DONE)."""
    end = buf.shape[0]
    state = np.zeros(8, dtype=np.int64)
    key_at = np.zeros(3, dtype=np.int64)
    key_dtype = np.zeros(3, dtype=np.int64)
    while True:
        at = _op(buf, p, end)
        if at < 0:
            return _MORE, p, level, memo, row, 0, widest
        code = buf[at]
        if level == _TOP and code == _MARK:
            p, level = at + 1, _BATCH
            continue
        if level == _TOP and code == _STOP:
            return _DONE, at + 1, level, memo, row, 0, widest
        if level == _BATCH and code == _SETITEMS or level == _LONE and code == _SETITEM:
            p, level = at + 1, _TOP
            continue
        if level == _LONE:
            return _FOREIGN, at, level, memo, row, 0, widest
        if row == keys.shape[0]:
            return _FULL, at, level, memo, row, 0, widest
        state[0] = memo
        after = _entry_fast(buf, at, end, refs, dtypes, state, key_at, key_dtype)
        if after == _NEED:
            return _MORE, at, level, memo, row, 0, widest
        if after < 0:
            return _SLOW, at, level, memo, row, 0, widest
        if state[5] > values.shape[1]:
            return _WIDER, at, level, memo, row, state[5], widest
        memo = state[0]
        if not _store(buf, key_at, key_dtype, state[4], state[5], state[6], dtypes, float_rule, keys, values, width,
                      row, state):
            return _FOREIGN, at, level, memo, row, 0, widest
        widest = max(widest, state[5])
        row += 1
        p = after
        if level == _TOP:
            level = _LONE


# --- the walk: what every unpickler reads, checked before anything is allocated ------------------------------------

#: how the walk reads each opcode's argument (pickletools' layouts): nothing, a fixed number of bytes, a length of
#: 1/4/8 bytes and that many bytes (4 signed), one or two text lines, a FRAME, a memo write (1 or 4 bytes, a line),
#: PROTO, STOP, MARK, an opcode that pops to its MARK, an opcode refused outright
(_K_BAD, _K_NONE, _K_FIXED, _K_COUNTED, _K_SIGNED, _K_LINE, _K_LINES, _K_FRAME, _K_PUT, _K_PUTLINE, _K_PROTO,
 _K_STOP, _K_MARK, _K_POPMARK, _K_REFUSED) = range(15)


def _layouts() -> np.ndarray:
    table = np.zeros((256, 2), dtype=np.int64)  # (kind, size); _K_BAD for every byte not listed
    for codes, kind, size in (
            (b"N\x88\x89}])\x8ftabR\x81\x92\x93\x94s02\x85\x86\x87", _K_NONE, 0),
            (b"Khq\x82", _K_FIXED, 1), (b"M\x83", _K_FIXED, 2), (b"Jj\x84", _K_FIXED, 4), (b"G", _K_FIXED, 8),
            (b"CU\x8c\x8a", _K_COUNTED, 1), (b"BX", _K_COUNTED, 4), (b"\x8d\x8e\x96", _K_COUNTED, 8),
            (b"T\x8b", _K_SIGNED, 4), (b"ILFSVg", _K_LINE, 0), (b"c", _K_LINES, 0), (b"\x95", _K_FRAME, 8),
            (b"p", _K_PUTLINE, 0), (b"\x80", _K_PROTO, 1), (b".", _K_STOP, 0), (b"(", _K_MARK, 0),
            (b"tlde1u\x90\x91", _K_POPMARK, 0),
            (b"PQ\x82\x83\x84\x97\x98io", _K_REFUSED, 0)):  # persistent ids, extensions, buffers, INST/OBJ
        for code in codes:
            table[code] = kind, size
    table[_BINPUT], table[_LONG_BINPUT] = (_K_PUT, 1), (_K_PUT, 4)
    return table


_LAYOUT = _layouts()
#: the longest text argument (a protocol 0-3 GLOBAL's module and name, a text int) the walk reads
LINE_BYTES = 1 << 16
#: the deepest nesting of MARKs the walk accepts: a negatives pickle nests two or three (a batch, a tuple, a list)
MARK_DEPTH = 1024
# the walk's state: next position (absolute), end of the current frame and where it was declared, MARK depth,
# opcodes read, where STOP was, why it refused, where, the value it refused, the stream's size (-1 unknown), the
# most opcodes (-1 any), where the last opcode started
(_W_POS, _W_FRAME, _W_FRAME_AT, _W_DEPTH, _W_OPS, _W_STOP, _W_WHY, _W_AT, _W_VALUE, _W_SIZE, _W_MAX_OPS,
 _W_LAST) = range(12)
# why the walk refused (each one a message in _WHY)
(_R_OPCODE, _R_UNSUPPORTED, _R_LINE, _R_NESTED_FRAME, _R_STRADDLE, _R_BEYOND, _R_MEMO, _R_PROTO, _R_DEPTH, _R_OPS,
 _R_NEGATIVE) = range(1, 12)
_WHY = {_R_OPCODE: "opcode 0x{value:02x} at byte {at}, which no pickle protocol has",
        _R_UNSUPPORTED: "opcode 0x{value:02x} at byte {at} (a persistent id, an extension code, an out-of-band "
                        "buffer or INST/OBJ), which no pickle of numpy arrays holds",
        _R_LINE: "a text argument at byte {at} longer than " + f"{LINE_BYTES:,} bytes",
        _R_NESTED_FRAME: "a FRAME at byte {at} inside the frame before it, which pickle refuses",
        _R_STRADDLE: "an opcode at byte {at} running past the end of its frame (byte {value}), which pickle "
                     "refuses",
        _R_BEYOND: "a length at byte {at} that runs to byte {value}, past the end of the pickle (truncated?)",
        _R_MEMO: "a memo index {value} at byte {at}, beyond any memo a pickle this size holds",
        _R_PROTO: "protocol {value} at byte {at}; pickle knows 0 to 5",
        _R_DEPTH: "MARKs nested deeper than " + f"{MARK_DEPTH:,}" + " at byte {at}",
        _R_OPS: "more than {value:,} opcodes (at byte {at}), more than its split's entries can need",
        _R_NEGATIVE: "a negative length at byte {at}"}
# what _walk returns
_WALKED, _STOPPED, _REFUSED = 0, 1, 2


@numba.njit(cache=True, nogil=True)
def _walk(buf: np.ndarray, base: int, eof: bool, layout: np.ndarray, w: np.ndarray) -> int:
    """The opcodes of ``buf`` (the stream's bytes from ``base``) from ``w[_W_POS]`` on, read as pickle reads them
    but nothing built: every length must lie within the stream, each read (an opcode, its argument or length, its
    data) must lie within its frame or start at its end and no FRAME start before the end of the one before
    (pickle.py refuses both; _pickle refuses a frame longer than the stream), memo indices and MARK depth stay
    small, and the opcodes stay within ``w[_W_MAX_OPS]``. A payload is skipped, not read: the position may pass
    the end of ``buf``. Returns _WALKED when the bytes run out (``eof``: the stream ended, and a truncated stream
    is refused), _STOPPED at STOP (its position in ``w[_W_STOP]``), _REFUSED with why, where and the value in
    ``w``."""
    end = base + buf.shape[0]
    # the state in locals for the loop (millions of opcodes a block), written back once
    at, fe, depth, ops, last = w[_W_POS], w[_W_FRAME], w[_W_DEPTH], w[_W_OPS], w[_W_LAST]
    size_known, max_ops = w[_W_SIZE], w[_W_MAX_OPS]
    status, why, value = _WALKED, 0, 0
    while True:
        if at >= end:
            if eof and at > end:
                status, why, value, at = _REFUSED, _R_BEYOND, at, last  # the last opcode's data runs past the end
            break
        code = buf[at - base]
        kind, size = layout[code, 0], layout[code, 1]
        stop = at + 1 + size  # past the opcode and its fixed argument (a counted argument's length)
        if kind == _K_BAD or kind == _K_REFUSED:
            status, why, value = _REFUSED, _R_OPCODE if kind == _K_BAD else _R_UNSUPPORTED, code
            break
        if stop > end:
            if eof:
                status, why, value = _REFUSED, _R_BEYOND, stop
            break
        if kind == _K_COUNTED or kind == _K_SIGNED or kind == _K_FRAME:
            length = 0
            for i in range(size):
                length |= np.int64(buf[at + 1 + i - base]) << (8 * i)
            if size == 8 and buf[at + 8 - base] >= 0x80 or kind == _K_SIGNED and length >= 1 << 31:
                status, why, value = _REFUSED, _R_NEGATIVE if kind == _K_SIGNED else _R_BEYOND, -1
                break
            if kind == _K_FRAME:
                if at + 1 < fe < stop:
                    status, why, value = _REFUSED, _R_STRADDLE, fe
                    break
                if stop < fe:  # bytes of the frame left unread: pickle.py's "new frame before end of current"
                    status, why, value = _REFUSED, _R_NESTED_FRAME, 0
                    break
                if size_known >= 0 and stop + length > size_known:
                    status, why, value = _REFUSED, _R_BEYOND, stop + length
                    break
                fe = stop + length
                w[_W_FRAME_AT] = at
                at = stop
                continue
            stop += length
        elif kind == _K_LINE or kind == _K_LINES or kind == _K_PUTLINE:
            lines = 2 if kind == _K_LINES else 1
            p = at + 1
            while lines and p < end and p - at <= LINE_BYTES:
                if buf[p - base] == 0x0A:
                    lines -= 1
                    if lines == 1:
                        size = p + 1 - (at + 1)  # the first of two lines is read on its own
                p += 1
            if lines:
                if p - at > LINE_BYTES:
                    status, why, value = _REFUSED, _R_LINE, 0
                elif eof:
                    status, why, value = _REFUSED, _R_BEYOND, p + 1
                break
            stop = p
            if kind == _K_PUTLINE:
                index = 0
                for i in range(at + 1, stop - 1):
                    digit = np.int64(buf[i - base]) - 0x30
                    if digit < 0 or digit > 9 or index > at:
                        index = at + 1  # not a decimal index, or beyond the bound already
                        break
                    index = 10 * index + digit
                if index > at:
                    status, why, value = _REFUSED, _R_MEMO, index
                    break
        elif kind == _K_PUT:
            index = 0
            for i in range(size):
                index |= np.int64(buf[at + 1 + i - base]) << (8 * i)
            if index > at:  # _pickle sizes its memo by the largest index: never more than the bytes before it
                status, why, value = _REFUSED, _R_MEMO, index
                break
        elif kind == _K_PROTO:
            if buf[at + 1 - base] > 5:
                status, why, value = _REFUSED, _R_PROTO, buf[at + 1 - base]
                break
        elif kind == _K_MARK:
            depth += 1
            if depth > MARK_DEPTH:
                status, why, value = _REFUSED, _R_DEPTH, 0
                break
        elif kind == _K_POPMARK:
            depth = max(depth - 1, 0)  # a POP on an empty stack pops a MARK too: the depth is an upper bound
        # each read (the opcode, its fixed argument or length, its data) lies within the frame or starts at or
        # after its end, as pickle.py's unframer requires: one that starts inside and ends past it is refused
        if at + 1 < fe < at + 1 + size or at + 1 + size < fe < stop:
            status, why, value = _REFUSED, _R_STRADDLE, fe
            break
        if size_known >= 0 and stop > size_known:
            status, why, value = _REFUSED, _R_BEYOND, stop
            break
        ops += 1
        if 0 <= max_ops < ops:
            status, why, value = _REFUSED, _R_OPS, max_ops
            break
        last = at
        if kind == _K_STOP:
            status = _STOPPED
            w[_W_STOP] = at
            at = stop
            break
        at = stop
    w[_W_POS], w[_W_FRAME], w[_W_DEPTH], w[_W_OPS], w[_W_LAST] = at, fe, depth, ops, last
    if status == _REFUSED:
        w[_W_WHY], w[_W_AT], w[_W_VALUE] = why, at, value
    return status


class _Walk:
    """:func:`_walk` over one stream fed block by block: its state, and the message of a refusal."""

    def __init__(self, member: str, size: int | None, bounds: Bounds | None) -> None:
        self.member, self.stopped = member, False
        self.w = np.zeros(12, dtype=np.int64)
        self.w[_W_SIZE] = -1 if size is None else size
        self.w[_W_MAX_OPS] = -1 if bounds is None else bounds.opcodes

    @property
    def position(self) -> int:
        """Where the walk goes on (the stream's bytes before it are no longer needed)."""
        return int(self.w[_W_POS])

    def feed(self, buf: np.ndarray, base: int, eof: bool) -> None:
        """The stream's bytes ``buf`` from ``base`` (``eof``: the last of them) walked from where the walk stands.

        Raises:
            GenerationError: for what pickle refuses or the bounds do not allow, or a stream ending before STOP.
        """
        if self.stopped:
            return
        arguments = (buf, base, eof, _LAYOUT, self.w)
        announce_compile(_walk, arguments, "the checker of TGB's negatives pickles", "5 s")
        status = _walk(*arguments)
        if status == _REFUSED:
            why = _WHY[int(self.w[_W_WHY])].format(at=int(self.w[_W_AT]), value=int(self.w[_W_VALUE]))
            raise self.refusal(why)
        self.stopped = status == _STOPPED
        if eof and not self.stopped:
            raise self.refusal(f"it ends at byte {base + len(buf):,} before its STOP opcode (truncated?)")

    def finish(self, total: int) -> None:
        """The check left for the stream's end, ``total`` bytes in all: the last frame lies within it.

        Raises:
            GenerationError: if the stream stopped short of STOP or of its last frame's end.
        """
        if not self.stopped:
            raise self.refusal(f"it ends at byte {total:,} before its STOP opcode (truncated?)")
        if self.w[_W_FRAME] > total:
            raise self.refusal(_WHY[_R_BEYOND].format(at=int(self.w[_W_FRAME_AT]), value=int(self.w[_W_FRAME])))

    def refusal(self, why: str) -> GenerationError:
        return GenerationError(f"{self.member}: not a readable pickle ({why}); refusing it (the release may be "
                               "corrupt or not TGB's: download it again)")


def walk(stream: IO[bytes], member: str, bounds: Bounds | None = None, size: int | None = None,
         block_bytes: int = BLOCK_BYTES) -> int:
    """Read ``stream`` to its end as every unpickler reads its opcodes, without building anything, in linear time
    and memory of at most a block: what :func:`~generators.tgb.release.load_pickle` checks before it unpickles.
    ``size`` is the stream's length where known (a length past it is refused at once). Returns the bytes read.

    Raises:
        GenerationError: naming the first opcode pickle would refuse (an unknown opcode, a length past the end, a
            FRAME that does not frame whole opcodes, a memo index beyond the pickle's size, MARKs nested deeper
            than :data:`MARK_DEPTH`), or one of what no negatives pickle holds (persistent ids, extension codes,
            out-of-band buffers, INST/OBJ, more opcodes than ``bounds`` allow).
    """
    walker = _Walk(member, size, bounds)
    pending, base = b"", 0
    while True:
        block = stream.read(block_bytes)
        eof = not block
        raw = pending + block if pending else block
        walker.feed(np.frombuffer(raw, dtype=np.uint8), base, eof)
        total = base + len(raw)
        if eof:
            break
        keep = walker.position - base
        pending, base = (raw[keep:], walker.position) if 0 <= keep < len(raw) and not walker.stopped else (
            b"", total)
    walker.finish(total)
    return total

# --- the Python reader of an entry that defines something ----------------------------------------------------------

class _Foreign(Exception):
    """Not TGB's pattern: the caller unpickles instead."""


class _Global:
    def __init__(self, code: int) -> None:
        self.code = code


class _Dtype:
    """A dtype as numpy pickles it: ``dtype(code, False, True)``, then its state set by BUILD."""

    def __init__(self, name: str) -> None:
        self.name, self.built = name, False


class _Scalar:
    """``scalar(dtype, data)``: one part of a key."""

    def __init__(self, dtype: _Dtype, data: bytes) -> None:
        self.dtype, self.data = dtype, data


class _Array:
    """A 1-d array: its dtype, its bytes and its length."""

    def __init__(self, dtype: _Dtype, data: bytes, length: int) -> None:
        self.dtype, self.data, self.length = dtype, data, length


class _Pending:
    """``_reconstruct(ndarray, (0,), b"b")`` before the BUILD that gives it its data."""


class _Short(Exception):
    """The bytes read so far end inside the entry."""


def _entry(raw: bytes | memoryview, p: int, memo: int, known: dict[int, Any], limit: int
           ) -> tuple[int, int, tuple[_Scalar, ...] | None, _Array | None] | None:
    """One entry read opcode by opcode from ``p``: ``(position after it, memo count, key, value)``, or None where
    ``raw`` ends first; key and value None for an object built, memoised and popped (``scripts/_tgb_scale.py``'s
    encoder defines numpy's classes and dtype that way before the first entry). ``known`` holds the memo entries a
    later entry may refer to (classes, dtypes, strings, the 0- and 1-byte bytes CPython shares), updated in place.
    An entry is read only as far as ``limit`` bytes from ``p``, so that one that never ends (a run of MARKs) costs
    no more than that, however many blocks it spans.

    Raises:
        _Foreign: for anything but numpy's scalar, dtype and 1-d array reconstruction of the dtypes in _DTYPES, or
            an entry longer than ``limit``.
    """
    stack: list[Any] = []
    marks: list[int] = []
    end = min(len(raw), p + limit + 1)

    def take(n: int) -> bytes | memoryview:
        nonlocal p
        if p + n > end:
            raise _Short
        data = raw[p:p + n]
        p += n
        return data

    def pop_mark() -> list[Any]:
        start = marks.pop()
        items = stack[start:]
        del stack[start:]
        return items

    try:
        while True:
            if len(stack) == 2 and not marks and isinstance(stack[1], _Array) and _is_key(stack[0]):
                while p < end and raw[p] in (_MEMOIZE, _BINPUT, _LONG_BINPUT):  # the value's own memo entry
                    code = take(1)[0]
                    if code != _MEMOIZE and int.from_bytes(take(1 if code == _BINPUT else 4), "little") != memo:
                        raise _Foreign
                    memo += 1
                if p >= end:
                    raise _Short  # a memo op may still follow
                return p, memo, stack[0], stack[1]
            code = take(1)[0]
            if code == _FRAME:
                take(8)
            elif code in (_SHORT_BINUNICODE, _BINUNICODE):
                size = take(1)[0] if code == _SHORT_BINUNICODE else int.from_bytes(take(4), "little")
                stack.append(str(take(size), "utf-8", "surrogatepass"))
            elif code in (_SHORT_BINBYTES, _BINBYTES, _BINBYTES8, _BYTEARRAY8):
                size = {_SHORT_BINBYTES: 1, _BINBYTES: 4}.get(code, 8)
                stack.append(bytes(take(int.from_bytes(take(size), "little"))))
            elif code in (_BININT1, _BININT2, _BININT):
                size = {_BININT1: 1, _BININT2: 2}.get(code, 4)
                stack.append(int.from_bytes(take(size), "little", signed=size == 4))
            elif code in (_NONE, _NEWTRUE, _NEWFALSE):
                stack.append({_NONE: None, _NEWTRUE: True, _NEWFALSE: False}[code])
            elif code == _MARK:
                marks.append(len(stack))
            elif code == _TUPLE:
                stack.append(tuple(pop_mark()))
            elif code in (_TUPLE1, _TUPLE2, _TUPLE3, _EMPTY_TUPLE):
                size = {_TUPLE1: 1, _TUPLE2: 2, _TUPLE3: 3}.get(code, 0)
                if len(stack) - (marks[-1] if marks else 0) < size:
                    raise _Foreign
                items = tuple(stack[len(stack) - size:])
                del stack[len(stack) - size:]
                stack.append(items)
            elif code == _STACK_GLOBAL:
                name, module = stack.pop(), stack.pop()
                if not isinstance(name, str) or not isinstance(module, str) or (module, name) not in _GLOBALS:
                    raise _Foreign
                stack.append(_Global(_GLOBALS[(module, name)]))
            elif code == _REDUCE:
                args = stack.pop()
                stack.append(_reduced(stack.pop(), args))
            elif code == _BUILD:
                state = stack.pop()
                stack[-1] = _build(stack[-1], state)
            elif code in (_MEMOIZE, _BINPUT, _LONG_BINPUT):
                if code != _MEMOIZE and int.from_bytes(take(1 if code == _BINPUT else 4), "little") != memo:
                    raise _Foreign
                top = stack[-1]
                if isinstance(top, (str, _Global, _Dtype)) or isinstance(top, bytes) and len(top) < 2:
                    known[memo] = top
                memo += 1
            elif code == _POP:
                stack.pop()
                if not stack and not marks:  # an object built only to be memoised (a writer's prelude): no entry
                    return p, memo, None, None
            elif code in (_BINGET, _LONG_BINGET):
                index = int.from_bytes(take(1 if code == _BINGET else 4), "little")
                if index not in known:
                    raise _Foreign
                stack.append(known[index])
            else:
                raise _Foreign
    except _Short:
        if end < len(raw):
            raise _Foreign from None  # longer than any entry the bounds allow: unpickling refuses it
        return None
    except (IndexError, ValueError, TypeError) as exc:  # a stack that does not hold what the opcode takes
        raise _Foreign from exc


def _is_key(item: object) -> bool:
    return type(item) is tuple and len(item) == 3 and all(isinstance(part, _Scalar) for part in item)


def _reduced(callable_: Any, args: Any) -> Any:
    if not isinstance(callable_, _Global) or type(args) is not tuple:
        raise _Foreign
    if callable_.code == _DTYPE and len(args) == 3 and isinstance(args[0], str) and args[0] in _DTYPES and (
            args[1] is False and args[2] is True):
        return _Dtype(args[0])
    if callable_.code == _SCALAR and len(args) == 2 and _built(args[0]) and isinstance(args[1], bytes) and len(
            args[1]) == _DTYPES[args[0].name][1]:
        return _Scalar(args[0], args[1])
    if callable_.code == _FROMBUFFER and len(args) == 4 and isinstance(args[0], bytes) and _built(args[1]) and (
            args[3] == "C"):
        return _array(args[1], args[2], args[0])
    if callable_.code == _RECONSTRUCT and len(args) == 3 and isinstance(args[0], _Global) and (
            args[0].code == _NDARRAY and args[1] == (0,) and args[2] == b"b"):
        return _Pending()
    raise _Foreign


def _built(item: object) -> bool:
    return isinstance(item, _Dtype) and item.built


def _array(dtype: _Dtype, shape: object, data: bytes) -> _Array:
    if not (type(shape) is tuple and len(shape) == 1 and type(shape[0]) is int and shape[0] >= 0
            and len(data) == shape[0] * _DTYPES[dtype.name][1]):
        raise _Foreign
    return _Array(dtype, data, shape[0])


def _build(item: Any, state: Any) -> Any:
    """``item`` with its BUILD state: a dtype's (only the plain little-endian one), a reconstructed array's data."""
    plain = (3, "|" if isinstance(item, _Dtype) and _DTYPES[item.name][1] == 1 else "<", None, None, None, -1, -1, 0)
    if isinstance(item, _Dtype) and not item.built and type(state) is tuple and len(state) == 8 and all(
            a is b if b is None else type(a) is type(b) and a == b for a, b in zip(state, plain, strict=True)):
        item.built = True  # in place: the memo holds the same object
        return item
    if isinstance(item, _Pending) and type(state) is tuple and len(state) == 5 and state[0] == 1 and _built(
            state[2]) and state[3] is False and isinstance(state[4], bytes):
        return _array(state[2], state[1], state[4])
    raise _Foreign


# --- the reader ------------------------------------------------------------------------------------------------------

def scan(stream: IO[bytes], block_bytes: int = BLOCK_BYTES, read: Callable[[int], object] | None = None,
         bounds: Bounds | None = None, size: int | None = None) -> ScannedNegatives | None:
    """A TGB negatives pickle read from ``stream`` (:meth:`Release.open <generators.tgb.release.Release>`'s,
    decompressed as read) ``block_bytes`` at a time, as :class:`ScannedNegatives`; None where it is not the
    pattern py-tgb's ``pickle.dump`` writes, or not within ``bounds`` (its split's entries and width), or where
    :func:`walk` finds what pickle refuses: the caller unpickles it instead, which refuses it with the reason.
    ``size`` is the stream's length where known; ``read(n)`` is told each block's size (a progress bar in bytes).

    What is allocated stays within twice the entries read (at least :data:`FIRST_CHUNK_ROWS`; chunks grow with
    them) times twice the widest entry (within ``bounds.width``); an entry the bounds cannot hold (longer than
    ``8 * width`` bytes and room for its key and reconstruction) is never gathered whole.

    Raises:
        nothing of its own: a stream that fails to read also returns None (unpickling it says why).
    """
    try:
        return _Scan(stream, block_bytes, read, bounds, size).run()
    except _Foreign:
        return None


def scan_chunks(stream: IO[bytes], sink: Sink, block_bytes: int = BLOCK_BYTES,
                read: Callable[[int], object] | None = None, bounds: Bounds | None = None, size: int | None = None,
                chunk_rows: int = CHUNK_ROWS) -> int | None:
    """What :func:`scan` reads, handed to ``sink`` chunk by chunk (at most ``chunk_rows`` entries and
    :data:`SINK_CHUNK_BYTES` of values each) instead of joined: the scan then holds one chunk and one block of the
    stream, whatever the pickle's length. The other arguments are :func:`scan`'s.

    Returns:
        the longest entry read (the width :func:`scan` would give its matrix), or None where :func:`scan` returns
        None; the sink may have been handed chunks before the scan gave up.

    Raises:
        whatever ``sink`` raises; nothing of its own.
    """
    try:
        scanner = _Scan(stream, block_bytes, read, bounds, size, sink, chunk_rows)
        scanner.entries()
    except _Foreign:
        return None
    return scanner.widest


class _Scan:
    """The state of one :func:`scan`: the bytes not yet read, the memo, and the chunks of rows read so far (or,
    given a sink, handed to it)."""

    def __init__(self, stream: IO[bytes], block_bytes: int, read: Callable[[int], object] | None,
                 bounds: Bounds | None, size: int | None, sink: Sink | None = None,
                 chunk_rows: int = CHUNK_ROWS) -> None:
        self.stream, self.block_bytes, self.read = stream, max(1, block_bytes), read
        self.sink, self.chunk_rows = sink, max(1, chunk_rows)
        # the stream's bytes from position `base` are buf[:filled], those from p on not read yet; filled in place,
        # so that a block never exists twice (the bytes kept from the last one are moved to the front)
        self.buf, self.filled, self.p, self.eof = np.empty(0, dtype=np.uint8), 0, 0, False
        self.base = 0
        self.walk = _Walk("", size, bounds)  # what pickle refuses: the scan gives up, unpickling refuses
        self.max_entries = bounds.entries if bounds is not None else None
        self.max_width = bounds.width if bounds is not None else UNBOUNDED_WIDTH
        self.entry_bytes = 8 * self.max_width + BYTES_PER_ENTRY + (1 << 16)  # the most one entry may span
        self.known: dict[int, Any] = {}
        self.dtypes: list[tuple[int, int]] = []
        self.refs = np.zeros((0, 2), dtype=np.int64)
        self.chunks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.rows = 0  # rows in the finished chunks
        self.widest = 0  # the longest entry read
        self.float_rule = True  # a key with a fraction is no edge's: (-1, -1, -1), as convert_negatives' _keys

    @property
    def raw(self) -> np.ndarray:
        """The stream's bytes read and kept, from position ``base``: a read-only view of the buffer (the kernels
        are compiled for read-only bytes)."""
        raw = self.buf[:self.filled]
        raw.flags.writeable = False
        return raw

    def more(self) -> None:
        """The next block of the stream read after the bytes not read yet (moved to the front of the buffer)."""
        if self.eof:
            raise _Foreign  # truncated: unpickling says so
        left = self.filled - self.p
        if left > self.entry_bytes:
            raise _Foreign  # an entry longer than the bounds allow: never gathered, unpickling refuses it
        self.buf[:left] = self.buf[self.p:self.filled]  # numpy copies overlapping slices as if they did not overlap
        self.base += self.p
        self.filled, self.p = left, 0
        added = 0
        for piece in self.pieces():
            self.put(piece)
            added += len(piece)
        if self.read is not None:
            self.read(added)
        self.eof = not added
        try:
            self.walk.feed(self.raw, self.base, self.eof)
        except GenerationError as exc:
            raise _Foreign from exc

    def pieces(self) -> Iterator[bytes]:
        """Up to a block of the stream (less only at its end), :data:`READ_BYTES` a call."""
        added = 0
        while added < self.block_bytes:
            try:
                piece = self.stream.read(min(READ_BYTES, self.block_bytes - added))
            except Exception as exc:  # a stream that fails to read: unpickling meets it again and reports it
                raise _Foreign from exc
            if not piece:
                return
            added += len(piece)
            yield piece

    def put(self, piece: bytes) -> None:
        """``piece`` after the bytes in the buffer; the buffer is made once, as large as a block and the longest
        entry the bounds allow (the most kept from one block to the next), and grows only for a stream that
        gives more than asked. Its pages are touched only as they fill."""
        end = self.filled + len(piece)
        if end > len(self.buf):
            grown = np.empty(max(end, self.block_bytes + self.entry_bytes + 1), dtype=np.uint8)
            grown[:self.filled] = self.buf[:self.filled]
            self.buf = grown
        self.buf[self.filled:end] = np.frombuffer(piece, dtype=np.uint8)
        self.filled = end

    def header(self) -> int:
        """Past PROTO, the EMPTY_DICT and its memo entry; returns the memo count."""
        while self.filled < 32 and not self.eof:
            self.more()
        raw = self.raw
        if len(raw) < 4 or raw[0] != _PROTO or raw[1] not in (4, 5):
            raise _Foreign
        p = 2
        while p < len(raw) and raw[p] == _FRAME:
            p += 9
        if p >= len(raw) or raw[p] != _EMPTY_DICT:
            raise _Foreign
        p += 1
        memo = 0
        if p < len(raw) and raw[p] == _MEMOIZE:
            p, memo = p + 1, 1
        self.p = p
        return memo

    def run(self) -> ScannedNegatives:
        self.entries()
        return self.joined()

    def entries(self) -> None:
        """Every entry read into the chunks (or handed to the sink), the stream read to its end."""
        memo = self.header()
        level = _TOP
        keys, values, width = self.chunk(0)
        row = 0
        while True:
            arguments = (self.raw, self.p, level, memo, self.refs, self.table(),
                         self.float_rule, keys, values, width, row, self.widest)
            announce_compile(_scan, arguments, "the reader of TGB's negatives pickles", "10 s")
            status, self.p, level, memo, row, wider, self.widest = _scan(*arguments)
            if status == _DONE:
                break
            if status == _MORE:
                self.more()
            elif status == _FULL:
                keys, values, width, row = self.full(keys, values, width, row)
            elif status == _WIDER:
                keys, values, width, row = self.wider(keys, values, width, row, wider)
            elif status == _SLOW:
                read = _entry(self.raw.data, self.p, memo, self.known, self.entry_bytes)
                if len(self.known) > KNOWN_OBJECTS:
                    raise _Foreign
                if read is None:
                    self.more()
                    continue
                after, memo_after, key, value = read
                if key is None or value is None:
                    self.p, memo = after, memo_after
                    self.learn()
                    continue
                if row == len(keys):
                    keys, values, width, row = self.full(keys, values, width, row)
                if value.length > values.shape[1]:
                    keys, values, width, row = self.wider(keys, values, width, row, value.length)
                self.learn()
                self.store(key, value, keys, values, width, row)
                self.widest = max(self.widest, value.length)
                row += 1
                self.p, memo = after, memo_after
                if level == _TOP:
                    level = _LONE
            else:
                raise _Foreign
        self.finish(self.base + self.p - 1)
        self.kept(keys, values, width, row)

    def finish(self, stop: int) -> None:
        """The stream read to its end after STOP (at ``stop``), so that the walk checks the last frame's length
        as pickle does; gives up if the walk did not find STOP where the scan did."""
        if not self.walk.stopped or int(self.walk.w[_W_STOP]) != stop:
            raise _Foreign
        total = self.base + self.filled
        self.buf, self.filled, self.p, self.base = np.empty(0, dtype=np.uint8), 0, 0, total
        while not self.eof:
            added = sum(len(piece) for piece in self.pieces())
            if self.read is not None:
                self.read(added)
            self.eof = not added
            total += added
        try:
            self.walk.finish(total)
        except GenerationError as exc:
            raise _Foreign from exc

    def full(self, keys: np.ndarray, values: np.ndarray, width: np.ndarray, row: int
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """A full chunk kept and a new one begun (as wide as the last)."""
        self.kept(keys, values, width, row)
        keys, values, width = self.chunk(values.shape[1], (keys, values, width))
        return keys, values, width, 0

    def kept(self, keys: np.ndarray, values: np.ndarray, width: np.ndarray, row: int) -> None:
        """The chunk's first ``row`` rows kept (or handed to the sink), unless the entries pass the bounds."""
        self.rows += row
        if self.max_entries is not None and self.rows > self.max_entries:
            raise _Foreign  # more entries than the split has edges: unpickling counts the dict's and refuses
        if self.sink is None:
            self.chunks.append((keys[:row], values[:row], width[:row]))
        else:
            self.sink(keys[:row], values[:row], width[:row])

    def chunk(self, q: int, spent: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """An empty chunk ``q`` wide, of as many rows as all chunks so far (from :data:`FIRST_CHUNK_ROWS` to
        :data:`CHUNK_ROWS`), never more than one past the entries the bounds allow (that one tells the bound
        was passed). Given a sink, the chunk just handed to it (``spent``) is reused where it has that shape: a
        sink copies what it keeps, and every row is written whole before it is handed over."""
        rows = min(self.chunk_rows, max(FIRST_CHUNK_ROWS, self.rows))
        if self.sink is not None:
            rows = min(rows, max(1, SINK_CHUNK_BYTES // (4 * max(q, 1))))
        if self.max_entries is not None:
            rows = max(1, min(rows, self.max_entries + 1 - self.rows))
        if self.sink is not None and spent is not None and spent[1].shape == (rows, q):
            return spent
        return (np.empty((rows, 3), dtype=np.int64), np.empty((rows, q), dtype=np.int32),
                np.empty(rows, dtype=np.int64))

    def wider(self, keys: np.ndarray, values: np.ndarray, width: np.ndarray, row: int, q: int
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """The chunk made to hold an entry of ``q`` negatives: widened (:meth:`widened`), or, given a sink and where
        the wider chunk would pass :data:`SINK_CHUNK_BYTES`, its rows handed over and a new one begun that wide."""
        if q > self.max_width:
            raise _Foreign  # unpickling refuses it
        wide = min(max(q, 2 * values.shape[1]), self.max_width)
        if self.sink is not None and 4 * len(values) * wide > SINK_CHUNK_BYTES:
            if row:
                self.kept(keys, values, width, row)
            keys, values, width = self.chunk(wide)
            return keys, values, width, 0
        return keys, self.widened(values, q), width, row

    def widened(self, values: np.ndarray, q: int) -> np.ndarray:
        """The chunk's values widened to hold ``q`` (at least doubled, so that a pickle of ever longer entries
        copies each chunk a few times, not once an entry); an entry wider than the bounds allow is left to
        unpickling, which refuses it."""
        if q > self.max_width:
            raise _Foreign
        q = min(max(q, 2 * values.shape[1]), self.max_width)
        wider = np.full((len(values), q), -1, dtype=np.int32)
        wider[:, :values.shape[1]] = values
        return wider

    def table(self) -> np.ndarray:
        return np.array(self.dtypes, dtype=np.int64).reshape(-1, 2)

    def dtype_row(self, dtype: _Dtype) -> int:
        described = _DTYPES[dtype.name]
        if described not in self.dtypes:
            self.dtypes.append(described)
        return self.dtypes.index(described)

    def learn(self) -> None:
        """The memo entries the compiled scan may meet, with their codes (dtypes by their row in the table)."""
        refs = []
        for index, item in self.known.items():
            if isinstance(item, _Global) and item.code != _DTYPE:
                refs.append((index, item.code))
            elif isinstance(item, _Dtype) and item.built:
                refs.append((index, _DTYPE + self.dtype_row(item)))
            elif item == "C" or item == b"b":
                refs.append((index, _ORDER_C if item == "C" else _BYTES_B))
        self.refs = np.array(refs, dtype=np.int64).reshape(-1, 2)

    def store(self, key: tuple[_Scalar, ...], value: _Array, keys: np.ndarray, values: np.ndarray,
              width: np.ndarray, row: int) -> None:
        raw = b"".join(part.data for part in key) + value.data
        at = np.cumsum([0] + [len(part.data) for part in key])
        if not _store(np.frombuffer(raw, dtype=np.uint8), at[:3].astype(np.int64),
                      np.array([self.dtype_row(part.dtype) for part in key], dtype=np.int64), int(at[3]),
                      value.length, self.dtype_row(value.dtype), self.table(), self.float_rule, keys, values, width,
                      row, np.zeros(8, dtype=np.int64)):
            raise _Foreign

    def joined(self) -> ScannedNegatives:
        """The chunks as one matrix as wide as the widest entry, each chunk dropped once copied (the outputs'
        pages are touched as they fill, so the chunks and the outputs are never both whole)."""
        size = sum(len(keys) for keys, _, _ in self.chunks)
        q = self.widest
        keys, matrix, width = np.empty((size, 3), dtype=np.int64), np.empty((size, q), dtype=np.int32), np.empty(
            size, dtype=np.int64)
        start = 0
        self.chunks.reverse()
        while self.chunks:
            chunk = self.chunks.pop()
            stop = start + len(chunk[0])
            keys[start:stop], width[start:stop] = chunk[0], chunk[2]
            held = min(q, chunk[1].shape[1])
            matrix[start:stop, :held] = chunk[1][:, :held]
            matrix[start:stop, held:] = -1
            start = stop
            del chunk
        return ScannedNegatives(keys, matrix, width)
