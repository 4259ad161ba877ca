"""TGB 1.x node property datasets (``tgbn-*``): a release zip converted to this project's files, as py-tgb 2.3.0
sees it.

What py-tgb's loader does (``tgb/nodeproppred/dataset.py`` ``generate_processed_files`` / ``pre_process``, and the
four parsers of ``tgb/utils/pre_process.py``), and what the conversion therefore does. Every CSV has one header
line, skipped unread; fields are read by position as the text ``csv.reader`` yields, so ids are strings (``"007"``
is not ``"7"``):

- ``load_edgelist_trade`` (tgbn-trade; ``year, nation, trading nation, weight``): ``t = int(col 0)``; both nation
  columns share one id space, numbered in order of first appearance, row by row, the nation before its partner;
  ``weight = float(col 3)``; ``edge_feat = [weight]``. Labels (``load_trade_label_dict``): ``node_label_dict[year]
  [id(nation)][id(partner)] = weight``, vectors of ``len(node_ids)`` entries: the number of nations in the edge
  list, *not* ``DATA_NUM_CLASSES`` (the two agree, 255, on the real release).
- ``load_edgelist_datetime`` (tgbn-genre; ``ts, user, genre, weight``), ``load_edgelist_sr`` (tgbn-reddit; ``ts,
  user, subreddit, num_words, score``) and ``load_edgelist_token`` (tgbn-token; ``ts, user, token, value,
  IsSender``): the classes (column 2) are numbered 0, 1, ... in order of first appearance and the users (column 1)
  from ``DATA_NUM_CLASSES`` on (``node_uid = label_size``), so users never collide with classes. genre:
  ``t = int(col 0)``, ``weight = float(col 3)``; reddit: ``t`` = column 0 stored into a float64 array (numpy parses
  the text), ``weight = float(int(col 4))`` (the score; num_words is not read); token: ``t`` as reddit,
  ``weight = float(col 3)``, ``edge_feat = [value, IsSender]``. Labels (``load_label_dict``): ``node_label_dict
  [int(col 0)][id(user)][id(class)] = float(col 3)``, vectors of ``len(rd_dict)`` entries: the number of classes
  the edge list holds (again not ``DATA_NUM_CLASSES`` where the two differ).

So a label vector is always indexed by the node id of the class (trade: of the partner nation), and its length is
py-tgb's, which this conversion follows (``labels.parquet``'s ``label`` width; the task records it next to the
catalogue's ``num_classes``). A label row repeated for one (t, node, class) keeps its last weight, as py-tgb's dict
assignment does; a label naming a node or class the edge list lacks is refused (py-tgb raises ``KeyError``).

Quirks recorded, not copied: py-tgb keeps every column as float64 (we store ``t`` int64, refusing a non-integral
timestamp, and ids int32); ``edge_idxs`` counts from 1 (``edge_id`` here is the 0-based CSV row, the manifest's
``graph.pytgb_edge_idxs_start`` says 1); tgbn-token's ``edge_feat[:, 0]`` is ``log(value)`` when py-tgb reloads its
processed pickles but the raw value on the first load (``dataset.py`` lines 197-200): ``edge_feat`` here is the raw
``[value, IsSender]`` of the CSV, the first load's. py-tgb does not sort the edges; rows here are stored in time
order (stable, ``edge_id`` keeps the CSV row) and the split is py-tgb's quantile rule on the timestamps.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tgbhub.errors import GenerationError

from ..manifests import parquet_record_set
from .artifacts import Description, Info
from .catalogue import TgbEntry
from .release import (
    EVERY_COLUMN,
    ProgressFactory,
    Release,
    columns_at_least,
    first_appearance,
    numbered,
    read_csv,
    silent,
)
from .tgbl import SPLITS, split_rows, stage, time_order, write_parquet

EDGES_FILE = "edges.parquet"
LABELS_FILE = "labels.parquet"
TASK_TYPE = "node-property-ndcg"
#: TGB's cut-off, hard-coded in py-tgb's node Evaluator (``k = 10``)
NDCG_K = 10
#: where py-tgb's ``edge_idxs`` start for every tgbn parser (``idx_list[idx - 1] = idx``, idx counting from 1)
PYTGB_EDGE_IDXS_START = 1


@dataclass(frozen=True)
class Parser:
    """How one of py-tgb's tgbn parsers reads the edge list (see the module docstring)."""

    #: py-tgb's function, named in the manifest's ``stats.source.parser``
    name: str
    #: the columns each row must have
    columns: int
    #: ``int``: ``int(text)`` (trade, genre); ``float``: numpy's float parse of the text (reddit, token)
    time: str
    #: the column of the weight, and how py-tgb parses it (``float``, or ``int`` then float: reddit's score)
    weight: tuple[int, str]
    #: the columns of ``edge_feat``, each ``float(text)`` (the weight's column is parsed as :attr:`weight`)
    features: tuple[int, ...]
    #: True: both endpoints share one id space numbered by first appearance, and label vectors span every node
    #: (trade); False: classes 0.. then users from ``num_classes`` on, label vectors span the classes
    shared_ids: bool


