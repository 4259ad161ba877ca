"""Submissions on a hub: ``tgbhub submit NAME SUBMISSION --hub HUB --model M``.

A submission is pushed, ungraded, into the dataset repo ``ORG/submissions`` on a hub (``git:ROOT`` for a hub that
``tgbhub hub serve ROOT`` serves, ``hf`` for the Hugging Face Hub or any server speaking its API):
``submissions/<family>/<name>/<version>/<task>/<submission_id>/`` holds ``submission.parquet`` (the file, byte for
byte), ``meta.json`` (model, paper, time, dataset ``family/name@version``, task, split, seed) and, when the submitter
has one, ``claim.json`` (the result record they claim, :mod:`tgbhub.results.records`). ``submission_id`` is the first
16 hex digits of the file's sha256, so the same bytes are one submission however often they are pushed.

The folder is what is graded: its place names the dataset version and task, the task's report split is the split,
and the grader refuses a ``meta.json`` that names others (it is the submitter's description, not the grader's
instruction).

Nothing here grades: the hub maintainer's ``tgbhub leaderboard update`` (:mod:`tgbhub.results.grader`) does, and
trusts no claim. Submitting checks only what is cheap: the file exists, is Parquet, within the task's bounds
(rows and decoded bytes from its footer, :func:`tgbhub.evaluate.submission.bounds_for`), the dataset and task
exist, the split is the task's report split, and a claimed record is intact and names this file, dataset and task.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tgbhub import api, config
from tgbhub.errors import InvalidNameError, PublishError, RecordError
from tgbhub.hashing import file_sha256
from tgbhub.hub.git import GitTarget
from tgbhub.hub.hfapi import HfTarget
from tgbhub.hub.layout import RepoFile
from tgbhub.hub.release import commit_files
from tgbhub.results import records

#: the repos of the leaderboard, below the hub's organisation
SUBMISSIONS_REPO = "submissions"
RESULTS_REPO = "results"
SUBMISSION_FILE, META_FILE, CLAIM_FILE = "submission.parquet", "meta.json", "claim.json"
#: hex digits of the file's sha256 that name a submission
ID_DIGITS = 16

HubTarget = GitTarget | HfTarget


def hub_target(to: str | HubTarget, *, endpoint: str | None = None, token: str | None = None) -> HubTarget:
    """``git:ROOT`` or ``hf`` (with ``endpoint`` and ``token``, as for ``tgbhub publish``) as a target; a target
    object is returned as it is.

    Raises:
        PublishError: for another target (a static ``mirror:`` has no repos to commit to) or ``hf`` without an
            endpoint.
    """
    if isinstance(to, (GitTarget, HfTarget)):
        return to
    from tgbhub.publish import parse_target

    target = parse_target(to, endpoint=endpoint, token=token)
    if not isinstance(target, (GitTarget, HfTarget)):
        raise PublishError(f"{to!r} cannot hold submissions: a static mirror has no repos to commit to; use git:ROOT "
                           "(a hub `tgbhub hub serve ROOT` serves) or hf (--endpoint URL, --token)")
    return target


def repo_for(kind: str, org: str | None = None) -> str:
    """``ORG/submissions`` or ``ORG/results`` (``org``, else ``$TGBHUB_HUB_ORG``, else tgbhub)."""
    return f"{config.hub_org(org)}/{kind}"


def submission_id(path: str | os.PathLike[str]) -> str:
    """The id of a submission file: the first :data:`ID_DIGITS` hex digits of its sha256."""
    return file_sha256(path)[:ID_DIGITS]


def folder_of(dataset: str, task: str, sid: str) -> str:
    """``submissions/<family>/<name>/<version>/<task>/<id>`` for dataset ``family/name@version``.

    Raises:
        InvalidNameError: if ``dataset`` names no version (a folder binds the version graded).
    """
    base, _, version = dataset.partition("@")
    if not version:
        raise InvalidNameError(f"dataset {dataset!r} names no version; a submission's folder binds the version it is "
                               f"graded on: pass {base}@VERSION")
    return Place(base, version, task, sid).folder


@dataclass(frozen=True)
class Place:
    """Where a submission sits in the submissions repo, which is what it is graded on: dataset ``family/name``,
    its version, the task and the submission id (the folder's name)."""

    dataset: str
    version: str
    task: str
    id: str

    @property
    def ref(self) -> str:
        return f"{self.dataset}@{self.version}"

    @property
    def folder(self) -> str:
        return f"submissions/{self.dataset}/{self.version}/{self.task}/{self.id}"


def parse_path(path: str) -> tuple[Place, str] | None:
    """``(place, file name)`` of a file path in the submissions repo, or ``None`` for a path outside any folder."""
    parts = path.split("/")
    if len(parts) != 7 or parts[0] != "submissions" or not all(parts):
        return None
    return Place(f"{parts[1]}/{parts[2]}", parts[3], parts[4], parts[5]), parts[6]


@dataclass(frozen=True)
class Submission:
    """A submission ready to push: its id, dataset ``family/name@version``, task, split and files."""

    id: str
    dataset: str
    task: str
    split: str
    meta: Mapping[str, Any]
    files: tuple[RepoFile, ...]

    @property
    def folder(self) -> str:
        return folder_of(self.dataset, self.task, self.id)


@dataclass(frozen=True)
class Submitted:
    """What a push did to one submission: ``status`` is ``submitted`` or ``exists`` (the same bytes were already
    submitted for this dataset and task; nothing changed)."""

    id: str
    dataset: str
    task: str
    folder: str
    status: str
    repo: str
    commit: str | None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "dataset": self.dataset, "task": self.task, "folder": self.folder,
                "status": self.status, "repo": self.repo, "commit": self.commit}


