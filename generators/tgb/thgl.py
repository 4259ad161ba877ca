"""TGB 2.0 temporal heterogeneous graphs (``thgl-*``): a release zip converted to this project's files, as py-tgb
2.3.0 sees it.

What py-tgb's loader does (docs/tgb.md; checked against py-tgb itself by
``tests/test_import_tkgl_thgl.py``), and what the conversion therefore does:

- parsers: ``csv_to_thg_data`` (software, github, myket): ``timestamp, head, tail, relation_type``, integers;
  ``csv_to_forum_data`` (forum) adds ``num_words, score``, which become the 2-d edge feature
  ``[num_words / 10000, score / 10000]`` (float64). Node ids are numbered by first appearance (row by row, the head
  before the tail), relation ids are kept. No inverse edges; ``edge_idxs`` are 1..E in CSV order.
- node types: ``<name>_nodetype.csv`` (``node_id, type``, raw ids) sets ``node_type[id] = type`` over an array of
  zeros as long as the number of nodes (a node the file does not list keeps type 0, counted in
  ``stats.nodes_without_type``; a listed id the edges lack makes py-tgb raise, and the import too).
- split: quantiles of the timestamps at 0.70/0.85, ties to the earlier split.
- negatives (``node-type-filtered``): keyed ``(t, src, rel)``, ``q`` nodes of the destination's type outside the
  conflict set; py-tgb returns the pickled array as it is. Tail prediction only. Checked against the node-type
  pools and conflict sets of :func:`generators.negatives.node_type_filtered` (counts in ``stats``, see
  :mod:`.tkgl`).

What is stored: ``edges.parquet`` (``t`` int64, ``src``/``dst``/``edge_type`` int32, ``edge_id`` int64 = the CSV row,
and for forum ``edge_feat`` float64 ``[E, 2]``), sorted stably by ``t`` (an unsorted release keeps each row's CSV
position in ``edge_id``); ``nodes.parquet`` (``node``, ``type`` int32, one row per node id); and
``negatives-<split>.parquet`` in the ranking layout with ``edge_type`` (see :mod:`.tkgl`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pyarrow as pa

from tgbhub.errors import GenerationError

from .artifacts import Description, Info
from .catalogue import TgbEntry
from .release import Release, columns_at_least, first_appearance, integers, read_csv
from .tgbl import split_rows, time_order
from .tkgl import EDGES_FILE, measured_stats, parser_of, ranking_task, record_sets, split_negatives, write

NODES_FILE = "nodes.parquet"
#: py-tgb's scale of thgl-forum's two edge features (``word_max``, ``score_max`` in ``csv_to_forum_data``)
FORUM_SCALE = 10000

__all__ = ["convert", "describe", "write"]


def parse_edges(release: Release, member: str, parser: str) -> tuple[dict[str, np.ndarray], pa.Array]:
    """``t, src, dst, edge_type, edge_id`` (and forum's ``edge_feat``) in CSV order with py-tgb's ids, and the
    dictionary of raw node ids.

    Raises:
        GenerationError: for a parser this module does not read, or a CSV that does not fit it.
    """
    if parser not in ("csv_to_thg_data", "csv_to_forum_data"):
        raise GenerationError(f"{member}: py-tgb's parser {parser!r} is not a THG parser; upgrade tgbhub")
    forum = parser == "csv_to_forum_data"
    columns = read_csv(release.read(member), member)
    columns_at_least(columns, 6 if forum else 4, member, "timestamp, head, tail, relation_type" +
                     (", num_words, score" if forum else ""))
    head = integers(columns[1], member, "column 1 (head)")
    tail = integers(columns[2], member, "column 2 (tail)")
    src, dst, nodes = first_appearance(pa.array(head), pa.array(tail))
    t = integers(columns[0], member, "column 0 (timestamp)")
    edges = {"t": t, "src": src.astype(np.int32), "dst": dst.astype(np.int32),
             "edge_type": integers(columns[3], member, "column 3 (relation_type)").astype(np.int32),
             "edge_id": np.arange(len(t), dtype=np.int64)}
    if forum:
        words = integers(columns[4], member, "column 4 (num_words)")
        score = integers(columns[5], member, "column 5 (score)")
        edges["edge_feat"] = np.column_stack([words / FORUM_SCALE, score / FORUM_SCALE])
    return edges, nodes


def parse_node_types(release: Release, member: str, nodes: pa.Array) -> tuple[np.ndarray, int]:
    """py-tgb's ``process_node_type``: the type of every node id (int32; 0 where the file lists none) and how many
    nodes the file does not list.

    Raises:
        GenerationError: if the file lists an id the edges lack (py-tgb raises too) or a type that is not an integer.
    """
    columns = read_csv(release.read(member), member)
    columns_at_least(columns, 2, member, "node_id, type")
    listed = integers(columns[0], member, "column 0 (node_id)")
    types = integers(columns[1], member, "column 1 (type)")
    raw = nodes.to_numpy()
    order = np.argsort(raw)
    slot = np.minimum(np.searchsorted(raw[order], listed), len(raw) - 1)
    unknown = raw[order][slot] != listed
    if unknown.any():
        row = int(np.flatnonzero(unknown)[0])
        raise GenerationError(f"{member}: row {row + 1} lists node {listed[row]}, which no edge has; py-tgb raises "
                              "'is not a valid node id' too: the file does not belong to this edge list")
    node_type = np.zeros(len(raw), dtype=np.int32)
    node_type[order[slot]] = types  # a node listed twice keeps its last row, as py-tgb's loop does
    return node_type, int(len(raw) - len(np.unique(order[slot])))


def convert(entry: TgbEntry, release: Release) -> tuple[dict[str, dict[str, np.ndarray]], Info]:
    """The dataset's files (name -> columns) and what was measured (``splits``, ``measured``, ``num_nodes``,
    ``reordered_rows``, ``parser``, ``num_relations``).

    Raises:
        GenerationError: for a dataset whose py-tgb parser this tgbhub does not know, or a release that does not fit
            py-tgb's layout (naming the file and the problem).
    """
    parser = parser_of(entry)
    edges, nodes = parse_edges(release, entry.files["edgelist"], parser)
    edges, reordered = time_order(edges)
    splits = split_rows(edges["t"], float(entry.split["val"]), float(entry.split["test"]))
    num_nodes = int(len(nodes))
    node_type, untyped = parse_node_types(release, entry.files["nodetype"], nodes)
    files = {EDGES_FILE: edges, NODES_FILE: {"node": np.arange(num_nodes, dtype=np.int32), "type": node_type}}
    negatives, checked = split_negatives(entry, release, edges, splits, num_nodes, node_type)
    files.update(negatives)
    measured = measured_stats(edges, splits, np.ones(len(edges["t"]), dtype=bool))
    num_rels = int(len(np.unique(edges["edge_type"])))
    measured.update(num_relations=num_rels, num_node_types=int(len(np.unique(node_type))),
                    nodes_without_type=untyped, **checked)
    if "edge_feat" in edges:
        measured["edge_feat_dim"] = int(edges["edge_feat"].shape[1])
    return files, {"splits": splits, "measured": measured, "num_nodes": num_nodes, "reordered_rows": reordered,
                   "parser": parser, "num_relations": num_rels}


def describe(entry: TgbEntry, files: Mapping[str, Mapping[str, np.ndarray]], info: Info) -> Description:
    """The family-specific parts of a thgl dataset's manifest: ``graph``, ``tasks`` and ``record_sets``."""
    edges = files[EDGES_FILE]
    features = f"float64[{edges['edge_feat'].shape[1]}] (edge_feat)" if "edge_feat" in edges else "constant-1"
    graph = {"kind": "temporal-graph", "time": "continuous", "time_unit": entry.time_unit or "second",
             "directed": True, "symmetric": False, "num_nodes": info["num_nodes"], "edges_file": EDGES_FILE,
             "node_features": "none", "edge_features": features,
             "edge_types": {"column": "edge_type", "num_relations": info["num_relations"]},
             "node_types": {"file": NODES_FILE, "column": "type",
                            "num_node_types": info["measured"]["num_node_types"]},
             "pytgb_edge_idxs": "edge_id + 1"}
    task = ranking_task(entry, files, "one per edge of the split, in stored order: rank dst among the query's "
                        "negatives as the destination of (src, edge_type) at t (tail prediction only, as TGB)",
                        f"TGB's published {entry.ns_strategy} negatives (py-tgb {entry.name}): q nodes of the true "
                        "destination's type, outside the time-aware conflict set")
    return {"graph": graph, "tasks": [task], "record_sets": record_sets(files)}
