"""Reference predictors for rollout forecasting that need no GPU, and the block-autoregressive rollout protocol.

- ``zero``: the train mean, i.e. 0 in normalised units (the noise floor: VPT of about one step);
- ``persistence``: the last observed row, repeated;
- ``linear``: one affine map from 48 past values to 12 future values, shared by all 2N variables, fitted in closed
  form (least squares over the train windows, normal equations in float64). In function terms this is DLinear,
  whose published numbers it reproduces (docs/chaosnet.md, "Reference predictors").

Each returns a :class:`RolloutSubmission`: the Parquet columns ``ic, t, values`` of its rollouts, carrying its
window forecaster as ``.forecasts`` so the evaluator can compute teacher-forced metrics batch by batch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from tgbhub.baselines.registry import register_baseline

if TYPE_CHECKING:
    from tgbhub.data import TrajectoryDataset, Windows

TASK_TYPE = "rollout-forecasting"
#: maps a batch of windows ``(B, context, V)`` to forecasts ``(B, horizon, V)``
Forecaster = Callable[[np.ndarray], np.ndarray]


class RolloutSubmission(dict[str, np.ndarray]):
    """The submission columns (``ic``, ``t``, ``values``), plus ``forecasts``: the model as a window forecaster, or
    its forecasts ``(windows, horizon, V)`` of every window of the split, in order."""

    forecasts: Forecaster | np.ndarray | None = None


def rollout(predict: Forecaster, context: np.ndarray, steps: int, block: int) -> np.ndarray:
    """Block-autoregressive rollout of ``(B, context, V)`` true rows for ``steps`` steps: predict ``block`` rows,
    append them, drop the oldest ``block`` rows, repeat; the last block is truncated. Returns ``(B, steps, V)``."""
    window = np.array(context, dtype=np.float32)
    out = np.empty((window.shape[0], steps, window.shape[2]), dtype=np.float32)
    done = 0
    while done < steps:
        predicted = np.asarray(predict(window), dtype=np.float32)[:, :block]
        take = min(block, steps - done)
        out[:, done:done + take] = predicted[:, :take]
        window = np.concatenate([window[:, block:], predicted], axis=1)
        done += take
    return out


def submission(predict: Forecaster, dataset: TrajectoryDataset, task: Mapping[str, Any], split: str
               ) -> RolloutSubmission:
    """Roll ``predict`` out on every IC of ``split`` from its true first ``context`` rows."""
    context, block = int(task["context"]), int(task.get("rollout", {}).get("block", task["horizon"]))
    trajectories = dataset.trajectories(split)
    ics = dataset.split_ics(split)
    steps = trajectories.shape[1] - context
    rolled = rollout(predict, trajectories[:, :context], steps, block)
    columns = RolloutSubmission(ic=np.repeat(np.arange(ics.start, ics.stop, dtype=np.int64), steps),
                                t=np.tile(np.arange(context, context + steps, dtype=np.int64), len(ics)),
                                values=rolled.reshape(-1, rolled.shape[2]))
    columns.forecasts = predict
    return columns


def zero_forecaster(horizon: int) -> Forecaster:
    """Always the train mean (0 after z-scoring)."""
    return lambda x: np.zeros((x.shape[0], horizon, x.shape[2]), dtype=np.float32)


def persistence_forecaster(horizon: int) -> Forecaster:
    """The last observed row, ``horizon`` times."""
    return lambda x: np.repeat(np.asarray(x)[:, -1:, :], horizon, axis=1)


def fit_linear(windows: Windows, batch_size: int = 4096) -> np.ndarray:
    """Least-squares ``(context + 1, horizon)`` weights (last row: bias) mapping each variable's past to its future,
    one map shared by all variables, from the normal equations accumulated over ``windows`` in float64."""
    size = windows.context + 1
    gram = np.zeros((size, size))
    cross = np.zeros((size, windows.horizon))
    for lo in range(0, len(windows), batch_size):
        x, y = windows[np.arange(lo, min(lo + batch_size, len(windows)))]
        # (B, L, V) -> one row per (window, variable): its L past values and a 1 for the bias
        past = np.asarray(x, dtype=np.float64).transpose(0, 2, 1).reshape(-1, windows.context)
        design = np.concatenate([past, np.ones((len(past), 1))], axis=1)
        future = np.asarray(y, dtype=np.float64).transpose(0, 2, 1).reshape(-1, windows.horizon)
        gram += design.T @ design
        cross += design.T @ future
    return np.linalg.lstsq(gram, cross, rcond=None)[0]


def linear_forecaster(weights: np.ndarray) -> Forecaster:
    """Apply fitted weights to a batch of windows: ``(B, L, V) -> (B, H, V)`` in float32."""
    matrix = weights[:-1].astype(np.float64)
    bias = weights[-1].astype(np.float64)

    def predict(x: np.ndarray) -> np.ndarray:
        future = np.einsum("blv,lh->bhv", np.asarray(x, dtype=np.float64), matrix) + bias[None, :, None]
        return future.astype(np.float32)

    return predict


@register_baseline(TASK_TYPE, "zero")
def zero(dataset: TrajectoryDataset, task: Mapping[str, Any], split: str) -> RolloutSubmission:
    return submission(zero_forecaster(int(task["horizon"])), dataset, task, split)


@register_baseline(TASK_TYPE, "persistence")
def persistence(dataset: TrajectoryDataset, task: Mapping[str, Any], split: str) -> RolloutSubmission:
    return submission(persistence_forecaster(int(task["horizon"])), dataset, task, split)


@register_baseline(TASK_TYPE, "linear")
def linear(dataset: TrajectoryDataset, task: Mapping[str, Any], split: str) -> RolloutSubmission:
    fit_split = str(task.get("normalisation", {}).get("fit_split", "train"))
    weights = fit_linear(dataset.windows(fit_split, int(task["context"]), int(task["horizon"])))
    return submission(linear_forecaster(weights), dataset, task, split)
