"""TGB 2.0 temporal knowledge graphs (``tkgl-*``): a release zip converted to this project's files, as py-tgb 2.3.0
sees it; also the multi-relational helpers the THG converter (:mod:`.thgl`) shares.

What py-tgb's loader does to the files (docs/tgb.md; checked against py-tgb itself by
``tests/test_import_tkgl_thgl.py`` on files in TGB's exact formats, whose writers ``tests/tgb_formats.py`` spell
every step out), and what the conversion therefore does:

- parsers (py-tgb dispatches on the name; :data:`PARSERS` declares it as data): ``csv_to_wikidata``
  (tkgl-smallpedia, tkgl-wikidata) reads entities *and* relations as strings (``Q…``, ``P…``) and numbers both in
  order of first appearance; ``csv_to_tkg_data`` (tkgl-polecat, -icews, -yago) reads integers, numbers the entities
  the same way and keeps the relation ids. Columns by position: timestamp, head, tail, relation type; one header
  line, skipped. Entities are numbered row by row, the head before the tail.
- inverse edges: py-tgb appends ``(tail, head, t, rel + R)`` for every edge, ``R`` the number of distinct relation
  ids, after *all* originals. Its ``full_data`` is [originals in CSV order] + [inverses in CSV order], so it is not
  time-sorted, and every val/test query exists in both directions.
- split: ``np.quantile`` of the *doubled* timestamps at 0.70/0.85 (tkgl-yago 0.80/0.90), ties to the earlier split.
- static edges (smallpedia, wikidata; ``head, tail, relation_type``): entities keep their temporal ids and new ones
  continue them; a relation of the temporal edges keeps its id, a new one gets ``2R, 2R + 1, …`` by first
  appearance. Neither split nor evaluated.
- negatives, keyed ``(t, src, rel)`` and covering the inverse queries: ``time-filtered`` (smallpedia, polecat, icews,
  yago) stores the *conflict set* (every destination true at ``(t, src, rel)`` in the split, the true one included)
  and py-tgb evaluates against ``np.delete(arange(min_dst, max_dst + 1), conflict)``, i.e. every node except the
  set (``min_dst`` is 0: node 0 is the first row's head, a destination of its inverse); ``dst-time-filtered``
  (wikidata) stores ``q = 1000`` negatives, which py-tgb returns as they are.

What is stored (the storage decisions):

- ``edges.parquet``: originals *and* inverses, sorted stably by ``t`` (at equal ``t`` py-tgb's order: originals
  first, each part in CSV order), columns ``t`` int64, ``src``/``dst`` int32, ``edge_type`` int32 (``r + R`` on
  inverse rows), ``edge_id`` int64 = the row's position in py-tgb's ``full_data`` (original ``i`` is ``i``, its
  inverse ``E + i``; ``np.argsort(edge_id)`` restores py-tgb's arrays exactly; py-tgb's own ``edge_idxs`` are
  ``edge_id + 1`` on originals, ``edge_id + 2`` on inverses) and ``inverse`` int8 (1 on inverse rows). Why
  time-sorted: this project's data layer reads splits as row ranges of time-sorted rows, and a model that streams
  py-tgb's order sees every test fact (as an original) before the train inverses. The splits are row ranges of the
  sorted rows; they hold exactly the rows of py-tgb's masks, which depend on ``t`` only.
- ``static-edges.parquet``: ``head``, ``tail``, ``edge_type`` int32 with py-tgb's numbering.
- time-filtered: the filter sets as CSR, in two files per split because the columns of one Parquet file share one
  length: ``filters-<split>.parquet``, one row per query = per row of the split in stored order (``t, src, dst,
  edge_type`` and ``filter_count`` int32), and ``filter-nodes-<split>.parquet`` (``filter_indices`` int32: the sets,
  each sorted and without repeats, concatenated in query order). ``filter_offsets = [0, cumsum(filter_count)]``.
  Query ``i``'s negatives are ``range(num_nodes)`` minus its set: py-tgb's list, never materialised.
- dst-time-filtered: the ranking layout (:mod:`generators.ranking`) with ``edge_type``: one query per row of the
  split (``t, src, dst, edge_type, negatives`` int32 ``[n, q]`` padded with -1, ``count``), exactly the pickled
  arrays; upstream's fallback can draw the true destination as a negative: kept, as py-tgb grades it,
  and counted in ``stats.negatives_holding_dst``.

What is checked (the samplers of :mod:`generators.negatives` define the rules; TGB's pickles stay what is stored and
graded, for py-tgb parity; a difference is reported with a :class:`~tgbhub.errors.SourceWarning` and counted in
``stats``, per split):

- time-filtered: the pickled conflict sets against :func:`generators.negatives.time_filtered` over the split's rows
  (every destination true at ``(t, src, edge_type)``, inverse rows included): ``filter_sets_checked`` and
  ``filter_sets_differing`` (distinct keys), ``filter_sets_lacking_dst`` (queries whose set lacks their own
  destination: py-tgb ranks it against itself, half a rank lower, which the time-filtered evaluator does not);
- 1-vs-q (dst-time-filtered here, node-type-filtered in :mod:`.thgl`): every negative against the query's pool
  (:data:`POOLS`: the relation's objects anywhere in the data; the true destination's node type) and its conflict
  set: ``negatives_outside_pool``, ``negatives_in_conflict_set``, ``negatives_holding_dst`` (queries) and
  ``short_pool_queries`` (pool minus conflict set shorter than the query's negatives: TGB's fallback).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
import pyarrow as pa

from tgbhub.errors import GenerationError, SourceWarning

from ..manifests import parquet_record_set
from ..negatives import Pools, audit_pooled, relation_pools, time_filtered, type_pools
from ..ranking import negatives_file, ranking_submission
from .artifacts import Description, Info
from .catalogue import TgbEntry
from .negpickle import Bounds, too_large
from .release import (
    ProgressFactory,
    Release,
    columns_at_least,
    first_appearance,
    integers,
    load_pickle,
    numbered,
    read_csv,
    silent,
)
from .tgbl import SPLITS, split_rows, stage, time_order, write_parquet

EDGES_FILE = "edges.parquet"
STATIC_FILE = "static-edges.parquet"
#: the py-tgb parser of each multi-relational dataset's edge list (``generate_processed_files`` dispatches on the name)
PARSERS = {"tkgl-smallpedia": "csv_to_wikidata", "tkgl-wikidata": "csv_to_wikidata",
           "tkgl-polecat": "csv_to_tkg_data", "tkgl-icews": "csv_to_tkg_data", "tkgl-yago": "csv_to_tkg_data",
           "thgl-software": "csv_to_thg_data", "thgl-github": "csv_to_thg_data", "thgl-myket": "csv_to_thg_data",
           "thgl-forum": "csv_to_forum_data"}
TIE_RULE = "average rank: 1 + (#negatives > pos + #negatives >= pos) / 2 (TGB's Evaluator, OGB)"
METRICS = ["mrr", "hits@1", "hits@3", "hits@10"]


def filters_file(split: str) -> str:
    """The per-query file of a time-filtered split (keys and ``filter_count``)."""
    return f"filters-{split}.parquet"


def filter_nodes_file(split: str) -> str:
    """The file holding a time-filtered split's concatenated filter sets (``filter_indices``)."""
    return f"filter-nodes-{split}.parquet"