#: py-tgb dispatches on the dataset's name (``generate_processed_files``); the dispatch is data here
PARSERS: Mapping[str, Parser] = {
    "tgbn-trade": Parser("load_edgelist_trade", 4, "int", (3, "float"), (3,), shared_ids=True),
    "tgbn-genre": Parser("load_edgelist_datetime", 4, "int", (3, "float"), (3,), shared_ids=False),
    "tgbn-reddit": Parser("load_edgelist_sr", 5, "float", (4, "int"), (4,), shared_ids=False),
    "tgbn-token": Parser("load_edgelist_token", 5, "float", (3, "float"), (3, 4), shared_ids=False),
}


def convert(entry: TgbEntry, release: Release) -> tuple[dict[str, dict[str, np.ndarray]], Info]:
    """``edges.parquet`` and ``labels.parquet`` (name -> columns) of a tgbn release, and what was measured.

    Raises:
        GenerationError: for a dataset without a known parser, or a release that does not fit py-tgb's layout
            (naming the file, the column or value, and what py-tgb expects).
    """
    parser = PARSERS.get(entry.name)
    if parser is None:
        raise GenerationError(f"{entry.name} has no tgbn parser in this tgbhub (it knows {', '.join(PARSERS)}); "
                              "upgrade tgbhub")
    member = entry.files["edgelist"]
    columns = read_csv(release.read(member), member, strings=EVERY_COLUMN)
    columns_at_least(columns, parser.columns, member, f"the {parser.columns} columns py-tgb's {parser.name} reads")
    ids = _NodeIds.of(columns[1], columns[2], parser, int(entry.num_classes or 0), member)
    edges, reordered = time_order(_edges(columns, ids, parser, member))
    splits = split_rows(edges["t"], float(entry.split["val"]), float(entry.split["test"]))
    label_member = entry.files["node_labels"]
    label_columns = read_csv(release.read(label_member), label_member, strings=EVERY_COLUMN)
    columns_at_least(label_columns, 4, label_member, "timestamp, node, class, weight")
    labels = _labels(label_columns, ids, label_member)
    label_rows = label_splits(edges["t"], splits, labels["t"])
    files = {EDGES_FILE: edges, LABELS_FILE: labels}
    measured = {"num_nodes": int(len(np.union1d(edges["src"], edges["dst"]))), "num_edges": int(len(edges["t"])),
                "num_timestamps": int(len(np.unique(edges["t"]))),
                "edge_feat_dim": int(edges["edge_feat"].shape[1]),
                "split_edges": {name: int(hi - lo) for name, (lo, hi) in splits.items()},
                "num_label_rows": int(len(labels["t"])), "num_label_timestamps": int(len(np.unique(labels["t"]))),
                "label_dim": ids.width,
                "split_label_timestamps": {name: int(len(np.unique(labels["t"][lo:hi])))
                                           for name, (lo, hi) in label_rows.items()}}
    info: Info = {"splits": splits, "reordered_rows": reordered, "parser": parser.name, "measured": measured,
            "num_nodes": ids.space, "label_rows": label_rows, "label_dim": ids.width}
    return files, info


