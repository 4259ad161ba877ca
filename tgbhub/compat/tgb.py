"""py-tgb 2.3.0's public API served from tgbhub's verified cache: TGB's scripts run by changing one import line.

    from tgb.linkproppred.dataset import LinkPropPredDataset        # before
    from tgb.linkproppred.evaluate import Evaluator
    from tgbhub.compat.tgb import LinkPropPredDataset, Evaluator     # after

The constructors take py-tgb's arguments and the objects have py-tgb's attributes, with py-tgb's names, dtypes and
row order (the release CSV's, which the import keeps as ``edge_id``). What differs underneath (spec ``tgb.md`` §3.1,
§4, §7):

- the data are the version imported with ``tgbhub import tgb NAME``: TGB's release converted and checked against
  TGB's published statistics, then cached with sha256-verified files. It lives in tgbhub's cache
  (``$TGBHUB_CACHE``, or the ``cache_dir=`` keyword this module adds), never under site-packages: py-tgb's ``root``
  and ``meta_dict`` are accepted and ignored. With ``download=True`` (py-tgb's default) a dataset that is not
  imported yet is imported on first use, from the zip a previous import kept or from TGB's URL (never in offline
  mode, ``TGBHUB_OFFLINE=1``); stdin is never read.
- nothing is parsed or unpickled: ``full_data`` comes from memory-mapped Parquet columns, and the evaluation
  negatives are rectangular arrays found by sorted ``(src, dst, t)`` keys, not a pickled dict.
- :class:`Evaluator` refuses NaN/inf scores and shapes that py-tgb would broadcast silently
  (:class:`~tgbhub.errors.ScoreError`), where py-tgb scores a NaN positive as MRR 1.0.
- where the stored data cannot reproduce py-tgb's view (TKG and THG datasets, a tgbl parser this module does not
  know, tgbn labels and NDCG), a clear error says so instead of returning something different.

The PyG route is the dataset's own ``to_pyg()``, as for every temporal graph: ``tgbhub.load_dataset(
"tgb/tgbl-wiki").to_pyg()`` (or ``LinkPropPredDataset(...).tgbhub_dataset.to_pyg()``) gives a ``TemporalData``, rows
in time order; py-tgb's ``PyGLinkPropPredDataset`` is not reproduced here. This module does not import torch (nor
py-tgb); torch tensors are accepted wherever py-tgb accepts them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from tgbhub import config
from tgbhub.api import load_dataset
from tgbhub.cache import version_dir
from tgbhub.data.temporal_graph import Negatives
from tgbhub.errors import DatasetNotFoundError, InvalidNameError, ScoreError, UnsupportedTaskError
from tgbhub.evaluate.metrics import as_scores, metrics_from_ranks, ranks
from tgbhub.importing import import_tgb
from tgbhub.tgb.catalogue import TgbEntry, entry as catalogue_entry

PathLike = str | os.PathLike[str]
SPLIT_MODES = ("val", "test")
#: node ids a key may hold: the converted negatives store int32 ids
_ID_LIMIT = 1 << 31


@dataclass(frozen=True)
class PytgbView:
    """What py-tgb's parser of a tgbl edge list puts into ``full_data`` besides the stored columns."""

    #: the column of the stored ``edge_feat`` that py-tgb also returns as ``w``; ``None``: ``w`` is all ones
    weight_column: int | None
    #: the dtype of py-tgb's ``edge_idxs`` (its CSV parsers fill a float64 array; the JODIE one uses ``np.arange``)
    edge_idxs_dtype: type


#: py-tgb 2.3.0's tgbl parsers (``tgb/utils/pre_process.py``), by the name an import records in
#: ``stats.source.parser``: ``load_edgelist_wiki``, ``csv_to_pd_data_sc`` (edge_feat = w = log2 weight),
#: ``csv_to_pd_data_rc`` (edge_feat = [num_words, num_words, score], w = score)
PYTGB_PARSERS: Mapping[str, PytgbView] = {
    "edgelist-wiki": PytgbView(None, np.int64),
    "stablecoin": PytgbView(0, np.float64),
    "reddit-comments": PytgbView(-1, np.float64),
}


