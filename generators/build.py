"""The one entry point of the local-build source: rebuild every artifact a recipe declares, into a folder.

Each family registers a builder in :data:`BUILDERS`, keyed by the family part of the recipe's generator name
(``t-grab`` for ``t-grab/periodic-er``). A builder writes its files into ``folder`` and returns them with any columns
it still holds in memory, so the cache need not decode them again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from generators.artifacts import generate, write_all
from tgbhub.errors import GenerationError
from tgbhub.manifest import Recipe, plain


@dataclass(frozen=True)
class Built:
    """Files a builder wrote (manifest file name -> path) and the columns it has in memory (may be empty)."""

    files: dict[str, Path]
    columns: dict[str, Mapping[str, np.ndarray]] = field(default_factory=dict)


def _temporal_graph(recipe: Recipe, folder: Path) -> Built:
    """Edges plus, when the recipe asks, the ranking task's negatives (every file the manifest declares)."""
    edges = generate(recipe)
    columns = write_all(plain(recipe.params), recipe.generator, recipe.seed, edges, folder)
    return Built(files={name: folder / name for name in columns}, columns=columns)


def _chaosnet(recipe: Recipe, folder: Path) -> Built:
    """One HDF5 file of trajectories and indicators; the cache reads its arrays in place, so none are handed over."""
    from generators.chaosnet.artifacts import TRAJECTORIES_FILE, build_recipe  # numba kernels compile on use

    return Built(files={TRAJECTORIES_FILE: build_recipe(recipe, folder)})


BUILDERS: dict[str, Callable[[Recipe, Path], Built]] = {"t-grab": _temporal_graph, "chaosnet": _chaosnet}


def rebuild(recipe: Recipe, folder: Path) -> Built:
    """Regenerate the artifacts of ``recipe`` into ``folder``.

    Raises:
        GenerationError: if no builder serves the recipe's family, or the generator (version) is unknown.
    """
    family = recipe.generator.split("/", 1)[0]
    builder = BUILDERS.get(family)
    if builder is None:
        raise GenerationError(f"recipe names generator {recipe.generator!r}, whose family {family!r} this tgbhub "
                              f"cannot build (known: {', '.join(sorted(BUILDERS))}); upgrade tgbhub")
    return builder(recipe, folder)
