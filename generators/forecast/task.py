"""The window-forecasting task of a temporal-graph dataset: its per-window negatives and its task document.

The task's definition (events, windows, horizon, task block, names and versions) is the library's
(:mod:`tgbhub.forecasting.task`, the task plug-in); it is handed to these builders as ``definition`` (anything with
those attributes), so generator code never imports the evaluator's side.

Everything here derives from the dataset's verified edges alone, so the task is versioned on its own
(:mod:`tgbhub.tasks.documents`): the dataset's files and version never change when the task is added or revised.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from tgbhub.hashing import DIGEST_ALGORITHM, content_digest, file_sha256
from tgbhub.manifest import TASK_DOCUMENT_FORMAT, TASKS_FOLDER, Manifest

from ..negatives import stream_key
from . import Definition, Ev
from .negatives import group_negatives

#: the recipe generator of the task's negatives, and its version
GENERATOR = "tgbhub.window-negatives"
GENERATOR_VERSION = "1.0.0"
SEED = 0

_SCHEMA = pa.schema([("window", pa.int64()), ("neg_src", pa.int32()), ("neg_dst", pa.int32()), ("fill", pa.int8())])


def dataset_view(manifest: Manifest, columns: Mapping[str, Mapping[str, np.ndarray]]) -> SimpleNamespace:
    """What the definition's ``events`` reads, from a dataset's verified edge columns."""
    edges = columns[manifest.graph["edges_file"]]
    return SimpleNamespace(manifest=manifest, t=np.asarray(edges["t"]), src=np.asarray(edges["src"]),
                           dst=np.asarray(edges["dst"]))


def build(manifest: Manifest, columns: Mapping[str, Mapping[str, np.ndarray]], seed: int,
          definition: Definition[Ev]) -> dict[str, dict[str, np.ndarray]]:
    """Every graded split's negatives file: one row per event of the split, in event order: the event's ``window``
    and its negative ``(neg_src, neg_dst)``, ``fill`` 0 if drawn from the historical pool, 1 if a random top-up."""
    d = definition
    ev = d.events(dataset_view(manifest, columns))
    horizon = d.horizon_of(ev)["value"]
    codes = ev.pair_codes()
    files: dict[str, dict[str, np.ndarray]] = {}
    for split in d.graded_splits(manifest):
        index = d.window_index(ev, split, horizon)
        key = stream_key(f"{manifest.name}@{manifest.version}|{d.TASK_NAME}", split, seed)
        neg_src, neg_dst, fill = group_negatives(codes, ev.t, np.arange(len(index)), index.lo, index.hi,
                                                 ev.num_nodes, ev.symmetric, key)
        lo, hi = ev.range(split)
        files[d.negatives_file(split)] = {"window": index.window_of(np.arange(lo, hi)).astype(np.int64),
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


def _split_stats(files: Mapping[str, Mapping[str, np.ndarray]], ev: Ev, split: str, horizon: float,
                 d: Definition[Ev]) -> dict[str, Any]:
    index = d.window_index(ev, split, horizon)
    sizes = index.sizes
    fill = files[d.negatives_file(split)]["fill"]
    filled = sizes[sizes > 0]
    return {"windows": len(index), "empty_windows": int((sizes == 0).sum()), "queries": int(sizes.sum()),
            "events_per_window_mean": float(filled.mean()) if len(filled) else 0.0,
            "events_per_window_std": float(filled.std()) if len(filled) else 0.0,
            "negatives_from_pool": int((fill == 0).sum()), "negatives_random": int((fill == 1).sum())}


def task_document(manifest: Manifest, columns: Mapping[str, Mapping[str, np.ndarray]],
                  files: Mapping[str, Mapping[str, np.ndarray]], folder: Path, definition: Definition[Ev],
                  seed: int = SEED) -> dict[str, Any]:
    """The task document of ``manifest``'s window-forecasting task, for files written into ``folder``."""
    d = definition
    ev = d.events(dataset_view(manifest, columns))
    block = d.task_block(manifest, ev)
    edges = manifest.graph["edges_file"]
    distribution = [{"@type": "cr:FileObject", "@id": name, "name": name, "contentUrl": name,
                     "encodingFormat": "application/x-parquet", "sha256": file_sha256(folder / name),
                     "contentSize": f"{(folder / name).stat().st_size} B"} for name in files]
    return {
        "@type": "tgbhub:TaskDocument", "conformsTo": TASK_DOCUMENT_FORMAT,
        "name": f"{manifest.name}/{TASKS_FOLDER}/{d.TASK_NAME}", "version": d.TASK_VERSION,
        "description": f"Link forecasting by time windows (Lampert et al.) on {manifest.name}@{manifest.version}: "
                       "every event of a window is scored at once against one historical negative each, given only "
                       "the events before the window starts; AUC-ROC and AP per window.",
        "license": manifest.license, "datePublished": d.PUBLISHED, "citeAs": d.CITATION,
        "dataset": f"{manifest.name}@{manifest.version}",
        "datasetDigests": {edges: manifest.file(edges).digest},
        "recipe": {"generator": GENERATOR, "version": GENERATOR_VERSION, "params": {"task": d.TASK_NAME},
                   "seed": seed},
        "distribution": distribution,
        "digest": [{"file": name, "algorithm": DIGEST_ALGORITHM, "value": content_digest(cols),
                    "columns": list(cols)} for name, cols in files.items()],
        "task": block,
        "stats": {split: _split_stats(files, ev, split, block["horizon"]["value"], d)
                  for split in d.graded_splits(manifest)},
    }
