"""py-tgb 2.3.0's public API served from tgbhub's verified cache: TGB's scripts run by changing one import line.

    from tgb.linkproppred.dataset import LinkPropPredDataset        # before
    from tgb.linkproppred.evaluate import Evaluator
    from tgbhub.compat.tgb import LinkPropPredDataset, Evaluator     # after

    from tgb.nodeproppred.dataset import NodePropPredDataset        # node property prediction: before
    from tgb.nodeproppred.evaluate import Evaluator
    from tgbhub.compat.tgb import NodePropPredDataset, Evaluator     # after

The constructors take py-tgb's arguments and the objects have py-tgb's attributes, with py-tgb's names, dtypes and
row order (the release CSV's, which the import keeps as ``edge_id``; for a TKG, py-tgb's originals followed by
their inverse edges). Served for every TGB family: tgbl (``hist_rnd`` negatives; tgbl-flight's airport
``node_feat``), tkgl (inverse edges, negatives keyed by ``(t, src, edge_type)``: the 1-vs-all ``time-filtered``
protocol and ``dst-time-filtered``), thgl (node types, ``node-type-filtered`` negatives) and tgbn (the label stream,
NDCG@10). What differs underneath (docs/tgb.md):

- the data are the version imported with ``tgbhub import tgb/NAME``: TGB's release converted and checked against
  TGB's published statistics, then cached with sha256-verified files. It lives in tgbhub's cache
  (``$TGBHUB_CACHE``, or the ``cache_dir=`` keyword this module adds), never under site-packages: py-tgb's ``root``
  and ``meta_dict`` are accepted and ignored. With ``download=True`` (py-tgb's default) a dataset that is not
  imported yet is imported on first use, from the zip a previous import kept or from TGB's URL (never in offline
  mode, ``TGBHUB_OFFLINE=1``); stdin is never read.
- nothing is parsed or unpickled: ``full_data`` comes from memory-mapped Parquet columns, and the evaluation
  negatives are rectangular arrays (or, time-filtered, CSR filter sets) found by sorted keys, not a pickled dict.
- :class:`Evaluator` refuses NaN/inf scores and shapes that py-tgb would broadcast silently
  (:class:`~tgbhub.errors.ScoreError`), where py-tgb scores a NaN positive as MRR 1.0.
- the tgbn label stream hands out each label timestamp's nodes in node-id order; py-tgb's dict keeps the order in
  which the label file lists them, which the import does not store. Every node gets the same label vector, so a
  model's predictions and the NDCG of a batch do not change (up to float rounding of the mean).
- where the stored data cannot reproduce py-tgb's view (a parser this module does not know), a clear error says so
  instead of returning something different.

The PyG route is the dataset's own ``to_pyg()``, as for every temporal graph: ``tgbhub.load_dataset(
"tgb/tgbl-wiki").to_pyg()`` (or ``LinkPropPredDataset(...).tgbhub_dataset.to_pyg()``) gives a ``TemporalData``, rows
in time order; py-tgb's ``PyGLinkPropPredDataset`` is not reproduced here. This module does not import torch (nor
py-tgb); torch tensors are accepted wherever py-tgb accepts them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeAlias, TypeVar, cast

import numpy as np

from tgbhub import config
from tgbhub.api import load_dataset
from tgbhub.cache import version_dir
from tgbhub.data.temporal_graph import Negatives, TemporalGraphDataset
from tgbhub.errors import DatasetNotFoundError, InvalidNameError, ScoreError, UnsupportedTaskError
from tgbhub.evaluate.filtered import TASK_TYPE as FILTERED_TASK, FilterSets
from tgbhub.evaluate.metrics import as_scores, metrics_from_ranks, on_accelerator, ranks
from tgbhub.evaluate.nodeprop import DEFAULT_K as NDCG_K, ndcg_rows
from tgbhub.local.gateway import importer_plugin
from tgbhub.local.imports import import_tgb

if TYPE_CHECKING:
    import torch

PathLike = str | os.PathLike[str]
SPLIT_MODES = ("val", "test")
#: node ids a key may hold: the converted negatives store int32 ids
_ID_LIMIT = 1 << 31
#: cells of the boolean matrix one step of :func:`complements` fills: bounds its memory at 16 MiB per step
_COMPLEMENT_CELLS = 1 << 24
#: what py-tgb's samplers accept for an array: numpy, torch (any device) or a sequence of numbers
ArrayInput: TypeAlias = "np.ndarray | torch.Tensor | Collection[float]"


class TgbEntry(Protocol):
    """What this module reads of a TGB catalogue entry (:class:`generators.tgb.catalogue.TgbEntry`, reached through
    the TGB importer)."""

    @property
    def name(self) -> str: ...

    @property
    def task(self) -> str: ...

    @property
    def url(self) -> str: ...

    @property
    def eval_metric(self) -> str: ...

    @property
    def dir_name(self) -> str: ...

    @property
    def hub_name(self) -> str: ...

    @property
    def ns_strategy(self) -> str | None: ...

    @property
    def num_classes(self) -> int | None: ...


@dataclass(frozen=True)
class PytgbView:
    """What py-tgb's parser of an edge list puts into ``full_data`` besides the stored columns."""

    #: the column of the stored ``edge_feat`` that py-tgb also returns as ``w``; ``None``: ``w`` is all ones
    weight_column: int | None
    #: the dtype of py-tgb's ``edge_idxs`` (its CSV parsers fill a float64 array; the JODIE one uses ``np.arange``)
    edge_idxs_dtype: type
    #: py-tgb's ``edge_idxs`` of the first CSV row; ``None``: the manifest's ``graph.pytgb_edge_idxs_start`` (0 if
    #: absent). An inverse TKG edge gets ``idx + max(idx) + 1`` (``add_inverse_quadruples``), ``edge_id + 2 * start``
    edge_idxs_start: int | None = None


