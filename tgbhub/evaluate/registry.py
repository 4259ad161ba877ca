"""Task type -> evaluator class: the one place that decides how a declared task is graded.

Kept apart from ``__init__`` so implementation modules can register themselves without import cycles; the built-in
ones are listed in :data:`EVALUATORS` and imported on its first read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from tgbhub.errors import UnsupportedTaskError
from tgbhub.manifest import Manifest
from tgbhub.plugins import PluginTable

#: ``task["type"]`` -> evaluator class; filled by :func:`register_evaluator` in the modules listed here
EVALUATORS: PluginTable[str, type] = PluginTable("task type", (
    "tgbhub.evaluate.filtered", "tgbhub.evaluate.nodeprop", "tgbhub.evaluate.ranking", "tgbhub.evaluate.rollout",
    "tgbhub.evaluate.snapshot", "tgbhub.evaluate.window"))

E = TypeVar("E", bound=type)


def register_evaluator(task_type: str) -> Callable[[E], E]:
    """Class decorator: grade every task whose manifest ``type`` is ``task_type`` with the decorated class.

    Raises:
        ValueError: if another class already registered ``task_type`` (two graders for one task would disagree).
    """
    def decorate(cls: E) -> E:
        EVALUATORS.add(task_type, cls)
        return cls
    return decorate


def evaluator_class(task: Mapping[str, Any], manifest: Manifest) -> type:
    """The class registered for ``task["type"]``.

    Raises:
        UnsupportedTaskError: if no evaluator is registered for the task's type.
    """
    task_type = task.get("type")
    cls = EVALUATORS.get(str(task_type))
    if cls is None:
        raise UnsupportedTaskError(
            f"{manifest.name}@{manifest.version} declares task type {task_type!r}, which this tgbhub cannot grade "
            f"(it grades {', '.join(sorted(EVALUATORS))}); upgrade tgbhub")
    return cls
