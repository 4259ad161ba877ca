"""Submission files: the Parquet schema a task declares, and strict reading that never lets bad input be scored.

A task's ``submission`` block in the manifest lists its columns, e.g.::

    {"format": "parquet", "columns": [{"name": "t", "type": "int64"}, {"name": "src", "type": "int32"},
                                       {"name": "dst", "type": "int32"}, {"name": "score", "type": "float32"}]}

Types are families, checked by kind: an ``int*`` column takes any integer type, a ``float*`` column any float or
integer type, a ``list<float*>`` column a (fixed-size or variable) list of those. Everything else (strings,
booleans, nulls, NaN, missing or extra columns) raises :class:`~tgbhub.errors.SubmissionError` naming the column,
the first bad row and the fix. What to do about a NaN or inf depends on the task (a ranking score has a natural
"worst" value, a rollout has none), so each evaluator passes its own fix to :func:`read_submission`.

pandas index columns
--------------------
``DataFrame.to_parquet(path)`` keeps the index: a ``RangeIndex`` only as metadata, any other index (after a filter,
a sort or a concat) as a column, ``__index_level_0__`` when it is unnamed and the index's name otherwise. Every task
keys its rows by declared columns and leaves row order free, so an unnamed index carries nothing that could change
a score: it is ignored. A *named* index column that the schema does not declare is refused (it may be a key under
the wrong name), with the fix ``index=False``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Union

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from numpy.typing import ArrayLike

from tgbhub.errors import ManifestError, SubmissionError
from tgbhub.manifest import Manifest

#: the fix a NaN/inf gets when an evaluator names none of its own
GENERIC_NON_FINITE_FIX = "Replace NaN/inf before writing; every value the task grades must be a finite number"
#: names pandas gives an unnamed index level when it writes it as a column
_PANDAS_INDEX_NAME = re.compile(r"__index_level_\d+__")
#: what a submission may be: a Parquet file's path, a ``pyarrow.Table``, or a mapping of column name -> array (a numpy
#: array, a list, a torch tensor or a ``pyarrow.Array``; a 2-D array is a list column)
Submission = Union[str, "os.PathLike[str]", pa.Table, Mapping[str, ArrayLike]]
_INDEX_FIX = ("Write the DataFrame with df.to_parquet(path, index=False), or call df.reset_index(drop=True) first "
              "(pandas stores a non-default index as a column)")


@dataclass(frozen=True)
class ListColumn:
    """A decoded list column: row ``r`` holds ``values[offsets[r]:offsets[r + 1]]``."""

    values: np.ndarray
    offsets: np.ndarray

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)


def _kind(declared: str) -> str:
    if declared.startswith("list<"):
        return "list"
    if declared.startswith("int"):
        return "int"
    if declared.startswith("float"):
        return "float"
    raise ManifestError(f"submission column type {declared!r} is not int*, float* or list<float*>; fix the manifest")


def columns_of(task: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``[(name, declared type), ...]`` of a task's submission schema.

    Raises:
        ManifestError: if the task declares no submission schema.
    """
    schema = task.get("submission")
    if not schema or not schema.get("columns"):
        raise ManifestError(f"task {task.get('name')!r} declares no submission schema; regenerate its manifest")
    return [(str(c["name"]), str(c["type"])) for c in schema["columns"]]


def _table(source: Submission) -> pa.Table:
    if isinstance(source, pa.Table):
        return source
    if isinstance(source, Mapping):
        try:
            return pa.table({k: _arrow(v) for k, v in source.items()})
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
            raise SubmissionError("<mapping>", None, f"cannot be turned into columns ({exc})",
                                  "Pass one 1-D array per column, all of one length") from exc
    path = os.fspath(source)
    try:
        return pq.read_table(path)
    except FileNotFoundError as exc:
        raise SubmissionError("<file>", None, f"{path!r} does not exist", "Check the path") from exc
    except (pa.ArrowInvalid, OSError) as exc:
        raise SubmissionError("<file>", None, f"{path!r} is not a readable Parquet file ({exc})",
                              "Write it with pyarrow.parquet.write_table or DataFrame.to_parquet") from exc


