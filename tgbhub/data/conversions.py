"""Turning a temporal graph dataset into other libraries' objects: torch tensors (``to_torch``), PyG's
``TemporalData`` (``to_pyg``), a ``pyarrow.Table`` or ``pandas.DataFrame`` of the edge file's own columns
(``to_arrow``, ``to_pandas``), a Hugging Face ``datasets.DatasetDict`` (``to_hf``) and TGM's ``DGData``
(``to_tgm``).

Each function takes the dataset first and backs the :class:`~tgbhub.data.temporal_graph.TemporalGraphDataset` method
of its name, which documents it. Each imports its library on first use, so none is needed to open a dataset; a
missing one raises :class:`~tgbhub.errors.MissingExtraError` with the command that installs its extra. What the
manifest declares beside the rows (edge and node features, weights, types, labels) comes from the dataset's own
accessors.
"""

from __future__ import annotations

import functools
import itertools
from typing import TYPE_CHECKING, Any

import numpy as np

from tgbhub.errors import ManifestError, MissingExtraError, UnsupportedTaskError

if TYPE_CHECKING:
    import datasets
    import pandas
    import pyarrow
    import torch
    from torch_geometric.data import TemporalData

    from tgbhub.data.temporal_graph import TemporalGraphDataset

#: manifest ``time_unit`` -> TGM's ``TimeDeltaDG`` unit, where one timestamp step is that unit
_TGM_TIME_UNITS = {"second": "s", "minute": "m", "hour": "h", "year": "Y"}
#: the splits TGM's ``TGBSplit`` cuts, in time order
_TGM_SPLITS = ("train", "val", "test")
#: what ``to_pyg`` stores per node or per label row, never cut to a slice's events
_NOT_PER_EVENT = ("x", "label_t", "label_node", "label")
#: the module a pickled ``to_pyg()`` result names for its class (which resolves it through its ``__getattr__``)
_PICKLED_MODULE = "tgbhub.data.temporal_graph"


def _require_torch(needed_for: str, extra: str) -> Any:
    """The torch module.

    Raises:
        MissingExtraError: naming ``extra`` if torch is not installed.
    """
    try:
        import torch
    except ModuleNotFoundError as exc:
        raise MissingExtraError("torch", extra, needed_for) from exc
    return torch


@functools.cache
def _temporal_graph_data() -> type:
    """``TemporalGraphData``: PyG's ``TemporalData`` with a stored node count, defined on first use (PyG is an
    optional extra).

    Raises:
        MissingExtraError: if torch_geometric is not installed (the ``pyg`` extra).
    """
    try:
        from torch_geometric.data import TemporalData
    except ModuleNotFoundError as exc:
        raise MissingExtraError("torch_geometric", "pyg", "to_pyg()") from exc

    class TemporalGraphData(TemporalData):
        """A ``TemporalData`` whose ``num_nodes`` is the dataset's node-id space once set (PyG's own is the
        largest id that occurs + 1, read-only) and kept by slicing; node-level attributes (``x``) and label rows
        are never cut to a slice's events."""

        def __setattr__(self, key: str, value: Any) -> None:
            if key == "num_nodes":  # kept outside the store: every stored tensor would be sliced as an event column
                self.__dict__["_num_nodes"] = int(value)
            else:
                super().__setattr__(key, value)

        @property
        def num_nodes(self) -> int:
            stored = self.__dict__.get("_num_nodes")
            return int(super().num_nodes) if stored is None else int(stored)

        def index_select(self, idx: Any) -> TemporalGraphData:
            out = super().index_select(idx)
            for key in _NOT_PER_EVENT:
                if key in self._store:
                    out[key] = self._store[key]
            return out

    TemporalGraphData.__module__, TemporalGraphData.__qualname__ = _PICKLED_MODULE, "TemporalGraphData"
    return TemporalGraphData


