"""The ranking task every temporal graph carries: its task block, its negatives recipe and its artifacts.

Shared by every family of temporal graphs (T-GRAB, and the datasets derived from them): one query per undirected
edge (``src < dst``), TGB 1.x's hist-rnd negatives drawn from counter-based streams (:mod:`generators.negatives`),
one Parquet file per evaluated split.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from tgbhub.errors import GenerationError
from tgbhub.memory import give_back_memory

from . import list_slices
from .edges import TemporalEdges
from .negatives import History, hist_rnd, stream_key
from .spill import Column, MappedReads

#: negatives per query of the ranking task: 20 (TGB's THG q), enough for Hits@10 to mean something on 100 nodes
RANKING_Q = 20
RANKING_HIST_RATIO = 0.5
#: threads for independent per-file work (negatives of two splits, Parquet files): the numba kernels and pyarrow's
#: writer release the GIL, and every file depends only on its own inputs, so the bytes do not depend on the count
WORKERS = 2


def negatives_params(name: str, version: str, eval_splits: list[str]) -> dict[str, Any]:
    """The recipe block that rebuilds the ranking task's negatives (``params["negatives"]``)."""
    return {"strategy": "hist-rnd", "q": RANKING_Q, "hist_ratio": RANKING_HIST_RATIO, "splits": eval_splits,
            "namespace": f"{name}@{version}", "queries": "src<dst", "history": "before-split"}


def negatives_file(split: str) -> str:
    """The artifact holding the negatives of ``split``."""
    return f"negatives-{split}.parquet"


def ranking_task(negatives: dict[str, Any]) -> dict[str, Any]:
    """TGB-style one-vs-many ranking over the same snapshots: every undirected edge is one query."""
    return {
        "name": "ranking", "type": "one-vs-many-ranking", "report_split": "test",
        "query": "one per undirected edge of a snapshot of the split, the stored row (t, src, dst) with src < dst: "
                 "rank dst among the query's negatives as destinations of src at t",
        "history": "true snapshots before t, including earlier snapshots of the evaluated split",
        "negatives": {
            "strategy": "hist-rnd (TGB 1.x), topped up from the other pool when one is short", "q": negatives["q"],
            "hist_ratio": negatives["hist_ratio"],
            "historical_pool": "destinations of src in every snapshot before the split starts, minus conflicts",
            "random_pool": "all nodes minus conflicts, src itself and the historical pool",
            "conflicts": "every destination of src at t (never drawn as a negative)",
            "padding": "-1 after the first count[i] entries of a row when both pools are short",
            "seed": "query i: splitmix64(key + splitmix64(i)), key = first 8 bytes (little-endian) of "
                    "sha256('tgbhub-negatives-v1|<name>@<version>|<split>|<recipe seed>')",
            "files": {split: negatives_file(split) for split in negatives["splits"]}},
        "metrics": ["mrr", "hits@1", "hits@3", "hits@10"], "ks": [1, 3, 10],
        "tie_rule": "average rank: 1 + (#negatives > pos + #negatives >= pos) / 2 (TGB, OGB)",
        "submission": ranking_submission()}



def ranking_submission() -> dict[str, Any]:
    """The submission schema of every one-vs-many ranking task (a fresh dict: manifests are written from it)."""
    return {"format": "parquet", "rows": "one per query of the split's negatives file, any order",
            "columns": [{"name": "query", "type": "int64"}, {"name": "pos_score", "type": "float32"},
                        {"name": "neg_scores", "type": "list<float32>"}],
            "neg_scores": "exactly count[query] scores, in the order of the query's negatives"}


def _negatives_schema(q: int, t_type: pa.DataType | None = None) -> pa.Schema:
    """The Arrow schema of a negatives file with ``q`` negatives per query; ``t`` is ``t_type`` (default int64)."""
    return pa.schema([("t", pa.int64() if t_type is None else t_type), ("src", pa.int32()), ("dst", pa.int32()),
                      ("negatives", pa.list_(pa.int32(), q)), ("count", pa.int32())])


