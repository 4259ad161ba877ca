"""py-tgb's PyG datasets, ``PyGLinkPropPredDataset`` (``tgb.linkproppred.dataset_pyg``) and
``PyGNodePropPredDataset`` (``tgb.nodeproppred.dataset_pyg``), over this package's numpy datasets: the same
``torch_geometric`` base classes, tensors and dtypes (int64 ``src``/``dst``/``t``/``edge_type``, float32 ``msg`` and
``w``, boolean mask tensors), ``get_TemporalData()`` and, for node datasets, the label stream as tensors.

Importing this module imports torch and torch_geometric (``tgbhub.compat.tgb`` imports it on the first use of one of
its names); without them it raises :class:`~tgbhub.errors.MissingExtraError`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tgbhub.compat.tgb.datasets import LinkPropPredDataset, NodePropPredDataset
from tgbhub.errors import MissingExtraError

try:
    import torch
except ModuleNotFoundError as exc:
    raise MissingExtraError("torch", "pyg", "tgbhub.compat.tgb's PyG datasets") from exc
try:
    from torch_geometric.data import Dataset, InMemoryDataset, TemporalData
except ModuleNotFoundError as exc:
    raise MissingExtraError("torch_geometric", "pyg", "tgbhub.compat.tgb's PyG datasets") from exc

Transform = Callable[[Any], Any] | None


def _events(full_data: dict[str, Any]) -> dict[str, torch.Tensor]:
    """py-tgb's tensors of ``full_data``: int64 ``src``, ``dst``, ``t`` (and ``edge_type`` when present), float32
    ``msg`` (the edge features) and the edge labels in their own dtype."""
    tensors = {"src": _tensor(full_data["sources"]).long(), "dst": _tensor(full_data["destinations"]).long(),
               "t": _tensor(full_data["timestamps"]).long(), "msg": _tensor(full_data["edge_feat"]).float(),
               "y": _tensor(full_data["edge_label"])}
    if "edge_type" in full_data:
        tensors["edge_type"] = _tensor(full_data["edge_type"]).long()
    return tensors


def _tensor(values: np.ndarray) -> torch.Tensor:
    """``values`` as a tensor sharing its memory, or over a copy when it is a read-only view of the cache (a script
    may write into py-tgb's tensors, which own their memory)."""
    return torch.from_numpy(values if values.flags.writeable else np.array(values))


class PyGLinkPropPredDataset(Dataset):
    """py-tgb's ``PyGLinkPropPredDataset``: :class:`LinkPropPredDataset` as torch tensors (``src``, ``dst``, ``ts``,
    ``edge_feat``, ``edge_label``, ``edge_type``, ``node_feat`` float32, ``node_type`` int64, ``static_data`` int64,
    boolean ``train_mask``/``val_mask``/``test_mask``) and one ``TemporalData`` (``get_TemporalData()``, with ``w`` and,
    for tkgl/thgl, ``edge_type``); the negative sampler, evaluation metric and counts are the numpy dataset's.
    ``transform`` and ``pre_transform`` are accepted and unused, as in py-tgb.

    Raises (on construction): as :class:`LinkPropPredDataset`.
    """

    def __init__(self, name: str, root: str = "datasets", transform: Transform = None,
                 pre_transform: Transform = None, download: bool | None = True, **options: Any) -> None:
        self.name = name
        self.dataset = LinkPropPredDataset(name=name, root=root, download=download, **options)
        self._train_mask = _tensor(self.dataset.train_mask)
        self._val_mask = _tensor(self.dataset.val_mask)
        self._test_mask = _tensor(self.dataset.test_mask)
        super().__init__(root, transform, pre_transform)
        node_feat, node_type = self.dataset.node_feat, self.dataset.node_type
        self._node_feat = None if node_feat is None else _tensor(node_feat).float()
        self._node_type = None if node_type is None else _tensor(node_type).long()
        self._static_data: dict[str, torch.Tensor] | None = None
        self._tensors = _events(self.dataset.full_data)
        self._w = _tensor(self.dataset.full_data["w"]).float()
        self._ns_sampler = self.dataset.negative_sampler

    eval_metric = property(lambda self: self.dataset.eval_metric, doc="TGB's official metric (``mrr``).")
    negative_sampler = property(lambda self: self._ns_sampler, doc="The numpy dataset's negative sampler.")
    num_nodes = property(lambda self: self.dataset.num_nodes, doc="py-tgb's count of distinct node ids.")
    num_rels = property(lambda self: self.dataset.num_rels, doc="The number of relation types.")
    num_edges = property(lambda self: self.dataset.num_edges, doc="The number of edges.")
    train_mask = property(lambda self: self._train_mask, doc="Boolean tensor of the train edges.")
    val_mask = property(lambda self: self._val_mask, doc="Boolean tensor of the validation edges.")
    test_mask = property(lambda self: self._test_mask, doc="Boolean tensor of the test edges.")
    node_feat = property(lambda self: self._node_feat, doc="float32 node features, or ``None``.")
    node_type = property(lambda self: self._node_type, doc="int64 node types (thgl), or ``None``.")
    src = property(lambda self: self._tensors["src"], doc="int64 source ids.")
    dst = property(lambda self: self._tensors["dst"], doc="int64 destination ids.")
    ts = property(lambda self: self._tensors["t"], doc="int64 timestamps.")
    edge_type = property(lambda self: self._tensors.get("edge_type"), doc="int64 relation types, or ``None``.")
    edge_feat = property(lambda self: self._tensors["msg"], doc="float32 edge features.")
    edge_label = property(lambda self: self._tensors["y"], doc="The edge labels (ones).")

    def load_val_ns(self) -> None:
        """Open the validation negatives (the numpy dataset's ``load_val_ns``)."""
        self.dataset.load_val_ns()

    def load_test_ns(self) -> None:
        """Open the test negatives (the numpy dataset's ``load_test_ns``)."""
        self.dataset.load_test_ns()

    @property
    def static_data(self) -> dict[str, torch.Tensor]:
        """py-tgb's static edges ``{"head", "tail", "edge_type"}`` as int64 tensors (tkgl-smallpedia, -wikidata).

        Raises:
            TypeError: for a dataset without static edges (py-tgb's error there too).
        """
        if self._static_data is None:
            static = self.dataset.static_data
            if static is None:
                raise TypeError(f"{self.name} has no static edges (static_data is None)")
            self._static_data = {key: _tensor(static[key]).long() for key in ("head", "tail", "edge_type")}
        return self._static_data

    def get_TemporalData(self) -> TemporalData:  # noqa: N802 - py-tgb's name
        """Every edge as one ``TemporalData`` (``src``, ``dst``, ``t``, ``msg``, ``y``, ``w`` and ``edge_type`` when
        the graph has relation types), in py-tgb's row order."""
        return TemporalData(**self._tensors, w=self._w)

    def len(self) -> int:
        """The number of edges."""
        return int(self._tensors["src"].shape[0])

    def get(self, idx: int) -> TemporalData:
        """Edge ``idx`` as a ``TemporalData`` (without ``w``, as py-tgb's)."""
        return TemporalData(**{key: values[idx] for key, values in self._tensors.items()})

    def __repr__(self) -> str:
        return f"{self.name.capitalize()}()"


class PyGNodePropPredDataset(InMemoryDataset):
    """py-tgb's ``PyGNodePropPredDataset``: :class:`NodePropPredDataset` as torch tensors (``src``, ``dst``, ``ts``,
    ``edge_feat`` float32, ``edge_label``, boolean masks), ``get_TemporalData()`` and the label stream as tensors:
    ``get_node_label(cur_t)`` gives int64 ``label_ts``, int64 node ids and float32 labels, ``get_label_time()`` the
    label timestamp the stream points at, ``reset_label_time()`` rewinds it.

    Raises (on construction): as :class:`NodePropPredDataset`.
    """

    def __init__(self, name: str, root: str = "datasets", transform: Transform = None,
                 pre_transform: Transform = None, download: bool | None = True, **options: Any) -> None:
        self.name = name
        self.dataset = NodePropPredDataset(name=name, root=root, download=download, **options)
        self._train_mask = _tensor(self.dataset.train_mask)
        self._val_mask = _tensor(self.dataset.val_mask)
        self._test_mask = _tensor(self.dataset.test_mask)
        self._classes = self.dataset.num_classes
        super().__init__(root, transform, pre_transform)
        self._tensors = _events(self.dataset.full_data)

    num_classes = property(lambda self: self._classes, doc="The number of classes of the label vectors.")
    eval_metric = property(lambda self: self.dataset.eval_metric, doc="TGB's official metric (``ndcg``).")
    train_mask = property(lambda self: self._train_mask, doc="Boolean tensor of the train edges.")
    val_mask = property(lambda self: self._val_mask, doc="Boolean tensor of the validation edges.")
    test_mask = property(lambda self: self._test_mask, doc="Boolean tensor of the test edges.")
    src = property(lambda self: self._tensors["src"], doc="int64 source ids.")
    dst = property(lambda self: self._tensors["dst"], doc="int64 destination ids.")
    ts = property(lambda self: self._tensors["t"], doc="int64 timestamps.")
    edge_feat = property(lambda self: self._tensors["msg"], doc="float32 edge features.")
    edge_label = property(lambda self: self._tensors["y"], doc="The edge labels (ones).")

    def get_TemporalData(self) -> TemporalData:  # noqa: N802 - py-tgb's name
        """Every edge as one ``TemporalData`` (``src``, ``dst``, ``t``, ``msg``, ``y``), in the release's order."""
        return TemporalData(**self._tensors)

    def reset_label_time(self) -> None:
        """Point the label stream back at the first label timestamp (once per epoch)."""
        self.dataset.reset_label_time()

    def get_node_label(self, cur_t: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
        """The next label timestamp's ``(label_ts, node_ids, labels)`` as int64, int64 and float32 tensors once
        ``cur_t`` reached it, else ``None`` (the numpy dataset's ``find_next_labels_batch``)."""
        found = self.dataset.find_next_labels_batch(cur_t)
        if found is None:
            return None
        label_ts, nodes, labels = found
        return (torch.from_numpy(label_ts).long(), torch.from_numpy(nodes).long(),
                torch.from_numpy(labels).to(torch.float32))

    def get_label_time(self) -> Any:
        """The label timestamp the stream points at (numpy int64, as py-tgb)."""
        return self.dataset.return_label_ts()

    def len(self) -> int:
        """The number of edges."""
        return int(self._tensors["src"].shape[0])

    def get(self, idx: int) -> TemporalData:
        """Edge ``idx`` as a ``TemporalData``."""
        return TemporalData(**{key: values[idx] for key, values in self._tensors.items()})

    def __repr__(self) -> str:
        return f"{self.name.capitalize()}()"

