"""The Hub source: a dataset version's files from its family repo on a Hugging Face-compatible Hub, at the version tag.

The endpoint is always passed explicitly (``huggingface_hub`` reads ``HF_ENDPOINT`` only at import time). Files are
downloaded into the cache's private staging folder, so a partial download is never visible, and the cache verifies
every byte against the manifest before installing.
"""

from __future__ import annotations

import socket
from pathlib import Path
from urllib.parse import urlsplit

from tgbhub.cache import Fetched
from tgbhub.errors import FetchError
from tgbhub.hub.layout import file_path, repo_id, tag_for
from tgbhub.manifest import Manifest

#: seconds to wait for the Hub's metadata answer before falling back to the next source
METADATA_TIMEOUT = 10.0
#: seconds to wait for a TCP connection; huggingface_hub itself retries a refused connection for ~20 s
CONNECT_TIMEOUT = 3.0


class HubSource:
    """Fetches from ``<endpoint>/datasets/<org>/<family>`` at tag ``v<version>``."""

    name = "hub"
    needs_network = True

    def __init__(self, endpoint: str, org: str, token: str | None = None) -> None:
        self.endpoint = endpoint
        self.org = org
        self.token = token

    @property
    def label(self) -> str:
        return f"hub {self.endpoint}"

    def can_serve(self, manifest: Manifest) -> bool:
        return bool(manifest.files)

    def fetch(self, manifest: Manifest, staging: Path) -> Fetched:
        """Download every file the manifest declares into ``staging``.

        Raises:
            FetchError: if the Hub is unreachable or lacks the repo, the tag or a file.
        """
        from huggingface_hub import hf_hub_download  # deferred: importing it costs ~0.3 s
        from huggingface_hub.errors import EntryNotFoundError, HTTPError

        repo, tag = repo_id(manifest.family, self.org), tag_for(manifest.version)
        self._check_reachable(f"{repo}@{tag}")
        files = {}
        for entry in manifest.files:
            path = file_path(manifest, entry.name)
            try:
                local = hf_hub_download(repo, path, repo_type="dataset", revision=tag, local_dir=staging / "hub",
                                        endpoint=self.endpoint, token=self.token, etag_timeout=METADATA_TIMEOUT)
            except (OSError, ValueError, EntryNotFoundError, HTTPError) as exc:
                raise FetchError(self.label, f"{repo}@{tag}/{path}", f"{type(exc).__name__}: {_first_line(exc)}",
                                 f"Publish it there (`tgbhub publish {manifest.family} --version "
                                 f"{manifest.version}`), or check $TGBHUB_ENDPOINT and $TGBHUB_HUB_ORG") from exc
            files[entry.name] = Path(local)
        return Fetched(files=files)

    def _check_reachable(self, what: str) -> None:
        """Fail fast when nothing listens at the endpoint, so the next source is tried at once."""
        parsed = urlsplit(self.endpoint)
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        try:
            socket.create_connection((parsed.hostname or "", port), timeout=CONNECT_TIMEOUT).close()
        except OSError as exc:
            raise FetchError(self.label, what, f"the hub is unreachable ({exc})",
                             "Start it (`tgbhub hub serve ROOT`) or check $TGBHUB_ENDPOINT and the network") from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "no detail"
