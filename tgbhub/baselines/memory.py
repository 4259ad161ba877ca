"""What a heuristic remembers: when each ordered pair was last seen before a given snapshot (vectorised).

Every lookup is strictly causal: asking about snapshot ``t`` only sees rows with time ``< t``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa

from tgbhub.tasks import candidate_pairs, graded_snapshots


class PairTimes:
    """Rows ``(t, src, dst)`` encoded as sorted ``(pair, t)`` codes; answers "last time seen before t"."""

    def __init__(self, t: np.ndarray, src: np.ndarray, dst: np.ndarray, num_nodes: int, horizon: int) -> None:
        self.num_nodes = int(num_nodes)
        # a code orders by pair first, then time, so the latest sighting before t sits just left of (pair, t)
        self.stride = int(horizon) + 1
        self.codes = np.sort(self._code(src, dst, t))

    def _code(self, src: Any, dst: Any, t: Any) -> np.ndarray:
        pair = np.asarray(src, dtype=np.int64) * self.num_nodes + np.asarray(dst, dtype=np.int64)
        return pair * self.stride + np.asarray(t, dtype=np.int64)

    def last_before(self, src: Any, dst: Any, t: Any) -> np.ndarray:
        """For each query, the last snapshot ``< t`` in which ``(src, dst)`` was seen, or ``-1``."""
        wanted = self._code(src, dst, t)
        at = np.searchsorted(self.codes, wanted, side="left") - 1
        found = self.codes[np.maximum(at, 0)]
        same = (at >= 0) & (found // self.stride == wanted // self.stride)
        return np.where(same, found % self.stride, -1)


def rows(dataset: Any, split: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(t, src, dst)`` of the whole dataset, or of one split."""
    chosen = dataset.split(split) if split is not None else dataset
    return np.asarray(chosen.t), np.asarray(chosen.src), np.asarray(chosen.dst)


def snapshot_queries(dataset: Any, task: Mapping[str, Any], split: str) -> dict[str, np.ndarray]:
    """The key columns ``t, src, dst`` of a complete snapshot-task submission for ``split``."""
    start, stop = graded_snapshots(dataset.manifest, task, split)
    src, dst = candidate_pairs(task["candidates"], dataset.num_nodes)
    steps = np.arange(start, stop, dtype=np.int64)
    return {"t": np.repeat(steps, len(src)), "src": np.tile(src, len(steps)).astype(np.int32),
            "dst": np.tile(dst, len(steps)).astype(np.int32)}


def list_column(matrix: np.ndarray, count: np.ndarray) -> pa.Array:
    """Rows of ``matrix`` cut to their first ``count[i]`` entries, as an Arrow list column (no Python loop)."""
    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    if len(count) and (count == matrix.shape[1]).all():
        return pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1)), matrix.shape[1])
    keep = np.arange(matrix.shape[1])[None, :] < np.asarray(count)[:, None]
    offsets = np.zeros(len(count) + 1, dtype=np.int32)
    np.cumsum(count, out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(matrix[keep]))
