"""Dataset names, versions and the catalogue of manifests.

Names are checked before any path is built from them; the catalogue is read lazily, on first use.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from tgbhub.errors import DatasetNotFoundError, InvalidNameError, VersionNotFoundError
from tgbhub.manifest import Manifest, read_manifest

_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*/[a-z0-9][a-z0-9._~-]*$")
_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
_EXAMPLE = "'t-grab/ce-64' or 't-grab/ce-64@1.0.0'"
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
    """The catalogue of dataset versions under a manifest root (``<root>/<family>/<name>/<version>.json``)."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self._root = Path(root) if root is not None else None

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

    def _versions_of(self, name: str) -> dict[str, Path]:
        """``version -> manifest path`` of ``name``: from the index once it is built, else by listing the name's own
        folder (one directory, not the 1,600 of the whole catalogue: a load of one dataset stays cheap)."""
        if "_index" in self.__dict__:
            return self._index.get(name, {})
        family, _, short = name.partition("/")
        if not family or not short or "/" in short or ".." in name:
            return {}
        folder = self.root / family / short
        return {path.stem: path for path in sorted(folder.glob("*.json"))} if folder.is_dir() else {}

    def has(self, name: str) -> bool:
        """Whether ``family/name`` has a bundled manifest (cheap: no suggestions are computed)."""
        return bool(self._versions_of(name))

    def names(self, family: str | None = None, *, derived: bool = True) -> list[str]:
        """Every dataset name, optionally only those of one family, sorted; ``derived=False`` leaves out derived
        datasets (their names carry ``~``, which no base name has, e.g. ``ce-64~shuffle-s0``)."""
        return sorted((n for n in self._index if (family is None or n.split("/", 1)[0] == family)
                       and (derived or DERIVED_MARK not in n)), key=natural_key)

    def families(self) -> list[str]:
        return sorted({n.split("/", 1)[0] for n in self._index})

    def versions(self, name: str) -> list[str]:
        """The versions of ``name``, oldest first.

        Raises:
            DatasetNotFoundError: with close names as suggestions, if ``name`` is unknown.
        """
        found = self._versions_of(name)
        if not found:
            raise DatasetNotFoundError(name, difflib.get_close_matches(name, list(self._index), n=3, cutoff=0.6))
        return sorted(found, key=version_key)

    def path(self, name: str, version: str) -> Path:
        """The manifest file of ``name@version`` (published verbatim as the dataset's ``croissant.json``).

        Raises:
            DatasetNotFoundError, VersionNotFoundError: if there is no such dataset version.
        """
        available = self.versions(name)
        if version not in available:
            raise VersionNotFoundError(name, version, available)
        return self._versions_of(name)[version]

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
        """The manifest of a reference's pinned version, or of the newest version.

        Raises:
            DatasetNotFoundError: if the dataset is unknown.
            VersionNotFoundError: if the pinned version does not exist.
            ManifestError: if the manifest file is malformed.
        """
        available = self.versions(reference.name)
        version = reference.version or available[-1]
        if version not in available:
            raise VersionNotFoundError(reference.name, version, available)
        return read_manifest(self._versions_of(reference.name)[version])