def _arrow(values: ArrayLike) -> pa.Array | pa.ChunkedArray:
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values
    plain = _plain(values)
    return plain if isinstance(plain, pa.Array) else pa.array(plain)


def _plain(values: ArrayLike) -> np.ndarray | list[object] | pa.FixedSizeListArray:
    if hasattr(values, "detach"):
        values = values.detach().cpu().numpy()
    array = np.asarray(values) if not isinstance(values, list) else values
    if isinstance(array, np.ndarray) and array.ndim == 2:  # a (rows, q) matrix is a fixed-size list column
        return pa.FixedSizeListArray.from_arrays(pa.array(np.ascontiguousarray(array).reshape(-1)), array.shape[1])
    return array


def _first_null(column: pa.ChunkedArray) -> int | None:
    if column.null_count == 0:
        return None
    return int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])


def pandas_index_columns(table: pa.Table) -> tuple[list[str], list[str]]:
    """``(unnamed, named)``: the columns of ``table`` that pandas wrote from a DataFrame's index.

    Found from the pandas metadata pyarrow stores in the schema (``index_columns``) and, for files whose metadata
    was dropped on the way (e.g. rewritten by another tool), from pandas' ``__index_level_N__`` naming.
    """
    metadata = table.schema.pandas_metadata or {}
    listed = {str(c) for c in metadata.get("index_columns", []) if isinstance(c, str)}
    unnamed = [n for n in table.column_names if _PANDAS_INDEX_NAME.fullmatch(n)]
    named = [n for n in table.column_names if n in listed and n not in unnamed]
    return unnamed, named


def _numeric(name: str, column: pa.ChunkedArray, kind: str, declared: str,
             non_finite_fix: str | None) -> np.ndarray:
    type_ = column.type
    ok = pa.types.is_integer(type_) or (kind == "float" and pa.types.is_floating(type_))
    if not ok:
        raise SubmissionError(name, 0, f"has type {type_}, expected {declared}",
                              f"Cast it, e.g. df[{name!r}] = df[{name!r}].astype({declared!r})")
    values = column.to_numpy()
    if kind == "float":
        if pa.types.is_floating(type_) and non_finite_fix is not None:
            bad = ~np.isfinite(values)
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                raise SubmissionError(name, row, f"holds {values[row]!r}; every value must be finite", non_finite_fix)
        return values
    return values.astype(np.int64, copy=False)


def _list(name: str, column: pa.ChunkedArray, declared: str, non_finite_fix: str | None) -> ListColumn:
    type_ = column.type
    if not (pa.types.is_list(type_) or pa.types.is_large_list(type_) or pa.types.is_fixed_size_list(type_)) or not (
            pa.types.is_floating(type_.value_type) or pa.types.is_integer(type_.value_type)):
        raise SubmissionError(name, 0, f"has type {type_}, expected {declared}",
                              "Write one list of scores per row, e.g. pa.array(list(matrix)) or a list column")
    array = column.combine_chunks()
    if pa.types.is_fixed_size_list(type_):
        size = type_.list_size
        values = array.flatten().to_numpy()
        offsets = np.arange(0, len(array) * size + 1, size, dtype=np.int64)
    else:
        offsets = np.asarray(array.offsets, dtype=np.int64)
        values = array.values.to_numpy(zero_copy_only=False)[offsets[0]:offsets[-1]]
        offsets = offsets - offsets[0]
    if values.dtype.kind == "f" and non_finite_fix is not None:
        bad = ~np.isfinite(values)
        if bad.any():
            row = int(np.searchsorted(offsets, int(np.flatnonzero(bad)[0]), side="right") - 1)
            raise SubmissionError(name, row, "holds a NaN or infinite value; every value must be finite",
                                  non_finite_fix)
    return ListColumn(values=values, offsets=offsets)


