"""Dataset names, versions and the catalogue of manifests.

Names are checked before any path is built from them; the catalogue is read lazily, on first use.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from tgbhub.errors import DatasetNotFoundError, InvalidNameError, VersionNotFoundError
from tgbhub.manifest import DERIVED_INDEX, DerivedEntry, Manifest, read_derived_index, read_manifest

_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*/[a-z0-9][a-z0-9._~-]*$")
_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
_EXAMPLE = "'t-grab/ce-64' or 't-grab/ce-64@1.0.0'"
#: the longest ``family/name`` accepted: each part becomes a folder name, and file systems stop at 255 bytes
MAX_NAME = 200
#: separates a derived dataset's base name from its transform in its name
DERIVED_MARK = "~"


@dataclass(frozen=True)
class Reference:
    """A validated ``family/name`` plus an optional exact version."""

    name: str
    version: str | None

    @property
    def family(self) -> str:
        return self.name.split("/", 1)[0]


def _check_version(version: str, text: str) -> str:
    bare = version[1:] if version.startswith("v") else version
    if not _VERSION.fullmatch(bare):
        raise InvalidNameError(f"version {version!r} in {text!r} is not semver MAJOR.MINOR.PATCH; e.g. {_EXAMPLE}")
    return bare


def parse_reference(text: str, version: str | None = None) -> Reference:
    """Validate a dataset reference ``family/name[@version]``.

    Raises:
        InvalidNameError: on anything but lower-case ``family/name`` (letters, digits, ``-``, ``.``, ``_``), a
            ``..`` segment, an absolute path, whitespace, a malformed version, or two different versions.
    """
    if not isinstance(text, str):
        raise InvalidNameError(f"dataset name must be a string like {_EXAMPLE}, got {type(text).__name__}")
    name, at, pinned = text.partition("@")
    if at and not pinned:
        raise InvalidNameError(f"{text!r} ends in '@' with no version: write '{name}@MAJOR.MINOR.PATCH', or drop "
                               "the '@' for the newest version")
    if len(name) > MAX_NAME:
        raise InvalidNameError(f"dataset name {name[:40]!r}... is {len(name)} characters long; a name has at most "
                               f"{MAX_NAME} (a file name on most file systems has at most 255 bytes)")
    if not _NAME.fullmatch(name) or ".." in name:
        raise InvalidNameError(f"invalid dataset name {text!r}: use lower-case 'family/name' with letters, digits, "
                               f"'-', '.' or '_' (no spaces, '..', leading '/' or second '/'), e.g. {_EXAMPLE}")
    chosen = [_check_version(v, text) for v in (pinned or None, version) if v]
    if len(set(chosen)) > 1:
        raise InvalidNameError(f"{text!r} pins version {chosen[0]} but version={version!r} was also given; "
                               "pass only one of them")
    return Reference(name=name, version=chosen[0] if chosen else None)


def natural_key(name: str) -> list[tuple[int, float, str]]:
    """Sort key that reads numbers as numbers: ``ce-4`` before ``ce-16``, ``rho0.05`` before ``rho0.1``.

    Each part is tagged so a number and a word at the same position compare without a ``TypeError``.
    """
    parts = re.split(r"(\d+(?:\.\d+)?)", name)
    return [(0, float(part), "") if index % 2 else (1, 0.0, part) for index, part in enumerate(parts)]


def version_key(version: str) -> tuple[int, ...]:
    """Sort key of a semver string."""
    return tuple(int(part) for part in version.split("."))


def default_manifest_root() -> Path:
    """The manifests shipped with tgbhub: inside the wheel, or the repository's ``manifests/`` in a checkout."""
    package = Path(__file__).resolve().parent
    bundled = package / "_manifests"
    return bundled if bundled.is_dir() else package.parent / "manifests"


