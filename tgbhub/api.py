"""The public entry points: they wire names -> manifests -> cache -> sources -> dataset objects."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from tgbhub import cache, config
from tgbhub.data import TemporalGraphDataset, TrajectoryDataset, open_dataset
from tgbhub.errors import (
    CacheWriteError,
    DatasetNotFoundError,
    FetchError,
    GenerationError,
    IntegrityError,
    InvalidNameError,
    SourceUnavailableError,
    SourceWarning,
    TgbhubError,
    UnsupportedTaskError,
)
from tgbhub.evaluate.graded import Graded
from tgbhub.local.gateway import BuildSource, Parent
from tgbhub.local.task_artifacts import declare_tasks
from tgbhub.manifest import DIGEST_KIND, SHA256_KIND, Manifest, plain, read_manifest, require_kind
from tgbhub.progress import Steps
from tgbhub.registry import DERIVED_MARK, Registry
from tgbhub.sources import Source
from tgbhub.sources.hf import HubSource
from tgbhub.sources.http import MirrorSource
from tgbhub.tasks.documents import TaskDocument, documents_for, with_tasks
from tgbhub.tasks.specs import TaskSpec, declared_on_request, task_spec, task_specs

if TYPE_CHECKING:
    from tgbhub.evaluate.counterfactual import Report

_REGISTRY = Registry()
Names = str | Sequence[str] | None


@dataclass(frozen=True)
class Fetching:
    """Where one call may get bytes from when the cache misses: what :func:`load_dataset` was given (``None``: the
    environment's setting, then the default; see :func:`default_sources`). Typed, so a misspelt setting is an error
    where it is written, not a silently ignored keyword."""

    offline: bool | None = None
    hub_endpoint: str | None = None
    mirrors: Names = None
    sources: Names = None


def registry() -> Registry:
    """The catalogue of bundled manifests."""
    return _REGISTRY


def default_sources(*, offline: bool | None = None, hub_endpoint: str | None = None, mirrors: Names = None,
                    sources: Names = None, hub_org: str | None = None, token: str | None = None,
                    parents: Mapping[str, Parent] | None = None, cache_root: Path | None = None) -> list[Source]:
    """The sources tried, in order, when the cache misses.

    Args:
        offline: leave out every source that opens a socket (default: ``$TGBHUB_OFFLINE``).
        hub_endpoint: the Hub; it takes part only when one is configured (default: ``$TGBHUB_ENDPOINT``).
        mirrors: static mirrors; they take part only when listed (default: ``$TGBHUB_MIRRORS``).
        sources: the order (default: ``$TGBHUB_SOURCES``, else hub, mirror, build).
        hub_org: the Hub organisation holding the family repos (default: ``$TGBHUB_HUB_ORG``, else ``tgbhub``).
        token: an access token for private repos (default: ``$TGBHUB_TOKEN``, else ``$HF_TOKEN``).
        parents: the verified parents a derived dataset's local build reads (see :func:`load_dataset`).
        cache_root: the cache whose kept releases an imported dataset's rebuild reads.

    Returns:
        The sources, in the order they are tried.

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
            chosen.append(BuildSource(parents, cache_root))
    if config.offline_mode(offline):
        chosen = [s for s in chosen if not s.needs_network]
    return chosen


def resolve(name: str, version: str | None = None) -> Manifest:
    """The manifest ``name`` (optionally ``@version``) refers to.

    Raises:
        InvalidNameError: if the name is malformed (before any path is built); a bare name that a family or an
            importer's catalogue has gets its full name suggested (``tgbl-wiki`` -> ``tgb/tgbl-wiki``).
        DatasetNotFoundError: if no such dataset exists (with suggestions).
        VersionNotFoundError: if the version does not exist (listing the available ones).
    """
    try:
        return _REGISTRY.lookup(name, version)
    except InvalidNameError as bad:
        full = _importable_full_names(name) if isinstance(name, str) and "/" not in name else []
        if full and "did you mean" not in str(bad):
            raise InvalidNameError(f"{name!r} needs its family: did you mean {' or '.join(map(repr, full))}? "
                                   f"(imported, not bundled: `tgbhub import {full[0].partition('@')[0]}`)") from bad
        raise


def _importable_full_names(bare: str) -> list[str]:
    """``family/bare`` for every importer whose catalogue has ``bare`` (without ``@version``)."""
    from tgbhub.local.gateway import importer_plugin

    short, at, pinned = bare.partition("@")
    found = []
    for source in importer_names():
        plugin = importer_plugin(source)
        if short in plugin.names():
            found.append(f"{plugin.family}/{short}{at}{pinned}")
    return found


def catalogue_rows(family: str | None = None, *, cache_dir: str | os.PathLike[str] | None = None
                   ) -> list[dict[str, Any]]:
    """Every dataset the hub knows, one row each, with its ``status`` in the cache at ``cache_dir``.

    The bundled and published derived datasets come first (a derived row comes from the derived index and its
    parent, so listing builds nothing), then every importer catalogue's datasets. Sizes are counted as the loaded
    dataset counts them (:func:`dataset_summary`): an importer's dataset has them once imported, and always TGB's
    published counts under their own names.

    Args:
        family: only this family's datasets (default: every family).
        cache_dir: the cache whose entries set each row's ``status`` (default: ``$TGBHUB_CACHE``, else the user
            cache folder).

    Returns:
        One dict per dataset: ``name``, ``version``, ``num_nodes``, ``num_rows``, ``num_snapshots``, ``splits``
        (names), ``bytes``, ``derived_from``, ``transform`` and ``status`` (``cached``, ``buildable`` or ``fetch``;
        ``imported`` or ``import required`` for an importer's); trajectories add ``num_sites`` and
        ``num_variables``; an importer's add ``import`` (the command), ``published_num_nodes``,
        ``published_num_edges`` and ``num_timestamps``.

    Raises:
        InvalidNameError: for a family nobody knows (naming the known ones).
    """
    from tgbhub.local.gateway import importer_plugin
    from tgbhub.local.imports import stored_versions

    root = config.cache_root(cache_dir)
    plugins = [importer_plugin(source) for source in importer_names()]
    families = sorted({*_REGISTRY.families(), *(p.family for p in plugins)})
    if family is not None and family not in families:
        raise InvalidNameError(f"unknown family {family!r}; families: {', '.join(families)}")
    rows = _catalogue_rows(_REGISTRY.names(family) if family in (None, *_REGISTRY.families()) else [], root)
    for plugin in plugins:
        if family not in (None, plugin.family):
            continue
        for short in plugin.names():
            name, card = f"{plugin.family}/{short}", plugin.card(plugin.entry(short))
            kept = stored_versions(root, name)
            stats = card.get("stats", {})
            if kept:  # counted on the imported data, as the dataset object counts
                manifest = read_manifest(kept[-1])
                row = {"name": name, "version": manifest.version, **dataset_summary(manifest),
                       "splits": list(manifest.splits), "bytes": sum(f.size for f in manifest.files)}
            else:  # the node-id space and the rows are known once imported; the published counts are not those
                row = {"name": name, "version": None, "num_nodes": None, "num_rows": None, "num_snapshots": None,
                       "splits": [], "bytes": None}
            rows.append({**row, "derived_from": None, "transform": None,
                         "status": "imported" if kept else "import required", "import": card.get("import"),
                         "published_num_nodes": stats.get("num_nodes"), "published_num_edges": stats.get("num_edges"),
                         "num_timestamps": stats.get("num_timestamps")})
    return rows


def dataset_summary(manifest: Manifest) -> dict[str, Any]:
    """A dataset's sizes as its manifest states them, each counted as the dataset object counts it, so that ``tgbhub
    list``, ``tgbhub info`` and ``load_dataset(...)`` agree.

    A node is, per kind: for a temporal graph, an id of the node-id space (every ``src``/``dst`` lies in
    ``[0, num_nodes)``; an id no row uses still counts); for trajectories (ChaosNet), a node of the Jacobian graph the
    models run on, i.e. one state variable (``q_i`` or ``p_i``), so ``num_nodes`` is ``2N`` and the lattice's ``N``
    sites are ``num_sites``. A row is an event (temporal graph) or one ``(IC, step)`` state vector (trajectories).

    Args:
        manifest: the dataset version's manifest (bundled, derived or imported).

    Returns:
        ``num_nodes``, ``num_rows`` and ``num_snapshots`` (``None`` for continuous time; steps per IC for
        trajectories), plus ``num_sites`` and ``num_variables`` for trajectories.
    """
    graph = manifest.graph
    if graph.get("kind") == "trajectories":
        steps = int(graph["num_snapshots"])
        return {"num_nodes": int(graph["num_nodes"]), "num_rows": int(graph["num_ics"]) * steps,
                "num_snapshots": steps, "num_sites": int(graph["num_sites"]),
                "num_variables": len(graph["variables"])}
    rows = manifest.stats.get("num_rows")
    if rows is None and manifest.split_unit == "row":  # an import's stats count edges; its row splits tile the rows
        rows = max((int(stop) for _, stop in manifest.splits.values()), default=0)
    nodes, snapshots = graph.get("num_nodes"), graph.get("num_snapshots")
    return {"num_nodes": None if nodes is None else int(nodes), "num_rows": None if rows is None else int(rows),
            "num_snapshots": None if snapshots is None else int(snapshots)}


def split_ranges(manifest: Manifest) -> dict[str, dict[str, list[int]] | None]:
    """A dataset's splits as its manifest states them, under the names the dataset object gives them.

    Args:
        manifest: the dataset version's manifest.

    Returns:
        ``splits``: half-open row ranges, as ``ds.splits`` (``None`` where the manifest counts snapshots and its
        statistics give no rows per split); ``snapshot_splits`` where the manifest counts snapshots; ``ic_splits``
        where it counts initial conditions (trajectories).
    """
    stored = {name: [int(start), int(stop)] for name, (start, stop) in manifest.splits.items()}
    unit = manifest.split_unit
    if unit == "row":
        return {"splits": stored}
    if unit == "initial-condition":
        steps = int(manifest.graph["num_snapshots"])
        return {"splits": {name: [start * steps, stop * steps] for name, (start, stop) in stored.items()},
                "ic_splits": stored}
    counted = manifest.stats.get("splits") or {}
    ordered = sorted(stored, key=lambda name: stored[name])  # the splits tile the time axis, so rows in this order
    found = [(counted.get(name) or {}).get("rows") for name in ordered]
    if any(size is None for size in found):
        return {"splits": None, "snapshot_splits": stored}
    sizes = [int(size) for size in found if size is not None]
    ends = np.cumsum(sizes).tolist()
    rows = {name: [end - size, end] for name, size, end in zip(ordered, sizes, ends, strict=True)}
    return {"splits": {name: rows[name] for name in stored}, "snapshot_splits": stored}


def _catalogue_rows(names: Sequence[str], root: Path) -> list[dict[str, Any]]:
    """The summary row of each bundled or published derived name's newest version, with its cache status."""
    rows = []
    parents: dict[str, Manifest] = {}
    for name in names:
        version = _REGISTRY.versions(name)[-1]
        entry = _REGISTRY.derived(name, version)
        if entry is None:
            manifest = resolve(name)
            sizes = dataset_summary(manifest)
            row = {"name": name, "version": manifest.version, "num_nodes": sizes.pop("num_nodes"),
                   "num_rows": sizes.pop("num_rows"), "num_snapshots": sizes.pop("num_snapshots"),
                   "splits": list(manifest.splits), "bytes": sum(f.size for f in manifest.files),
                   "derived_from": manifest.derived_from, "transform": manifest.transform, **sizes}
            buildable = manifest.recipe is not None
        else:
            if entry.derived_from not in parents:
                parents[entry.derived_from] = resolve(entry.derived_from)
            parent = parents[entry.derived_from]
            sizes = dataset_summary(parent)  # a variant keeps its parent's graph block (nodes, snapshots)
            row = {"name": name, "version": entry.version, "num_nodes": sizes["num_nodes"],
                   "num_rows": entry.num_rows, "num_snapshots": sizes["num_snapshots"],
                   "splits": list(parent.splits), "bytes": entry.bytes, "derived_from": entry.derived_from,
                   "transform": plain(entry.transform)}
            buildable = True
        status = "cached" if cache.is_complete(root, name, row["version"]) else "buildable" if buildable else "fetch"
        rows.append({**row, "status": status})
    return rows


def catalogue_card(name: str) -> dict[str, Any] | None:
    """The catalogue card of a dataset an importer's catalogue has (statistics, upstream, citation, the import
    command), or ``None`` when ``name`` is no importer's.

    Raises:
        DatasetNotFoundError: for a name in an importer's family that its catalogue does not have (with suggestions).
    """
    from tgbhub.local.gateway import importer_plugin

    family, _, short = name.partition("@")[0].partition("/")
    for plugin in (importer_plugin(source) for source in importer_names()):
        if plugin.family == family:
            try:
                return plugin.card(plugin.entry(short))
            except DatasetNotFoundError as unknown:
                raise DatasetNotFoundError(name, [f"{family}/{s}" for s in unknown.suggestions]) from unknown
    return None


def transforms() -> list[dict[str, Any]]:
    """Every transform a variant can be derived with (``family/base~KIND[-pN...]-sSEED``): its name, what it does,
    its parameters with their bounds, the dataset kinds it applies to and an example suffix."""
    from tgbhub.local.gateway import transform_cards

    return transform_cards()


def task_cards() -> list[dict[str, Any]]:
    """Every registered task (:mod:`tgbhub.tasks.specs`): name, type, version, summary, the dataset kinds that declare
    it, and whether it has artifacts."""
    return [{"name": spec.name, "type": spec.type, "version": spec.version, "summary": spec.summary,
             "applies_to": sorted(spec.applies_to), "artifacts": spec.artifacts is not None} for spec in task_specs()]


def importer_names() -> list[str]:
    """The registered importers' names (cheap: no importer is loaded)."""
    from tgbhub.local.gateway import importer_names as names

    return names()


def importers() -> list[dict[str, Any]]:
    """Every benchmark ``tgbhub import FAMILY/NAME`` can import: its importer ``name``, ``family``, ``summary``,
    how many datasets its catalogue knows and an ``example`` name."""
    from tgbhub.local.gateway import importer_plugin

    found = []
    for plugin in (importer_plugin(name) for name in importer_names()):
        names = plugin.names()
        found.append({"name": plugin.name, "family": plugin.family, "summary": plugin.summary,
                      "datasets": len(names), "example": names[0] if names else None})
    return found


def task_documents(manifest: Manifest) -> list[TaskDocument]:
    """The bundled task documents pinned to ``manifest``'s version (tasks versioned on their own).

    Raises:
        ManifestError: if a bundled task document is malformed.
    """
    return documents_for(_REGISTRY.root, manifest)


def with_task_documents(manifest: Manifest) -> Manifest:
    """``manifest`` with the tasks of its bundled task documents appended to ``tasks`` (files and version unchanged).

    Raises:
        ManifestError: if a bundled task document is malformed.
    """
    return with_tasks(manifest, [document.task for document in task_documents(manifest)])


def tasks_on_request(manifest: Manifest) -> list[TaskSpec]:
    """The registered tasks (:mod:`tgbhub.tasks.specs`) that loading ``manifest`` declares on request: those of its
    kind that no bundled task document declares (their documents and artifacts are built from the verified data on
    first use)."""
    return declared_on_request(manifest, {document.task_name for document in task_documents(manifest)})


def prepare_tasks(name: str, *, cache_dir: str | os.PathLike[str] | None = None,
                  offline: bool | None = None) -> list[str]:
    """Build (or find, verified) the artifacts of every task of dataset ``name`` that a task document declares, so
    that grading it needs nothing more, offline included.

    Args:
        name: ``family/name[@version]``.
        cache_dir: the cache root (default: ``$TGBHUB_CACHE``, else the user cache folder).
        offline: open no socket (default: ``$TGBHUB_OFFLINE``).

    Returns:
        The names of those tasks, bundled documents and those declared on request (empty for trajectories).

    Raises:
        TgbhubError: as :func:`load_dataset` raises, and IntegrityError or GenerationError if a task's artifacts
            cannot be built to its document's digests.
    """
    dataset = load_dataset(name, cache_dir=cache_dir, offline=offline)
    if not isinstance(dataset, TemporalGraphDataset):
        return []
    with_documents = [str(task["name"]) for task in dataset.manifest.tasks if task.get("document")]
    for task in with_documents:
        dataset.task_artifacts(task)
    return with_documents


def load_dataset(name: str, version: str | None = None, *, cache_dir: str | os.PathLike[str] | None = None,
                 offline: bool | None = None, hub_endpoint: str | None = None, mirrors: Names = None,
                 sources: Names = None, verify: str = "quick") -> TemporalGraphDataset | TrajectoryDataset:
    """Load a dataset version, from the verified cache or else from the first source that can serve it.

    A source that fails, or serves bytes that do not match the manifest, is reported with a
    :class:`~tgbhub.errors.SourceWarning` and skipped. A derived dataset's parent is loaded first, the same way; a
    canonical variant name that is not published (another ``k`` or seed, e.g. ``~intense-k2-s11`` after a base name)
    is built on request from its verified parent (see :mod:`tgbhub.local.derive`).

    >>> ds = load_dataset("t-grab/ce-64", hub_endpoint="http://127.0.0.1:8090")   # doctest: +SKIP
    >>> ds.source, ds.num_nodes, ds.snapshot_splits["test"]                          # doctest: +SKIP
    ('hub', 101, (3252, 3658))

    Args:
        name: ``family/name``, optionally with ``@version`` (without one, the newest version).
        version: the version, instead of ``@version`` in ``name``.
        cache_dir: the cache root (default: ``$TGBHUB_CACHE``, else the user cache folder).
        offline: open no socket, so only the cache and the local build serve (default: ``$TGBHUB_OFFLINE``).
        hub_endpoint: the Hub tried first on a cache miss (default: ``$TGBHUB_ENDPOINT``; none: no hub).
        mirrors: static mirrors tried after the hub (default: ``$TGBHUB_MIRRORS``).
        sources: the order of the sources (default: ``$TGBHUB_SOURCES``, else hub, mirror, build; see
            :func:`default_sources`).
        verify: ``"quick"`` (the default) trusts a cached file whose size and mtime are unchanged; ``"full"``
            re-hashes every cached file first (bit rot keeps both) and repairs what it finds, as ``tgbhub verify``.

    Returns:
        The dataset object its manifest's ``graph.kind`` declares: a :class:`~tgbhub.data.TemporalGraphDataset` or a
        :class:`~tgbhub.data.TrajectoryDataset`; its ``source`` says who served this call (``cache``, ``hub``,
        ``mirror`` or ``build``).

    Raises:
        InvalidNameError, DatasetNotFoundError, VersionNotFoundError: for a bad reference or setting (a variant name
            that is not canonical names the canonical one).
        GenerationError: for a variant built on request with an unknown kind or invalid parameters.
        SourceUnavailableError: if the cache misses and no source could provide verified bytes (lists each reason).
    """
    if verify not in ("quick", "full"):
        raise InvalidNameError(f"verify={verify!r}: pass 'quick' (sizes and mtimes) or 'full' (re-hash every file)")
    root = config.cache_root(cache_dir)
    settings = Fetching(offline=offline, hub_endpoint=hub_endpoint, mirrors=mirrors, sources=sources)
    if verify == "full":
        _verify_cached(name, version, root)
    built_on_request = False
    imported = _imported(name, version, root)
    if imported is not None:
        return open_verified(imported, root, settings)[0]
    try:
        manifest = resolve(name, version)
    except DatasetNotFoundError as missing:
        manifest, built_on_request = _derived(name, version, root, settings, missing, _REGISTRY)
    dataset = open_verified(manifest, root, settings)[0]
    if built_on_request:
        dataset.source = "build"  # this call built it; open_verified then found it in the cache
    return dataset


def verify(names: Sequence[str] | None = None, *, cache_dir: str | os.PathLike[str] | None = None,
           offline: bool | None = None, repair: bool = True) -> list[dict[str, Any]]:
    """Re-hash every file of cached datasets, whatever their sizes and mtimes say, and repair what is damaged.

    Column files are re-derived from their verified artifacts; an entry whose artifact changed is withdrawn and,
    with ``repair``, fetched or rebuilt through the usual sources.

    Args:
        names: the datasets (``family/name[@version]``); default every entry the cache holds.
        cache_dir: the cache root (default: ``$TGBHUB_CACHE``, else the user cache folder).
        offline: fetch nothing over the network when repairing (default: ``$TGBHUB_OFFLINE``).
        repair: fetch or rebuild a withdrawn entry (``False``: only report it).

    Returns:
        One row per dataset version: ``{"name", "version", "status", "files"}``, ``status`` one of ``ok``,
        ``repaired`` (``files`` says which), ``damaged`` (withdrawn, not repaired) or ``missing`` (not cached).

    Raises:
        InvalidNameError, DatasetNotFoundError, VersionNotFoundError: for a bad or unknown name.
        SourceUnavailableError: if a damaged entry cannot be fetched or rebuilt.
    """
    root = config.cache_root(cache_dir)
    targets = ([_cached_manifest(n, None, root) for n in names] if names else _every_cached(root))
    rows = []
    for manifest in targets:
        status, files = cache.reverify(manifest, root)
        if status == "damaged" and repair:
            load_dataset(manifest.name, manifest.version, cache_dir=root, offline=offline)
            status = "repaired"
        rows.append({"name": manifest.name, "version": manifest.version, "status": status, "files": files})
    return rows


def _verify_cached(name: str, version: str | None, root: Path) -> None:
    """``load_dataset(..., verify="full")``: re-hash the cached entry (if any) before it is opened; a damaged one is
    withdrawn, so the load that follows fetches or rebuilds it."""
    try:
        manifest = _cached_manifest(name, version, root)
    except DatasetNotFoundError:
        return  # a variant not derived yet, an import not imported: nothing cached to verify
    cache.reverify(manifest, root)


def _cached_manifest(name: str, version: str | None, root: Path) -> Manifest:
    """The manifest of ``name`` as the cache at ``root`` knows it: imported, derived there, or bundled.

    Raises:
        InvalidNameError, DatasetNotFoundError, VersionNotFoundError: for a bad or unknown name.
    """
    from tgbhub.registry import parse_reference

    reference = parse_reference(name, version)
    imported = _imported(name, version, root)
    if imported is not None:
        return imported
    stored = cache.stored_manifest_path(root, reference.name, reference.version) if reference.version else None
    if stored is not None and stored.is_file():
        return read_manifest(stored)
    try:
        return resolve(name, version)
    except DatasetNotFoundError:
        from tgbhub.local.imports import stored_versions

        kept = stored_versions(root, reference.name)
        if DERIVED_MARK in reference.name and kept:  # derived here; the newest it holds
            return read_manifest(kept[-1])
        raise


def _every_cached(root: Path) -> list[Manifest]:
    """The manifest of every complete entry in the cache at ``root`` (``<family>/<name>/<version>/COMPLETE``) that
    this tgbhub can name: bundled, derived or imported there."""
    found = []
    for marker in sorted(root.glob(f"*/*/*/{cache.MARKER}")):
        folder = marker.parent
        name, version = f"{folder.parent.parent.name}/{folder.parent.name}", folder.name
        try:
            found.append(_cached_manifest(name, version, root))
        except TgbhubError:
            continue  # a task's artifacts (verified with their dataset's task documents) or a foreign folder
    return found


def manifest_of(name: str, version: str | None = None, *, cache_dir: str | os.PathLike[str] | None = None,
                offline: bool | None = None, catalogue: Registry | None = None) -> Manifest:
    """The manifest ``name`` refers to, like :func:`resolve`, a derived dataset's included.

    A derived dataset's manifest is not shipped: it is derived on request (the variant is built into the cache once,
    from its verified parent), and a published one's is checked byte for byte against the catalogue's index. A
    dataset imported into the cache gets its imported manifest.

    Args:
        name: ``family/name``, optionally with ``@version``.
        version: the version, instead of ``@version`` in ``name``.
        cache_dir: the cache root (default: ``$TGBHUB_CACHE``, else the user cache folder).
        offline: open no socket while building a variant's parent (default: ``$TGBHUB_OFFLINE``).
        catalogue: look names up in this registry instead of the bundled one (imports are then not consulted).

    Returns:
        The manifest, as published (never rewritten for display).

    Raises:
        InvalidNameError, DatasetNotFoundError, VersionNotFoundError: as :func:`resolve`.
        GenerationError, IntegrityError, SourceUnavailableError: as :func:`load_dataset`, for a derived dataset.
    """
    chosen = catalogue or _REGISTRY
    root = config.cache_root(cache_dir)
    imported = _imported(name, version, root) if catalogue is None else None
    if imported is not None:
        return imported
    try:
        return resolve(name, version) if catalogue is None else catalogue.lookup(name, version)
    except DatasetNotFoundError as missing:
        return _derived(name, version, root, Fetching(offline=offline), missing, chosen)[0]


def _derived(name: str, version: str | None, root: Path, settings: Fetching,
             missing: DatasetNotFoundError, catalogue: Registry) -> tuple[Manifest, bool]:
    """The manifest of the derived dataset ``name`` (built on request), and whether this call built it; or
    ``missing`` again (with import advice where a benchmark's release has the name) if it names no variant."""
    if DERIVED_MARK not in name:  # only derived names ("base~transform") can be built on request
        advice = _import_advice(name, version)
        if advice is not None:
            raise DatasetNotFoundError.with_advice(name.partition("@")[0], advice) from missing
        raise missing
    from tgbhub.evaluate.metrics import generative_scores  # a variant's manifest records ATD/ACD to its parent
    from tgbhub.local.derive import derived_on_request  # imports the build source: only for this path

    return derived_on_request(name, version, catalogue, root, lambda parent: open_verified(parent, root, settings),
                              missing, fetch_published=lambda variant, at: _published_document(variant, at, settings),
                              distances=generative_scores)


def _published_document(name: str, version: str, settings: Fetching) -> bytes | None:
    """A published derived dataset's manifest from the first network source that serves it (``None`` if none
    does: the caller derives it locally); a source that fails is warned about."""
    for source in _sources(settings):
        fetch = getattr(source, "fetch_document", None)
        if fetch is None:
            continue
        try:
            return fetch(name, version)
        except FetchError as exc:
            warnings.warn(f"{name}@{version}: {source.label} has no manifest for it, deriving it here: {exc}",
                          SourceWarning, stacklevel=4)
    return None


def _imported(name: str, version: str | None, root: Path) -> Manifest | None:
    """The manifest of a dataset imported into this cache (``tgbhub import``) and not bundled, or ``None``; checked
    before the catalogue, cheaply (one folder listing each), so loading an import pays no suggestion search."""
    from tgbhub.local.imports import load_imported
    from tgbhub.registry import parse_reference

    if "/" not in name:  # a bare name: the catalogue's own error suggests its family
        return None
    try:
        reference = parse_reference(name, version)
    except InvalidNameError:
        return None  # the catalogue's lookup reports a malformed name
    if _REGISTRY.has(reference.name):
        return None
    return load_imported(root, reference.name, reference.version)


def _import_advice(name: str, version: str | None) -> str | None:
    """How to import ``name`` when it names a dataset of another benchmark's release (TGB) that is not imported.

    Raises:
        DatasetNotFoundError: for a name in that family the release does not have (suggesting close ones).
    """
    from tgbhub.local.imports import import_advice

    return import_advice(name.partition("@")[0]) if "/" in name else None


def open_verified(manifest: Manifest, root: Path, settings: Fetching = Fetching()
                  ) -> tuple[TemporalGraphDataset | TrajectoryDataset, cache.CacheEntry]:
    """The dataset object and verified cache entry of ``manifest``, fetched on a cache miss.

    A derived dataset's parent is opened first, through the same verified path (cache, hub, mirror or build), and
    checked against the digests its recipe pins.

    Args:
        manifest: the dataset version.
        root: the cache root.
        settings: where bytes may come from on a miss.

    Returns:
        ``(dataset, entry)``: the dataset object (its ``source`` says who served it) and its cache entry.

    Raises:
        IntegrityError: if a derived dataset's parent does not have the content its recipe pins.
        SourceUnavailableError: as :func:`ensure_cached`, for the dataset or its parent.
    """
    parent = None
    parents: dict[str, Parent] = {}
    if manifest.derived_from is not None:
        parent_manifest = resolve(manifest.derived_from)
        _check_parent(manifest, parent_manifest)  # before any work: the manifests alone must agree
        opened, parent_entry = open_verified(parent_manifest, root, settings)
        parent = cast(TemporalGraphDataset, opened)  # a derived dataset's parent is a temporal graph (its transform
        # applies to that kind only: gateway.check_transform_applies)
        parents[manifest.derived_from] = Parent(parent_manifest, {
            file: {column: np.load(path, mmap_mode="r", allow_pickle=False) for column, path in columns.items()}
            for file, columns in parent_entry.columns.items()})
    chosen = _sources(settings, parents, root)
    entry, served_by = ensure_cached(manifest, root, chosen, offline=config.offline_mode(settings.offline))
    dataset = open_dataset(manifest, entry.columns, served_by, evaluator_factory=get_evaluator, parent=parent)
    if manifest.graph.get("kind") == "temporal-graph":  # open_dataset opens that kind as a TemporalGraphDataset
        declare_tasks(cast(TemporalGraphDataset, dataset), manifest, _REGISTRY.root, root)
    return dataset, entry


def _sources(settings: Fetching, parents: Mapping[str, Parent] | None = None,
             cache_root: Path | None = None) -> list[Source]:
    return default_sources(offline=settings.offline, hub_endpoint=settings.hub_endpoint, mirrors=settings.mirrors,
                           sources=settings.sources, parents=parents, cache_root=cache_root)


def _check_parent(manifest: Manifest, parent: Manifest) -> None:
    """The parent's published digests must be the ones the derived recipe was built from.

    Raises:
        IntegrityError: naming the parent file whose content digest differs.
    """
    for file, digest in manifest.recipe.parent.digests.items():  # type: ignore[union-attr]
        published = parent.file(file).digest
        if published != digest:
            raise IntegrityError(f"{manifest.name}@{manifest.version}: parent {manifest.derived_from} file {file}",
                                 f"content digest {digest}", f"{published}",
                                 "The derived manifest does not belong to this parent version: reinstall tgbhub "
                                 "(its bundled manifests are inconsistent) or report it")


def ensure_cached(manifest: Manifest, root: Path, sources: Sequence[Source],
                  offline: bool = False) -> tuple[cache.CacheEntry, str]:
    """The verified cache entry of ``manifest``, fetched from the first source that works; and who served it.

    Args:
        manifest: the dataset version.
        root: the cache root.
        sources: the sources to try, in order, on a miss.
        offline: only shapes the advice when every source fails (the caller has already left network sources out).

    Returns:
        ``(entry, served_by)``: the cache entry and ``"cache"`` or the name of the source that installed it.

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
            entry, installed = cache.install(manifest, root, partial(source.fetch, manifest))
            steps.step("verified and installed")
        except CacheWriteError:  # the cache named its own disk (full): no other source can help
            raise
        except (IntegrityError, GenerationError, OSError) as exc:
            if CacheWriteError.applies(exc):  # the cache's own disk, not the source: no other source can help
                raise CacheWriteError(f"{manifest.name}@{manifest.version} into the cache", exc) from exc
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
    from tgbhub.evaluate.registry import EVALUATORS, register_evaluator

    chosen = dataset.manifest.task_named(task) if not isinstance(task, Mapping) else task
    spec = task_spec(str(chosen.get("name")))
    if spec is not None and spec.evaluator is not None and spec.type not in EVALUATORS:
        register_evaluator(spec.type)(spec.evaluator)  # a task plug-in that brings its own evaluator
    return bind(dataset.manifest, dataset, task)


def grade(name: str, file: str | os.PathLike[str], *, task: str | None = None, split: str | None = None,
          detail: bool = False, teacher_forced: str | os.PathLike[str] | None = None,
          cache_dir: str | os.PathLike[str] | None = None, offline: bool | None = None) -> Graded:
    """Grade one submission ``file`` against dataset ``name``: what ``tgbhub evaluate NAME FILE`` prints.

    Args:
        name: the dataset, ``family/name[@version]``.
        file: the submission (Parquet).
        task: the task graded; default the task whose declared columns the file has, else the default task.
        split: the split graded (default: the task's report split).
        detail: add per-snapshot or per-query detail to the result.
        teacher_forced: a rollout-forecasting task's teacher-forced submission, graded beside ``file``.
        cache_dir: the cache root (default: ``$TGBHUB_CACHE``, else the user cache folder).
        offline: open no socket (default: ``$TGBHUB_OFFLINE``).

    Returns:
        The graded run: the evaluator's result (its ``digest`` and ``digests`` are logical content digests of the
        graded data, as its ``digest_kind`` says) and the submission's path.

    Raises:
        DatasetNotFoundError, SourceUnavailableError: for a dataset that cannot be loaded.
        SubmissionError: for a file that breaks the task's schema (no score), or holds more rows or decoded bytes
            than the task's bounds (:func:`tgbhub.evaluate.submission.bounds_for`; refused from its footer, unread).
        InvalidNameError: for a split the dataset does not have.
        UnsupportedTaskError: if ``teacher_forced`` is given for a task that is not rollout forecasting.
    """
    import pyarrow.parquet as pq

    from tgbhub.evaluate.submission import bounds_for, check_bounds, closest_task, task_for_columns
    from tgbhub.tasks.declared import choose_split

    dataset = load_dataset(name, cache_dir=cache_dir, offline=offline)
    if task is None:  # pick the task whose declared columns the file has, else the one it was most likely meant for
        # (its errors then name that task's columns), else the default task, whose error says why not
        try:
            schema = pq.read_schema(file)
        except (OSError, ValueError):
            schema = None
        match = None if schema is None else (task_for_columns(dataset.manifest.tasks, schema.names)
                                             or closest_task(dataset.manifest.tasks, schema))
        task = match.get("name") if match is not None else None
    evaluator = get_evaluator(dataset, task)
    chosen = evaluator.task
    graded_split = choose_split(dataset.manifest, chosen, split)
    # rows and decoded bytes bounded from the file's footer before a row is read: a few MB of constant columns may
    # decode to gigabytes
    check_bounds(file, bounds_for(dataset.manifest, chosen, graded_split),
                 f"task {chosen.get('name')!r} on split {graded_split!r} of {dataset.manifest.name}")
    extra: dict[str, Any] = {}
    if teacher_forced:
        if not hasattr(evaluator, "teacher_forced_keys"):
            raise UnsupportedTaskError(f"--teacher-forced applies to rollout-forecasting tasks only; task "
                                       f"{evaluator.task.get('name')!r} is of type {evaluator.task.get('type')!r}: "
                                       "drop the flag")
        extra["teacher_forced"] = teacher_forced
    return Graded("evaluate", evaluator.evaluate(file, split=split, detail=detail, **extra),
                  run={"submission": os.fspath(file)})


def run_baseline(model: str, name: str, *, task: str | None = None, split: str | None = None,
                 out: str | os.PathLike[str] | None = None, cache_dir: str | os.PathLike[str] | None = None,
                 offline: bool | None = None) -> Graded:
    """Run the heuristic baseline ``model`` on dataset ``name`` and grade it: what ``tgbhub baseline MODEL NAME``
    prints.

    Args:
        model: the baseline, with its options where it takes some (``edgebank``, ``edgebank-tw``, ...).
        name: the dataset, ``family/name[@version]``.
        task: the task (default: the dataset's default task).
        split: the split (default: the task's report split).
        out: where to write the submission (Parquet), if anywhere; its folder must exist.
        cache_dir: the cache root (default: ``$TGBHUB_CACHE``, else the user cache folder).
        offline: open no socket (default: ``$TGBHUB_OFFLINE``).

    Returns:
        The graded run, with the model's name (and ``submission``, the path written to ``out``).

    Raises:
        DatasetNotFoundError, SourceUnavailableError: for a dataset that cannot be loaded.
        ManifestError: if the dataset declares no such task.
        UnsupportedTaskError: if ``model`` is not a baseline of the task's type (naming the task that has it).
        InvalidNameError: for a split the task does not grade, or an ``out`` whose folder does not exist.
    """
    from tgbhub.baselines import run_baseline as produce
    from tgbhub.evaluate.submission import write_submission
    from tgbhub.tasks.declared import choose_split

    if out is not None and not Path(out).parent.is_dir():  # before any work
        raise InvalidNameError(f"out={os.fspath(out)!r}: the folder {Path(out).parent} does not exist; create it, or "
                               "write into an existing folder")
    dataset = load_dataset(name, cache_dir=cache_dir, offline=offline)
    chosen = dataset.manifest.task_named(task)
    _require_baseline(model, dataset.manifest, chosen)
    graded_split = choose_split(dataset.manifest, chosen, split)
    submission = produce(model, dataset, chosen, graded_split)
    if out is not None:
        write_submission(submission, out)
    result = get_evaluator(dataset, chosen.get("name")).evaluate(submission, split=graded_split)
    return Graded("baseline", result, model=model, run={"submission": os.fspath(out)} if out is not None else {})





def _require_baseline(model: str, manifest: Manifest, task: Mapping[str, Any]) -> None:
    """Raises UnsupportedTaskError naming the dataset's task that has ``model`` (the ``--task`` to add), when the
    chosen task's type has no such baseline but another task of the dataset does; else returns (an unknown model
    is reported, with the models of the chosen task, by the baseline registry)."""
    from tgbhub.baselines.registry import models_for, split_options

    base = split_options(model)[0]
    if base in models_for(str(task.get("type"))):
        return
    having = [str(other["name"]) for other in manifest.tasks if base in models_for(str(other.get("type")))]
    if having:
        raise UnsupportedTaskError(
            f"baseline {base!r} does not run on {manifest.name}'s task {task.get('name')!r} ({task.get('type')}); "
            f"it runs on task {having[0]!r}: add --task {having[0]} (baselines of {task.get('name')!r}: "
            f"{', '.join(models_for(str(task.get('type'))))})")


def derived_names(base: str, kinds: Sequence[str] | None = None, seeds: Sequence[int] | None = None) -> list[str]:
    """The canonical names of the variants of the base dataset ``base``, in kind order, then by seed. Names only:
    published variants load as published, any other is built on request (:mod:`tgbhub.local.derive`).

    Args:
        base: the base dataset, ``family/name`` (no version: a variant's versions are its base's).
        kinds: each written as in a variant's name (``shuffle``, ``intense-k5``); default the published kinds.
        seeds: default the published seeds (0-9).

    Returns:
        ``family/name~kind[-pN...]-sSEED`` for every kind and seed, e.g. ``t-grab/ce-64~intense-k5-s0``.

    Raises:
        InvalidNameError: for a kind not written ``KIND[-PARAMVALUE...]``, or not canonically (naming the canonical
            spelling, e.g. ``intense-k5`` for ``intense-k05``).
        GenerationError: for an unknown transform, a missing, non-int or out-of-range parameter, or a bad seed.
    """
    from tgbhub.local.gateway import derived_names as names

    return names(base, None if kinds is None else list(kinds), None if seeds is None else list(seeds))


def counterfactual(name: str, model: str | None = None, *, predictions: str | os.PathLike[str] | None = None,
                   kinds: Sequence[str] | None = None, seeds: Sequence[int] | None = None, negatives: str = "paired",
                   controls: Sequence[str] = ("edgebank", "recency"), epsilon: float = 0.05,
                   cache_dir: str | os.PathLike[str] | None = None, offline: bool | None = None) -> Report:
    """The counterfactual sanity check (TLPCF) of a baseline ``model`` or a ``predictions`` file on dataset ``name``.

    Loads ``name`` and its distorted variants, scores every condition with the model and with the ``controls``,
    and compares real against each kind (:func:`tgbhub.evaluate.counterfactual.evaluate_counterfactual`).

    >>> report = counterfactual("t-grab/ce-64", "persistence", seeds=range(3))   # doctest: +SKIP
    >>> sorted({r["verdict"] for r in report.rows if r["model"] == "persistence"})   # doctest: +SKIP

    Args:
        name: the real (base) dataset, ``family/name[@version]``.
        model: a baseline scored on every condition; pass this or ``predictions``.
        predictions: a long-format Parquet file of scores for every condition; pass this or ``model``.
        kinds: the distortions, written as in a variant's name (``"shuffle"``, ``"intense-k5"``); default the three
            published kinds (with ``predictions`` and no ``kinds``/``seeds``: the variants the file scores).
        seeds: the variants' seeds (default 0-9).
        negatives: ``"paired"`` (the parent's negatives of each query) or ``"regenerated"``.
        controls: baselines scored beside the model (default EdgeBank-inf and the recency heuristic).
        epsilon: the margin of the ``margin_drop`` flag.
        cache_dir: the cache root (default: ``$TGBHUB_CACHE``, else the user cache folder).
        offline: open no socket (default: ``$TGBHUB_OFFLINE``).

    Returns:
        A :class:`~tgbhub.evaluate.counterfactual.Report` (``.rows``, ``.to_json()``, ``.write(folder)``).

    Raises:
        InvalidNameError: if ``name`` is a derived dataset, a kind is malformed, or neither/both of ``model`` and
            ``predictions`` are given.
        UnsupportedTaskError: if ``model`` or a control is not a baseline of the one-vs-many ranking task, or ``name``
            is not a temporal graph.
        DatasetNotFoundError, SourceUnavailableError: for a dataset or variant that cannot be loaded.
        ScoreError, SubmissionError: for predictions that miss a condition or break the long format.
    """
    from tgbhub.baselines import run_baseline
    from tgbhub.errors import InvalidNameError
    from tgbhub.evaluate.counterfactual import REAL, Predict, evaluate_counterfactual, read_predictions

    if (model is None) == (predictions is None):
        raise InvalidNameError("pass exactly one of model= (a baseline name, e.g. 'edgebank') and predictions= (a "
                               "long-format Parquet file)")
    real = load_dataset(name, cache_dir=cache_dir, offline=offline)
    require_kind(real.manifest, "temporal-graph", "the counterfactual check")
    if real.manifest.derived_from is not None:
        raise InvalidNameError(f"{name} is a derived dataset; pass its base, {real.manifest.derived_from}")
    scored = read_predictions(predictions) if predictions is not None else None
    if scored is not None and kinds is None and seeds is None:
        wanted = sorted({v for v, _ in scored if v != REAL})
    else:
        wanted = derived_names(real.manifest.name, kinds or None, seeds)
    variants = [load_dataset(variant, cache_dir=cache_dir, offline=offline) for variant in wanted]

    def baseline(label: str) -> Predict:
        # a heuristic is deterministic: the run number does not change its scores
        return lambda dataset, task, run: run_baseline(label, dataset, dataset.manifest.task_named(task), "test")

    models: dict[str, Predict | Mapping[Any, Any]] = {}
    if model is not None:
        models[model] = baseline(model)
    elif predictions is not None and scored is not None:  # always, when no model is given (checked above)
        models[Path(predictions).stem] = scored
    for label in controls:
        models.setdefault(label, baseline(label))
    return evaluate_counterfactual(real, variants, models, negatives=negatives, epsilon=epsilon,
                                   controls=[c for c in controls if c != model])


def generative_check(name: str, predictions: str | os.PathLike[str], *, seeds: Sequence[int] | None = None,
                     fallback: str = "cap", clip_to_reference_window: bool = False, directed: bool = True,
                     cache_dir: str | os.PathLike[str] | None = None, offline: bool | None = None
                     ) -> dict[str, Any]:
    """The generative evaluation (TLPCF's ATD/ACD) of predicted events on dataset ``name``, beside its reference
    baselines: the shuffle and INTENSE k=1 variants of ``seeds`` scored as oracles, and the validation window
    replayed.

    Args:
        name: the real dataset, ``family/name[@version]``.
        predictions: a Parquet file of predicted events (``src``, ``dst``, ``t`` and optionally ``sample_id``).
        seeds: the seeds of the variants the oracle baselines are scored on (default the published seeds, 0-9).
        fallback: ATD's missing-pair convention (``cap``, ``horizon_end`` or ``error``).
        clip_to_reference_window: drop predicted events outside the real test window.
        directed: ``False`` to count ``(u, v)`` and ``(v, u)`` as one pair.
        cache_dir: the cache root (default: ``$TGBHUB_CACHE``, else the user cache folder).
        offline: open no socket.

    Returns:
        :func:`~tgbhub.evaluate.generative.generative_evaluation`'s result with a ``baselines`` entry.

    Raises:
        InvalidNameError: for an unknown fallback or a malformed predictions file.
        DatasetNotFoundError: if ``name`` (or a variant's parent) does not exist.
    """
    from tgbhub.evaluate import generative

    real = load_dataset(name, cache_dir=cache_dir, offline=offline)
    result = generative.generative_evaluation(real, predictions, fallback=fallback,
                                              clip_to_reference_window=clip_to_reference_window, directed=directed)
    shuffles, jittered = ([load_dataset(variant, cache_dir=cache_dir, offline=offline)
                           for variant in derived_names(real.manifest.name, [kind], seeds)]
                          for kind in ("shuffle", "intense-k1"))
    result["baselines"] = generative.generative_baselines(
        real, shuffles, jittered, fallback=fallback, clip_to_reference_window=clip_to_reference_window,
        directed=directed)
    return result


def describe(name: str, *, cache_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Everything ``tgbhub info`` shows of a dataset, as plain data: its summary, versions, recipe, tasks (declared
    and on request), files (each with its file ``sha256``, what a download is checked against, and its logical
    ``digest``, what a rebuild is checked against), known discrepancies, changelog and citation. A derived
    dataset's manifest is derived on the first call. A dataset an importer's catalogue has and this cache has not
    imported gets its catalogue card, with ``status`` ``import required``.

    Args:
        name: ``family/name[@version]``.
        cache_dir: the cache root (default: ``$TGBHUB_CACHE``, else the user cache folder).

    Returns:
        The card, JSON-ready.

    Raises:
        DatasetNotFoundError: if no catalogue has ``name`` (with suggestions).
        InvalidNameError: for a malformed name (a bare name an importer's catalogue has gets its family suggested).
    """
    try:
        manifest = with_task_documents(manifest_of(name, cache_dir=cache_dir))
    except TgbhubError:
        card = catalogue_card(name)
        if card is None:
            raise
        return {**card, "status": "import required"}
    # a variant built on request is not in the catalogue: its versions are its base's
    listed = manifest.name if _REGISTRY.has(manifest.name) or not manifest.derived_from else \
        manifest.derived_from.partition("@")[0]
    if _REGISTRY.has(listed):
        versions = _REGISTRY.versions(listed)
    else:  # imported, so in no catalogue: the versions this cache keeps
        from tgbhub.local.imports import stored_versions

        versions = [path.name.removesuffix(".manifest.json")
                    for path in stored_versions(config.cache_root(cache_dir), manifest.name)]
    graph = manifest.graph
    return {"name": manifest.name, "version": manifest.version, "versions": versions,
            "description": manifest.description, **dataset_summary(manifest), **split_ranges(manifest),
            "bytes": sum(f.size for f in manifest.files),
            "derived_from": manifest.derived_from, "transform": manifest.transform,
            "replaces": (graph.get("replaces") or {}).get("split"),
            "recipe": plain(manifest.raw.get("recipe")) or {}, "task": plain(manifest.task),
            "tasks": [plain(t) for t in manifest.tasks], "citation": manifest.raw.get("citeAs"),
            "changelog": [plain(e) for e in manifest.changelog],
            "files": [{"name": f.name, "sha256": f.sha256, "size": f.size, "digest": f.digest} for f in manifest.files],
            "hash_kinds": {"sha256": SHA256_KIND, "digest": DIGEST_KIND},
            "known_discrepancies": plain(manifest.known_discrepancies),
            "tasks_on_request": [{"name": spec.name, "type": spec.type, "version": spec.version,
                                  "summary": spec.summary} for spec in tasks_on_request(manifest)]}
