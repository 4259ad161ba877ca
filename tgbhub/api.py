"""The public entry points: they wire names -> manifests -> cache -> sources -> dataset objects."""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from typing import Any
from pathlib import Path

from tgbhub import cache, config
from tgbhub.data import TemporalGraphDataset, TrajectoryDataset, open_dataset
from tgbhub.errors import GenerationError, IntegrityError, SourceUnavailableError, SourceWarning
from tgbhub.manifest import Manifest
from tgbhub.progress import Steps
from tgbhub.registry import Registry
from tgbhub.sources import Source
from tgbhub.sources.build import BuildSource
from tgbhub.sources.hf import HubSource
from tgbhub.sources.http import MirrorSource

_REGISTRY = Registry()
Names = str | Sequence[str] | None


def registry() -> Registry:
    """The catalogue of bundled manifests."""
    return _REGISTRY


def default_sources(*, offline: bool | None = None, hub_endpoint: str | None = None, mirrors: Names = None,
                    sources: Names = None, hub_org: str | None = None, token: str | None = None) -> list[Source]:
    """The sources tried, in order, when the cache misses.

    The order is ``sources``, else ``$TGBHUB_SOURCES``, else hub, mirror, build. The hub takes part only when an
    endpoint is configured (``hub_endpoint`` or ``$TGBHUB_ENDPOINT``), mirrors only when listed (``mirrors`` or
    ``$TGBHUB_MIRRORS``), and in offline mode no source that opens a socket takes part.

    Raises:
        InvalidNameError: if a setting is malformed (unknown source name, a mirror that is not a URL, ...).
    """
    endpoint = config.hub_endpoint(hub_endpoint)
    chosen: list[Source] = []
    for kind in config.source_order(sources):
        if kind == "hub" and endpoint is not None:
            chosen.append(HubSource(endpoint, config.hub_org(hub_org), config.hub_token(token)))
        elif kind == "mirror":
            chosen.extend(MirrorSource(url) for url in config.mirror_urls(mirrors))
        elif kind == "build":
            chosen.append(BuildSource())
    if config.offline_mode(offline):
        chosen = [s for s in chosen if not s.needs_network]
    return chosen


def resolve(name: str, version: str | None = None) -> Manifest:
    """The manifest ``name`` (optionally ``@version``) refers to.

    Raises:
        InvalidNameError: if the name is malformed (before any path is built).
        DatasetNotFoundError: if no such dataset exists (with suggestions).
        VersionNotFoundError: if the version does not exist (listing the available ones).
    """
    return _REGISTRY.lookup(name, version)


def load_dataset(name: str, version: str | None = None, *, cache_dir: str | os.PathLike[str] | None = None,
                 offline: bool | None = None, hub_endpoint: str | None = None, mirrors: Names = None,
                 sources: Names = None) -> TemporalGraphDataset | TrajectoryDataset:
    """Load a dataset version, from the verified cache or else from the first source that can serve it.

    ``name`` is ``family/name`` and may carry ``@version``; without a version the newest is loaded. The cache root
    is ``cache_dir``, else ``$TGBHUB_CACHE``, else the user cache folder. On a cache miss the sources are tried in
    order (see :func:`default_sources`): the Hub at ``hub_endpoint`` / ``$TGBHUB_ENDPOINT``, static ``mirrors`` /
    ``$TGBHUB_MIRRORS``, then the local build. A source that fails or serves bytes that do not match the manifest is
    reported with a :class:`~tgbhub.errors.SourceWarning` and skipped. ``ds.source`` says who served the call
    (``cache``, ``hub``, ``mirror`` or ``build``). In offline mode (``offline=True`` or ``TGBHUB_OFFLINE=1``) no
    socket is opened: only the cache and the local build serve.

    >>> ds = load_dataset("t-grab/ce-64", hub_endpoint="http://127.0.0.1:8090")   # doctest: +SKIP
    >>> ds.source, ds.num_nodes, ds.splits["test"]                                   # doctest: +SKIP
    ('hub', 101, (3252, 3658))

    Raises:
        InvalidNameError, DatasetNotFoundError, VersionNotFoundError: for a bad reference or setting.
        SourceUnavailableError: if the cache misses and no source could provide verified bytes (lists each reason).
    """
    manifest = resolve(name, version)
    chosen = default_sources(offline=offline, hub_endpoint=hub_endpoint, mirrors=mirrors, sources=sources)
    entry, served_by = ensure_cached(manifest, config.cache_root(cache_dir), chosen,
                                     offline=config.offline_mode(offline))
    return open_dataset(manifest, entry.columns, served_by, evaluator_factory=get_evaluator)


