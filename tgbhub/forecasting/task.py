"""The window-forecasting task, the first task plug-in (:mod:`tgbhub.tasks.specs`): its definition (pure, no I/O):
name, versions, events, windows, horizon and task block.

The client declares it for every temporal graph without a bundled task document (a variant built on request, an
import) and builds it there; the generator that writes its negatives and documents (``generators/forecast``) is
handed this module as the task's ``definition``, so both sides share one definition and generator code never imports
this one.
"""

from __future__ import annotations

import sys
from typing import Any

from tgbhub.forecasting.windows import Events, events, suggest_horizon, window_index
from tgbhub.manifest import TASKS_FOLDER, Manifest
from tgbhub.tasks.specs import TaskSpec

__all__ = ["CITATION", "PUBLISHED", "TASK", "TASK_NAME", "TASK_TYPE", "TASK_VERSION", "events", "graded_splits",
           "horizon_of", "negatives_file", "task_block", "window_index"]

TASK_NAME = "window-forecast"
TASK_TYPE = "window-link-forecasting"
#: the task document's version (a new one for any change of the task's definition or artifacts)
TASK_VERSION = "1.0.0"
PUBLISHED = "2026-11-23"
CITATION = ("@article{lampert2025forecasting, title={From Link Prediction to Forecasting: Addressing Challenges in "
            "Batch-based Temporal Graph Learning}, author={Lampert, Moritz and Bl{\\\"o}cker, Christopher and "
            "Scholtes, Ingo}, journal={Transactions on Machine Learning Research}, year={2025}}")


def negatives_file(split: str) -> str:
    """The task artifact holding ``split``'s per-window negatives."""
    return f"window-negatives-{split}.parquet"


def graded_splits(manifest: Manifest) -> list[str]:
    """Every split after the first (train has no history of its own to forecast from)."""
    return list(manifest.splits)[1:]


def horizon_of(ev: Events) -> dict[str, Any]:
    """The task's horizon block: the paper's choice (docs/forecasting.md, "Horizon") and the window convention."""
    return {**suggest_horizon(ev), "anchor": "split-start",
            "interval": "window i of a split is [t0 + i*h, t0 + (i+1)*h), t0 = the split's first snapshot (or "
                        "floor of its first time); empty windows keep their id and are not graded"}


def task_block(manifest: Manifest, ev: Events) -> dict[str, Any]:
    """The task an evaluator is bound to (merged into the dataset's ``tasks`` when it is loaded)."""
    events_rule = ("one per undirected edge: the stored row with src <= dst (each edge is stored in both directions)"
                   if ev.symmetric else "every stored row")
    return {
        "name": TASK_NAME, "type": TASK_TYPE, "version": TASK_VERSION,
        "document": f"{manifest.name}/{TASKS_FOLDER}/{TASK_NAME}@{TASK_VERSION}", "report_split": "test",
        "events": events_rule, "horizon": horizon_of(ev),
        "history": "every event with t < the window's start (earlier windows of the split included, after they are "
                   "scored); nothing at or after the window's start may inform its scores",
        "negatives": {
            "strategy": "historical, topped up at random; one negative per positive, inheriting its timestamp",
            "ratio": 1,
            "pool": "DyGLib's: distinct pairs seen before the window, minus every pair occurring inside it; drawn "
                    "without replacement (the paper's EdgeBank numbers come from this pool)",
            "random": "uniform over all pairs u != v (unordered for a symmetric graph) that are not positive in the "
                      "window and not drawn already; with replacement only if too few exist",
            "seed": (f"window w: splitmix64(key + splitmix64(w)), key = first 8 bytes (little-endian) of sha256("
                     f"'tgbhub-negatives-v1|<name>@<version>|{TASK_NAME}|<split>|<recipe seed>'); pool in order of "
                     "first occurrence"),
            "files": {split: negatives_file(split) for split in graded_splits(manifest)},
        },
        "metrics": ["auc", "ap"],
        "aggregate": "auc/ap: mean over the non-empty windows of the split (each time period weighs equally, as the "
                     "paper reports); auc_pooled/ap_pooled: over all queries of the split at once",
        "tie_rule": "scikit-learn's: AUC counts a tie as 1/2, AP takes tied scores as one threshold (no "
                    "interpolation)",
        "submission": {
            "format": "parquet",
            "rows": "one per event (query) of the split, any order; query = the event's position in the split",
            "columns": [{"name": "window", "type": "int64"}, {"name": "query", "type": "int64"},
                        {"name": "pos_score", "type": "float32"}, {"name": "neg_score", "type": "float32"}],
            "window": "the window id of the query (the negatives file's `window`), checked",
        },
    }


TASK = TaskSpec(
    name=TASK_NAME, type=TASK_TYPE, version=TASK_VERSION,
    summary="window-forecast (window-link-forecasting): auc, ap on test",
    applies_to=frozenset({"temporal-graph"}), block=lambda manifest, dataset: task_block(manifest, events(dataset)),
    artifacts="tgbhub.window-negatives", definition=sys.modules[__name__])
