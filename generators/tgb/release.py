"""Reading one TGB release zip exactly as py-tgb 2.3.0 reads its files, without executing anything it contains.

A release zip is flat (py-tgb extracts it into the dataset folder): CSV files with one header line that py-tgb
skips and columns read by position, and the evaluation negatives as Python pickles (dicts keyed by tuples of numpy
integers). A pickle can run arbitrary code when loaded, and the release has no checksum (py-tgb records only a
version integer), so :func:`load_pickle` unpickles with an allow-list: numpy arrays, dtypes and scalars, and the builtin
containers; anything else is refused, naming the class it asked for.
"""

from __future__ import annotations

import io
import pickle
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from tgbhub.errors import GenerationError

#: what a TGB negatives pickle may reference: numpy's array and scalar reconstruction, nothing else
_ALLOWED = {
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
    ("numpy", "ndarray"), ("numpy", "dtype"), ("numpy.core.numeric", "_frombuffer"),
    ("numpy._core.numeric", "_frombuffer"), ("builtins", "tuple"), ("builtins", "dict"), ("builtins", "list"),
    ("builtins", "int"), ("builtins", "float"), ("builtins", "set"), ("builtins", "frozenset"),
}


class _NumpyOnly(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _ALLOWED and not (module == "numpy" and name.endswith("Dtype")) and not (
                module.startswith("numpy.dtypes") and name.endswith("DType")):
            raise GenerationError(f"the pickle asks for {module}.{name}, which a TGB negatives file never needs; "
                                  "refusing to load it (the release may be corrupt or not TGB's)")
        return super().find_class(module, name)


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


def load_pickle(data: bytes | IO[bytes], member: str) -> dict[Any, Any]:
    """A TGB negatives pickle (its bytes, or a stream such as :meth:`Release.open`'s, which spares holding the
    bytes beside the dict), loaded with numpy arrays and builtin containers only.

    Raises:
        GenerationError: if it is not such a pickle or asks for anything else.
    """
    try:
        loaded = _NumpyOnly(io.BytesIO(data) if isinstance(data, bytes) else data).load()
    except GenerationError:
        raise
    except Exception as exc:  # unpickling raises many kinds; each means the same thing here
        raise GenerationError(f"{member}: not a readable pickle ({type(exc).__name__}: {exc})") from exc
    if not isinstance(loaded, dict):
        raise GenerationError(f"{member}: holds a {type(loaded).__name__}, not the dict of negatives TGB writes")
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