def read_submission(source: Submission, task: Mapping[str, Any], *,
                    non_finite_fix: str | None = GENERIC_NON_FINITE_FIX) -> dict[str, Any]:
    """Read and type-check a submission against ``task``'s declared schema.

    ``source`` is a Parquet path, a ``pyarrow.Table``, or a mapping of column name -> array (a 2-D array is taken
    as a list column). Returns name -> int64/float numpy array, or :class:`ListColumn` for list columns. An unnamed
    pandas index column (``__index_level_N__``) is ignored (see the module docstring). ``non_finite_fix`` is the
    fix a NaN/inf value's error gives (the evaluator's own advice); ``None`` leaves finiteness to the caller, which
    can then name the failing entity (a trajectory and step) instead of a file row.

    Raises:
        SubmissionError: for an unreadable file, a missing or extra column (naming ``index=False`` when the extra
            column is a pandas index), a wrong type, a null, NaN or inf.
        ManifestError: if the task declares no or a malformed schema.
    """
    declared = columns_of(task)
    table = _table(source)
    names = [n for n, _ in declared]
    unnamed_index, named_index = pandas_index_columns(table)
    for name in names:
        if name not in table.column_names:
            hint = (f"; the file's pandas index column {unnamed_index[0]!r} is not read as {name!r}: write it as a "
                    f"column with df.reset_index(names={name!r}) or df[{name!r}] = df.index"
                    if unnamed_index else "")
            raise SubmissionError(name, None, f"is missing (the file has {', '.join(table.column_names) or 'none'})"
                                  f"{hint}", f"Write exactly the columns {', '.join(names)}")
    for name in table.column_names:
        if name in names or name in unnamed_index:
            continue
        if name in named_index:
            raise SubmissionError(name, None, "is not part of this task's schema: it is the DataFrame's index, which "
                                  "DataFrame.to_parquet writes as a column unless index=False", _INDEX_FIX)
        raise SubmissionError(name, None, "is not part of this task's schema",
                              f"Drop it; the task wants exactly {', '.join(names)}")
    out: dict[str, Any] = {}
    for name, type_ in declared:
        column = table.column(name)
        null = _first_null(column)
        if null is not None:
            raise SubmissionError(name, null, "is null", "Every row needs a value; drop or fill the row")
        kind = _kind(type_)
        out[name] = (_list(name, column, type_, non_finite_fix) if kind == "list"
                     else _numeric(name, column, kind, type_, non_finite_fix))
    return out


def unique_ids(name: str, ids: np.ndarray, size: int, describe: Callable[[int], str]) -> np.ndarray:
    """Check that ``ids`` hits every slot of ``range(size)`` exactly once; return ``ids`` (int64).

    ``describe(slot)`` renders a slot for messages (e.g. ``"t=352, src=0, dst=1"``).

    Raises:
        SubmissionError: naming the first out-of-range row, the first repeated row, or the first missing slot.
    """
    outside = (ids < 0) | (ids >= size)
    if outside.any():
        row = int(np.flatnonzero(outside)[0])
        raise SubmissionError(name, row, "is not an id this task asks for",
                              f"Submit exactly the {size} ids the task lists (see the task's submission 'rows')")
    seen = np.zeros(size, dtype=bool)
    first = np.unique(ids, return_index=True)[1]
    if len(first) != len(ids):
        repeated = np.ones(len(ids), dtype=bool)
        repeated[first] = False
        row = int(np.flatnonzero(repeated)[0])
        raise SubmissionError(name, row, f"repeats id {describe(int(ids[row]))}", "Submit each id once")
    seen[ids] = True
    if not seen.all():
        missing = int(np.flatnonzero(~seen)[0])
        raise SubmissionError(name, None, f"lacks {size - len(ids)} of the {size} required ids, the first being "
                              f"{describe(missing)}", "Submit a row for every id the task lists")
    return ids


def write_submission(source: Submission, path: str | os.PathLike[str]) -> None:
    """Write a submission (mapping of column -> array, or a ``pyarrow.Table``) as Parquet, temp file then rename.

    Raises:
        SubmissionError: if the columns cannot be turned into a table.
    """
    table = _table(source) if not isinstance(source, (str, os.PathLike)) else pq.read_table(source)
    final = os.fspath(path)
    temp = f"{final}.{os.getpid()}.tmp"
    pq.write_table(table, temp, compression="zstd")
    pq.read_metadata(temp)  # readable before it takes its final name
    os.replace(temp, final)