def make_negatives(edges: TemporalEdges, splits: Mapping[str, tuple[int, int]], spec: Mapping[str, Any],
                   seed: int) -> dict[str, dict[str, np.ndarray]]:
    """The ranking task's negatives, one artifact per split in ``spec["splits"]`` (``params["negatives"]``).

    Queries are the rows with ``src < dst`` (one per undirected edge); the historical pool of a split is every
    edge before it starts. Returns file name -> columns ``t, src, dst, negatives [n, q], count``.

    Raises:
        GenerationError: if the spec names a strategy or query rule this generator does not implement.
    """
    if spec.get("strategy") != "hist-rnd" or spec.get("queries") != "src<dst" or spec.get("history") != "before-split":
        raise GenerationError(f"negatives spec {dict(spec)!r} is not one this tgbhub builds (hist-rnd, src<dst, "
                              "before-split); upgrade tgbhub")
    bounds = {split: tuple(int(i) for i in np.searchsorted(edges.t, splits[split])) for split in spec["splits"]}
    # Histories grow with the split's start: visit the splits by start so each row is added to the pool once.
    seen = History(edges.num_nodes)
    done = 0
    histories = {}
    for split in sorted(bounds, key=lambda name: bounds[name][0]):
        first = bounds[split][0]
        seen.extend(edges.src[done:first], edges.dst[done:first])
        done = first
        histories[split] = seen.csr()

    def one(split: str) -> dict[str, np.ndarray]:
        first, last = bounds[split]
        t, src, dst = edges.t[first:last], edges.src[first:last], edges.dst[first:last]
        queries = np.flatnonzero(src < dst)
        negatives, count = hist_rnd(t, src, dst, histories[split], edges.num_nodes, int(spec["q"]),
                                    float(spec["hist_ratio"]), stream_key(str(spec["namespace"]), split, seed),
                                    queries=queries)
        return {"t": t[queries], "src": src[queries], "dst": dst[queries], "negatives": negatives, "count": count}

    # Each split's draws depend only on its own stream and pools, so the splits can run side by side: the
    # kernel releases the GIL. Files keep the order of spec["splits"].
    with ThreadPoolExecutor(max_workers=min(len(bounds), WORKERS) or 1) as pool:
        made = {split: pool.submit(one, split) for split in spec["splits"]}
        return {negatives_file(split): future.result() for split, future in made.items()}


#: rows per row group of a negatives file (its bytes depend on it)
NEGATIVES_ROW_GROUP = 1 << 20


def write_negatives(columns: Mapping[str, Column], path: str | os.PathLike[str]) -> None:
    """Write negatives as Parquet: key columns, ``negatives`` as a fixed-size list, ``count``; byte-stable.

    Written a row group (:data:`NEGATIVES_ROW_GROUP` rows) at a time, each group's rows read from the columns as it
    is written (a column may be an array on disk read a slice at a time), and a large group's ``negatives`` handed
    to Arrow in slices (:mod:`generators.list_slices`): the same bytes as one ``write_table`` of the whole table.
    A group whose slices the written pages do not confirm is written again whole.
    """
    width = int(columns["negatives"].shape[1])
    ends = _write_negative_groups(columns, path, whole=frozenset())
    unconfirmed = list_slices.unfaithful_groups(path, NEGATIVES_COLUMN, width, ends)
    if unconfirmed:  # the other groups' slices were confirmed, and planning them again places them the same
        ends = _write_negative_groups(columns, path, whole=frozenset(unconfirmed))
        if list_slices.unfaithful_groups(path, NEGATIVES_COLUMN, width, ends):
            _write_negative_groups(columns, path, whole=frozenset(range(len(ends))))


#: the position of ``negatives`` in a negatives file's schema
NEGATIVES_COLUMN = 3


def _write_negative_groups(columns: Mapping[str, Column], path: str | os.PathLike[str],
                           whole: frozenset[int]) -> list[np.ndarray]:
    """Write the negatives file, the row groups numbered in ``whole`` with their list column whole and the others
    in planned slices; returns each group's slice ends."""
    rows = len(columns["t"])
    # t is int64 snapshots for base datasets, float64 for derived ones whose test events were moved in time
    schema = _negatives_schema(int(columns["negatives"].shape[1]), pa.from_numpy_dtype(columns["t"].dtype))
    ends = []
    with pq.ParquetWriter(path, schema, compression="zstd", write_statistics=True) as writer:
        for group, start in enumerate(range(0, max(rows, 1), NEGATIVES_ROW_GROUP)):  # an empty file: one empty group
            stop = start + NEGATIVES_ROW_GROUP
            # spilled rows are handed to Arrow as mappings whose pages are dropped behind it, not read into memory
            with MappedReads() as reads:
                matrix = np.ascontiguousarray(reads.rows(columns["negatives"], start, stop), dtype=np.int32)
                ends.append(np.array([len(matrix)]) if group in whole else list_slices.plan(matrix))
                lists = list_slices.sliced(matrix, ends[-1])
                arrays = [pa.array(reads.rows(columns[name], start, stop)) for name in ("t", "src", "dst", "count")]
                table = pa.Table.from_arrays([*arrays[:3], lists, arrays[3]], schema=schema)
                writer.write_table(table, row_group_size=NEGATIVES_ROW_GROUP)
                del matrix, lists, arrays, table
            give_back_memory()  # else each row group's transient blocks stay resident beside the next one's
    return ends