#: py-tgb 2.3.0's link parsers (``tgb/utils/pre_process.py``), by the name an import records in
#: ``stats.source.parser``: ``load_edgelist_wiki``, ``csv_to_pd_data_sc`` (edge_feat = w = log2 weight),
#: ``csv_to_pd_data_rc`` (edge_feat = [num_words, num_words, score], w = score), ``csv_to_pd_data`` (tgbl-flight:
#: the 16 encoded callsign/typecode characters, w = 1, float64 ``edge_idxs`` from the manifest's start, 1), and TGB
#: 2.0's multi-relational ones, which count ``idx`` from 1 into float64 arrays, set ``w`` to ones and ``edge_feat``
#: to zeros ``[E, 1]`` over the CSV's rows (the inverse TKG edges get none), except thgl-forum's stored
#: ``[num_words, score] / 10000``
PYTGB_PARSERS: Mapping[str, PytgbView] = {
    "edgelist-wiki": PytgbView(None, np.int64),
    "stablecoin": PytgbView(0, np.float64),
    "reddit-comments": PytgbView(-1, np.float64),
    "opensky": PytgbView(None, np.float64),
    "csv_to_wikidata": PytgbView(None, np.float64, 1),
    "csv_to_tkg_data": PytgbView(None, np.float64, 1),
    "csv_to_thg_data": PytgbView(None, np.float64, 1),
    "csv_to_forum_data": PytgbView(None, np.float64, 1),
}
#: py-tgb 2.3.0's tgbn parsers: every ``full_data`` array float64, ``edge_idxs`` from the manifest's start (1)
PYTGB_NODE_PARSERS = ("load_edgelist_trade", "load_edgelist_datetime", "load_edgelist_sr", "load_edgelist_token")


def dataset_entry(name: str, task: str) -> TgbEntry:
    """The catalogue entry of TGB's ``name``, which must be a ``task`` (``link`` or ``node``) dataset.

    Raises:
        DatasetNotFoundError: if TGB has no such dataset (suggesting close names).
        InvalidNameError: if it is a dataset of the other task (naming the class to use).
    """
    item = _entry(name)
    if item.task != task:
        right = "NodePropPredDataset" if item.task == "node" else "LinkPropPredDataset"
        raise InvalidNameError(f"{name} is a {item.task} property prediction dataset; load it with "
                               f"tgbhub.compat.tgb.{right}(name={name!r})")
    return item


def open_imported(item: TgbEntry, cache_dir: PathLike | None, download: bool) -> TemporalGraphDataset:
    """``tgb/<name>`` from the verified cache; imported first (:func:`tgbhub.local.imports.import_tgb`) when it is not
    there and ``download`` is true.

    Raises:
        FileNotFoundError: if it is not imported and ``download`` is false (py-tgb's error), saying how to import it.
        FetchError, GenerationError, IntegrityError: from the import (nothing to read, offline, a family this
            tgbhub cannot import yet, a release that is not TGB's).
    """
    # cast: every TGB import is a temporal graph
    try:
        return cast(TemporalGraphDataset, load_dataset(item.hub_name, cache_dir=cache_dir))
    except DatasetNotFoundError as missing:
        if not download:
            raise FileNotFoundError(f"{item.name} is not in tgbhub's cache at {config.cache_root(cache_dir)} and "
                                    f"download=False: {missing} Or pass download=True to import it now.") from missing
    import_tgb(item.name, cache_dir=cache_dir)
    return cast(TemporalGraphDataset, load_dataset(item.hub_name, cache_dir=cache_dir))


def _parser(dataset: TemporalGraphDataset, known: Collection[str]) -> str:
    """The py-tgb parser ``dataset`` was imported with, which must be one of ``known``.

    Raises:
        UnsupportedTaskError: for a parser (or a split layout) this module cannot reproduce py-tgb's view of.
    """
    parser = dataset.manifest.stats.get("source", {}).get("parser")
    if parser not in known or dataset.manifest.split_unit != "row":
        raise UnsupportedTaskError(f"{dataset.name}@{dataset.version} was imported with py-tgb's {parser!r} parser, "
                                   "whose full_data tgbhub.compat.tgb cannot reproduce (it knows "
                                   f"{', '.join(known)}); use tgbhub.load_dataset({dataset.name!r}) directly")
    return str(parser)


def _pytgb_order(dataset: TemporalGraphDataset) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``edge_id`` (int64), the stored rows in py-tgb's order (``argsort(edge_id)``) and each stored row's position
    in py-tgb's arrays."""
    edge_id = np.asarray(dataset.columns["edge_id"], dtype=np.int64)
    if len(edge_id) and edge_id[0] == 0 and bool(np.all(np.diff(edge_id) == 1)):
        identity = slice(None)  # a time-ordered release without inverse edges: no gather, no copy
        return edge_id, identity, identity  # type: ignore[return-value]
    order = np.argsort(edge_id, kind="stable")
    position = np.empty_like(order)
    position[order] = np.arange(len(order))
    return edge_id, order, position


def _masks(dataset: TemporalGraphDataset, position: np.ndarray) -> dict[str, np.ndarray]:
    """py-tgb's boolean ``{train, val, test}`` masks: the stored split's rows at their py-tgb positions."""
    masks = {}
    for split in ("train", "val", "test"):
        lo, hi = dataset.splits[split]
        masks[split] = np.zeros(dataset.num_rows, dtype=bool)
        masks[split][slice(lo, hi) if isinstance(position, slice) else position[lo:hi]] = True
    return masks


def pytgb_full_data(dataset: TemporalGraphDataset) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """py-tgb's ``full_data`` and ``{train, val, test}`` masks of an imported link ``dataset`` (tgbl, tkgl, thgl), in
    py-tgb's row order (stored rows are in time order; ``edge_id`` is each row's position in py-tgb's arrays).

    Raises:
        UnsupportedTaskError: for a parser this module cannot reproduce py-tgb's view of.
    """
    view = PYTGB_PARSERS[_parser(dataset, PYTGB_PARSERS)]
    edge_id, order, position = _pytgb_order(dataset)
    inverse = np.asarray(dataset.columns["inverse"], dtype=np.int64) if "inverse" in dataset.columns else 0
    start = view.edge_idxs_start if view.edge_idxs_start is not None else int(
        dataset.manifest.graph.get("pytgb_edge_idxs_start", 0))
    if "edge_feat" in dataset.columns:
        features = np.asarray(dataset.columns["edge_feat"], dtype=np.float64)[order]
    else:  # TKG/THG parsers: zeros over the CSV's rows, none for the inverse edges py-tgb appends
        features = np.zeros((len(edge_id) - int(np.count_nonzero(inverse)), 1))
    data = {"sources": dataset.src[order].astype(np.int64), "destinations": dataset.dst[order].astype(np.int64),
            "timestamps": dataset.t[order].astype(np.int64),
            "edge_idxs": (edge_id + start * (1 + inverse))[order].astype(view.edge_idxs_dtype),
            "edge_feat": features,
            "w": np.ones(len(edge_id)) if view.weight_column is None else features[:, view.weight_column].copy(),
            "edge_label": np.ones(len(edge_id))}
    if "edge_type" in dataset.columns:
        data["edge_type"] = np.asarray(dataset.columns["edge_type"])[order].astype(np.int64)
    return data, _masks(dataset, position)


