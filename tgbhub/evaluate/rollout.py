"""ChaosNetBench's task: block-autoregressive rollouts graded by valid prediction time (VPT), plus teacher-forced
window metrics and the validity screen.

Submission (a Parquet file, validated like every other submission): one row per (IC of the split, predicted step
``t = context .. steps - 1``) with ``values``, the 2N predicted variables in normalised units. How the rollout is
produced is the submitter's business; the protocol (true first ``context`` rows, ``block`` steps per model call,
predictions fed back) is the task's, and :func:`tgbhub.baselines.trajectory.rollout` implements it.

Teacher-forced metrics need a forecast for every window (199,941 test windows x 12 x 2N values: 614 MB at N=32), too
much for a file, so an in-process submission may carry them as ``submission.forecasts``: an array
``(windows, horizon, 2N)`` aligned with ``dataset.windows(split)``, or a callable ``f(x) -> y`` mapping
``(B, context, 2N)`` to ``(B, horizon, 2N)`` that the evaluator calls batch by batch.

VPT (spec section 4.5): ``NRMSE(t) = sqrt(mean_i (yhat_ti - y_ti)^2) / (std(y) + 1e-8)`` with ``std(y)`` one
population std over the whole true continuation of the IC; VPT is the first 0-based ``t`` with ``NRMSE(t) > 1``,
or the number of predicted steps if that never happens. ``vpt`` and ``vpt_std`` are the mean and population std
over the split's ICs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from tgbhub.errors import ScoreError, SubmissionError
from tgbhub.evaluate.base import TaskEvaluator, result
from tgbhub.evaluate.registry import register_evaluator
from tgbhub.evaluate.submission import read_submission, unique_ids
from tgbhub.manifest import Manifest
from tgbhub.tasks import choose_split

TASK_TYPE = "rollout-forecasting"
AT_STEPS = (12, 24, 48, 96)


def nrmse_curve(predicted: np.ndarray, truth: np.ndarray, std_eps: float = 1e-8) -> np.ndarray:
    """Per-step NRMSE of one rollout ``(steps, V)`` against the true continuation ``(steps, V)`` (float64).

    Raises:
        ScoreError: if the shapes differ or the prediction holds NaN/inf.
    """
    predicted = np.asarray(predicted, dtype=np.float64)
    truth = np.asarray(truth, dtype=np.float64)
    if predicted.shape != truth.shape or predicted.ndim != 2:
        raise ScoreError(f"a rollout has shape {predicted.shape}, its truth {truth.shape}; both must be (steps, V)")
    if not np.isfinite(predicted).all():
        raise ScoreError("a rollout holds NaN or inf; VPT needs finite predictions")
    error = np.sqrt(np.mean((predicted - truth) ** 2, axis=1))
    return error / (truth.std() + std_eps)


def valid_prediction_time(curve: np.ndarray, threshold: float = 1.0) -> int:
    """The first 0-based step whose NRMSE exceeds ``threshold``; ``len(curve)`` if none does."""
    above = np.flatnonzero(np.asarray(curve) > threshold)
    return int(above[0]) if len(above) else len(curve)


class TeacherForced:
    """Streaming teacher-forced errors: MSE/MAE over windows, steps and variables, cumulative over the first h."""

    def __init__(self, horizon: int) -> None:
        self.squared = np.zeros(horizon)
        self.absolute = np.zeros(horizon)
        self.count = 0
        self.width = 0

    def add(self, predicted: np.ndarray, truth: np.ndarray) -> None:
        """Accumulate one batch ``(B, horizon, V)``.

        Raises:
            ScoreError: for a shape mismatch or NaN/inf predictions.
        """
        predicted = np.asarray(predicted, dtype=np.float64)
        if predicted.shape != truth.shape:
            raise ScoreError(f"forecasts of shape {predicted.shape} do not match the windows' {truth.shape}; "
                             "predict (B, horizon, 2N) for every window of dataset.windows(split)")
        if not np.isfinite(predicted).all():
            raise ScoreError("forecasts hold NaN or inf; every forecast must be finite")
        difference = predicted - truth
        self.squared += (difference ** 2).sum(axis=(0, 2))
        self.absolute += np.abs(difference).sum(axis=(0, 2))
        self.count += predicted.shape[0]
        self.width = predicted.shape[2]

    def metrics(self, prefix: str, horizons: tuple[int, ...]) -> dict[str, float]:
        cells = self.count * self.width
        out = {f"{prefix}_mse": self.squared.sum() / (cells * len(self.squared)),
               f"{prefix}_mae": self.absolute.sum() / (cells * len(self.absolute))}
        for h in horizons:
            out[f"mse_h{h}"] = self.squared[:h].sum() / (cells * h)
            out[f"mae_h{h}"] = self.absolute[:h].sum() / (cells * h)
        return out


@register_evaluator(TASK_TYPE)
class RolloutEvaluator(TaskEvaluator):
    """Grades a rollout-forecasting task. ``truth`` is a trajectory dataset (``trajectories``, ``windows``,
    ``split_ics``, ``num_steps``, ``num_nodes``, ``indicators``); the constructor does no I/O."""

    def __init__(self, manifest: Manifest, task: Mapping[str, Any], truth: Any) -> None:
        super().__init__(manifest, task, truth)
        self.context = int(task["context"])
        self.horizon = int(task["horizon"])

    def rollout_keys(self, split: str | None = None) -> dict[str, np.ndarray]:
        """The ``ic`` and ``t`` columns of a complete submission for ``split`` (fill in ``values``)."""
        lo, hi = self.manifest.splits[choose_split(self.manifest, self.task, split)]
        steps = np.arange(self.context, int(self.manifest.graph["num_snapshots"]), dtype=np.int64)
        return {"ic": np.repeat(np.arange(lo, hi, dtype=np.int64), len(steps)), "t": np.tile(steps, hi - lo)}

    def _rollouts(self, columns: Mapping[str, Any], lo: int, hi: int) -> np.ndarray:
        steps = int(self.manifest.graph["num_snapshots"]) - self.context
        width = int(self.manifest.graph["num_nodes"])
        ic, t, values = columns["ic"], columns["t"], columns["values"]
        for name, column, low, high in (("ic", ic, lo, hi), ("t", t, self.context, self.context + steps)):
            bad = (column < low) | (column >= high)
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                raise SubmissionError(name, row, f"is {int(column[row])}, outside [{low}, {high})",
                                      f"Submit ICs {lo}..{hi - 1} and steps {self.context}..{self.context + steps - 1}"
                                      " (evaluator.rollout_keys(split) lists them)")
        lengths = values.lengths
        if (lengths != width).any():
            row = int(np.flatnonzero(lengths != width)[0])
            raise SubmissionError("values", row, f"holds {int(lengths[row])} values, expected {width} (2N)",
                                  "Write the 2N variables of the step, in the blocked order q_1..q_N, p_1..p_N")
        slots = (ic - lo) * steps + (t - self.context)
        unique_ids("ic", slots, (hi - lo) * steps, lambda s: f"ic={lo + s // steps}, t={self.context + s % steps}")
        rollouts = np.empty(((hi - lo) * steps, width), dtype=np.float64)
        rollouts[slots] = values.values.reshape(-1, width)
        return rollouts.reshape(hi - lo, steps, width)

    def _teacher_forced(self, forecasts: Any, split: str, batch_size: int = 8192) -> dict[str, float]:
        windows = self.truth.windows(split)
        tracker = TeacherForced(self.horizon)
        predict: Callable[[np.ndarray], np.ndarray] | None = forecasts if callable(forecasts) else None
        if predict is None and np.shape(forecasts)[0] != len(windows):
            raise SubmissionError("forecasts", None, f"has {np.shape(forecasts)[0]} windows, the split has "
                                  f"{len(windows)}", "Forecast every window of dataset.windows(split), in order")
        for lo in range(0, len(windows), batch_size):
            x, y = windows[np.arange(lo, min(lo + batch_size, len(windows)))]
            predicted = predict(x) if predict is not None else np.asarray(forecasts[lo:lo + batch_size])
            tracker.add(predicted, y.astype(np.float64))
        return tracker.metrics(split, tuple(self.task.get("teacher_forced", {}).get("cumulative_horizons", ())))

    def evaluate(self, submission: Any, split: str | None = None, detail: bool = False) -> dict[str, Any]:
        """Grade rollouts (and, when the submission carries them, teacher-forced forecasts) on ``split``.

        Metrics: ``vpt``, ``vpt_std``, ``vpt_lyapunov`` (VPT x the IC's lambda, averaged), ``nrmse_at_{12,24,48,96}``;
        with forecasts also ``{split}_mse``, ``{split}_mae``, ``mse_h{3,6,12}``, ``mae_h{...}`` and ``valid``
        (1.0 when the MSE is below the task's validity threshold, for one run; the benchmark screen uses the
        seed-mean, see :mod:`tgbhub.evaluate.benchmark`).

        Raises:
            SubmissionError: for a malformed submission (column, first bad row, fix), never a score.
            InvalidNameError: if the dataset has no such split.
        """
        split = choose_split(self.manifest, self.task, split)
        lo, hi = self.manifest.splits[split]
        forecasts = getattr(submission, "forecasts", None)
        rollouts = self._rollouts(read_submission(submission, self.task), lo, hi)
        truth = self.truth.trajectories(split)[:, self.context:, :]
        rollout = self.task.get("rollout", {})
        curves = np.stack([nrmse_curve(rollouts[i], truth[i], float(rollout.get("std_eps", 1e-8)))
                           for i in range(hi - lo)])
        vpt = np.array([valid_prediction_time(c, float(rollout.get("vpt_threshold", 1.0))) for c in curves])
        lyapunov = np.asarray(self.truth.indicators["lambda_max"])[lo:hi]
        metrics: dict[str, float] = {"vpt": vpt.mean(), "vpt_std": vpt.std(), "vpt_lyapunov": (vpt * lyapunov).mean()}
        for step in AT_STEPS:
            if step <= curves.shape[1]:
                metrics[f"nrmse_at_{step}"] = curves[:, step - 1].mean()
        if forecasts is not None:
            metrics.update(self._teacher_forced(forecasts, split))
            threshold = float(self.task.get("validity", {}).get("threshold", 0.95))
            metrics["valid"] = float(metrics[f"{split}_mse"] < threshold)
        extra = {"per_ic": {"ic": list(range(lo, hi)), "vpt": vpt.tolist()}} if detail else {}
        return result(self.manifest, self.task, split, metrics,
                      {f.name: f.digest for f in self.manifest.files}, **extra)
