"""py-tgb's numpy datasets, ``LinkPropPredDataset`` and ``NodePropPredDataset``, over TGB's data in tgbhub's verified
cache: py-tgb's constructor arguments, attributes, dtypes and row order."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from tgbhub import config
from tgbhub.cache import version_dir
from tgbhub.compat.tgb.samplers import negative_sampler
from tgbhub.compat.tgb.views import (
    LabelRows,
    PathLike,
    dataset_entry,
    open_imported,
    pytgb_full_data,
    pytgb_node_data,
    pytgb_node_feat,
    pytgb_node_type,
    pytgb_static_data,
)

if TYPE_CHECKING:
    import torch

class LinkPropPredDataset:
    """py-tgb's ``tgb.linkproppred.dataset.LinkPropPredDataset`` over TGB's ``name`` in tgbhub's verified cache.

    ``root`` and ``meta_dict`` are accepted and ignored (the data live in tgbhub's cache: ``$TGBHUB_CACHE``, or
    ``cache_dir``); ``preprocess`` is accepted and has nothing left to do (the import converted the release).
    ``download=True`` imports a dataset that is not imported yet (``tgbhub import tgb/NAME``); ``download=False``
    raises FileNotFoundError then, as py-tgb does. Served: ``full_data`` (``sources``, ``destinations``,
    ``timestamps``, ``edge_idxs``, ``edge_feat``, ``w``, ``edge_label``, and ``edge_type`` for tkgl and thgl: py-tgb's
    arrays, a TKG's inverse edges appended after the originals), the three masks, ``eval_metric``,
    ``negative_sampler`` / ``ns_sampler`` (:class:`NegativeEdgeSampler`, or for tkgl :class:`TKGNegativeEdgeSampler`
    and for thgl :class:`THGNegativeEdgeSampler`), ``load_val_ns()`` / ``load_test_ns()``, ``num_nodes``,
    ``num_edges``, ``num_rels``, ``node_feat`` (tgbl-flight's airports, float64), ``edge_feat``, ``node_type`` (thgl,
    float64), ``edge_type``,
    ``static_data`` (tkgl-smallpedia, -wikidata), ``min_dst_idx`` and ``max_dst_idx``. ``root`` is the dataset's
    (read-only) cache folder; ``tgbhub_dataset`` the tgbhub dataset.

    Raises (on construction):
        DatasetNotFoundError: if TGB has no such dataset (suggesting close names).
        InvalidNameError: for a node property dataset (use :class:`NodePropPredDataset`).
        UnsupportedTaskError: for a parser whose py-tgb view this module does not reproduce.
        FileNotFoundError: if the dataset is not imported and ``download`` is false.
        FetchError, GenerationError, IntegrityError: from the import ``download=True`` runs.
    """

    def __init__(self, name: str, root: str = "datasets", meta_dict: dict[str, Any] | None = None,
                 preprocess: bool | None = True, download: bool | None = True, *,
                 cache_dir: PathLike | None = None) -> None:
        item = dataset_entry(name, "link")
        self.name = name
        self.url = item.url
        self.metric = item.eval_metric
        self.dir_name = item.dir_name
        self.meta_dict = dict(meta_dict) if meta_dict is not None else {"dir_name": item.dir_name}
        self.tgbhub_dataset = open_imported(item, cache_dir, bool(download))
        self.root = str(version_dir(config.cache_root(cache_dir), self.tgbhub_dataset.manifest))
        self._full_data, masks = pytgb_full_data(self.tgbhub_dataset)
        self._train_mask, self._val_mask, self._test_mask = masks["train"], masks["val"], masks["test"]
        destinations = self._full_data["destinations"]
        self.min_dst_idx = int(destinations.min()) if len(destinations) else 0
        self.max_dst_idx = int(destinations.max()) if len(destinations) else 0
        self._node_type = pytgb_node_type(self.tgbhub_dataset)
        self.ns_sampler = negative_sampler(item, self.tgbhub_dataset, self._full_data, self._node_type)
        self._num_nodes: int | None = None
        self._static_data: dict[str, np.ndarray] | None = None
        self._node_feat: np.ndarray | None = None

    def pre_process(self) -> None:
        """Nothing to do: the import converted the release (py-tgb parses its CSV here)."""

    def load_val_ns(self) -> None:
        """Open the validation negatives (memory-mapped, verified) for ``negative_sampler.query_batch``."""
        self.ns_sampler.load_split("val")

    def load_test_ns(self) -> None:
        """Open the test negatives (memory-mapped, verified) for ``negative_sampler.query_batch``."""
        self.ns_sampler.load_split("test")

    eval_metric = property(lambda self: self.metric, doc="TGB's official metric of the dataset (``mrr``).")
    negative_sampler = property(lambda self: self.ns_sampler, doc="The dataset's negative sampler.")
    full_data = property(lambda self: self._full_data, doc="py-tgb's ``full_data`` dict, in py-tgb's row order.")
    train_mask = property(lambda self: self._train_mask, doc="Boolean mask of the train edges over ``full_data``.")
    val_mask = property(lambda self: self._val_mask, doc="Boolean mask of the validation edges.")
    test_mask = property(lambda self: self._test_mask, doc="Boolean mask of the test edges.")
    num_edges = property(lambda self: int(len(self._full_data["sources"])), doc="The number of edges (py-tgb's "
                         "count: a TKG's inverse edges included).")
    edge_feat = property(lambda self: self._full_data["edge_feat"], doc="py-tgb's edge features (float64; a TKG's "
                         "cover the original edges only, as py-tgb's).")
    edge_type = property(lambda self: self._full_data.get("edge_type"), doc="The int64 relation of every edge "
                         "(a TKG's inverse relations ``r + R``); ``None`` for tgbl.")
    node_type = property(lambda self: self._node_type, doc="A THG's node types (float64, by node id, as py-tgb); "
                         "``None`` for other graphs.")

    @property
    def node_feat(self) -> np.ndarray | None:
        """py-tgb's node features (tgbl-flight's airports: float64 ``[num_nodes, 20]``), read on first use; ``None``
        for a dataset whose release has none."""
        if self._node_feat is None:
            self._node_feat = pytgb_node_feat(self.tgbhub_dataset)
        return self._node_feat

    @property
    def static_data(self) -> dict[str, np.ndarray] | None:
        """py-tgb's static edges ``{"head", "tail", "edge_type"}`` (float64) of tkgl-smallpedia and -wikidata, read on
        first use; ``None`` for other datasets."""
        if self._static_data is None:
            self._static_data = pytgb_static_data(self.tgbhub_dataset)
        return self._static_data

    @property
    def num_nodes(self) -> int:
        """The number of distinct node ids among sources and destinations (py-tgb's count, not ``max id + 1``)."""
        if self._num_nodes is None:
            data = self._full_data
            self._num_nodes = int(len(np.unique(np.concatenate([data["sources"], data["destinations"]]))))
        return self._num_nodes

    @property
    def num_rels(self) -> int:
        """The number of relation types: 1 for a homogeneous graph, as py-tgb counts (a TKG's inverses included)."""
        types = self._full_data.get("edge_type")
        return 1 if types is None else int(len(np.unique(types)))

    def __repr__(self) -> str:
        return f"LinkPropPredDataset({self.name!r}: {self.tgbhub_dataset!r})"



class NodePropPredDataset:
    """py-tgb's ``tgb.nodeproppred.dataset.NodePropPredDataset`` over TGB's ``name`` (a tgbn dataset) in tgbhub's
    verified cache.

    The constructor takes py-tgb's arguments (``root`` and ``meta_dict`` ignored, as for
    :class:`LinkPropPredDataset`) and opens, or with ``download=True`` imports, ``tgb/<name>``. Served:
    ``full_data`` (``sources``, ``destinations``, ``timestamps``, ``edge_idxs``, ``edge_feat``, ``edge_label``:
    py-tgb's float64 arrays in the release CSV's order, and ``node_label_dict``), the three masks, ``num_classes``
    (py-tgb's ``DATA_NUM_CLASSES``), ``eval_metric``, ``edge_feat``, ``node_feat`` (``None``), the label stream
    (``label_ts``, ``label_ts_idx``, ``find_next_labels_batch(cur_t)``, ``return_label_ts()``,
    ``reset_label_time()``) and ``label_dict`` / ``node_label_dict``, built on first use with read-only vectors.
    A batch's nodes come in node-id order (py-tgb's: the label file's), with the same vectors. tgbn-token's
    ``edge_feat`` is the release's ``[value, IsSender]``, as py-tgb's first load gives it (py-tgb's later loads take
    the log of the value).

    Raises (on construction):
        DatasetNotFoundError: if TGB has no such dataset. InvalidNameError: for a link dataset.
        UnsupportedTaskError: for a parser whose py-tgb view this module does not reproduce.
        FileNotFoundError: if it is not imported and ``download`` is false.
        FetchError, GenerationError, IntegrityError: from the import ``download=True`` runs.
    """

    def __init__(self, name: str, root: str = "datasets", meta_dict: dict[str, Any] | None = None,
                 preprocess: bool | None = True, download: bool | None = True, *,
                 cache_dir: PathLike | None = None) -> None:
        item = dataset_entry(name, "node")
        self.name = name
        self.url = item.url
        self.metric = item.eval_metric
        self.dir_name = item.dir_name
        self.meta_dict = dict(meta_dict) if meta_dict is not None else {"dir_name": item.dir_name}
        self._num_classes = int(item.num_classes or 0)
        self.tgbhub_dataset = open_imported(item, cache_dir, bool(download))
        self.root = str(version_dir(config.cache_root(cache_dir), self.tgbhub_dataset.manifest))
        full_data, masks = pytgb_node_data(self.tgbhub_dataset)
        self._full_data: dict[str, Any] = full_data  # gains node_label_dict on the first read of full_data
        self._train_mask, self._val_mask, self._test_mask = masks["train"], masks["val"], masks["test"]
        self._labels = LabelRows.of(self.tgbhub_dataset)
        self._label_dict: dict[int, dict[int, np.ndarray]] | None = None
        self.label_ts = self._labels.times
        self.label_ts_idx = 0

    def pre_process(self) -> None:
        """Nothing to do: the import converted the release (py-tgb parses its CSVs here)."""

    eval_metric = property(lambda self: self.metric, doc="TGB's official metric of the dataset (``ndcg``).")
    num_classes = property(lambda self: self._num_classes, doc="py-tgb's ``DATA_NUM_CLASSES`` of the dataset.")
    train_mask = property(lambda self: self._train_mask, doc="Boolean mask of the train edges over ``full_data``.")
    val_mask = property(lambda self: self._val_mask, doc="Boolean mask of the validation edges.")
    test_mask = property(lambda self: self._test_mask, doc="Boolean mask of the test edges.")
    edge_feat = property(lambda self: self._full_data["edge_feat"], doc="py-tgb's edge features (float64).")
    node_feat = property(lambda self: None, doc="``None``: tgbn datasets have no node features.")

    @property
    def label_dict(self) -> dict[int, dict[int, np.ndarray]]:
        """py-tgb's ``{t: {node: label vector}}``, built on first use (the vectors are read-only views)."""
        if self._label_dict is None:
            self._label_dict = self._labels.as_dict()
        return self._label_dict

    node_label_dict = property(lambda self: self.label_dict, doc="py-tgb's ``node_label_dict``: :attr:`label_dict`.")

    @property
    def full_data(self) -> dict[str, Any]:
        """py-tgb's ``full_data`` dict, in the release CSV's row order, with ``node_label_dict``."""
        if "node_label_dict" not in self._full_data:
            self._full_data["node_label_dict"] = self.label_dict
        return self._full_data

    def find_next_labels_batch(self, cur_t: float | np.number[Any] | torch.Tensor
                               ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """py-tgb's label stream: the ``(label_ts, node_ids, labels)`` of the next label timestamp once ``cur_t``
        reached it (and the pointer moves on), else ``None``; ``None`` after the last one."""
        if self.label_ts_idx >= len(self.label_ts):
            return None
        if cur_t >= self.label_ts[self.label_ts_idx]:
            self.label_ts_idx += 1
            return self._labels.batch(self.label_ts_idx - 1)
        return None

    def reset_label_time(self) -> None:
        """Point the label stream back at the first label timestamp."""
        self.label_ts_idx = 0

    def return_label_ts(self) -> np.int64:
        """The label timestamp the stream points at (the last one once it is past the end), as py-tgb."""
        return self.label_ts[min(self.label_ts_idx, len(self.label_ts) - 1)]

    def __repr__(self) -> str:
        return f"NodePropPredDataset({self.name!r}: {self.tgbhub_dataset!r})"

