"""The public entry points: they wire names -> manifests -> cache -> sources -> dataset objects."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from tgbhub import cache, config
from tgbhub.data import TemporalGraphDataset, open_dataset
from tgbhub.errors import GenerationError, IntegrityError, SourceUnavailableError
from tgbhub.manifest import Manifest
from tgbhub.progress import Steps
from tgbhub.registry import Registry, parse_reference
from tgbhub.sources import Source
from tgbhub.sources.build import BuildSource

_REGISTRY = Registry()


def registry() -> Registry:
    """The catalogue of bundled manifests."""
    return _REGISTRY


def default_sources() -> list[Source]:
    """Sources tried, in order, when the cache misses."""
    return [BuildSource()]


def resolve(name: str, version: str | None = None) -> Manifest:
    """The manifest ``name`` (optionally ``@version``) refers to.

    Raises:
        InvalidNameError: if the name is malformed (before any path is built).
        DatasetNotFoundError: if no such dataset exists (with suggestions).
        VersionNotFoundError: if the version does not exist (listing the available ones).
    """
    return _REGISTRY.resolve(parse_reference(name, version))


def load_dataset(name: str, version: str | None = None, *, cache_dir: str | os.PathLike[str] | None = None,
                 offline: bool | None = None) -> TemporalGraphDataset:
    """Load a dataset version, from the verified cache or else from the first source that can serve it.

    ``name`` is ``family/name`` and may carry ``@version``; without a version the newest is loaded. The cache root
    is ``cache_dir``, else ``$TGBHUB_CACHE``, else the user cache folder. In offline mode (``offline=True`` or
    ``TGBHUB_OFFLINE=1``) no socket is opened: only the cache and the local build serve.

    >>> ds = load_dataset("t-grab/ce-64")            # doctest: +SKIP
    >>> ds.num_nodes, ds.splits["test"]              # doctest: +SKIP
    (101, (3252, 3658))

    Raises:
        InvalidNameError, DatasetNotFoundError, VersionNotFoundError: for a bad reference.
        SourceUnavailableError: if the cache misses and no source could provide verified bytes.
    """
    manifest = resolve(name, version)
    root = config.cache_root(cache_dir)
    sources = [s for s in default_sources() if not (config.offline_mode(offline) and s.needs_network)]
    entry = cache.lookup(manifest, root)
    served_by = "cache"
    if entry is None:
        entry, served_by = _fetch(manifest, root, sources)
    return open_dataset(manifest, entry.columns, served_by)


def _fetch(manifest: Manifest, root: Path, sources: Sequence[Source]) -> tuple[cache.CacheEntry, str]:
    failures: list[tuple[str, str]] = []
    for source in sources:
        if not source.can_serve(manifest):
            failures.append((source.name, "cannot serve this dataset"))
            continue
        steps = Steps(f"{manifest.name}@{manifest.version} from {source.name}", total=1)
        try:
            entry, installed = cache.install(manifest, root, lambda staging: source.fetch(manifest, staging))
            steps.step("verified and installed")
        except (IntegrityError, GenerationError, OSError) as exc:
            failures.append((source.name, str(exc)))
            continue
        finally:
            steps.close()
        return entry, source.name if installed else "cache"
    raise SourceUnavailableError(
        f"{manifest.name}@{manifest.version}", failures,
        "Check the hub endpoint and network, or turn offline mode off; `tgbhub info NAME` shows the sources.")