# --- reading ---------------------------------------------------------------------------------------------------------

class Quadruples(TypedDict):
    """A TKG edge list as :func:`parse_quadruples` reads it: the columns (int64, CSV order, py-tgb's ids) and the
    numbering's dictionaries (the raw value of every node id; of every relation id, or None where py-tgb keeps the
    relation ids)."""

    t: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    edge_type: np.ndarray
    nodes: pa.Array
    relations: pa.Array | None


def parse_quadruples(release: Release, member: str, parser: str) -> Quadruples:
    """``t, src, dst, edge_type`` (int64, CSV order, py-tgb's ids) of a TKG edge list, with the numbering's
    dictionaries (``nodes``, ``relations``; ``relations`` is None where py-tgb keeps the relation ids).

    Raises:
        GenerationError: for a parser this module does not read, or a CSV that does not fit it.
    """
    if parser not in ("csv_to_wikidata", "csv_to_tkg_data"):
        raise GenerationError(f"{member}: py-tgb's parser {parser!r} is not a TKG parser; upgrade tgbhub")
    wikidata = parser == "csv_to_wikidata"
    columns = read_csv(release.read(member), member, strings=(1, 2, 3) if wikidata else ())
    columns_at_least(columns, 4, member, "timestamp, head, tail, relation_type")
    if not wikidata:
        for k, what in ((1, "column 1 (head)"), (2, "column 2 (tail)")):
            integers(columns[k], member, what)
    src, dst, nodes = first_appearance(columns[1], columns[2])
    if wikidata:
        edge_type, relations = numbered(columns[3])
    else:
        edge_type, relations = integers(columns[3], member, "column 3 (relation_type)"), None
    return {"t": integers(columns[0], member, "column 0 (timestamp)"), "src": src, "dst": dst,
            "edge_type": edge_type, "nodes": nodes, "relations": relations}