def to_torch(dataset: TemporalGraphDataset, device: torch.device | str | int | None = None
             ) -> dict[str, torch.Tensor]:
    """See :meth:`TemporalGraphDataset.to_torch`.

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
    time = np.int64 if np.issubdtype(dataset.t.dtype, np.integer) else np.float64
    # np.array copies: the columns are read-only memory maps, which torch would warn about on every call.
    return {name: torch.from_numpy(np.array(getattr(dataset, name), dtype=dtype)).to(target)
            for name, dtype in (("src", np.int64), ("dst", np.int64), ("t", time))}


def to_pyg(dataset: TemporalGraphDataset, split: str | None = None) -> TemporalData:
    """See :meth:`TemporalGraphDataset.to_pyg`.

    Raises:
        MissingExtraError: if torch or torch_geometric is not installed (the ``pyg`` extra).
        InvalidNameError: if ``split`` is not one of the dataset's splits.
        ManifestError: if the timestamps are neither integers nor floats, or a declared column is missing.
    """
    torch, events_class = _require_torch("to_pyg()", "pyg"), _temporal_graph_data()
    lo, hi = dataset.rows_of(split)
    t = np.asarray(dataset.t[lo:hi])
    # np.array copies: the columns are read-only memory maps, which torch would warn about.
    fields: dict[str, Any] = {"src": np.array(dataset.src[lo:hi], dtype=np.int64),
                              "dst": np.array(dataset.dst[lo:hi], dtype=np.int64),
                              "t": np.array(t, dtype=_time_dtype(dataset, t))}
    features = dataset.edge_features(split)
    fields["msg"] = (np.zeros((hi - lo, 0), dtype=np.float32) if features is None
                     else np.array(features, dtype=np.float32))
    optional = {"x": (dataset.node_features(), np.float32), "edge_weight": (dataset.edge_weights(split), np.float64),
                "edge_type": (dataset.edge_types(split), np.int64)}
    graded = dataset.manifest.task.get("labels", {}).get("rows", {})
    labels = dataset.node_labels(split) if split is None or split in graded else None
    if labels is not None:
        optional.update({"label_t": (labels["t"], np.int64), "label_node": (labels["node"], np.int64),
                         "label": (labels["label"], np.float32)})
    fields.update({name: np.array(values, dtype=dtype) for name, (values, dtype) in optional.items()
                   if values is not None})
    data = events_class(**{name: torch.from_numpy(values) for name, values in fields.items()})
    data.num_nodes = dataset.num_nodes
    return data


def _time_dtype(dataset: TemporalGraphDataset, t: np.ndarray) -> type[np.generic]:
    """int64 for integer times, float64 for float ones.

    Raises:
        ManifestError: for any other dtype.
    """
    if np.issubdtype(t.dtype, np.integer):
        return np.int64
    if np.issubdtype(t.dtype, np.floating):
        return np.float64
    raise ManifestError(f"{dataset.name}@{dataset.version}: timestamps have dtype {t.dtype}; expected integer "
                        "snapshot indices or float times. Rebuild the dataset with this tgbhub version.")


def to_arrow(dataset: TemporalGraphDataset, split: str | None = None) -> pyarrow.Table:
    """See :meth:`TemporalGraphDataset.to_arrow`.

    Raises:
        InvalidNameError: if ``split`` is not one of the dataset's splits.
    """
    import pyarrow as pa

    lo, hi = dataset.rows_of(split)
    arrays = {}
    for name, values in dataset.columns.items():
        part = np.asarray(values[lo:hi])
        if part.ndim == 2:
            flat = pa.array(np.ascontiguousarray(part).reshape(-1))
            arrays[name] = pa.FixedSizeListArray.from_arrays(flat, part.shape[1])
        else:
            arrays[name] = pa.array(part)
    return pa.table(arrays)


def to_pandas(dataset: TemporalGraphDataset, split: str | None = None) -> pandas.DataFrame:
    """See :meth:`TemporalGraphDataset.to_pandas`.

    Raises:
        MissingExtraError: if pandas is not installed (the ``pandas`` extra).
        InvalidNameError: if ``split`` is not one of the dataset's splits.
    """
    try:
        import pandas  # noqa: F401  # pyarrow's to_pandas imports it; fail here with the extra to install
    except ModuleNotFoundError as exc:
        raise MissingExtraError("pandas", "pandas", "to_pandas()") from exc
    return to_arrow(dataset, split).to_pandas()


def to_hf(dataset: TemporalGraphDataset) -> datasets.DatasetDict:
    """See :meth:`TemporalGraphDataset.to_hf`.

    Raises:
        MissingExtraError: if ``datasets`` is not installed (the ``datasets`` extra).
    """
    try:
        import datasets
    except ModuleNotFoundError as exc:
        raise MissingExtraError("datasets", "datasets", "to_hf()") from exc
    return datasets.DatasetDict({name: datasets.Dataset(to_arrow(dataset, name)) for name in dataset.splits})


def to_tgm(dataset: TemporalGraphDataset, time_delta: str | None = None) -> Any:
    """See :meth:`TemporalGraphDataset.to_tgm`.

    Raises:
        MissingExtraError: if tgm-lib is not installed (the ``tgm`` extra).
        UnsupportedTaskError: for timestamps that are not non-negative integers (a jittered variant's float
            times), or splits that share a timestamp (TGM splits by time, so it could not keep them apart).
    """
    try:
        from tgm.data import DGData
        from tgm.data.split import TGBSplit
    except ModuleNotFoundError as exc:
        raise MissingExtraError("tgm-lib", "tgm", "to_tgm()") from exc
    torch = _require_torch("to_tgm()", "tgm")
    time = _integral_times(dataset)
    unit = time_delta or _TGM_TIME_UNITS.get(str(dataset.manifest.graph.get("time_unit")), "r")
    edge_index = np.stack([np.asarray(dataset.src), np.asarray(dataset.dst)], axis=1).astype(np.int32)
    fields = {"edge_x": (dataset.edge_features(), np.float32),
              "static_node_x": (dataset.node_features(), np.float32),
              "edge_type": (dataset.edge_types(), np.int32), "node_type": (_node_types(dataset), np.int32)}
    labels = dataset.node_labels()
    label_time = np.zeros(0, dtype=np.int64) if labels is None else np.asarray(labels["t"], dtype=np.int64)
    # one timeline, sorted stably here (edges before labels at a tie): DGData would re-sort an unsorted one
    # with an unstable argsort, which reorders the rows of a timestamp
    timeline = np.concatenate([time, label_time])
    order = np.argsort(timeline, kind="stable")
    if labels is not None:
        fields.update({"node_y_mask": (np.flatnonzero(order >= len(time)), np.int32),
                       "node_y_nids": (labels["node"], np.int32), "node_y": (labels["label"], np.float32)})
    tensors = {name: torch.from_numpy(np.array(values, dtype=dtype)) for name, (values, dtype) in fields.items()
               if values is not None}
    data = DGData(time_delta=unit, time=torch.from_numpy(timeline[order]),
                  edge_mask=torch.from_numpy(np.flatnonzero(order < len(time)).astype(np.int32)),
                  edge_index=torch.from_numpy(edge_index), **tensors)
    data._split_strategy = TGBSplit(_time_bounds(dataset, time))  # as DGData.from_tgb sets it
    return data


def _integral_times(dataset: TemporalGraphDataset) -> np.ndarray:
    """``t`` as int64, for TGM.

    Raises:
        UnsupportedTaskError: if a time is negative or not a whole number.
    """
    t = np.asarray(dataset.t)
    whole = np.issubdtype(t.dtype, np.integer) or bool(np.all(np.isfinite(t)) and np.array_equal(t, np.floor(t)))
    if not whole or (len(t) and t.min() < 0):
        raise UnsupportedTaskError(f"{dataset.name}@{dataset.version} has timestamps TGM cannot hold (it takes "
                                   "non-negative integers; these are fractional or negative, as a jittered "
                                   "variant's are); use to_pyg() or the dataset's columns instead")
    return t.astype(np.int64)


def _time_bounds(dataset: TemporalGraphDataset, time: np.ndarray) -> dict[str, tuple[int, int]]:
    """Each split's first and last timestamp (TGM's ``TGBSplit``), for the splits TGM knows.

    Raises:
        UnsupportedTaskError: if the dataset lacks one of them, or two splits share a timestamp.
    """
    splits = dataset.splits
    missing = [name for name in _TGM_SPLITS if name not in splits or splits[name][0] >= splits[name][1]]
    if missing:
        raise UnsupportedTaskError(f"{dataset.name}@{dataset.version} has no rows in split(s) {', '.join(missing)}; "
                                   "TGM's split takes non-empty train, val and test splits")
    bounds = {name: (int(time[splits[name][0]]), int(time[splits[name][1] - 1])) for name in _TGM_SPLITS}
    for before, after in itertools.pairwise(_TGM_SPLITS):
        if bounds[before][1] >= bounds[after][0]:
            raise UnsupportedTaskError(f"{dataset.name}@{dataset.version}: splits {before!r} and {after!r} share "
                                       f"timestamp {bounds[after][0]}, so TGM's split by time cannot keep them "
                                       "apart; iterate ds.split(name) instead")
    return bounds


def _node_types(dataset: TemporalGraphDataset) -> np.ndarray | None:
    """The node type of each node id: the column ``graph.node_types`` names in its file; ``None`` where the manifest
    declares none."""
    declared = dataset.manifest.graph.get("node_types")
    return None if declared is None else dataset.artifact(declared["file"])[declared["column"]]
