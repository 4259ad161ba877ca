"""Publish target ``mirror:DIR``: a plain folder any web server can serve as a static mirror.

Layout: ``DIR/<family>/<name>/<version>/`` holding the artifacts and ``croissant.json``. A version folder is written
under a temporary name and renamed when complete, so a web server never serves half a version.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Mapping
from pathlib import Path

from tgbhub.errors import VersionConflictError
from tgbhub.hashing import file_sha256
from tgbhub.hub.layout import CROISSANT, METADATA_DIFFERS, Published
from tgbhub.manifest import Manifest, same_data


def mirror_path(manifest: Manifest, name: str) -> str:
    """A file's path below a mirror's base URL: ``<family>/<name>/<version>/<file>``."""
    return f"{manifest.family}/{manifest.short_name}/{manifest.version}/{name}"


class MirrorTarget:
    """Writes dataset versions into a static mirror folder."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def publish(self, manifest: Manifest, files: Mapping[str, Path], croissant: bytes) -> Published:
        """Copy a verified dataset version into the mirror, unless it is already there unchanged.

        A version folder whose files are the same and whose ``croissant.json`` differs only in metadata outside the
        versioned data (:func:`tgbhub.manifest.same_data`) is kept as published (status ``metadata-differs``).

        Raises:
            VersionConflictError: if the version folder exists with different content.
        """
        final = self.root / manifest.family / manifest.short_name / manifest.version
        label = f"mirror {self.root}"
        if final.exists():
            changed = self._differences(manifest, final, croissant)
            if changed == [CROISSANT] and same_data((final / CROISSANT).read_bytes(), croissant):
                return Published(label, manifest.version, "", METADATA_DIFFERS, str(final))
            if changed:
                raise VersionConflictError(label, f"{manifest.name}@{manifest.version}", changed)
            return Published(label, manifest.version, "", "unchanged", str(final))
        temp = final.with_name(f".{manifest.version}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
        temp.mkdir(parents=True)
        try:
            for entry in manifest.files:
                shutil.copyfile(files[entry.name], temp / entry.name)
            (temp / CROISSANT).write_bytes(croissant)
            os.rename(temp, final)
        finally:
            shutil.rmtree(temp, ignore_errors=True)
        return Published(label, manifest.version, "", "published", str(final))

    @staticmethod
    def _differences(manifest: Manifest, folder: Path, croissant: bytes) -> list[str]:
        expected = {entry.name: entry.sha256 for entry in manifest.files}
        present = {p.name for p in folder.iterdir()}
        changed = sorted(present ^ {*expected, CROISSANT})
        changed += [name for name, sha in expected.items() if name in present and file_sha256(folder / name) != sha]
        if CROISSANT in present and (folder / CROISSANT).read_bytes() != croissant:
            changed.append(CROISSANT)
        return sorted(set(changed))
