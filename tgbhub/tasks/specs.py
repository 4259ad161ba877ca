"""The task registry: every task a dataset can declare without a new data version (docs/design.md), as plug-ins.

A task plug-in is one module defining ``TASK`` (a :class:`TaskSpec`: its name and type, which datasets declare it,
its task block, how its artifacts are built and, for a type :mod:`tgbhub.evaluate` does not grade yet, its
evaluator), named here by one line of :data:`REGISTERED`. A dataset of a kind the task applies to declares it on
request when no bundled task document does; its document and artifacts are built from the verified data on first use
(:mod:`tgbhub.local.task_artifacts`). Loading, ``tgbhub info``, ``tgbhub build --tasks`` and grading read this
registry; nothing else lists tasks.

Adding a task: write a module defining ``TASK`` (its artifacts builder in the same folder, or a generator of
``generators/``), then add one line to :data:`REGISTERED`.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tgbhub.errors import ManifestError
from tgbhub.manifest import Manifest
from tgbhub.plugins import PluginTable

#: task name -> the module that defines its ``TASK``
REGISTERED: dict[str, str] = {
    "window-forecast": "tgbhub.forecasting.task",
}


@dataclass(frozen=True)
class TaskSpec:
    """One task plug-in.

    ``name``/``type``/``version``: the task (its evaluator is looked up by ``type``) and its document's version.
    ``summary``: one line for ``tgbhub info``. ``applies_to``: the dataset kinds (``graph.kind``) that declare it on
    request. ``block(manifest, dataset)``: the task block an evaluator is bound to. ``artifacts``: how its artifacts
    are built: a recipe generator name of ``generators/`` (e.g. ``tgbhub.window-negatives``), or a plug-in's own
    builder with ``generator``, ``version``, ``seed``, ``build``, ``write`` and ``document`` (see
    :class:`generators.forecast.TaskArtifacts`). ``definition``: what the builder is handed (the window task: its
    module of definitions). ``evaluator``: the evaluator class of ``type``, when :mod:`tgbhub.evaluate` has none.
    """

    name: str
    type: str
    version: str
    summary: str
    applies_to: frozenset[str]
    block: Callable[[Manifest, Any], dict[str, Any]]
    artifacts: Any
    definition: Any = None
    evaluator: builtins.type | None = None  # builtins.: the field ``type`` above shadows the builtin here


#: the registered tasks, each module imported when its task is first read
TASKS: PluginTable[str, TaskSpec] = PluginTable("task", REGISTERED, attribute="TASK", error=ManifestError)


def task_spec(name: str) -> TaskSpec | None:
    """The registered task ``name``, or ``None``.

    Raises:
        ManifestError: if the registered module defines no task, or another task than its registration line names.
    """
    return TASKS.get(name)


def task_specs() -> list[TaskSpec]:
    """Every registered task, in registration order."""
    return list(TASKS.values())


def declared_on_request(manifest: Manifest, bundled: set[str]) -> list[TaskSpec]:
    """The registered tasks ``manifest`` declares on request: those that apply to its kind and that none of its
    ``bundled`` task documents (by task name) already declares."""
    kind = manifest.graph.get("kind")
    return [spec for spec in task_specs() if kind in spec.applies_to and spec.name not in bundled]
