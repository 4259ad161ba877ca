"""The T-GRAB family's plug-in (registered in :mod:`generators.families`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tgbhub.manifest import Recipe, plain

from ..families import Built, Family, Inputs
from ..libm import check_libm
from .artifacts import build_folder, generate, write_all
from .catalogue import GENERATORS, Entry, entries, responsible_ai


def _preflight(recipe: Recipe) -> None:
    """T-GRAB values are integer arithmetic on frozen random streams (see generators/tgrab/protocol.py), except the
    SBM's ``log``: probe the C library for the generators that call it."""
    spec = GENERATORS.get(recipe.generator)
    if spec is not None and spec.uses_libm:
        check_libm()


def _build(recipe: Recipe, folder: Path, inputs: Inputs) -> Built:
    """Edges plus, when the recipe asks, the ranking task's negatives (every file the manifest declares)."""
    _preflight(recipe)
    edges = generate(recipe)
    columns = write_all(plain(recipe.params), recipe.generator, recipe.seed, edges, folder)
    return Built(files={name: folder / name for name in columns}, columns=columns)


def _write(entry: Entry, folder: Path, inputs: Inputs) -> dict[str, Any]:
    return build_folder(entry, folder)[1]


FAMILY = Family(name="t-grab", generators=frozenset(GENERATORS), catalogue=entries, write=_write, build=_build,
                preflight=_preflight, responsible_ai=responsible_ai)