def task_for_columns(tasks: Iterable[Mapping[str, Any]], names: Iterable[object]) -> Mapping[str, Any] | None:
    """The task among ``tasks`` whose submission columns are exactly ``names`` (``None`` if none or several).

    An unnamed pandas index column (``__index_level_N__``) is left out of the comparison, as the reader ignores it.
    """
    wanted = {str(n) for n in names if not _PANDAS_INDEX_NAME.fullmatch(str(n))}
    matches = [task for task in tasks if task.get("submission")
               and {str(c["name"]) for c in task["submission"]["columns"]} == wanted]
    return matches[0] if len(matches) == 1 else None


def closest_task(tasks: Iterable[Mapping[str, Any]], schema: pa.Schema) -> Mapping[str, Any] | None:
    """The task among ``tasks`` a file with ``schema`` was most likely written for, so that its errors name that
    task's columns rather than the default task's. Evidence is a shared column name, or a list column where the task
    declares one (a ranking's or a rollout's scores, never a snapshot's); among tasks with evidence the one sharing
    the most names wins, then a list column on both sides, then the closest column count. ``None`` when no task has
    evidence, or several tie.
    """
    def is_list(type_: pa.DataType) -> bool:
        return bool(pa.types.is_list(type_) or pa.types.is_large_list(type_) or pa.types.is_fixed_size_list(type_))

    fields = [f for f in schema if not _PANDAS_INDEX_NAME.fullmatch(f.name)]
    names = {f.name for f in fields}
    has_list = any(is_list(f.type) for f in fields)
    scored = []
    for task in tasks:
        if not task.get("submission"):
            continue
        declared = [(str(c["name"]), str(c["type"]).startswith("list<")) for c in task["submission"]["columns"]]
        shared = sum(1 for name, _ in declared if name in names)
        lists = has_list and any(listed for _, listed in declared)
        if shared or lists:
            scored.append(((shared, int(lists), -abs(len(declared) - len(fields))), task))
    scored.sort(key=lambda item: item[0], reverse=True)
    if not scored or (len(scored) > 1 and scored[1][0] == scored[0][0]):
        return None
    return scored[0][1]


# --- bounds: what a file may hold, read from its Parquet footer before any row is ------------------------------

#: a file for a task whose type has no row rule and whose manifest declares no ``max_rows``: at most this many rows
DEFAULT_MAX_ROWS = 10_000_000
#: bytes one scalar value may take uncompressed (the widest declared type, int64/float64)
SCALAR_BYTES = 8
#: headroom over the exact need: encodings, validity bitmaps, an unnamed pandas index column
BYTES_FACTOR = 2
#: fixed headroom for the Parquet footer and page headers of a small file
BYTES_SLACK = 1 << 20
#: seconds one submission may take to grade on a leaderboard before it is refused
GRADE_SECONDS = 300.0


@dataclass(frozen=True)
class Bounds:
    """What one submission file for a task and split may hold, all checked before a row is read.

    ``rows``: the most rows (a task's exact count of keys where the manifest gives it, else an upper bound);
    ``values``: the most values one column may hold (``rows`` times the widest list a row may carry);
    ``uncompressed``: the most bytes the column pages may take before compression (the footer's row-group sizes);
    ``file_bytes``: the most bytes on disk; ``seconds``: how long grading may take on a leaderboard; ``basis`` says
    where ``rows`` came from, for messages.
    """

    rows: int
    values: int
    uncompressed: int
    file_bytes: int
    seconds: float
    basis: str

    def to_json(self) -> dict[str, Any]:
        return {"rows": self.rows, "values": self.values, "uncompressed_bytes": self.uncompressed,
                "file_bytes": self.file_bytes, "seconds": self.seconds, "basis": self.basis}


