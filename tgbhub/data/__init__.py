"""Dataset objects built from verified cache files; no network, no writes."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from tgbhub.data.grading import EvaluatorFactory
from tgbhub.data.temporal_graph import Negatives, SnapshotRange, TemporalGraphDataset
from tgbhub.data.trajectories import TrajectoryDataset, Windows, open_trajectories
from tgbhub.errors import ManifestError
from tgbhub.manifest import Manifest

__all__ = ["EvaluatorFactory", "Negatives", "SnapshotRange", "TemporalGraphDataset", "TrajectoryDataset", "Windows",
           "open_dataset"]


def open_dataset(manifest: Manifest, columns: Mapping[str, Mapping[str, Path]], source: str,
                 evaluator_factory: EvaluatorFactory | None = None) -> TemporalGraphDataset | TrajectoryDataset:
    """Memory-map a dataset's verified column files and wrap them in the object its ``graph.kind`` declares.

    ``evaluator_factory(dataset, task)`` backs ``ds.evaluator``; the composition root passes it in, because the
    evaluator is a later hop than the dataset and the data layer never imports it.

    Raises:
        ManifestError: if the manifest declares a kind this tgbhub cannot open.
    """
    kind = manifest.graph.get("kind")
    if kind == "trajectories":
        return open_trajectories(manifest, columns, source, evaluator_factory)
    if kind != "temporal-graph":
        raise ManifestError(f"{manifest.name}@{manifest.version} is of kind {kind!r}, which this tgbhub cannot open; "
                            "upgrade tgbhub")
    paths = columns[manifest.graph["edges_file"]]
    arrays = {name: np.load(path, mmap_mode="r", allow_pickle=False) for name, path in paths.items()}
    return TemporalGraphDataset(manifest, arrays, source, files=columns, evaluator_factory=evaluator_factory)
