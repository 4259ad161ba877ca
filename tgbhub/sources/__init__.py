"""Where a dataset's bytes come from. Each source fills a staging folder; the cache verifies and installs."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from tgbhub.cache import Fetched
from tgbhub.manifest import Manifest


class Source(Protocol):
    """A provider of a dataset version's files."""

    #: what ``Dataset.source`` reports when this source served the call
    name: str
    #: whether fetching may open a socket (such sources are skipped in offline mode)
    needs_network: bool

    @property
    def label(self) -> str:
        """How reports name this source, e.g. ``mirror http://host/data`` (read-only: a source may compute it)."""

    def can_serve(self, manifest: Manifest) -> bool:
        """Whether this source can provide the dataset at all (cheap, no I/O)."""

    def fetch(self, manifest: Manifest, staging: Path) -> Fetched:
        """Write the manifest's files into ``staging``."""
