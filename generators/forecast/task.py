"""The window-forecasting task of a temporal-graph dataset: its per-window negatives and its task document.

Everything here derives from the dataset's verified edges alone, so the task is versioned on its own
(:mod:`tgbhub.taskdocs`): the dataset's files and version never change when the task is added or revised.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .negatives import group_negatives
from ..negatives import stream_key
from tgbhub.forecasting.windows import Events, events, suggest_horizon, window_index
from tgbhub.hashing import DIGEST_ALGORITHM, content_digest, file_sha256
from tgbhub.manifest import Manifest
from tgbhub.taskdocs import TASK_DOCUMENT_FORMAT, TASKS_FOLDER

TASK_NAME = "window-forecast"
TASK_TYPE = "window-link-forecasting"
#: the task document's version (a new one for any change of the task's definition or artifacts)
TASK_VERSION = "1.0.0"
GENERATOR = "tgbhub.window-negatives"
GENERATOR_VERSION = "1.0.0"
SEED = 0
PUBLISHED = "2026-11-23"
CITATION = ("@article{lampert2025forecasting, title={From Link Prediction to Forecasting: Addressing Challenges in "
            "Batch-based Temporal Graph Learning}, author={Lampert, Moritz and Bl{\\\"o}cker, Christopher and "
            "Scholtes, Ingo}, journal={Transactions on Machine Learning Research}, year={2025}}")
_SCHEMA = pa.schema([("window", pa.int64()), ("neg_src", pa.int32()), ("neg_dst", pa.int32()), ("fill", pa.int8())])


def negatives_file(split: str) -> str:
    return f"window-negatives-{split}.parquet"


def graded_splits(manifest: Manifest) -> list[str]:
    """Every split after the first (train has no history of its own to forecast from)."""
    return list(manifest.splits)[1:]


def dataset_view(manifest: Manifest, columns: Mapping[str, Mapping[str, np.ndarray]]) -> SimpleNamespace:
    """What :func:`tgbhub.forecasting.windows.events` reads, from a dataset's verified edge columns."""
    edges = columns[manifest.graph["edges_file"]]
    return SimpleNamespace(manifest=manifest, t=np.asarray(edges["t"]), src=np.asarray(edges["src"]),
                           dst=np.asarray(edges["dst"]))


def horizon_of(ev: Events) -> dict[str, Any]:
    """The task's horizon block: the paper's choice (spec §2.2) and the window convention."""
    return {**suggest_horizon(ev), "anchor": "split-start",
            "interval": "window i of a split is [t0 + i*h, t0 + (i+1)*h), t0 = the split's first snapshot (or "
                        "floor of its first time); empty windows keep their id and are not graded"}


def build(manifest: Manifest, columns: Mapping[str, Mapping[str, np.ndarray]],
          seed: int = SEED) -> dict[str, dict[str, np.ndarray]]:
    """Every graded split's negatives file: one row per event of the split, in event order: the event's ``window``
    and its negative ``(neg_src, neg_dst)``, ``fill`` 0 if drawn from the historical pool, 1 if a random top-up."""
    ev = events(dataset_view(manifest, columns))
    horizon = horizon_of(ev)["value"]
    codes = ev.pair_codes()
    files: dict[str, dict[str, np.ndarray]] = {}
    for split in graded_splits(manifest):
        index = window_index(ev, split, horizon)
        key = stream_key(f"{manifest.name}@{manifest.version}|{TASK_NAME}", split, seed)
        neg_src, neg_dst, fill = group_negatives(codes, ev.t, np.arange(len(index)), index.lo, index.hi,
                                                 ev.num_nodes, ev.symmetric, key)
        lo, hi = ev.range(split)
        files[negatives_file(split)] = {"window": index.window_of(np.arange(lo, hi)).astype(np.int64),
                                        "neg_src": neg_src, "neg_dst": neg_dst, "fill": fill}
    return files


