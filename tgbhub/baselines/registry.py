"""``(task type, model) -> baseline function``: how ``tgbhub baseline MODEL NAME`` finds its implementation."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from tgbhub.errors import UnsupportedTaskError
from tgbhub.plugins import PluginTable

#: a baseline: ``fn(dataset, task, split) -> submission`` (column name -> array, the task's submission schema)
Baseline = Callable[[Any, Mapping[str, Any], str], Mapping[str, Any]]

#: ``(task type, model name)`` -> baseline function; filled by :func:`register_baseline` in the modules listed here
BASELINES: PluginTable[tuple[str, str], Baseline] = PluginTable("baseline", (
    "tgbhub.baselines.edgebank", "tgbhub.baselines.forecast", "tgbhub.baselines.persistence",
    "tgbhub.baselines.recency", "tgbhub.baselines.trajectory"))


F = TypeVar("F")


def registering(table: PluginTable[tuple[str, str], F], task_type: str, model: str) -> Callable[[F], F]:
    """A decorator putting its function into ``table`` under ``(task_type, model)`` (the baselines' and the
    trainers' registries share it).

    Raises:
        ValueError: if ``(task_type, model)`` is already registered to another function (a programming error).
    """
    def decorate(fn: F) -> F:
        table.add((task_type, model), fn)
        return fn
    return decorate


def register_baseline(task_type: str, model: str) -> Callable[[Baseline], Baseline]:
    """Decorator: ``model`` produces submissions for every task of type ``task_type``.

    Raises:
        ValueError: if ``(task_type, model)`` is already registered to another function.
    """
    return registering(BASELINES, task_type, model)


def models_for(task_type: str) -> list[str]:
    """Every model registered for ``task_type``, sorted."""
    return sorted(model for kind, model in BASELINES if kind == task_type)


def baseline_for(task: Mapping[str, Any], model: str) -> Baseline:
    """The function registered for ``(task["type"], model)``.

    Raises:
        UnsupportedTaskError: if no such baseline exists (the message lists the models for that task type).
    """
    fn = BASELINES.get((str(task.get("type")), model))
    if fn is None:
        known = models_for(str(task.get("type")))
        raise UnsupportedTaskError(f"no baseline {model!r} for task type {task.get('type')!r}; available: "
                                   f"{', '.join(known) or 'none'}")
    return fn
