"""The local-build source: regenerate a dataset from its manifest's recipe, bit for bit, with no network."""

from __future__ import annotations

from pathlib import Path

from tgbhub.cache import Fetched
from tgbhub.manifest import Manifest


class BuildSource:
    """Rebuilds datasets whose manifest carries a recipe, using the bundled generators."""

    name = "build"
    label = "build"
    needs_network = False

    def can_serve(self, manifest: Manifest) -> bool:
        return manifest.recipe is not None

    def fetch(self, manifest: Manifest, staging: Path) -> Fetched:
        """Generate the dataset and write its artifacts into ``staging``.

        Raises:
            GenerationError: if this tgbhub lacks the recipe's generator or generator version.
        """
        from generators.build import rebuild  # heavy: numba kernels load on use

        built = rebuild(manifest.recipe, staging)
        return Fetched(files=built.files, columns=built.columns, rebuilt=True)
