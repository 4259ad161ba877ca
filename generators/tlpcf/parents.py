"""The authoring side's parents: a variant's parent rebuilt with the real generators and checked against its
published manifest (the client side gets parents through the verified cache instead)."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

import numpy as np

from tgbhub.errors import GenerationError
from tgbhub.hashing import content_digest
from tgbhub.manifest import Manifest, read_manifest

from ..families import Inputs, family_of
from ..manifests import MANIFEST_ROOT


@lru_cache(maxsize=1)  # the catalogue lists a parent's 30 variants together: build each parent once
def load_parent(dataset: str) -> tuple[Manifest, Mapping[str, Mapping[str, np.ndarray]]]:
    """The bundled manifest of ``family/name@version`` and its files' columns, rebuilt and digest-checked.

    Raises:
        GenerationError: if the parent cannot be rebuilt, or a rebuilt file's content digest is not the published one.
    """
    name, _, version = dataset.partition("@")
    family, short = name.split("/", 1)
    manifest = read_manifest(MANIFEST_ROOT / family / short / f"{version}.json")
    if manifest.recipe is None:
        raise GenerationError(f"parent {dataset} has no recipe, so its variants cannot be authored here")
    with tempfile.TemporaryDirectory(prefix="tgbhub-parent-") as scratch:
        built = family_of(manifest.recipe).build(manifest.recipe, Path(scratch), Inputs())
    for entry in manifest.files:
        columns = built.columns.get(entry.name)
        if columns is None or content_digest(columns) != entry.digest:
            raise GenerationError(f"parent {dataset} file {entry.name} rebuilt with another content digest than the "
                                  "published one; run the portability checks (tgbhub doctor) on this machine")
    return manifest, built.columns