def _parse(column: pa.Array, kind: str, member: str, what: str) -> np.ndarray:
    """``int(text)`` (int64) or ``float(text)`` (float64) of every field, as py-tgb parses it.

    Raises:
        GenerationError: naming the column and the value that does not parse.
    """
    try:
        return pc.cast(column, pa.int64() if kind == "int" else pa.float64()).to_numpy()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise GenerationError(f"{member}: {what} holds a value py-tgb's {kind}() cannot parse ({exc}); is it the "
                              "release TGB published?") from exc


def _timestamps(column: pa.Array, kind: str, member: str) -> np.ndarray:
    """Column 0 as int64: ``int(text)``, or a float parse that must be integral (py-tgb keeps float64).

    Raises:
        GenerationError: for a timestamp that does not parse or is not a whole number.
    """
    values = _parse(column, kind, member, "column 0 (timestamp)")
    if kind == "int":
        return values
    fractional = ~np.isfinite(values) | (values != np.floor(values))
    if fractional.any():
        row = int(np.flatnonzero(fractional)[0])
        raise GenerationError(f"{member}: row {row + 1} has timestamp {column[row].as_py()!r}, not a whole number; "
                              "TGB's node datasets count whole seconds")
    return values.astype(np.int64)


@dataclass(frozen=True)
class _NodeIds:
    """py-tgb's node ids: the raw text of each id -> its number, for the row column and the class column."""

    #: dictionaries of raw ids (row column, class column) and the id each dictionary entry gets
    row_values: pa.Array
    row_ids: np.ndarray
    class_values: pa.Array
    class_ids: np.ndarray
    #: edge endpoints, in CSV order
    src: np.ndarray
    dst: np.ndarray
    #: the length of a label vector (py-tgb's ``len(node_ids)`` or ``len(rd_dict)``) and the size of the id space
    width: int
    space: int

    @staticmethod
    def of(rows: pa.Array, classes: pa.Array, parser: Parser, num_classes: int, member: str) -> _NodeIds:
        """Number the endpoints as py-tgb's parser does.

        Raises:
            GenerationError: if the class column holds more distinct values than ``num_classes`` (py-tgb would give
                a class and a user the same id).
        """
        if parser.shared_ids:
            src, dst, values = first_appearance(rows, classes)
            return _NodeIds(values, np.arange(len(values)), values, np.arange(len(values)), src, dst,
                            len(values), len(values))
        users, user_values = numbered(rows)
        labels, class_values = numbered(classes)
        if len(class_values) > num_classes:
            raise GenerationError(f"{member}: column 2 holds {len(class_values)} distinct classes, more than the "
                                  f"{num_classes} py-tgb reserves (DATA_NUM_CLASSES); users would share ids with "
                                  "classes. Is it the release TGB published?")
        return _NodeIds(user_values, np.arange(len(user_values)) + num_classes, class_values,
                        np.arange(len(class_values)), users + num_classes, labels, len(class_values),
                        num_classes + len(user_values))

    def lookup(self, raw: pa.Array, which: str, member: str, column: int) -> np.ndarray:
        """The ids of raw label-file values (``which``: ``row`` or ``class``).

        Raises:
            GenerationError: naming the first value the edge list does not hold (py-tgb raises ``KeyError``).
        """
        values, ids = (self.row_values, self.row_ids) if which == "row" else (self.class_values, self.class_ids)
        found = pc.index_in(raw, value_set=values)
        if found.null_count:
            row = int(np.flatnonzero(found.is_null().to_numpy(zero_copy_only=False))[0])
            raise GenerationError(f"{member}: row {row + 1} names {raw[row].as_py()!r} in column {column}, which the "
                                  "edge list does not hold (py-tgb raises KeyError); the files are not one release")
        return ids[found.to_numpy()]


