"""The Hub read API that ``tgbhub hub serve`` answers itself, straight from the git repos under its root.

olah (the server the front relays to) answers part of the Hub API and answers some of it differently from the real
Hub: a repo's info without a revision, the listing of repos, ``auth-check``, the commit list, file sizes and LFS
details. The front hands every request this module claims (:meth:`HubAnswers.answer`) to it; it answers them
from git plumbing (``for-each-ref``, ``ls-tree``, ``cat-file``, ``log``), read-only, in the JSON shapes
``huggingface_hub`` parses:

* ``GET /api/{kind}s`` (``search``, ``author``, ``filter``, ``sort``, ``limit``, ``full``): the repos of that kind;
* ``GET /api/{kind}s/ORG/NAME`` and ``.../revision/REV`` (``blobs=true``: sizes, blob ids and LFS details);
* ``GET .../refs``, ``.../commits/REV``, ``.../tree/REV[/PATH]`` (``recursive``, ``expand``), ``.../auth-check``;
* ``POST .../paths-info/REV`` (form fields ``paths`` and ``expand``).

A repo, revision or path that does not exist is a 404 with the Hub's ``X-Error-Code`` (``RepoNotFound``,
``RevisionNotFound``, ``EntryNotFound``), which ``huggingface_hub`` turns into its matching exception.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote

from tgbhub.hub.layout import CARD, lfs_pointer_fields

#: the repo kinds a hub root holds (``ROOT/<kind>/<org>/<name>``), as the API names them in the singular
REPO_KINDS = ("datasets", "models", "spaces")
_KIND = "(models|datasets|spaces)"
_ROUTES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("list", re.compile(rf"/api/{_KIND}")),
    ("info", re.compile(rf"/api/{_KIND}/([^/]+)/([^/]+)(?:/revision/(.+))?")),
    ("refs", re.compile(rf"/api/{_KIND}/([^/]+)/([^/]+)/refs")),
    ("auth", re.compile(rf"/api/{_KIND}/([^/]+)/([^/]+)/auth-check(/write)?")),
    ("commits", re.compile(rf"/api/{_KIND}/([^/]+)/([^/]+)/commits/([^/]+)")),
    ("tree", re.compile(rf"/api/{_KIND}/([^/]+)/([^/]+)/tree/([^/]+)(?:/(.*))?")),
    ("paths", re.compile(rf"/api/{_KIND}/([^/]+)/([^/]+)/paths-info/([^/]+)")),
)
#: the git tree entries' sizes that can be an LFS pointer (the spec's pointer is about 130 bytes)
_POINTER_SIZES = range(100, 201)
#: a field separator git never writes in a commit's name, date or id (messages are split off by _RECORD)
_FIELD, _RECORD = "\x1f", "\x1e"
#: what the real Hub derives tags from: these card keys become ``key:value`` tags
_TAGGED_CARD_KEYS = ("license", "task_categories", "task_ids", "language", "size_categories", "multilinguality",
                     "language_creators", "annotations_creators", "source_datasets", "library_name", "pipeline_tag")


@dataclass(frozen=True)
class Answer:
    """A whole HTTP answer: status, JSON body and the headers beyond Content-Type and Content-Length."""

    status: int
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Entry:
    """One path of a git tree, as the Hub describes it: a file (with its LFS details when its blob is a pointer)
    or a directory (``size`` 0)."""

    path: str
    kind: str  # "file" or "directory"
    oid: str
    size: int
    lfs_sha256: str | None = None
    pointer_size: int | None = None


@dataclass(frozen=True)
class Commit:
    """A commit as the Hub's commit list shows it."""

    oid: str
    author: str
    date: str
    title: str
    message: str


