"""The figures of the site's dataset pages: every kind :mod:`tgbhub.plot` draws for a dataset, drawn only from data
the cache already holds (nothing is built or downloaded for a figure) and kept in the cache, so a rebuild of the
site draws only what changed.

A drawn figure is stored at ``<cache>/.figures/<family>/<name>/<digest>-<kind>-v<drawing version>.png`` beside a
``.json`` with its title and alt text. ``digest`` is the dataset's content digest (its files' sha256, and its
parent's for a derived dataset, from the manifests: nothing is read to know it), so new data, a new figure kind or a
new drawing (:data:`tgbhub.plot.DRAWING_VERSION`) is drawn, and everything else is copied into the site as it is.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tgbhub import api, cache, plot
from tgbhub.errors import CacheWriteError, MissingExtraError, SourceUnavailableError, TgbhubError
from tgbhub.local.imports import stored_versions
from tgbhub.manifest import Manifest, read_manifest
from tgbhub.registry import DERIVED_MARK, parse_reference

#: the folder of the cache root that holds drawn figures (a dot-folder: no family is called that)
STORE = ".figures"


class FigureWarning(UserWarning):
    """A dataset page of the site got no figure (matplotlib missing, the cached data could not be read)."""


@dataclass(frozen=True)
class PageFigure:
    """One figure on a page: ``src`` (the PNG beside the page), ``kind``, ``title`` and ``alt``."""

    kind: str
    src: str
    title: str
    alt: str


@dataclass
class Figures:
    """What :func:`site_figures` found: ``pages`` (name -> its figures), ``skipped`` (name -> why it has none),
    ``files`` (site path -> PNG bytes), and how many figures were ``drawn`` now and ``reused`` from the cache."""

    pages: dict[str, list[PageFigure]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    drawn: int = 0
    reused: int = 0


def content_digest(manifest: Manifest) -> str:
    """A dataset's content digest from its manifest: its files' sha256 (and its parent's for a derived dataset).

    Raises:
        DatasetNotFoundError, VersionNotFoundError: if a derived dataset's parent is not in the catalogue.
    """
    parts: list[Any] = [[(entry.name, entry.sha256) for entry in manifest.files]]
    if manifest.derived_from is not None:
        parts.append([(entry.name, entry.sha256) for entry in api.resolve(manifest.derived_from).files])
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def stored_path(root: Path, manifest: Manifest, kind: str) -> Path:
    """Where the figure ``kind`` of ``manifest``'s dataset is kept in the cache at ``root`` (``.png``)."""
    family, _, short = manifest.name.partition("/")
    return root / STORE / family / short / f"{content_digest(manifest)[:24]}-{kind}-v{plot.DRAWING_VERSION}.png"


def manifest_in_cache(row: Mapping[str, Any], manifests: Mapping[str, Manifest], root: Path) -> Manifest | None:
    """The manifest of a row's dataset when the cache holds it (and, for a derived one, its parent), else None."""
    name, version = row["name"], row["version"]
    if row["status"] not in ("cached", "imported") or version is None:
        return None
    manifest = manifests.get(name)
    if manifest is None:  # a published variant: its manifest was derived into this cache when it was built
        try:
            manifest = cached_manifest(f"{name}@{version}", root)
        except TgbhubError:
            return None
    if manifest.derived_from is not None:
        parent, _, parent_version = manifest.derived_from.partition("@")
        if not cache.is_complete(root, parent, parent_version):
            return None
    return manifest


def load_from_cache(manifest: Manifest, root: Path) -> Any:
    """The dataset, opened from the cache only: offline, and the Hub as the only source, which offline drops, so a
    miss fails instead of building or downloading.

    Raises:
        SourceUnavailableError: if the cache does not hold it (or a derived dataset's parent), naming `tgbhub get`.
    """
    missing = [m for m in (manifest, *([api.resolve(manifest.derived_from)] if manifest.derived_from else []))
               if not cache.is_complete(root, m.name, m.version)]
    if missing:
        reference = f"{missing[0].name}@{missing[0].version}"
        raise SourceUnavailableError(reference, [("cache", f"not in the cache at {root}")],
                                     f"A figure is drawn from the cache only: run `tgbhub get {reference}` first.")
    return api.load_dataset(manifest.name, manifest.version, cache_dir=root, offline=True, sources="hub")


def cached_manifest(name: str, root: Path) -> Manifest:
    """The manifest of ``name`` (``family/name[@version]``) without building anything: the catalogue's, else the one
    an import or a derivation stored in the cache at ``root``.

    Raises:
        InvalidNameError: for a malformed name.
        SourceUnavailableError: for a variant of a known dataset that the cache does not hold (naming `tgbhub get`).
        DatasetNotFoundError, VersionNotFoundError: for a name neither the catalogue nor the cache knows.
    """
    reference = parse_reference(name)
    if DERIVED_MARK not in reference.name and api.registry().has(reference.name):
        return api.resolve(name)
    kept = [read_manifest(path) for path in stored_versions(root, reference.name)]
    chosen = [m for m in kept if reference.version in (None, m.version)]
    if chosen:
        return chosen[-1]
    if DERIVED_MARK in reference.name and api.registry().has(reference.name.split(DERIVED_MARK, 1)[0]):
        raise SourceUnavailableError(name, [("cache", f"no derived copy in the cache at {root}")],
                                     f"A figure is drawn from the cache only: run `tgbhub get {name}` first.")
    return api.resolve(name)  # raises, with the catalogue's suggestions


def _write_figure(drawn: plot.Drawn, target: Path) -> None:
    """The PNG and its ``.json`` (title, alt), each under a temporary name first so no half file is ever found.

    Raises:
        CacheWriteError: naming the path and the way out.
    """
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial.png")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        plot.save(drawn.figure, partial)
        cache.write_text_atomic(target.with_suffix(".json"), json.dumps({"title": drawn.title, "alt": drawn.alt}))
        partial.replace(target)
        # the same kind drawn from older data or by an older drawing is never read again: the folder stays one
        # figure per kind
        for stale in target.parent.glob(f"*-{drawn.kind}-v*"):
            if stale.stem != target.stem and not stale.name.startswith("."):
                stale.unlink(missing_ok=True)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise CacheWriteError(f"a site figure ({target})", exc) from exc


def draw_dataset(name: str, version: str, root: str, kinds: Sequence[str]) -> tuple[int, str | None]:
    """Draw ``kinds`` of one cached dataset into the cache's figure store (what a worker of :func:`site_figures` runs;
    plain arguments and results, so it crosses a process boundary).

    Returns:
        ``(figures drawn, why the cached data could not be drawn, or None)``.

    Raises:
        CacheWriteError: if a figure cannot be stored (it pickles as made, so it comes back from a worker whole).
    """
    folder = Path(root)
    try:
        manifest = cached_manifest(f"{name}@{version}", folder)
        drawings = plot.draw_all(load_from_cache(manifest, folder), kinds)
    except CacheWriteError:
        raise
    except TgbhubError as exc:  # a damaged entry: the page says so, the site still builds
        return 0, f"the cached data could not be drawn: {exc}"
    for drawn in drawings:
        _write_figure(drawn, stored_path(folder, manifest, drawn.kind))
    return len(drawings), None


def _draw_many(jobs: Sequence[tuple[str, str, list[str]]], root: Path, workers: int
               ) -> dict[str, tuple[int, str | None]]:
    """:func:`draw_dataset` of every ``(name, version, kinds)``: in this process, or spread over ``workers`` fresh
    processes (spawned, not forked: ``tgbhub hub serve`` rebuilds its site from a process that runs threads)."""
    if workers <= 1 or len(jobs) < 2:
        return {name: draw_dataset(name, version, str(root), kinds) for name, version, kinds in jobs}
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    done: dict[str, tuple[int, str | None]] = {}
    try:
        with ProcessPoolExecutor(max_workers=min(workers, len(jobs)),
                                 mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = {name: pool.submit(draw_dataset, name, version, str(root), kinds)
                       for name, version, kinds in jobs}
            for name, future in futures.items():
                done[name] = future.result()
    except BrokenProcessPool:
        pass  # no worker could start (a program read from stdin cannot be spawned again): the rest are drawn here
    for name, version, kinds in jobs:
        if name not in done:
            done[name] = draw_dataset(name, version, str(root), kinds)
    return done


def default_workers(jobs: int) -> int:
    """Worker processes for ``jobs`` datasets to draw: one per CPU up to 8, and none (this process) for fewer than
    4 datasets, where starting a process (importing numpy and matplotlib again) costs more than it saves."""
    return 1 if jobs < 4 else min(os.cpu_count() or 1, 8, jobs)


def site_figures(rows: Sequence[Mapping[str, Any]], manifests: Mapping[str, Manifest], root: Path,
                 page_of: Mapping[str, str], *, required: bool = False, workers: int | None = None) -> Figures:
    """The figures of every page whose dataset the cache at ``root`` holds: reused from the cache's figure store,
    drawn (and stored) where missing.

    Args:
        rows: the catalogue rows of the site.
        manifests: name -> manifest of the dataset pages (a variant's is read from the cache).
        root: the cache root.
        page_of: name -> the page's path in the site (``datasets/<family>/<name>.html``).
        required: an explicit request for figures (``--with-figures``): a missing matplotlib raises instead of
            leaving the figures out with a warning.
        workers: processes drawing datasets side by side (default: :func:`default_workers`; 1 draws here).

    Returns:
        The figures by page, the PNG files to write into the site, what was skipped and why.

    Raises:
        MissingExtraError: with ``required``, if matplotlib is not installed.
        CacheWriteError: if a figure cannot be stored in the cache.
    """
    found = Figures()
    planned: list[tuple[str, dict[str, Path]]] = []
    jobs: list[tuple[int, str, str, list[str]]] = []
    for row in rows:
        manifest = manifest_in_cache(row, manifests, root)
        name = row["name"]
        if manifest is None or name not in page_of:
            continue  # never build or download for a figure: the site shows what this cache holds
        stored = {kind: stored_path(root, manifest, kind) for kind in plot.kinds_for(manifest)}
        to_draw = [kind for kind, path in stored.items()
                   if not (path.is_file() and path.with_suffix(".json").is_file())]
        planned.append((name, stored))
        found.reused += len(stored) - len(to_draw)
        if to_draw:
            jobs.append((sum(entry.size for entry in manifest.files), name, manifest.version, to_draw))
    if jobs:
        try:
            plot.require_matplotlib("the site's figures (`tgbhub site build`)")
        except MissingExtraError as exc:
            if required:
                raise
            found.skipped.update((job[1], str(exc)) for job in jobs)
            warnings.warn(f"no figures drawn: {exc}", FigureWarning, stacklevel=2)  # one line, not one per dataset
            jobs = []
    # the largest datasets first, so no worker is left with one long drawing at the end
    ordered = [(name, version, kinds) for _, name, version, kinds in sorted(jobs, key=lambda job: -job[0])]
    done = _draw_many(ordered, root, default_workers(len(ordered)) if workers is None else workers)
    for name, (drawn, reason) in done.items():
        found.drawn += drawn
        if reason is not None:
            found.skipped[name] = reason
            warnings.warn(f"no figures for {name}: {reason}", FigureWarning, stacklevel=2)
    for name, stored in planned:
        if name in found.skipped:
            continue
        page = page_of[name].removesuffix(".html")
        figures = []
        for kind, path in stored.items():
            words = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
            # not Path.with_suffix: a name like k0.5-rho0.05-n8 has dots of its own
            file = f"{page}.{kind}.png"
            found.files[file] = path.read_bytes()
            figures.append(PageFigure(kind, file.rsplit("/", 1)[-1], str(words["title"]), str(words["alt"])))
        found.pages[name] = figures
    return found