def dataset_entry(name: str, task: str) -> TgbEntry:
    """The catalogue entry of TGB's ``name``, which must be a ``task`` (``link`` or ``node``) dataset.

    Raises:
        DatasetNotFoundError: if TGB has no such dataset (suggesting close names).
        InvalidNameError: if it is a dataset of the other task (naming the class to use).
    """
    item = catalogue_entry(name)
    if item.task != task:
        right = "NodePropPredDataset" if item.task == "node" else "LinkPropPredDataset"
        raise InvalidNameError(f"{name} is a {item.task} property prediction dataset; load it with "
                               f"tgbhub.compat.tgb.{right}(name={name!r})")
    return item


def open_imported(item: TgbEntry, cache_dir: PathLike | None, download: bool) -> Any:
    """``tgb/<name>`` from the verified cache; imported first (:func:`tgbhub.importing.import_tgb`) when it is not
    there and ``download`` is true.

    Raises:
        FileNotFoundError: if it is not imported and ``download`` is false (py-tgb's error), saying how to import it.
        FetchError, GenerationError, IntegrityError: from the import (nothing to read, offline, a family this
            tgbhub cannot import yet, a release that is not TGB's).
    """
    try:
        return load_dataset(item.hub_name, cache_dir=cache_dir)
    except DatasetNotFoundError as missing:
        if not download:
            raise FileNotFoundError(f"{item.name} is not in tgbhub's cache at {config.cache_root(cache_dir)} and "
                                    f"download=False: {missing} Or pass download=True to import it now.") from missing
    import_tgb(item.name, cache_dir=cache_dir)
    return load_dataset(item.hub_name, cache_dir=cache_dir)


def _view(dataset: Any) -> PytgbView:
    """How py-tgb reads ``dataset``'s release.

    Raises:
        UnsupportedTaskError: for a parser (or a split layout) this module cannot reproduce py-tgb's view of.
    """
    parser = dataset.manifest.stats.get("source", {}).get("parser")
    if parser not in PYTGB_PARSERS or dataset.manifest.split_unit != "row":
        raise UnsupportedTaskError(f"{dataset.name}@{dataset.version} was imported with py-tgb's {parser!r} parser, "
                                   "whose full_data tgbhub.compat.tgb cannot reproduce (it knows "
                                   f"{', '.join(PYTGB_PARSERS)}); use tgbhub.load_dataset({dataset.name!r}) directly")
    return PYTGB_PARSERS[parser]


def pytgb_full_data(dataset: Any) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """py-tgb's ``full_data`` and ``{train, val, test}`` masks of an imported tgbl ``dataset``, in the release CSV's
    row order (stored rows are in time order; ``edge_id`` is each row's CSV position).

    Raises:
        UnsupportedTaskError: for a parser this module cannot reproduce py-tgb's view of.
    """
    view = _view(dataset)
    edge_id = np.asarray(dataset.columns["edge_id"], dtype=np.int64)
    order = np.argsort(edge_id, kind="stable")
    position = np.empty_like(order)
    position[order] = np.arange(len(order))
    features = np.asarray(dataset.columns["edge_feat"], dtype=np.float64)[order]
    start = int(dataset.manifest.graph.get("pytgb_edge_idxs_start", 0))
    data = {"sources": dataset.src[order].astype(np.int64), "destinations": dataset.dst[order].astype(np.int64),
            "timestamps": dataset.t[order].astype(np.int64),
            "edge_idxs": (edge_id[order] + start).astype(view.edge_idxs_dtype), "edge_feat": features,
            "w": np.ones(len(order)) if view.weight_column is None else features[:, view.weight_column].copy(),
            "edge_label": np.ones(len(order))}
    if "edge_type" in dataset.columns:
        data["edge_type"] = np.asarray(dataset.columns["edge_type"])[order].astype(np.int64)
    masks = {}
    for split in ("train", "val", "test"):
        lo, hi = dataset.splits[split]
        masks[split] = np.zeros(len(order), dtype=bool)
        masks[split][position[lo:hi]] = True
    return data, masks


