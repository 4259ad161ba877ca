"""Dataset objects built from verified cache files; no network, no writes."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from tgbhub.data.temporal_graph import SnapshotRange, TemporalGraphDataset
from tgbhub.errors import ManifestError
from tgbhub.manifest import Manifest

__all__ = ["SnapshotRange", "TemporalGraphDataset", "open_dataset"]


def open_dataset(manifest: Manifest, columns: Mapping[str, Mapping[str, Path]], source: str) -> TemporalGraphDataset:
    """Memory-map a dataset's verified column files and wrap them in the object its ``graph.kind`` declares.

    Raises:
        ManifestError: if the manifest declares a kind this tgbhub cannot open.
    """
    kind = manifest.graph.get("kind")
    if kind != "temporal-graph":
        raise ManifestError(f"{manifest.name}@{manifest.version} is of kind {kind!r}, which this tgbhub cannot open; "
                            "upgrade tgbhub")
    paths = columns[manifest.graph["edges_file"]]
    arrays = {name: np.load(path, mmap_mode="r", allow_pickle=False) for name, path in paths.items()}
    return TemporalGraphDataset(manifest, arrays, source)