def ensure_cached(manifest: Manifest, root: Path, sources: Sequence[Source],
                  offline: bool = False) -> tuple[cache.CacheEntry, str]:
    """The verified cache entry of ``manifest``, fetched from the first source that works; and who served it.

    ``offline`` only shapes the advice when every source fails (the caller has already left network sources out).

    Raises:
        SourceUnavailableError: if the cache misses and every source failed, with advice that fits the situation.
    """
    entry = cache.lookup(manifest, root)
    if entry is not None:
        return entry, "cache"
    failures: list[tuple[str, str]] = []
    for source in sources:
        label = source.label
        if not source.can_serve(manifest):
            failures.append((label, "cannot serve this dataset"))
            continue
        steps = Steps(f"{manifest.name}@{manifest.version} from {label}", total=1)
        try:
            entry, installed = cache.install(manifest, root, lambda staging: source.fetch(manifest, staging))
            steps.step("verified and installed")
        except (IntegrityError, GenerationError, OSError) as exc:
            failures.append((label, str(exc)))
            warnings.warn(f"{manifest.name}@{manifest.version}: {label} failed, trying the next source: {exc}",
                          SourceWarning, stacklevel=3)
            continue
        finally:
            steps.close()
        return entry, source.name if installed else "cache"
    raise SourceUnavailableError(f"{manifest.name}@{manifest.version}", failures,
                                 _advice(manifest, sources, offline))


def _advice(manifest: Manifest, sources: Sequence[Source], offline: bool) -> str:
    """What to do when every source failed, from what actually took part (never "turn offline mode off" when it
    was off, never "check the hub" when none was configured)."""
    remote = [s for s in sources if s.needs_network]
    steps = []
    if offline:
        steps.append("Offline mode is on (offline=True or TGBHUB_OFFLINE=1), so no hub or mirror was asked: turn it "
                     "off and configure one")
    elif not remote:
        steps.append("No hub or mirror is configured: set TGBHUB_ENDPOINT (or hub_endpoint=) to a hub, e.g. "
                     "https://huggingface.co or one started by `tgbhub hub serve`, or TGBHUB_MIRRORS to a mirror")
    else:
        steps.append("Check that the hub/mirror URLs above are right and reachable, and that they hold "
                     f"{manifest.name}@{manifest.version}")
    if manifest.recipe is None:
        steps.append("this dataset has no recipe, so it cannot be built locally")
    elif not any(s.name == "build" for s in sources):
        steps.append("the local build was not among the sources (TGBHUB_SOURCES / sources=); add 'build' to let it "
                     "serve")
    return "; ".join(steps) + "."


def get_evaluator(dataset: TemporalGraphDataset | TrajectoryDataset, task: str | None = None) -> Any:
    """The reference evaluator of ``task`` (default: the manifest's default task) bound to ``dataset``.

    Raises:
        ManifestError: if the dataset declares no such task.
        UnsupportedTaskError: if this tgbhub has no evaluator for the task's type.
    """
    from tgbhub.evaluate import get_evaluator as bind  # imported on use: metric kernels load numba

    return bind(dataset.manifest, dataset, task)