class LinkPropPredDataset:
    """py-tgb's ``tgb.linkproppred.dataset.LinkPropPredDataset`` over TGB's ``name`` in tgbhub's verified cache.

    ``root`` and ``meta_dict`` are accepted and ignored (the data live in tgbhub's cache: ``$TGBHUB_CACHE``, or
    ``cache_dir``); ``preprocess`` is accepted and has nothing left to do (the import converted the release).
    ``download=True`` imports a dataset that is not imported yet (``tgbhub import tgb NAME``); ``download=False``
    raises FileNotFoundError then, as py-tgb does. Served: ``full_data`` (``sources``, ``destinations``,
    ``timestamps``, ``edge_idxs``, ``edge_feat``, ``w``, ``edge_label``), the three masks, ``eval_metric``,
    ``negative_sampler`` / ``ns_sampler``, ``load_val_ns()`` / ``load_test_ns()``, ``num_nodes``, ``num_edges``,
    ``num_rels``, ``node_feat``, ``edge_feat``, ``node_type``, ``edge_type``, ``static_data``, ``min_dst_idx`` and
    ``max_dst_idx``. ``root`` is the dataset's (read-only) cache folder; ``tgbhub_dataset`` the tgbhub dataset.

    Raises (on construction):
        DatasetNotFoundError: if TGB has no such dataset (suggesting close names).
        InvalidNameError: for a node property dataset (use :class:`NodePropPredDataset`).
        UnsupportedTaskError: for TKG and THG datasets (inverse edges, ``(t, src, rel)`` negative keys, 1-vs-all
            filters), whose py-tgb view this module does not reproduce, or a tgbl parser it does not know.
        FileNotFoundError: if the dataset is not imported and ``download`` is false.
        FetchError, GenerationError, IntegrityError: from the import ``download=True`` runs.
    """

    def __init__(self, name: str, root: str = "datasets", meta_dict: dict[str, Any] | None = None,
                 preprocess: bool | None = True, download: bool | None = True, *,
                 cache_dir: PathLike | None = None) -> None:
        item = dataset_entry(name, "link")
        if item.family != "tgbl":
            raise UnsupportedTaskError(f"tgbhub.compat.tgb serves TGB's tgbl datasets; {name} is a {item.family} "
                                       "dataset, whose py-tgb view (inverse edges, negatives keyed by (t, src, "
                                       "relation)) it does not reproduce yet. Use tgbhub.load_dataset("
                                       f"{item.hub_name!r}) and its tasks' evaluators")
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
        self.ns_sampler = NegativeEdgeSampler(name, item.ns_strategy or "hist_rnd", self.tgbhub_dataset.negatives)
        self._num_nodes: int | None = None

    def pre_process(self) -> None:
        """Nothing to do: the import converted the release (py-tgb parses its CSV here)."""

    def load_val_ns(self) -> None:
        """Open the validation negatives (memory-mapped, verified) for ``negative_sampler.query_batch``."""
        self.ns_sampler.load_split("val")

    def load_test_ns(self) -> None:
        """Open the test negatives (memory-mapped, verified) for ``negative_sampler.query_batch``."""
        self.ns_sampler.load_split("test")

    eval_metric = property(lambda self: self.metric, doc="TGB's official metric of the dataset (``mrr``).")
    negative_sampler = property(lambda self: self.ns_sampler, doc="The :class:`NegativeEdgeSampler`.")
    full_data = property(lambda self: self._full_data, doc="py-tgb's ``full_data`` dict, in py-tgb's row order.")
    train_mask = property(lambda self: self._train_mask, doc="Boolean mask of the train edges over ``full_data``.")
    val_mask = property(lambda self: self._val_mask, doc="Boolean mask of the validation edges.")
    test_mask = property(lambda self: self._test_mask, doc="Boolean mask of the test edges.")
    num_edges = property(lambda self: int(len(self._full_data["sources"])), doc="The number of edges.")
    edge_feat = property(lambda self: self._full_data["edge_feat"], doc="Edge features ``[E, d]`` (float64).")
    edge_type = property(lambda self: self._full_data.get("edge_type"), doc="``None``: tgbl has no edge types.")
    node_feat = property(lambda self: None, doc="``None``: the tgbl parsers served here read no node features.")
    node_type = property(lambda self: None, doc="``None``: tgbl datasets have no node types.")
    static_data = property(lambda self: None, doc="``None``: only tkgl-wikidata and -smallpedia have static edges.")

    @property
    def num_nodes(self) -> int:
        """The number of distinct node ids among sources and destinations (py-tgb's count, not ``max id + 1``)."""
        if self._num_nodes is None:
            data = self._full_data
            self._num_nodes = int(len(np.unique(np.concatenate([data["sources"], data["destinations"]]))))
        return self._num_nodes

    @property
    def num_rels(self) -> int:
        """The number of relation types: 1 for a homogeneous graph, as py-tgb counts."""
        types = self._full_data.get("edge_type")
        return 1 if types is None else int(len(np.unique(types)))

    def __repr__(self) -> str:
        return f"LinkPropPredDataset({self.name!r}: {self.tgbhub_dataset!r})"


