"""The local-build source: regenerate a dataset from its manifest's recipe, bit for bit, with no network; and the
one path by which anything built on request (a variant no catalogue publishes) enters the cache.

This is the only library module that imports generator code (``generators``, always on use: numba kernels
load with it); everything else reaches the generators through the functions here.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from tgbhub.cache import (
    Fetched,
    entry_lock,
    install_locked,
    naming_the_disk,
    stored_manifest_path,
    write_text_atomic,
)
from tgbhub.errors import GenerationError, IntegrityError, SourceWarning
from tgbhub.hashing import file_sha256
from tgbhub.manifest import Manifest, Recipe, parse_manifest, read_manifest

if TYPE_CHECKING:  # for annotations only: generator code loads on use, numba kernels with it
    import numpy as np

    from generators.families import Distances
    from generators.importers import Converted, Release
    from tgbhub.tasks.specs import TaskArtifactsBuilder, TaskSpec

#: ``build(staging)`` of a dataset built on request: write its files into ``staging`` and return its manifest
#: document (the generator's, byte for byte what a catalogue would ship) and what it wrote
OnRequest = Callable[[Path], tuple[dict[str, Any], Fetched]]
T = TypeVar("T")


class CatalogueEntry(Protocol):
    """An importer's catalogue entry, as the library reads it: the dataset's name in the benchmark; the rest is the
    importer's (handed back to its own ``card``, ``release``, ``version`` and ``convert``)."""

    @property
    def name(self) -> str: ...


class ImporterPlugin(Protocol):
    """What the library uses of a registered importer (:class:`generators.importers.Importer`): its ``name``,
    ``family`` and ``summary``, its catalogue (``names()``, ``entry(name)``, ``card(entry)``), where an entry's
    release lives and the version an import gets, and ``convert(entry, release_path, release_sha256,
    expected_stats, folder[, progress=])``."""

    @property
    def name(self) -> str: ...

    @property
    def family(self) -> str: ...

    @property
    def summary(self) -> str: ...

    @property
    def names(self) -> Callable[[], list[str]]: ...

    @property
    def entry(self) -> Callable[[str], CatalogueEntry]: ...

    @property
    def card(self) -> Callable[[CatalogueEntry], dict[str, Any]]: ...

    @property
    def release(self) -> Callable[[CatalogueEntry], Release]: ...

    @property
    def version(self) -> Callable[[CatalogueEntry], str]: ...

    @property
    def convert(self) -> Callable[..., Converted]: ...

    @property
    def reports_progress(self) -> bool: ...


def _as_manifest(document: dict[str, Any]) -> tuple[Manifest, Manifest]:
    manifest = parse_manifest(document)
    return manifest, manifest


@dataclass(frozen=True)
class Parent:
    """A derived dataset's verified parent, as its builder reads it: the manifest and every file's columns
    (file name -> column name -> array), exactly as the cache verified them."""

    manifest: Manifest
    columns: Mapping[str, Mapping[str, np.ndarray]]


class BuildSource:
    """Rebuilds datasets whose manifest carries a recipe, using the bundled generators.

    ``parents`` holds the verified parents (keyed ``family/name@version``) of the derived datasets it may be asked to
    build; the composition root loads them first (:func:`tgbhub.load_dataset`). ``cache_root`` is handed to builders
    that read what an import kept there (they never look the cache up themselves). The constructor does no I/O.
    """

    name = "build"
    label = "build"
    needs_network = False

    def __init__(self, parents: Mapping[str, Parent] | None = None, cache_root: Path | None = None) -> None:
        self.parents = dict(parents or {})
        self.cache_root = cache_root

    def can_serve(self, manifest: Manifest) -> bool:
        return manifest.recipe is not None

    def preflight(self, manifest: Manifest) -> None:
        """Check, without building anything, that this machine would rebuild ``manifest`` bit for bit.

        Raises:
            GenerationError: naming the component that differs (or the missing generator), with the way out.
        """
        from generators.build import preflight

        preflight(_recipe(manifest))

    def fetch(self, manifest: Manifest, staging: Path) -> Fetched:
        """Generate the dataset and write its artifacts into ``staging``.

        Raises:
            GenerationError: if this tgbhub lacks the recipe's generator or generator version, the family's
                preflight finds this machine cannot reproduce the published values (before building), or a derived
                dataset's parent was not handed over, or the manifest has no recipe.
        """
        from generators.build import Inputs, rebuild  # heavy: numba kernels load on use

        recipe = _recipe(manifest)
        parent = manifest.derived_from
        if parent is not None and parent not in self.parents:
            raise GenerationError(f"{manifest.name}@{manifest.version} is derived from {parent}, which was not "
                                  "loaded first; build it through tgbhub.load_dataset, which verifies the parent")
        built = rebuild(recipe, staging, Inputs(parents=self.parents, cache_root=self.cache_root))
        return Fetched(files=built.files, columns=built.columns, rebuilt=True)


