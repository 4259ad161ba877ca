"""What a dataset page shows of the data itself, as the HF Hub's viewer does: the first rows of every file (column
names, types, values), and one ranking query with its negatives.

Only the cache is read, and only a little of each file: a Parquet file through its first record batch
(``ParquetFile.iter_batches``, so a file of any size costs one batch), an HDF5 file through a slice of its first
declared array (for a trajectory file: the first steps of one trajectory). Every value becomes a short string here;
the templates escape it like every other value of a page.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tgbhub import api, cache
from tgbhub.columns import HDF5_ENCODING
from tgbhub.manifest import Manifest
from tgbhub.site.examples import Example, example_submission
from tgbhub.site.figures import manifest_in_cache

#: rows a file's preview shows
PREVIEW_ROWS = 20
#: columns an array's slice shows (an HDF5 array of many variables; the rest are counted, not shown)
PREVIEW_COLUMNS = 16
#: items of a list value shown in a preview cell (a query's negatives are shown whole, up to QUERY_ITEMS)
CELL_ITEMS = 6
QUERY_ITEMS = 200
#: characters of a text value shown in a cell
CELL_CHARS = 80
ELLIPSIS = "\u2026"
_PARQUET = ("application/x-parquet", "application/vnd.apache.parquet")


@dataclass(frozen=True)
class FilePreview:
    """The first rows of one file: ``schema`` (every column or array with its type), the ``columns``, their
    ``types`` and the ``rows`` of the table shown, what part of the file that is (``shown``), and ``note`` where
    nothing could be shown."""

    name: str
    encoding: str
    schema: tuple[tuple[str, str], ...] = ()
    columns: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    shown: str = ""
    note: str = ""


@dataclass(frozen=True)
class QueryPreview:
    """One query of a ranking task and its negatives: the task, the split, the file and the row's fields."""

    task: str
    split: str
    file: str
    fields: tuple[tuple[str, str], ...]
    negatives: tuple[str, ...] = field(default=())


def file_previews(files: Sequence[Any], folder: Path, rows: int = PREVIEW_ROWS) -> list[FilePreview]:
    """The preview of every file of a dataset whose verified files lie in ``folder`` (the cache entry).

    Args:
        files: the manifest's file entries (:class:`~tgbhub.manifest.FileEntry`).
        folder: the dataset version's folder in the cache.
        rows: how many rows (or steps of a trajectory) each preview shows.

    Returns:
        One :class:`FilePreview` per file, in the manifest's order; a file that cannot be read has a ``note``
        saying why instead of rows (the page still renders).
    """
    return [_preview(entry, folder / entry.name, rows) for entry in files]


def _preview(entry: Any, path: Path, rows: int) -> FilePreview:
    try:
        if entry.encoding in _PARQUET or entry.name.endswith(".parquet"):
            return _parquet_preview(entry.name, entry.encoding, path, rows)
        if entry.encoding == HDF5_ENCODING:
            return _hdf5_preview(entry.name, path, tuple(entry.columns), rows)
    except (OSError, ValueError, KeyError, ImportError) as exc:  # pyarrow's and h5py's errors derive from these
        return FilePreview(entry.name, entry.encoding, note=f"No preview: {path.name} could not be read ({exc}).")
    return FilePreview(entry.name, entry.encoding, note=f"No preview for files of type {entry.encoding}.")


def _parquet_preview(name: str, encoding: str, path: Path, rows: int) -> FilePreview:
    """The first ``rows`` rows of a Parquet file, read as one record batch (never the whole file)."""
    import pyarrow.parquet as pq

    with pq.ParquetFile(path) as parquet:
        schema = tuple((f.name, str(f.type)) for f in parquet.schema_arrow)
        total = parquet.metadata.num_rows
        batch = next(parquet.iter_batches(batch_size=max(rows, 1)), None)
    table = [] if batch is None else batch.slice(0, rows).to_pylist()
    columns = tuple(column for column, _ in schema)
    return FilePreview(name, encoding, schema, columns, tuple(kind for _, kind in schema),
                       tuple(tuple(cell(row[c]) for c in columns) for row in table),
                       f"rows 1 to {len(table):,} of {total:,}")


def _hdf5_preview(name: str, path: Path, declared: tuple[str, ...], rows: int) -> FilePreview:
    """A slice of the first array the manifest declares for an HDF5 file: for an array of three or more axes the
    first index of every leading axis (one trajectory), then the first ``rows`` steps and up to
    :data:`PREVIEW_COLUMNS` variables."""
    import h5py

    with h5py.File(path, "r") as handle:
        arrays = [key for key in declared if isinstance(handle.get(key), h5py.Dataset)] or sorted(
            key for key in handle if isinstance(handle[key], h5py.Dataset))
        schema = tuple((key, f"{handle[key].dtype} {tuple(handle[key].shape)}") for key in arrays)
        if not arrays:
            return FilePreview(name, HDF5_ENCODING, schema, note="No preview: the file holds no array.")
        first = handle[arrays[0]]
        lead = (0,) * max(first.ndim - 2, 0)
        if first.ndim == 0:
            return FilePreview(name, HDF5_ENCODING, schema, (arrays[0],), (str(first.dtype),), ((cell(first[()]),),),
                               "a scalar")
        if first.ndim == 1:
            values = first[:rows]
            return FilePreview(name, HDF5_ENCODING, schema, (arrays[0],), (str(first.dtype),),
                               tuple((cell(v),) for v in values.tolist()),
                               f"{arrays[0]}[:{len(values)}] of {first.shape[0]:,}")
        width = min(first.shape[-1], PREVIEW_COLUMNS)
        block = first[lead + (slice(0, rows), slice(0, width))]
        dtype = str(first.dtype)
    index = "".join(f"{i}, " for i in lead)
    columns = ("step", *(f"{arrays[0]}[{index}:, {j}]" for j in range(width)))
    table = tuple((f"{step:,}", *(cell(v) for v in values)) for step, values in enumerate(block.tolist()))
    more = f", {first.shape[-1] - width:,} more columns not shown" if first.shape[-1] > width else ""
    where = f"trajectory {index.rstrip(', ')}: " if lead else ""
    return FilePreview(name, HDF5_ENCODING, schema, columns, ("index", *(dtype,) * width), table,
                       f"{where}{arrays[0]}[{index}:{len(table)}, :{width}] of shape {tuple(first.shape)}{more}")


