"""The local-build source: regenerate a dataset from its manifest's recipe, bit for bit, with no network."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tgbhub.cache import Fetched
from tgbhub.errors import GenerationError
from tgbhub.manifest import Manifest


@dataclass(frozen=True)
class Parent:
    """A derived dataset's verified parent, as its builder reads it: the manifest and every file's columns
    (file name -> column name -> array), exactly as the cache verified them."""

    manifest: Manifest
    columns: Mapping[str, Mapping[str, Any]]


class BuildSource:
    """Rebuilds datasets whose manifest carries a recipe, using the bundled generators.

    ``parents`` holds the verified parents (keyed ``family/name@version``) of the derived datasets it may be asked to
    build; the composition root loads them first (:func:`tgbhub.load_dataset`). The constructor does no I/O.
    """

    name = "build"
    label = "build"
    needs_network = False

    def __init__(self, parents: Mapping[str, Parent] | None = None) -> None:
        self.parents = dict(parents or {})

    def can_serve(self, manifest: Manifest) -> bool:
        return manifest.recipe is not None

    def preflight(self, manifest: Manifest) -> None:
        """Check, without building anything, that this machine would rebuild ``manifest`` bit for bit.

        Raises:
            GenerationError: naming the component that differs (or the missing generator), with the way out.
        """
        from tgbhub.generators.build import preflight

        if manifest.recipe is None:
            raise GenerationError(f"{manifest.name}@{manifest.version} has no recipe, so it cannot be built locally; "
                                  "fetch it from a hub or mirror")
        preflight(manifest.recipe)

    def fetch(self, manifest: Manifest, staging: Path) -> Fetched:
        """Generate the dataset and write its artifacts into ``staging``.

        Raises:
            GenerationError: if this tgbhub lacks the recipe's generator or generator version, the family's
                preflight finds this machine cannot reproduce the published values (before building), or a derived
                dataset's parent was not handed over.
        """
        from tgbhub.generators.build import rebuild  # heavy: numba kernels load on use

        parent = manifest.derived_from
        if parent is not None and parent not in self.parents:
            raise GenerationError(f"{manifest.name}@{manifest.version} is derived from {parent}, which was not "
                                  "loaded first; build it through tgbhub.load_dataset, which verifies the parent")
        built = rebuild(manifest.recipe, staging, self.parents)
        return Fetched(files=built.files, columns=built.columns, rebuilt=True)