def with_inverses(quads: Quadruples) -> tuple[dict[str, np.ndarray], int]:
    """py-tgb's ``full_data`` order (originals, then ``(dst, src, t, rel + R)``), ``edge_id`` its positions, then
    sorted stably by ``t`` (see the module docstring); also returns ``R``."""
    num_rels = int(len(np.unique(quads["edge_type"])))
    e = len(quads["t"])
    full = {"t": np.concatenate([quads["t"], quads["t"]]),
            "src": np.concatenate([quads["src"], quads["dst"]]).astype(np.int32),
            "dst": np.concatenate([quads["dst"], quads["src"]]).astype(np.int32),
            "edge_type": np.concatenate([quads["edge_type"], quads["edge_type"] + num_rels]).astype(np.int32),
            "edge_id": np.arange(2 * e, dtype=np.int64),
            "inverse": np.repeat(np.array([0, 1], dtype=np.int8), e)}
    return time_order(full)[0], num_rels


def parse_static(release: Release, member: str, nodes: pa.Array, relations: pa.Array
                 ) -> tuple[dict[str, np.ndarray], int]:
    """py-tgb's ``csv_to_staticdata``: ``head, tail, edge_type`` (int32) with the temporal numbering continued (see
    the module docstring); also returns the size of the id space with the static-only entities.

    Raises:
        GenerationError: if the CSV does not have three columns.
    """
    columns = read_csv(release.read(member), member, strings=(0, 1, 2))
    columns_at_least(columns, 3, member, "head, tail, relation_type")
    head, tail, every_node = first_appearance(columns[0], columns[1], known=nodes)
    known = len(relations)
    codes, _ = numbered(columns[2], known=relations)
    edge_type = np.where(codes < known, codes, codes + known)  # new relations: 2R, 2R + 1, ...
    return {"head": head.astype(np.int32), "tail": tail.astype(np.int32),
            "edge_type": edge_type.astype(np.int32)}, int(len(every_node))


# --- negatives -------------------------------------------------------------------------------------------------------

def _lookup(table: Mapping[Any, Any], t: np.ndarray, src: np.ndarray, rel: np.ndarray, num_nodes: int,
            member: str) -> tuple[np.ndarray, list[np.ndarray]]:
    """The distinct ``(t, src, rel)`` keys of the queries: each query's key index and each key's array of node ids.

    Raises:
        GenerationError: if a key is missing (py-tgb's ``query_batch`` raises too) or holds something other than
            node ids in ``[0, num_nodes)``.
    """
    keys, index = np.unique(np.column_stack([t, src, rel]).astype(np.int64), axis=0, return_inverse=True)
    found = []
    for time, s, r in keys.tolist():
        values = table.get((time, s, r))
        if values is None:
            raise GenerationError(f"{member} has no entry for the query (t={time}, src={s}, edge_type={r}); py-tgb's "
                                  "query_batch would raise too: the pickle does not belong to this edge list")
        array = np.asarray(values)
        if array.ndim != 1 or (len(array) and (not np.all(array == np.floor(array)) or array.min() < 0
                                               or array.max() >= num_nodes)):
            raise GenerationError(f"{member}: the entry of (t={time}, src={s}, edge_type={r}) is not a list of node "
                                  f"ids in [0, {num_nodes}); the pickle does not belong to this edge list")
        found.append(array.astype(np.int64))
    return index.reshape(-1), found


def ranking_negatives(table: Mapping[Any, Any], rows: Mapping[str, np.ndarray], num_nodes: int,
                      member: str) -> dict[str, np.ndarray]:
    """One query per row: the array stored under its ``(t, src, edge_type)`` key, as ``int32 [n, q]`` padded with
    -1, plus ``count``; keys ``t, src, dst, edge_type`` first.

    Raises:
        GenerationError: as :func:`_lookup`.
    """
    index, found = _lookup(table, rows["t"], rows["src"], rows["edge_type"], num_nodes, member)
    counts = np.array([len(x) for x in found], dtype=np.int32)
    per_key = np.full((len(found), int(counts.max()) if len(found) else 0), -1, dtype=np.int32)
    for k, values in enumerate(found):
        per_key[k, :len(values)] = values
    return {"t": rows["t"], "src": rows["src"], "dst": rows["dst"], "edge_type": rows["edge_type"],
            "negatives": per_key[index], "count": counts[index]}


