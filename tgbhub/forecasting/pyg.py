"""PyTorch Geometric views of a temporal graph, and the window loader of the paper's PyG branch
(``M-Lampert/pytorch_geometric@snapshot-loader``).

* :func:`to_temporal_data` turns a dataset (or one split) into a ``torch_geometric.data.TemporalData`` event stream.
* :class:`SnapshotLoader` cuts a PyG ``Data`` (edge-level ``time``) or ``TemporalData`` (``t``) into time windows of
  ``horizon`` and yields one snapshot per window, in time order, empty windows included.

Windows
-------
Window ``i`` is the half-open interval ``[t0 + i*h, t0 + (i+1)*h)`` with ``t0 = floor(min t)``, for
``i = 0 .. len-1`` and ``len = (ceil(max t) - floor(min t)) // h + 1``. For integer times this is exactly PyG's
inclusive ``[t0 + i*h, t0 + (i+1)*h - 1]``; we use half-open intervals so that a non-integer time between
``t0 + (i+1)*h - 1`` and ``t0 + (i+1)*h`` is never dropped (the same convention as
:mod:`tgbhub.forecasting.windows`). With non-integer times the last window may be empty. A snapshot is a shallow
copy of the input whose edge-level attributes are cut to the window; node-level and graph-level attributes are kept.

torch and torch_geometric are imported on first use, so importing this module never needs them; without them every
entry point raises :class:`~tgbhub.errors.MissingExtraError` (a ``ModuleNotFoundError``) naming
the ``pyg`` extra. ``SnapshotLoader`` subclasses ``torch.utils.data.DataLoader``, so it is defined on
first access (PEP 562 ``__getattr__``).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, Union

import numpy as np

from tgbhub.errors import InvalidNameError, ManifestError, MissingExtraError
from tgbhub.forecasting.windows import EventDataset, EventRows, check_horizon

if TYPE_CHECKING:
    import torch
    from torch_geometric.data import Data, TemporalData

#: what a :class:`SnapshotWindows` cuts: a PyG ``Data`` with an edge-level ``time``, or a ``TemporalData``
Graph = Union["Data", "TemporalData"]
_T = TypeVar("_T")


class GraphDataset(EventDataset, Protocol):
    """What :func:`to_temporal_data` reads of a temporal-graph dataset (:class:`tgbhub.data.TemporalGraphDataset`
    is one; this layer cannot import it): its rows, a split's rows, its name and its splits as row ranges."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def splits(self) -> Mapping[str, tuple[int, int]]: ...

    def split(self, name: str) -> EventRows: ...

#: DataLoader arguments the SnapshotLoader fixes itself: one snapshot per window, in time order
_FIXED_LOADER_ARGS = ("batch_size", "shuffle", "sampler", "batch_sampler", "collate_fn", "drop_last", "in_order")


def _require_pyg(needed_for: str) -> tuple[ModuleType, ModuleType]:
    """``(torch, torch_geometric)``, imported now.

    Raises:
        MissingExtraError: if either is not installed (the ``pyg`` extra).
    """
    try:
        import torch
    except ModuleNotFoundError as exc:
        raise MissingExtraError("torch", "pyg", needed_for) from exc
    try:
        import torch_geometric
        import torch_geometric.data
        import torch_geometric.utils
    except ModuleNotFoundError as exc:
        raise MissingExtraError("torch_geometric", "pyg", needed_for) from exc
    return torch, torch_geometric