def _split_events(manifest: Manifest, split: str) -> int | None:
    """How many event rows ``split`` stores (the manifest's per-split stats, else a row-unit split's range)."""
    stats = ((manifest.stats or {}).get("splits") or {}).get(split) or {}
    if isinstance(stats.get("rows"), int):
        return int(stats["rows"])
    if manifest.split_unit == "row" and split in manifest.splits:
        start, stop = manifest.splits[split]
        return int(stop) - int(start)
    return None


def _snapshot_rows(manifest: Manifest, task: Mapping[str, Any], split: str) -> tuple[int, str] | None:
    from tgbhub.tasks.declared import candidate_pairs, graded_snapshots

    start, stop = graded_snapshots(manifest, task, split)
    pairs = len(candidate_pairs(task["candidates"], int(manifest.graph["num_nodes"]))[0])
    return (stop - start) * pairs, f"{stop - start} graded snapshots x {pairs} candidate pairs"


def _event_rows(manifest: Manifest, task: Mapping[str, Any], split: str) -> tuple[int, str] | None:
    events = _split_events(manifest, split)
    # one query per event of the split at most (a ranking or window task asks one per undirected edge)
    return None if events is None else (events, f"at most one query per event of {split} ({events} events)")


def _rollout_rows(manifest: Manifest, task: Mapping[str, Any], split: str) -> tuple[int, str] | None:
    start, stop = manifest.splits[split]
    steps = int(manifest.graph.get("num_snapshots") or 0)
    if not steps:
        return None
    return (int(stop) - int(start)) * steps, f"{int(stop) - int(start)} initial conditions x {steps} steps"


#: task type -> how many rows a complete submission for a split has (or at most has), from manifest facts alone
ROW_RULES: dict[str, Callable[[Manifest, Mapping[str, Any], str], tuple[int, str] | None]] = {
    "snapshot-link-prediction": _snapshot_rows, "one-vs-many-ranking": _event_rows,
    "window-link-forecasting": _event_rows, "rollout-forecasting": _rollout_rows}


def _generic_rows(manifest: Manifest, task: Mapping[str, Any], split: str) -> tuple[int, str]:
    """A bound for a task type without a rule: one row per (event or snapshot of the split, node)."""
    nodes = int((manifest.graph or {}).get("num_nodes") or 0)
    events = _split_events(manifest, split)
    if split in manifest.splits and manifest.split_unit == "snapshot":
        start, stop = manifest.splits[split]
        events = max(events or 0, int(stop) - int(start))
    if nodes and events:
        return nodes * events, f"{events} events or snapshots of {split} x {nodes} nodes"
    return DEFAULT_MAX_ROWS, f"no row rule for task type {task.get('type')!r}: the default bound"


def _list_width(manifest: Manifest, task: Mapping[str, Any]) -> int:
    """The most values one row's list column holds: a ranking's negatives, a rollout's variables, else the nodes."""
    negatives = task.get("negatives") or {}
    if isinstance(negatives.get("q"), int):
        return int(negatives["q"])
    graph = manifest.graph or {}
    if graph.get("variables"):
        return len(graph["variables"])
    return int(graph.get("num_nodes") or 1024)


def bounds_for(manifest: Manifest, task: Mapping[str, Any], split: str | None = None,
               seconds: float | None = None) -> Bounds:
    """The :class:`Bounds` of a submission to ``task`` of ``manifest`` on
    ``split`` (default: the task's report split), from manifest facts only: nothing is downloaded or built.

    A task may declare its own ``submission.max_rows`` (a number, or split -> number); else the rule of its type in
    :data:`ROW_RULES` counts the rows; else one row per (event or snapshot, node) of the split. Bytes follow from the
    rows and the declared columns (8 bytes a value, list columns as wide as the task's negatives or variables).

    Raises:
        InvalidNameError: if the dataset has no such split.
        ManifestError: if the task declares no submission schema.
    """
    from tgbhub.tasks.declared import choose_split

    name = choose_split(manifest, task, split)
    declared = (task.get("submission") or {}).get("max_rows")
    if isinstance(declared, Mapping):
        declared = declared.get(name)
    found = ((int(declared), "the task's declared max_rows") if isinstance(declared, int)
             else (ROW_RULES[str(task.get("type"))](manifest, task, name) if str(task.get("type")) in ROW_RULES
                   else None))
    rows, basis = found if found is not None else _generic_rows(manifest, task, name)
    width = _list_width(manifest, task)
    kinds = [_kind(kind) for _, kind in columns_of(task)]
    per_row = sum(SCALAR_BYTES * (width + 1) if kind == "list" else SCALAR_BYTES for kind in kinds)
    uncompressed = rows * per_row * BYTES_FACTOR + BYTES_SLACK
    rows = max(int(rows), 0)
    return Bounds(rows=rows, values=rows * (width if "list" in kinds else 1), uncompressed=uncompressed,
                  file_bytes=uncompressed + BYTES_SLACK,
                  seconds=float(GRADE_SECONDS if seconds is None else seconds), basis=basis)