def filter_sets(table: Mapping[Any, Any], rows: Mapping[str, np.ndarray], num_nodes: int,
                member: str) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], np.ndarray]:
    """The time-aware filter set of every row as CSR: the per-query columns (``t, src, dst, edge_type,
    filter_count``), ``filter_indices`` (each set sorted, without repeats: py-tgb's ``np.delete`` drops a repeated
    index once) and each query's key number (queries of one ``(t, src, edge_type)`` share it and their set).

    The sets are TGB's as pickled, even where they are not the ones the edges determine (:func:`check_filter_sets`
    says so and counts them): py-tgb grades against them.

    Raises:
        GenerationError: as :func:`_lookup`.
    """
    index, found = _lookup(table, rows["t"], rows["src"], rows["edge_type"], num_nodes, member)
    sets = [np.unique(values) for values in found]
    key_counts = np.array([len(x) for x in sets], dtype=np.int64)
    key_offsets = np.concatenate([[0], np.cumsum(key_counts)])
    key_indices = np.concatenate(sets) if sets else np.zeros(0, dtype=np.int64)
    counts = key_counts[index]
    offsets = np.concatenate([[0], np.cumsum(counts)])
    positions = np.repeat(key_offsets[index] - offsets[:-1], counts) + np.arange(offsets[-1])
    queries = {"t": rows["t"], "src": rows["src"], "dst": rows["dst"], "edge_type": rows["edge_type"],
               "filter_count": counts.astype(np.int32)}
    return queries, {"filter_indices": key_indices[positions].astype(np.int32)}, index


def _shown(values: np.ndarray, most: int = 12) -> str:
    """A node set for a message: all of a small one, the first ``most`` and the size of a large one."""
    listed = ", ".join(str(v) for v in values[:most].tolist())
    return f"{{{listed}}}" if len(values) <= most else f"{{{listed}, ...}} ({len(values)} nodes)"


def check_filter_sets(queries: Mapping[str, np.ndarray], nodes: Mapping[str, np.ndarray], keys: np.ndarray,
                      member: str, split: str) -> dict[str, int]:
    """Compare TGB's pickled conflict sets (:func:`filter_sets`) with the ones the split's rows determine
    (:func:`generators.negatives.time_filtered`: every destination true at ``(t, src, edge_type)`` in the split,
    inverse rows included): ``checked`` (keys compared), ``differing`` (keys whose sets differ) and ``lacking_dst``
    (queries whose set lacks their own destination). A difference is reported with a
    :class:`~tgbhub.errors.SourceWarning` naming the first differing key and both sets; TGB's sets stay the ones
    stored (py-tgb grades against them)."""
    offsets, ours = time_filtered(queries["t"], queries["src"], queries["edge_type"], queries["dst"])
    ours_count = np.diff(offsets)
    theirs_count = queries["filter_count"].astype(np.int64)
    theirs = nodes["filter_indices"]
    differs = ours_count != theirs_count
    same = ~differs  # sets of one size line up entry by entry in both CSR arrays
    owner = np.repeat(np.flatnonzero(same), ours_count[same])
    differs[owner[theirs[np.repeat(same, theirs_count)] != ours[np.repeat(same, ours_count)]]] = True
    owner = np.repeat(np.arange(len(theirs_count)), theirs_count)
    holds = np.zeros(len(theirs_count), dtype=bool)
    holds[owner[theirs == queries["dst"][owner]]] = True
    result = {"checked": int(len(np.unique(keys))), "differing": int(len(np.unique(keys[differs]))),
              "lacking_dst": int(np.count_nonzero(~holds))}
    if result["differing"]:
        i = int(np.flatnonzero(differs)[0])
        start = int(theirs_count[:i].sum())
        lacking = (f" {result['lacking_dst']} queries' sets lack their own destination: py-tgb then ranks it against "
                   "itself too (half a rank lower), which tgbhub's time-filtered evaluator does not "
                   "(stats.filter_sets_lacking_dst)." if result["lacking_dst"] else "")
        warnings.warn(
            f"{member}: {result['differing']} of the {result['checked']} time-aware filter sets of the {split} split "
            "differ from the ones its edges determine (every destination true at (t, src, edge_type) in the split, "
            f"inverse edges included); the first is (t={queries['t'][i]}, src={queries['src'][i]}, "
            f"edge_type={queries['edge_type'][i]}): the pickle holds {_shown(theirs[start:start + theirs_count[i]])}, "
            f"the edges give {_shown(ours[offsets[i]:offsets[i + 1]])}.{lacking} TGB's sets are kept and graded, as "
            "py-tgb grades them (stats.filter_sets_differing counts them); if the release should match, download it "
            "again", SourceWarning, stacklevel=4)
    return result


