"""The local-build source: regenerate a dataset from its manifest's recipe, bit for bit, with no network."""

from __future__ import annotations

from pathlib import Path

from tgbhub.cache import Fetched
from tgbhub.errors import GenerationError
from tgbhub.manifest import Manifest


class BuildSource:
    """Rebuilds datasets whose manifest carries a recipe, using the bundled generators."""

    name = "build"
    label = "build"
    needs_network = False

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
            GenerationError: if this tgbhub lacks the recipe's generator or generator version, or the family's
                preflight finds this machine cannot reproduce the published values (before building).
        """
        from tgbhub.generators.build import rebuild  # heavy: numba kernels load on use

        built = rebuild(manifest.recipe, staging)
        return Fetched(files=built.files, columns=built.columns, rebuilt=True)
