"""Reading one TGB release zip exactly as py-tgb 2.3.0 reads its files, without executing anything it contains.

A release zip is flat (py-tgb extracts it into the dataset folder): CSV files with one header line that py-tgb
skips and columns read by position, and the evaluation negatives as Python pickles (dicts keyed by tuples of numpy
integers). A pickle can run arbitrary code when loaded, and the release has no checksum (py-tgb records only a
version integer), so :func:`load_pickle` unpickles with an allow-list: numpy arrays, dtypes and scalars, and the builtin
containers; anything else is refused, naming the class it asked for. numpy's reconstruction is replaced by stand-ins
that check each size before numpy allocates it, after a linear walk of the opcodes
(:func:`~generators.tgb.negpickle.walk`) has refused what pickle would refuse or could not read in bounded memory.

A release is also read where py-tgb left it (:class:`PytgbLayout`): its dataset folder holds the zip under the
dataset's name, the members it extracted, and py-tgb's own processed caches, which are never read; the zip is
preferred, and where only the extracted members are left they are read from the folder.
"""

from __future__ import annotations

import builtins
import gc
import hashlib
import io
import math
import pickle
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol, cast

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from tgbhub.errors import FetchError, GenerationError
from tgbhub.hashing import file_sha256

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
    """An opened release: its members by name, and how its conversion shows progress (``progress``, a
    :data:`ProgressFactory`; silent unless the client hands one in). ``path`` is the release zip (nothing is
    extracted to disk), or a folder holding the members extracted from it (py-tgb's dataset folder: see
    :class:`PytgbLayout`). ``spill`` is a folder where the conversion keeps the edge list's columns and the
    negatives on disk while it runs (:mod:`generators.spill`), so its memory does not grow with the release;
    without one they are held in memory.

    A zip is checked whole first (every member's CRC); extracted files carry no CRC, so what checks them is what
    checks every release after it is read: its layout, the pickles' allow-list and the published statistics.

    Raises (on construction):
        GenerationError: if the file is not a readable zip, or the zip or folder lacks a member the dataset needs.
    """

    def __init__(self, path: Path, needed: Mapping[str, str], progress: ProgressFactory | None = None,
                 spill: Path | None = None) -> None:
        self.path = path
        self.progress: ProgressFactory = progress or silent
        self.spill = spill
        self._members: _Members = _Extracted(path) if path.is_dir() else _Zipped(path)
        held = self._members.names()
        missing = [file for file in needed.values() if file not in held]
        if missing:
            self._members.close()
            raise GenerationError(f"{path} lacks {', '.join(missing)} (it holds "
                                  f"{', '.join(sorted(held)) or 'nothing'}); is it the release of another dataset or "
                                  "TGB version?")

    def read(self, member: str) -> bytes:
        return self._members.read(member)

    def open(self, member: str) -> IO[bytes]:
        """``member`` as a stream, decompressed as it is read: a large CSV or pickle is never held as bytes."""
        return self._members.open(member)

    def size(self, member: str) -> int:
        """``member``'s size once decompressed, in bytes (what a stage reading it counts to)."""
        return self._members.size(member)

    def close(self) -> None:
        self._members.close()


class _Members(Protocol):
    """Where a :class:`Release` reads its members from: its zip, or the folder they were extracted into."""

    def names(self) -> set[str]: ...

    def read(self, member: str) -> bytes: ...

    def open(self, member: str) -> IO[bytes]: ...

    def size(self, member: str) -> int: ...

    def close(self) -> None: ...


class _Zipped:
    """The members of a flat release zip, every one's CRC checked on opening.

    Raises (on construction):
        GenerationError: if the file is not a readable zip or a member fails its CRC check.
    """

    def __init__(self, path: Path) -> None:
        try:
            self._zip = zipfile.ZipFile(path)
            broken = self._zip.testzip()
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise GenerationError(f"{path} is not a readable zip ({exc}); download it again (a truncated download "
                                  "or an HTML error page saved as .zip looks like this)") from exc
        if broken is not None:
            self._zip.close()
            raise GenerationError(f"{path}: member {broken} fails its CRC check; download the zip again")
        self._names = {Path(n).name: n for n in self._zip.namelist() if not n.endswith("/")}

    def names(self) -> set[str]:
        return set(self._names)

    def read(self, member: str) -> bytes:
        return self._zip.read(self._names[member])

    def open(self, member: str) -> IO[bytes]:
        return self._zip.open(self._names[member])

    def size(self, member: str) -> int:
        return self._zip.getinfo(self._names[member]).file_size

    def close(self) -> None:
        self._zip.close()