def _json_bytes(value: Mapping[str, Any]) -> bytes:
    return (json.dumps(records.canonical(value), indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


def _in_memory(path: str, data: bytes) -> RepoFile:
    import hashlib

    return RepoFile(path, hashlib.sha256(data).hexdigest(), len(data), data=data)


def _utc(now: datetime | None) -> str:
    return (now or datetime.now(timezone.utc)).astimezone(timezone.utc).isoformat(timespec="seconds") \
        .replace("+00:00", "Z")


def prepare(name: str, submission: str | os.PathLike[str], *, model: str, record: str | os.PathLike[str] |
            Mapping[str, Any] | None = None, paper: str | None = None, task: str | None = None,
            split: str | None = None, seed: int | None = None, hyperparameters: Mapping[str, Any] | None = None,
            cache_dir: str | os.PathLike[str] | None = None, offline: bool | None = None,
            now: datetime | None = None) -> Submission:
    """Check ``submission`` cheaply (never graded here) and lay out its files for the submissions repo.

    ``task`` defaults to the task whose declared columns the file has, else the dataset's default task. The split is
    the task's report split, the one its board ranks (``split``, if given, must be it). ``record`` (a path or a
    record) is the submitter's claim; ``seed`` and ``hyperparameters`` default to the claim's.

    Raises:
        InvalidNameError: if ``model`` is empty, the file is missing, not Parquet or over the task's bounds (rows or
            decoded bytes, read from its footer), or ``split`` is not the task's report split.
        DatasetNotFoundError, VersionNotFoundError: for an unknown dataset or version.
        ManifestError: if the dataset declares no such task.
        RecordError: if the claim is not an intact record, or names another file, dataset or task.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tgbhub.errors import SubmissionError
    from tgbhub.evaluate.submission import bounds_for, check_bounds, closest_task, task_for_columns
    from tgbhub.tasks.declared import choose_split

    if not model or not model.strip():
        raise InvalidNameError("a submission needs a model name (--model M), e.g. --model tgn")
    path = Path(submission)
    if not path.is_file():
        raise InvalidNameError(f"submission {os.fspath(submission)!r} does not exist; pass the Parquet file your "
                               "model wrote")
    try:
        schema = pq.read_schema(path)
    except (OSError, pa.ArrowException) as exc:
        raise InvalidNameError(f"submission {os.fspath(submission)!r} is not a Parquet file ({exc}); write it with "
                               "pyarrow.parquet.write_table in the task's submission schema (`tgbhub info NAME`)") \
            from None
    manifest = api.with_task_documents(api.manifest_of(name, cache_dir=cache_dir, offline=offline))
    chosen = manifest.task_named(task) if task is not None else (task_for_columns(manifest.tasks, schema.names)
                                                                 or closest_task(manifest.tasks, schema)
                                                                 or manifest.task)
    task_name = str(chosen.get("name"))
    graded_split = choose_split(manifest, chosen, None)
    if split is not None and choose_split(manifest, chosen, split) != graded_split:
        raise InvalidNameError(f"the leaderboard of task {task_name!r} grades split {graded_split!r}, the task's "
                               f"report split, not {split!r}; drop --split (a {split} result is no board entry: check "
                               "it with `tgbhub evaluate --split`)")
    ref = f"{manifest.name}@{manifest.version}"
    try:  # the bounds the grader applies, here before a push: rows and decoded bytes from the footer
        check_bounds(path, bounds_for(manifest, chosen, graded_split),
                     f"task {task_name!r} on split {graded_split!r} of {manifest.name}")
    except SubmissionError as exc:
        raise InvalidNameError(f"submission {os.fspath(submission)!r} cannot be graded: {exc}") from None
    sid = submission_id(path)
    claim: dict[str, Any] | None = None
    if record is not None:
        claim = dict(record) if isinstance(record, Mapping) else records.read_record(record)
        records.check_record(claim, "the claimed record")
        _require_claim_of(claim, ref, task_name, path)
        seed = seed if seed is not None else (claim.get("model") or {}).get("seed")
        hyperparameters = hyperparameters if hyperparameters is not None else \
            (claim.get("model") or {}).get("hyperparameters")
    meta = {"model": model.strip(), "paper": paper, "submitted": _utc(now), "dataset": ref, "task": task_name,
            "split": graded_split, "seed": seed, "hyperparameters": hyperparameters}
    folder = folder_of(ref, task_name, sid)
    files = [RepoFile(f"{folder}/{SUBMISSION_FILE}", file_sha256(path), path.stat().st_size, local=path),
             _in_memory(f"{folder}/{META_FILE}", _json_bytes(meta))]
    if claim is not None:
        files.append(_in_memory(f"{folder}/{CLAIM_FILE}", records.canonical_json(claim) + b"\n"))
    return Submission(sid, ref, task_name, graded_split, meta, tuple(files))


def _require_claim_of(claim: Mapping[str, Any], ref: str, task: str, path: Path) -> None:
    """Raises RecordError unless the claimed record graded this file, dataset version and task."""
    found = {"dataset": (claim.get("dataset") or {}).get("ref"), "task": (claim.get("task") or {}).get("name"),
             "submission sha256": (claim.get("submission") or {}).get("sha256")}
    expected = {"dataset": ref, "task": task, "submission sha256": file_sha256(path)}
    for key, value in expected.items():
        if found[key] != value:
            raise RecordError(f"the claimed record names {key} {found[key]!r}, but this submission is {value!r}; "
                              "pass the record --record wrote when this very file was graded")


def submit_many(prepared: Sequence[Submission], to: str | HubTarget, *, org: str | None = None,
                endpoint: str | None = None, token: str | None = None,
                message: str | None = None) -> list[Submitted]:
    """Push ``prepared`` submissions into ``ORG/submissions`` on ``to`` in one commit; a submission whose file is
    already there (same id, dataset and task) is left as it is (``exists``).

    Raises:
        PublishError: for a target that cannot hold submissions, or one that refuses the write.
    """
    target = hub_target(to, endpoint=endpoint, token=token)
    repo = repo_for(SUBMISSIONS_REPO, org)
    with target.open_repo(repo, write=True) as session:
        assert session is not None  # write=True creates the repo
        _, head = session.refs()
        tree = session.tree(head) if head is not None else {}
        new = [item for item in prepared if f"{item.folder}/{SUBMISSION_FILE}" not in tree]
        files: list[RepoFile] = []
        added: set[str] = set()
        for item in new:  # the same bytes twice in one push are one submission
            if item.folder not in added:
                added.add(item.folder)
                files.extend(item.files)
        text = message or "tgbhub submit: " + ", ".join(f"{i.dataset} {i.task} {i.meta['model']} {i.id}"
                                                        for i in new[:5]) + (" ..." if len(new) > 5 else "")
        commit = commit_files(session, files, text) if files else head
    return [Submitted(item.id, item.dataset, item.task, item.folder,
                      "submitted" if item.folder in added else "exists", repo, commit) for item in prepared]


def submit(name: str, submission: str | os.PathLike[str], *, to: str | HubTarget, model: str,
           record: str | os.PathLike[str] | Mapping[str, Any] | None = None, paper: str | None = None,
           task: str | None = None, split: str | None = None, seed: int | None = None,
           hyperparameters: Mapping[str, Any] | None = None, org: str | None = None, endpoint: str | None = None,
           token: str | None = None, cache_dir: str | os.PathLike[str] | None = None,
           offline: bool | None = None) -> Submitted:
    """Check ``submission`` cheaply (:func:`prepare`) and push it with its meta and claim into ``ORG/submissions``
    on ``to`` (``git:ROOT``, ``hf`` or a target object): what ``tgbhub submit`` does. It is graded later, by the hub's
    ``tgbhub leaderboard update``.

    >>> submit("t-grab/ce-64", "sub.parquet", to="git:hub", model="edgebank", record="rec.json")  # doctest: +SKIP

    Raises:
        InvalidNameError, DatasetNotFoundError, VersionNotFoundError, ManifestError, RecordError: as :func:`prepare`.
        PublishError: as :func:`submit_many`.
    """
    target = hub_target(to, endpoint=endpoint, token=token)  # a bad target fails before any other work
    item = prepare(name, submission, model=model, record=record, paper=paper, task=task, split=split, seed=seed,
                   hyperparameters=hyperparameters, cache_dir=cache_dir, offline=offline)
    return submit_many([item], target, org=org)[0]