def _node_type_pools(rows: Mapping[str, np.ndarray], edges: Mapping[str, np.ndarray],
                     node_type: np.ndarray | None) -> Pools:
    """TGB's ``node-type-filtered`` pools of the split's ``rows`` (:func:`type_pools`).

    Raises:
        GenerationError: without ``node_type`` (the strategy of THGs, whose releases hold node types).
    """
    if node_type is None:
        raise GenerationError("the node-type-filtered negatives need the dataset's node types, and none were read")
    return type_pools(rows["dst"], node_type)


#: the pool TGB's generator of each 1-vs-q strategy draws a query's negatives from, as this project's samplers
#: (:mod:`generators.negatives`) define it: ``(the split's rows, every row of the dataset, node types) -> Pools``
POOLS: Mapping[str, Callable[[Mapping[str, np.ndarray], Mapping[str, np.ndarray], np.ndarray | None], Pools]] = {
    "dst-time-filtered": lambda rows, edges, node_type: relation_pools(rows["edge_type"], edges["edge_type"],
                                                                       edges["dst"]),
    "node-type-filtered": _node_type_pools,
}


def audit_negatives(negatives: Mapping[str, np.ndarray], pools: Pools, num_nodes: int, member: str,
                    split: str) -> dict[str, int]:
    """Check TGB's pickled 1-vs-q negatives (:func:`ranking_negatives`) against the pools and conflict sets of the
    samplers (:func:`generators.negatives.audit_pooled`): negatives outside the query's pool, negatives in its
    conflict set, queries whose negatives hold their own destination, queries whose pool minus the conflict set is
    shorter than their negatives. Counted over the split's queries (rows); a negative outside the pool or in the
    conflict set is reported with a :class:`~tgbhub.errors.SourceWarning` naming the first such query. The
    negatives stay TGB's (py-tgb grades against them)."""
    found = audit_pooled(negatives["negatives"], negatives["count"], negatives["t"], negatives["src"],
                         negatives["edge_type"], negatives["dst"], pools, num_nodes)
    short = found.pool_left < negatives["count"]
    stats = {"negatives_outside_pool": int(found.outside_pool.sum()),
             "negatives_in_conflict_set": int(found.in_conflict_set.sum()),
             "negatives_holding_dst": int(found.holds_dst.sum()), "short_pool_queries": int(short.sum())}
    wrong = np.flatnonzero((found.outside_pool > 0) | (found.in_conflict_set > 0))
    if len(wrong):
        i = int(wrong[0])
        explained = int(found.outside_pool[short].sum())
        warnings.warn(
            f"{member}: {stats['negatives_outside_pool']} negatives of the {split} split lie outside their query's "
            f"pool and {stats['negatives_in_conflict_set']} in its conflict set (true destinations of (t, src, "
            f"edge_type), {stats['negatives_holding_dst']} queries' own); the first query is (t={negatives['t'][i]}, "
            f"src={negatives['src'][i]}, edge_type={negatives['edge_type'][i]}, dst={negatives['dst'][i]}) with "
            f"{found.outside_pool[i]} outside and {found.in_conflict_set[i]} in the conflict set among "
            f"{_shown(negatives['negatives'][i, :negatives['count'][i]])}. {explained} of the outside ones belong "
            f"to the {stats['short_pool_queries']} queries whose pool is shorter than their negatives (TGB's "
            "fallback draws the rest from all nodes, the conflict set not excluded; docs/tgb.md). The "
            "negatives are kept and graded, as py-tgb grades them (stats.negatives_outside_pool, "
            "stats.negatives_in_conflict_set); if the release should match, download it again",
            SourceWarning, stacklevel=4)
    return stats