def write(files: Mapping[str, Mapping[str, np.ndarray]], folder: Path) -> dict[str, Path]:
    """Write the negatives files into ``folder`` (zstd Parquet without timestamps: byte-stable)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, columns in files.items():
        table = pa.Table.from_arrays([pa.array(np.asarray(columns[f.name], dtype=f.type.to_pandas_dtype()))
                                      for f in _SCHEMA], schema=_SCHEMA)
        pq.write_table(table, folder / name, compression="zstd", row_group_size=1 << 20, write_statistics=True)
    return {name: folder / name for name in files}


def task_block(manifest: Manifest, ev: Events) -> dict[str, Any]:
    """The task an evaluator is bound to (merged into the dataset's ``tasks`` when it is loaded)."""
    events_rule = ("one per undirected edge: the stored row with src <= dst (each edge is stored in both directions)"
                   if ev.symmetric else "every stored row")
    return {
        "name": TASK_NAME, "type": TASK_TYPE, "version": TASK_VERSION,
        "document": f"{manifest.name}/{TASKS_FOLDER}/{TASK_NAME}@{TASK_VERSION}", "report_split": "test",
        "events": events_rule, "horizon": horizon_of(ev),
        "history": "every event with t < the window's start (earlier windows of the split included, after they are "
                   "scored); nothing at or after the window's start may inform its scores",
        "negatives": {
            "strategy": "historical, topped up at random; one negative per positive, inheriting its timestamp",
            "ratio": 1,
            "pool": "DyGLib's: distinct pairs seen before the window, minus every pair occurring inside it; drawn "
                    "without replacement (the paper's EdgeBank numbers come from this pool)",
            "random": "uniform over all pairs u != v (unordered for a symmetric graph) that are not positive in the "
                      "window and not drawn already; with replacement only if too few exist",
            "seed": (f"window w: splitmix64(key + splitmix64(w)), key = first 8 bytes (little-endian) of sha256("
                     f"'tgbhub-negatives-v1|<name>@<version>|{TASK_NAME}|<split>|<recipe seed>'); pool in order of "
                     "first occurrence"),
            "files": {split: negatives_file(split) for split in graded_splits(manifest)},
        },
        "metrics": ["auc", "ap"],
        "aggregate": "auc/ap: mean over the non-empty windows of the split (each time period weighs equally, as the "
                     "paper reports); auc_pooled/ap_pooled: over all queries of the split at once",
        "tie_rule": "scikit-learn's: AUC counts a tie as 1/2, AP takes tied scores as one threshold (no "
                    "interpolation)",
        "submission": {
            "format": "parquet",
            "rows": "one per event (query) of the split, any order; query = the event's position in the split",
            "columns": [{"name": "window", "type": "int64"}, {"name": "query", "type": "int64"},
                        {"name": "pos_score", "type": "float32"}, {"name": "neg_score", "type": "float32"}],
            "window": "the window id of the query (the negatives file's `window`), checked",
        },
    }


def _split_stats(files: Mapping[str, Mapping[str, np.ndarray]], ev: Events, split: str,
                 horizon: Any) -> dict[str, Any]:
    index = window_index(ev, split, horizon)
    sizes = index.sizes
    fill = files[negatives_file(split)]["fill"]
    filled = sizes[sizes > 0]
    return {"windows": len(index), "empty_windows": int((sizes == 0).sum()), "queries": int(sizes.sum()),
            "events_per_window_mean": float(filled.mean()) if len(filled) else 0.0,
            "events_per_window_std": float(filled.std()) if len(filled) else 0.0,
            "negatives_from_pool": int((fill == 0).sum()), "negatives_random": int((fill == 1).sum())}


def task_document(manifest: Manifest, columns: Mapping[str, Mapping[str, np.ndarray]],
                  files: Mapping[str, Mapping[str, np.ndarray]], folder: Path, seed: int = SEED) -> dict[str, Any]:
    """The task document of ``manifest``'s window-forecasting task, for files written into ``folder``."""
    ev = events(dataset_view(manifest, columns))
    block = task_block(manifest, ev)
    edges = manifest.graph["edges_file"]
    distribution = [{"@type": "cr:FileObject", "@id": name, "name": name, "contentUrl": name,
                     "encodingFormat": "application/x-parquet", "sha256": file_sha256(folder / name),
                     "contentSize": f"{(folder / name).stat().st_size} B"} for name in files]
    return {
        "@type": "tgbhub:TaskDocument", "conformsTo": TASK_DOCUMENT_FORMAT,
        "name": f"{manifest.name}/{TASKS_FOLDER}/{TASK_NAME}", "version": TASK_VERSION,
        "description": f"Link forecasting by time windows (Lampert et al.) on {manifest.name}@{manifest.version}: "
                       "every event of a window is scored at once against one historical negative each, given only "
                       "the events before the window starts; AUC-ROC and AP per window.",
        "license": manifest.license, "datePublished": PUBLISHED, "citeAs": CITATION,
        "dataset": f"{manifest.name}@{manifest.version}",
        "datasetDigests": {edges: manifest.file(edges).digest},
        "recipe": {"generator": GENERATOR, "version": GENERATOR_VERSION, "params": {"task": TASK_NAME}, "seed": seed},
        "distribution": distribution,
        "digest": [{"file": name, "algorithm": DIGEST_ALGORITHM, "value": content_digest(cols),
                    "columns": list(cols)} for name, cols in files.items()],
        "task": block,
        "stats": {split: _split_stats(files, ev, split, block["horizon"]["value"])
                  for split in graded_splits(manifest)},
    }
