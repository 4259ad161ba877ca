"""The results repo ``ORG/results``: where the grader puts each outcome of a submission and each board, and how a
reader fetches one of its files verified against the hub's ETag.

A submission is a folder ``submissions/<family>/<name>/<version>/<task>/<id>/`` (:mod:`tgbhub.results.submissions`)
in one state (:func:`state_of`: its files' blob ids); its outcome is the grader's record
``records/<family>/<name>/<version>/<task>/<id>/<state>.json`` or a rejection at the same place under
``rejections/``; a board is ``leaderboards/<family>/<name>/<task>.parquet``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from tgbhub.errors import FetchError, IntegrityError
from tgbhub.results.submissions import Place

#: hex digits of a folder's state digest that name its outcome file
STATE_DIGITS = 16
#: the ``format`` of a rejection file
REJECTION_FORMAT = "tgbhub-rejection/1"


def state_of(files: Mapping[str, tuple[str | None, str]]) -> str:
    """A submission folder's state: the sha256 of its files' names and git blob ids (and LFS sha256s), first
    :data:`STATE_DIGITS` hex digits. Any change to any file of the folder (a new commit) is a new state, and so a new
    submission; nothing is read to compute it."""
    text = "\n".join(f"{name} {lfs or '-'} {blob}" for name, (lfs, blob) in sorted(files.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:STATE_DIGITS]


def record_path(place: Place, state: str) -> str:
    """Where the grader's record of ``place`` in state ``state`` lives in the results repo:
    ``records/<family>/<name>/<version>/<task>/<id>/<state>.json``."""
    return f"records/{place.dataset}/{place.version}/{place.task}/{place.id}/{state}.json"


def rejection_path(place: Place, state: str) -> str:
    """Where the rejection of ``place`` in state ``state`` lives in the results repo."""
    return f"rejections/{place.dataset}/{place.version}/{place.task}/{place.id}/{state}.json"


def outcome_of(path: str) -> tuple[Place, str, str] | None:
    """``(place, state, "records" | "rejections")`` of an outcome file's path, or ``None`` for any other path."""
    parts = path.split("/")
    if len(parts) != 7 or parts[0] not in ("records", "rejections") or not parts[6].endswith(".json"):
        return None
    return Place(f"{parts[1]}/{parts[2]}", parts[3], parts[4], parts[5]), parts[6][:-len(".json")], parts[0]


def board_path(dataset: str, task: str) -> str:
    """``leaderboards/<family>/<name>/<task>.parquet`` for dataset ``family/name[@version]``."""
    return f"leaderboards/{dataset.partition('@')[0]}/{task}.parquet"


def fetch_verified(url: str, repo: str, path: str, revision: str, token: str | None, folder: Path,
                    fix: str) -> Path:
    """``path`` of dataset repo ``repo`` at ``revision``, downloaded into ``folder/<repo>/<commit>/<path>`` through
    a temporary file checked against the hub's ETag.

    Raises:
        FetchError: if the hub is unreachable or lacks the repo, revision or file (``fix`` says what to do).
        IntegrityError: if the bytes do not match the ETag.
    """
    from urllib.parse import urlsplit

    import requests
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.errors import EntryNotFoundError, HTTPError
    from huggingface_hub.utils import build_hf_headers

    from tgbhub.hashing import file_sha256, git_blob_sha1
    from tgbhub.sources.http import stream_to_file, unreachable

    where = f"hub {url}"
    try:
        meta = get_hf_file_metadata(hf_hub_url(repo, path, repo_type="dataset", revision=revision, endpoint=url),
                                    token=token, endpoint=url)
        etag = (meta.etag or "").strip('"')
        final = folder / repo / str(meta.commit_hash or revision) / path
        if final.is_file():  # verified when it took its name; a commit's file never changes
            return final
        final.parent.mkdir(parents=True, exist_ok=True)
        temp = final.with_name(f".{final.name}.{os.getpid()}.tmp")
        download = meta.location
        if meta.commit_hash and download.startswith(url):  # served by the hub itself: pin the commit it named
            download = hf_hub_url(repo, path, repo_type="dataset", revision=meta.commit_hash, endpoint=url)
        same_host = urlsplit(download).netloc == urlsplit(url).netloc
        with requests.Session() as session:  # the token goes to the hub only, never to its CDN
            stream_to_file(session, download, temp, meta.size or 0, dict(build_hf_headers(token=token))
                           if same_host else {})
    except (OSError, ValueError, EntryNotFoundError, HTTPError, requests.RequestException) as exc:
        if unreachable(exc):  # nothing answered: the board may well exist
            fix = f"Nothing answered at {url}: check --endpoint (or $TGBHUB_ENDPOINT) and that the hub is running"
        raise FetchError(where, f"{repo}/{path} at {revision}",
                         f"{type(exc).__name__}: {(str(exc).strip() or 'no detail').splitlines()[0]}", fix) from exc
    try:
        actual = file_sha256(temp) if len(etag) == 64 else git_blob_sha1(temp.read_bytes())
        if actual != etag:
            raise IntegrityError(f"{repo}/{path} from {url}", f"ETag {etag}", actual,
                                 "The download was damaged or the hub changed it meanwhile; fetch it again")
        os.replace(temp, final)
    finally:
        temp.unlink(missing_ok=True)
    return final
