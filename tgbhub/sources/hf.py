"""The Hub source: a dataset version's files from its family repo on a Hugging Face-compatible Hub, at its tag.

The tag is the dataset version's own ``<name>-v<version>``; a hub published before dataset tags existed has only the
family tag ``v<version>``, which is tried next. ``huggingface_hub`` resolves each file (``get_hf_file_metadata`` on
its ``hf_hub_url`` at the tag: the commit the tag points at, size, ETag, and the CDN location when the Hub
redirects), with the token and headers it would use itself. The bytes are then streamed from that commit, in 1 MiB
reads, into the cache's private staging folder, because ``huggingface_hub``'s own downloader is several times slower
on a fast link (measured in the README's "Hub" benchmark section); the cache verifies every byte against the
manifest anyway. The endpoint is always passed explicitly (``huggingface_hub`` reads ``HF_ENDPOINT`` only at import
time).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from tgbhub.cache import Fetched
from tgbhub.errors import FetchError
from tgbhub.hub.layout import CROISSANT, dataset_file, dataset_tag, file_path, repo_id, tag_for
from tgbhub.manifest import Manifest
from tgbhub.sources.http import TIMEOUTS, local_write_failure, stream_to_file, unreachable

if TYPE_CHECKING:
    import requests

#: seconds to wait for the Hub's metadata answer before falling back to the next source
METADATA_TIMEOUT = 10.0


class HubSource:
    """Fetches from ``<endpoint>/datasets/<org>/<family>`` at tag ``<name>-v<version>``, else ``v<version>``."""

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
            OSError: if a file cannot be written into ``staging`` (a full disk, a read-only folder), as raised.
        """
        import requests  # deferred: only network sources pay for the import

        repo = repo_id(manifest.family, self.org)
        revisions = [dataset_tag(manifest.short_name, manifest.version), tag_for(manifest.version)]
        files = {}
        with requests.Session() as session:
            for entry in manifest.files:
                files[entry.name], tag = self._download(session, manifest, repo, revisions, entry.name, staging)
                revisions = [tag]  # every file comes from the tag the first one was found at
        return Fetched(files=files)

    def fetch_document(self, name: str, version: str) -> bytes:
        """The published ``croissant.json`` of ``name@version``, as bytes (the caller checks them: a published derived
        dataset's manifest, which tgbhub does not ship, is checked against the catalogue's derived index).

        Raises:
            FetchError: if the Hub is unreachable or lacks the repo, the tag or the file.
        """
        import requests
        from huggingface_hub.errors import EntryNotFoundError, HTTPError

        family, short = name.split("/", 1)
        repo, path = repo_id(family, self.org), dataset_file(short, CROISSANT)
        revisions = [dataset_tag(short, version), tag_for(version)]
        try:
            url, _, _ = self._locate(repo, path, revisions)
            same_host = urlsplit(url).netloc == urlsplit(self.endpoint).netloc
            with requests.Session() as session:
                response = session.get(url, timeout=TIMEOUTS, headers=_hub_headers(self.token) if same_host else {})
                response.raise_for_status()
                return response.content
        except (OSError, ValueError, EntryNotFoundError, HTTPError, requests.RequestException) as exc:
            raise FetchError(self.label, f"{repo}/{path} at tag {' or '.join(revisions)}",
                             f"{type(exc).__name__}: {_first_line(exc)}",
                             "The dataset is derived locally instead; publish it there to serve it") from exc

    def _download(self, session: requests.Session, manifest: Manifest, repo: str, revisions: list[str], name: str,
                  staging: Path) -> tuple[Path, str]:
        import requests
        from huggingface_hub.errors import EntryNotFoundError, HTTPError

        path = file_path(manifest, name)
        try:
            url, size, tag = self._locate(repo, path, revisions)
            same_host = urlsplit(url).netloc == urlsplit(self.endpoint).netloc
            headers = _hub_headers(self.token) if same_host else {}  # never send the token elsewhere
            stream_to_file(session, url, staging / name, size or manifest.file(name).size, headers)
        except (OSError, ValueError, EntryNotFoundError, HTTPError, requests.RequestException) as exc:
            if local_write_failure(exc):  # the cache's disk, not the hub: the cache names it
                raise
            if unreachable(exc):  # nothing answered: publishing there would not help
                raise FetchError(self.label, f"{repo}/{path} at tag {' or '.join(revisions)}",
                                 f"{type(exc).__name__}: {_first_line(exc)}",
                                 f"Nothing answered at {self.endpoint}: check the endpoint (hub_endpoint= or "
                                 "$TGBHUB_ENDPOINT) and that the hub is running (`tgbhub hub serve ROOT` prints "
                                 "its URL)") from exc
            raise FetchError(self.label, f"{repo}/{path} at tag {' or '.join(revisions)}",
                             f"{type(exc).__name__}: {_first_line(exc)}",
                             f"Publish this dataset there: `tgbhub publish {manifest.family} --version "
                             f"{manifest.version} --datasets {manifest.name} --hub hf --endpoint "
                             f"{self.endpoint}` (or `--hub git:ROOT` for a hub served by `tgbhub hub serve ROOT`); "
                             "it gets its own tag and the datasets already there keep theirs. Or check "
                             "$TGBHUB_ENDPOINT and $TGBHUB_HUB_ORG") from exc
        return staging / name, tag

    def _locate(self, repo: str, path: str, revisions: list[str]) -> tuple[str, int | None, str]:
        """``(download URL, size, tag)`` of ``path`` at the first of ``revisions`` that has it.

        Raises:
            huggingface_hub.errors.HTTPError, EntryNotFoundError: the last revision's error, if none has the file.
        """
        from huggingface_hub import get_hf_file_metadata, hf_hub_url
        from huggingface_hub.errors import (
            EntryNotFoundError,
            RemoteEntryNotFoundError,
            RepositoryNotFoundError,
            RevisionNotFoundError,
        )

        for index, tag in enumerate(revisions):
            url = hf_hub_url(repo, path, repo_type="dataset", revision=tag, endpoint=self.endpoint)
            try:
                meta = get_hf_file_metadata(url, token=self.token, timeout=METADATA_TIMEOUT, endpoint=self.endpoint)
            # some Hub servers (olah) report a missing tag as a missing repo, so all three mean "try the next tag"
            except (EntryNotFoundError, RemoteEntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError):
                if index == len(revisions) - 1:
                    raise
                continue
            if meta.location == url and meta.commit_hash:  # served by the Hub itself: pin the commit the tag named
                url = hf_hub_url(repo, path, repo_type="dataset", revision=meta.commit_hash, endpoint=self.endpoint)
            else:
                url = meta.location
            return url, meta.size, tag
        raise ValueError("no revision to try")  # unreachable: fetch always passes at least one tag


def _hub_headers(token: str | None) -> dict[str, str]:
    """The headers ``huggingface_hub`` itself sends to its Hub (user agent, token)."""
    from huggingface_hub.utils import build_hf_headers

    return dict(build_hf_headers(token=token))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "no detail"