class Registry:
    """The catalogue of dataset versions under a manifest root: bundled manifests
    (``<root>/<family>/<name>/<version>.json``) and published derived datasets, whose manifests are derived on
    request and indexed per family (``<root>/<family>/derived.json``, see :class:`~tgbhub.manifest.DerivedEntry`)."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self._root = Path(root) if root is not None else None
        self._derived: dict[str, dict[str, dict[str, DerivedEntry]]] = {}  # family -> name -> version -> entry

    @property
    def root(self) -> Path:
        return self._root if self._root is not None else default_manifest_root()

    @cached_property
    def _index(self) -> dict[str, dict[str, Path]]:
        index: dict[str, dict[str, Path]] = {}
        for path in sorted(self.root.glob("*/*/*.json")):
            name = f"{path.parent.parent.name}/{path.parent.name}"
            index.setdefault(name, {})[path.stem] = path
        return index

    def _derived_of(self, family: str) -> dict[str, dict[str, DerivedEntry]]:
        """``name -> version -> entry`` of the family's published derived datasets (its ``derived.json``, read once).

        Raises:
            ManifestError: if the family's derived index is malformed.
        """
        if family not in self._derived:
            path = self.root / family / DERIVED_INDEX
            entries = read_derived_index(path) if path.is_file() else []
            found: dict[str, dict[str, DerivedEntry]] = {}
            for entry in entries:
                found.setdefault(entry.name, {})[entry.version] = entry
            self._derived[family] = found
        return self._derived[family]

    def _all_derived(self) -> dict[str, dict[str, DerivedEntry]]:
        return {name: versions for family in self._families_on_disk() for name, versions in
                self._derived_of(family).items()}

    def _families_on_disk(self) -> list[str]:
        return sorted(p.name for p in self.root.iterdir() if p.is_dir()) if self.root.is_dir() else []

    def _versions_of(self, name: str) -> dict[str, Path]:
        """``version -> manifest path`` of ``name``'s bundled manifests: from the index once it is built, else by
        listing the name's own folder (one directory, not the whole catalogue: a load of one dataset stays cheap)."""
        if "_index" in self.__dict__:
            return self._index.get(name, {})
        family, _, short = name.partition("/")
        if not family or not short or "/" in short or ".." in name:
            return {}
        folder = self.root / family / short
        return {path.stem: path for path in sorted(folder.glob("*.json"))} if folder.is_dir() else {}

    def derived(self, name: str, version: str) -> DerivedEntry | None:
        """The published derived dataset ``name@version`` whose manifest is derived on request, or ``None``."""
        return self._derived_versions(name).get(version)

    def _derived_versions(self, name: str) -> dict[str, DerivedEntry]:
        family, _, short = name.partition("/")
        if not family or not short or "/" in short or ".." in name or DERIVED_MARK not in short:
            return {}
        return self._derived_of(family).get(name, {})

    def has(self, name: str) -> bool:
        """Whether ``family/name`` is in the catalogue (bundled or a published derived dataset; cheap: no
        suggestions are computed)."""
        return bool(self._versions_of(name)) or bool(self._derived_versions(name))

    def names(self, family: str | None = None, *, derived: bool = True) -> list[str]:
        """Every dataset name, optionally only those of one family, sorted; ``derived=False`` leaves out derived
        datasets (their names carry ``~``, which no base name has, e.g. ``ce-64~shuffle-s0``)."""
        known = set(self._index) | (set(self._all_derived()) if derived else set())
        return sorted((n for n in known if (family is None or n.split("/", 1)[0] == family)
                       and (derived or DERIVED_MARK not in n)), key=natural_key)

    def select(self, names: Sequence[str] = (), *, family: str | None = None, every: bool = False,
               derived: bool = False) -> list[str]:
        """The datasets a command names: ``names`` as given, or every base dataset of ``family``, or (``every``)
        of every family; ``derived`` adds the published derived datasets of those.

        Raises:
            InvalidNameError: if nothing is selected, names come with ``family`` or ``every`` (one would be dropped),
                or ``family`` is unknown (naming the known ones).
        """
        if names and (family is not None or every):
            raise InvalidNameError(f"name datasets ({', '.join(names)}) or pass --family/--all, not both: which to "
                                   "build would be ambiguous")
        if every:
            return self.names(derived=derived)
        if family is not None:
            if family not in self.families():
                raise InvalidNameError(f"unknown family {family!r}; families: {', '.join(self.families())}")
            return self.names(family, derived=derived)
        if not names:
            raise InvalidNameError("nothing selected: name datasets (FAMILY/NAME ...), or pass --family F or --all")
        return list(names)

    def families(self) -> list[str]:
        return sorted({n.split("/", 1)[0] for n in self._index} | {
            n.split("/", 1)[0] for n in self._all_derived()})

    def versions(self, name: str) -> list[str]:
        """The versions of ``name``, oldest first.

        Raises:
            DatasetNotFoundError: with close names as suggestions, if ``name`` is unknown.
        """
        found = set(self._versions_of(name)) | set(self._derived_versions(name))
        if not found:
            raise DatasetNotFoundError(name, difflib.get_close_matches(name, self.names(), n=3, cutoff=0.6))
        return sorted(found, key=version_key)

    def path(self, name: str, version: str) -> Path:
        """The bundled manifest file of ``name@version`` (published verbatim as the dataset's ``croissant.json``).

        Raises:
            DatasetNotFoundError, VersionNotFoundError: if there is no such dataset version, or its manifest is not
                bundled but derived on request (see :meth:`derived`).
        """
        available = self.versions(name)
        if version not in available:
            raise VersionNotFoundError(name, version, available)
        path = self._versions_of(name).get(version)
        if path is None:
            error = DatasetNotFoundError(name)
            error.args = (f"{name}@{version} is published, but its manifest is not shipped: it is derived on request "
                          "from its parent's; get it with tgbhub.manifest_of or tgbhub.load_dataset",)
            raise error
        return path

    def lookup(self, text: str, version: str | None = None) -> Manifest:
        """The manifest a user-typed ``family/name[@version]`` refers to; a bare ``name`` gets its full name suggested.

        Raises:
            InvalidNameError: if the reference is malformed (naming ``family/name`` when ``text`` is a bare name that
                exists in one family).
            DatasetNotFoundError, VersionNotFoundError, ManifestError: as :meth:`resolve`.
        """
        try:
            reference = parse_reference(text, version)
        except InvalidNameError as exc:
            full = self._full_names(text) if isinstance(text, str) and "/" not in text else []
            if full:
                raise InvalidNameError(f"{text!r} needs its family: did you mean "
                                       f"{' or '.join(repr(n) for n in full)}?") from exc
            raise
        return self.resolve(reference)

    def _full_names(self, bare: str) -> list[str]:
        short, at, pinned = bare.partition("@")
        return [f"{name}{at}{pinned}" for name in self.names() if name.split("/", 1)[1] == short]

    def resolve(self, reference: Reference) -> Manifest:
        """The bundled manifest of a reference's pinned version, or of the newest version.

        Raises:
            DatasetNotFoundError: if the dataset is unknown, or the version is a published derived dataset whose
                manifest is derived on request (:meth:`derived` has it; :func:`tgbhub.load_dataset` derives it).
            VersionNotFoundError: if the pinned version does not exist.
            ManifestError: if the manifest file is malformed.
        """
        available = self.versions(reference.name)
        version = reference.version or available[-1]
        if version not in available:
            raise VersionNotFoundError(reference.name, version, available)
        return read_manifest(self.path(reference.name, version))
