"""The registry of dataset families: who builds which recipe, who writes which manifests.

A family is a plug-in: its own folder declares a :class:`Family` (its generators, its catalogue, how it writes an
entry's artifacts and manifest, how it rebuilds a recipe, and its preflight), and :data:`REGISTERED` names its
module, one line per family. ``python -m scripts.manifests``, the local-build source (:mod:`generators.build`) and
everything else that needs "every family" iterate this registry; nothing else lists families or dispatches on a
generator name's prefix.

Adding a family: write ``generators/<family>/family.py`` defining ``FAMILY``, then add one line to
:data:`REGISTERED`. An importer's family (TGB's) comes with its importer (:mod:`generators.importers`), so a new
importer needs no line here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from tgbhub.errors import GenerationError
from tgbhub.manifest import Manifest, Recipe
from tgbhub.plugins import PluginTable

#: family name -> the module (relative to this package) that defines its ``FAMILY``
REGISTERED: dict[str, str] = {
    "t-grab": ".tgrab.family",
    "chaosnet": ".chaosnet.family",
    "tlpcf": ".tlpcf.family",
}


class CatalogueEntry(Protocol):
    """What the registry needs of a family's catalogue entry (each family's entry type adds its own facts)."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...


#: a family's catalogue entry type (each family's own: T-GRAB's ``Entry``, ChaosNet's ``Instance``, ...)
E = TypeVar("E", bound=CatalogueEntry)


@dataclass(frozen=True)
class Built:
    """Files a builder wrote (manifest file name -> path) and the columns it still holds in memory (may be empty),
    so the cache need not decode them again."""

    files: dict[str, Path]
    columns: Mapping[str, Mapping[str, np.ndarray]] = field(default_factory=dict)


class Parent(Protocol):
    """A verified parent dataset as a derived dataset's builder reads it (the build source hands over
    :class:`tgbhub.local.gateway.Parent`): its manifest and every file's columns, exactly as the cache verified them."""

    @property
    def manifest(self) -> Manifest: ...

    @property
    def columns(self) -> Mapping[str, Mapping[str, np.ndarray]]: ...


class Distances(Protocol):
    """The evaluator's ATD/ACD (:func:`tgbhub.evaluate.metrics.generative_scores`): ``(src, dst, t)`` of the reference
    events and of the candidate's -> named distances (``atd``, ``acd``, their reverse and symmetric forms, ``T``,
    ``tau_bar``, ...)."""

    def __call__(self, reference: Sequence[np.ndarray], candidate: Sequence[np.ndarray], *,
                 fallback: str = ...) -> Mapping[str, float]: ...


@dataclass(frozen=True)
class Inputs:
    """What a builder reads besides its recipe, handed over by whoever runs it (the build source, the authoring
    command; never read from the environment or imported from the library): the verified parents of a derived
    recipe, keyed ``family/name@version``; the cache root, where an importer keeps the release it read; and
    ``distances``, the evaluator's ATD/ACD (:func:`tgbhub.evaluate.metrics.generative_scores`) that a derived
    dataset's manifest records against its parent. ``None``: not handed over."""

    parents: Mapping[str, Parent] = field(default_factory=dict)
    cache_root: Path | None = None
    distances: Distances | None = None


@dataclass(frozen=True)
class Family(Generic[E]):
    """One family's plug-in, over its catalogue entry type ``E``.

    ``generators``: the recipe generator names this family builds. ``catalogue()``: every dataset version it
    publishes. ``write(entry, folder, inputs)``: build ``entry``'s artifacts into ``folder`` and return its manifest
    document.
    ``build(recipe, folder, inputs)``: rebuild a published recipe's artifacts (the local-build source) from what
    :class:`Inputs` hands over. ``preflight(recipe)``: refuse,
    before any long work, a build this machine could not reproduce. ``derived``: its datasets are derived from other
    datasets, and their manifests are published as entries of the parent family's ``derived.json`` (manifest sha256,
    size, rows) instead of shipped: a client derives each manifest from the parent's and checks it byte for byte.
    ``responsible_ai(entry)``: the Croissant RAI fields of a catalogue entry's manifest, which ``write`` records too;
    ``python -m scripts.manifests --metadata-only`` sets them on the committed manifests without rebuilding (``None``: a
    family whose manifests are not committed, or derived and so rewritten by a rebuild).
    """

    name: str
    generators: frozenset[str]
    catalogue: Callable[[], Sequence[E]]
    write: Callable[[E, Path, Inputs], dict[str, Any]]
    build: Callable[[Recipe, Path, Inputs], Built]
    preflight: Callable[[Recipe], None]
    derived: bool = False
    responsible_ai: Callable[[E], Mapping[str, Any]] | None = None


#: a family whichever its entry type: what the registry holds, every family having its own
AnyFamily = Family[Any]

#: the registered families, each module imported when its family is first read
FAMILIES: PluginTable[str, AnyFamily] = PluginTable("dataset family", REGISTERED, attribute="FAMILY",
                                                    package=__package__, error=GenerationError)


def family(name: str) -> AnyFamily:
    """The registered family ``name`` (a family of this registry, or the one an importer brings).

    Raises:
        GenerationError: if no family of that name is registered, or its module defines another family.
    """
    if name in FAMILIES:
        return FAMILIES[name]
    for found in _importer_families():
        if found.name == name:
            return found
    raise GenerationError(f"no dataset family {name!r} is registered (known: {', '.join(f.name for f in families())});"
                          " upgrade tgbhub, or register the family in generators/families.py")


def families() -> list[AnyFamily]:
    """Every registered family, in registration order, then the families importers bring (each rebuilds the datasets
    its importer imported)."""
    return [*FAMILIES.values(), *_importer_families()]


def _importer_families() -> list[AnyFamily]:
    from .importers import importers  # the importer registry: a plug-in brings its family with it

    return [i.builder for i in importers() if i.builder is not None]


def family_of(recipe: Recipe) -> AnyFamily:
    """The family whose generators include the recipe's generator.

    Raises:
        GenerationError: if no registered family builds that generator.
    """
    for candidate in families():
        if recipe.generator in candidate.generators:
            return candidate
    known = sorted(g for f in families() for g in f.generators)
    raise GenerationError(f"recipe names generator {recipe.generator!r}, which no family of this tgbhub builds "
                          f"(known: {', '.join(known)}); upgrade tgbhub, or fetch the dataset from a hub")
