"""The static-mirror source: files under ``<base>/<family>/<name>/<version>/`` on any web server.

A mirror is the folder ``tgbhub publish ... --hub mirror:DIR`` writes, served by nginx, ``python -m http.server``,
object storage with a public URL, etc. Bytes stream into the cache's private staging folder; the cache verifies them
against the manifest (a mirror is trusted for nothing).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tgbhub.cache import Fetched, disk_full
from tgbhub.errors import CacheWriteError, FetchError
from tgbhub.hub.mirror import mirror_path
from tgbhub.manifest import Manifest
from tgbhub.progress import track

#: (connect, read) timeouts in seconds: a dead mirror is skipped quickly, a slow one is not cut off mid-file
TIMEOUTS = (5.0, 60.0)
_CHUNK = 1 << 20

if TYPE_CHECKING:
    import requests


class MirrorSource:
    """Fetches dataset versions from one static HTTP mirror."""

    name = "mirror"
    needs_network = True

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")

    @property
    def label(self) -> str:
        return f"mirror {self.base_url}"

    def can_serve(self, manifest: Manifest) -> bool:
        return bool(manifest.files)

    def fetch(self, manifest: Manifest, staging: Path) -> Fetched:
        """Download every file the manifest declares into ``staging``.

        Raises:
            FetchError: if the mirror is unreachable, answers with an HTTP error, or the transfer breaks off.
            OSError: if a file cannot be written into ``staging`` (a full disk, a read-only folder), as raised.
        """
        import requests  # deferred: only mirror users pay for the import

        files = {}
        with requests.Session() as session:
            for entry in manifest.files:
                url = f"{self.base_url}/{mirror_path(manifest, entry.name)}"
                target = staging / entry.name
                try:
                    stream_to_file(session, url, target, entry.size)
                except requests.RequestException as exc:
                    raise FetchError(self.label, url, f"{type(exc).__name__}: {exc}",
                                     "Check the mirror URL ($TGBHUB_MIRRORS) and that it serves this version") from exc
                files[entry.name] = target
        return Fetched(files=files)


def stream_to_file(session: requests.Session, url: str, target: Path, size: int,
                   headers: dict[str, str] | None = None) -> None:
    """GET ``url`` into ``target`` in 1 MiB reads, with a progress bar of ``size`` bytes.

    Raises:
        requests.RequestException: on a connection error, an HTTP error status or a broken transfer.
        OSError: if ``target`` cannot be written (a full disk, a read-only folder).
    """
    with session.get(url, stream=True, timeout=TIMEOUTS, headers=headers) as response:
        response.raise_for_status()
        chunks = response.iter_content(_CHUNK)
        with open(target, "wb") as handle:
            for block in track(chunks, desc=target.name, total=-(-size // _CHUNK), unit="MiB"):
                handle.write(block)


def unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` says the hub did not answer (refused, reset, timed out, no such host) rather than answered
    that something is missing. huggingface_hub raises its HTTP client's transport errors and requests its own, so
    the classes are matched by the names those libraries give them."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(names & {"TransportError", "ConnectionError", "Timeout", "TimeoutError", "TimeoutException"})


def local_write_failure(exc: BaseException) -> bool:
    """Whether ``exc`` says a file could not be written here (a full disk, a read-only or missing folder, no
    permission) rather than that the server failed: such an error is the cache's to report, and no other source
    could do better. requests' own errors are OSErrors too, hence the exclusion by name."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "RequestException" in names:
        return False
    return disk_full(exc) is not None or CacheWriteError.applies(exc)