def to_temporal_data(dataset: GraphDataset, split: str | None = None) -> TemporalData:
    """The events of ``dataset`` (or of one split) as a ``torch_geometric.data.TemporalData``, in stored row order.

    ``src`` and ``dst`` are int64; ``t`` keeps the dataset's time type: int64 snapshot indices (discrete time) or
    float64 (continuous time). ``msg`` holds the edge features the manifest declares (``constant-1``: a float32
    ``[n, 1]`` tensor of ones). The tensors are copies; the dataset's memory-mapped columns are never written.

    ``TemporalData`` has no settable node count (``num_nodes`` is a read-only property, the largest node id + 1,
    and a stored ``num_nodes`` breaks its slicing), so nodes that never occur are not counted there: use
    ``dataset.num_nodes``.

    Raises:
        MissingExtraError: if torch or torch_geometric is not installed (the ``pyg`` extra).
        InvalidNameError: if ``split`` is not one of the dataset's splits.
        ManifestError: if the manifest declares edge features this function cannot build.
    """
    torch, pyg = _require_pyg("to_temporal_data")
    rows: EventRows = dataset if split is None else dataset.split(split)
    t = np.asarray(rows.t)
    if not (np.issubdtype(t.dtype, np.integer) or np.issubdtype(t.dtype, np.floating)):
        raise ManifestError(f"{dataset.name}@{dataset.version}: timestamps have dtype {t.dtype}; expected integer "
                            "snapshot indices or float times. Rebuild the dataset with this tgbhub version.")
    time_dtype = np.int64 if np.issubdtype(t.dtype, np.integer) else np.float64
    # np.array copies: the columns are read-only memory maps, which torch would warn about.
    columns = {name: torch.from_numpy(np.array(values, dtype=dtype))
               for name, values, dtype in (("src", rows.src, np.int64), ("dst", rows.dst, np.int64),
                                           ("t", t, time_dtype))}
    msg = _edge_features(dataset, split, len(t), torch)
    return pyg.data.TemporalData(src=columns["src"], dst=columns["dst"], t=columns["t"], msg=msg)


def _edge_features(dataset: GraphDataset, split: str | None, n: int, torch: ModuleType) -> torch.Tensor:
    """The ``[n, d]`` edge-feature tensor: ones for ``constant-1`` (T-GRAB), else the dataset's ``edge_feat`` column
    (an imported TGB dataset's features, as a float32 copy: what PyG's models take) for the rows of ``split``.

    Raises:
        ManifestError: if the manifest declares edge features the dataset holds no ``edge_feat`` column for.
    """
    kind = dataset.manifest.graph.get("edge_features", "constant-1")
    if kind == "constant-1":
        return torch.ones((n, 1), dtype=torch.float32)
    features = getattr(dataset, "columns", {}).get("edge_feat")
    if features is None:
        raise ManifestError(f"{dataset.name}@{dataset.version} declares edge_features={kind!r} but holds no edge_feat "
                            "column; upgrade tgbhub, or build msg yourself from dataset.columns.")
    lo, hi = 0, len(features)
    if split is not None:
        lo, hi = dataset.splits[split]  # rows, on every dataset
    return torch.from_numpy(np.array(features[lo:hi], dtype=np.float32).reshape(hi - lo, -1))


class SnapshotWindows:
    """The windows of a PyG ``Data``/``TemporalData`` as a map-style dataset: item ``i`` is window ``i``'s snapshot.

    The input is sorted by time once (a stable sort; an already sorted input is used as is). Since the edges are
    sorted, window ``i`` is the contiguous edge range ``lo[i]:lo[i+1]``, found by binary search on the boundaries
    ``bounds[i] = t0 + i*h`` (int64 for integer times and horizon, else float64).

    Attributes: ``t0``, ``horizon``, ``bounds`` (``len + 1`` boundaries: window ``i`` is
    ``[bounds[i], bounds[i+1])``), ``lo`` (``len + 1`` edge offsets).
    """

    def __init__(self, data: Graph, horizon: float) -> None:
        """Raises:
            MissingExtraError: if torch or torch_geometric is not installed.
            InvalidNameError: if ``data`` is neither a ``Data`` with an edge-level ``time`` nor a ``TemporalData``
                with ``t``, if a time is NaN/infinite, or if ``horizon`` is not a positive number (a whole number
                for integer times).
        """
        torch, pyg = _require_pyg("the SnapshotLoader")
        self.time_attr, keys = _edge_keys(data, torch, pyg)
        time = data[self.time_attr].detach().cpu().numpy()
        integer = bool(np.issubdtype(time.dtype, np.integer))
        if not integer and not np.isfinite(time).all():
            raise InvalidNameError(f"data.{self.time_attr} holds NaN or infinite times; drop or fix those edges "
                                   "before cutting windows")
        self.horizon = check_horizon(horizon, "snapshot" if integer else "continuous")
        if np.any(time[1:] < time[:-1]):
            order = np.argsort(time, kind="stable")
            data, time = _take(data, keys, _as_index(order, data[self.time_attr].device)), time[order]
        self.data, self._keys = data, keys
        self._num_nodes = None if _is_temporal(data, pyg) else data.num_nodes
        self.t0, self.bounds, self.lo = _windows(time, self.horizon)

    def __len__(self) -> int:
        return len(self.bounds) - 1

    def __getitem__(self, i: int) -> Graph:
        """The snapshot of window ``i`` (``0 <= i < len``); an empty window gives a snapshot with no edges.

        Raises:
            IndexError: if ``i`` is out of range.
        """
        if not 0 <= i < len(self):
            raise IndexError(f"window {i} is out of range: this loader has {len(self)} windows (0..{len(self) - 1})")
        device = self.data[self.time_attr].device
        out = _take(self.data, self._keys, _as_index(np.arange(self.lo[i], self.lo[i + 1]), device))
        if self._num_nodes is not None:
            out.num_nodes = self._num_nodes
        return out


