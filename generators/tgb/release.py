"""Reading one TGB release zip exactly as py-tgb 2.3.0 reads its files, without executing anything it contains.

A release zip is flat (py-tgb extracts it into the dataset folder): CSV files with one header line that py-tgb
skips and columns read by position, and the evaluation negatives as Python pickles (dicts keyed by tuples of numpy
integers). A pickle can run arbitrary code when loaded, and the release has no checksum (py-tgb records only a
version integer), so :func:`load_pickle` unpickles with an allow-list: numpy arrays, dtypes and scalars, and the builtin
containers; anything else is refused, naming the class it asked for. numpy's reconstruction is replaced by stand-ins
that check each size before numpy allocates it, after a linear walk of the opcodes
(:func:`~generators.tgb.negpickle.walk`) has refused what pickle would refuse or could not read in bounded memory.
"""

from __future__ import annotations

import builtins
import gc
import io
import math
import pickle
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol, cast

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from tgbhub.errors import GenerationError

if TYPE_CHECKING:
    from .negpickle import Bounds

#: numpy's reconstruction functions by the names pickles give them (numpy 1's ``numpy.core``, numpy 2's
#: ``numpy._core``), each replaced while unpickling by a stand-in that checks its arguments first (below)
_NUMPY = {("numpy.core.multiarray", "_reconstruct"): "_reconstruct", ("numpy._core.multiarray", "_reconstruct"):
          "_reconstruct", ("numpy.core.multiarray", "scalar"): "scalar", ("numpy._core.multiarray", "scalar"): "scalar",
          ("numpy", "ndarray"): "ndarray", ("numpy", "dtype"): "dtype", ("numpy.core.numeric", "_frombuffer"):
          "_frombuffer", ("numpy._core.numeric", "_frombuffer"): "_frombuffer"}
#: the builtins a pickle may call (protocols before 4 build sets with ``set(list)``)
_BUILTINS = ("tuple", "dict", "list", "int", "float", "set", "frozenset")
#: the dtypes a negatives pickle may hold: numpy's plain numbers (the conversion then refuses all but integers and
#: floats, naming the dtype); anything else (object, void, strings, datetimes, structured) is refused as it is
#: unpickled, before numpy builds anything with it
_PLAIN_DTYPES = frozenset({"b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16"})
_numpy_scalar = np.int64(0).__reduce__()[0]  # numpy's own scalar(dtype, bytes), whatever its module


def _refuse(what: str) -> GenerationError:
    return GenerationError(f"the pickle holds {what}, which a TGB negatives file never does; refusing to load it (the "
                           "release may be corrupt or not TGB's)")


class _PickledDtype:
    """``numpy.dtype(code, align, copy)`` as a pickle asks for it, kept from numpy until its state is known: BUILD
    may give it only the state numpy writes for a plain number (a byte order, nothing else), and only before
    anything is built with it (numpy's own dtype would take any state, object flags included, and change every
    array built with it). :meth:`resolve` gives the numpy dtype."""

    def __init__(self, code: object, align: object = False, copy: object = True) -> None:
        if type(code) is not str or code not in _PLAIN_DTYPES:
            raise _refuse(f"the numpy dtype {code!r:.40} (integer and float arrays only)")
        self.code, self.order, self.built, self.used = code, "|", False, False
        self.dtype: np.dtype | None = None

    def __setstate__(self, state: object) -> None:
        orders = ("|",) if np.dtype(self.code).itemsize == 1 else ("<", ">")  # what numpy writes, nothing else
        if self.built or self.used or not (type(state) is tuple and len(state) == 8 and type(state[0]) is int
                                           and state[0] == 3 and type(state[1]) is str and state[1] in orders
                                           and all(part is None for part in state[2:5])
                                           and all(type(part) is int for part in state[5:])
                                           and state[5:] == (-1, -1, 0)):
            raise _refuse(f"the numpy dtype {self.code} with the state {state!r:.80} (not a plain number's)")
        self.order, self.built = state[1], True

    def resolve(self) -> np.dtype:
        if self.dtype is None:  # once: its state cannot change after this (BUILD then refuses)
            self.used = True
            dtype = np.dtype(self.code)
            self.dtype = dtype if self.order == "|" else dtype.newbyteorder("<" if self.order == "<" else ">")
        return self.dtype


def _dtype_of(item: object) -> np.dtype:
    if not isinstance(item, _PickledDtype):
        raise _refuse(f"a {type(item).__name__} where numpy pickles a dtype")
    return item.resolve()