class _Extracted:
    """The members extracted into a folder (py-tgb's ``extractall`` leaves the flat zip's files there)."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder

    def names(self) -> set[str]:
        return {entry.name for entry in self._folder.iterdir() if entry.is_file()}

    def read(self, member: str) -> bytes:
        return (self._folder / member).read_bytes()

    def open(self, member: str) -> IO[bytes]:
        return open(self._folder / member, "rb")

    def size(self, member: str) -> int:
        return (self._folder / member).stat().st_size

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class PytgbLayout:
    """Where py-tgb 2.3.0 keeps one dataset it downloaded, and which of it is TGB's release.

    py-tgb's ``download()`` saves the zip as ``<root>/datasets/<folder>/<name>.zip`` (``folder``: the name with
    ``_`` for ``-``; the zip under the dataset's name, not upstream's ``zip_name``) and extracts it into that same
    folder; its first load then writes its processed caches there (``ml_<name>.pkl``, ``ml_<name>_edge.pkl``, ...).
    The zip and the extracted ``members`` are TGB's release; the caches are py-tgb's conversion of it and are never
    read here. ``url``: where the release is downloaded from (for the fix a refusal gives).
    """

    name: str
    zip_name: str
    members: tuple[str, ...]
    url: str

    @property
    def folder(self) -> str:
        """The dataset's folder under py-tgb's ``datasets/`` root: ``tgbl_wiki``."""
        return self.name.replace("-", "_")

    @property
    def zips(self) -> tuple[str, ...]:
        """The names the release zip may have there: upstream's first, then the one py-tgb saves it under."""
        return tuple(dict.fromkeys((self.zip_name, f"{self.name}.zip")))

    def caches(self, folder: Path) -> list[str]:
        """py-tgb's processed caches of this dataset in ``folder``, by name."""
        return sorted(path.name for path in folder.glob(f"ml_{self.name}*.pkl") if path.is_file())

    def holds_any(self, folder: Path) -> bool:
        """Whether ``folder`` holds anything py-tgb keeps of this dataset (a zip, a member, a cache)."""
        return any((folder / file).is_file() for file in (*self.zips, *self.members)) or bool(self.caches(folder))

    def locate(self, folder: Path) -> Path:
        """The release to read in ``folder``, py-tgb's dataset folder (or the ``datasets/`` root holding it): the
        zip, under either of its names, where there is one; else ``folder`` itself, when every member is extracted
        there.

        Raises:
            FetchError: naming the folder and what it holds, if it holds no zip and not every member (some members
                only, py-tgb's caches only, or nothing of the dataset), with the way to get the release.
        """
        if not self.holds_any(folder) and (folder / self.folder).is_dir():
            folder = folder / self.folder  # py-tgb's datasets/ root: the dataset's own folder in it
        for zip_name in self.zips:
            if (folder / zip_name).is_file():
                return folder / zip_name
        present = [member for member in self.members if (folder / member).is_file()]
        if len(present) == len(self.members):
            return folder
        raise FetchError(str(folder), f"the release of {self.name}", self._lacking(folder, present),
                         f"Download {self.url} into {folder} (py-tgb's own name for it is {self.zips[-1]}), or pass "
                         "the zip with --from")

    def _lacking(self, folder: Path, present: list[str]) -> str:
        """Why ``folder`` is not a release: what it lacks, said by what it holds."""
        expected = f"{' or '.join(self.zips)}, or the extracted {', '.join(self.members)}"
        if present:
            missing = [member for member in self.members if member not in present]
            return (f"it holds {', '.join(present)} but not {', '.join(missing)}, and no zip (expected {expected}; "
                    "an interrupted extraction looks like this)")
        caches = self.caches(folder)
        if caches:
            return (f"it holds only py-tgb's processed caches ({', '.join(caches)}), py-tgb's conversion of the "
                    f"release rather than TGB's release, which is what is imported and checked (expected {expected})")
        return f"it holds none of {expected}"


def datasets_in(root: Path, layouts: Iterable[PytgbLayout]) -> list[tuple[PytgbLayout, Path]]:
    """The datasets py-tgb keeps under ``root`` (its ``datasets/`` folder, or one dataset's folder): each layout
    whose folder is there and holds anything of it (a zip, a member, a cache), with that folder. py-tgb's package
    ships folders of the same names holding only its scripts; those hold nothing of a release and are left out."""
    found = []
    for layout in layouts:
        folder = root if root.name == layout.folder else root / layout.folder
        if folder.is_dir() and layout.holds_any(folder):
            found.append((layout, folder))
    return found


def extracted_sha256(folder: Path, members: Iterable[str]) -> str:
    """What stands for the zip's sha256 when the release is read from its extracted ``members`` in ``folder``: the
    sha256 of their ``sha256sum`` listing, sorted by name (``sha256sum MEMBER... | sha256sum`` in the folder, the
    members in that order, gives it)."""
    listing = "".join(f"{file_sha256(folder / member)}  {member}\n" for member in sorted(members))
    return hashlib.sha256(listing.encode("utf-8")).hexdigest()


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
#: the most rows :class:`BlockNumbering` lets wait for a merge (a reader keeps the waiting blocks' rows until their
#: ids are global, so this bounds its memory where new ids grow rare late in a long edge list)
NUMBERING_WAITING_ROWS = 1 << 22


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
        self._waiting_rows = 0

    @property
    def settled(self) -> bool:
        """Whether every id array :meth:`add` returned holds its global ids already (nothing waits for a merge)."""
        return not self._waiting

    def add(self, heads: pa.Array, tails: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """The head and tail ids of one block's rows (the head before the tail, row by row), rewritten in place to
        the global ids at the next merge."""
        head, tail, local = first_appearance(heads, tails)
        self._waiting.append((local, (head, tail)))
        self._waiting_ids += len(local)
        self._waiting_rows += len(head)
        # merging also once the waiting blocks hold many rows bounds the rows a caller must keep unsettled
        if (self._waiting_ids >= max(self._merge_min, 0 if self.dictionary is None else len(self.dictionary))
                or self._waiting_rows >= NUMBERING_WAITING_ROWS):
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
        self._waiting, self._waiting_ids, self._waiting_rows = [], 0, 0
