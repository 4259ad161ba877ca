"""T-GRAB artifacts: the byte-stable edge file, the ranking negatives, and the Croissant manifest of both."""

from __future__ import annotations

import os
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from tgbhub.errors import GenerationError
from tgbhub.hashing import DIGEST_ALGORITHM, content_digest
from tgbhub.manifest import Recipe, plain

from ..edges import TemporalEdges
from ..manifests import croissant_document, file_object, parquet_record_set
from ..ranking import WORKERS, make_negatives, write_negatives
from .catalogue import GENERATORS, Entry, responsible_ai

EDGES_FILE = "edges.parquet"
PUBLISHED = "2026-11-21"
_EDGE_SCHEMA = pa.schema([("t", pa.int64()), ("src", pa.int32()), ("dst", pa.int32())])


def generate(recipe: Recipe | Mapping[str, Any]) -> TemporalEdges:
    """Run the generator a recipe names with the recipe's parameters and seed.

    Raises:
        GenerationError: if the generator is unknown or its version differs from the recipe's.
    """
    name, version, params, seed = ((recipe.generator, recipe.version, recipe.params, recipe.seed)
                                   if isinstance(recipe, Recipe) else
                                   (recipe["generator"], recipe["version"], recipe["params"], recipe["seed"]))
    spec = GENERATORS.get(name)
    if spec is None:
        raise GenerationError(f"recipe names generator {name!r}, which this tgbhub does not have "
                              f"(known: {', '.join(sorted(GENERATORS))}); upgrade tgbhub")
    if spec.version != version:
        raise GenerationError(f"recipe needs {name} version {version}, this tgbhub has {spec.version}; install the "
                              "tgbhub release that matches the dataset version, or fetch it from the hub")
    return spec.generate(plain(params), int(seed))


def write_edges(edges: TemporalEdges, path: str | os.PathLike[str]) -> None:
    """Write the edge stream as Parquet: zstd, ~1M-row groups, fixed schema, no timestamps (byte-stable)."""
    table = pa.Table.from_arrays([pa.array(col) for col in edges.columns().values()], schema=_EDGE_SCHEMA)
    pq.write_table(table, path, compression="zstd", row_group_size=1 << 20, write_statistics=True)


def write_all(entry_params: Mapping[str, Any], generator: str, seed: int, edges: TemporalEdges,
              folder: Path) -> dict[str, dict[str, np.ndarray]]:
    """Write every artifact of one dataset (edges, then negatives if the recipe asks) into ``folder``.

    Returns file name -> columns in memory, in the order the manifest lists the files.
    """
    files: dict[str, dict[str, np.ndarray]] = {EDGES_FILE: edges.columns()}
    spec = entry_params.get("negatives")
    # Every file depends only on its own columns, so the edge file is written while the negatives are drawn and
    # the negative files side by side: pyarrow's writer and the numba kernels release the GIL, and the bytes of
    # each file are what one thread alone would write.
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        writes = [pool.submit(write_edges, edges, folder / EDGES_FILE)]
        if spec:
            splits = GENERATORS[generator].splits(dict(entry_params))
            for name, columns in make_negatives(edges, splits, spec, seed).items():
                writes.append(pool.submit(write_negatives, columns, folder / name))
                files[name] = columns
        for write in writes:
            write.result()  # re-raises a writer's error here
    return files


def _split_stats(edges: TemporalEdges, splits: Mapping[str, tuple[int, int]]) -> dict[str, dict[str, int]]:
    present = np.zeros(edges.num_snapshots, dtype=bool)
    present[edges.t] = True
    stats = {}
    for name, (lo, hi) in splits.items():
        first, last = np.searchsorted(edges.t, [lo, hi])
        stats[name] = {"snapshots": hi - lo, "rows": int(last - first),
                       "empty_snapshots": int(hi - lo - present[lo:hi].sum())}
    return stats


def statistics(entry: Entry, edges: TemporalEdges, splits: Mapping[str, tuple[int, int]]) -> dict[str, Any]:
    """Counts a user (and the paper-table tests) check against; both the stored and the original code's rows."""
    per_split = _split_stats(edges, splits)
    sentinel_splits = list(splits) if entry.sentinel_splits is None else list(entry.sentinel_splits)
    sentinels = sum(per_split[name]["empty_snapshots"] for name in sentinel_splits if name in per_split)
    rows = int(len(edges.t))
    return {
        "num_nodes": edges.num_nodes, "num_snapshots": edges.num_snapshots, "num_rows": rows,
        "num_undirected_edges": rows // 2,
        "num_empty_snapshots": int(sum(s["empty_snapshots"] for s in per_split.values())),
        "num_active_nodes": int(np.union1d(edges.src, edges.dst).size),
        "rows_original_code": rows + 2 * sentinels,
        "rows_original_code_note": "the original code stored two (0,0) sentinel rows per empty snapshot in "
                                   f"{', '.join(sentinel_splits)}; we store empty snapshots as empty",
        "splits": per_split,
        "paper": entry.paper,
    }


def manifest_document(entry: Entry, edges: TemporalEdges, folder: Path,
                      files: Mapping[str, Mapping[str, np.ndarray]] | None = None) -> dict[str, Any]:
    """The Croissant 1.1 JSON-LD manifest of one built dataset version (``folder`` holds its files).

    ``files`` maps every artifact to its columns (default: the edge file only).
    """
    spec = GENERATORS[entry.generator]
    splits = spec.splits(entry.params)
    files = files or {EDGES_FILE: edges.columns()}
    record_sets = [parquet_record_set("edges", EDGES_FILE, "One row per stored direction of an undirected edge, "
                                      "sorted by (t, src, dst).", files[EDGES_FILE])]
    for name, columns in files.items():
        if name != EDGES_FILE:
            record_sets.append(parquet_record_set(name.removesuffix(".parquet"), name, "Ranking queries (t, src, dst) "
                                                  "and their pre-generated negatives, -1 padded after count.", columns))
    return croissant_document(
        name=entry.name, version=entry.version, description=entry.description, license=entry.license,
        published=PUBLISHED, citation=entry.citation, responsible_ai=responsible_ai(entry),
        distribution=[file_object(name, folder / name) for name in files], record_sets=record_sets,
        recipe={"generator": spec.name, "version": spec.version, "params": entry.params, "seed": entry.seed},
        digest=[{"file": name, "algorithm": DIGEST_ALGORITHM, "columns": list(columns),
                 "value": content_digest(columns)} for name, columns in files.items()],
        graph={"kind": "temporal-graph", "time": "discrete", "time_unit": "snapshot", "directed": False,
               "symmetric": True, "num_nodes": edges.num_nodes, "num_snapshots": edges.num_snapshots,
               "edges_file": EDGES_FILE, "node_features": "one-hot", "edge_features": "constant-1"},
        splits={"unit": "snapshot", "boundaries": {k: list(v) for k, v in splits.items()}},
        tasks=entry.tasks, stats=statistics(entry, edges, splits), discrepancies=entry.known_discrepancies)


def build_folder(entry: Entry, folder: Path) -> tuple[TemporalEdges, dict[str, Any]]:
    """Generate one dataset into ``folder`` and return its edges and manifest document.

    Raises:
        GenerationError: if the generator is unknown.
    """
    recipe = {"generator": entry.generator, "version": GENERATORS[entry.generator].version,
              "params": entry.params, "seed": entry.seed}
    edges = generate(recipe)
    folder.mkdir(parents=True, exist_ok=True)
    files = write_all(entry.params, entry.generator, entry.seed, edges, folder)
    return edges, manifest_document(entry, edges, folder, files)