def _edges(columns: list[pa.Array], ids: _NodeIds, parser: Parser, member: str) -> dict[str, np.ndarray]:
    """``t, src, dst, weight, edge_id, edge_feat`` in CSV order, parsed as py-tgb's parser does."""
    column, kind = parser.weight
    weight = _parse(columns[column], kind, member, f"column {column} (weight)").astype(np.float64)
    features = [weight if c == column else _parse(columns[c], "float", member, f"column {c} (edge feature)")
                for c in parser.features]
    t = _timestamps(columns[0], parser.time, member)
    return {"t": t, "src": ids.src.astype(np.int32), "dst": ids.dst.astype(np.int32), "weight": weight,
            "edge_id": np.arange(len(t), dtype=np.int64), "edge_feat": np.column_stack(features)}


def _labels(columns: list[pa.Array], ids: _NodeIds, member: str) -> dict[str, np.ndarray]:
    """One row per (t, node) of the label file, sorted by (t, node): ``label`` is py-tgb's dense vector.

    A (t, node, class) given twice keeps its last weight, as py-tgb's dict assignment does.
    """
    t = _parse(columns[0], "int", member, "column 0 (timestamp)")
    node = ids.lookup(columns[1], "row", member, 1)
    label = ids.lookup(columns[2], "class", member, 2)
    weight = _parse(columns[3], "float", member, "column 3 (weight)")
    order = np.lexsort((label, node, t))  # stable: a repeated (t, node, class) keeps its file order
    t, node, label, weight = t[order], node[order], label[order], weight[order]
    last = np.ones(len(t), dtype=bool)
    last[:-1] = (t[1:] != t[:-1]) | (node[1:] != node[:-1]) | (label[1:] != label[:-1])
    t, node, label, weight = t[last], node[last], label[last], weight[last]
    starts = np.ones(len(t), dtype=bool)
    starts[1:] = (t[1:] != t[:-1]) | (node[1:] != node[:-1])
    row = np.cumsum(starts) - 1
    dense = np.zeros((int(starts.sum()), ids.width), dtype=np.float64)
    dense[row, label] = weight
    return {"t": t[starts], "node": node[starts].astype(np.int32), "label": dense}


def label_splits(edge_t: np.ndarray, splits: Mapping[str, tuple[int, int]],
                 label_t: np.ndarray) -> dict[str, tuple[int, int]]:
    """Row ranges of the (t-sorted) labels each split grades: a label timestamp L belongs to the split of the first
    edge (in time order) with ``t > L``; labels at or after the last edge's time belong to none.

    This is when TGB's examples hand the labels of L out: ``get_node_label(query_t)`` in the first edge batch whose
    last timestamp ``query_t > L``, the train, val and test loaders in turn without resetting the label pointer.
    """
    first_after = np.searchsorted(edge_t, label_t, side="right")
    out = {}
    for name in SPLITS:
        lo, hi = splits[name]
        inside = np.flatnonzero((first_after >= lo) & (first_after < hi))
        start = int(inside[0]) if len(inside) else int(np.searchsorted(first_after, lo))
        out[name] = (start, start + len(inside))
    return out


def write(files: Mapping[str, Mapping[str, np.ndarray]], folder: Path,
          progress: ProgressFactory | None = None) -> dict[str, Path]:
    """Write each file's columns, in their order, into ``folder`` with
    :func:`generators.tgb.tgbl.write_parquet` (byte-stable)."""
    folder.mkdir(parents=True, exist_ok=True)
    with stage(progress or silent, "writing the imported files", len(files), "files") as bar:
        for name, columns in files.items():
            write_parquet(columns, folder / name)
            bar.set_postfix_str(name)
            bar.update(1)
    return {name: folder / name for name in files}


