"""The TLPCF family's plug-in: distorted variants of other families' temporal graphs (registered in
:mod:`generators.families`). Its datasets are named after, and published with, their parents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tgbhub.errors import GenerationError
from tgbhub.manifest import Recipe, plain

from ..families import Built, Distances, Family, Inputs
from .artifacts import manifest_document, transform, write
from .catalogue import GENERATOR, VERSION, Derivation, defaults


def _preflight(recipe: Recipe) -> None:
    """Integer and float64 element-wise arithmetic on counter-based draws, stable sorts, no reductions in the values
    (see distort.py): nothing depends on the machine. Only the transform version must be one this tgbhub has.

    Raises:
        GenerationError: if the recipe needs another transform version.
    """
    if recipe.version != VERSION:
        raise GenerationError(f"recipe needs {GENERATOR} version {recipe.version}, this tgbhub has {VERSION}; install "
                              "the tgbhub release that matches the dataset version, or fetch it from a hub")


def _build(recipe: Recipe, folder: Path, inputs: Inputs) -> Built:
    """The variant's files from its verified parent (handed over by the build source)."""
    _preflight(recipe)
    parent = inputs.parents.get(recipe.parent.dataset) if recipe.parent is not None else None
    if parent is None:
        raise GenerationError(f"recipe of {GENERATOR} needs its parent "
                              f"{recipe.parent.dataset if recipe.parent else '(none declared)'}, which was not "
                              "handed over; load the variant with tgbhub.load_dataset")
    params = plain(recipe.params)
    files = transform(parent.manifest, parent.columns, params.pop("kind"), params, int(recipe.seed))
    return Built(files=write(files, folder), columns=files)


def _write(variant: Derivation, folder: Path, inputs: Inputs) -> dict[str, Any]:
    """Build a catalogue variant from its parent, built locally (the parent's manifest is the bundled one)."""
    from .parents import load_parent  # the authoring side builds parents with the real generators

    parent, columns = load_parent(variant.parent)
    files = transform(parent, columns, variant.kind, variant.params, variant.seed)
    write(files, folder)
    return manifest_document(variant, parent, columns, files, folder, _distances(inputs))


def _distances(inputs: Inputs) -> Distances:
    """The ATD/ACD a variant's manifest records, as handed over.

    Raises:
        GenerationError: if none were (a variant's manifest cannot be written without them).
    """
    if inputs.distances is None:
        raise GenerationError("a variant's manifest records ATD/ACD against its parent, but no distance function was "
                              "handed over; run `python -m scripts.manifests` from a checkout, or load the variant "
                              "with tgbhub.load_dataset")
    return inputs.distances


FAMILY = Family(name="tlpcf", generators=frozenset({GENERATOR}), catalogue=defaults, write=_write, build=_build,
                preflight=_preflight, derived=True)
