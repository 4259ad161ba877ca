"""py-tgb's negative samplers over the converted negatives: ``NegativeEdgeSampler`` (tgbl, keyed ``(src, dst, t)``)
and TGB 2.0's ``TKGNegativeEdgeSampler`` / ``THGNegativeEdgeSampler`` (keyed ``(t, src, edge_type)``), each split's
negatives opened from the verified cache and found by a vectorised sorted-key lookup instead of a pickled dict."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeAlias, TypeVar

import numpy as np

from tgbhub.compat.tgb.views import TgbEntry
from tgbhub.data.temporal_graph import Negatives, TemporalGraphDataset
from tgbhub.errors import UnsupportedTaskError
from tgbhub.evaluate.filtered import TASK_TYPE as FILTERED_TASK, FilterSets

if TYPE_CHECKING:
    import torch

SPLIT_MODES = ("val", "test")
#: node ids a key may hold: the converted negatives store int32 ids
_ID_LIMIT = 1 << 31
#: cells of the boolean matrix one step of :func:`complements` fills: bounds its memory at 16 MiB per step
_COMPLEMENT_CELLS = 1 << 24
#: what py-tgb's samplers accept for an array: numpy, torch (any device) or a sequence of numbers
ArrayInput: TypeAlias = "np.ndarray | torch.Tensor | Collection[float]"


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