def _ndcg_task(entry: TgbEntry, info: Info) -> dict[str, Any]:
    rows = {name: list(info["label_rows"][name]) for name in SPLITS}
    ungraded = [rows["test"][1], int(info["measured"]["num_label_rows"])]
    return {
        "name": "ndcg", "type": TASK_TYPE, "report_split": "test",
        "query": "one per row of labels.parquet graded in the split: score every class for that node at label "
                 "timestamp t; the truth is py-tgb's node_label_dict[t][node]",
        "labels": {"file": LABELS_FILE, "rows": rows, "ungraded_rows": ungraded, "width": int(info["label_dim"]),
                   "declared_num_classes": entry.num_classes, "period": entry.label_period,
                   "width_rule": "py-tgb's: len(node_ids) for trade (every nation), len(rd_dict) for genre, reddit "
                                 "and token (the classes the edge list holds); entry c is the class whose node id "
                                 "is c"},
        "label_timestamps": "a label timestamp L is graded in the split of the first edge (in time order) with "
                            "t > L; labels at or after the last edge's time are graded in no split. TGB's examples "
                            "hand L's labels out (get_node_label) in the first edge batch whose last timestamp "
                            "exceeds L, streaming train, val and test in turn without resetting the label pointer",
        "history": "the model's choice; TGB's examples predict L's labels from the edges streamed so far (TGN "
                   "first processes the batch's edges with t below the next label timestamp) and the labels of "
                   "earlier label timestamps (persistent forecast, moving average)",
        "metrics": ["ndcg"], "k": NDCG_K,
        "aggregation": "NDCG@10 of every row, averaged over the rows of each label timestamp (py-tgb's Evaluator "
                       "on one get_node_label batch), then averaged over the split's label timestamps (TGB's "
                       "total_score / num_label_ts, since py-tgb 0.8.0)",
        "tie_rule": "sklearn.metrics.ndcg_score(k=10): tied scores share the average gain of their group",
        "all_zero_rows": "a row whose label is all zero scores 0 and still counts (sklearn)",
        "submission": {"format": "parquet", "rows": "one per (t, node) graded in the split, any order",
                       "columns": [{"name": "t", "type": "int64"}, {"name": "node", "type": "int32"},
                                   {"name": "scores", "type": "list<float64>"}],
                       "scores": f"exactly {int(info['label_dim'])} finite scores, entry c for class c"}}


def describe(entry: TgbEntry, files: Mapping[str, Mapping[str, np.ndarray]], info: Info) -> Description:
    """The family-specific parts of a tgbn dataset's manifest: ``graph``, ``tasks`` and ``record_sets``."""
    edges = files[EDGES_FILE]
    record_sets = [
        parquet_record_set("edges", EDGES_FILE, "The release's edges in time order: py-tgb's node ids, the "
                           "timestamp as an integer, the weight, the CSV row (edge_id) and py-tgb's edge_feat.",
                           edges),
        parquet_record_set("labels", LABELS_FILE, "py-tgb's node labels: one row per (label timestamp, node), "
                           "sorted, with the dense label vector over the classes.", files[LABELS_FILE])]
    graph = {"kind": "temporal-graph", "time": "continuous", "time_unit": entry.time_unit or "second",
             "directed": bool(entry.directed) if entry.directed is not None else True, "symmetric": False,
             "num_nodes": info["num_nodes"], "edges_file": EDGES_FILE, "labels_file": LABELS_FILE,
             "num_classes": int(info["label_dim"]), "node_features": "none",
             "edge_features": f"float64[{edges['edge_feat'].shape[1]}] (edge_feat)", "edge_weight": "weight",
             "pytgb_edge_idxs_start": PYTGB_EDGE_IDXS_START}
    return {"graph": graph, "tasks": [_ndcg_task(entry, info)], "record_sets": record_sets}