@dataclass(frozen=True)
class FileFacts:
    """What a Parquet file's footer says of it: rows, the most values of one column, the bytes of its pages before
    compression, bytes on disk, row groups."""

    rows: int
    values: int
    uncompressed: int
    file_bytes: int
    row_groups: int


def check_bounds(path: str | os.PathLike[str], bounds: Bounds, what: str = "the task") -> FileFacts:
    """Refuse a submission file that breaks ``bounds``, reading its size and its Parquet footer only (no row group
    is read, so a file of 10^8 constant rows that compresses to a few MB costs nothing); return what the footer says.

    The row and value counts are what bound the memory a read needs: a dictionary- or run-length-encoded page is
    small before compression too, so ``uncompressed`` only catches plainly encoded bulk.

    Raises:
        SubmissionError: for a missing or unreadable file, or one with more bytes on disk, more rows, more values in
            a column or more page bytes than ``bounds`` allow (the message names the number found, the bound and
            where it came from).
    """
    where = os.fspath(path)
    try:
        size = os.stat(where).st_size
    except OSError as exc:
        raise SubmissionError("<file>", None, f"{where!r} cannot be read ({exc.strerror or exc})",
                              "Check the path") from None
    if size > bounds.file_bytes:
        raise SubmissionError("<file>", None, f"{where!r} is {size} bytes; a submission to {what} is at most "
                              f"{bounds.file_bytes} bytes ({bounds.rows} rows: {bounds.basis})",
                              "Submit exactly the rows the task asks for, in its declared column types")
    try:
        meta = pq.read_metadata(where)
    except (pa.ArrowException, OSError) as exc:
        raise SubmissionError("<file>", None, f"{where!r} is not a readable Parquet file ({exc})",
                              "Write it with pyarrow.parquet.write_table or DataFrame.to_parquet") from None
    groups = [meta.row_group(i) for i in range(meta.num_row_groups)]
    decoded = sum(group.total_byte_size for group in groups)
    # a list column's values are counted by its leaf column chunks, not by the rows: a few rows may carry 10^9 values
    values = max((sum(group.column(j).num_values for group in groups) for j in range(meta.num_columns)), default=0)
    facts = FileFacts(rows=int(meta.num_rows), values=int(values), uncompressed=int(decoded), file_bytes=size,
                      row_groups=int(meta.num_row_groups))
    if facts.rows > bounds.rows:
        raise SubmissionError("<file>", None, f"holds {facts.rows} rows; {what} expects at most {bounds.rows} "
                              f"({bounds.basis}), so the file was refused from its footer, unread",
                              "Submit one row per key the task lists, each once")
    if facts.values > bounds.values:
        raise SubmissionError("<file>", None, f"holds {facts.values} values in one column; {what} allows at most "
                              f"{bounds.values} ({bounds.rows} rows, lists as long as the task says), so the file "
                              "was refused from its footer, unread",
                              "Write one list per row, as long as the task's submission schema says")
    if facts.uncompressed > bounds.uncompressed:
        raise SubmissionError("<file>", None, f"decodes to {facts.uncompressed} bytes; {what} allows at most "
                              f"{bounds.uncompressed} for {bounds.rows} rows of its declared columns, so the file "
                              "was refused from its footer, unread",
                              "Write only the declared columns, with list columns as long as the task says")
    return facts
