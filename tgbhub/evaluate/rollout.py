"""ChaosNetBench's task: block-autoregressive rollouts graded by valid prediction time (VPT), plus teacher-forced
window metrics and the validity screen.

Submission (a Parquet file, validated like every other submission): one row per (IC of the split, predicted step
``t = context .. steps - 1``) with ``values``, the 2N predicted variables in normalised units. How the rollout is
produced is the submitter's business; the protocol (true first ``context`` rows, ``block`` steps per model call,
predictions fed back) is the task's, and :func:`tgbhub.baselines.trajectory.rollout` implements it.

Teacher-forced metrics (and with them ``valid``, the validity screen) need a forecast for every window (199,941 test
windows x 12 x 2N values: 154 MB of float32 at N=8, 614 MB at N=32). They come as ``evaluate(...,
teacher_forced=...)`` or, in process, as ``submission.forecasts``, and may be

- a second Parquet file (or ``pyarrow.Table`` / mapping) in the schema :data:`TEACHER_FORCED_SUBMISSION` (unless the
  task's ``teacher_forced`` block declares its own ``submission``): ``window`` int64, the row index in
  ``dataset.windows(split)`` (the task's stride and window mode), and ``values`` list<float32>, that window's
  ``horizon x 2N`` forecasts step-major (``forecasts.reshape(windows, -1)``); one row per window, any order;
- an array ``(windows, horizon, 2N)`` aligned with ``dataset.windows(split)``;
- a callable ``f(x) -> y`` mapping ``(B, context, 2N)`` to ``(B, horizon, 2N)`` that the evaluator calls batch by
  batch.

Without them the result's ``validity_screen`` says ``applied: false`` and why; no ``valid`` is reported.

Units: rollouts are graded in normalised units (z-scored with the train statistics, ``dataset.scaler``). A rollout
in raw units is still graded (VPT about 0), but :class:`~tgbhub.errors.SubmissionScaleWarning` says so; see
:func:`looks_raw` for the rule.

Non-finite values: a rollout has no sensible fill value (any constant in place of a diverged step may look accurate
for a while and inflate VPT), so a NaN/inf is refused naming the trajectory (IC) and the step where it first appears.

VPT (docs/chaosnet.md, "Evaluation"): ``NRMSE(t) = sqrt(mean_i (yhat_ti - y_ti)^2) / (std(y) + 1e-8)`` with ``std(y)``
one population std over the whole true continuation of the IC; VPT is the first 0-based ``t`` with ``NRMSE(t) > 1``, or
the number of predicted steps if that never happens. ``vpt`` and ``vpt_std`` are the mean and population std over the
split's ICs.

VPT in Lyapunov times (dysts' convention ``VPT x dt x lambda_max`` with ``dt`` one step of the
map): ``vpt_lyapunov`` is the mean over the split's ICs of ``VPT_steps(ic) x lambda_max(ic)``, each IC's own largest
Lyapunov exponent per step (the dataset's ``indicators["lambda_max"]``, Benettin over the recorded steps), as dysts
scales each trajectory by its own exponent. It is reported only when every graded IC has a finite exponent (the
upstream trainer likewise skips it without one); :data:`METRIC_DEFINITIONS` says so in each result.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from tgbhub.errors import ScoreError, SubmissionError, SubmissionScaleWarning
from tgbhub.evaluate.base import TaskEvaluator, result
from tgbhub.evaluate.registry import register_evaluator
from tgbhub.evaluate.submission import Submission, read_submission, unique_ids
from tgbhub.manifest import Manifest
from tgbhub.tasks.declared import choose_split

if TYPE_CHECKING:
    from tgbhub.data import TrajectoryDataset, Windows

TASK_TYPE = "rollout-forecasting"
#: teacher-forced forecasts: a file, ``pyarrow.Table`` or mapping in :data:`TEACHER_FORCED_SUBMISSION`'s schema, an
#: array ``(windows, horizon, 2N)``, or a forecaster called on each batch of context windows
Forecasts = Submission | np.ndarray | Callable[[np.ndarray], np.ndarray]
AT_STEPS = (12, 24, 48, 96)

#: the schema of a teacher-forced forecasts file, for tasks whose ``teacher_forced`` block declares none
TEACHER_FORCED_SUBMISSION: dict[str, Any] = {
    "format": "parquet", "kind": "window-forecasts",
    "columns": [{"name": "window", "type": "int64"}, {"name": "values", "type": "list<float32>"}],
    "rows": "one per window of dataset.windows(split) (the task's context, horizon, stride and window mode), any order",
    "values": "the window's horizon x 2N forecasts, step-major (forecasts.reshape(windows, -1)), normalised",
}

#: what each rollout metric means, copied into every result (``metric_definitions``) so the JSON alone says it
METRIC_DEFINITIONS: dict[str, str] = {
    "vpt": "valid prediction time in map steps: the first 0-based predicted step whose NRMSE exceeds the threshold "
           "(the number of predicted steps if none does), mean over the split's ICs",
    "vpt_std": "population std (ddof=0) of the per-IC VPT in steps over the split's ICs",
    "vpt_lyapunov": "VPT in Lyapunov times: mean over the split's ICs of VPT_steps(ic) x lambda_max(ic), each IC's "
                    "largest Lyapunov exponent per map step (dysts' VPT x dt x lambda_max with dt = 1 step); "
                    "omitted when an IC's exponent is not finite",
    "nrmse_at_{h}": "NRMSE at predicted step h (1-based), mean over the split's ICs",
}

#: a rollout is flagged as raw units when at least this fraction of its variables look raw (:func:`looks_raw`)
RAW_UNITS_FRACTION = 0.5

ROLLOUT_NON_FINITE_FIX = (
    "A rollout has no sensible fill value: VPT is the first step whose NRMSE exceeds 1, and a constant put in place "
    "of a diverged step can look accurate for a while and inflate it. Keep the rollout finite inside the "
    "autoregressive loop (e.g. clip each predicted block, np.clip(block, -c, c) in normalised units, before it is "
    "fed back; the clip is then part of your model for every step) or fix the model's divergence")


def looks_raw(values: np.ndarray, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    """Per variable, whether ``values`` (``(..., V)``, meant to be normalised) sit in the raw units instead.

    Each variable's median and robust spread (interquartile range / 1.349; both unmoved by a few diverged steps)
    are compared with where the variable would sit in each unit system: at 0 with std 1 when normalised, at the raw
    train ``mean`` with std ``std`` when raw. A variable looks raw when its median lies within one raw ``std`` of
    ``mean`` and nearer to it (in raw stds) than to 0 (in normalised stds), and its spread is at most two raw stds
    (values spread wider than that fit neither system: no verdict). Variables whose raw mean is within one raw std
    of 0 cannot be told apart by location and never look raw. A trained model's median drifts from 0 by a fraction
    of a std, never by the ~1.7 stds of a raw-units submission on ChaosNet (train mean about pi, std about 1.8), so
    predictors in normalised units (zero, persistence, linear) are not flagged.
    """
    mean = np.asarray(mean, dtype=np.float64)
    std = np.asarray(std, dtype=np.float64)
    q25, median, q75 = np.percentile(np.asarray(values).reshape(-1, len(mean)), [25, 50, 75], axis=0)
    to_raw = np.abs(median - mean) / std
    separable = np.abs(mean) > std
    plausible_spread = (q75 - q25) / 1.349 <= 2 * std
    return separable & plausible_spread & (to_raw < 1.0) & (to_raw < np.abs(median))


def nrmse_curve(predicted: np.ndarray, truth: np.ndarray, std_eps: float = 1e-8) -> np.ndarray:
    """Per-step NRMSE of one rollout ``(steps, V)`` against the true continuation ``(steps, V)`` (float64).

    Raises:
        ScoreError: if the shapes differ or the prediction holds NaN/inf.
    """
    predicted = np.asarray(predicted, dtype=np.float64)
    truth = np.asarray(truth, dtype=np.float64)
    if predicted.shape != truth.shape or predicted.ndim != 2:
        raise ScoreError(f"a rollout has shape {predicted.shape}, its truth {truth.shape}; both must be (steps, V)")
    finite = np.isfinite(predicted).all(axis=1)
    if not finite.all():
        raise ScoreError(f"a rollout holds NaN or inf from step {int(np.flatnonzero(~finite)[0])} (0-based) on; VPT "
                         f"needs finite predictions. {ROLLOUT_NON_FINITE_FIX}")
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

    def add(self, predicted: np.ndarray, truth: np.ndarray, first_window: int = 0) -> None:
        """Accumulate one batch ``(B, horizon, V)`` whose first window is ``first_window`` of the split.

        Raises:
            ScoreError: for a shape mismatch or NaN/inf predictions (naming the first bad window and step).
        """
        predicted = np.asarray(predicted, dtype=np.float64)
        if predicted.shape != truth.shape:
            raise ScoreError(f"forecasts of shape {predicted.shape} do not match the windows' {truth.shape}; "
                             "predict (B, horizon, 2N) for every window of dataset.windows(split)")
        bad = ~np.isfinite(predicted).all(axis=2)
        if bad.any():
            window, step = (int(i) for i in np.argwhere(bad)[0])
            raise ScoreError(f"the forecast of window {first_window + window} holds NaN or inf at step {step} "
                             "(0-based); a teacher-forced forecast has no sensible fill value: fix the model, or "
                             "clip its outputs (np.clip(y, -c, c) in normalised units) as part of the model")
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

    truth: TrajectoryDataset

    def __init__(self, manifest: Manifest, task: Mapping[str, Any], truth: TrajectoryDataset) -> None:
        super().__init__(manifest, task, truth)
        self.context = int(task["context"])
        self.horizon = int(task["horizon"])

    @property
    def non_finite_fix(self) -> str:
        """No fill value keeps VPT honest, so the fix is to the model (see the module docstring)."""
        return ROLLOUT_NON_FINITE_FIX

    def rollout_keys(self, split: str | None = None) -> dict[str, np.ndarray]:
        """The ``ic`` and ``t`` columns of a complete submission for ``split`` (fill in ``values``)."""
        lo, hi = self.manifest.splits[choose_split(self.manifest, self.task, split)]
        steps = np.arange(self.context, int(self.manifest.graph["num_snapshots"]), dtype=np.int64)
        return {"ic": np.repeat(np.arange(lo, hi, dtype=np.int64), len(steps)), "t": np.tile(steps, hi - lo)}

    def teacher_forced_keys(self, split: str | None = None) -> dict[str, np.ndarray]:
        """The ``window`` column of a complete teacher-forced forecasts file for ``split``: ``0 .. windows - 1``.

        Fill in ``values`` with ``forecasts.reshape(windows, -1)`` (``forecasts``: ``(windows, horizon, 2N)``
        for ``dataset.windows(split)`` in order) and write both with
        :func:`~tgbhub.evaluate.submission.write_submission`.

        Raises:
            InvalidNameError: if the dataset has no such split.
        """
        return {"window": np.arange(len(self._windows(choose_split(self.manifest, self.task, split))),
                                    dtype=np.int64)}

    def _windows(self, split: str) -> Windows:
        return self.truth.windows(split, self.context, self.horizon)

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
        flat = np.empty(((hi - lo) * steps, width), dtype=np.float64)
        flat[slots] = values.values.reshape(-1, width)
        rollouts = flat.reshape(hi - lo, steps, width)
        self._check_finite(rollouts, slots, lo)
        return rollouts

    def _check_finite(self, rollouts: np.ndarray, slots: np.ndarray, lo: int) -> None:
        """Refuse a diverged rollout, naming the first IC that diverged and the step it first did so at."""
        bad = ~np.isfinite(rollouts).all(axis=2)  # (ICs, steps)
        if not bad.any():
            return
        diverged = np.flatnonzero(bad.any(axis=1))
        first_ic = int(diverged[0])
        step = int(np.flatnonzero(bad[first_ic])[0])
        row = int(np.flatnonzero(slots == first_ic * rollouts.shape[1] + step)[0])
        raise SubmissionError("values", row, f"is not finite: trajectory ic={lo + first_ic} first holds NaN/inf at "
                              f"t={self.context + step} ({len(diverged)} of {rollouts.shape[0]} ICs hold NaN/inf)",
                              self.non_finite_fix)

    def _scale_warning(self, rollouts: np.ndarray) -> str | None:
        """The raw-units warning's message, or ``None`` when the rollouts look normalised (see :func:`looks_raw`)."""
        scaler = getattr(self.truth, "scaler", None)
        if scaler is None:
            return None
        raw = looks_raw(rollouts, scaler.mean, scaler.std)
        if raw.mean() < RAW_UNITS_FRACTION:
            return None
        flat = rollouts.reshape(-1, rollouts.shape[2])
        return (f"{self.manifest.name}@{self.manifest.version}: the rollouts look like raw (un-normalised) units: "
                f"{int(raw.sum())} of {len(raw)} variables have a median near the raw train mean; observed median "
                f"{float(np.median(np.median(flat, axis=0))):.3g} and std {float(np.mean(flat.std(axis=0))):.3g} "
                f"(averaged over variables), expected about 0 and 1 (normalised: z-scored with the train "
                f"statistics); raw units sit at mean {float(np.mean(scaler.mean)):.3g}, std "
                f"{float(np.mean(scaler.std)):.3g}. The score is of the raw numbers against normalised targets. "
                "Normalise with the dataset's train statistics before writing: ds.scaler.transform(raw), i.e. "
                "(raw - ds.scaler.mean) / ds.scaler.std")

    def _forecast_source(self, submission: Submission, teacher_forced: Forecasts | None) -> Forecasts | None:
        attached = getattr(submission, "forecasts", None)
        if teacher_forced is not None and attached is not None:
            raise SubmissionError("forecasts", None, "is given twice, as teacher_forced= and as submission.forecasts",
                                  "Pass the teacher-forced forecasts one way only")
        return teacher_forced if teacher_forced is not None else attached

    def _forecast_file(self, source: Submission, windows: int) -> np.ndarray:
        """A teacher-forced forecasts file (path, Table or mapping) as ``(windows, horizon, 2N)`` float32."""
        width = int(self.manifest.graph["num_nodes"])
        schema = self.task.get("teacher_forced", {}).get("submission", TEACHER_FORCED_SUBMISSION)
        columns = read_submission(source, {"name": "teacher-forced", "submission": schema}, non_finite_fix=None)
        window = unique_ids("window", columns["window"], windows, lambda w: f"window={w}")
        lists = columns["values"]
        wrong = lists.lengths != self.horizon * width
        if wrong.any():
            row = int(np.flatnonzero(wrong)[0])
            raise SubmissionError("values", row, f"holds {int(lists.lengths[row])} values, expected "
                                  f"{self.horizon * width} (horizon {self.horizon} x 2N {width})",
                                  "Write each window's forecasts step-major: forecasts.reshape(windows, -1)")
        out = np.empty((windows, self.horizon, width), dtype=np.float32)
        out[window] = lists.values.reshape(-1, self.horizon, width)
        return out

    def _teacher_forced(self, forecasts: Forecasts, split: str, batch_size: int = 8192) -> dict[str, float]:
        windows = self._windows(split)
        if isinstance(forecasts, (str, os.PathLike, pa.Table, Mapping)):
            forecasts = self._forecast_file(forecasts, len(windows))
        tracker = TeacherForced(self.horizon)
        if not callable(forecasts) and np.shape(forecasts)[0] != len(windows):
            raise SubmissionError("forecasts", None, f"has {np.shape(forecasts)[0]} windows, the split has "
                                  f"{len(windows)}", "Forecast every window of dataset.windows(split), in order")
        for lo in range(0, len(windows), batch_size):
            x, y = windows[np.arange(lo, min(lo + batch_size, len(windows)))]
            predicted = forecasts(x) if callable(forecasts) else np.asarray(forecasts[lo:lo + batch_size])
            tracker.add(predicted, y.astype(np.float64), first_window=lo)
        return tracker.metrics(split, tuple(self.task.get("teacher_forced", {}).get("cumulative_horizons", ())))

    def _validity(self, metrics: dict[str, float], split: str, applied: bool) -> dict[str, Any]:
        """The validity screen's entry of a result: its verdict for this run, or why it was not applied."""
        validity = self.task.get("validity", {})
        threshold = float(validity.get("threshold", 0.95))
        metric = f"{split}_mse"
        if not applied:
            return {"applied": False, "metric": metric, "threshold": threshold,
                    "reason": "no teacher-forced forecasts: pass evaluate(..., teacher_forced=FILE) (a Parquet file "
                              "with columns window, values; CLI: --teacher-forced FILE) or attach "
                              "submission.forecasts; rollouts alone cannot give the teacher-forced MSE the screen "
                              "reads"}
        metrics["valid"] = float(metrics[metric] < threshold)
        return {"applied": True, "metric": metric, "threshold": threshold, "value": float(metrics[metric]),
                "valid": bool(metrics["valid"]),
                "scope": "this run; the benchmark's screen uses the seed-mean (tgbhub.evaluate.benchmark)"}

    def evaluate(self, submission: Submission, split: str | None = None, detail: bool = False,
                 teacher_forced: Forecasts | None = None) -> dict[str, Any]:
        """Grade rollouts (and, when given, teacher-forced forecasts) on ``split``.

        ``teacher_forced``: a Parquet path, ``pyarrow.Table`` or mapping in :data:`TEACHER_FORCED_SUBMISSION`'s
        schema, an array ``(windows, horizon, 2N)`` or a callable forecaster (see the module docstring); an
        in-process ``submission.forecasts`` does the same.

        Metrics: ``vpt``, ``vpt_std``, ``vpt_lyapunov`` (mean over ICs of VPT x the IC's lambda_max per step: VPT in
        Lyapunov times; only when every exponent is finite), ``nrmse_at_{12,24,48,96}``;
        with forecasts also ``{split}_mse``, ``{split}_mae``, ``mse_h{3,6,12}``, ``mae_h{...}`` and ``valid``
        (1.0 when the MSE is below the task's validity threshold, for one run; the benchmark screen uses the
        seed-mean, see :mod:`tgbhub.evaluate.benchmark`). The result's ``validity_screen`` says whether the screen
        was applied and, if not, why; ``metric_definitions`` (:data:`METRIC_DEFINITIONS`) says what each metric
        means; ``warnings`` lists the messages of any warning raised while grading; ``detail=True`` adds ``per_ic``
        (``ic``, ``vpt`` in steps, ``lambda_max``).

        Warns:
            SubmissionScaleWarning: when the rollouts look like raw, un-normalised units (:func:`looks_raw`).

        Raises:
            SubmissionError: for a malformed submission or forecasts file (column, first bad row, fix; for a
                NaN/inf rollout the IC and step where it first appears), never a score; also when forecasts are
                given both as ``teacher_forced`` and ``submission.forecasts``.
            ScoreError: for in-memory forecasts of the wrong shape or holding NaN/inf.
            InvalidNameError: if the dataset has no such split.
        """
        split = choose_split(self.manifest, self.task, split)
        lo, hi = self.manifest.splits[split]
        forecasts = self._forecast_source(submission, teacher_forced)
        rollouts = self._rollouts(read_submission(submission, self.task, non_finite_fix=None), lo, hi)
        truth = self.truth.trajectories(split)[:, self.context:, :]
        notes = [message for message in [self._scale_warning(rollouts)] if message]
        for message in notes:
            warnings.warn(message, SubmissionScaleWarning, stacklevel=2)
        rollout = self.task.get("rollout", {})
        curves = np.stack([nrmse_curve(rollouts[i], truth[i], float(rollout.get("std_eps", 1e-8)))
                           for i in range(hi - lo)])
        vpt = np.array([valid_prediction_time(c, float(rollout.get("vpt_threshold", 1.0))) for c in curves])
        # per IC, as dysts scales each trajectory by its own exponent (not the instance's mean exponent)
        lyapunov = np.asarray(self.truth.indicators["lambda_max"], dtype=np.float64)[lo:hi]
        metrics: dict[str, float] = {"vpt": vpt.mean(), "vpt_std": vpt.std()}
        if np.isfinite(lyapunov).all():  # a NaN exponent (upstream's placeholder) has no Lyapunov time to report
            metrics["vpt_lyapunov"] = (vpt * lyapunov).mean()
        for step in AT_STEPS:
            if step <= curves.shape[1]:
                metrics[f"nrmse_at_{step}"] = curves[:, step - 1].mean()
        if forecasts is not None:
            metrics.update(self._teacher_forced(forecasts, split))
        extra: dict[str, Any] = {"validity_screen": self._validity(metrics, split, forecasts is not None),
                                 "metric_definitions": dict(METRIC_DEFINITIONS)}
        if notes:
            extra["warnings"] = notes
        if detail:
            extra["per_ic"] = {"ic": list(range(lo, hi)), "vpt": vpt.tolist(), "lambda_max": lyapunov.tolist()}
        return result(self.manifest, self.task, split, metrics,
                      {f.name: f.digest for f in self.manifest.files}, **extra)
