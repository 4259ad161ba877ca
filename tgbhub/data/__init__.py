"""Dataset objects built from verified cache files; no network, no writes."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from tgbhub.data.grading import EvaluatorFactory
from tgbhub.data.temporal_graph import Negatives, SnapshotRange, TaskOpener, TemporalGraphDataset, WindowNegatives
from tgbhub.data.trajectories import TrajectoryDataset, Windows, open_trajectories
from tgbhub.errors import IntegrityError, ManifestError
from tgbhub.manifest import Manifest

__all__ = ["EvaluatorFactory", "Negatives", "SnapshotRange", "TaskOpener", "TemporalGraphDataset", "TrajectoryDataset",
           "WindowNegatives", "Windows", "open_dataset"]


def open_dataset(manifest: Manifest, columns: Mapping[str, Mapping[str, Path]], source: str,
                 evaluator_factory: EvaluatorFactory | None = None,
                 parent: TemporalGraphDataset | None = None,
                 task_opener: TaskOpener | None = None) -> TemporalGraphDataset | TrajectoryDataset:
    """Memory-map a dataset's verified column files and wrap them in the object its ``graph.kind`` declares.

    ``evaluator_factory(dataset, task)`` backs ``ds.evaluator``; the composition root passes it in, because the
    evaluator is a later hop than the dataset and the data layer never imports it; ``task_opener`` likewise builds
    and verifies the artifacts of a task declared by a task document on first use. A derived dataset's files hold
    only the rows its transform replaced (``graph.replaces``); ``parent`` (the verified parent dataset) supplies the
    others, which are never copied into the derived dataset's files.

    Raises:
        ManifestError: if the manifest declares a kind this tgbhub cannot open, or a derived dataset comes without
            its parent.
        IntegrityError: if the assembled rows do not add up to the splits the manifest declares.
    """
    kind = manifest.graph.get("kind")
    if kind == "trajectories":
        return open_trajectories(manifest, columns, source, evaluator_factory)
    if kind != "temporal-graph":
        raise ManifestError(f"{manifest.name}@{manifest.version} is of kind {kind!r}, which this tgbhub cannot open; "
                            "upgrade tgbhub")
    paths = columns[manifest.graph["edges_file"]]
    arrays = {name: np.load(path, mmap_mode="r", allow_pickle=False) for name, path in paths.items()}
    if manifest.derived_from is not None:
        arrays = _with_parent_rows(manifest, arrays, parent)
    return TemporalGraphDataset(manifest, arrays, source, files=columns, evaluator_factory=evaluator_factory,
                                parent=parent, task_opener=task_opener)


def _with_parent_rows(manifest: Manifest, arrays: Mapping[str, np.ndarray],
                      parent: TemporalGraphDataset | None) -> dict[str, np.ndarray]:
    """The parent's rows before and after the replaced range around the derived rows, ``t`` as float64; the derived
    file's further columns (``orig_event_id``, ``copy_idx``) are -1 on the parent's rows."""
    if parent is None or f"{parent.name}@{parent.version}" != manifest.derived_from:
        raise ManifestError(f"{manifest.name}@{manifest.version} is derived from {manifest.derived_from}; open it "
                            "with tgbhub.load_dataset, which loads and verifies the parent first")
    lo, hi = manifest.graph["replaces"]["parent_rows"]
    out: dict[str, np.ndarray] = {}
    for name, values in arrays.items():
        if name in ("t", "src", "dst"):
            dtype = np.float64 if name == "t" else values.dtype
            before, after = (np.asarray(getattr(parent, name)[a:b], dtype=dtype) for a, b in ((0, lo), (hi, None)))
        else:
            before, after = np.full(lo, -1, values.dtype), np.full(parent.num_rows - hi, -1, values.dtype)
        out[name] = np.concatenate([before, np.asarray(values), after])
    declared = max(stop for _, stop in manifest.splits.values())
    if len(out["t"]) != declared:
        raise IntegrityError(f"{manifest.name}@{manifest.version}", f"{declared} rows (its splits)",
                             f"{len(out['t'])} rows (parent {manifest.derived_from} plus its own file)",
                             "Clear the cache entries of both datasets and load again.")
    return out
