"""A TGB release converted into this project's artifacts and their Croissant manifest.

Files of an imported ``tgbl`` dataset: ``edges.parquet`` (``t`` int64 in the release's unit, ``src``/``dst`` int32
py-tgb ids, ``edge_id`` int64 = the row's position in the release CSV, ``edge_feat`` a fixed-size list of float64,
exactly as parsed), and ``negatives-val.parquet`` / ``negatives-test.parquet`` in the ranking task's layout (one
query per edge of the split: ``t, src, dst``, ``negatives`` int32 ``[n, q]`` padded with -1, ``count``).

The manifest's recipe names the importer and the release it read (URL, zip name, the zip's sha256, TGB's version);
``stats`` records what was measured and the published statistics it was checked against.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .release import Release, load_pickle
from .tgbl import SPLITS, convert_negatives, measured_stats, parse_edges, split_rows, time_order
from ..manifests import croissant_document, file_object, parquet_record_set
from ..ranking import negatives_file, ranking_submission, write_negatives
from tgbhub.errors import GenerationError
from tgbhub.hashing import DIGEST_ALGORITHM, content_digest

IMPORTER = "tgbhub.tgb-import"
#: the converter's version: a change of what an import writes is a new minor version of every imported dataset
IMPORTER_VERSION = "1.0.0"
EDGES_FILE = "edges.parquet"
PUBLISHED = "2026-11-23"
#: which py-tgb parser reads each dataset's edge list (py-tgb dispatches on the name; we declare it as data)
PARSERS = {**{name: "edgelist-wiki" for name in ("tgbl-wiki", "tgbl-subreddit", "tgbl-uci", "tgbl-enron",
                                                 "tgbl-lastfm")},
           "tgbl-coin": "stablecoin", "tgbl-review": "stablecoin", "tgbl-comment": "reddit-comments",
           "tgbl-flight": "opensky"}
#: the first ``edge_idxs`` py-tgb gives each parser's rows (``edge_id`` stores 0-based CSV positions)
EDGE_IDXS_START = {"edgelist-wiki": 0, "stablecoin": 1, "reddit-comments": 1, "opensky": 1}


def dataset_version(entry: Any) -> str:
    """``<TGB's version>.<importer's minor>.0``: TGB's data version stays visible, our conversion fixes count up."""
    return f"{entry.tgb_version}.{IMPORTER_VERSION.split('.')[1]}.0"


#: TGB family -> the module of this package that converts it (each exposes ``convert``, ``write``, ``describe``)
FAMILY_MODULES = {"tgbl": ".tgbl", "tkgl": ".tkgl", "thgl": ".thgl", "tgbn": ".tgbn"}


def family_module(entry: Any) -> Any:
    """The converter of ``entry``'s family.

    Raises:
        GenerationError: if this tgbhub cannot import that family yet.
    """
    module = FAMILY_MODULES.get(entry.family)
    try:
        return importlib.import_module(module, __package__) if module else None
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}{module}":
            raise
        raise GenerationError(f"importing {entry.family} datasets ({entry.name}) is not implemented in this tgbhub yet; "
                              "upgrade tgbhub") from exc


def convert(entry: Any, release: Release) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, Any]]:
    """The dataset's files (name -> columns) from an opened release, and what was measured on the way (``splits``,
    ``measured``, ``num_nodes``, ``reordered_rows``, ``parser``, ...).

    Raises:
        GenerationError: for a dataset family or parser this tgbhub cannot import yet, or a release that does not
            fit py-tgb's layout (naming the file and the problem).
    """
    if entry.family != "tgbl":
        family_module(entry)  # raises for a family without a converter
        return family_module(entry).convert(entry, release)
    parser = PARSERS.get(entry.name, "unknown")
    edges, reordered = time_order(parse_edges(release, entry.files, parser))
    splits = split_rows(edges["t"], float(entry.split["val"]), float(entry.split["test"]))
    files: dict[str, dict[str, np.ndarray]] = {EDGES_FILE: {
        "t": edges["t"], "src": edges["src"].astype(np.int32), "dst": edges["dst"].astype(np.int32),
        "edge_id": edges["edge_id"], "edge_feat": edges["edge_feat"]}}
    for split in SPLITS[1:]:
        member = entry.files[f"{split}_ns"]
        table = load_pickle(release.read(member), member)
        lo, hi = splits[split]
        files[negatives_file(split)] = convert_negatives(table, edges["t"][lo:hi], edges["src"][lo:hi],
                                                         edges["dst"][lo:hi], member)
    info = {"splits": splits, "reordered_rows": reordered, "parser": parser,
            "measured": measured_stats(edges, splits),
            "num_nodes": int(max(edges["src"].max(), edges["dst"].max())) + 1 if len(edges["t"]) else 0}
    return files, info


def write(files: Mapping[str, Mapping[str, np.ndarray]], folder: Path, entry: Any = None) -> dict[str, Path]:
    """Write the files into ``folder`` (zstd Parquet, no timestamps: byte-stable); ``entry``'s family module writes
    the files of a family other than tgbl."""
    if entry is not None and entry.family != "tgbl":
        return family_module(entry).write(files, folder)
    folder.mkdir(parents=True, exist_ok=True)
    edges = files[EDGES_FILE]
    features = np.ascontiguousarray(edges["edge_feat"], dtype=np.float64)
    columns = [pa.array(edges["t"]), pa.array(edges["src"]), pa.array(edges["dst"]), pa.array(edges["edge_id"]),
               pa.FixedSizeListArray.from_arrays(pa.array(features.reshape(-1)), features.shape[1])]
    table = pa.Table.from_arrays(columns, names=["t", "src", "dst", "edge_id", "edge_feat"])
    pq.write_table(table, folder / EDGES_FILE, compression="zstd", row_group_size=1 << 20, write_statistics=True)
    for name, negatives in files.items():
        if name != EDGES_FILE:
            write_negatives(negatives, folder / name)
    return {name: folder / name for name in files}