def split_negatives(entry: TgbEntry, release: Release, edges: Mapping[str, np.ndarray],
                    splits: Mapping[str, tuple[int, int]], num_nodes: int, node_type: np.ndarray | None = None
                    ) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, dict[str, int]]]:
    """The files of the val and test negatives (filter sets for ``time-filtered``, else the ranking layout) and
    what checking them against the edges found, per statistic and split: ``filter_sets_checked``,
    ``filter_sets_differing`` and ``filter_sets_lacking_dst`` (:func:`check_filter_sets`), or the counts of
    :func:`audit_negatives` for the strategies of :data:`POOLS` (``node_type``: the node types a THG's pools need).

    Raises:
        GenerationError: as :func:`ranking_negatives` and :func:`filter_sets`, or for a 1-vs-q strategy whose pools
            this tgbhub does not know.
    """
    files: dict[str, dict[str, np.ndarray]] = {}
    stats: dict[str, dict[str, int]] = {}
    for split in SPLITS[1:]:
        member = entry.files[f"{split}_ns"]
        lo, hi = splits[split]
        table = _read_bounded(release, member, Bounds(hi - lo, max(num_nodes, 1),
                                                      f"the {num_nodes:,} node ids of the edge list"))
        rows = {name: edges[name][lo:hi] for name in ("t", "src", "dst", "edge_type")}
        if entry.ns_strategy == "time-filtered":
            queries, nodes, keys = filter_sets(table, rows, num_nodes, member)
            files[filters_file(split)], files[filter_nodes_file(split)] = queries, nodes
            found = {f"filter_sets_{k}": v for k, v in check_filter_sets(queries, nodes, keys, member, split).items()}
        else:
            pools = POOLS.get(entry.ns_strategy)  # type: ignore[arg-type]  # None (no strategy) has no pool either
            if pools is None:
                raise GenerationError(f"{entry.name}: TGB's negative strategy {entry.ns_strategy!r} has no pool rule "
                                      f"in this tgbhub (it knows time-filtered, {', '.join(POOLS)}); upgrade tgbhub")
            files[negatives_file(split)] = ranking_negatives(table, rows, num_nodes, member)
            found = audit_negatives(files[negatives_file(split)], pools(rows, edges, node_type), num_nodes, member,
                                    split)
        for stat, value in found.items():
            stats.setdefault(stat, {})[split] = value
    return files, stats


def _read_bounded(release: Release, member: str, bounds: Bounds) -> dict[Any, Any]:
    """The negatives pickle ``member`` unpickled within ``bounds`` (one entry per query of its split, each at most
    every node), its size checked before a byte of it is read.

    Raises:
        GenerationError: if the member is larger than ``bounds`` allow, or as :func:`load_pickle`.
    """
    size = release.size(member)
    if size > bounds.stream_bytes:
        raise too_large(member, size, bounds)
    return load_pickle(release.read(member), member, bounds, size)


# --- conversion ------------------------------------------------------------------------------------------------------

def convert(entry: TgbEntry, release: Release) -> tuple[dict[str, dict[str, np.ndarray]], Info]:
    """The dataset's files (name -> columns) and what was measured (``splits``, ``measured``, ``num_nodes``,
    ``reordered_rows``, ``parser``, ``num_relations``, ``static``).

    Raises:
        GenerationError: for a dataset whose py-tgb parser this tgbhub does not know, or a release that does not fit
            py-tgb's layout (naming the file and the problem).
    """
    parser = parser_of(entry)
    quads = parse_quadruples(release, entry.files["edgelist"], parser)
    edges, num_rels = with_inverses(quads)
    splits = split_rows(edges["t"], float(entry.split["val"]), float(entry.split["test"]))
    num_nodes = int(len(quads["nodes"]))
    files: dict[str, dict[str, np.ndarray]] = {EDGES_FILE: edges}
    static = None
    if "static_edgelist" in entry.files:
        if quads["relations"] is None:
            raise GenerationError(f"{entry.name}: static edges with integer relation ids; py-tgb reads static edges "
                                  "only after its csv_to_wikidata parser (tkgl-smallpedia, tkgl-wikidata)")
        files[STATIC_FILE], static_nodes = parse_static(release, entry.files["static_edgelist"], quads["nodes"],
                                                        quads["relations"])
        static = {"num_edges": int(len(files[STATIC_FILE]["head"])), "num_nodes": static_nodes}
    negatives, checked = split_negatives(entry, release, edges, splits, num_nodes)
    files.update(negatives)
    measured = measured_stats(edges, splits, edges["inverse"] == 0)
    measured["num_relations"] = num_rels
    if static is not None:
        measured["num_static_edges"] = static["num_edges"]
    measured.update(checked)
    reordered = int(np.count_nonzero(edges["edge_id"] != np.arange(len(edges["edge_id"]))))
    return files, {"splits": splits, "measured": measured, "num_nodes": num_nodes, "reordered_rows": reordered,
                   "parser": parser, "num_relations": num_rels, "static": static}


