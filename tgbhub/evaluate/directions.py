"""Which metric a task ranks by, and which way it improves (leaderboards, :mod:`tgbhub.results.ranking`).

A task names its primary metric (``primary_metric``, else ``metric``, else the first of ``metrics``). Scores and
rates (MRR, Hits@k, F1, AUC, AP, VPT, NDCG) improve upwards; errors and distances improve downwards. That is a fact
of the metric, not of a dataset, so it lives here; a task may still declare ``higher_is_better`` for its primary
metric, which wins.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tgbhub.errors import ManifestError

#: metrics (and their families: ``nrmse_at_12``, ``mse_h3``) where lower is better
LOWER_IS_BETTER = ("mse", "mae", "rmse", "nrmse", "test_mse", "atd", "acd", "loss")


def primary_metric(task: Mapping[str, Any]) -> str:
    """The metric ``task`` is ranked by.

    Raises:
        ManifestError: if the task names no metric at all.
    """
    metrics = task.get("metrics") or ()
    chosen = task.get("primary_metric") or task.get("metric") or (metrics[0] if metrics else None)
    if not chosen:
        raise ManifestError(f"task {task.get('name')!r} names no metric (primary_metric, metric or metrics); "
                            "declare its primary_metric in the manifest")
    return str(chosen)


def higher_is_better(metric: str, task: Mapping[str, Any] | None = None) -> bool:
    """Whether a larger ``metric`` is better: the task's ``higher_is_better`` when it declares one, else by the
    metric's name (see :data:`LOWER_IS_BETTER`)."""
    declared = (task or {}).get("higher_is_better")
    if isinstance(declared, bool):
        return declared
    base = metric.split("@", 1)[0]
    return not any(base == name or base.startswith(f"{name}_") for name in LOWER_IS_BETTER)
