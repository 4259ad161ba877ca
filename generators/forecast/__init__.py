"""Artifacts of tasks that derive only from a dataset's existing data (window forecasting), built from its verified
columns.

:data:`ARTIFACTS` maps a task document's recipe generator to the builder of its artifacts; the client's task cache
(:mod:`tgbhub.local.task_artifacts`, through :mod:`tgbhub.local.gateway`) looks the recipe up here, never a dataset or
task name. A builder is handed the task's definition (the library's task plug-in) as ``definition``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from tgbhub.errors import GenerationError
from tgbhub.manifest import Manifest, Recipe

if TYPE_CHECKING:  # for annotations only
    import numpy as np


class DatasetView(Protocol):
    """What the definition's ``events`` reads of a dataset: its verified edge columns and its manifest."""

    @property
    def t(self) -> np.ndarray: ...

    @property
    def src(self) -> np.ndarray: ...

    @property
    def dst(self) -> np.ndarray: ...

    @property
    def manifest(self) -> Manifest: ...


class Events(Protocol):
    """What the builders read of the definition's events (the library's ``tgbhub.forecasting.windows.Events``)."""

    @property
    def t(self) -> np.ndarray: ...

    @property
    def num_nodes(self) -> int: ...

    @property
    def symmetric(self) -> bool: ...

    def range(self, split: str) -> tuple[int, int]: ...

    def pair_codes(self) -> np.ndarray: ...


class Windows(Protocol):
    """What the builders read of one split's windows (the library's ``tgbhub.forecasting.windows.WindowIndex``)."""

    @property
    def lo(self) -> np.ndarray: ...

    @property
    def hi(self) -> np.ndarray: ...

    @property
    def sizes(self) -> np.ndarray: ...

    def window_of(self, positions: np.ndarray) -> np.ndarray: ...

    def __len__(self) -> int: ...


#: the definition's events type
Ev = TypeVar("Ev", bound=Events)


class Definition(Protocol[Ev]):
    """The task's definition as the builders read it (the window task's: the library's module
    ``tgbhub.forecasting.task``), over its events type: names, versions, events, windows, horizon and task block."""

    TASK_NAME: str
    TASK_VERSION: str
    PUBLISHED: str
    CITATION: str

    def events(self, dataset: DatasetView) -> Ev: ...

    def horizon_of(self, ev: Ev) -> dict[str, Any]: ...

    def graded_splits(self, manifest: Manifest) -> list[str]: ...

    def window_index(self, ev: Ev, split: str, horizon: float) -> Windows: ...

    def negatives_file(self, split: str) -> str: ...

    def task_block(self, manifest: Manifest, ev: Ev) -> dict[str, Any]: ...


class Build(Protocol):
    """``build(manifest, columns, seed, definition) -> {file: {column: array}}``."""

    def __call__(self, manifest: Manifest, columns: Mapping[str, Mapping[str, np.ndarray]], seed: int,
                 definition: Definition[Ev]) -> dict[str, dict[str, np.ndarray]]: ...


class Document(Protocol):
    """``document(manifest, columns, files, folder, definition[, seed]) -> task document``."""

    def __call__(self, manifest: Manifest, columns: Mapping[str, Mapping[str, np.ndarray]],
                 files: Mapping[str, Mapping[str, np.ndarray]], folder: Path, definition: Definition[Ev],
                 seed: int = ...) -> dict[str, Any]: ...


@dataclass(frozen=True)
class TaskArtifacts:
    """How one task's artifacts are built: ``build(manifest, columns, seed, definition) -> {file: {column: array}}``,
    ``write(files, folder) -> {file: path}``, ``document(manifest, columns, files, folder, definition) -> dict`` (the
    task document), by ``generator`` at ``version`` with recipe seed ``seed``."""

    generator: str
    version: str
    seed: int
    build: Build
    write: Callable[[Mapping[str, Mapping[str, np.ndarray]], Path], dict[str, Path]]
    document: Document


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
