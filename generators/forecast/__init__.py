"""Artifacts of tasks that derive only from a dataset's existing data (window forecasting), built from its verified
columns.

:data:`ARTIFACTS` maps a task document's recipe generator to the builder of its artifacts; the client's task cache
(:mod:`tgbhub.local.task_artifacts`, through :mod:`tgbhub.local.gateway`) looks the recipe up here, never a dataset or
task name. A builder is handed the task's definition (the library's task plug-in) as ``definition``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tgbhub.errors import GenerationError
from tgbhub.manifest import Recipe


@dataclass(frozen=True)
class TaskArtifacts:
    """How one task's artifacts are built: ``build(manifest, columns, seed, definition) -> {file: {column: array}}``,
    ``write(files, folder) -> {file: path}``, ``document(manifest, columns, files, folder, definition) -> dict`` (the
    task document), by ``generator`` at ``version`` with recipe seed ``seed``."""

    generator: str
    version: str
    seed: int
    build: Callable[..., dict[str, dict[str, Any]]]
    write: Callable[..., dict[str, Any]]
    document: Callable[..., dict[str, Any]]


def _window() -> TaskArtifacts:
    from .task import GENERATOR, GENERATOR_VERSION, SEED, build, task_document, write

    return TaskArtifacts(GENERATOR, GENERATOR_VERSION, SEED, build, write, task_document)


#: recipe generator -> its artifacts builder (loaded on use: numba kernels load with it)
ARTIFACTS: dict[str, Callable[[], TaskArtifacts]] = {"tgbhub.window-negatives": _window}


def artifacts_for(generator: str, version: str | None = None) -> TaskArtifacts:
    """The builder of a task's artifacts named by its recipe generator (and version, when given).

    Raises:
        GenerationError: if this tgbhub lacks that generator or generator version.
    """
    loader = ARTIFACTS.get(generator)
    found = loader() if loader is not None else None
    if found is None or (version is not None and found.version != version):
        have = ", ".join(sorted(ARTIFACTS))
        raise GenerationError(f"task recipe needs {generator} {version or ''}".rstrip() + f"; this tgbhub has {have}. "
                              "Install the tgbhub release that published this task version")
    return found


def builder_for(recipe: Recipe) -> TaskArtifacts:
    """The builder of the artifacts a task document's recipe names.

    Raises:
        GenerationError: if this tgbhub lacks that generator or generator version.
    """
    return artifacts_for(recipe.generator, recipe.version)
