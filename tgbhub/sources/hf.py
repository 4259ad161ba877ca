"""The Hub source: a dataset version's files from its family repo on a Hugging Face-compatible Hub, at the version tag.

``huggingface_hub`` resolves each file (``get_hf_file_metadata`` on its ``hf_hub_url`` at the tag: the commit the
tag points at, size, ETag, and the CDN location when the Hub redirects), with the token and headers it would use
itself. The bytes are then streamed from that commit, in 1 MiB reads, into the cache's private staging folder: the
client's own downloader moves about 300 MB/s on loopback against curl's 1 GB/s (see ``scripts/bench hub``), and
the cache verifies every byte against the manifest anyway. The endpoint is always passed explicitly
(``huggingface_hub`` reads ``HF_ENDPOINT`` only at import time).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from tgbhub.cache import Fetched
from tgbhub.errors import FetchError
from tgbhub.hub.layout import file_path, repo_id, tag_for
from tgbhub.manifest import Manifest
from tgbhub.sources.http import stream_to_file

if TYPE_CHECKING:
    import requests

#: seconds to wait for the Hub's metadata answer before falling back to the next source
METADATA_TIMEOUT = 10.0


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
            FetchError: if the Hub is unreachable, lacks the repo, the tag or a file, or the transfer breaks off.
        """
        import requests  # deferred: only network sources pay for the import

        repo, tag = repo_id(manifest.family, self.org), tag_for(manifest.version)
        files = {}
        with requests.Session() as session:
            for entry in manifest.files:
                files[entry.name] = self._download(session, manifest, repo, tag, entry.name, staging)
        return Fetched(files=files)

    def _download(self, session: requests.Session, manifest: Manifest, repo: str, tag: str, name: str,
                  staging: Path) -> Path:
        import requests
        from huggingface_hub import get_hf_file_metadata, hf_hub_url
        from huggingface_hub.errors import EntryNotFoundError, HTTPError
        from huggingface_hub.utils import build_hf_headers

        path = file_path(manifest, name)
        target = staging / name
        try:
            url = hf_hub_url(repo, path, repo_type="dataset", revision=tag, endpoint=self.endpoint)
            meta = get_hf_file_metadata(url, token=self.token, timeout=METADATA_TIMEOUT, endpoint=self.endpoint)
            if meta.location == url and meta.commit_hash:  # served by the Hub itself: pin the commit the tag named
                url = hf_hub_url(repo, path, repo_type="dataset", revision=meta.commit_hash, endpoint=self.endpoint)
            else:
                url = meta.location
            same_host = urlsplit(url).netloc == urlsplit(self.endpoint).netloc
            headers = build_hf_headers(token=self.token) if same_host else {}  # never send the token elsewhere
            stream_to_file(session, url, target, meta.size or manifest.file(name).size, headers)
        except (OSError, ValueError, EntryNotFoundError, HTTPError, requests.RequestException) as exc:
            raise FetchError(self.label, f"{repo}@{tag}/{path}", f"{type(exc).__name__}: {_first_line(exc)}",
                             f"Publish it there (`tgbhub publish {manifest.family} --version "
                             f"{manifest.version}`), or check $TGBHUB_ENDPOINT and $TGBHUB_HUB_ORG") from exc
        return target


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "no detail"
