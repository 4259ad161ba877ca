"""Derived datasets built on request: any canonical variant name (``base~kind[-pN...]-sSEED``) is built locally from
its verified parent, and its manifest is written by the same generator code that wrote the published ones.

The catalogue publishes some variants (TLPCF's defaults) without shipping their manifests: its derived index
(``manifests/<family>/derived.json``) holds each one's manifest sha256, and the manifest derived here must equal it
byte for byte before anything is installed. Other variants (another ``k``, another seed, another transform) are
built the same way, with nothing published to compare against.

Identity: a variant's version is its parent's. ``family/base~shuffle-s23@1.0.0`` is derived from
``family/base@1.0.0`` on every machine, whatever other versions of the base a machine holds; without a version, the
newest version of the base is taken (as for any dataset).

The manifest of such a variant exists only in the cache that built it, next to the variant's cache entry
(``<cache>/<family>/<name>/<version>.manifest.json``); it is written under the entry's lock, after the files were
verified and installed (:func:`tgbhub.local.gateway.build_and_install`), so concurrent processes build once. Later
loads read it and go through the normal verified path (a damaged or deleted entry is rebuilt from its recipe).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tgbhub.cache import CacheEntry
from tgbhub.data import TemporalGraphDataset, TrajectoryDataset
from tgbhub.errors import DatasetNotFoundError, GenerationError, InvalidNameError, VersionNotFoundError
from tgbhub.local.gateway import (
    Parent,
    build_and_install,
    canonical_derived_name,
    check_transform_applies,
    derived_builder,
    parse_derived_name,
)
from tgbhub.manifest import Manifest
from tgbhub.registry import Registry, parse_reference

if TYPE_CHECKING:
    from tgbhub.local.gateway import Distances


def derived_on_request(text: str, version: str | None, registry: Registry, root: Path,
                       opener: Callable[[Manifest], tuple[TemporalGraphDataset | TrajectoryDataset, CacheEntry]],
                       not_found: DatasetNotFoundError,
                       fetch_published: Callable[[str, str], bytes | None] | None = None,
                       distances: Distances | None = None) -> tuple[Manifest, bool]:
    """The manifest of the variant ``text`` names, building it (into the cache under ``root``) on first request;
    and whether this call built it.

    ``opener(manifest)`` opens a verified dataset and returns ``(dataset, cache entry)`` (the composition root's
    :func:`tgbhub.api.open_verified`, bound to the caller's settings); the parent is opened with it.
    ``fetch_published(name, version)``: a published variant's manifest from a hub (bytes, or ``None``), taken
    instead of building when it is the one the catalogue's derived index publishes. ``distances``: the evaluator's
    ATD/ACD, which a variant's manifest records against its parent (the composition root hands it over).

    Raises:
        DatasetNotFoundError: ``not_found`` again, if ``text`` names no variant of a known base dataset.
        InvalidNameError: if the variant name is not canonical (naming the canonical one).
        VersionNotFoundError: if the base has no such version (a variant's versions are its base's).
        GenerationError: for an unknown transform, an out-of-range parameter (naming the range), a base of a kind the
            transform does not apply to (naming the kinds), or a failed build.
        IntegrityError: if a published variant's manifest derived here is not the published one.
    """
    reference = parse_reference(text, version)
    parsed = parse_derived_name(reference.name)
    if parsed is None:
        raise not_found
    base, kind, params, seed = parsed
    canonical = canonical_derived_name(base, kind, params, seed)  # GenerationError: unknown kind, bounds
    if canonical != reference.name:
        raise InvalidNameError(f"{reference.name!r} is not a canonical variant name; did you mean {canonical!r}?")
    try:
        parent_manifest = registry.resolve(parse_reference(base, reference.version))
    except VersionNotFoundError as missing:  # name the variant, whose versions are the base's
        raise VersionNotFoundError(reference.name, str(reference.version), registry.versions(base)) from missing
    check_transform_applies(kind, parent_manifest)

    def open_parent() -> Parent:
        _, entry = opener(parent_manifest)
        return Parent(parent_manifest, {
            file: {column: np.load(path, mmap_mode="r", allow_pickle=False) for column, path in paths.items()}
            for file, paths in entry.columns.items()})

    version = parent_manifest.version
    published = registry.derived(reference.name, version)
    if distances is None:
        raise GenerationError(f"building {reference.name} records ATD/ACD against its parent, but no distance "
                              "function was handed over; load it with tgbhub.load_dataset")
    return build_and_install(root, reference.name, version,
                             derived_builder(open_parent, kind, params, seed, distances),
                             expected_sha256=published.manifest_sha256 if published is not None else None,
                             fetch_published=None if fetch_published is None else
                             (lambda: fetch_published(reference.name, version)))