def _take(data: Graph, keys: Sequence[tuple[str, int]], index: torch.Tensor) -> Graph:
    """A shallow copy of ``data`` with every edge-level attribute in ``keys`` cut to ``index`` (int64 tensor)."""
    from torch_geometric.utils import select

    out = copy.copy(data)
    for key, dim in keys:
        value = data[key]
        out[key] = np.take(value, index.cpu().numpy(), axis=dim) if isinstance(value, np.ndarray) else select(
            value, index, dim)
    return out


def _as_index(index: np.ndarray, device: torch.device) -> torch.Tensor:
    import torch

    return torch.from_numpy(index.astype(np.int64)).to(device)


def _is_temporal(data: object, pyg: ModuleType) -> bool:
    return isinstance(data, pyg.data.TemporalData)


def _edge_keys(data: Graph, torch: ModuleType, pyg: ModuleType) -> tuple[str, list[tuple[str, int]]]:
    """``(time attribute, [(edge-level key, the dimension edges run along)])`` of ``data``.

    ``TemporalData``: every attribute with one row per event (the rule of ``TemporalData.index_select``).
    ``Data``: ``time`` and every attribute PyG classifies as edge-level (``Data.is_edge_attr``; where
    ``num_nodes == num_edges`` PyG decides by ``'edge'`` in the name, so ``time`` is added explicitly).

    Raises:
        InvalidNameError: for another input type, or one without a one-dimensional time of real numbers (one per
            edge).
    """
    temporal = _is_temporal(data, pyg)
    if not temporal and not isinstance(data, pyg.data.Data):
        raise InvalidNameError(f"SnapshotLoader takes a torch_geometric.data.Data (edge-level 'time') or a "
                               f"TemporalData ('t'), not {type(data).__name__}; build one, e.g. with "
                               "tgbhub.forecasting.pyg.to_temporal_data(dataset)")
    attr = "t" if temporal else "time"
    time = data[attr] if attr in data else None
    n = len(time) if isinstance(time, torch.Tensor) and time.dim() == 1 else -1
    if time is None or n < 0 or time.dtype == torch.bool or time.is_complex() or (not temporal and n != data.num_edges):
        raise InvalidNameError(f"{type(data).__name__} needs an edge-level time attribute {attr!r}: a 1-D tensor "
                               f"of real numbers with one entry per edge; set data.{attr} before cutting windows")
    if temporal:
        keys = [(key, 0) for key in data.keys() if _rows(data[key]) == n]
    else:
        keys = [(key, data.__cat_dim__(key, data[key])) for key in data.keys()
                if key == attr or data.is_edge_attr(key)]
    return attr, keys


def _rows(value: object) -> int:
    """The length of the first dimension of a tensor/array/list attribute, or -2 for anything else."""
    if hasattr(value, "shape") and len(value.shape) > 0:
        return int(value.shape[0])
    if isinstance(value, (list, tuple)):
        return len(value)
    return -2