def _by_node(dataset: TemporalGraphDataset, declared: Mapping[str, Any], column: str,
             shape: tuple[int, ...]) -> np.ndarray:
    """A node file's column as py-tgb's float64 array indexed by node id (``num_nodes`` rows of ``shape``; zeros
    where the file has no row), from the file ``declared`` names."""
    nodes = dataset.artifact(declared["file"])
    values = np.zeros((int(dataset.manifest.graph["num_nodes"]), *shape))
    values[np.asarray(nodes["node"], dtype=np.int64)] = nodes[column]
    return values


def pytgb_node_type(dataset: TemporalGraphDataset) -> np.ndarray | None:
    """py-tgb's ``node_type`` of a THG: float64, one entry per node id (0 where the release lists none), from the
    file the manifest's ``graph.node_types`` names; ``None`` for a graph without node types."""
    declared = dataset.manifest.graph.get("node_types")
    return None if declared is None else _by_node(dataset, declared, declared.get("column", "type"), ())


def pytgb_node_feat(dataset: TemporalGraphDataset) -> np.ndarray | None:
    """py-tgb's ``node_feat`` (tgbl-flight's airports): float64 ``[num_nodes, dim]`` by node id (zeros where the
    release describes no node), from the file and column the manifest's ``graph.node_feat`` names; ``None`` for a
    graph without node features, as py-tgb."""
    declared = dataset.manifest.graph.get("node_feat")
    return None if declared is None else _by_node(dataset, declared, declared["column"], (int(declared["dim"]),))


def pytgb_static_data(dataset: TemporalGraphDataset) -> dict[str, np.ndarray] | None:
    """py-tgb's ``static_data`` (tkgl-smallpedia, tkgl-wikidata): ``{"head", "tail", "edge_type"}`` float64 arrays,
    py-tgb's ids, from the file the manifest's ``graph.static_edges`` names; ``None`` for a graph without static
    edges."""
    declared = dataset.manifest.graph.get("static_edges")
    if declared is None:
        return None
    static = dataset.artifact(declared["file"])
    return {column: np.asarray(static[column], dtype=np.float64) for column in ("head", "tail", "edge_type")}


def pytgb_node_data(dataset: TemporalGraphDataset) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """py-tgb's node-property ``full_data`` (without ``node_label_dict``) and masks of an imported tgbn ``dataset``, in
    the release CSV's row order: every array float64, as py-tgb's tgbn parsers fill them.

    Raises:
        UnsupportedTaskError: for a parser this module cannot reproduce py-tgb's view of.
    """
    _parser(dataset, PYTGB_NODE_PARSERS)
    edge_id, order, position = _pytgb_order(dataset)
    start = int(dataset.manifest.graph.get("pytgb_edge_idxs_start", 1))
    data = {"sources": dataset.src[order].astype(np.float64), "destinations": dataset.dst[order].astype(np.float64),
            "timestamps": dataset.t[order].astype(np.float64),
            "edge_idxs": (edge_id[order] + start).astype(np.float64),
            "edge_feat": np.asarray(dataset.columns["edge_feat"], dtype=np.float64)[order],
            "edge_label": np.ones(len(edge_id))}
    return data, _masks(dataset, position)


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


def negative_sampler(item: TgbEntry, dataset: TemporalGraphDataset, data: Mapping[str, np.ndarray],
                     node_type: np.ndarray | None) -> NegativeEdgeSampler | RelationNegativeEdgeSampler:
    """The sampler py-tgb builds for ``dataset``: keyed by ``(src, dst, t)`` for a graph without edge types (tgbl),
    by ``(t, src, edge_type)`` otherwise (py-tgb's THG sampler for a graph with node types, its TKG one else), over
    ``data`` (py-tgb's ``full_data``) for the id bounds py-tgb passes."""
    if "edge_type" not in data:
        return NegativeEdgeSampler(item.name, item.ns_strategy or "hist_rnd", dataset.negatives)

    def open_split(split: str) -> RelationQueries:
        return relation_queries(dataset, split)

    if node_type is not None:
        ends = np.concatenate([data["sources"], data["destinations"]])
        return THGNegativeEdgeSampler(item.name, int(ends.min()), int(ends.max()), node_type, open_split)
    destinations = data["destinations"]
    return TKGNegativeEdgeSampler(item.name, int(destinations.min()), int(destinations.max()),
                                  item.ns_strategy or "time-filtered", open_split)


