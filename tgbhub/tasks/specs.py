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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from tgbhub.errors import ManifestError
from tgbhub.manifest import Manifest
from tgbhub.plugins import PluginTable

if TYPE_CHECKING:
    from pathlib import Path

    import numpy as np

    from tgbhub.forecasting.windows import EventDataset

#: task name -> the module that defines its ``TASK``
REGISTERED: dict[str, str] = {
    "window-forecast": "tgbhub.forecasting.task",
}


class TaskArtifactsBuilder(Protocol):
    """What the library uses of a task's artifacts builder (a plug-in's own, or
    :class:`generators.forecast.TaskArtifacts`): its recipe ``generator``, ``version`` and ``seed``, and
    ``build(manifest, columns, seed, definition) -> {file: {column: array}}``, ``write(files, folder) -> {file:
    path}``, ``document(manifest, columns, files, folder, definition) -> task document``."""

    @property
    def generator(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def seed(self) -> int: ...

    @property
    def build(self) -> Callable[..., dict[str, dict[str, np.ndarray]]]: ...

    @property
    def write(self) -> Callable[..., Mapping[str, Path]]: ...

    @property
    def document(self) -> Callable[..., dict[str, Any]]: ...


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
    block: Callable[[Manifest, EventDataset], dict[str, Any]]
    artifacts: str | TaskArtifactsBuilder
    #: opaque to the library: handed unchanged to the task's own builder
    definition: object = None
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
