"""Result records anyone can re-check: what a graded run was computed on, by what, and what it scored.

A record is one JSON object written in a canonical form (sorted keys, no insignificant whitespace, floats as Python's
``repr``, which round-trips exactly), carrying ``record_sha256``: the sha256 of that canonical form without the field
itself. Editing any value after writing changes the hash, which :func:`read_record` refuses.

* :func:`make_record` / :func:`write_record` (``--record PATH`` on ``tgbhub evaluate``, ``baseline``, ``train``,
  ``counterfactual``): the dataset ``name@version`` and the content digests of its files (and of the task document's
  artifacts, for a task versioned on its own), the task and its version, :data:`~tgbhub.evaluate.EVALUATOR_VERSION`,
  the split, the submission's sha256, the metrics, the model, its hyper-parameters, seed, device, epochs and training
  time where the run knows them, the software and hardware, and the time (UTC).
* :func:`verify` (``tgbhub verify-result RECORD SUBMISSION``): the record's own hash, the submission's sha256, and a
  re-grade of the submission by the bundled evaluator on the same dataset version, task and split, metric by metric.
* :func:`aggregate`: several seeds of one configuration as one entry (mean, sample standard deviation, n, seeds).

An application on top of :mod:`tgbhub.api` (it re-grades through it), like :mod:`tgbhub.training`.
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from hashlib import sha256
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from tgbhub import hashing
from tgbhub.errors import InvalidNameError, RecordError

if TYPE_CHECKING:
    from tgbhub.evaluate.graded import Graded
    from tgbhub.manifest import FileEntry, Manifest
    from tgbhub.tasks.documents import TaskDocument

#: the ``format`` of every record this module writes; a reader refuses other formats rather than misread them
RECORD_FORMAT = "tgbhub-result-record/1"
#: the field holding the record's own hash (left out of the bytes it hashes)
SHA_FIELD = "record_sha256"
#: what must agree for records to be aggregated as seeds of one configuration
AGGREGATE_KEYS = ("dataset.ref", "task.name", "task.version", "split", "model.name", "model.hyperparameters",
                  "evaluator.version")


def canonical(value: Any) -> Any:
    """``value`` as plain JSON data: mappings as dicts, sequences as lists, numpy scalars as Python numbers, and
    non-finite floats as the strings ``"nan"``, ``"inf"``, ``"-inf"`` (JSON has no such numbers, and ``NaN`` literals
    would make the bytes depend on the parser).

    Raises:
        RecordError: for a value JSON cannot hold (the message names its type).
    """
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else ("nan" if math.isnan(value) else ("inf" if value > 0 else "-inf"))
    if isinstance(value, Mapping):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # a numpy scalar; numpy itself need not be imported here
        return canonical(value.item())
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise RecordError(f"a result record cannot hold a {type(value).__name__} ({value!r}); pass plain numbers, "
                      "strings, lists or mappings")


def canonical_json(record: Mapping[str, Any]) -> bytes:
    """The canonical bytes of ``record``: sorted keys, ``,``/``:`` separators, UTF-8, floats as ``repr``.

    Raises:
        RecordError: as :func:`canonical`.
    """
    return json.dumps(canonical(record), sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def record_sha256(record: Mapping[str, Any]) -> str:
    """The sha256 of ``record``'s canonical form without its ``record_sha256`` field."""
    return sha256(canonical_json({k: v for k, v in record.items() if k != SHA_FIELD})).hexdigest()


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file's bytes (:func:`tgbhub.hashing.file_sha256`).

    Raises:
        RecordError: if the file cannot be read (the message names it).
    """
    try:
        return hashing.file_sha256(path)
    except OSError as exc:
        raise RecordError(f"cannot read {os.fspath(path)!r} ({exc.strerror or exc}); pass the path of the "
                          "submission file the run wrote") from None


def _cpu_model() -> str:
    """The CPU's model name (Linux: /proc/cpuinfo), else what ``platform`` knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def environment() -> dict[str, Any]:
    """The software and hardware a run was graded on. torch is reported only when the run already imported it:
    importing it here would cost seconds for runs (heuristic baselines, files) that never used it."""
    import numpy

    from tgbhub.version import __version__

    env: dict[str, Any] = {"tgbhub": __version__, "python": platform.python_version(),
                           "python_implementation": platform.python_implementation(), "numpy": numpy.__version__,
                           "platform": platform.platform(), "machine": platform.machine(), "cpu": _cpu_model(),
                           "cpu_count": os.cpu_count()}
    torch = sys.modules.get("torch")
    if torch is not None:
        env["torch"] = str(getattr(torch, "__version__", "unknown"))
        cuda = getattr(torch, "cuda", None)
        if cuda is not None and cuda.is_available():
            env["gpu"] = [cuda.get_device_name(i) for i in range(cuda.device_count())]
            env["cuda"] = getattr(torch.version, "cuda", None)
    return env