def _windows(time: np.ndarray, horizon: float | int) -> tuple[int, np.ndarray, np.ndarray]:
    """``(t0, bounds, lo)`` of the sorted times ``time`` (see :class:`SnapshotWindows`); no windows if no edges."""
    if len(time) == 0:
        return 0, np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    t0, t_max = math.floor(time[0]), math.ceil(time[-1])
    count = int((t_max - t0) // horizon) + 1
    bounds = t0 + np.arange(count + 1, dtype=np.int64) * horizon
    lo = np.searchsorted(time, bounds, side="left").astype(np.int64)
    return t0, bounds, lo


def _identity(item: _T) -> _T:
    return item


def _define_snapshot_loader(torch: Any) -> type:
    """Define :class:`SnapshotLoader` over ``torch.utils.data.DataLoader`` (called once, on first access)."""

    class SnapshotLoader(torch.utils.data.DataLoader):
        """Yields the snapshot of every time window of ``data``, in time order, empty windows included.

        ``data`` is a PyG ``Data`` with an edge-level ``time`` or a ``TemporalData`` (``t``); it is sorted by time
        (stably) first. Snapshot ``i`` holds the edges with ``t0 + i*h <= t < t0 + (i+1)*h``, ``t0 =
        floor(min t)``; ``len(loader) == (ceil(max t) - floor(min t)) // h + 1`` (see the module docstring). A
        ``Data`` snapshot keeps the input's ``num_nodes``.

        ``kwargs`` go to ``torch.utils.data.DataLoader`` (``num_workers``, ``pin_memory``, ``persistent_workers``,
        ...). With ``num_workers=K`` worker ``w`` builds windows ``w, w+K, w+2K, ...`` and the loader collects them
        round-robin, so snapshots still come in time order. The batching arguments are fixed (one snapshot per
        window, in order): passing ``batch_size``, ``shuffle``, ``sampler``, ``batch_sampler``, ``collate_fn``,
        ``drop_last`` or ``in_order`` is an error.

        Attributes: ``horizon``, ``t0``, ``bounds`` (window ``i`` is ``[bounds[i], bounds[i+1])``), ``windows``
        (the underlying :class:`SnapshotWindows`).

        Raises:
            MissingExtraError: if torch or torch_geometric is not installed (the ``pyg`` extra).
            InvalidNameError: for an input without an edge-level time, NaN/infinite times, a horizon that is not a
                positive number (a whole number for integer times), or a fixed DataLoader argument.
        """

        def __init__(self, data: Graph, horizon: float, **kwargs: Any) -> None:
            fixed = sorted(set(kwargs) & set(_FIXED_LOADER_ARGS))
            if fixed:
                raise InvalidNameError(f"SnapshotLoader sets {', '.join(fixed)} itself (one snapshot per window, in "
                                       "time order); drop that argument. Use horizon= to change the window length")
            windows = SnapshotWindows(data, horizon)
            self.windows = windows
            self.horizon, self.t0, self.bounds = windows.horizon, windows.t0, windows.bounds
            super().__init__(windows, batch_size=None, shuffle=False, collate_fn=_identity, **kwargs)

    SnapshotLoader.__module__, SnapshotLoader.__qualname__ = __name__, "SnapshotLoader"
    return SnapshotLoader


def __getattr__(name: str) -> Any:
    """PEP 562: define ``SnapshotLoader`` on first access, so importing this module does not import torch.

    Raises:
        MissingExtraError: for ``SnapshotLoader`` without torch/torch_geometric (the ``pyg`` extra).
        AttributeError: for any other unknown name.
    """
    if name == "SnapshotLoader":
        torch, _ = _require_pyg("the SnapshotLoader")
        loader = _define_snapshot_loader(torch)
        globals()[name] = loader
        return loader
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# SnapshotLoader is defined by the module __getattr__ above (PEP 562), which ruff does not follow
__all__: Sequence[str] = ("SnapshotLoader", "SnapshotWindows", "to_temporal_data")  # noqa: F822
