"""py-tgb's view of an imported TGB dataset: the catalogue entry of a name, the imported dataset opened (or imported
on first use), and the arrays py-tgb's parsers would hand out (``full_data``, masks, node types and features, static
edges, the tgbn label stream's rows), rebuilt from the stored columns in py-tgb's row order and dtypes."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, cast

import numpy as np

from tgbhub import config
from tgbhub.api import load_dataset
from tgbhub.data.temporal_graph import TemporalGraphDataset
from tgbhub.errors import DatasetNotFoundError, InvalidNameError, UnsupportedTaskError
from tgbhub.local.gateway import importer_plugin
from tgbhub.local.imports import import_tgb

PathLike = str | os.PathLike[str]

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
    item = entry(name)
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



def entry(name: str) -> TgbEntry:
    """TGB's catalogue entry of ``name`` (the TGB importer's).

    Raises:
        DatasetNotFoundError: if TGB has no such dataset (with suggestions).
    """
    return cast(TgbEntry, importer_plugin("tgb").entry(name))