def _task_block(manifest: Manifest, task_name: str | None, documents: Iterable[TaskDocument]) -> dict[str, Any]:
    """The graded task: name, type, version (the task document's, else one the manifest task declares) and, for a
    task versioned on its own, its document's reference and artifact digests."""
    task = manifest.task_named(task_name) if task_name is not None else manifest.task
    block: dict[str, Any] = {"name": task.get("name"), "type": task.get("type"), "version": task.get("version"),
                             "document": None}
    for document in documents:
        if document.task_name == task.get("name"):
            block["version"] = document.version
            block["document"] = {"reference": document.reference, "files": _files(document.artifacts.files)}
    return block


class FileHashes(TypedDict):
    """A file's hashes as a record lists them: its bytes' sha256, its columns' logical digest, its size."""

    sha256: str
    digest: str | None
    size: int


def _files(entries: Iterable[FileEntry]) -> dict[str, FileHashes]:
    return {f.name: {"sha256": f.sha256, "digest": f.digest, "size": f.size} for f in entries}


def _submission_path(run: Mapping[str, Any]) -> str | None:
    files = run.get("files") or {}
    found = run.get("submission") or files.get("submission")
    return os.fspath(found) if found else None


def _model_block(graded: Graded) -> dict[str, Any]:
    """What the run knows of the model; ``None`` where it does not (a submission file knows no model)."""
    run = graded.run
    hyper = run.get("hyperparameters")
    if hyper is None and graded.kind in ("baseline", "counterfactual") and graded.model:
        from tgbhub.baselines.registry import split_options  # a heuristic's options are its hyper-parameters

        try:
            hyper = split_options(graded.model)[1] or None
        except InvalidNameError:  # a predictions file's label is not a baseline name: it has no options to read
            hyper = None
    return {"name": graded.model, "hyperparameters": hyper, "seed": run.get("seed"), "device": run.get("device"),
            "epochs": run.get("epochs_run"), "best_epoch": run.get("best_epoch"),
            "train_seconds": run.get("train_seconds")}


def make_record(graded: Graded, *, manifest: Manifest | None = None, cache_dir: str | os.PathLike[str] | None = None,
                offline: bool | None = None, now: datetime | None = None) -> dict[str, Any]:
    """The result record of ``graded`` (a :class:`~tgbhub.evaluate.graded.Graded`), with its ``record_sha256``.

    ``manifest`` is the graded dataset version's (default: looked up by the result's ``name@version``, derived into
    ``cache_dir`` for a variant the run already built). ``now`` fixes the time (tests).

    Raises:
        DatasetNotFoundError, VersionNotFoundError: if the graded dataset version cannot be found.
        RecordError: if the submission the run names cannot be read, or a value cannot be written as JSON.
    """
    from tgbhub import api
    from tgbhub.evaluate import EVALUATOR_VERSION

    result = graded.result
    ref = f"{graded.dataset}@{graded.version}"
    if manifest is None:
        manifest = api.manifest_of(graded.dataset, graded.version, cache_dir=cache_dir, offline=offline)
    submission = _submission_path(graded.run)
    teacher = (graded.run.get("files") or {}).get("teacher_forced")
    record: dict[str, Any] = {
        "format": RECORD_FORMAT, "kind": graded.kind,
        "dataset": {"ref": ref, "name": graded.dataset, "version": graded.version, "files": _files(manifest.files),
                    "graded_digests": dict(result.get("digests") or {}),
                    # which hash is which: a file's sha256 pins its bytes, a digest its column values
                    "hash_kinds": {"sha256": api.SHA256_KIND, "digest": api.DIGEST_KIND,
                                   "graded_digests": api.DIGEST_KIND}},
        "task": _task_block(manifest, result.get("task"), api.task_documents(manifest)),
        "evaluator": {"version": EVALUATOR_VERSION}, "split": result.get("split"),
        "metrics": dict(graded.metrics),
        "submission": None if submission is None else {"file": Path(submission).name,
                                                        "sha256": file_sha256(submission)},
        "teacher_forced": None if not teacher else {"file": Path(teacher).name, "sha256": file_sha256(teacher)},
        "model": _model_block(graded),
        "condition": {"variant": graded.run["condition"], "run": graded.run.get("run")}
        if "condition" in graded.run else None,
        "environment": environment(),
        "created": (now or datetime.now(timezone.utc)).astimezone(timezone.utc).isoformat(timespec="seconds")
        .replace("+00:00", "Z"),
    }
    record = canonical(record)
    record[SHA_FIELD] = record_sha256(record)
    return record