def _ranking_task(entry: Any, splits: list[str]) -> dict[str, Any]:
    return {
        "name": "ranking", "type": "one-vs-many-ranking", "report_split": "test",
        "query": "one per edge of the split, in stored order: rank dst among the query's negatives as destinations "
                 "of src at t (TGB's one-vs-many link prediction)",
        "history": "every edge before the query's time (train, val and earlier test edges), as TGB's examples use",
        "negatives": {"strategy": f"TGB's published {entry.ns_strategy} negatives (py-tgb {entry.name}), converted: "
                                  f"q={entry.q} in the generation script, seed {entry.ns_seed}, historical share "
                                  f"{entry.hist_ratio}",
                      "padding": "-1 after the first count[i] entries (a ragged release keeps its exact counts)",
                      "files": {split: negatives_file(split) for split in splits}},
        "metrics": ["mrr", "hits@1", "hits@3", "hits@10"], "ks": [1, 3, 10],
        "tie_rule": "average rank: 1 + (#negatives > pos + #negatives >= pos) / 2 (TGB's Evaluator, OGB)",
        "submission": ranking_submission()}


def describe(entry: Any, files: Mapping[str, Mapping[str, np.ndarray]], info: Mapping[str, Any]) -> dict[str, Any]:
    """The family-specific parts of a tgbl dataset's manifest: ``graph``, ``tasks`` and ``record_sets``."""
    edges = files[EDGES_FILE]
    splits = [split for split in SPLITS[1:] if negatives_file(split) in files]
    record_sets = [parquet_record_set("edges", EDGES_FILE, "The release's edges in time order: py-tgb's node ids, "
                                      "the timestamp as an integer, the CSV row (edge_id) and the edge features.",
                                      edges)]
    record_sets += [parquet_record_set(f"negatives-{split}", negatives_file(split), f"TGB's {split} negatives, one "
                                       "row per edge of the split, -1 padded after count.",
                                       files[negatives_file(split)]) for split in splits]
    graph = {"kind": "temporal-graph", "time": "continuous", "time_unit": entry.time_unit or "second",
             "directed": bool(entry.directed) if entry.directed is not None else True, "symmetric": False,
             "num_nodes": info["num_nodes"], "edges_file": EDGES_FILE,
             "node_features": "none", "edge_features": f"float64[{edges['edge_feat'].shape[1]}] (edge_feat)",
             "pytgb_edge_idxs_start": EDGE_IDXS_START.get(info["parser"], 0)}
    return {"graph": graph, "tasks": [_ranking_task(entry, splits)], "record_sets": record_sets}


def manifest_document(entry: Any, files: Mapping[str, Mapping[str, np.ndarray]], info: Mapping[str, Any],
                      folder: Path, zip_name: str, zip_sha256: str, published: Mapping[str, Any]) -> dict[str, Any]:
    """The Croissant manifest of an imported dataset whose files are in ``folder``.

    The parts that depend on the family (``graph``, ``tasks``, ``record_sets``) come from :func:`describe` (tgbl)
    or the family module's ``describe(entry, files, info)``; the rest (recipe, digests, statistics, provenance) is
    the same for every import.
    """
    name = f"tgb/{entry.name}"
    parts = describe(entry, files, info) if entry.family == "tgbl" else family_module(entry).describe(entry, files,
                                                                                                     info)
    stats = {**info["measured"], "reordered_rows": info["reordered_rows"],
             "published": dict(published), "checked_against_published": sorted(published),
             "source": {"url": entry.url, "zip": zip_name, "zip_sha256": zip_sha256, "tgb_version": entry.tgb_version,
                        "py_tgb": "2.3.0", "parser": info["parser"]}}
    description = (f"TGB's {entry.name} (version {entry.tgb_version}), imported from {zip_name} and converted with "
                   f"py-tgb 2.3.0's conventions: {entry.domain or 'see the TGB paper'}. Split and negatives are TGB's.")
    return croissant_document(
        name=name, version=dataset_version(entry), description=description, license=entry.license or "see TGB",
        published=PUBLISHED, citation=entry.citation,
        distribution=[file_object(file, folder / file) for file in files], record_sets=parts["record_sets"],
        recipe={"generator": IMPORTER, "version": IMPORTER_VERSION,
                "params": {"dataset": entry.name, "tgb_version": entry.tgb_version, "url": entry.url,
                           "zip": zip_name, "zip_sha256": zip_sha256}, "seed": 0},
        digest=[{"file": file, "algorithm": DIGEST_ALGORITHM, "columns": list(columns),
                 "value": content_digest(columns)} for file, columns in files.items()],
        graph=parts["graph"], splits={"unit": "row", "boundaries": {k: list(v) for k, v in info["splits"].items()}},
        tasks=parts["tasks"], stats=stats,
        discrepancies=[{"field": "checksum", "paper": "none: py-tgb publishes no checksum of its zips",
                        "ours": f"the sha256 of the zip this import read ({zip_sha256})",
                        "evidence": "spec tgb.md §1.1: no md5/sha/size in tgb/utils/info.py"}])