def _shape_of(item: object) -> tuple[int, ...]:
    if type(item) is not tuple or not all(type(n) is int and n >= 0 for n in item):
        raise _refuse(f"the array shape {item!r:.60}")
    return item


class _Unbuilt(np.ndarray):
    """An array ``_reconstruct`` made, empty until BUILD gives it its state, which is checked first: a shape, a
    plain dtype and exactly the bytes that shape takes (numpy would allocate the shape before it looks at the
    bytes; with an object dtype and a short list it crashes)."""

    built = False

    def __setstate__(self, state: Any) -> None:
        if not (type(state) is tuple and len(state) == 5 and type(state[0]) is int and state[0] == 1
                and type(state[3]) is bool
                and isinstance(state[4], (bytes, bytearray))):
            raise _refuse(f"an array state {state!r:.80} (numpy writes (1, shape, dtype, fortran, bytes))")
        shape, dtype = _shape_of(state[1]), _dtype_of(state[2])
        if len(state[4]) != math.prod(shape) * dtype.itemsize:
            raise _refuse(f"an array of shape {shape} and dtype {dtype} with {len(state[4]):,} bytes of data")
        super().__setstate__(cast(Any, (1, shape, dtype, state[3], state[4])))
        self.built = True


class _StandIns:
    """What :class:`_NumpyOnly` gives for each allowed name: numpy's reconstruction behind checks, and the builtins
    with a budget of elements (``list(x)`` copies ``x``; a pickle may call it on one large object many times)."""

    def __init__(self, budget: int) -> None:
        self.budget = budget

    def spend(self, size: int) -> None:
        self.budget -= size
        if self.budget < 0:
            raise _refuse("more elements copied by builtin calls than the pickle has bytes")

    def get(self, module: str, name: str) -> Any:
        what = _NUMPY.get((module, name))
        if what == "ndarray":
            return _NDARRAY
        if what is not None:
            return getattr(self, what)
        if module == "builtins" and name in _BUILTINS:
            return self.builtin(getattr(builtins, name))
        return None

    @staticmethod
    def dtype(code: object, align: object = False, copy: object = True) -> _PickledDtype:
        return _PickledDtype(code, align, copy)

    @staticmethod
    def scalar(dtype: object, data: object) -> Any:
        resolved = _dtype_of(dtype)
        if not isinstance(data, bytes) or len(data) != resolved.itemsize:
            raise _refuse(f"a numpy {resolved} scalar of {data!r:.40}")
        return _numpy_scalar(resolved, data)

    @staticmethod
    def _frombuffer(buf: object, dtype: object, shape: object, order: object) -> np.ndarray:
        resolved, dims = _dtype_of(dtype), _shape_of(shape)
        if not isinstance(buf, (bytes, bytearray)) or type(order) is not str or order not in ("C", "F") or (
                len(buf) != math.prod(dims) * resolved.itemsize):
            raise _refuse(f"an array of shape {dims} and dtype {resolved} from {type(buf).__name__} data")
        return np.frombuffer(buf, dtype=resolved).reshape(dims, order="F" if order == "F" else "C")

    @staticmethod
    def _reconstruct(cls: object, shape: object, dtype: object) -> _Unbuilt:
        if cls is not _NDARRAY:
            raise _refuse(f"a {type(cls).__name__} where numpy pickles its ndarray class")
        _shape_of(shape)  # numpy writes (0,); the shape BUILD gives is the array's, allocated once checked
        return np.ndarray.__new__(_Unbuilt, (0,), dtype=np.int8)

    def builtin(self, kind: type) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            if args and kind not in (int, float):
                if not hasattr(args[0], "__len__"):
                    raise _refuse(f"{kind.__name__}() of a {type(args[0]).__name__}")
                self.spend(len(args[0]))
            return kind(*args)
        return call


class _Marker:
    """numpy's ndarray class, as a pickle names it for ``_reconstruct``: nothing else may be done with it."""


_NDARRAY = _Marker()


class _NumpyOnly(pickle.Unpickler):
    def __init__(self, file: IO[bytes], budget: int) -> None:
        super().__init__(file)
        self.stand_ins = _StandIns(budget)

    def find_class(self, module: str, name: str) -> Any:
        found = self.stand_ins.get(module, name)
        if found is None:
            raise GenerationError(f"the pickle asks for {module}.{name}, which a TGB negatives file never needs; "
                                  "refusing to load it (the release may be corrupt or not TGB's)")
        return found


class Stage(Protocol):
    """What a converter uses of a stage's progress (tqdm's names): count units, name the current item, end."""

    def update(self, n: float = 1) -> object: ...

    def set_postfix_str(self, s: str = "") -> object: ...

    def close(self) -> object: ...


