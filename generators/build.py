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

from .artifacts import generate, write_all
from .catalogue import GENERATORS
from .libm import check_libm
from tgbhub.errors import GenerationError
from tgbhub.manifest import Recipe, plain


@dataclass(frozen=True)
class Built:
    """Files a builder wrote (manifest file name -> path) and the columns it has in memory (may be empty)."""

    files: dict[str, Path]
    columns: dict[str, Mapping[str, np.ndarray]] = field(default_factory=dict)


def _temporal_graph(recipe: Recipe, folder: Path) -> Built:
    """Edges plus, when the recipe asks, the ranking task's negatives (every file the manifest declares)."""
    _tgrab_check(recipe)
    edges = generate(recipe)
    columns = write_all(plain(recipe.params), recipe.generator, recipe.seed, edges, folder)
    return Built(files={name: folder / name for name in columns}, columns=columns)


def _chaosnet(recipe: Recipe, folder: Path) -> Built:
    """One HDF5 file of trajectories and indicators; the cache reads its arrays in place, so none are handed over."""
    from .chaosnet.artifacts import TRAJECTORIES_FILE, build_recipe  # numba kernels compile on use

    return Built(files={TRAJECTORIES_FILE: build_recipe(recipe, folder)})


def _chaosnet_check(recipe: Recipe) -> None:
    from .chaosnet.artifacts import check_recipe  # numba kernels compile on use

    check_recipe(recipe)


def _tgrab_check(recipe: Recipe) -> None:
    """T-GRAB values are integer arithmetic on frozen random streams (see generators/tgrab.py), except the SBM's
    ``log``: probe the C library for the generators that call it."""
    spec = GENERATORS.get(recipe.generator)
    if spec is not None and spec.uses_libm:
        check_libm()


BUILDERS: dict[str, Callable[[Recipe, Path], Built]] = {"t-grab": _temporal_graph, "chaosnet": _chaosnet}
#: each family's preflight: cheap checks that refuse a build this machine could not reproduce, before it starts
CHECKS: dict[str, Callable[[Recipe], None]] = {"t-grab": _tgrab_check, "chaosnet": _chaosnet_check}


def _family(recipe: Recipe) -> str:
    family = recipe.generator.split("/", 1)[0]
    if family not in BUILDERS:
        raise GenerationError(f"recipe names generator {recipe.generator!r}, whose family {family!r} this tgbhub "
                              f"cannot build (known: {', '.join(sorted(BUILDERS))}); upgrade tgbhub")
    return family


def preflight(recipe: Recipe) -> None:
    """Check, without building, that this machine reproduces ``recipe``'s published values.

    Raises:
        GenerationError: if no builder serves the recipe's family, or a check names a component that differs.
    """
    CHECKS[_family(recipe)](recipe)


def rebuild(recipe: Recipe, folder: Path) -> Built:
    """Regenerate the artifacts of ``recipe`` into ``folder`` (each builder runs its family's preflight first).

    Raises:
        GenerationError: if no builder serves the recipe's family, the generator (version) is unknown, or the
            preflight refuses.
    """
    return BUILDERS[_family(recipe)](recipe, folder)