@dataclass(frozen=True)
class KeyIndex:
    """The queries of one negatives file, found by ``(src, dst, t)`` without a dict: both ids packed into one
    int64, pairs and timestamps replaced by their rank among the distinct values, and the composite key
    ``pair_rank * n_times + time_rank`` sorted once; a lookup is three ``searchsorted`` calls per batch."""

    pairs: np.ndarray
    times: np.ndarray
    keys: np.ndarray
    rows: np.ndarray

    @classmethod
    def build(cls, negatives: Negatives) -> KeyIndex:
        pair = (negatives.src.astype(np.int64) << 32) | negatives.dst.astype(np.int64)
        pairs, pair_rank = np.unique(pair, return_inverse=True)
        times, time_rank = np.unique(negatives.t.astype(np.int64), return_inverse=True)
        composite = pair_rank.ravel().astype(np.int64) * max(len(times), 1) + time_rank.ravel()
        rows = np.argsort(composite, kind="stable")
        return cls(pairs, times, composite[rows], rows)

    def find(self, src: np.ndarray, dst: np.ndarray, t: np.ndarray, valid: np.ndarray) -> np.ndarray:
        """The row of each query ``(src[i], dst[i], t[i])``, or -1 where there is none (or ``valid[i]`` is false)."""
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


def _key_column(values: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
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


@dataclass(frozen=True)
class _OpenSplit:
    negatives: Negatives
    index: KeyIndex


class NegativeEdgeSampler:
    """py-tgb's ``NegativeEdgeSampler`` over the converted negatives: ``query_batch`` returns, for each positive edge
    ``(src, dst, t)``, the list of negative destinations TGB published for it (Python ints, py-tgb's type), found
    by a vectorised key lookup instead of a pickled dict.

    ``load_eval_set`` (which reads a pickle path) is not served: the dataset's ``load_val_ns()`` /
    ``load_test_ns()`` open the verified negatives.
    """

    def __init__(self, dataset_name: str, strategy: str, open_split: Callable[[str], Negatives]) -> None:
        self.dataset_name = dataset_name
        self.strategy = strategy
        self._open = open_split
        self._splits: dict[str, _OpenSplit | None] = {}

    def load_split(self, split_mode: str) -> None:
        """Open ``split_mode``'s negatives and index their keys (once; a reset split is opened again).

        Raises:
            ValueError: for a split other than ``val`` and ``test``.
        """
        _check_split(split_mode)
        if self._splits.get(split_mode) is None:
            negatives = self._open(split_mode)
            self._splits[split_mode] = _OpenSplit(negatives, KeyIndex.build(negatives))

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

    def query_batch(self, pos_src: Any, pos_dst: Any, pos_timestamp: Any, edge_type: Any = None,
                    split_mode: str = "test") -> list[list[int]]:
        """The negative destinations of every positive edge, as py-tgb returns them: a list with one list of ints
        per edge (a release's ragged counts kept). Inputs are numpy arrays or torch tensors (any device).

        Raises:
            ValueError: for a split other than ``val``/``test`` or not loaded yet, inputs of different lengths, an
                ``edge_type`` (tgbl negatives are keyed without one), or an edge that has no negatives in that split
                (py-tgb's error, naming the first such edge).
        """
        negatives, count = self.query_batch_padded(pos_src, pos_dst, pos_timestamp, edge_type, split_mode)
        return [row[:n] for row, n in zip(negatives.tolist(), count.tolist())]

    def query_batch_padded(self, pos_src: Any, pos_dst: Any, pos_timestamp: Any, edge_type: Any = None,
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
        return np.asarray(opened.negatives.negatives[rows]), np.asarray(opened.negatives.count[rows])

    def _opened(self, split_mode: str) -> _OpenSplit:
        _check_split(split_mode)
        opened = self._splits.get(split_mode)
        if opened is None:
            raise ValueError(f"Evaluation set is None! You should load the {split_mode} evaluation set first: "
                             f"dataset.load_{split_mode}_ns()")
        return opened


def _check_split(split_mode: str) -> None:
    if split_mode not in SPLIT_MODES:
        raise ValueError(f"split_mode {split_mode!r} is invalid; it should be 'val' or 'test'")


def _plain(values: Any, index: int) -> Any:
    """Entry ``index`` of ``values`` (numpy, torch or a sequence) as a Python number, for messages."""
    if hasattr(values, "detach"):
        values = values.detach().cpu().numpy()
    item = np.asarray(values)[index]
    return item.item() if hasattr(item, "item") else item


class Evaluator:
    """py-tgb's link ``Evaluator(name, k_value=10)``: ``eval({"y_pred_pos", "y_pred_neg", "eval_metric"})`` returns
    ``{"hits@<k>", "mrr"}`` (numpy float64 scalars; py-tgb's are float32) with the average-tie rank
    ``1 + (#neg > pos + #neg >= pos) / 2`` of :func:`tgbhub.evaluate.metrics.ranks`.

    ``y_pred_pos`` is ``(B,)`` (or ``(B, 1)``) and ``y_pred_neg`` ``(B, Q)``; a single query may pass its negatives
    as ``(Q,)``, as TGB's examples do. Unlike py-tgb, a NaN or infinite score and any other shape raise
    :class:`~tgbhub.errors.ScoreError`. numpy arrays, torch tensors (any device) and sequences are accepted.

    Raises (on construction):
        DatasetNotFoundError: if TGB has no such dataset (suggesting close names).
        UnsupportedTaskError: for a tgbn dataset (NDCG@10 is not served here yet).
        ScoreError: if ``k_value`` is not a positive integer.
    """

    def __init__(self, name: str, k_value: int = 10) -> None:
        item = catalogue_entry(name)
        if item.eval_metric != "mrr":
            raise UnsupportedTaskError(f"{name} is scored by {item.eval_metric}; tgbhub.compat.tgb.Evaluator serves "
                                       "TGB's link metrics (MRR, Hits@k) only. Use tgb.nodeproppred.evaluate."
                                       "Evaluator for NDCG@10 meanwhile")
        if isinstance(k_value, bool) or not isinstance(k_value, (int, np.integer)) or k_value < 1:
            raise ScoreError(f"k_value must be a positive integer (hits@k); got {k_value!r}")
        self.name = name
        self.k_value = int(k_value)
        self.valid_metric_list = ["hits@", "mrr"]
        self.eval_metric: list[str] = []

    def eval(self, input_dict: Mapping[str, Any], verbose: bool = False) -> dict[str, np.float64]:
        """MRR and Hits@k of the positives among their negatives (macro average over queries).

        Raises:
            ScoreError: for a missing key, an unknown metric name, shapes other than the ones above, a non-numeric
                dtype or a NaN/inf score (naming the first bad query).
        """
        self.eval_metric = _metric_names(input_dict, self.k_value)
        pos, neg = _score_arrays(input_dict)
        values = metrics_from_ranks(ranks(pos, neg), (self.k_value,))
        return {f"hits@{self.k_value}": np.float64(values[f"hits@{self.k_value}"]), "mrr": np.float64(values["mrr"])}


def _metric_names(input_dict: Mapping[str, Any], k_value: int) -> list[str]:
    """The ``eval_metric`` list of an input dict: py-tgb's names (``mrr``, ``hits@``; ``hits@<k>`` too).

    Raises:
        ScoreError: if it is missing or names another metric.
    """
    if not isinstance(input_dict, Mapping) or "eval_metric" not in input_dict:
        raise ScoreError("the input dict has no 'eval_metric'; pass {'y_pred_pos': ..., 'y_pred_neg': ..., "
                         "'eval_metric': ['mrr']}")
    names = list(input_dict["eval_metric"])
    allowed = {"mrr", "hits@", f"hits@{k_value}"}
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
    raw_pos, raw_neg = (_numpy(input_dict[key]) for key in ("y_pred_pos", "y_pred_neg"))
    pos = raw_pos.reshape(-1) if raw_pos.ndim == 0 or (raw_pos.ndim == 2 and raw_pos.shape[1] == 1) else raw_pos
    neg = raw_neg.reshape(1, -1) if raw_neg.ndim == 1 and pos.shape == (1,) else raw_neg
    if pos.ndim != 1 or neg.ndim != 2 or neg.shape[0] != pos.shape[0]:
        raise ScoreError(f"y_pred_pos has shape {raw_pos.shape} and y_pred_neg {raw_neg.shape}; expected (B,) and "
                         "(B, Q): one row of negative scores per positive (a single positive may pass its negatives "
                         "as (Q,)). py-tgb would broadcast these shapes into a meaningless MRR")
    return as_scores(pos, "y_pred_pos", 1), as_scores(neg, "y_pred_neg", 2)


def _numpy(values: Any) -> np.ndarray:
    if hasattr(values, "detach"):  # torch tensor, without importing torch
        values = values.detach().cpu().numpy()
    return np.asarray(values)


class NodePropPredDataset:
    """py-tgb's ``tgb.nodeproppred.dataset.NodePropPredDataset`` surface over TGB's ``name`` (a tgbn dataset).

    The constructor takes py-tgb's arguments (``root`` and ``meta_dict`` ignored, as for
    :class:`LinkPropPredDataset`) and opens, or with ``download=True`` imports, ``tgb/<name>``. ``name``,
    ``url``, ``eval_metric``, ``num_classes``, ``label_ts_idx`` and ``reset_label_time()`` are served; the members
    that read the edges and the label stream (``full_data``, the masks, ``edge_feat``, ``node_feat``,
    ``node_label_dict``, ``find_next_labels_batch``, ``return_label_ts``) raise UnsupportedTaskError: this module
    does not reproduce py-tgb's view of the tgbn labels yet.

    Raises (on construction):
        DatasetNotFoundError: if TGB has no such dataset. InvalidNameError: for a link dataset.
        FileNotFoundError: if it is not imported and ``download`` is false.
        GenerationError: from the import, while this tgbhub cannot import tgbn datasets (it says so).
        FetchError, IntegrityError: from the import ``download=True`` runs.
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
        self.label_ts_idx = 0
        self.tgbhub_dataset = open_imported(item, cache_dir, bool(download))
        self.root = str(version_dir(config.cache_root(cache_dir), self.tgbhub_dataset.manifest))

    eval_metric = property(lambda self: self.metric, doc="TGB's official metric of the dataset (``ndcg``).")
    num_classes = property(lambda self: self._num_classes, doc="The width of the label vectors.")

    def reset_label_time(self) -> None:
        """Point the label stream back at the first label timestamp."""
        self.label_ts_idx = 0

    def find_next_labels_batch(self, cur_t: int) -> Any:
        """Raises UnsupportedTaskError: the tgbn label stream is not served here yet."""
        raise self._not_served("find_next_labels_batch")

    def return_label_ts(self) -> Any:
        """Raises UnsupportedTaskError: the tgbn label stream is not served here yet."""
        raise self._not_served("return_label_ts")

    full_data = property(lambda self: self._raise("full_data"))
    train_mask = property(lambda self: self._raise("train_mask"))
    val_mask = property(lambda self: self._raise("val_mask"))
    test_mask = property(lambda self: self._raise("test_mask"))
    edge_feat = property(lambda self: self._raise("edge_feat"))
    node_feat = property(lambda self: self._raise("node_feat"))
    node_label_dict = property(lambda self: self._raise("node_label_dict"))

    def _raise(self, member: str) -> Any:
        raise self._not_served(member)

    def _not_served(self, member: str) -> UnsupportedTaskError:
        return UnsupportedTaskError(f"tgbhub.compat.tgb does not serve NodePropPredDataset.{member} of {self.name} "
                                    "yet (py-tgb's view of the tgbn labels is not reproduced here); read "
                                    f"tgbhub.load_dataset({'tgb/' + self.name!r}) directly, or use py-tgb's "
                                    "NodePropPredDataset meanwhile")


__all__ = ["Evaluator", "KeyIndex", "LinkPropPredDataset", "NegativeEdgeSampler", "NodePropPredDataset",
           "PYTGB_PARSERS", "dataset_entry", "open_imported", "pytgb_full_data"]
