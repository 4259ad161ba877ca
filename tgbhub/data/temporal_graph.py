"""Temporal graphs as numpy views over verified, memory-mapped cache files.

Timestamps are int64 snapshot indices (discrete time) or as the manifest's time column stores them: float64 for a
derived dataset (its transform's definition declares ``t`` float64, see ``tgbhub.api.transforms()``) and the
release's own type for an imported one. ``ds.splits`` counts rows on every dataset (half-open row ranges, so a loader
never recomputes a split from timestamps); a discrete-time dataset also gives its snapshot ranges as
``ds.snapshot_splits``. The manifest's stored ``splits`` block keeps the unit it declares (``splits.unit``).

What the manifest declares beside the rows is read by one accessor each: ``edge_features`` (``graph.edge_features``),
``node_features`` (``one-hot``, or ``graph.node_feat``'s file), ``edge_weights`` (``graph.edge_weight``),
``edge_types`` (``graph.edge_types``) and ``node_labels`` (``graph.labels_file``, by the task's graded rows). The
conversions carry them: ``to_pyg`` (PyG ``TemporalData``), ``to_tgm`` (TGM ``DGData``), and the edge file's own
columns as ``to_arrow``, ``to_pandas`` and ``to_hf`` (a ``datasets.DatasetDict``). Each method delegates to
:mod:`tgbhub.data.conversions`, which imports its library on first use, so none is needed to open a dataset.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tgbhub.data import conversions
from tgbhub.data.grading import EvaluatorFactory, Gradable
from tgbhub.errors import IntegrityError, InvalidNameError, ManifestError
from tgbhub.manifest import DIGEST_KIND, Manifest

if TYPE_CHECKING:
    import datasets
    import pandas
    import pyarrow
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


#: the column an ``edge_features`` declaration names: ``float64[16] (edge_feat)``
_DECLARED_COLUMN = re.compile(r"\((\w+)\)\s*$")
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
        return conversions.to_torch(self, device)

    def rows_of(self, split: str | None = None) -> tuple[int, int]:
        """The half-open row range of ``split`` (every row without one).

        Raises:
            InvalidNameError: if ``split`` is not one of the dataset's splits.
        """
        if split is None:
            return 0, self.num_rows
        rows = self.split(split).rows
        return rows if rows is not None else self.splits[split]

    def edge_features(self, split: str | None = None) -> np.ndarray | None:
        """The edge features the manifest declares (``graph.edge_features``), one row per row of ``split`` (or of
        the dataset): float32 ones ``[n, 1]`` for ``constant-1`` (T-GRAB), the named column for ``float64[d]
        (edge_feat)`` (an imported TGB dataset, as stored); ``None`` where it declares none (``none``, or no entry).

        Raises:
            InvalidNameError: if ``split`` is not one of the dataset's splits.
            ManifestError: if the declared column is not among the dataset's columns.
        """
        declared = self.manifest.graph.get("edge_features")
        lo, hi = self.rows_of(split)
        if declared in (None, "none"):
            return None
        if declared == "constant-1":
            return np.ones((hi - lo, 1), dtype=np.float32)
        named = _DECLARED_COLUMN.search(str(declared))
        column = named.group(1) if named else None
        if column not in self.columns:
            raise ManifestError(f"{self.name}@{self.version} declares edge_features={declared!r}, which names no "
                                f"column it holds (columns: {', '.join(self.columns)}); clear its cache entry and "
                                "load it again with this tgbhub version")
        features = self.columns[str(column)][lo:hi]
        return features.reshape(hi - lo, -1)

    def node_features(self) -> np.ndarray | None:
        """The node features the manifest declares, one row per node id (``num_nodes`` rows): float32 identity rows
        for ``one-hot`` (T-GRAB), the column ``graph.node_feat`` names in its file (tgbl-flight's airports, as
        stored); ``None`` where it declares none.

        Raises:
            ManifestError: if the declared file holds another number of rows than ``num_nodes``.
            IntegrityError: if the dataset was opened without that file (load it with ``tgbhub.load_dataset``).
        """
        graph = self.manifest.graph
        if graph.get("node_features") == "one-hot":
            return np.eye(self.num_nodes, dtype=np.float32)
        declared = graph.get("node_feat")
        if declared is None:
            return None
        features = self.artifact(declared["file"])[declared["column"]]
        if len(features) != self.num_nodes:
            raise ManifestError(f"{self.name}@{self.version}: {declared['file']} holds {len(features)} rows of node "
                                f"features for {self.num_nodes} nodes; clear its cache entry and load it again")
        return features

    def edge_weights(self, split: str | None = None) -> np.ndarray | None:
        """The edge weights of ``split``'s rows (or every row): the column the manifest's ``graph.edge_weight``
        names (a tgbn dataset's ``weight``); ``None`` where it declares none.

        Raises:
            InvalidNameError: if ``split`` is not one of the dataset's splits.
            ManifestError: if the declared column is not among the dataset's columns.
        """
        column = self.manifest.graph.get("edge_weight")
        if column is None:
            return None
        lo, hi = self.rows_of(split)
        if column not in self.columns:
            raise ManifestError(f"{self.name}@{self.version} declares edge_weight={column!r}, a column it does not "
                                "hold; clear its cache entry and load it again with this tgbhub version")
        return self.columns[column][lo:hi]

    def edge_types(self, split: str | None = None) -> np.ndarray | None:
        """The relation type of each row of ``split`` (or every row): the column ``graph.edge_types`` names (a
        knowledge or heterogeneous graph); ``None`` where it declares none.

        Raises:
            InvalidNameError: if ``split`` is not one of the dataset's splits.
        """
        declared = self.manifest.graph.get("edge_types")
        if declared is None:
            return None
        lo, hi = self.rows_of(split)
        return self.columns[declared["column"]][lo:hi]

    def node_labels(self, split: str | None = None) -> dict[str, np.ndarray] | None:
        """The node labels of a node-property task (the manifest's ``graph.labels_file``): ``t``, ``node`` and the
        dense ``label`` vectors, the rows the task grades in ``split`` (every row of the file without one); ``None``
        for a dataset without labels.

        Raises:
            InvalidNameError: if the task grades no labels in ``split`` (the message lists the splits it grades).
            IntegrityError: if the dataset was opened without the labels file.
        """
        file = self.manifest.graph.get("labels_file")
        if file is None:
            return None
        columns = self.artifact(file)
        if split is None:
            return {name: columns[name] for name in ("t", "node", "label")}
        graded = self.manifest.task.get("labels", {}).get("rows", {})
        if split not in graded:
            raise InvalidNameError(f"{self.name}@{self.version} grades no labels in split {split!r}; it grades "
                                   f"labels in {', '.join(graded) or 'no split'}")
        lo, hi = (int(i) for i in graded[split])
        return {name: columns[name][lo:hi] for name in ("t", "node", "label")}

    def to_pyg(self, split: str | None = None) -> TemporalData:
        """The events (of ``split``, if given) as a ``torch_geometric.data.TemporalData`` in stored row order, with
        what the manifest declares: int64 ``src``/``dst``; ``t`` as stored (int64 snapshots or float64); float32
        ``msg``, the edge features (:meth:`edge_features`; ``[n, 0]`` where none are declared, so PyG's memory
        models take a zero-width message); float32 ``x`` ``[num_nodes, d]`` node features (:meth:`node_features`);
        ``edge_weight`` (float64), ``edge_type`` (int64); and for a node-property dataset the split's labels as
        ``label_t``, ``label_node`` and ``label`` (:meth:`node_labels`).

        ``num_nodes`` is the dataset's node-id space (:attr:`num_nodes`), on every split and on every slice of it,
        not the largest id that occurs + 1: the object is a ``TemporalData`` subclass that stores it (and never cuts
        ``x`` or the labels to events when it is sliced).

        Raises:
            MissingExtraError: if torch or torch_geometric is not installed (the ``pyg`` extra).
            InvalidNameError: if ``split`` is not one of the dataset's splits.
            ManifestError: if the timestamps are neither integers nor floats, or a declared column is missing.
        """
        return conversions.to_pyg(self, split)

    def to_arrow(self, split: str | None = None) -> pyarrow.Table:
        """The edge rows (of ``split``, if given) as a ``pyarrow.Table`` with the edge file's columns, in its order
        and with its types (a 2-D column, such as ``edge_feat``, as a fixed-size list), zero-copy over the memory
        maps.

        Raises:
            InvalidNameError: if ``split`` is not one of the dataset's splits.
        """
        return conversions.to_arrow(self, split)

    def to_pandas(self, split: str | None = None) -> pandas.DataFrame:
        """The edge rows (of ``split``, if given) as a ``pandas.DataFrame``: the edge file's columns and dtypes, as
        ``pyarrow.parquet.read_table(edges).to_pandas()`` gives them (a feature column holds one numpy vector per
        row), indexed ``0..n-1`` within the split.

        Raises:
            MissingExtraError: if pandas is not installed (the ``pandas`` extra).
            InvalidNameError: if ``split`` is not one of the dataset's splits.
        """
        return conversions.to_pandas(self, split)

    def to_hf(self) -> datasets.DatasetDict:
        """Every split as a Hugging Face ``datasets.DatasetDict`` (split name -> ``datasets.Dataset`` of its edge
        rows, the edge file's columns and types), built in memory from the verified cache: no hub, no download.

        Raises:
            MissingExtraError: if ``datasets`` is not installed (the ``datasets`` extra).
        """
        return conversions.to_hf(self)

    def to_tgm(self, time_delta: str | None = None) -> Any:
        """The dataset as TGM's ``tgm.data.DGData`` (tgm-lib 0.1.0b1) with TGB's splits: ``data.split()`` gives
        ``train, val, test`` holding exactly those splits' rows, as ``DGData.from_tgb`` sets its ``TGBSplit`` (each
        split's first and last timestamp). Edges keep the stored row order (edge ``i`` is row ``i``), labels theirs
        (after the edges of their timestamp); ``edge_x``, ``static_node_x``, ``edge_type``, ``node_type`` and the
        labels (``node_y``, every labelled row of the file) are what the manifest declares. (TGM's own split of a
        dataset with labels re-sorts each split's events, edges and labels together, by time alone: the rows of
        one timestamp may come out in another order there.) TGM's negatives for the val and test splits come from
        :func:`tgbhub.compat.tgm.negatives_hook` (this dataset's arrays; no py-tgb).

        ``time_delta`` is TGM's unit of one timestamp step (``"s"``, ``"D"``, ``"Y"``, or ``"r"``: ordered events
        only); by default the manifest's ``time_unit`` where TGM has it (``second`` -> ``"s"``, ``year`` ->
        ``"Y"``), else ``"r"`` (a snapshot index, or a unit the manifest states for the data's granularity rather
        than for its timestamp values, as tgbl-flight's ``day`` over Unix seconds).

        Raises:
            MissingExtraError: if tgm-lib is not installed (the ``tgm`` extra).
            UnsupportedTaskError: for timestamps that are not non-negative integers (a jittered variant's float
                times), or splits that share a timestamp (TGM splits by time, so it could not keep them apart).
        """
        return conversions.to_tgm(self, time_delta)

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


def __getattr__(name: str) -> Any:
    """PEP 562: ``TemporalGraphData`` is defined on first access, so importing this module never imports PyG; a
    pickled ``to_pyg()`` result finds its class here.

    Raises:
        MissingExtraError: for ``TemporalGraphData`` without torch_geometric (the ``pyg`` extra).
        AttributeError: for any other unknown name.
    """
    if name == "TemporalGraphData":
        return conversions._temporal_graph_data()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