#: how an import shows the progress of one stage (reading, numbering, sorting, negatives, writing):
#: ``progress(description, total, unit)`` gives a :class:`Stage`. The client hands in its own
#: (:func:`tgbhub.progress.counter`: a bar, lines off a terminal, nothing under ``--quiet``); the default is silent.
ProgressFactory = Callable[[str, "float | None", str], Stage]


class _Silent:
    def update(self, n: float = 1) -> None:
        pass

    def set_postfix_str(self, s: str = "") -> None:
        pass

    def close(self) -> None:
        pass


def silent(description: str, total: float | None = None, unit: str = "it") -> Stage:
    """A :data:`ProgressFactory` that shows nothing."""
    return _Silent()


class Release:
    """An opened release zip: its members by name, and how its conversion shows progress (``progress``, a
    :data:`ProgressFactory`; silent unless the client hands one in). Nothing is extracted to disk.

    Raises (on construction):
        GenerationError: if the file is not a readable zip or lacks a member the dataset needs.
    """

    def __init__(self, path: Path, needed: Mapping[str, str], progress: ProgressFactory | None = None) -> None:
        self.path = path
        self.progress: ProgressFactory = progress or silent
        try:
            self._zip = zipfile.ZipFile(path)
            broken = self._zip.testzip()
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise GenerationError(f"{path} is not a readable zip ({exc}); download it again (a truncated download "
                                  "or an HTML error page saved as .zip looks like this)") from exc
        if broken is not None:
            raise GenerationError(f"{path}: member {broken} fails its CRC check; download the zip again")
        names = {Path(n).name: n for n in self._zip.namelist() if not n.endswith("/")}
        missing = [file for file in needed.values() if file not in names]
        if missing:
            raise GenerationError(f"{path} lacks {', '.join(missing)} (it holds "
                                  f"{', '.join(sorted(names)) or 'nothing'}); is it the release of another dataset or "
                                  "TGB version?")
        self._names = names

    def read(self, member: str) -> bytes:
        return self._zip.read(self._names[member])

    def open(self, member: str) -> IO[bytes]:
        """``member`` as a stream, decompressed as it is read: a large CSV or pickle is never held as bytes."""
        return self._zip.open(self._names[member])

    def size(self, member: str) -> int:
        """``member``'s size once decompressed, in bytes (what a stage reading it counts to)."""
        return self._zip.getinfo(self._names[member]).file_size

    def close(self) -> None:
        self._zip.close()


#: ``read_csv(..., strings=EVERY_COLUMN)`` reads every column as text (no TGB CSV has this many columns)
EVERY_COLUMN = range(4096)


def read_csv(data: bytes, member: str, strings: Iterable[int] = ()) -> list[pa.Array]:
    """The columns of a TGB CSV by position (its one header line skipped, as py-tgb does), each one contiguous array;
    the columns at ``strings`` (:data:`EVERY_COLUMN`: all) are read as text, as py-tgb's ``csv.reader`` loops read
    raw ids (``"007"`` is not ``"7"``, ``Q1`` stays ``Q1``, ``NA`` is not a missing value). Text is ``large_string``:
    a column of tens of millions of ids (tkgl-wikidata's static edges) outgrows 32-bit offsets once concatenated.

    Raises:
        GenerationError: if the CSV cannot be parsed.
    """
    convert = pcsv.ConvertOptions(column_types={f"f{i}": pa.large_string() for i in strings})
    try:
        table = pcsv.read_csv(io.BytesIO(data), read_options=pcsv.ReadOptions(skip_rows=1,
                                                                              autogenerate_column_names=True),
                              convert_options=convert)
    except pa.ArrowInvalid as exc:
        raise GenerationError(f"{member}: not a CSV in TGB's layout ({exc})") from exc
    return [column.combine_chunks() for column in table.columns]


#: bytes of CSV text per block of :func:`csv_blocks`: large enough that Arrow's per-block work is negligible, small
#: enough that the blocks Arrow parses ahead stay a few tens of MB (16 MB blocks: 135 MB of Arrow memory at once)
CSV_BLOCK_BYTES = 4 << 20


