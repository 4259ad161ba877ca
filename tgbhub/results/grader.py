"""The maintainer's ``tgbhub leaderboard update``: grade what was pushed to the submissions repo and commit the
outcomes and the boards they touch to the results repo ``ORG/results`` (:mod:`tgbhub.results.outcomes`).

* a submission is a folder in one state (:func:`~tgbhub.results.outcomes.state_of`); a new commit that changes any
  of its files is a new state, so a new submission, and an earlier state keeps its outcome and its row;
* every state without an outcome is screened without reading a row (:func:`_screen`: the folder's place names the
  dataset version and task, the task's report split is the split, ``meta.json`` must agree, the folder's first
  graded model owns it, the file is the one the folder's id hashes, within the task's bounds from its footer) and
  then graded by the bundled evaluator in a child process killed at the time limit (or on a Dask cluster with
  ``scheduler=``); a claim is never read for a score;
* a graded one gets the grader's own record (:mod:`tgbhub.results.records`, with a ``hub`` block binding it to its
  folder, state and the submissions commit); any failure a rejection carrying its message (so a second update
  grades nothing again and commits nothing);
* each touched board is rebuilt from the outcomes alone, never from a ``meta.json`` as it is now
  (:mod:`tgbhub.results.ranking`); all in one commit.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tgbhub import api
from tgbhub.errors import RecordError, TgbhubError
from tgbhub.hub.layout import RepoFile
from tgbhub.hub.release import RepoSession, commit_files
from tgbhub.results import records
from tgbhub.results.display import terminal_safe
from tgbhub.results.outcomes import REJECTION_FORMAT, board_path, outcome_of, record_path, rejection_path, state_of
from tgbhub.results.ranking import Entry, board_bytes, board_rows, check_claim, entry_of
from tgbhub.results.submissions import (
    CLAIM_FILE,
    META_FILE,
    RESULTS_REPO,
    SUBMISSION_FILE,
    SUBMISSIONS_REPO,
    HubTarget,
    Place,
    hub_target,
    parse_path,
    repo_for,
)


@dataclass
class UpdateReport:
    """What :func:`update` did: ids graded (ranked), rejected, flagged, skipped (not graded this time: their dataset
    could not be obtained, or the path is no submission folder), each rejection's and skip's message, the boards
    written and the results commit."""

    graded: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    flagged: list[str] = field(default_factory=list)
    boards: list[str] = field(default_factory=list)
    commit: str | None = None
    skipped: list[str] = field(default_factory=list)
    messages: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"graded": self.graded, "rejected": self.rejected, "flagged": self.flagged, "boards": self.boards,
                "commit": self.commit, "skipped": self.skipped, "messages": self.messages}

    def lines(self) -> list[str]:
        """The report as text, every submitter-written value escaped for the terminal."""
        notes = [f"{kind} {terminal_safe(key)}: {terminal_safe(self.messages.get(key, ''))}"
                 for kind, keys in (("rejected", self.rejected), ("skipped", self.skipped)) for key in keys]
        if not (self.graded or self.rejected):
            return ["nothing new to grade", *notes]
        return [f"graded {len(self.graded)}, rejected {len(self.rejected)}, flagged {len(self.flagged)}, skipped "
                f"{len(self.skipped)}", *notes, *(f"board: {path}" for path in self.boards),
                f"commit: {self.commit}"]


@dataclass
class _Job:
    """A submission that passed every check that reads no row, ready to grade."""

    place: Place
    state: str
    path: Path
    split: str
    meta: dict[str, Any]
    meta_sha256: str
    claim: bytes | None


class _Skip(Exception):
    """A submission that cannot be graded now through no fault of its own (its dataset is not at hand)."""


def update(hub: str | HubTarget, *, org: str | None = None, endpoint: str | None = None, token: str | None = None,
           scheduler: str | None = None, retries: int | None = None,
           cache_dir: str | os.PathLike[str] | None = None, offline: bool | None = None,
           now: datetime | None = None, time_limit: float | None = None) -> UpdateReport:
    """Grade every submission folder on ``hub`` whose current state has no outcome yet and commit records,
    rejections and the boards they touch to ``ORG/results`` in one commit (none when there is nothing new, so a
    second update without new pushes commits nothing).

    What is graded is the folder's place, never its ``meta.json``: dataset, version and task from the path, the
    split the task reports. Every failure of one submission (unreadable or disagreeing meta, unknown dataset,
    version or task, a file over the task's bounds, a malformed file, an evaluator error, a time-out) is a rejection
    with its message, and the others are graded. A submission whose dataset cannot be obtained now is skipped and
    graded by a later update. ``time_limit`` (seconds, default
    :data:`tgbhub.evaluate.submission.GRADE_SECONDS`) bounds each grading: here it runs in a child process that is
    killed at the limit. ``scheduler`` (with ``retries``) grades one submission per task on a Dask cluster
    (:func:`tgbhub.scale.evaluate`; the cluster's own limits apply there, not ``time_limit``); the grader's cache
    (``cache_dir``) and temporary folder must then be on a filesystem every worker shares.

    Raises:
        PublishError: if the hub cannot be read or refuses the commit.
        MissingExtraError, SchedulerUnavailableError: for ``scheduler`` without Dask, or one that does not answer.
    """
    from tgbhub.evaluate.submission import GRADE_SECONDS

    target = hub_target(hub, endpoint=endpoint, token=token)
    report = UpdateReport()
    limit = float(GRADE_SECONDS if time_limit is None else time_limit)
    with target.open_repo(repo_for(SUBMISSIONS_REPO, org), write=False) as subs, \
            tempfile.TemporaryDirectory(prefix="tgbhub-grade-") as scratch:
        if subs is None:
            return report
        _, sub_head = subs.refs()
        if sub_head is None:
            return report
        folders, stray = _submission_folders(subs.tree(sub_head))
        for path in stray:
            report.skipped.append(path)
            report.messages[path] = ("not in a submission folder (submissions/<family>/<name>/<version>/<task>/<id>/"
                                     "<file>): not graded; push it with `tgbhub submit`")
        with target.open_repo(repo_for(RESULTS_REPO, org), write=True) as out:
            assert out is not None  # write=True creates the repo
            _, head = out.refs()
            tree = out.tree(head) if head is not None else {}
            outcomes = _outcomes(tree)
            states = {place: state_of(files) for place, files in folders.items()}
            pending = sorted((p for p in folders if states[p] not in outcomes.get(p, {})),
                             key=lambda p: (p.dataset, p.version, p.task, p.id))
            if not pending:
                return report
            written: list[RepoFile] = []
            context = _Context(subs, sub_head, out, head, tree, outcomes, Path(scratch), cache_dir, offline,
                               _utc(now), now)
            jobs: list[_Job] = []
            for place in pending:
                try:
                    jobs.append(_screen(context, place, folders[place], states[place]))
                except _Refused as refused:
                    written.append(_reject(context, report, place, states[place], refused.meta, refused.split,
                                           str(refused)))
                except (_Skip, TgbhubError, OSError) as skip:  # the hub or the grader's side: try again later
                    report.skipped.append(place.id)
                    report.messages[place.id] = str(skip) if isinstance(skip, _Skip) else \
                        f"could not be read from the hub now ({type(skip).__name__}: {skip}); a later update grades it"
            for job, row in _grade(jobs, scheduler, retries, cache_dir, offline, limit, report):
                try:
                    if row["status"] != "ok":
                        raise _Refused(str(row.get("error") or "the evaluator gave no reason"))
                    written.append(_graded(context, job, row))
                    report.graded.append(job.place.id)
                except (_Refused, RecordError) as refused:  # e.g. a meta value no record can hold
                    written.append(_reject(context, report, job.place, job.state, job.meta, job.split,
                                           str(refused)))
            fresh = {f.path: f for f in written}
            places = [parsed[0] for parsed in map(outcome_of, fresh) if parsed is not None]
            for board in sorted({(place.dataset, place.task) for place in places}):
                task = _board_task(board, folders, context)
                if task is None:  # an unknown dataset or task has no board; its rejection file says why
                    continue
                rows = board_rows(_board_entries(context, board, fresh), task)
                new_ids = {place.id for place in places if (place.dataset, place.task) == board}
                report.flagged += [sid for row in rows if row["flagged"] and row["status"] == "ranked"
                                   for sid in row["submission"].split(",") if sid in new_ids
                                   and sid in report.graded and sid not in report.flagged]
                board_file = board_path(*board)
                written.append(_file(board_file, board_bytes(rows)))
                report.boards.append(board_file)
            if not written:
                return report
            report.commit = commit_files(out, written, f"tgbhub leaderboard update: graded {len(report.graded)}, "
                                         f"rejected {len(report.rejected)}, flagged {len(report.flagged)}")
    return report


class _Refused(Exception):
    """A submission refused before or while grading (never raised out of :func:`update`: it becomes the
    submission's rejection); the message says what, with which value, and the fix."""

    def __init__(self, message: str, meta: Mapping[str, Any] | None = None, split: str | None = None) -> None:
        super().__init__(message)
        self.meta = dict(meta or {})
        self.split = split


@dataclass
class _Context:
    """What screening, grading and board building share during one update."""

    subs: RepoSession
    sub_head: str
    out: RepoSession
    head: str | None
    tree: Mapping[str, tuple[str | None, str]]
    outcomes: dict[Place, dict[str, str]]
    scratch: Path
    cache_dir: str | os.PathLike[str] | None
    offline: bool | None
    graded_at: str
    now: datetime | None
    manifests: dict[str, Any] = field(default_factory=dict)


def _submission_folders(tree: Mapping[str, tuple[str | None, str]]
                        ) -> tuple[dict[Place, dict[str, tuple[str | None, str]]], list[str]]:
    """``(place -> {file name: (lfs sha256, blob id)}, paths under submissions/ outside any folder)``."""
    found: dict[Place, dict[str, tuple[str | None, str]]] = {}
    stray = []
    for path, ids in tree.items():
        parsed = parse_path(path)
        if parsed is None:
            if path.startswith("submissions/"):
                stray.append(path)
            continue
        found.setdefault(parsed[0], {})[parsed[1]] = ids
    return found, sorted(stray)


def _outcomes(tree: Mapping[str, tuple[str | None, str]]) -> dict[Place, dict[str, str]]:
    """``place -> {state: outcome path}`` of every record and rejection in the results repo."""
    found: dict[Place, dict[str, str]] = {}
    for path in tree:
        parsed = outcome_of(path)
        if parsed is not None:
            found.setdefault(parsed[0], {})[parsed[1]] = path
    return found


def _manifest(context: _Context, ref: str) -> Any:
    """The manifest of ``ref`` with its task documents, cached for the update.

    Raises:
        _Refused: for an unknown family, dataset or version, or a malformed name.
        _Skip: if the dataset cannot be obtained now (a source unreachable, a build failing).
    """
    from tgbhub.errors import (
        DatasetNotFoundError,
        InvalidNameError,
        ManifestError,
        TgbhubError,
        VersionNotFoundError,
    )

    if ref not in context.manifests:
        try:
            context.manifests[ref] = api.with_task_documents(api.manifest_of(ref, cache_dir=context.cache_dir,
                                                                             offline=context.offline))
        except (DatasetNotFoundError, VersionNotFoundError, InvalidNameError, ManifestError) as exc:
            context.manifests[ref] = _Refused(f"the folder's dataset {ref} cannot be graded: {exc}")
        except TgbhubError as exc:
            context.manifests[ref] = _Skip(f"{ref} could not be obtained to grade it ({exc}); a later update grades "
                                           "it")
    found = context.manifests[ref]
    if isinstance(found, Exception):
        raise type(found)(str(found))
    return found


def _read_meta(data: bytes) -> dict[str, Any]:
    """``meta.json``'s object.

    Raises:
        _Refused: if it is not UTF-8 JSON holding an object.
    """
    try:
        meta = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _Refused(f"meta.json is not JSON ({exc}); push the folder again with `tgbhub submit`, "
                       "which writes it") from None
    if not isinstance(meta, dict):
        raise _Refused(f"meta.json holds a JSON {type(meta).__name__}, not an object; push the folder "
                       "again with `tgbhub submit`")
    return meta


def _screen(context: _Context, place: Place, files: Mapping[str, tuple[str | None, str]], state: str) -> _Job:
    """Every check of a submission folder that reads no row of its file: the folder is complete, ``meta.json`` is
    an object naming a model and agreeing with the place (dataset version, task) and the task's report split, the
    dataset version and task exist, the model is the one the folder was first graded as, the file is the one the
    folder's id names and within the task's bounds (rows and decoded bytes, from its footer).

    Raises:
        _Refused: naming what failed, with both values where two disagree.
        _Skip: if the dataset cannot be obtained now.
    """
    from tgbhub.errors import ManifestError, SubmissionError
    from tgbhub.evaluate.submission import bounds_for, check_bounds
    from tgbhub.tasks.declared import choose_split

    missing = [name for name in (SUBMISSION_FILE, META_FILE) if name not in files]
    if missing:
        raise _Refused(f"the folder {place.folder} holds {', '.join(sorted(files))} but no "
                       f"{' or '.join(missing)}; push the whole submission with `tgbhub submit`")
    meta_bytes = context.subs.read(context.sub_head, f"{place.folder}/{META_FILE}")
    meta = _read_meta(meta_bytes)
    model = meta.get("model")
    for key in ("model", "dataset", "task", "split"):
        if key not in meta or meta[key] in (None, ""):
            raise _Refused(f"meta.json has no {key!r}; push the folder again with `tgbhub submit`, which "
                           "writes it", meta)
    if not isinstance(model, str) or not model.strip():
        raise _Refused(f"meta.json's model {model!r} is not a name; submit with --model NAME", meta)
    for key, expected in (("dataset", place.ref), ("task", place.task)):
        if meta[key] != expected:
            raise _Refused(f"meta.json names {key} {meta[key]!r}, but the submission sits in the folder of "
                           f"{key} {expected!r} ({place.folder}); the place is what is graded: submit the "
                           f"file for {meta[key]!r} with `tgbhub submit`, which puts it in that folder", meta)
    try:
        manifest = _manifest(context, place.ref)
    except _Refused as refused:
        raise _Refused(str(refused), meta) from None
    try:
        task = manifest.task_named(place.task)
    except ManifestError as exc:
        raise _Refused(f"the folder's task cannot be graded: {exc}", meta) from None
    split = choose_split(manifest, task, None)
    if meta["split"] != split:
        raise _Refused(f"meta.json names split {meta['split']!r}, but the board of task {place.task!r} "
                       f"grades split {split!r} (the task's report split); submit a file for {split!r}",
                                meta, split)
    _require_owner(context, place, state, model, meta, split)
    lfs = files[SUBMISSION_FILE][0]
    if lfs is not None and not lfs.startswith(place.id):
        raise _Refused(f"the file's sha256 {lfs} does not start with the folder's id {place.id}: a folder "
                       "holds the file its name hashes; push it with `tgbhub submit`", meta, split)
    local = context.subs.download(context.sub_head, f"{place.folder}/{SUBMISSION_FILE}", context.scratch / state)
    if lfs is None:
        actual = records.file_sha256(local)
        if not actual.startswith(place.id):
            raise _Refused(f"the file's sha256 {actual} does not start with the folder's id {place.id}: a "
                           "folder holds the file its name hashes; push it with `tgbhub submit`", meta, split)
    try:
        check_bounds(local, bounds_for(manifest, task, split), f"task {place.task!r} on split {split!r} of "
                     f"{place.ref}")
    except SubmissionError as exc:
        raise _Refused(str(exc), meta, split) from None
    claim = context.subs.read(context.sub_head, f"{place.folder}/{CLAIM_FILE}") if CLAIM_FILE in files else None
    return _Job(place, state, local, split, meta, hashlib.sha256(meta_bytes).hexdigest(), claim)


def _require_owner(context: _Context, place: Place, state: str, model: str, meta: Mapping[str, Any],
                   split: str) -> None:
    """A folder belongs to the model it was first graded as: a later state naming another model is refused, so a
    foreign ``meta.json`` cannot rename a graded row (the earlier outcome keeps its row either way).

    Raises:
        _Refused: naming both models and the earlier outcome.
    """
    earlier = sorted(path for other, path in context.outcomes.get(place, {}).items() if other != state)
    if not earlier or context.head is None:
        return
    first = min((_read_outcome(context, path) for path in earlier), key=lambda item: item[0])
    if first[1] is not None and first[1] != model:
        raise _Refused(f"meta.json now names model {model!r}, but this folder was first graded as model "
                       f"{first[1]!r} ({first[2]}); a graded folder keeps its model: submit your own "
                       "file under your model's name", meta, split)


def _read_outcome(context: _Context, path: str) -> tuple[str, str | None, str]:
    """``(when graded, model, path)`` of an outcome already in the results repo."""
    data = json.loads(context.out.read(context.head, path))  # type: ignore[arg-type]
    if path.startswith("records/"):
        return str(data.get("created", "")), (data.get("model") or {}).get("name"), path
    return str(data.get("graded", "")), data.get("model"), path


def _grade(jobs: Sequence[_Job], scheduler: str | None, retries: int | None,
           cache_dir: str | os.PathLike[str] | None, offline: bool | None, limit: float,
           report: UpdateReport) -> list[tuple[_Job, dict[str, Any]]]:
    """Each job with its grading row (``status`` ``ok`` with the result, or ``failed`` with ``error``); jobs whose
    dataset cannot be made ready are skipped (reported, graded by a later update)."""
    from tgbhub import scale
    from tgbhub.errors import TgbhubError

    groups: dict[tuple[str, str, str], list[_Job]] = {}
    for job in jobs:
        groups.setdefault((job.place.ref, job.place.task, job.split), []).append(job)
    done: list[tuple[_Job, dict[str, Any]]] = []
    grader = _Grader(limit) if scheduler is None else None
    try:
        for (ref, task, split), items in groups.items():
            try:
                api.load_dataset(ref, cache_dir=cache_dir, offline=offline)
            except TgbhubError as exc:  # not at hand: no fault of the submissions, which wait for a later update
                for job in items:
                    report.skipped.append(job.place.id)
                    report.messages[job.place.id] = f"{ref} could not be obtained to grade it ({exc})"
                continue
            if grader is None:
                rows = scale.evaluate(ref, [job.path for job in items], scheduler=scheduler, cache_dir=cache_dir,
                                      offline=offline, task=task, split=split,
                                      retries=scale.DEFAULT_RETRIES if retries is None else retries)
                done += list(zip(items, rows, strict=True))
                continue
            for job in items:
                done.append((job, grader.grade(ref, job.path, {"task": task, "split": split, "cache_dir": cache_dir,
                                                               "offline": offline})))
    finally:
        if grader is not None:
            grader.close()
    return done


def _grade_loop(connection: Any) -> None:
    """The grading process: one ``(name, file, options)`` job at a time from ``connection``, one row back."""
    from tgbhub import scale

    while True:
        try:
            job = connection.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        name, path, options = job
        try:
            row = scale.grade_task(name, path, options)
        except BaseException as exc:  # noqa: BLE001 - whatever the evaluator raised is this submission's rejection
            row = {"file": path, "status": "failed", "error": f"the evaluator failed: {type(exc).__name__}: {exc}"}
        connection.send(row)


class _Grader:
    """Grades one submission at a time in a child process, so that a grading past ``limit`` seconds is killed (a
    time check between steps cannot interrupt a kernel) and becomes that submission's rejection; the next one gets a
    fresh process. Forked where the platform can (modules and compiled kernels are inherited), spawned elsewhere."""

    def __init__(self, limit: float) -> None:
        import multiprocessing

        methods = multiprocessing.get_all_start_methods()
        self._mp: Any = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        self.limit = limit
        self._process: Any = None
        self._connection: Any = None

    def _start(self) -> None:
        parent, child = self._mp.Pipe()
        self._process = self._mp.Process(target=_grade_loop, args=(child,), daemon=True, name="tgbhub-grader")
        self._process.start()
        child.close()
        self._connection = parent

    def grade(self, name: str, path: Path, options: Mapping[str, Any]) -> dict[str, Any]:
        """The row of grading ``path`` against ``name``; a time-out or a dead process is a failed row."""
        if self._process is None or not self._process.is_alive():
            self._start()
        self._connection.send((name, os.fspath(path), dict(options)))
        if not self._connection.poll(self.limit):
            self._stop()
            return {"file": os.fspath(path), "status": "failed",
                    "error": f"grading took longer than {self.limit:g} s, the per-submission limit, and was stopped; "
                             "submit a file the task's evaluator grades in time (exactly the rows the task asks for)"}
        try:
            return dict(self._connection.recv())
        except (EOFError, OSError):
            code = self._process.exitcode if self._process is not None else None
            self._stop()
            return {"file": os.fspath(path), "status": "failed",
                    "error": f"the grading process died (exit code {code}) on this file; it may need more memory "
                             "than the grader has: submit exactly the rows the task asks for"}

    def _stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.join(5)
        if self._connection is not None:
            self._connection.close()
        self._process = self._connection = None

    def close(self) -> None:
        """End the grading process."""
        if self._process is not None and self._process.is_alive():
            try:
                self._connection.send(None)
                self._process.join(5)
            except (OSError, ValueError):
                pass
        self._stop()


def _reject(context: _Context, report: UpdateReport, place: Place, state: str, meta: Mapping[str, Any],
            split: str | None, message: str) -> RepoFile:
    """The rejection file of ``place`` in ``state``, noted in ``report``."""
    from tgbhub.evaluate import EVALUATOR_VERSION

    seed = meta.get("seed")
    rejection = {"format": REJECTION_FORMAT, "submission": place.id, "dataset": place.ref, "task": place.task,
                 "split": split, "message": message, "folder": place.folder, "state": state,
                 "submissions_commit": context.sub_head,
                 "model": meta.get("model") if isinstance(meta.get("model"), str) else None,
                 "seed": seed if isinstance(seed, (int, str)) and not isinstance(seed, bool) else None,
                 "paper": meta.get("paper") if isinstance(meta.get("paper"), str) else None,
                 "submitted": str(meta.get("submitted") or "")[:32], "evaluator_version": EVALUATOR_VERSION,
                 "graded": context.graded_at}
    report.rejected.append(place.id)
    report.messages[place.id] = message
    return _json_file(rejection_path(place, state), rejection)


def _graded(context: _Context, job: _Job, row: Mapping[str, Any]) -> RepoFile:
    """The grader's record of ``job``: the evaluator's result, the model as the folder names it, and the ``hub``
    block binding it to its place (folder, state, the submissions commit graded, where the record lies, the meta's
    sha256, paper, submission time and the verdict on the claim)."""
    from tgbhub.evaluate.directions import primary_metric
    from tgbhub.evaluate.graded import Graded

    manifest = _manifest(context, job.place.ref)
    result = {k: v for k, v in row.items() if k not in ("file", "status", "worker", "seconds")}
    meta = job.meta
    run = {"submission": os.fspath(job.path), "seed": meta.get("seed"),
           "hyperparameters": meta.get("hyperparameters")}
    graded = Graded("evaluate", result, model=str(meta["model"]), run=run)
    record = records.make_record(graded, manifest=manifest, cache_dir=context.cache_dir, offline=context.offline,
                                 now=context.now)
    path = record_path(job.place, job.state)
    flagged, claimed, message, _ = check_claim(job.claim, record, primary_metric(manifest.task_named(job.place.task)),
                                               meta)
    record["hub"] = {"folder": job.place.folder, "state": job.state, "submissions_commit": context.sub_head,
                     "path": path, "meta_sha256": job.meta_sha256,
                     "paper": meta.get("paper") if isinstance(meta.get("paper"), str) else None,
                     "submitted": str(meta.get("submitted") or "")[:32],
                     "claim": None if job.claim is None else {"flagged": flagged, "claimed": claimed,
                                                              "message": message}}
    record = records.canonical(record)
    record[records.SHA_FIELD] = records.record_sha256(record)
    return _file(path, records.canonical_json(record) + b"\n")


def _board_task(board: tuple[str, str], folders: Mapping[Place, Any], context: _Context) -> Mapping[str, Any] | None:
    """The board's task as the newest known version of its dataset declares it, or ``None`` when neither the
    dataset nor the task is known."""
    versions = sorted({p.version for p in folders if (p.dataset, p.task) == board}
                      | {p.version for p in context.outcomes if (p.dataset, p.task) == board}, key=_version_key,
                      reverse=True)
    from tgbhub.errors import ManifestError

    for version in versions:
        try:
            return _manifest(context, f"{board[0]}@{version}").task_named(board[1])
        except (_Refused, _Skip, ManifestError):  # an unknown version or task: try an older one
            continue
    return None


def _board_entries(context: _Context, board: tuple[str, str], fresh: Mapping[str, RepoFile]) -> list[Entry]:
    """Every outcome of ``board``, this update's and earlier ones, as entries: what a row shows comes from the
    outcome the grader wrote when it graded, never from a ``meta.json`` as it is now."""
    paths = sorted({p for places in context.outcomes.values() for p in places.values()} | set(fresh))
    entries = []
    for path in paths:
        parsed = outcome_of(path)
        if parsed is None or (parsed[0].dataset, parsed[0].task) != board:
            continue
        data = fresh[path].data if path in fresh else context.out.read(context.head, path)  # type: ignore[arg-type]
        value = json.loads(data)  # type: ignore[arg-type]
        entries.append(entry_of(value, path, board))
    return entries


def _version_key(ref: str) -> tuple[int, ...]:
    version = ref.partition("@")[2] or ref
    return tuple(int(p) if p.isdigit() else 0 for p in version.split("."))


def _json_file(path: str, value: Mapping[str, Any]) -> RepoFile:
    return _file(path, (json.dumps(records.canonical(value), indent=1, sort_keys=True) + "\n").encode())


def _file(path: str, data: bytes) -> RepoFile:
    return RepoFile(path, hashlib.sha256(data).hexdigest(), len(data), data=data)


def _utc(now: datetime | None) -> str:
    return (now or datetime.now(timezone.utc)).astimezone(timezone.utc).isoformat(timespec="seconds") \
        .replace("+00:00", "Z")
