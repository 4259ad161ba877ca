"""Derived datasets built on request: a canonical variant name the catalogue does not publish (another ``k``,
another seed) is built locally from its verified parent, and its manifest is written by the same generator code
that wrote the published ones.

The manifest of such a variant exists only in the cache that built it, next to the variant's cache entry
(``<cache>/<family>/<name>/<version>.manifest.json``), written after the files were verified and installed; later
loads read it and go through the normal verified path (a damaged or deleted entry is rebuilt from its recipe). A
variant built on request pins the newest version of its base at the time of the first request, like the published
ones pin theirs.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from tgbhub import cache
from tgbhub.cache import Fetched
from tgbhub.errors import DatasetNotFoundError, InvalidNameError, VersionNotFoundError
from tgbhub.manifest import Manifest, parse_manifest, read_manifest
from tgbhub.registry import Registry, parse_reference


def variant_on_request(text: str, version: str | None, registry: Registry, root: Path, opener: Any,
                       not_found: DatasetNotFoundError) -> tuple[Manifest, bool]:
    """The manifest of the variant ``text`` names, building it (into the cache under ``root``) on first request;
    and whether this call built it.

    ``opener(manifest)`` opens a verified dataset and returns ``(dataset, cache entry)`` (the composition root's
    :func:`tgbhub.api.open_verified`, bound to the caller's settings); the parent is opened with it.

    Raises:
        DatasetNotFoundError: ``not_found`` again, if ``text`` names no variant of a known base dataset.
        InvalidNameError: if the variant name is not canonical (naming the canonical one).
        VersionNotFoundError: if a version other than the transform's dataset version is pinned.
        GenerationError: for an unknown kind or invalid parameters (from the transform).
    """
    from tgbhub.generators.tlpcf.artifacts import manifest_document, transform, write  # the build needs them
    from tgbhub.generators.tlpcf.catalogue import DATASET_VERSION, Variant, parse_variant

    reference = parse_reference(text, version)
    parsed = parse_variant(reference.name)
    if parsed is None:
        raise not_found
    base, kind, params, seed = parsed
    wanted = reference.version or DATASET_VERSION
    if wanted != DATASET_VERSION:
        raise VersionNotFoundError(reference.name, wanted, [DATASET_VERSION])
    stored = cache.stored_manifest_path(root, reference.name, wanted)
    if stored.is_file():
        return read_manifest(stored), False
    parent_manifest = registry.resolve(parse_reference(base))  # DatasetNotFoundError names close bases
    variant = Variant(base=base, base_version=parent_manifest.version, kind=kind, params=params, seed=seed)
    if variant.name != reference.name:
        raise InvalidNameError(f"{reference.name!r} is not a canonical variant name; did you mean {variant.name!r}?")
    _, parent_entry = opener(parent_manifest)
    columns = {file: {column: np.load(path, mmap_mode="r", allow_pickle=False) for column, path in paths.items()}
               for file, paths in parent_entry.columns.items()}
    with tempfile.TemporaryDirectory(prefix="tgbhub-variant-") as scratch:
        files = transform(parent_manifest, columns, kind, params, seed)
        written = write(files, Path(scratch))
        document = manifest_document(variant, parent_manifest, columns, files, Path(scratch))
        manifest = parse_manifest(document)

        def fetch(staging: Path) -> Fetched:
            for name, path in written.items():
                shutil.move(str(path), staging / name)
            return Fetched(files={name: staging / name for name in written}, columns=files, rebuilt=True)

        cache.install(manifest, root, fetch)
    cache.write_text_atomic(stored, json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    return manifest, True
