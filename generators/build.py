"""The one entry point of the local-build source: check and rebuild what a recipe declares, into a folder.

The recipe's generator picks its family from the registry (:mod:`generators.families`); the family's builder
writes every file the manifest declares and returns them with any columns it still holds in memory.
"""

from __future__ import annotations

from pathlib import Path

from tgbhub.manifest import Recipe

from .families import Built, Inputs, Parent, family_of

__all__ = ["Built", "Inputs", "Parent", "preflight", "rebuild"]


def preflight(recipe: Recipe) -> None:
    """Check, without building, that this machine reproduces ``recipe``'s published values.

    Raises:
        GenerationError: if no family builds the recipe's generator, or a check names a component that differs.
    """
    family_of(recipe).preflight(recipe)


def rebuild(recipe: Recipe, folder: Path, inputs: Inputs | None = None) -> Built:
    """Regenerate the artifacts of ``recipe`` into ``folder`` (each family runs its preflight first).

    ``inputs``: the verified parents of a derived recipe and the cache root (see :class:`Inputs`).

    Raises:
        GenerationError: if no family builds the recipe's generator, the generator (version) is unknown, a
            parent is missing, or the preflight refuses.
    """
    return family_of(recipe).build(recipe, folder, inputs or Inputs())