def parser_of(entry: TgbEntry) -> str:
    """py-tgb's parser of ``entry``'s edge list.

    Raises:
        GenerationError: for a dataset this module does not know the parser of.
    """
    parser = PARSERS.get(entry.name)
    if parser is None:
        raise GenerationError(f"importing {entry.name} is not implemented in this tgbhub yet (no known py-tgb parser "
                              f"for it; known: {', '.join(PARSERS)}); upgrade tgbhub")
    return parser


def measured_stats(edges: Mapping[str, np.ndarray], splits: Mapping[str, tuple[int, int]],
                   original: np.ndarray) -> dict[str, Any]:
    """The catalogue's statistics on the converted rows, counted as the catalogue counts them: original edges only
    (``original`` marks them), distinct timestamps, nodes of the temporal edges."""
    t = edges["t"]
    return {"num_nodes": int(len(np.union1d(edges["src"], edges["dst"]))),
            "num_edges": int(np.count_nonzero(original)), "num_timestamps": int(len(np.unique(t))),
            "split_edges": {name: int(np.count_nonzero(original[lo:hi])) for name, (lo, hi) in splits.items()},
            "split_timestamps": {name: int(len(np.unique(t[lo:hi]))) for name, (lo, hi) in splits.items()}}


# --- writing ---------------------------------------------------------------------------------------------------------

def write(files: Mapping[str, Mapping[str, np.ndarray]], folder: Path,
          progress: ProgressFactory | None = None) -> dict[str, Path]:
    """Write every file into ``folder`` with :func:`generators.tgb.tgbl.write_parquet` (byte-stable)."""
    folder.mkdir(parents=True, exist_ok=True)
    with stage(progress or silent, "writing the imported files", len(files), "files") as bar:
        for name, columns in files.items():
            write_parquet(columns, folder / name)
            bar.set_postfix_str(name)
            bar.update(1)
    return {name: folder / name for name in files}


