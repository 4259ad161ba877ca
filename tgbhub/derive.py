"""Derived datasets built on request: a canonical variant name the catalogue does not publish (another ``k``,
another seed, another transform) is built locally from its verified parent, and its manifest is written by the same
generator code that wrote the published ones.

Identity: a variant's version is its parent's. ``family/base~shuffle-s23@1.0.0`` is derived from
``family/base@1.0.0`` on every machine, whatever other versions of the base a machine holds; without a version, the
newest version of the base is taken (as for any dataset).

The manifest of such a variant exists only in the cache that built it, next to the variant's cache entry
(``<cache>/<family>/<name>/<version>.manifest.json``); it is written under the entry's lock, after the files were
verified and installed (:func:`tgbhub.sources.build.build_and_install`), so concurrent processes build once. Later
loads read it and go through the normal verified path (a damaged or deleted entry is rebuilt from its recipe).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tgbhub.errors import DatasetNotFoundError, InvalidNameError, VersionNotFoundError
from tgbhub.manifest import Manifest
from tgbhub.registry import Registry, parse_reference
from tgbhub.sources.build import (Parent, build_and_install, canonical_variant_name, check_transform_applies,
                                  parse_variant_name, variant_builder)


def variant_on_request(text: str, version: str | None, registry: Registry, root: Path, opener: Any,
                       not_found: DatasetNotFoundError) -> tuple[Manifest, bool]:
    """The manifest of the variant ``text`` names, building it (into the cache under ``root``) on first request;
    and whether this call built it.

    ``opener(manifest)`` opens a verified dataset and returns ``(dataset, cache entry)`` (the composition root's
    :func:`tgbhub.api.open_verified`, bound to the caller's settings); the parent is opened with it.

    Raises:
        DatasetNotFoundError: ``not_found`` again, if ``text`` names no variant of a known base dataset.
        InvalidNameError: if the variant name is not canonical (naming the canonical one).
        VersionNotFoundError: if the base has no such version (a variant's versions are its base's).
        GenerationError: for an unknown transform, an out-of-range parameter (naming the range), a base of a kind the
            transform does not apply to (naming the kinds), or a failed build.
    """
    reference = parse_reference(text, version)
    parsed = parse_variant_name(reference.name)
    if parsed is None:
        raise not_found
    base, kind, params, seed = parsed
    canonical = canonical_variant_name(base, kind, params, seed)  # GenerationError: unknown kind, bounds
    if canonical != reference.name:
        raise InvalidNameError(f"{reference.name!r} is not a canonical variant name; did you mean {canonical!r}?")
    try:
        parent_manifest = registry.resolve(parse_reference(base, reference.version))
    except VersionNotFoundError as missing:  # name the variant, whose versions are the base's
        raise VersionNotFoundError(reference.name, str(reference.version), registry.versions(base)) from missing
    check_transform_applies(kind, parent_manifest)
    _, parent_entry = opener(parent_manifest)
    parent = Parent(parent_manifest, {
        file: {column: np.load(path, mmap_mode="r", allow_pickle=False) for column, path in paths.items()}
        for file, paths in parent_entry.columns.items()})
    return build_and_install(root, reference.name, parent_manifest.version,
                             variant_builder(parent, kind, params, seed))
