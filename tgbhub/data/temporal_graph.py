"""Temporal graphs as numpy views over verified, memory-mapped cache files.

Timestamps are int64 snapshot indices (discrete time) or as the manifest's time column stores them: float64 for a
derived dataset (its transform's definition declares ``t`` float64, see ``tgbhub.api.transforms()``) and the
release's own type for an imported one. ``ds.splits`` counts rows on every dataset (half-open row ranges, so a loader
never recomputes a split from timestamps); a discrete-time dataset also gives its snapshot ranges as
``ds.snapshot_splits``. The manifest's stored ``splits`` block keeps the unit it declares (``splits.unit``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tgbhub.data.grading import EvaluatorFactory, Gradable
from tgbhub.errors import IntegrityError, InvalidNameError
from tgbhub.manifest import DIGEST_KIND, Manifest

if TYPE_CHECKING:
    import torch
    from torch_geometric.data import TemporalData

    from tgbhub.forecasting.views import Window


@dataclass(frozen=True)
class SnapshotRange:
    """The rows of one split as zero-copy slices of the dataset's columns.

    ``rows`` is the split's half-open row range, the same on every dataset (``ds.splits[name]``). ``start`` and
    ``stop`` count in ``unit``: snapshots ``start <= t < stop`` (``unit="snapshot"``, a discrete-time dataset's
    ``ds.snapshot_splits[name]``) or rows (``unit="row"``, equal to ``rows``).
    """

    name: str
    start: int
    stop: int
    t: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    unit: str = "snapshot"
    #: ``None`` only on a range built by hand; the dataset's :meth:`TemporalGraphDataset.split` always sets it
    rows: tuple[int, int] | None = None

    @property
    def num_snapshots(self) -> int:
        """How many snapshots the range spans.

        Raises:
            InvalidNameError: for a row range (continuous time has no snapshots).
        """
        self._require_snapshots()
        return self.stop - self.start

    def _require_snapshots(self) -> None:
        if self.unit != "snapshot":
            raise InvalidNameError(f"split {self.name!r} is a range of rows with continuous timestamps, which has no "
                                   "snapshots; iterate its rows (t, src, dst), or bin t yourself")

    def snapshots(self) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """Yield ``(t, src, dst)`` for every snapshot of the range, empty ones included.

        Raises:
            InvalidNameError: for a row range (continuous time has no snapshots).
        """
        self._require_snapshots()
        bounds = np.searchsorted(self.t, np.arange(self.start, self.stop + 1))
        for offset in range(self.num_snapshots):
            lo, hi = bounds[offset], bounds[offset + 1]
            yield self.start + offset, self.src[lo:hi], self.dst[lo:hi]


@dataclass(frozen=True)
class Negatives:
    """Pre-generated one-vs-many negatives of a split: query ``i`` is ``(t[i], src[i], dst[i])``.

    ``negatives`` is int32 ``[n_queries, q]``; the first ``count[i]`` entries of row ``i`` are real, the rest
    ``-1``. Arrays are memory-mapped from the verified cache.
    """

    split: str
    file: str
    t: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    negatives: np.ndarray
    count: np.ndarray

    @property
    def q(self) -> int:
        return int(self.negatives.shape[1])

    def __len__(self) -> int:
        return len(self.count)


@dataclass(frozen=True)
class WindowNegatives:
    """The pre-generated negatives of a window-forecasting task on one split: row ``i`` belongs to query ``i`` (the
    split's ``i``-th scored event, see :func:`tgbhub.forecasting.windows.events`): its ``window`` id and its negative
    pair ``(neg_src, neg_dst)``; ``fill`` is 0 for a historical-pool negative, 1 for a random top-up."""

    split: str
    file: str
    digest: str | None
    window: np.ndarray
    neg_src: np.ndarray
    neg_dst: np.ndarray
    fill: np.ndarray

    def __len__(self) -> int:
        return len(self.window)


#: ``(dataset, task name) -> (the task document's artifacts manifest, file -> column -> verified .npy path)``
TaskOpener = Callable[["TemporalGraphDataset", str], "tuple[Manifest, Mapping[str, Mapping[str, Path]]]"]


class TemporalGraphDataset(Gradable):
    """A discrete-time temporal graph: rows sorted by ``(t, src, dst)``, ``t`` the 0-based snapshot index.

    Built from already-verified columns; the constructor does no I/O. ``files`` maps each further artifact
    (negatives) to its verified column files, memory-mapped on first use.
    """

    def __init__(self, manifest: Manifest, columns: Mapping[str, np.ndarray], source: str,
                 files: Mapping[str, Mapping[str, Path]] | None = None,
                 evaluator_factory: EvaluatorFactory | None = None, parent: TemporalGraphDataset | None = None,
                 task_opener: TaskOpener | None = None) -> None:
        self.manifest = manifest
        self.source = source
        self.t: np.ndarray = columns["t"]
        self.src: np.ndarray = columns["src"]
        self.dst: np.ndarray = columns["dst"]
        #: every further column (a derived dataset's ``orig_event_id``, ``copy_idx``; -1 on rows kept from the parent)
        self.columns: Mapping[str, np.ndarray] = dict(columns)
        #: the verified parent of a derived dataset (``None`` for a base dataset)
        self.parent = parent
        self._files = dict(files or {})
        self._evaluator_factory = evaluator_factory
        self._task_opener = task_opener

    def artifact(self, file: str) -> dict[str, np.ndarray]:
        """The verified columns of one of the dataset's own files (``manifest.files``), memory-mapped: e.g. an
        imported node-property dataset's ``labels.parquet``.

        Raises:
            IntegrityError: if the dataset was opened without that file (load it with ``tgbhub.load_dataset``).
        """
        paths = self._files.get(file)
        if paths is None:
            raise IntegrityError(f"{self.name}@{self.version}: {file}", "opened with the dataset", "not opened",
                                 "Load the dataset with tgbhub.load_dataset, which opens every file.")
        return {name: np.load(path, mmap_mode="r", allow_pickle=False) for name, path in paths.items()}

    def negatives(self, split: str, task: str | None = None) -> Negatives:
        """The pre-generated negatives of ``split`` for the ranking task ``task`` (memory-mapped).

        Without ``task``: the default task's negatives, else those of the first task that declares ``split`` (a
        derived dataset declares ``ranking`` with paired and ``ranking-regenerated`` with regenerated negatives; the
        default, paired, must win).

        Raises:
            InvalidNameError: if no task declares negatives for ``split`` (the message lists the splits that have).
            ManifestError: if ``task`` names no task of the manifest.
            IntegrityError: if the dataset was opened without its negatives files (load it with ``load_dataset``).
        """
        tasks = [self.manifest.task_named(task)] if task is not None else [self.manifest.task, *self.manifest.tasks]
        own = {entry.name for entry in self.manifest.files}  # a task document's negatives are window negatives
        declared: dict[str, str] = {}
        for declaring in tasks:
            for split_name, file in declaring.get("negatives", {}).get("files", {}).items():
                if file in own:
                    declared.setdefault(split_name, file)
        if split not in declared:
            raise InvalidNameError(f"{self.name}@{self.version} has no negatives for split {split!r}; splits with "
                                   f"negatives: {', '.join(declared) or 'none'}")
        paths = self._files.get(declared[split])
        if paths is None:
            raise IntegrityError(f"{self.name}@{self.version}: {declared[split]}", "opened with the dataset",
                                 "not opened", "Load the dataset with tgbhub.load_dataset, which opens every file.")
        arrays = {name: np.load(path, mmap_mode="r", allow_pickle=False) for name, path in paths.items()}
        return Negatives(split=split, file=declared[split], t=arrays["t"], src=arrays["src"], dst=arrays["dst"],
                         negatives=arrays["negatives"], count=arrays["count"])

    def declare_tasks(self, manifest: Manifest, opener: TaskOpener) -> None:
        """Adopt ``manifest`` (this dataset's, with the tasks of its task documents appended) and the ``opener``
        that builds their artifacts. Called once by the composition root (:func:`tgbhub.load_dataset`), which can
        only describe a task declared on request after the dataset's rows are assembled.

        Raises:
            ManifestError: if ``manifest`` is another dataset version's.
        """
        if (manifest.name, manifest.version, manifest.files) != (self.manifest.name, self.manifest.version,
                                                                   self.manifest.files):
            from tgbhub.errors import ManifestError

            raise ManifestError(f"{manifest.name}@{manifest.version} is not the manifest of {self.name}@{self.version}")
        self.manifest = manifest
        self._task_opener = opener

    def task_artifacts(self, task: str) -> tuple[Manifest, Mapping[str, Mapping[str, Path]]]:
        """The verified artifacts of a task declared by a task document (:mod:`tgbhub.tasks.documents`), built into the
        cache on first use: the document's artifacts manifest and each file's column paths.

        Raises:
            ManifestError: if no task document of the dataset declares ``task``.
            UnsupportedTaskError: if the dataset was opened without task documents (use ``tgbhub.load_dataset``).
            IntegrityError, GenerationError: if the artifacts cannot be rebuilt to the document's digests.
        """
        if self._task_opener is None:
            from tgbhub.errors import UnsupportedTaskError

            raise UnsupportedTaskError(f"{self.name}@{self.version} was opened without its task documents; load it "
                                       "with tgbhub.load_dataset")
        return self._task_opener(self, task)

    def window_negatives(self, split: str, task: str = "window-forecast") -> WindowNegatives:
        """The pre-generated per-window negatives of ``split`` for the window-forecasting ``task`` (memory-mapped;
        built and verified into the cache on first use).

        Raises:
            InvalidNameError: if the task has no negatives for ``split`` (the message lists the splits that have).
            ManifestError, UnsupportedTaskError, IntegrityError, GenerationError: as :meth:`task_artifacts`.
        """
        declared = dict(self.manifest.task_named(task).get("negatives", {}).get("files", {}))
        if split not in declared:
            raise InvalidNameError(f"task {task!r} of {self.name}@{self.version} has no negatives for split "
                                   f"{split!r}; splits with negatives: {', '.join(declared) or 'none'}")
        artifacts, columns = self.task_artifacts(task)
        file = declared[split]
        arrays = {name: np.load(path, mmap_mode="r", allow_pickle=False) for name, path in columns[file].items()}
        return WindowNegatives(split=split, file=file, digest=artifacts.file(file).digest, window=arrays["window"],
                               neg_src=arrays["neg_src"], neg_dst=arrays["neg_dst"], fill=arrays["fill"])

    def windows(self, split: str, horizon: float | None = None, **options: Any) -> Iterator[Window]:
        """Iterate ``split`` by time window (link forecasting): see :func:`tgbhub.forecasting.views.windows` for the
        options (``skip_empty``, ``negatives``, ``device``, ``task``)."""
        from tgbhub.forecasting.views import windows

        return windows(self, split, horizon, **options)

    def batches(self, split: str, batch_size: int = 200, **options: Any) -> Iterator[Window]:
        """Iterate ``split`` in fixed-size event batches (the legacy protocol): see
        :func:`tgbhub.forecasting.views.batches` (``device``)."""
        from tgbhub.forecasting.views import batches

        return batches(self, split, batch_size, **options)

    name = property(lambda self: self.manifest.name)
    version = property(lambda self: self.manifest.version)
    #: the size of the node-id space: every ``src``/``dst`` is an id in ``[0, num_nodes)`` (the manifest's
    #: ``graph.num_nodes``; an id that occurs in no row still counts, as it does for an embedding table)
    num_nodes = property(lambda self: int(self.manifest.graph["num_nodes"]))
    #: snapshots of a discrete-time graph (and of a variant of one); ``None`` for continuous time (an imported TGB
    #: dataset counts seconds, days or years, not snapshots)
    num_snapshots = property(lambda self: None if self.manifest.graph.get("num_snapshots") is None
                             else int(self.manifest.graph["num_snapshots"]))
    task = property(lambda self: self.manifest.task)

    @property
    def splits(self) -> dict[str, tuple[int, int]]:
        """Every split as a half-open range of rows: split ``name`` is rows ``start..stop-1`` of ``t``, ``src`` and
        ``dst``, the rows :meth:`split` returns. Rows on every dataset, base or derived, discrete or continuous time;
        a discrete-time dataset's snapshot ranges are :attr:`snapshot_splits`. Converted from the manifest's stored
        ``splits`` block, which keeps the unit it declares (``manifest.split_unit``)."""
        if self.manifest.split_unit == "row":
            return {name: (int(start), int(stop)) for name, (start, stop) in self.manifest.splits.items()}
        # the rows are sorted by t, so a snapshot range is one contiguous block of rows
        return {name: (int(lo), int(hi)) for name, (lo, hi) in
                ((name, np.searchsorted(self.t, bounds)) for name, bounds in self.manifest.splits.items())}

    @property
    def snapshot_splits(self) -> dict[str, tuple[int, int]] | None:
        """Every split as a half-open range of snapshots, ``start <= t < stop``, on a dataset whose manifest counts
        its splits in snapshots (a discrete-time base dataset); ``None`` for one that counts rows (continuous time,
        and a derived variant, whose permuted or jittered rows are placed by row, not by time). The row ranges of the
        same splits are :attr:`splits`."""
        if self.manifest.split_unit != "snapshot":
            return None
        return {name: (int(start), int(stop)) for name, (start, stop) in self.manifest.splits.items()}

    @property
    def digest(self) -> str:
        """The logical content digest of the edge file these rows came from."""
        return self.manifest.file(self.manifest.graph["edges_file"]).digest or ""

    @property
    def num_rows(self) -> int:
        return len(self.t)

    def split(self, name: str) -> SnapshotRange:
        """The rows of one split.

        Raises:
            InvalidNameError: if the dataset has no split ``name`` (the message lists the ones it has).
        """
        declared = self.manifest.splits
        if name not in declared:
            raise InvalidNameError(f"{self.name}@{self.version} has no split {name!r}; its splits are "
                                   f"{', '.join(declared)}")
        start, stop = declared[name]
        return self._range(name, int(start), int(stop))

    def _range(self, name: str, start: int, stop: int) -> SnapshotRange:
        """The rows of ``start..stop`` counted in the manifest's split unit (rows, or snapshots of ``t``)."""
        if self.manifest.split_unit == "row":
            return SnapshotRange(name, start, stop, self.t[start:stop], self.src[start:stop], self.dst[start:stop],
                                 unit="row", rows=(start, stop))
        lo, hi = (int(i) for i in np.searchsorted(self.t, [start, stop]))
        return SnapshotRange(name, start, stop, self.t[lo:hi], self.src[lo:hi], self.dst[lo:hi], rows=(lo, hi))

    def snapshots(self, split: str | None = None) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """Yield ``(t, src, dst)`` for every snapshot (of ``split``, if given), empty snapshots included.

        Raises:
            InvalidNameError: if ``split`` is not one of the dataset's splits.
        """
        if split is not None:
            return self.split(split).snapshots()
        return self._range("all", 0, self.num_snapshots if self.manifest.split_unit != "row" else self.num_rows
                           ).snapshots()

    def to_torch(self, device: torch.device | str | int | None = None) -> dict[str, torch.Tensor]:
        """The columns as torch tensors on ``device`` (default: CUDA when available, else CPU): ``src`` and ``dst``
        int64, ``t`` int64 for integer times (snapshot indices) and float64 for float times (a derived dataset's,
        whose jittered times a cast to int64 would truncate), as :attr:`dtypes` has them.

        Raises:
            ModuleNotFoundError: if torch is not installed (the ``torch`` extra).
        """
        try:
            import torch
        except ModuleNotFoundError as exc:
            raise ModuleNotFoundError("to_torch() needs torch, which is not installed: in your tgbhub checkout, run "
                                      "pip install -e '.[torch]'") from exc
        target = torch.device(device) if device is not None else torch.device(
            "cuda" if torch.cuda.is_available() else "cpu")
        time = np.int64 if np.issubdtype(self.t.dtype, np.integer) else np.float64
        # np.array copies: the columns are read-only memory maps, which torch would warn about on every call.
        return {name: torch.from_numpy(np.array(getattr(self, name), dtype=dtype)).to(target)
                for name, dtype in (("src", np.int64), ("dst", np.int64), ("t", time))}

    def to_pyg(self, split: str | None = None) -> TemporalData:
        """The events (of ``split``, if given) as a ``torch_geometric.data.TemporalData``: int64 ``src``/``dst``,
        ``t`` as stored (int64 snapshots or float64), float32 ``msg`` edge features. See
        :func:`tgbhub.forecasting.pyg.to_temporal_data`.

        Raises:
            MissingExtraError: if torch or torch_geometric is not installed (the ``pyg`` extra).
            InvalidNameError: if ``split`` is not one of the dataset's splits.
        """
        from tgbhub.forecasting.pyg import to_temporal_data

        return to_temporal_data(self, split)

    @property
    def dtypes(self) -> dict[str, str]:
        """The dtype of each column as this object exposes it (``t``, ``src``, ``dst``, then any further column)."""
        return {name: str(values.dtype) for name, values in {"t": self.t, "src": self.src, "dst": self.dst,
                                                              **self.columns}.items()}

    def dtype_changes(self) -> dict[str, tuple[str, str]]:
        """``column -> (parent's dtype, this dataset's dtype)`` for each column a derived dataset stores with another
        dtype than its parent (its transform's definition declares them: ``tgbhub.api.transforms()``); empty for a
        base dataset."""
        if self.parent is None:
            return {}
        mine, theirs = self.dtypes, self.parent.dtypes
        return {name: (theirs[name], mine[name]) for name in mine if name in theirs and theirs[name] != mine[name]}

    def card(self) -> dict[str, Any]:
        """A summary a person reads first.

        Returns:
            Sizes (``num_nodes``: the node-id space), ``splits`` as row ranges (and ``snapshot_splits`` on a
            discrete-time dataset), the column ``dtypes`` (and for a derived dataset ``dtype_changes`` against its
            parent), the edge file's ``digest`` with its ``digest_kind`` (a logical content digest, not a file
            sha256) and ``source``, who served the bytes.
        """
        card: dict[str, Any] = {"name": self.name, "version": self.version, "source": self.source,
                                "num_nodes": self.num_nodes, "num_rows": self.num_rows,
                                "num_snapshots": self.num_snapshots,
                                "splits": {k: list(v) for k, v in self.splits.items()}}
        if self.snapshot_splits is not None:
            card["snapshot_splits"] = {k: list(v) for k, v in self.snapshot_splits.items()}
        card["dtypes"] = self.dtypes
        if self.parent is not None:
            # e.g. t: int64 snapshot indices in the parent, float64 in every variant's events file
            kind = (self.manifest.transform or {}).get("kind", "its transform")
            card["dtype_changes"] = {name: f"{before} in {self.parent.name}, {after} here (declared by the {kind} "
                                     "transform: tgbhub.api.transforms())"
                                     for name, (before, after) in self.dtype_changes().items()}
        return {**card, "digest": self.digest, "digest_kind": DIGEST_KIND}

    def __repr__(self) -> str:
        time = (f"{self.num_snapshots} snapshots" if self.num_snapshots is not None
                else f"continuous time in {self.manifest.graph.get('time_unit', 'units')}")
        return (f"TemporalGraphDataset({self.name}@{self.version}: {self.num_nodes} nodes, {self.num_rows} rows, "
                f"{time}, source={self.source!r})")