def _recipe(manifest: Manifest) -> Recipe:
    """The recipe ``manifest`` is built from.

    Raises:
        GenerationError: if it has none (it cannot be built locally).
    """
    if manifest.recipe is None:
        raise GenerationError(f"{manifest.name}@{manifest.version} has no recipe, so it cannot be built locally; "
                              "fetch it from a hub or mirror")
    return manifest.recipe


def build_and_install(root: Path, name: str, version: str, build: OnRequest, *, stored: Path | None = None,
                      load: Callable[[Path], T | None] = read_manifest,  # type: ignore[assignment]
                      parse: Callable[[dict[str, Any]], tuple[T, Manifest]] = _as_manifest,  # type: ignore[assignment]
                      expected_sha256: str | None = None,
                      fetch_published: Callable[[], bytes | None] | None = None,
                      reuse: bool = True) -> tuple[T, bool]:
    """Build ``name@version`` on request into a staging folder, verify it against the manifest its build wrote,
    install it and store that document at ``stored`` (default ``cache.stored_manifest_path``), all under the entry's
    lock; return what the document describes and whether this call built it.

    ``load(path)`` reads a stored document back (``None``: unusable, build again) and ``parse(document)`` gives the
    object returned and the manifest the files are verified against: by default both are the dataset manifest; a
    task document passes its own. ``expected_sha256``: the sha256 of the published document's bytes, for a published
    dataset whose manifest is derived rather than shipped; the document the build writes must be exactly that one
    (before anything is installed), and a stored one that is not is built again. ``fetch_published()``, if given,
    returns that document from a hub (or ``None``): one with the expected sha256 is stored instead of building, and
    the files then come through the normal verified path (hub, mirror or build); any other is warned about and the
    dataset built here. ``reuse=False`` builds even when a document is stored (an import reads its release again).

    Concurrent callers build once: the others wait for the lock and read the stored document. A document built here
    takes its name last, after its files were verified and installed; a lost entry (or one never installed, for a
    document taken from a hub) is fetched or rebuilt from the document's recipe, like any published dataset.

    Raises:
        GenerationError: whatever the build raises (nothing is installed or stored).
        IntegrityError: if the built document is not the published one (``expected_sha256``), or the built files do
            not verify against their own manifest (a generator bug); nothing is installed or stored.
        DiskFullError: if the disk or quota under ``root`` fills up on the way (what was written is removed).
    """
    stored = stored or stored_manifest_path(root, name, version)

    def kept() -> T | None:
        if not stored.is_file():
            return None
        if expected_sha256 is not None and file_sha256(stored) != expected_sha256:
            return None  # not the published document (damaged, or left by an older tgbhub): build it again
        return load(stored)

    found = kept() if reuse else None
    if found is not None:
        return found, False
    with naming_the_disk(root, f"{name}@{version}"), entry_lock(root, name, version):
        found = kept() if reuse else None
        if found is not None:  # built by another process while this one waited
            return found, False
        if _stored_published(stored, name, version, expected_sha256, fetch_published):
            return load(stored), False  # type: ignore[return-value]
        texts: list[str] = []
        parsed: list[tuple[T, Manifest]] = []

        def fetch(staging: Path) -> Fetched:
            document, fetched = build(staging)
            texts.append(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
            _check_published(name, version, texts[0], expected_sha256)
            parsed.append(parse(json.loads(texts[0])))  # what a later load reads back from the stored text
            return fetched

        install_locked(root, name, version, fetch, lambda fetched, staging: parsed[0][1])
        write_text_atomic(stored, texts[0])
    return parsed[0][0], True


def _stored_published(stored: Path, name: str, version: str, expected_sha256: str | None,
                      fetch_published: Callable[[], bytes | None] | None) -> bool:
    """Store the published document a hub serves, if it is byte for byte the expected one; whether it was."""
    if expected_sha256 is None or fetch_published is None:
        return False
    document = fetch_published()
    if document is None:
        return False
    actual = hashlib.sha256(document).hexdigest()
    if actual != expected_sha256:
        warnings.warn(f"{name}@{version}: the hub's manifest has sha256 {actual}, the catalogue publishes "
                      f"{expected_sha256}; deriving it here instead", SourceWarning, stacklevel=4)
        return False
    write_text_atomic(stored, document.decode("utf-8"))
    return True


def _check_published(name: str, version: str, text: str, expected_sha256: str | None) -> None:
    """Raises IntegrityError if a derived manifest is not, byte for byte, the published one."""
    if expected_sha256 is None:
        return
    actual = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if actual != expected_sha256:
        raise IntegrityError(f"{name}@{version}: manifest derived here", f"sha256 {expected_sha256} (published)",
                             f"sha256 {actual}", "This machine derived another manifest than the published one, so "
                             "nothing was installed. Run `tgbhub doctor` and report what it prints, with the dataset "
                             "name; the parent dataset itself is unaffected.")


def parse_derived_name(name: str) -> tuple[str, str, dict[str, Any], int] | None:
    """``(base, kind, params, seed)`` of a variant name (``base~kind[-pN...]-sSEED``), or ``None`` if ``name``
    has not that shape."""
    from generators.tlpcf.catalogue import parse_derived

    return parse_derived(name)


def canonical_derived_name(base: str, kind: str, params: Mapping[str, Any], seed: int) -> str:
    """The canonical name of a variant.

    Raises:
        GenerationError: for an unknown transform, a missing, non-int or out-of-range parameter (naming the allowed
            range), or a bad seed.
    """
    from generators.tlpcf.catalogue import derived_name

    return derived_name(base, kind, params, seed)


def derived_names(base: str, kinds: Sequence[str] | None = None, seeds: Sequence[int] | None = None) -> list[str]:
    """The canonical names of ``base``'s variants of each kind, written as in a variant's name (``shuffle``,
    ``intense-k5``; default the published kinds), and each seed (default the published seeds): in kind order, then by
    seed.

    Raises:
        InvalidNameError: for a kind not written ``KIND[-PARAMVALUE...]``, or not canonically (naming the canonical
            spelling).
        GenerationError: for an unknown transform, a missing, non-int or out-of-range parameter, or a bad seed.
    """
    from generators.tlpcf.catalogue import derived_names as names

    return names(base, kinds, seeds)


def check_transform_applies(kind: str, parent: Manifest) -> None:
    """Refuse, before any work, a transform on a dataset of a kind it does not rewrite.

    Raises:
        GenerationError: naming the transform, the dataset and the kinds the transform applies to.
    """
    from generators.transforms import applicable

    applicable(kind, f"{parent.name}@{parent.version}", parent.graph.get("kind"))


def transform_cards() -> list[dict[str, Any]]:
    """Every registered transform as ``tgbhub list``/``info`` show it (name, summary, parameters with bounds, the
    dataset kinds it applies to, an example suffix)."""
    from generators.transforms import transforms

    return [spec.card() for spec in transforms()]


def derived_builder(open_parent: Callable[[], Parent], kind: str, params: Mapping[str, Any], seed: int,
                    distances: Distances) -> OnRequest:
    """The on-request build of one variant of the verified parent ``open_parent()`` returns (opened only when the
    variant is built, not when it is found): its files and the manifest the catalogue's own code would write (see
    :func:`build_and_install`); ``distances`` is the evaluator's ATD/ACD the manifest records, handed over by the
    composition root.

    Raises (when called):
        GenerationError: for a parent the transform cannot rewrite (no test split, no ranking negatives, ...) or a
            failed invariant.
    """
    def build(staging: Path) -> tuple[dict[str, Any], Fetched]:
        from generators.tlpcf.artifacts import manifest_document, transform, write
        from generators.tlpcf.catalogue import Derivation

        parent = open_parent()
        manifest = parent.manifest
        variant = Derivation(base=manifest.name, base_version=manifest.version, kind=kind, params=dict(params),
                          seed=seed)
        files = transform(manifest, parent.columns, kind, params, seed)
        written = write(files, staging)
        document = manifest_document(variant, manifest, parent.columns, files, staging, distances)
        return document, Fetched(files=written, columns=files, rebuilt=True)

    return build


def task_artifacts(spec: TaskSpec | None, generator: str | None = None,
                   version: str | None = None) -> TaskArtifactsBuilder:
    """The builder of a task's artifacts: the task plug-in's own (``spec.artifacts`` with ``build``/``write``/
    ``document``), or the generator of ``generators/`` it names (by default ``spec.artifacts``; a task document's
    recipe passes its ``generator`` and ``version``).

    Raises:
        GenerationError: if this tgbhub lacks that generator or generator version.
    """
    if spec is not None and not isinstance(spec.artifacts, str):
        return spec.artifacts
    from generators.forecast import artifacts_for

    named = spec.artifacts if spec is not None else None  # a generator's name: a plug-in's own builder returned above
    name = generator or named
    if name is None or not isinstance(name, str):
        raise GenerationError("a task's artifacts need a generator: neither a task plug-in nor a recipe names one")
    return artifacts_for(name, version)


def task_builder(manifest: Manifest, columns: Mapping[str, Mapping[str, np.ndarray]], spec: TaskSpec) -> OnRequest:
    """The on-request build of task ``spec`` (a :class:`tgbhub.tasks.specs.TaskSpec`) of a dataset with no bundled
    task document: its artifacts and its task document, written by the same builder the bundled documents are
    (``builtOnRequest`` marks it)."""
    def build(staging: Path) -> tuple[dict[str, Any], Fetched]:
        builder = task_artifacts(spec)
        files = builder.build(manifest, columns, builder.seed, spec.definition)
        written = builder.write(files, staging)
        document = {**builder.document(manifest, columns, files, staging, spec.definition), "builtOnRequest": True}
        return document, Fetched(files=written, columns=files, rebuilt=True)

    return build


def importer_names() -> list[str]:
    """Every registered importer (each converts one family's releases: ``tgbhub import FAMILY/NAME``)."""
    from generators.importers import names

    return names()


def importer_plugin(name: str) -> ImporterPlugin:
    """The registered importer ``name`` (:class:`generators.importers.Importer`).

    Raises:
        GenerationError: if there is no such importer (listing the known ones).
    """
    from generators.importers import importer

    return importer(name)


def kept_release(cache_root: Path, importer: str, file_name: str) -> Path:
    """Where an import keeps the release it read (the importer's family rebuilds from it)."""
    from generators.importers import kept_release as path

    return path(cache_root, importer, file_name)


def batch_negatives(pair_codes: np.ndarray, t: np.ndarray, lo: np.ndarray, hi: np.ndarray, num_nodes: int,
                    symmetric: bool, stream: str, split: str, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One negative per positive for each group of events ``[lo[g], hi[g])`` (the batch protocol's), drawn by the
    window task's sampler from the counter-based stream named ``stream``/``split``/``seed``: ``(src, dst, fill)``.

    Raises:
        GenerationError: as the sampler (a group it cannot fill, naming it).
    """
    import numpy as np

    from generators.forecast.negatives import group_negatives  # numba kernels load on use
    from generators.negatives import stream_key

    key = stream_key(stream, split, seed)
    return group_negatives(pair_codes, t, np.arange(len(lo)), lo, hi, num_nodes, symmetric, key)