def record_set(name: str, file: str, description: str, columns: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """:func:`generators.manifests.parquet_record_set`, with int8 columns (``inverse``) typed ``cr:Int8``."""
    shown = {column: values if values.dtype != np.int8 else values[:0].astype(np.int32)
             for column, values in columns.items()}
    document = parquet_record_set(name, file, description, shown)
    for field in document["field"]:
        if columns[field["name"]].dtype == np.int8:
            field["dataType"] = "cr:Int8"
    return document


# --- manifest parts --------------------------------------------------------------------------------------------------

def ranking_task(entry: TgbEntry, files: Mapping[str, Mapping[str, np.ndarray]], query: str,
                 strategy: str) -> dict[str, Any]:
    """The ``one-vs-many-ranking`` task of a dataset with TGB's 1-vs-q negatives (tkgl-wikidata, thgl-*)."""
    splits = [split for split in SPLITS[1:] if negatives_file(split) in files]
    q = max(int(files[negatives_file(split)]["negatives"].shape[1]) for split in splits)  # as stored
    return {
        "name": "ranking", "type": "one-vs-many-ranking", "report_split": "test", "query": query,
        "history": "every edge before the query's time (train, val and earlier test edges), as TGB's examples use",
        "negatives": {"strategy": strategy, "q": q, "q_generated": entry.q, "seed": entry.ns_seed,
                      "key": "(t, src, edge_type): queries sharing a key share their negatives",
                      "padding": "-1 after the first count[i] entries (a ragged release keeps its exact counts)",
                      "files": {split: negatives_file(split) for split in splits}},
        "metrics": METRICS, "ks": [1, 3, 10], "tie_rule": TIE_RULE,
        "submission": ranking_submission()}


def filtered_task(num_nodes: int) -> dict[str, Any]:
    """The ``time-filtered-ranking`` task of TGB's 1-vs-all TKG protocol (graded by
    :class:`tgbhub.evaluate.filtered.TimeFilteredEvaluator`)."""
    return {
        "name": "ranking", "type": "time-filtered-ranking", "report_split": "test",
        "query": "one per row of the split (original and inverse edges: both directions), in stored row order; "
                 "query i is filters-<split>.parquet row i: rank dst among every node as the object of "
                 "(src, edge_type, ?, t) (TGB's time-aware filtered link prediction)",
        "history": "every edge before the query's time (train, val and earlier test edges), as TGB's examples use",
        "candidates": {"kind": "all-nodes", "num_candidates": num_nodes,
                       "rule": "node ids 0..num_candidates-1, every node of the temporal edges (py-tgb's "
                               "arange(min_dst, max_dst + 1)); static-only entities are not candidates"},
        "filter": {"rule": "time-aware: every destination true at (t, src, edge_type) in the split, the true one "
                           "included, is not a negative (TGB's conflict set); facts of other times are negatives",
                   "layout": "CSR: query i's set is filter_indices[offsets[i]:offsets[i + 1]], offsets = "
                             "[0, cumsum(filter_count)]; each set sorted, without repeats",
                   "files": {split: {"queries": filters_file(split), "indices": filter_nodes_file(split)}
                             for split in SPLITS[1:]}},
        "metrics": METRICS, "ks": [1, 3, 10], "tie_rule": TIE_RULE,
        "submission": {"format": "parquet", "rows": "one per query of the split, any order",
                       "columns": [{"name": "query", "type": "int64"}, {"name": "scores", "type": "list<float32>"}],
                       "scores": "exactly num_candidates scores, one per node in node-id order, the true "
                                 "destination's included (it is read as the positive score)",
                       "in_process": "evaluator.evaluate_scores(matrix or iterable of (query_ids, matrix), split) "
                                     "grades without a file"}}


def describe(entry: TgbEntry, files: Mapping[str, Mapping[str, np.ndarray]], info: Info) -> Description:
    """The family-specific parts of a tkgl dataset's manifest: ``graph``, ``tasks`` and ``record_sets``."""
    num_rels = info["num_relations"]
    graph: dict[str, Any] = {
        "kind": "temporal-graph", "time": "continuous", "time_unit": entry.time_unit or "step", "directed": True,
        "symmetric": False, "num_nodes": info["num_nodes"], "edges_file": EDGES_FILE, "node_features": "none",
        "edge_features": "constant-1",
        "edge_types": {"column": "edge_type", "num_relations": num_rels, "num_edge_types": 2 * num_rels,
                       "inverse_offset": num_rels},
        "inverse_edges": {"column": "inverse", "rule": "(dst, src, t, edge_type + inverse_offset) for every original "
                          "edge, as py-tgb adds them; rows sorted stably by t, originals first at equal t",
                          "pytgb_order": "sort the rows by edge_id (py-tgb's full_data: originals, then inverses)"},
        "pytgb_edge_idxs": "edge_id + 1 on original rows, edge_id + 2 on inverse rows"}
    if info.get("static") is not None:
        graph["static_edges"] = {"file": STATIC_FILE, **info["static"],  # type: ignore[dict-item]  # not None: above
                                 "relation_ids": "temporal relations keep "
                                 "their id; new ones 2R, 2R + 1, ... by first appearance (py-tgb)"}
    tasks = [filtered_task(info["num_nodes"])] if entry.ns_strategy == "time-filtered" else [ranking_task(
        entry, files, "one per row of the split (original and inverse edges: both directions), in stored order: "
        "rank dst among the query's negatives as the object of (src, edge_type, ?, t)",
        f"TGB's published {entry.ns_strategy} negatives (py-tgb {entry.name}): the relation's destinations anywhere "
        "in the data minus the time-aware conflict set; upstream's fallback for short pools can include the true "
        "destination (TGB 2.0's tkgl sampler; docs/tgb.md), kept as py-tgb grades it (stats.negatives_holding_dst)")]
    return {"graph": graph, "tasks": tasks, "record_sets": record_sets(files)}


#: what each kind of file holds, for its record set's description
_DESCRIPTIONS = {
    EDGES_FILE: "Original and inverse edges in time order (originals first at equal t): py-tgb's node and relation "
                "ids, the timestamp, edge_id = the row's position in py-tgb's full_data, inverse = 1 on inverse rows.",
    STATIC_FILE: "Static (timeless) edges with py-tgb's ids; not split, not evaluated.",
    "nodes.parquet": "The type of every node (py-tgb's node_type), by node id.",
    "negatives": "TGB's {split} negatives, one row per query (row of the split), -1 padded after count.",
    "filters": "One row per {split} query (row of the split): its key and the size of its time-aware filter set.",
    "filter-nodes": "The {split} filter sets, concatenated in query order (CSR indices; offsets from filter_count).",
}


def record_sets(files: Mapping[str, Mapping[str, np.ndarray]]) -> list[dict[str, Any]]:
    """A record set per file, described by what the file holds."""
    out = []
    for file, columns in files.items():
        stem = file.removesuffix(".parquet")
        kind, _, split = stem.rpartition("-")
        text = _DESCRIPTIONS[file] if file in _DESCRIPTIONS else _DESCRIPTIONS[kind].format(split=split)
        out.append(record_set(stem, file, text, columns))
    return out