@dataclass(frozen=True)
class KeyIndex:
    """The queries of one negatives file, found by a key ``(first, second, t)`` without a dict: ``(src, dst, t)`` for
    tgbl, ``(src, edge_type, t)`` for TKG/THG. Both ids packed into one int64, pairs and timestamps replaced by their
    rank among the distinct values, and the composite key ``pair_rank * n_times + time_rank`` sorted once; a lookup
    is three ``searchsorted`` calls per batch. Rows sharing a key (the queries of one ``(t, src, edge_type)``) are
    found at the first of them."""

    pairs: np.ndarray
    times: np.ndarray
    keys: np.ndarray
    rows: np.ndarray

    @classmethod
    def build(cls, negatives: Negatives) -> KeyIndex:
        """The index of a tgbl negatives file, keyed ``(src, dst, t)``."""
        return cls.of(negatives.src, negatives.dst, negatives.t)

    @classmethod
    def of(cls, first: np.ndarray, second: np.ndarray, t: np.ndarray) -> KeyIndex:
        """The index of the keys ``(first[i], second[i], t[i])`` (ids below 2**31)."""
        pair = (np.asarray(first, dtype=np.int64) << 32) | np.asarray(second, dtype=np.int64)
        pairs, pair_rank = np.unique(pair, return_inverse=True)
        times, time_rank = np.unique(np.asarray(t, dtype=np.int64), return_inverse=True)
        composite = pair_rank.ravel().astype(np.int64) * max(len(times), 1) + time_rank.ravel()
        rows = np.argsort(composite, kind="stable")
        return cls(pairs, times, composite[rows], rows)

    def find(self, src: np.ndarray, dst: np.ndarray, t: np.ndarray, valid: np.ndarray) -> np.ndarray:
        """The row of each query ``(src[i], dst[i], t[i])`` (``dst`` is the second id: an edge type for TKG/THG), or -1
        where there is none (or ``valid[i]`` is false)."""
        valid = valid & (src >= 0) & (src < _ID_LIMIT) & (dst >= 0) & (dst < _ID_LIMIT)
        pair_rank, found = _rank_of(self.pairs, np.where(valid, (src << 32) | dst, -1))
        time_rank, found_time = _rank_of(self.times, t)
        slot, found_key = _rank_of(self.keys, pair_rank * max(len(self.times), 1) + time_rank)
        hit = valid & found & found_time & found_key
        return np.where(hit, self.rows[slot] if len(self.rows) else -1, -1)