def write_record(record: Mapping[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write ``record`` in its canonical form (plus a final newline) to ``path``, atomically; return the path.

    Raises:
        RecordError: if ``record`` has no valid ``record_sha256`` (write what :func:`make_record` returned).
        CacheWriteError: via the CLI, for a folder that cannot be written.
    """
    from tgbhub.cache import write_text_atomic

    check_record(record, str(path))
    target = Path(path)
    write_text_atomic(target, canonical_json(record).decode("utf-8") + "\n")
    return target


def record(graded: Graded, path: str | os.PathLike[str] | None = None, **options: Any) -> dict[str, Any]:
    """:func:`make_record` of ``graded``, written to ``path`` when given (``options``: as :func:`make_record`)."""
    made = make_record(graded, **options)
    if path is not None:
        write_record(made, path)
    return made


def record_each(graded: Iterable[Graded], folder: str | os.PathLike[str], **options: Any) -> list[Path]:
    """One record per graded run into ``folder`` (several graded conditions of one check, such as the
    counterfactual check's), each named ``MODEL-CONDITION-rRUN.json``; returns the paths written.

    Args:
        graded: graded results whose ``run`` names their ``condition`` and ``run``.
        folder: where the records go (created if missing).
        options: as :func:`make_record`.

    Returns:
        The record files, in the order of ``graded``.
    """
    written = []
    for item in graded:
        run = item.run
        name = f"{Path(str(item.model)).stem}-{run['condition']}-r{run.get('run')}.json".replace("/", "_")
        record(item, Path(folder) / name, **options)
        written.append(Path(folder) / name)
    return written


def check_record(record: Mapping[str, Any], where: str = "the record") -> None:
    """Raises RecordError unless ``record`` is a record of :data:`RECORD_FORMAT` whose ``record_sha256`` matches
    its content (an edited value, a removed field or a re-indented file that changed a value all show here)."""
    if not isinstance(record, Mapping) or record.get("format") != RECORD_FORMAT:
        found = record.get("format") if isinstance(record, Mapping) else type(record).__name__
        raise RecordError(f"{where} is not a tgbhub result record (format {found!r}, expected {RECORD_FORMAT!r}); "
                          "pass the file --record wrote")
    stored = record.get(SHA_FIELD)
    actual = record_sha256(record)
    if stored != actual:
        raise RecordError(f"{where} was changed after it was written: its {SHA_FIELD} is {stored!r} but its content "
                          f"hashes to {actual!r}; use the record as the run wrote it (re-run with --record PATH to "
                          "make a new one)")


def read_record(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The record at ``path``, checked by :func:`check_record`.

    Raises:
        RecordError: if the file is missing, not JSON, not a record, or was edited after it was written.
    """
    where = f"record {os.fspath(path)!r}"
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise RecordError(f"{where} cannot be read ({exc.strerror or exc}); pass the file --record PATH wrote") \
            from None
    if data.startswith(b"PAR1"):  # Parquet's magic bytes: the submission, passed where its record belongs
        raise RecordError(f"{where} is a Parquet file, not a result record (JSON): pass the record first and the "
                          "submission second, e.g. tgbhub verify-result record.json submission.parquet")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(f"{where} is not text (byte {exc.start} is not UTF-8), so not a result record; pass the "
                          "JSON file --record PATH wrote") from None
    try:
        loaded = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(f"{where} is not JSON ({exc.msg} at line {exc.lineno}); pass the file --record PATH "
                          "wrote, unedited") from None
    check_record(loaded, where)
    return loaded


class CheckRow(TypedDict, total=False):
    """One check of :class:`Verification`: the values are JSON, as the record holds them; ``message`` says in words
    what a mismatch means, where a bare pair of values would not."""

    check: str
    status: Literal["match", "mismatch"]
    recorded: Any
    now: Any
    message: str


#: what a record's identity is, besides what a re-grade checks: the fields a board shows and a reader relies on
IDENTITY_FIELDS = "model name, hyper-parameters, seed, environment and date"


@dataclass(frozen=True)
class Verification:
    """What :func:`verify` found: one row per check (``check``, ``status`` ``match``/``mismatch``, ``recorded``,
    ``now``: the value found or re-graded now), and notes that explain without failing (e.g. a newer evaluator
    version)."""

    record: str
    submission: str
    checks: list[CheckRow]
    notes: list[str] = field(default_factory=list)
    #: whether the record's identity (:data:`IDENTITY_FIELDS`) was checked against the hub's committed copy
    identity_checked: bool = False

    @property
    def ok(self) -> bool:
        return all(row["status"] == "match" for row in self.checks)

    @property
    def mismatched(self) -> list[str]:
        return [row["check"] for row in self.checks if row["status"] != "match"]

    def to_json(self) -> dict[str, Any]:
        return {"record": self.record, "submission": self.submission, "ok": self.ok, "checks": self.checks,
                "notes": self.notes, "identity_checked": self.identity_checked}

    def lines(self) -> list[str]:
        """One line per check, then the notes and the verdict; every value escaped for the terminal (a record's
        model name is whatever its writer typed)."""
        from tgbhub.results.display import terminal_safe as safe

        out = [f"{row['status']:>8}  {safe(row['check'])}: {safe(row['now'])}" if row["status"] == "match" else
               f"{row['status']:>8}  {safe(row['check'])}: {safe(row['message'])}" if row.get("message") else
               f"{row['status']:>8}  {safe(row['check'])}: recorded {safe(row['recorded'])}, now {safe(row['now'])}"
               for row in self.checks]
        out += [f"{'note':>8}  {safe(note)}" for note in self.notes]
        if not self.ok:
            verdict = f"MISMATCH: {', '.join(self.mismatched)}"
        elif self.identity_checked:
            verdict = "all checks match, the record's identity included (the hub's committed copy)"
        else:
            verdict = (f"the scores and the submission match; the record's {IDENTITY_FIELDS} are NOT checked "
                       "(see the note)")
        return [*out, f"{'result':>8}  {verdict}"]


def _row(check: str, recorded: Any, now: Any, equal: bool, message: str | None = None) -> CheckRow:
    row: CheckRow = {"check": check, "status": "match" if equal else "mismatch", "recorded": recorded, "now": now}
    if message and not equal:
        row["message"] = message
    return row


def _same(recorded: Any, regraded: Any, rtol: float) -> bool:
    """Exact equality by default: re-grading the same bytes with the same evaluator repeats every operation, so any
    difference means a different file, dataset or evaluator. ``rtol`` allows for last-bit differences of float
    reductions on another machine or numpy build (vectorised sums may group additions differently)."""
    if recorded == regraded:
        return True
    if rtol > 0 and isinstance(recorded, float) and isinstance(regraded, float):
        return math.isclose(recorded, regraded, rel_tol=rtol, abs_tol=0.0)
    return False


def verify(record_path: str | os.PathLike[str], submission: str | os.PathLike[str], *,
           cache_dir: str | os.PathLike[str] | None = None, offline: bool | None = None,
           rtol: float = 0.0, endpoint: str | None = None, org: str | None = None,
           token: str | None = None) -> Verification:
    """Re-check a record against a submission: the record's own hash, the submission's sha256, the graded data's
    digests, and each metric of a re-grade by the bundled evaluator on the record's dataset version, task and split.

    ``record_sha256`` proves only that nobody edited the record without re-hashing it: anyone can recompute it. What a
    re-grade cannot check (:data:`IDENTITY_FIELDS`) is checked for a hub grader's record (one with a ``hub`` block)
    against the copy the hub committed: its place (the folder names the record's dataset version, task and file, the
    split is the task's report split) and the hub's copy at the record's path in ``ORG/results``, fetched from
    ``endpoint`` (default ``$TGBHUB_ENDPOINT``, unless ``offline``). Without a hub, the verdict says those fields are
    not checked.

    Raises:
        RecordError: for a missing, malformed or edited record, a record made without a submission file, or a
            submission that cannot be read.
        DatasetNotFoundError, SourceUnavailableError, SubmissionError: as :func:`tgbhub.api.grade` (a file that is
            not the record's and that its task cannot grade is a mismatch and a note instead).
        FetchError, IntegrityError: if the hub at ``endpoint`` cannot deliver its copy of the record.
    """
    from tgbhub import api
    from tgbhub.errors import SubmissionError
    from tgbhub.evaluate import EVALUATOR_VERSION

    rec = read_record(record_path)
    if rec.get("submission") is None:
        raise RecordError(f"record {os.fspath(record_path)!r} was made without a submission file, so there is nothing "
                          "to re-grade; re-run with --out FILE (baseline) or grade a file (evaluate) and --record")
    if not Path(submission).is_file():
        raise RecordError(f"submission {os.fspath(submission)!r} does not exist; pass the Parquet file the record's "
                          f"run graded ({rec['submission']['file']})")
    recorded, actual = rec["submission"]["sha256"], file_sha256(submission)
    checks = [_row("submission sha256", recorded, actual, recorded == actual,
                   f"its sha256 {actual} differs from the record's {recorded}: this is not the file the record graded; "
                   "pass that file")]
    notes = []
    if rec["evaluator"]["version"] != EVALUATOR_VERSION:
        notes.append(f"the record was graded by evaluator {rec['evaluator']['version']}, this tgbhub's is "
                     f"{EVALUATOR_VERSION}: a metric that differs may have changed with the evaluator")
    if rec.get("teacher_forced"):
        notes.append("the record's run also graded a teacher-forced file; it is not re-graded here, so metrics that "
                     "depend on it (test MSE, validity screen) are compared only if the re-grade reports them")
    identity = _check_identity(rec, checks, notes, cache_dir=cache_dir, offline=offline, endpoint=endpoint, org=org,
                               token=token)
    try:
        graded = api.grade(rec["dataset"]["ref"], submission, task=rec["task"]["name"], split=rec["split"],
                           cache_dir=cache_dir, offline=offline)
    except SubmissionError:
        if recorded == actual:
            raise
        # another file, which the record's task cannot grade: its sha256 is the answer, not the task's column advice
        notes.append(f"not re-graded: the file is not the one the record graded, and it is no submission to task "
                     f"{rec['task']['name']!r}")
        return Verification(os.fspath(record_path), os.fspath(submission), checks, notes, identity)
    regraded = canonical(graded.to_json())
    checks.append(_row("dataset digests", rec["dataset"]["graded_digests"], regraded.get("digests") or {},
                       rec["dataset"]["graded_digests"] == (regraded.get("digests") or {})))
    for name in sorted({*rec["metrics"], *regraded["metrics"]}):
        old, new = rec["metrics"].get(name), regraded["metrics"].get(name)
        checks.append(_row(f"metric {name}", old, new, _same(old, new, rtol)))
    return Verification(os.fspath(record_path), os.fspath(submission), checks, notes, identity)


def _check_identity(rec: Mapping[str, Any], checks: list[CheckRow], notes: list[str], *,
                    cache_dir: str | os.PathLike[str] | None, offline: bool | None, endpoint: str | None,
                    org: str | None, token: str | None) -> bool:
    """Append the checks of ``rec``'s identity: its place (for a hub grader's record) and the hub's committed copy
    (when a hub is configured); return whether the identity was checked against that copy."""
    from tgbhub import api, config
    from tgbhub.tasks.declared import choose_split

    hub = rec.get("hub")
    if not isinstance(hub, Mapping):
        notes.append(f"the record was written by its run, not by a hub's grader: its {IDENTITY_FIELDS} are its "
                     f"writer's word, covered only by {SHA_FIELD}, which anyone can recompute")
        return False
    from tgbhub.results.outcomes import record_path
    from tgbhub.results.submissions import ID_DIGITS, Place

    dataset, task, sha = rec["dataset"], rec["task"]["name"], rec["submission"]["sha256"]
    place = Place(dataset["name"], dataset["version"], task, sha[:ID_DIGITS])
    folder = place.folder
    checks.append(_row("place", hub.get("folder"), folder, hub.get("folder") == folder,
                       f"the record names the folder {hub.get('folder')!r}, but its dataset, task and submission "
                       f"belong in {folder!r}: the record was edited"))
    path = record_path(place, str(hub.get("state")))
    checks.append(_row("record path", hub.get("path"), path, hub.get("path") == path,
                       f"the record says it lies at {hub.get('path')!r}, but its folder and state put it at {path!r}"))
    manifest = api.manifest_of(dataset["ref"], cache_dir=cache_dir, offline=offline)
    report = choose_split(manifest, manifest.task_named(task), None)
    checks.append(_row("split", rec["split"], report, rec["split"] == report,
                       f"the record names split {rec['split']!r}, but the board of task {task!r} grades {report!r}"))
    # offline, only a hub named here is asked (the environment's is a socket the caller did not ask for)
    url = config.hub_endpoint(endpoint) if endpoint is not None or not config.offline_mode(offline) else None
    if url is None:
        notes.append(f"no hub to compare with: the record's {IDENTITY_FIELDS} are covered only by {SHA_FIELD}, which "
                     "anyone can recompute; pass the hub's endpoint (endpoint=, $TGBHUB_ENDPOINT) to compare the "
                     "record with the copy the hub committed")
        return False
    from tgbhub.errors import FetchError
    from tgbhub.results.outcomes import fetch_verified
    from tgbhub.results.submissions import RESULTS_REPO, repo_for

    repo = repo_for(RESULTS_REPO, org)
    try:
        local = fetch_verified(url, repo, str(hub.get("path")), "main", config.hub_token(token),
                                config.cache_root(cache_dir) / "leaderboards",
                                "the hub holds no record at that path: the record is not one its grader committed")
    except FetchError as exc:
        checks.append(_row("record (hub's copy)", rec[SHA_FIELD], None, False,
                           f"the hub at {url} has no copy of this record ({exc})"))
        return True
    try:
        copy = json.loads(local.read_bytes())
    except (ValueError, UnicodeDecodeError):
        copy = {}
    theirs = copy.get(SHA_FIELD) if isinstance(copy, Mapping) else None
    differ = sorted(key for key in {*rec, *(copy if isinstance(copy, Mapping) else {})}
                    if key != SHA_FIELD and canonical(rec.get(key)) != canonical(copy.get(key)))
    checks.append(_row("record (hub's copy)", rec[SHA_FIELD], theirs, theirs == rec[SHA_FIELD],
                       f"the hub at {url} committed {hub.get('path')} with {SHA_FIELD} {theirs}, this record has "
                       f"{rec[SHA_FIELD]}: it differs in {', '.join(differ) or 'its bytes'}, so it is not the "
                       "grader's record"))
    return True


def _field(record: Mapping[str, Any], dotted: str) -> Any:
    value: Any = record
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def aggregate(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Several seeds of one configuration as one entry: per metric the mean, the *sample* standard deviation
    (``ddof=1``, the usual mean ± std over seeds; ``None`` for a single record) and the values, plus ``n`` and the
    seeds (a counterfactual condition's run index stands in for a seed).

    Raises:
        RecordError: for an edited record, no records, records whose dataset version, task (and task version), split,
            model, hyper-parameters or evaluator version differ (naming the field and both values), a seed given
            twice, or metrics that are not reported by every record.
    """
    rows = list(records)
    if not rows:
        raise RecordError("no records to aggregate; pass the records of one configuration's seeds")
    for index, row in enumerate(rows):
        check_record(row, f"record {index}")
    first = rows[0]
    for index, row in enumerate(rows[1:], start=1):
        for key in AGGREGATE_KEYS:
            if _field(row, key) != _field(first, key):
                raise RecordError(f"record {index} has {key} {_field(row, key)!r} but record 0 has "
                                  f"{_field(first, key)!r}; aggregate only the seeds of one configuration (same "
                                  "dataset version, task, split, model and evaluator)")
    seeds = [_field(r, "model.seed") if _field(r, "model.seed") is not None else _field(r, "condition.run")
             for r in rows]
    repeated = sorted({s for s in seeds if s is not None and seeds.count(s) > 1}, key=str)
    if repeated:
        raise RecordError(f"seed(s) {repeated} appear in more than one record; each seed counts once: drop the "
                          "duplicates")
    names = set(first["metrics"])
    for index, row in enumerate(rows):
        if set(row["metrics"]) != names:
            raise RecordError(f"record {index} reports metrics {sorted(row['metrics'])}, record 0 "
                              f"{sorted(names)}; aggregate records graded by the same task")
    metrics = {}
    for name in sorted(names):
        values = [float(r["metrics"][name]) for r in rows]
        metrics[name] = {"mean": statistics.fmean(values),
                         "std": statistics.stdev(values) if len(values) > 1 else None, "values": values}
    return {"dataset": first["dataset"]["ref"], "task": first["task"]["name"], "task_version": first["task"]["version"],
            "split": first["split"], "model": first["model"]["name"],
            "hyperparameters": first["model"]["hyperparameters"], "evaluator_version": first["evaluator"]["version"],
            "n": len(rows), "seeds": seeds, "std": "sample (ddof=1)", "metrics": metrics,
            "records": [r[SHA_FIELD] for r in rows]}
