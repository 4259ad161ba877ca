"""What a heuristic remembers: when each ordered pair was last seen before a given time (vectorised).

Every lookup is strictly causal: asking about time ``t`` only sees rows with time ``< t``. Timestamps are snapshot
indices (int64, a base dataset) or continuous (float64, a derived dataset whose test events were jittered or
permuted); both are answered exactly, without rounding a float time to a snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from tgbhub.tasks.declared import candidate_pairs, graded_snapshots

if TYPE_CHECKING:
    from tgbhub.data import TemporalGraphDataset


class PairTimes:
    """Rows ``(t, src, dst)`` encoded as sorted ``(pair, time)`` codes; answers "last time seen before t".

    Snapshot times (integers with a ``horizon``) are coded as themselves. Other times (floats, or integers with no
    snapshot count, e.g. seconds) are coded by their rank among the distinct row times, so a code stays an exact
    int64 whatever the time values are, and "before t" compares the timestamps themselves (as float64, exact for
    integers below 2**53).
    """

    def __init__(self, t: np.ndarray, src: np.ndarray, dst: np.ndarray, num_nodes: int, horizon: int | None) -> None:
        self.num_nodes = int(num_nodes)
        times = np.asarray(t)
        #: ``None`` for integer snapshot times; else the sorted distinct times (as float64) that ranks index into
        self.times: np.ndarray | None = None
        # snapshot indices code as themselves; continuous times (no snapshot count: seconds since 1970, say) by rank,
        # which keeps pair * stride + code inside int64 whatever the time values are
        if np.issubdtype(times.dtype, np.integer) and horizon is not None:
            # a code orders by pair first, then time, so the latest sighting before t sits just left of (pair, t)
            self.stride = int(horizon) + 1
            self.codes = np.sort(self._code(src, dst, times))
        else:
            self.times = np.unique(times.astype(np.float64))
            self.stride = len(self.times) + 1
            self.codes = np.sort(self._pair(src, dst) * self.stride + np.searchsorted(self.times, times))

    def _pair(self, src: npt.ArrayLike, dst: npt.ArrayLike) -> np.ndarray:
        return np.asarray(src, dtype=np.int64) * self.num_nodes + np.asarray(dst, dtype=np.int64)

    def _code(self, src: npt.ArrayLike, dst: npt.ArrayLike, t: npt.ArrayLike) -> np.ndarray:
        return self._pair(src, dst) * self.stride + np.asarray(t, dtype=np.int64)

    def _lookup(self, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each query code, whether its pair has an earlier code, and that code."""
        at = np.searchsorted(self.codes, wanted, side="left") - 1
        found = self.codes[np.maximum(at, 0)]
        same = (at >= 0) & (found // self.stride == wanted // self.stride)
        return same, found

    def last_before(self, src: npt.ArrayLike, dst: npt.ArrayLike, t: npt.ArrayLike) -> np.ndarray:
        """For each query, the last snapshot ``< t`` in which ``(src, dst)`` was seen, or ``-1``.

        Raises:
            TypeError: if the rows have continuous (float) times: use :meth:`last_time`.
        """
        if self.times is not None:
            raise TypeError("last_before answers snapshot (integer) times only; these rows have float times, use "
                            "last_time, which returns NaN for a pair not seen")
        same, found = self._lookup(self._code(src, dst, t))
        return np.where(same, found % self.stride, -1)

    def last_time(self, src: npt.ArrayLike, dst: npt.ArrayLike, t: npt.ArrayLike) -> np.ndarray:
        """For each query, the last time ``< t`` at which ``(src, dst)`` was seen (float64), or NaN if never.

        NaN compares false with everything, so ``last_time(...) >= x`` is a "seen, and recently" test.
        """
        if self.times is None:
            last = self.last_before(src, dst, t)
            return np.where(last >= 0, last.astype(np.float64), np.nan)
        # a query's rank counts the distinct row times strictly below t, so rows at t itself are never "before"
        rank = np.searchsorted(self.times, np.asarray(t, dtype=np.float64), side="left")
        same, found = self._lookup(self._pair(src, dst) * self.stride + rank)
        return np.where(same, self.times[found % self.stride], np.nan)


def rows(dataset: TemporalGraphDataset, split: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(t, src, dst)`` of the whole dataset, or of one split."""
    chosen = dataset.split(split) if split is not None else dataset
    return np.asarray(chosen.t), np.asarray(chosen.src), np.asarray(chosen.dst)


def snapshot_queries(dataset: TemporalGraphDataset, task: Mapping[str, Any], split: str) -> dict[str, np.ndarray]:
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