class _NotFound(Exception):
    """A 404 the Hub answers with ``code`` in ``X-Error-Code``."""

    def __init__(self, code: str, message: str, commit: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.commit = commit


class GitRepo:
    """Read-only questions about one git repo (work tree or bare), each one ``git`` plumbing call."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def commit(self, revision: str) -> str | None:
        """The commit id ``revision`` (a branch, tag or commit id) names, or None when it names none."""
        if not revision or revision.startswith("-") or any(c in revision for c in "\0\n\r:^~"):
            return None
        done = self._git("rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}", check=False)
        return done.stdout.decode().strip() or None

    def default_revision(self) -> str:
        """``main`` when the repo has that branch, else whatever ``HEAD`` names."""
        return "main" if self.commit("refs/heads/main") else "HEAD"

    def refs(self) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """``(branches, tags)``: each a list of ``(name, commit id)``, sorted by name; an annotated tag is peeled."""
        listing = self._git("for-each-ref", f"--format=%(refname){_FIELD}%(objectname){_FIELD}%(*objectname)",
                            "refs/heads", "refs/tags").stdout.decode()
        branches, tags = [], []
        for line in listing.splitlines():
            name, direct, peeled = line.split(_FIELD)
            if name.startswith("refs/heads/"):
                branches.append((name.removeprefix("refs/heads/"), direct))
            else:
                tags.append((name.removeprefix("refs/tags/"), peeled or direct))
        return branches, tags

    def entries(self, commit: str) -> list[Entry]:
        """Every file and directory of ``commit``'s tree, LFS pointers read for their object's sha256 and size."""
        listing = self._git("ls-tree", "-r", "-t", "-l", "-z", commit).stdout.decode()
        raw: list[tuple[str, str, str, int]] = []
        for record in filter(None, listing.split("\0")):
            meta, path = record.split("\t", 1)
            _, kind, oid, listed = meta.split()
            if kind in ("blob", "tree"):  # a submodule ("commit") is no file of the repo
                raw.append((path, kind, oid, 0 if listed == "-" else int(listed)))
        pointers = self._pointers({oid for _, kind, oid, size in raw if kind == "blob" and size in _POINTER_SIZES})
        found = []
        for path, kind, oid, size in raw:
            if kind == "tree":
                found.append(Entry(path, "directory", oid, 0))
            elif oid in pointers:
                found.append(Entry(path, "file", oid, pointers[oid][1], pointers[oid][0], size))
            else:
                found.append(Entry(path, "file", oid, size))
        return found

    def blob(self, commit: str, path: str) -> bytes | None:
        """The bytes git stores for ``path`` at ``commit`` (an LFS file's pointer), or None when there is none."""
        done = self._git("cat-file", "blob", f"{commit}:{path}", check=False)
        return done.stdout if done.returncode == 0 else None

    def log(self, revision: str, path: str | None = None, limit: int | None = None) -> list[Commit]:
        """The commits reachable from ``revision`` (that touched ``path``, when given), newest first."""
        args = ["log", f"--format=%H{_FIELD}%an{_FIELD}%ct{_FIELD}%s{_FIELD}%b{_RECORD}"]
        args += [f"--max-count={limit}"] if limit is not None else []
        args += [revision, "--", *([path] if path is not None else [])]
        commits = []
        for record in self._git(*args).stdout.decode(errors="replace").split(_RECORD):
            parts = record.strip("\n").split(_FIELD)
            if len(parts) == 5:
                oid, author, stamp, title, message = parts
                commits.append(Commit(oid, author, hub_date(int(stamp)), title, message.strip()))
        return commits

    def created(self, commit: str) -> str:
        """When the first commit leading to ``commit`` was made, in the Hub's date format."""
        stamps = self._git("log", "--max-parents=0", "--format=%ct", commit).stdout.decode().split()
        return hub_date(min(int(stamp) for stamp in stamps))

    def _pointers(self, oids: set[str]) -> dict[str, tuple[str, int]]:
        """``{blob id: (sha256, size)}`` for the blobs among ``oids`` that are LFS pointers."""
        if not oids:
            return {}
        ordered = sorted(oids)
        out = self._git("cat-file", "--batch", stdin="".join(f"{oid}\n" for oid in ordered).encode()).stdout
        found: dict[str, tuple[str, int]] = {}
        at = 0
        for oid in ordered:
            header_end = out.index(b"\n", at)
            parts = out[at:header_end].split()
            at = header_end + 1
            if len(parts) != 3:  # "<oid> missing"
                continue
            size = int(parts[2])
            fields = lfs_pointer_fields(out[at:at + size])
            at += size + 1
            if fields is not None:
                found[oid] = fields
        return found

    def _git(self, *args: str, stdin: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        done = subprocess.run(["git", "-C", str(self.path), *args], input=stdin, capture_output=True, check=False)
        if check and done.returncode != 0:
            raise OSError(f"git {args[0]} failed in {self.path}: {done.stderr.decode(errors='replace').strip()}")
        return done


def hub_date(stamp: int) -> str:
    """A Unix time as the Hub writes dates: ``2024-05-01T12:00:00.000Z``."""
    return datetime.fromtimestamp(stamp, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def not_found(code: str, message: str, commit: str | None = None) -> Answer:
    """The Hub's 404: ``X-Error-Code`` ``code`` (``RepoNotFound``, ``RevisionNotFound`` or ``EntryNotFound``), the
    message in ``X-Error-Message`` and the body, and for a missing entry the commit it was looked for in."""
    printable = re.sub(r"[\x00-\x1f\x7f]", "?", message.encode("ascii", "replace").decode())
    headers = {"X-Error-Code": code, "X-Error-Message": printable}
    if commit is not None:
        headers["X-Repo-Commit"] = commit
    return Answer(404, json.dumps({"error": message}).encode(), headers)


class HubAnswers:
    """The read API over the repos under ``root`` (``root/<kind>/<org>/<name>``); no I/O until asked."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def repo(self, kind: str, org: str, name: str) -> GitRepo | None:
        """The repo ``kind/org/name`` (``kind`` plural, as in API paths), or None when the root holds none."""
        if kind not in REPO_KINDS or any(part in ("", ".", "..") or "/" in part or "\\" in part or "\0" in part
                                         for part in (org, name)):
            return None
        path = self.root / kind / org / name
        if (path / ".git").is_dir() or ((path / "HEAD").is_file() and (path / "objects").is_dir()):
            return GitRepo(path)
        return None

    def answer(self, method: str, target: str, body: bytes | None = None) -> Answer | None:
        """The answer to ``method target`` (``target`` the request's path and query), or None when the request is
        not one of this module's (the front relays it to olah).

        Raises:
            OSError: when git cannot be asked (the front answers 500 rather than a false "not found").
        """
        route = claimed(method, target)
        if route is None:
            return None
        name, groups, query = route
        try:
            return self._route(name, groups, query, body or b"")
        except _NotFound as missing:
            return not_found(missing.code, str(missing), missing.commit)

    # ---- routes

    def _route(self, name: str, groups: Sequence[str | None], query: Mapping[str, list[str]],
               body: bytes) -> Answer:
        kind = str(groups[0])
        if name == "list":
            return _json(self._listing(kind, query))
        repo = self._existing(kind, str(groups[1]), str(groups[2]))
        repo_id = f"{groups[1]}/{groups[2]}"
        if name == "info":
            revision = groups[3] or repo.default_revision()
            return _json(self._info(kind, repo_id, repo, _commit(repo, revision), _flag(query, "blobs")))
        if name == "refs":
            return _json(_refs(repo, _flag(query, "include_prs")))
        if name == "auth":
            if groups[3]:
                return Answer(403, json.dumps({"error": "this hub is read-only"}).encode(),
                              {"X-Error-Message": "this hub is read-only"})
            return _json({})
        commit = _commit(repo, str(groups[3]))
        if name == "commits":
            return _json([_commit_json(c) for c in repo.log(commit)])
        if name == "tree":
            return _json(_tree(repo, commit, (groups[4] or "").strip("/"), _flag(query, "recursive"),
                               _flag(query, "expand")))
        return _json(_paths_info(repo, commit, _form(body)))

    def _existing(self, kind: str, org: str, name: str) -> GitRepo:
        repo = self.repo(kind, org, name)
        if repo is None:
            raise _NotFound("RepoNotFound", f"Repository not found: {kind}/{org}/{name}")
        return repo

    def _info(self, kind: str, repo_id: str, repo: GitRepo, commit: str, blobs: bool) -> dict[str, Any]:
        """A repo's info at ``commit`` as ``/api/{kind}s/ORG/NAME`` answers it; with ``blobs`` every sibling's size,
        blob id and LFS details."""
        files = [e for e in repo.entries(commit) if e.kind == "file"]
        card = _card(repo.blob(commit, CARD) if any(e.path == CARD for e in files) else None)
        last = repo.log(commit, limit=1)[0]
        info: dict[str, Any] = {
            "_id": hashlib.sha256(f"{kind}/{repo_id}".encode()).hexdigest()[:24], "id": repo_id,
            "author": repo_id.split("/")[0], "sha": commit, "lastModified": last.date,
            "createdAt": repo.created(commit),
            "private": False, "gated": False, "disabled": False, "downloads": 0, "likes": 0,
            "tags": _tags(card[0]), "cardData": card[0], "description": card[1][:300],
            "usedStorage": sum(e.size for e in files),
            "siblings": [_sibling(e, blobs) for e in sorted(files, key=lambda e: e.path)],
        }
        if kind == "models":
            info["modelId"] = repo_id
        return info

    def _listing(self, kind: str, query: Mapping[str, list[str]]) -> list[dict[str, Any]]:
        """The repos of ``kind`` that match the query's ``search`` (in the repo id), ``author`` and ``filter``
        (tags, all of them), sorted by ``sort`` (``lastModified``, ``createdAt``; else by id), at most ``limit``."""
        searched = [text.lower() for text in query.get("search", [])]
        authors = {text.lower() for text in query.get("author", [])}
        filters = set(query.get("filter", []))
        full = _flag(query, "full")
        found = []
        for repo_id, repo in self._repos(kind):
            if authors and repo_id.split("/")[0].lower() not in authors:
                continue
            if any(text not in repo_id.lower() for text in searched):
                continue
            commit = repo.commit(repo.default_revision())
            if commit is None:  # a repo without a commit yet
                continue
            info = self._info(kind, repo_id, repo, commit, blobs=False)
            if not filters <= set(info["tags"]):
                continue
            if not full:
                info = {k: v for k, v in info.items() if k not in ("siblings", "cardData", "usedStorage")}
            found.append(info)
        key = {"lastModified": "lastModified", "createdAt": "createdAt"}.get((query.get("sort") or [""])[0])
        found.sort(key=lambda info: info[key] if key else info["id"], reverse=key is not None)
        limit = (query.get("limit") or [""])[0]
        return found[:int(limit)] if limit.isdigit() else found

    def _repos(self, kind: str) -> list[tuple[str, GitRepo]]:
        folder = self.root / kind
        found = []
        for org in sorted(folder.iterdir()) if folder.is_dir() else []:
            for name in sorted(org.iterdir()) if org.is_dir() else []:
                repo = self.repo(kind, org.name, name.name)
                if repo is not None:
                    found.append((f"{org.name}/{name.name}", repo))
        return found


def claimed(method: str, target: str) -> tuple[str, list[str | None], dict[str, list[str]]] | None:
    """Which route of this module ``method target`` is: its name, its path parts (unquoted) and its query; None
    for a request the front relays."""
    path, _, query = target.partition("?")
    for name, pattern in _ROUTES:
        match = pattern.fullmatch(path)
        if match is None or (method == "POST") != (name == "paths") or method not in ("GET", "HEAD", "POST"):
            continue
        return name, [None if g is None else unquote(g) for g in match.groups()], _query(query)
    return None


def _query(query: str) -> dict[str, list[str]]:
    """The query's fields; ``filter[]=`` and ``filter=`` are the same field."""
    parsed: dict[str, list[str]] = {}
    for key, values in parse_qs(query, keep_blank_values=True).items():
        parsed.setdefault(key.removesuffix("[]"), []).extend(values)
    return parsed


def _flag(query: Mapping[str, list[str]], name: str) -> bool:
    return any(value.lower() in ("1", "true") for value in query.get(name, []))


def _form(body: bytes) -> dict[str, list[str]]:
    """A paths-info request's fields: form-encoded (what ``huggingface_hub`` sends) or a JSON object."""
    text = body.decode(errors="replace")
    if text.lstrip().startswith("{"):
        try:
            document = json.loads(text)
        except ValueError:
            document = {}
        paths = document.get("paths", [])
        return {"paths": [paths] if isinstance(paths, str) else [str(p) for p in paths],
                "expand": [str(document.get("expand", False))]}
    return _query(text)


def _json(value: Any) -> Answer:
    return Answer(200, json.dumps(value).encode())


def _commit(repo: GitRepo, revision: str) -> str:
    commit = repo.commit(revision)
    if commit is None:
        raise _NotFound("RevisionNotFound", f"Invalid rev id: {revision}")
    return commit


def _refs(repo: GitRepo, include_prs: bool) -> dict[str, Any]:
    branches, tags = repo.refs()
    listed = {"branches": [{"name": n, "ref": f"refs/heads/{n}", "targetCommit": c} for n, c in branches],
              "tags": [{"name": n, "ref": f"refs/tags/{n}", "targetCommit": c} for n, c in tags],
              "converts": []}
    if include_prs:
        listed["pullRequests"] = []
    return listed


def _commit_json(commit: Commit) -> dict[str, Any]:
    return {"id": commit.oid, "title": commit.title, "message": commit.message, "date": commit.date,
            "authors": [{"user": commit.author, "avatar": None}]}


def _entry_json(entry: Entry, repo: GitRepo | None = None, commit: str | None = None) -> dict[str, Any]:
    """A tree entry as ``tree`` and ``paths-info`` answer it; with ``repo`` and ``commit``, its last commit too."""
    item: dict[str, Any] = {"type": entry.kind, "oid": entry.oid, "size": entry.size, "path": entry.path}
    if entry.lfs_sha256 is not None:
        item["lfs"] = {"oid": entry.lfs_sha256, "size": entry.size, "pointerSize": entry.pointer_size}
    if repo is not None and commit is not None:
        last = repo.log(commit, entry.path, limit=1)[0]
        item["lastCommit"] = {"id": last.oid, "title": last.title, "date": last.date}
    return item


def _sibling(entry: Entry, blobs: bool) -> dict[str, Any]:
    sibling: dict[str, Any] = {"rfilename": entry.path}
    if blobs:
        sibling.update(size=entry.size, blobId=entry.oid)
        if entry.lfs_sha256 is not None:
            sibling["lfs"] = {"sha256": entry.lfs_sha256, "size": entry.size, "pointerSize": entry.pointer_size}
    return sibling


def _tree(repo: GitRepo, commit: str, folder: str, recursive: bool, expand: bool) -> list[dict[str, Any]]:
    """The entries below ``folder`` ('' for the root): its children, or with ``recursive`` everything under it.

    Raises:
        _NotFound: ``EntryNotFound`` when ``folder`` is no directory of the tree (a file, or nothing).
    """
    entries = repo.entries(commit)
    if folder and not any(e.path == folder and e.kind == "directory" for e in entries):
        raise _NotFound("EntryNotFound", f"{folder} does not exist on {commit}", commit)
    prefix = f"{folder}/" if folder else ""
    below = [e for e in entries if e.path.startswith(prefix) and (recursive or "/" not in e.path[len(prefix):])]
    below.sort(key=lambda e: (e.kind != "directory", e.path))
    return [_entry_json(e, repo, commit) if expand else _entry_json(e) for e in below]


def _paths_info(repo: GitRepo, commit: str, form: Mapping[str, list[str]]) -> list[dict[str, Any]]:
    """The entries named by the form's ``paths``, in their order; a path that does not exist is left out."""
    expand = _flag(form, "expand")
    entries = {e.path: e for e in repo.entries(commit)}
    wanted = [path.strip("/") for path in form.get("paths", [])]
    return [_entry_json(entries[p], repo, commit) if expand else _entry_json(entries[p])
            for p in dict.fromkeys(wanted) if p in entries]


def _card(data: bytes | None) -> tuple[dict[str, Any], str]:
    """The card's YAML metadata and its Markdown text; empty for a repo without a card or with unreadable YAML."""
    if data is None:
        return {}, ""
    from huggingface_hub.repocard import RepoCard

    try:
        card = RepoCard(data.decode(errors="replace"), ignore_metadata_errors=True)
    except ValueError:
        return {}, ""
    return card.data.to_dict(), card.text.strip()


def _tags(card: Mapping[str, Any]) -> list[str]:
    """The Hub's tags of a repo: the card's ``tags`` and ``key:value`` for its indexed keys (``license:mit``)."""
    tags = [str(tag) for tag in card.get("tags") or []]
    for key in _TAGGED_CARD_KEYS:
        values = card.get(key)
        for value in values if isinstance(values, list) else [values] if values else []:
            tags.append(f"{key}:{value}")
    return list(dict.fromkeys(tags))