def _rank_of(sorted_values: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The position of each query in ``sorted_values`` (clipped) and whether it is there."""
    if len(sorted_values) == 0:
        return np.zeros(len(queries), dtype=np.int64), np.zeros(len(queries), dtype=bool)
    slot = np.minimum(np.searchsorted(sorted_values, queries), len(sorted_values) - 1)
    return slot, sorted_values[slot] == queries


def _key_column(values: ArrayInput, name: str) -> tuple[np.ndarray, np.ndarray]:
    """``values`` (numpy, torch or a sequence) as int64 and a mask of the entries that can match a key: integers,
    and floats with an integral value (py-tgb's dict finds ``(s, d, 36.0)`` under ``(s, d, 36)``).

    Raises:
        ValueError: for an array that is not 1-d or holds neither integers nor floats.
    """
    if hasattr(values, "detach"):  # torch tensor, without importing torch
        values = values.detach().cpu().numpy()
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} has shape {array.shape}; pass a 1-d array (numpy or torch) with one entry per "
                         "positive edge of the batch")
    if np.issubdtype(array.dtype, np.integer):
        return array.astype(np.int64, copy=False), np.ones(len(array), dtype=bool)
    if np.issubdtype(array.dtype, np.floating):
        whole = np.isfinite(array) & (np.floor(array) == array) & (np.abs(array) < 2.0 ** 62)
        return np.where(whole, array, 0).astype(np.int64), whole
    raise ValueError(f"{name} has dtype {array.dtype}; node ids and timestamps are integers")


#: what a sampler's split opener returns: tgbl negatives, or a TKG/THG split's queries
_Split = TypeVar("_Split", Negatives, "RelationQueries")


@dataclass(frozen=True)
class _OpenSplit(Generic[_Split]):
    data: _Split
    index: KeyIndex


class _StoredEvalSets(Generic[_Split]):
    """What the samplers share: each split's evaluation set opened from the verified cache (never a pickle) and
    indexed once, by ``load_split``; ``load_eval_set`` refused."""

    def __init__(self, dataset_name: str, strategy: str, open_split: Callable[[str], _Split]) -> None:
        self.dataset_name = dataset_name
        self.strategy = strategy
        self._open: Callable[[str], _Split] = open_split
        self._splits: dict[str, _OpenSplit[_Split] | None] = {}

    def _index(self, data: _Split) -> KeyIndex:
        raise NotImplementedError

    def load_split(self, split_mode: str) -> None:
        """Open ``split_mode``'s negatives and index their keys (once; a reset split is opened again).

        Raises:
            ValueError: for a split other than ``val`` and ``test``.
        """
        _check_split(split_mode)
        if self._splits.get(split_mode) is None:
            data = self._open(split_mode)
            self._splits[split_mode] = _OpenSplit(data, self._index(data))

    def load_eval_set(self, fname: str, split_mode: str = "val") -> None:
        """Not served: negatives are never read from a pickle here (a pickle can run code, and the verified,
        converted negatives are what the dataset serves).

        Raises:
            UnsupportedTaskError: always, saying what to call instead.
        """
        raise UnsupportedTaskError(f"tgbhub.compat.tgb does not read negatives from {fname!r}; call the dataset's "
                                   f"load_{split_mode}_ns(), which opens the verified negatives of the imported "
                                   f"{self.dataset_name}")

    def reset_eval_set(self, split_mode: str = "test") -> None:
        """Forget ``split_mode``'s negatives until they are loaded again.

        Raises:
            ValueError: for a split other than ``val`` and ``test``.
        """
        _check_split(split_mode)
        self._splits[split_mode] = None

    def _opened(self, split_mode: str) -> _OpenSplit[_Split]:
        _check_split(split_mode)
        opened = self._splits.get(split_mode)
        if opened is None:
            raise ValueError(f"Evaluation set is None! You should load the {split_mode} evaluation set first: "
                             f"dataset.load_{split_mode}_ns()")
        return opened


class NegativeEdgeSampler(_StoredEvalSets[Negatives]):
    """py-tgb's ``NegativeEdgeSampler`` over the converted negatives: ``query_batch`` returns, for each positive edge
    ``(src, dst, t)``, the list of negative destinations TGB published for it (Python ints, py-tgb's type), found
    by a vectorised key lookup instead of a pickled dict.

    ``load_eval_set`` (which reads a pickle path) is not served: the dataset's ``load_val_ns()`` /
    ``load_test_ns()`` open the verified negatives.
    """

    def __init__(self, dataset_name: str, strategy: str, open_split: Callable[[str], Negatives]) -> None:
        super().__init__(dataset_name, strategy, open_split)

    def _index(self, data: Negatives) -> KeyIndex:
        return KeyIndex.build(data)

    def query_batch(self, pos_src: ArrayInput, pos_dst: ArrayInput, pos_timestamp: ArrayInput,
                    edge_type: ArrayInput | None = None, split_mode: str = "test") -> list[list[int]]:
        """The negative destinations of every positive edge, as py-tgb returns them: a list with one list of ints
        per edge (a release's ragged counts kept). Inputs are numpy arrays or torch tensors (any device).

        Raises:
            ValueError: for a split other than ``val``/``test`` or not loaded yet, inputs of different lengths, an
                ``edge_type`` (tgbl negatives are keyed without one), or an edge that has no negatives in that split
                (py-tgb's error, naming the first such edge).
        """
        negatives, count = self.query_batch_padded(pos_src, pos_dst, pos_timestamp, edge_type, split_mode)
        return [row[:n] for row, n in zip(negatives.tolist(), count.tolist(), strict=True)]

    def query_batch_padded(self, pos_src: ArrayInput, pos_dst: ArrayInput, pos_timestamp: ArrayInput,
                           edge_type: ArrayInput | None = None,
                           split_mode: str = "test") -> tuple[np.ndarray, np.ndarray]:
        """:meth:`query_batch` as arrays (a tgbhub extension, for batched scoring): int32 ``[B, q]`` negatives,
        -1 after the first ``count[i]`` of row ``i``, and ``count``.

        Raises:
            ValueError: as :meth:`query_batch`.
        """
        opened = self._opened(split_mode)
        if edge_type is not None:
            raise ValueError(f"{self.dataset_name}'s negatives are keyed by (src, dst, t) without an edge type; "
                             "call query_batch without edge_type")
        src, src_ok = _key_column(pos_src, "pos_src")
        dst, dst_ok = _key_column(pos_dst, "pos_dst")
        t, t_ok = _key_column(pos_timestamp, "pos_timestamp")
        if not len(src) == len(dst) == len(t):
            raise ValueError(f"pos_src, pos_dst and pos_timestamp have {len(src)}, {len(dst)} and {len(t)} entries; "
                             "pass one entry per positive edge in each (py-tgb would silently drop the extra ones)")
        rows = opened.index.find(src, dst, t, src_ok & dst_ok & t_ok)
        if (rows < 0).any():
            first = int(np.flatnonzero(rows < 0)[0])
            shown = [_plain(values, first) for values in (pos_src, pos_dst, pos_timestamp)]
            raise ValueError(f"The edge ({shown[0]}, {shown[1]}, {shown[2]}) is not in the '{split_mode}' evaluation "
                             f"set! Query the {split_mode} edges of full_data (sources, destinations, timestamps "
                             f"under {split_mode}_mask), as py-tgb's negatives are keyed by them")
        return np.asarray(opened.data.negatives[rows]), np.asarray(opened.data.count[rows])


@dataclass(frozen=True)
class RelationQueries:
    """One split's queries of a TKG/THG, keyed by ``(t, src, edge_type)`` (query ``i``: row ``i`` of the split),
    with what the key stands for: TGB's 1-vs-q ``negatives`` (int32 ``[n, q]``, -1 after ``count[i]``), or for the
    1-vs-all ``time-filtered`` protocol the ``filters`` (every node except the query's filter set)."""

    t: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    edge_type: np.ndarray
    negatives: np.ndarray | None = None
    count: np.ndarray | None = None
    filters: FilterSets | None = None

    def one_vs_q(self) -> tuple[np.ndarray, np.ndarray]:
        """``(negatives, count)`` of 1-vs-q queries.

        Raises:
            ValueError: for the queries of the ``time-filtered`` protocol, which have filter sets instead.
        """
        if self.negatives is None or self.count is None:
            raise ValueError("these queries are time-filtered: they have filter sets, not 1-vs-q negatives")
        return self.negatives, self.count


def relation_queries(dataset: TemporalGraphDataset, split: str) -> RelationQueries:
    """The ``(t, src, edge_type)``-keyed queries of ``split`` of an imported TKG/THG ``dataset``: the filter sets of
    its time-filtered ranking task (:meth:`tgbhub.evaluate.filtered.TimeFilteredEvaluator.filter_sets`), or its
    1-vs-q negatives file with the file's ``edge_type`` column.

    Raises:
        UnsupportedTaskError: if the dataset's ranking task has neither for ``split``.
        IntegrityError, InvalidNameError: if the task's files cannot be opened.
    """
    task = dataset.task
    if task.get("type") == FILTERED_TASK:
        sets = dataset.get_evaluator(task.get("name")).filter_sets(split)
        return RelationQueries(sets.t, sets.src, sets.dst, sets.edge_type, filters=sets)
    file = task.get("negatives", {}).get("files", {}).get(split)
    columns = dataset.artifact(file) if file is not None else {}
    if "edge_type" not in columns:
        raise UnsupportedTaskError(f"{dataset.name}@{dataset.version}'s task {task.get('name')!r} has no "
                                   f"(t, src, edge_type)-keyed negatives for split {split!r}; reimport it with "
                                   "`tgbhub import tgb/NAME` from this tgbhub")
    return RelationQueries(columns["t"], columns["src"], columns["dst"], columns["edge_type"],
                           negatives=columns["negatives"], count=columns["count"])


class RelationNegativeEdgeSampler(_StoredEvalSets[RelationQueries]):
    """py-tgb's samplers of TGB 2.0 (``TKGNegativeEdgeSampler``, ``THGNegativeEdgeSampler``) over the converted
    negatives: ``query_batch(pos_src, pos_dst, pos_t, edge_type, split_mode)`` returns one int64 array per positive
    edge, found by its ``(t, src, edge_type)`` key with a vectorised lookup instead of a pickled dict: for
    ``time-filtered`` py-tgb's ``np.delete(np.arange(first, last + 1), filter_set)`` (every node except the query's
    filter set), else the stored q negatives as py-tgb's pickle holds them.
    """

    def __init__(self, dataset_name: str, strategy: str, open_split: Callable[[str], RelationQueries],
                 candidates: tuple[int, int]) -> None:
        super().__init__(dataset_name, strategy, open_split)
        self._candidates = candidates

    def _index(self, data: RelationQueries) -> KeyIndex:
        return KeyIndex.of(data.src, data.edge_type, data.t)

    def query_batch(self, pos_src: ArrayInput, pos_dst: ArrayInput, pos_timestamp: ArrayInput,
                    edge_type: ArrayInput | None = None, split_mode: str = "test") -> list[np.ndarray]:
        """The negative destinations of every positive edge, as py-tgb returns them: a list with one int64 array per
        edge. Inputs are numpy arrays or torch tensors (any device); ``pos_dst`` is not part of the key.

        Raises:
            ValueError: for a split other than ``val``/``test`` or not loaded yet, no ``edge_type``, inputs of
                different lengths, or an edge whose ``(t, src, edge_type)`` has no negatives in that split (py-tgb's
                error, naming the first such edge).
        """
        data, rows = self._rows(pos_src, pos_dst, pos_timestamp, edge_type, split_mode)
        if data.filters is not None:
            return complements(*self._candidates, data.filters, rows)
        stored, count = data.one_vs_q()
        negatives = np.asarray(stored[rows], dtype=np.int64)
        return [row[:n] for row, n in zip(negatives, np.asarray(count[rows]).tolist(), strict=True)]

    def query_batch_padded(self, pos_src: ArrayInput, pos_dst: ArrayInput, pos_timestamp: ArrayInput,
                           edge_type: ArrayInput | None = None,
                           split_mode: str = "test") -> tuple[np.ndarray, np.ndarray]:
        """1-vs-q negatives as arrays (a tgbhub extension, for batched scoring): int32 ``[B, q]``, -1 after the first
        ``count[i]`` of row ``i``, and ``count``.

        Raises:
            ValueError: as :meth:`query_batch`, and for the 1-vs-all ``time-filtered`` protocol, whose negatives are
                every node but the filter set (score every node and grade with ``tgbhub_dataset.get_evaluator()
                .evaluate_scores``).
        """
        data, rows = self._rows(pos_src, pos_dst, pos_timestamp, edge_type, split_mode)
        if data.filters is not None:
            raise ValueError(f"{self.dataset_name}'s {self.strategy} negatives are every node except a filter set, "
                             "not a padded array; use query_batch, or score every node and grade in process with "
                             "LinkPropPredDataset(...).tgbhub_dataset.get_evaluator().evaluate_scores")
        negatives, count = data.one_vs_q()
        return np.asarray(negatives[rows]), np.asarray(count[rows])

    def _rows(self, pos_src: ArrayInput, pos_dst: ArrayInput, pos_timestamp: ArrayInput,
              edge_type: ArrayInput | None, split_mode: str) -> tuple[RelationQueries, np.ndarray]:
        """The split's queries and the row of each positive edge's key.

        Raises:
            ValueError: as :meth:`query_batch`.
        """
        opened = self._opened(split_mode)
        if edge_type is None:
            raise ValueError(f"{self.dataset_name}'s negatives are keyed by (t, src, edge_type); pass the edges' "
                             "relation types: query_batch(pos_src, pos_dst, pos_t, edge_type, split_mode=...)")
        columns = [_key_column(values, name) for values, name in ((pos_src, "pos_src"), (pos_dst, "pos_dst"),
                                                                  (pos_timestamp, "pos_timestamp"),
                                                                  (edge_type, "edge_type"))]
        lengths = [len(values) for values, _ in columns]
        if len(set(lengths)) != 1:
            raise ValueError(f"pos_src, pos_dst, pos_timestamp and edge_type have {lengths[0]}, {lengths[1]}, "
                             f"{lengths[2]} and {lengths[3]} entries; pass one entry per positive edge in each "
                             "(py-tgb would silently drop the extra ones)")
        (src, src_ok), _, (t, t_ok), (rel, rel_ok) = columns
        rows = opened.index.find(src, rel, t, src_ok & t_ok & rel_ok)
        if (rows < 0).any():
            first = int(np.flatnonzero(rows < 0)[0])
            shown = [_plain(values, first) for values in (pos_src, pos_dst, pos_timestamp, edge_type)]
            raise ValueError(f"The edge ({', '.join(map(str, shown))}) is not in the '{split_mode}' evaluation set! "
                             f"Query the {split_mode} edges of full_data (sources, destinations, timestamps, "
                             f"edge_type under {split_mode}_mask), as py-tgb's negatives are keyed by them")
        return opened.data, rows


class TKGNegativeEdgeSampler(RelationNegativeEdgeSampler):
    """py-tgb's ``TKGNegativeEdgeSampler`` (tkgl): ``first_dst_id``..``last_dst_id`` are the candidates of the
    ``time-filtered`` protocol; ``dst-time-filtered`` (tkgl-wikidata) returns the stored negatives."""

    def __init__(self, dataset_name: str, first_dst_id: int, last_dst_id: int, strategy: str,
                 open_split: Callable[[str], RelationQueries]) -> None:
        super().__init__(dataset_name, strategy, open_split, (first_dst_id, last_dst_id))
        self.first_dst_id = first_dst_id
        self.last_dst_id = last_dst_id


class THGNegativeEdgeSampler(RelationNegativeEdgeSampler):
    """py-tgb's ``THGNegativeEdgeSampler`` (thgl): the stored ``node-type-filtered`` negatives; ``node_type`` is the
    dataset's (float64, by node id)."""

    def __init__(self, dataset_name: str, first_node_id: int, last_node_id: int, node_type: np.ndarray,
                 open_split: Callable[[str], RelationQueries]) -> None:
        super().__init__(dataset_name, "node-type-filtered", open_split, (first_node_id, last_node_id))
        self.first_node_id = first_node_id
        self.last_node_id = last_node_id
        self.node_type = node_type


def complements(first: int, last: int, filters: FilterSets, rows: np.ndarray) -> list[np.ndarray]:
    """py-tgb's time-filtered negatives of the queries ``rows``: ``np.delete(np.arange(first, last + 1), set)`` for
    each query's filter set (whose node ids py-tgb uses as positions; ``first`` is 0 for every TKG, whose inverse
    edges make node 0 a destination), a block of queries at a time; one int64 array per query."""
    every = np.arange(first, last + 1, dtype=np.int64)
    step = max(1, _COMPLEMENT_CELLS // max(len(every), 1))
    out: list[np.ndarray] = []
    for lo in range(0, len(rows), step):
        block = rows[lo:lo + step]
        offsets, members = filters.subset(block)
        keep = np.ones((len(block), len(every)), dtype=bool)
        keep[np.repeat(np.arange(len(block)), np.diff(offsets)), members] = False
        kept = every[np.nonzero(keep)[1]]
        out.extend(np.split(kept, np.cumsum(keep.sum(axis=1))[:-1]))
    return out


def _check_split(split_mode: str) -> None:
    if split_mode not in SPLIT_MODES:
        raise ValueError(f"split_mode {split_mode!r} is invalid; it should be 'val' or 'test'")


def _plain(values: ArrayInput, index: int) -> object:
    """Entry ``index`` of ``values`` (numpy, torch or a sequence) as a Python number, for messages."""
    if hasattr(values, "detach"):
        values = values.detach().cpu().numpy()
    item = np.asarray(values)[index]
    return item.item() if hasattr(item, "item") else item


class Evaluator:
    """py-tgb's ``Evaluator``, link (``tgb.linkproppred.evaluate``) or node (``tgb.nodeproppred.evaluate``) as TGB's
    ``name`` is graded; a script imports this one class for either.

    Link datasets (tgbl, tkgl, thgl; ``Evaluator(name, k_value=10)``): ``eval({"y_pred_pos", "y_pred_neg",
    "eval_metric"})`` returns ``{"hits@<k>", "mrr"}`` (numpy float64 scalars; py-tgb's are float32) with the
    average-tie rank ``1 + (#neg > pos + #neg >= pos) / 2`` of :func:`tgbhub.evaluate.metrics.ranks`. ``y_pred_pos``
    is ``(B,)`` (or ``(B, 1)``) and ``y_pred_neg`` ``(B, Q)``; a single query may pass its negatives as ``(Q,)``, as
    TGB's examples do.

    Node datasets (tgbn; ``Evaluator(name)``): ``eval({"y_true", "y_pred", "eval_metric": ["ndcg"]})`` returns
    ``{"ndcg": ...}``, py-tgb's ``sklearn.metrics.ndcg_score(y_true, y_pred, k=10)`` (numpy float64, equal up to
    1e-12; :func:`tgbhub.evaluate.nodeprop.ndcg_rows`) on ``(N, C)`` label vectors and class scores.

    Unlike py-tgb, a NaN or infinite score and any other shape raise :class:`~tgbhub.errors.ScoreError`. numpy
    arrays, torch tensors (any device) and sequences are accepted.

    Raises (on construction):
        DatasetNotFoundError: if TGB has no such dataset (suggesting close names).
        ScoreError: if ``k_value`` is not a positive integer.
    """

    def __init__(self, name: str, k_value: int = 10) -> None:
        item = _entry(name)
        if isinstance(k_value, bool) or not isinstance(k_value, (int, np.integer)) or k_value < 1:
            raise ScoreError(f"k_value must be a positive integer (hits@k); got {k_value!r}")
        self.name = name
        self.k_value = int(k_value)
        self.metric = item.eval_metric
        self.valid_metric_list = ["ndcg"] if item.eval_metric == "ndcg" else ["hits@", "mrr"]
        self.eval_metric: list[str] = []

    def eval(self, input_dict: Mapping[str, Any], verbose: bool = False) -> dict[str, np.float64]:
        """Link datasets: MRR and Hits@k of the positives among their negatives (macro average over queries). Node
        datasets: NDCG@10 of the class scores against the label vectors (mean over rows).

        Raises:
            ScoreError: for a missing key, an unknown metric name, shapes other than the ones above, a non-numeric
                dtype or a NaN/inf score (naming the first bad query or row); for NDCG also a negative label.
        """
        if self.metric == "ndcg":
            self.eval_metric = _metric_names(input_dict, {"ndcg"})
            y_true, y_pred = _ndcg_arrays(input_dict)
            return {"ndcg": np.float64(np.mean(ndcg_rows(y_true, y_pred, NDCG_K)))}
        self.eval_metric = _metric_names(input_dict, {"mrr", "hits@", f"hits@{self.k_value}"})
        pos, neg = _score_arrays(input_dict)
        values = metrics_from_ranks(ranks(pos, neg), (self.k_value,))
        return {f"hits@{self.k_value}": np.float64(values[f"hits@{self.k_value}"]), "mrr": np.float64(values["mrr"])}


def _metric_names(input_dict: Mapping[str, Any], allowed: set[str]) -> list[str]:
    """The ``eval_metric`` list of an input dict: py-tgb's names among ``allowed`` (``mrr``, ``hits@``,
    ``hits@<k>``; ``ndcg``).

    Raises:
        ScoreError: if it is missing or names another metric.
    """
    if not isinstance(input_dict, Mapping) or "eval_metric" not in input_dict:
        raise ScoreError(f"the input dict has no 'eval_metric'; add 'eval_metric': [{sorted(allowed)[-1]!r}]")
    names = list(input_dict["eval_metric"])
    unknown = [name for name in names if name not in allowed]
    if unknown:
        raise ScoreError(f"unsupported eval_metric {unknown}; use one or more of {sorted(allowed)}")
    return names


def _score_arrays(input_dict: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """``y_pred_pos`` as ``(B,)`` and ``y_pred_neg`` as ``(B, Q)`` numeric arrays.

    Raises:
        ScoreError: for a missing key, a non-numeric dtype, or shapes that are not ``(B,)``/``(B, 1)`` against
            ``(B, Q)`` (or one positive against ``(Q,)``).
    """
    missing = [key for key in ("y_pred_pos", "y_pred_neg") if key not in input_dict]
    if missing:
        raise ScoreError(f"the input dict lacks {', '.join(missing)}; pass the positive scores (B,) as 'y_pred_pos' "
                         "and the negative scores (B, Q) as 'y_pred_neg'")
    # scores on a GPU stay there: ranks() computes on their device and returns only the ranks
    raw_pos, raw_neg = (input_dict[key] if on_accelerator(input_dict[key]) else _numpy(input_dict[key])
                        for key in ("y_pred_pos", "y_pred_neg"))
    pos = raw_pos.reshape(-1) if raw_pos.ndim == 0 or (raw_pos.ndim == 2 and raw_pos.shape[1] == 1) else raw_pos
    neg = raw_neg.reshape(1, -1) if raw_neg.ndim == 1 and pos.shape == (1,) else raw_neg
    if pos.ndim != 1 or neg.ndim != 2 or neg.shape[0] != pos.shape[0]:
        raise ScoreError(f"y_pred_pos has shape {raw_pos.shape} and y_pred_neg {raw_neg.shape}; expected (B,) and "
                         "(B, Q): one row of negative scores per positive (a single positive may pass its negatives "
                         "as (Q,)). py-tgb would broadcast these shapes into a meaningless MRR")
    if on_accelerator(pos) or on_accelerator(neg):
        return pos, neg
    return as_scores(pos, "y_pred_pos", 1), as_scores(neg, "y_pred_neg", 2)


def _ndcg_arrays(input_dict: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """``y_true`` (non-negative label vectors) and ``y_pred`` (finite class scores) as ``(N, C)`` float arrays.

    Raises:
        ScoreError: for a missing key, a non-numeric dtype, shapes that are not one ``(N, C)`` with ``N >= 1`` and
            ``C >= 2`` (sklearn's requirement), a NaN or infinite value, or a negative label (naming the row).
    """
    missing = [key for key in ("y_true", "y_pred") if key not in input_dict]
    if missing:
        raise ScoreError(f"the input dict lacks {', '.join(missing)}; pass the label vectors (N, C) as 'y_true' and "
                         "the class scores (N, C) as 'y_pred'")
    raw = {key: _numpy(input_dict[key]) for key in ("y_true", "y_pred")}
    shapes = {key: values.shape for key, values in raw.items()}
    if len(set(shapes.values())) != 1 or raw["y_true"].ndim != 2 or min(raw["y_true"].shape) < 1 or \
            raw["y_true"].shape[1] < 2:
        raise ScoreError(f"y_true has shape {shapes['y_true']} and y_pred {shapes['y_pred']}; expected one shape "
                         "(N, C): a row per node, a column per class (at least 2), as find_next_labels_batch hands "
                         "the labels out")
    arrays = {key: as_scores(values, key, 2) for key, values in raw.items()}
    for key, values in arrays.items():
        bad = ~np.isfinite(values).all(axis=1)
        if bad.any():
            raise ScoreError(f"{key} row {int(np.flatnonzero(bad)[0])} holds a NaN or infinite value; every value "
                             "must be finite: replace NaN/inf before evaluating, e.g. np.nan_to_num(y_pred, "
                             "nan=-1e9, posinf=1e9, neginf=-1e9)")
    negative = (arrays["y_true"] < 0).any(axis=1)
    if negative.any():
        raise ScoreError(f"y_true row {int(np.flatnonzero(negative)[0])} holds a negative label; NDCG grades "
                         "non-negative relevances (sklearn refuses these too): pass the label vectors as y_true")
    return arrays["y_true"], arrays["y_pred"]


def _numpy(values: ArrayInput) -> np.ndarray:
    if hasattr(values, "detach"):  # torch tensor, without importing torch
        values = values.detach().cpu().numpy()
    return np.asarray(values)


@dataclass(frozen=True)
class LabelRows:
    """A tgbn dataset's labels as the import stores them: one row per ``(t, node)``, sorted, with py-tgb's dense
    label vector; ``times`` are the distinct label timestamps (py-tgb's ``label_ts``) and rows
    ``bounds[i]:bounds[i + 1]`` hold those of ``times[i]``. Memory-mapped."""

    t: np.ndarray
    node: np.ndarray
    label: np.ndarray
    times: np.ndarray
    bounds: np.ndarray

    @classmethod
    def of(cls, dataset: TemporalGraphDataset) -> LabelRows:
        """The labels file the manifest's ``graph.labels_file`` names (``t``, ``node``, ``label``)."""
        columns = dataset.artifact(dataset.manifest.graph["labels_file"])
        t = np.asarray(columns["t"], dtype=np.int64)
        times, starts = np.unique(t, return_index=True)
        return cls(t, np.asarray(columns["node"]), np.asarray(columns["label"]), times,
                   np.append(starts, len(t)).astype(np.int64))

    def batch(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """py-tgb's ``(label_ts, node_ids, labels)`` of label timestamp ``times[i]``: int64, int64 and a float64
        ``(n, C)`` copy; nodes in id order."""
        lo, hi = int(self.bounds[i]), int(self.bounds[i + 1])
        return (np.full(hi - lo, self.times[i], dtype="int"), self.node[lo:hi].astype(np.int64),
                np.array(self.label[lo:hi], dtype=np.float64))

    def as_dict(self) -> dict[int, dict[int, np.ndarray]]:
        """py-tgb's ``{t: {node: label vector}}`` (Python int keys); the vectors are read-only views of the cache."""
        out: dict[int, dict[int, np.ndarray]] = {}
        for i, ts in enumerate(self.times.tolist()):
            lo, hi = int(self.bounds[i]), int(self.bounds[i + 1])
            out[ts] = dict(zip(self.node[lo:hi].tolist(), self.label[lo:hi], strict=True))
        return out


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


__all__ = ["Evaluator", "KeyIndex", "LabelRows", "LinkPropPredDataset", "NegativeEdgeSampler", "NodePropPredDataset",
           "PYTGB_NODE_PARSERS", "PYTGB_PARSERS", "RelationNegativeEdgeSampler", "RelationQueries",
           "THGNegativeEdgeSampler", "TKGNegativeEdgeSampler", "complements", "dataset_entry", "negative_sampler",
           "open_imported", "pytgb_full_data", "pytgb_node_data", "pytgb_node_type", "pytgb_static_data",
           "relation_queries"]


def _entry(name: str) -> TgbEntry:
    """TGB's catalogue entry of ``name`` (the TGB importer's).

    Raises:
        DatasetNotFoundError: if TGB has no such dataset (with suggestions).
    """
    return cast(TgbEntry, importer_plugin("tgb").entry(name))
