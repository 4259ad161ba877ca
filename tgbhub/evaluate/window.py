"""Link forecasting by time windows (Lampert et al.): AUC-ROC and AP per window, averaged over windows.

Submission: one row per query of the split (a scored event, ``query`` = its position in the split), with its
``window`` id, the score of the true event (``pos_score``) and of its pre-generated negative (``neg_score``). Row
order is free; the window id is checked against the task's negatives file, so a submission built with another
horizon or anchor is refused rather than graded against the wrong windows.

Reported (docs/forecasting.md, "Metrics"): ``auc`` and ``ap``, the mean over the split's non-empty windows
(each time period weighs equally: the paper's numbers); ``auc_pooled``/``ap_pooled`` over all queries at once
(DyGLib's later "global" metrics); counts of windows, empty windows and queries; the horizon. ``detail=True`` adds
the per-window table (``window, t_start, t_end, n_pos, auc, ap``), the data behind the paper's Fig. 5.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from tgbhub.evaluate.base import TaskEvaluator, result
from tgbhub.evaluate.metrics import auroc, average_precision, grouped_auroc_ap
from tgbhub.evaluate.registry import register_evaluator
from tgbhub.evaluate.submission import Submission, SubmissionError, read_submission, unique_ids
from tgbhub.forecasting.windows import events, window_index
from tgbhub.manifest import plain
from tgbhub.tasks.declared import choose_split

if TYPE_CHECKING:
    from tgbhub.data import TemporalGraphDataset

TASK_TYPE = "window-link-forecasting"


@register_evaluator(TASK_TYPE)
class WindowForecastEvaluator(TaskEvaluator):
    """Grades a window-link-forecasting task. ``truth`` needs ``window_negatives(split, task=name)`` and, for the
    per-window detail, the dataset's events (``t``, ``src``, ``dst``, ``manifest``).

    The constructor does no I/O; the negatives are read (and built on first use) when :meth:`evaluate` runs.
    """

    truth: TemporalGraphDataset

    @property
    def non_finite_fix(self) -> str:
        """A very low score is the honest stand-in for "no idea": it loses to every finite score."""
        return "Replace NaN/inf before writing, e.g. np.nan_to_num(scores, nan=-1e9, posinf=1e9, neginf=-1e9)"

    def _scores(self, columns: Mapping[str, np.ndarray], window: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Scores in query order, after checking every query is there once, in the window it belongs to."""
        size = len(window)
        query = unique_ids("query", columns["query"], size, lambda i: f"query={i} (window {int(window[i])})")
        expected = window[query]
        wrong = columns["window"] != expected
        if wrong.any():
            row = int(np.flatnonzero(wrong)[0])
            raise SubmissionError("window", row, f"is {int(columns['window'][row])} but query {int(query[row])} lies "
                                  f"in window {int(expected[row])}",
                                  "Take each query's window from ds.window_negatives(split).window (or iterate "
                                  "ds.windows(split) and use w.id); the task's horizon is "
                                  f"{plain(self.task['horizon'])['value']} {plain(self.task['horizon'])['unit']}")
        pos = np.empty(size, dtype=np.float64)
        neg = np.empty(size, dtype=np.float64)
        pos[query] = columns["pos_score"]
        neg[query] = columns["neg_score"]
        return pos, neg

    def evaluate(self, submission: Submission, split: str | None = None, detail: bool = False) -> dict[str, Any]:
        """Per-window AUC/AP of ``submission`` on ``split`` (default: the task's ``report_split``), averaged.

        Raises:
            SubmissionError: for a malformed submission (naming the column, first bad row and fix), including a
                query placed in the wrong window.
            InvalidNameError: for an unknown split or one without negatives.
        """
        name = choose_split(self.manifest, self.task, split)
        # a window task is declared by a task document, which always names it
        negatives = self.truth.window_negatives(name, task=cast(str, self.task.get("name")))
        window = np.asarray(negatives.window, dtype=np.int64)
        columns = read_submission(submission, self.task, non_finite_fix=self.non_finite_fix)
        pos, neg = self._scores(columns, window)
        groups, auc, ap = grouped_auroc_ap(window, pos, neg)
        metrics = {"auc": float(np.mean(auc)) if len(groups) else float("nan"),
                   "ap": float(np.mean(ap)) if len(groups) else float("nan"),
                   "auc_pooled": auroc(pos, neg) if len(pos) else float("nan"),
                   "ap_pooled": average_precision(pos, neg) if len(pos) else float("nan")}
        horizon = plain(self.task["horizon"])
        index = window_index(events(self.truth), name, horizon["value"])
        extra: dict[str, Any] = {
            "task_version": self.task.get("version"), "task_document": self.task.get("document"),
            "horizon": horizon, "num_queries": int(len(window)), "num_windows": int(len(index)),
            "num_graded_windows": int(len(groups)), "num_empty_windows": int(len(index) - len(groups)),
            "description": (f"mean over the {len(groups)} non-empty windows of {name} (horizon {horizon['value']} "
                            f"{horizon['unit']}); {len(index) - len(groups)} empty windows have nothing to grade")}
        if detail:
            extra["per_window"] = {"window": groups.tolist(), "t_start": index.t_start[groups].tolist(),
                                   "t_end": index.t_end[groups].tolist(),
                                   "n_pos": np.bincount(window, minlength=len(index))[groups].tolist(),
                                   "auc": auc.tolist(), "ap": ap.tolist()}
        edges = self.manifest.graph["edges_file"]
        digests = {edges: self.manifest.file(edges).digest, negatives.file: negatives.digest}
        return result(self.manifest, self.task, name, metrics, digests, **extra)