def csv_blocks(release: Release, member: str, strings: Iterable[int] = (),
               block_size: int | None = None) -> Iterator[list[pa.Array]]:
    """The columns of a TGB CSV by position, block by block of ``block_size`` bytes (default
    :data:`CSV_BLOCK_BYTES`, read when called), as :func:`read_csv` reads them.

    Arrow's streaming reader infers each column's type from the first block; a column whose later values need
    another type (integers, then a decimal) cannot be read that way, and nothing but a whole-file read gives the
    type :func:`read_csv` infers, so such a CSV (and one Arrow cannot parse at all, for :func:`read_csv`'s error)
    is read whole instead and yielded as one block. A caller must therefore accumulate nothing it cannot drop
    before the first block it is given again: :class:`WholeRead` tells it to start over.

    Raises:
        WholeRead: when streaming fails after blocks were yielded (the caller restarts with the one whole block).
        GenerationError: if the CSV cannot be parsed.
    """
    convert = pcsv.ConvertOptions(column_types={f"f{i}": pa.large_string() for i in strings})
    options = pcsv.ReadOptions(skip_rows=1, autogenerate_column_names=True,
                                 block_size=block_size or CSV_BLOCK_BYTES)
    yielded = False
    try:
        with release.open(member) as stream, pcsv.open_csv(stream, read_options=options,
                                                           convert_options=convert) as reader:
            for batch in reader:
                if batch.num_rows:
                    yielded = True
                    yield list(batch.columns)
    except pa.ArrowInvalid as exc:
        whole = read_csv(release.read(member), member, strings)  # raises read_csv's error if Arrow cannot parse it
        if yielded:
            raise WholeRead(whole) from exc
        yield whole


class WholeRead(Exception):
    """:func:`csv_blocks` had to read the CSV whole after yielding blocks: ``columns`` is the whole CSV."""

    def __init__(self, columns: list[pa.Array]) -> None:
        super().__init__("the CSV's column types change after its first block; read whole")
        self.columns = columns


def columns_at_least(columns: list[pa.Array], count: int, member: str, expected: str) -> None:
    """Raises GenerationError if the CSV has fewer than ``count`` columns (``expected`` names them)."""
    if len(columns) < count:
        raise GenerationError(f"{member}: {len(columns)} columns; expected {expected} (read by position, as py-tgb "
                              "does: is it another dataset's file?)")


def integers(column: pa.Array, member: str, what: str) -> np.ndarray:
    """An integer CSV column as int64, as py-tgb's ``int(row[k])`` reads it.

    Raises:
        GenerationError: if the column holds anything but integers (or an empty field).
    """
    if not pa.types.is_integer(column.type) or column.null_count:
        found = f"{column.type} values" + (" and empty fields" if column.null_count else "")
        raise GenerationError(f"{member}: {what} holds {found}; py-tgb reads it with int(), so it must hold integers "
                              "only")
    return column.to_numpy().astype(np.int64)


def load_pickle(data: bytes | IO[bytes], member: str, bounds: Bounds | None = None, size: int | None = None
                ) -> dict[Any, Any]:
    """A TGB negatives pickle (its bytes, or a seekable stream such as :meth:`Release.open`'s, which spares holding
    the bytes beside the dict), loaded with numpy arrays and builtin containers only.

    The stream is first read whole by :func:`~generators.tgb.negpickle.walk`, which refuses in linear time and
    memory what pickle would refuse (or allocate without bound: lengths past the end, frames that do not frame, a
    memo index beyond the pickle's size, MARKs nested without end) and, with ``bounds`` (its split's), more
    opcodes than its entries can need; ``size`` is the stream's length where known. Then it is unpickled with
    numpy's reconstruction behind checks: plain numeric dtypes only, an array's bytes exactly what its shape takes
    before numpy allocates it, and the builtins' copies within the pickle's size.

    Raises:
        GenerationError: if it is not such a pickle or asks for anything else.
    """
    from .negpickle import walk  # compiled (numba): imported by the import that needs it, not by `tgbhub list`

    stream = io.BytesIO(data) if isinstance(data, bytes) else data
    start = stream.tell()
    total = walk(stream, member, bounds, len(data) if isinstance(data, bytes) else size)
    collecting = gc.isenabled()
    gc.disable()  # millions of small objects and no cycles: the collector's passes over them cost more than the load
    try:
        stream.seek(start)
        loaded = _NumpyOnly(stream, total if bounds is None else max(total, bounds.opcodes)).load()
    except GenerationError as exc:
        raise GenerationError(f"{member}: {exc}") from exc
    except Exception as exc:  # unpickling raises many kinds; each means the same thing here
        raise GenerationError(f"{member}: not a readable pickle ({type(exc).__name__}: {exc})") from exc
    finally:
        if collecting:
            gc.enable()
    if not isinstance(loaded, dict):
        raise GenerationError(f"{member}: holds a {type(loaded).__name__}, not the dict of negatives TGB writes")
    for key, value in loaded.items():
        if isinstance(value, _Unbuilt):
            if not value.built:
                raise GenerationError(f"{member}: the entry {key!r:.60} is an array numpy never gave its data "
                                      "(no BUILD after _reconstruct); refusing it (the release may be corrupt)")
            loaded[key] = value.view(np.ndarray)
    return loaded


