"""Read a results repo's leaderboards for the site: ``leaderboards/<family>/<name>/<task>.parquet`` (one row per
submission, the columns of the shared contract in its order) and the grader's records the rows name.

A results repo is read from a plain folder (a checkout whose files are real), or, when the folder holds no
``leaderboards/`` but is a git repo (what ``tgbhub publish``'s ``git:`` target and ``tgbhub leaderboard update``
write: commits only, no work tree), from its ``HEAD`` through git, an LFS file from ``.git/lfs/objects`` checked
against its pointer's sha256.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tgbhub import config
from tgbhub.errors import RecordError

#: the leaderboard table's columns, in order, and their Arrow types (``string`` also read as ``large_string``)
COLUMNS = (("rank", "int32"), ("model", "string"), ("metric", "string"), ("mean", "double"), ("std", "double"),
           ("n", "int32"), ("seeds", "string"), ("verified", "bool"), ("flagged", "bool"), ("claimed", "double"),
           ("status", "string"), ("message", "string"), ("date", "string"), ("record", "string"),
           ("submission", "string"), ("paper", "string"), ("dataset", "string"))
_BOARD = re.compile(r"leaderboards/([^/]+)/([^/]+)/([^/]+)\.parquet")
_RECORD = re.compile(r"records(/[A-Za-z0-9._~@+-]+)+\.json")
_POINTER = re.compile(rb"version https://git-lfs\.github\.com/spec/v1\noid sha256:([0-9a-f]{64})\nsize (\d+)\n")


@dataclass(frozen=True)
class Board:
    """One leaderboard: ``family/name``, its task, the rows (plain dicts, the contract's columns) and where it lies
    in the results repo."""

    name: str
    task: str
    rows: tuple[Mapping[str, Any], ...]
    path: str

    @property
    def ranked(self) -> int:
        return sum(1 for row in self.rows if row["status"] == "ranked")


@dataclass(frozen=True)
class Results:
    """A results repo as the site shows it: its boards by ``(family/name, task)`` and the bytes of every record a
    row names (``records/...json`` path -> bytes)."""

    where: str
    boards: Mapping[tuple[str, str], Board]
    records: Mapping[str, bytes]


def hub_results(root: str | os.PathLike[str], org: str | None = None) -> Path | None:
    """The results repo of the ``git:`` hub at ``root`` (``root/datasets/<org>/results``, ``org`` defaulting to
    ``$TGBHUB_HUB_ORG`` or tgbhub), or None when that hub has none."""
    repo = Path(root) / "datasets" / config.hub_org(org) / "results"
    return repo if (repo / ".git").is_dir() or ((repo / "HEAD").is_file() and (repo / "objects").is_dir()) else None


def results_head(repo: Path | None) -> str | None:
    """The commit at ``HEAD`` of the git results repo ``repo``, or None (no repo, or nothing committed yet).

    Raises:
        RecordError: if git is not installed.
    """
    if repo is None:
        return None
    done = _GitFiles(repo)._run("rev-parse", "--verify", "--quiet", "HEAD")
    return (done.stdout.decode().strip() or None) if done.returncode == 0 else None


def read_results(path: str | os.PathLike[str]) -> Results:
    """Every leaderboard of the results repo at ``path`` and the records its rows name.

    Raises:
        RecordError: if ``path`` is neither a folder with ``leaderboards/`` nor a git repo, a file cannot be read
            (an LFS pointer whose object is missing or damaged included), a table breaks the leaderboard contract
            (columns, their order or types), or a row names a record path that is malformed or missing.
    """
    root = Path(path)
    files: _Files
    if (root / "leaderboards").is_dir():
        files = _FolderFiles(root)
    elif (root / ".git").is_dir() or ((root / "HEAD").is_file() and (root / "objects").is_dir()):
        files = _GitFiles(root)
    else:
        raise RecordError(f"{root} is no results repo: it holds no leaderboards/ folder and is not a git repo; "
                          "pass the folder `tgbhub leaderboard update` writes (e.g. ROOT/datasets/tgbhub/results of "
                          "a git: hub) or a checkout of it")
    boards: dict[tuple[str, str], Board] = {}
    records: dict[str, bytes] = {}
    listing = files.listing()
    for relative in sorted(listing):
        match = _BOARD.fullmatch(relative)
        if match is None:
            continue
        family, short, task = match.groups()
        rows = _rows(files.read(relative), f"{root}: {relative}")
        for row in rows:
            record = row["record"]
            if not record:
                continue
            if _RECORD.fullmatch(record) is None or ".." in record.split("/"):
                raise RecordError(f"{root}: {relative}: a row of model {row['model']!r} names the record path "
                                  f"{record!r}, not records/<family>/<name>/<version>/<task>/<id>/<state>.json; "
                                  "rebuild the board with `tgbhub leaderboard update`")
            if record not in listing:
                raise RecordError(f"{root}: {relative}: the record {record} of model {row['model']!r} is not in "
                                  "the results repo; rebuild the board with `tgbhub leaderboard update`")
            records[record] = files.read(record)
        boards[(f"{family}/{short}", task)] = Board(f"{family}/{short}", task, tuple(rows), relative)
    return Results(str(root), boards, records)


def _rows(data: bytes, where: str) -> list[dict[str, Any]]:
    """The table's rows, after checking its columns against the contract.

    Raises:
        RecordError: for bytes that are no Parquet file or a table whose columns break the contract.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(io.BytesIO(data))
    except (pa.ArrowException, OSError) as exc:
        raise RecordError(f"{where} is no readable Parquet file ({exc}); rebuild it with `tgbhub leaderboard "
                          "update`") from exc
    found = [(field.name, "string" if pa.types.is_large_string(field.type) else str(field.type))
             for field in table.schema]
    if found != list(COLUMNS):
        expected = ", ".join(f"{name} {kind}" for name, kind in COLUMNS)
        raise RecordError(f"{where} breaks the leaderboard contract: columns {found}, expected in this order: "
                          f"{expected}; rebuild it with `tgbhub leaderboard update`")
    rows = table.to_pylist()
    for row in rows:
        if row["status"] not in ("ranked", "rejected"):
            raise RecordError(f"{where}: status {row['status']!r} of model {row['model']!r} is neither 'ranked' "
                              "nor 'rejected'; rebuild it with `tgbhub leaderboard update`")
        row["seeds_list"] = _seeds(row["seeds"])
    return rows


def _seeds(text: str | None) -> list[Any]:
    try:
        value = json.loads(text or "[]")
    except ValueError:
        return [text]
    return value if isinstance(value, list) else [value]


class _Files(Protocol):
    """The files of a results repo, whichever way it is stored."""

    def listing(self) -> set[str]:
        """The repo-relative paths of the files under ``leaderboards/`` and ``records/``."""

    def read(self, relative: str) -> bytes:
        """The bytes of the file at ``relative``.

        Raises:
            RecordError: if it cannot be read.
        """


class _FolderFiles:
    """The files of a plain folder (a checkout)."""

    def __init__(self, root: Path) -> None:
        self._root = root

    def listing(self) -> set[str]:
        return {path.relative_to(self._root).as_posix()
                for top in ("leaderboards", "records") if (self._root / top).is_dir()
                for path in (self._root / top).rglob("*") if path.is_file()}

    def read(self, relative: str) -> bytes:
        try:
            data = (self._root / relative).read_bytes()
        except OSError as exc:
            raise RecordError(f"cannot read {self._root / relative}: {exc.strerror or exc}") from exc
        if _POINTER.fullmatch(data):
            raise RecordError(f"{self._root / relative} is a git-LFS pointer, not the file: fetch the LFS objects "
                              f"(git lfs pull in {self._root}), or pass the hub's git repo itself")
        return data


class _GitFiles:
    """The files at ``HEAD`` of a git repo, LFS files read from ``.git/lfs/objects`` (checked by sha256)."""

    def __init__(self, repo: Path) -> None:
        self._repo = repo
        self._blobs: dict[str, str] = {}

    def listing(self) -> set[str]:
        self._blobs = {}
        if results_head(self._repo) is None:
            return set()  # a repo created, but nothing committed yet: no boards
        out = self._git("ls-tree", "-r", "-z", "--full-tree", "HEAD")
        for entry in out.split(b"\0"):
            if not entry:
                continue
            meta, _, path = entry.partition(b"\t")
            kind, oid = meta.split()[1:3]
            if kind == b"blob":
                self._blobs[path.decode()] = oid.decode()
        return set(self._blobs)

    def read(self, relative: str) -> bytes:
        data = self._git("cat-file", "blob", self._blobs[relative])
        pointer = _POINTER.fullmatch(data)
        if pointer is None:
            return data
        sha = pointer.group(1).decode()
        git_dir = self._repo / ".git" if (self._repo / ".git").is_dir() else self._repo
        stored = git_dir / "lfs" / "objects" / sha[:2] / sha[2:4] / sha
        try:
            content = stored.read_bytes()
        except OSError as exc:
            raise RecordError(f"{self._repo}: the LFS object of {relative} (sha256 {sha}) cannot be read "
                              f"({exc.strerror or exc}); fetch it (git lfs fetch) or restore .git/lfs/objects") from exc
        if hashlib.sha256(content).hexdigest() != sha:
            raise RecordError(f"{self._repo}: the LFS object of {relative} does not match its pointer's sha256 {sha}; "
                              "restore .git/lfs/objects from a backup, or rebuild with `tgbhub leaderboard update`")
        return content

    def _git(self, *args: str) -> bytes:
        done = self._run(*args)
        if done.returncode != 0:
            raise RecordError(f"`git {' '.join(args)}` in {self._repo} failed: "
                              f"{done.stderr.decode(errors='replace').strip()}; check that it is an intact results "
                              "repo with at least one commit")
        return done.stdout

    def _run(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        try:
            return subprocess.run(["git", "-C", str(self._repo), *args], capture_output=True, check=False)
        except FileNotFoundError as exc:
            raise RecordError("git is not installed; reading a results repo needs it (apt-get install git)") from exc