def query_preview(tasks: Sequence[Mapping[str, Any]], files: Sequence[Any], folder: Path) -> QueryPreview | None:
    """The first query of the first task that declares pre-generated negatives (its report split's file when it
    declares one), with every negative; None when no task of the dataset has negatives files.

    Args:
        tasks: the manifest's tasks.
        files: the manifest's file entries (a task document's negatives are not the dataset's files: skipped).
        folder: the dataset version's folder in the cache.
    """
    own = {entry.name for entry in files}
    for task in tasks:
        declared = {str(split): str(file) for split, file in ((task.get("negatives") or {}).get("files") or {}).items()
                    if file in own}
        if not declared:
            continue
        split = str(task.get("report_split")) if task.get("report_split") in declared else next(iter(declared))
        first = _first_row(folder / declared[split])
        if first is None:
            continue
        fields = tuple((key, cell(value)) for key, value in first.items() if not isinstance(value, list))
        negatives = next((value for value in first.values() if isinstance(value, list)), [])
        return QueryPreview(str(task.get("name")), split, declared[split], fields,
                            tuple(cell(v) for v in negatives[:QUERY_ITEMS]))
    return None


def _first_row(path: Path) -> dict[str, Any] | None:
    import pyarrow.parquet as pq

    try:
        with pq.ParquetFile(path) as parquet:
            batch = next(parquet.iter_batches(batch_size=1), None)
    except (OSError, ValueError):
        return None
    return None if batch is None or batch.num_rows == 0 else batch.slice(0, 1).to_pylist()[0]


def cell(value: Any, items: int = CELL_ITEMS) -> str:
    """A value as a preview cell shows it: floats to six significant digits, a list's first ``items`` items and its
    length, bytes as hex, long text cut; ``null`` for a missing value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (bytes, bytearray)):
        return value[:16].hex() + (ELLIPSIS if len(value) > 16 else "")
    if isinstance(value, (list, tuple)):
        shown = ", ".join(cell(v) for v in value[:items])
        more = ", " + ELLIPSIS if len(value) > items else ""
        return f"[{shown}{more}] ({len(value):,})"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {cell(v)}" for k, v in _first(value.items(), items)) + "}"
    text = str(value)
    return text if len(text) <= CELL_CHARS else text[:CELL_CHARS] + ELLIPSIS


def _first(pairs: Any, count: int) -> Iterator[Any]:
    for index, pair in enumerate(pairs):
        if index >= count:
            return
        yield pair


@dataclass
class Previews:
    """What :func:`site_previews` found, by dataset name: the file previews, the query with its negatives, the
    example submission (or why there is none), and ``files`` (site path -> bytes of each example file)."""

    files: dict[str, list[FilePreview]] = field(default_factory=dict)
    queries: dict[str, QueryPreview] = field(default_factory=dict)
    examples: dict[str, Example] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    site_files: dict[str, bytes] = field(default_factory=dict)


def site_previews(rows: Sequence[Mapping[str, Any]], manifests: Mapping[str, Manifest], root: Path,
                  page_of: Mapping[str, str]) -> Previews:
    """The previews and example submissions of every page whose dataset the cache at ``root`` holds complete.

    Args:
        rows: the catalogue rows of the site.
        manifests: name -> manifest of the dataset pages (a variant's is read from the cache).
        root: the cache root.
        page_of: name -> the page's path in the site (``datasets/<family>/<name>.html``).

    Returns:
        The :class:`Previews`; a dataset the cache does not hold has none (its page says so).

    Raises:
        CacheWriteError: if an example submission cannot be kept in the cache.
    """
    found = Previews()
    for row in rows:
        name = row["name"]
        manifest = manifest_in_cache(row, manifests, root) if name in page_of else None
        if manifest is None or not cache.is_complete(root, manifest.name, manifest.version):
            continue  # nothing is built or downloaded for a preview
        manifest = api.with_task_documents(manifest)
        folder = cache.version_dir(root, manifest)
        found.files[name] = file_previews(manifest.files, folder)
        query = query_preview(manifest.tasks, manifest.files, folder)
        if query is not None:
            found.queries[name] = query
        example = example_submission(manifest, root, page_of[name])
        if isinstance(example, Example):
            found.examples[name] = example
            found.site_files[f"{page_of[name].rsplit('/', 1)[0]}/{example.file}"] = example.data
        else:
            found.notes[name] = example
    return found