def numbered(values: pa.Array, known: pa.Array | None = None) -> tuple[np.ndarray, pa.Array]:
    """py-tgb's numbering of raw values (strings or integers) by first appearance, as its ``dict`` loops assign
    them: each value's number (int64) and the dictionary (the raw value of every number); values in ``known`` (a
    previous numbering's dictionary) keep theirs, new ones continue after them. Arrow's dictionary encoding
    numbers values in the order it first meets them, which is exactly that rule."""
    skip = 0 if known is None else len(known)
    if known is not None:
        values = pa.concat_arrays([known.cast(values.type), values])
    encoded = values.dictionary_encode()
    return encoded.indices.to_numpy().astype(np.int64)[skip:], encoded.dictionary


def first_appearance(heads: pa.Array, tails: pa.Array, known: pa.Array | None = None
                     ) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """py-tgb's numbering of the endpoints of an edge list: :func:`numbered` over the rows, the head before the
    tail. Returns head ids, tail ids (int64) and the dictionary (raw id of every number)."""
    n = len(heads)
    order = np.empty(2 * n, dtype=np.int64)
    order[0::2], order[1::2] = np.arange(n), np.arange(n) + n
    codes, dictionary = numbered(pa.concat_arrays([heads, tails]).take(pa.array(order)), known)
    return codes[0::2], codes[1::2], dictionary


#: the fewest raw ids :class:`BlockNumbering` gathers before it merges them into its dictionary (below that, a merge
#: costs more in Arrow's fixed overhead than it saves)
NUMBERING_MERGE_MIN = 1 << 16


class BlockNumbering:
    """:func:`first_appearance` over an edge list read block by block, without holding its raw id columns whole.

    Each block is numbered on its own (its endpoints' local ids and the block's dictionary, in the block's order of
    first appearance); the block dictionaries wait, and are merged into the global dictionary once they hold as
    many ids as it does (at least ``merge_min``: :data:`NUMBERING_MERGE_MIN`): a merge numbers the global dictionary
    followed by the waiting dictionaries in block order, which keeps every global id and gives the new ones in
    order of first appearance over the whole edge list, since a block's dictionary lists its ids in the order the
    block first meets them. The geometric trigger keeps the merges' work linear in the ids the blocks hold, and the
    memory at most the dictionary twice plus the waiting blocks'.

    The id arrays :meth:`add` returns hold block-local ids until the next merge, which rewrites them in place; after
    :meth:`finish` every one holds py-tgb's ids. Raises nothing beyond Arrow's own errors.
    """

    def __init__(self, merge_min: int | None = None) -> None:
        self.dictionary: pa.Array | None = None
        self._merge_min = NUMBERING_MERGE_MIN if merge_min is None else merge_min  # read when called, as tests set it
        self._waiting: list[tuple[pa.Array, tuple[np.ndarray, ...]]] = []
        self._waiting_ids = 0

    def add(self, heads: pa.Array, tails: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """The head and tail ids of one block's rows (the head before the tail, row by row), rewritten in place to
        the global ids at the next merge."""
        head, tail, local = first_appearance(heads, tails)
        self._waiting.append((local, (head, tail)))
        self._waiting_ids += len(local)
        if self._waiting_ids >= max(self._merge_min, 0 if self.dictionary is None else len(self.dictionary)):
            self._merge()
        return head, tail

    def finish(self) -> pa.Array | None:
        """Merge what waits; the dictionary (the raw id of every global id; ``None`` if no block was added). Every
        array :meth:`add` returned now holds global ids."""
        self._merge()
        return self.dictionary

    def _merge(self) -> None:
        if not self._waiting:
            return
        if self.dictionary is None and len(self._waiting) == 1:  # one block: its ids are already the global ones
            self.dictionary = self._waiting[0][0]
        else:
            waiting = pa.concat_arrays([local for local, _ in self._waiting])
            codes, self.dictionary = numbered(waiting, self.dictionary)
            start = 0
            for local, ids in self._waiting:
                part = codes[start:start + len(local)]
                for values in ids:
                    values[...] = part[values]
                start += len(local)
        self._waiting, self._waiting_ids = [], 0
