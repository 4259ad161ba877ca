"""Tasks that derive only from a dataset's existing data (window forecasting), built from its verified columns.

:data:`BUILDERS` maps a task document's recipe generator to the function that rebuilds its artifacts; the client's
task cache (:mod:`tgbhub.taskcache`) looks the recipe up here, never a dataset or task name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tgbhub.errors import GenerationError
from tgbhub.manifest import Recipe

#: ``(dataset manifest, dataset columns, seed) -> {file: {column: array}}``
Builder = Callable[[Any, Mapping[str, Mapping[str, Any]], int], dict[str, dict[str, Any]]]


def builder_for(recipe: Recipe) -> tuple[Builder, Callable[[Mapping[str, Any], Any], Any]]:
    """``(build, write)`` of the task generator a task document's recipe names.

    Raises:
        GenerationError: if this tgbhub lacks that generator or generator version.
    """
    from .task import GENERATOR, GENERATOR_VERSION, build, write

    known = {GENERATOR: (GENERATOR_VERSION, build, write)}
    entry = known.get(recipe.generator)
    if entry is None or entry[0] != recipe.version:
        have = ", ".join(f"{name} {version}" for name, (version, _, _) in known.items())
        raise GenerationError(f"task recipe needs {recipe.generator} {recipe.version}; this tgbhub has {have}. "
                              "Install the tgbhub release that published this task version")
    return entry[1], entry[2]
