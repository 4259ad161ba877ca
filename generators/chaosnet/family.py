"""The ChaosNetBench family's plug-in (registered in :mod:`generators.families`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tgbhub.manifest import Recipe

from ..families import Built, Family, Inputs
from .artifacts import TRAJECTORIES_FILE, build_folder, build_recipe, check_recipe
from .catalogue import GENERATOR, Instance, instances, responsible_ai


def _build(recipe: Recipe, folder: Path, inputs: Inputs) -> Built:
    """One HDF5 file of trajectories and indicators; the cache reads its arrays in place, so none are handed over."""
    return Built(files={TRAJECTORIES_FILE: build_recipe(recipe, folder)})


def _write(instance: Instance, folder: Path, inputs: Inputs) -> dict[str, Any]:
    return build_folder(instance, folder)[1]


FAMILY = Family(name="chaosnet", generators=frozenset({GENERATOR}), catalogue=instances, write=_write,
                build=_build, preflight=check_recipe, responsible_ai=responsible_ai)
