"""Leaderboards on a hub: the maintainer's ``tgbhub leaderboard update`` and the reader's
``tgbhub leaderboard NAME`` / ``tgbhub.leaderboard(name)``.

:func:`update` turns the submissions repo (:mod:`tgbhub.results.submissions`) into the results repo ``ORG/results``:

* every submission without an outcome yet is graded by the bundled evaluator (:func:`tgbhub.scale.evaluate`: here,
  or one task per file on a Dask cluster with ``scheduler=``); a claim is never read for a score;
* a graded one gets the grader's own record ``records/<family>/<name>/<task>/<id>.json``
  (:mod:`tgbhub.results.records`); a malformed one a rejection ``rejections/.../<id>.json`` carrying the evaluator's
  own message (so a second update grades nothing again);
* each touched board ``leaderboards/<family>/<name>/<task>.parquet`` is rebuilt from every outcome: seeds of one
  configuration aggregate into one row (:func:`tgbhub.results.records.aggregate`), rows rank by the task's primary
  metric in its direction (:mod:`tgbhub.evaluate.directions`), a claim whose metric differs from the re-grade is
  flagged (the re-graded value stands), rejected submissions follow; all in one commit.

:func:`leaderboard` downloads a board with ``huggingface_hub`` from the hub's endpoint and checks its bytes against
the hub's ETag (the LFS sha256) before returning the rows.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tgbhub import api, config
from tgbhub.errors import FetchError, IntegrityError, RecordError
from tgbhub.hub.layout import RepoFile
from tgbhub.hub.release import RepoSession, commit_files
from tgbhub.results import records
from tgbhub.results.submissions import (
    CLAIM_FILE,
    META_FILE,
    RESULTS_REPO,
    SUBMISSION_FILE,
    SUBMISSIONS_REPO,
    HubTarget,
    Submitted,
    folder_of,
    hub_target,
    parse_path,
    repo_for,
    submit_many,
)

#: a claimed metric within this relative distance of the re-grade is not flagged (last-bit differences of float
#: sums on another machine); anything further is a different number
CLAIM_RTOL = 1e-9

#: the columns of leaderboard.parquet, in order (the shared contract with the site)
COLUMNS = (("rank", "int32"), ("model", "string"), ("metric", "string"), ("mean", "float64"), ("std", "float64"),
           ("n", "int32"), ("seeds", "string"), ("verified", "bool"), ("flagged", "bool"), ("claimed", "float64"),
           ("status", "string"), ("message", "string"), ("date", "string"), ("record", "string"),
           ("submission", "string"), ("paper", "string"), ("dataset", "string"))


def record_path(dataset: str, task: str, sid: str) -> str:
    """Where the grader's record of a submission lives in the results repo."""
    return f"records/{dataset.partition('@')[0]}/{task}/{sid}.json"


def rejection_path(dataset: str, task: str, sid: str) -> str:
    """Where the rejection of a malformed submission lives in the results repo."""
    return f"rejections/{dataset.partition('@')[0]}/{task}/{sid}.json"


def board_path(dataset: str, task: str) -> str:
    """``leaderboards/<family>/<name>/<task>.parquet`` for dataset ``family/name[@version]``."""
    return f"leaderboards/{dataset.partition('@')[0]}/{task}.parquet"


@dataclass
class Entry:
    """One submission as the grader sees it: its meta, its claim (bytes, untrusted) and its outcome."""

    id: str
    board: tuple[str, str]
    meta: dict[str, Any]
    claim: bytes | None = None
    record: dict[str, Any] | None = None
    rejection: dict[str, Any] | None = None


@dataclass
class UpdateReport:
    """What :func:`update` did: ids graded (ranked), rejected and flagged, boards written, the results commit."""

    graded: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    flagged: list[str] = field(default_factory=list)
    boards: list[str] = field(default_factory=list)
    commit: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"graded": self.graded, "rejected": self.rejected, "flagged": self.flagged, "boards": self.boards,
                "commit": self.commit}

    def lines(self) -> list[str]:
        if not (self.graded or self.rejected):
            return ["nothing new to grade"]
        return [f"graded {len(self.graded)}, rejected {len(self.rejected)}, flagged {len(self.flagged)}",
                *(f"board: {path}" for path in self.boards), f"commit: {self.commit}"]


# --- the maintainer: grade and rank ------------------------------------------------------------------------------

def update(hub: str | HubTarget, *, org: str | None = None, endpoint: str | None = None, token: str | None = None,
           scheduler: str | None = None, retries: int | None = None,
           cache_dir: str | os.PathLike[str] | None = None, offline: bool | None = None,
           now: datetime | None = None) -> UpdateReport:
    """Grade every submission on ``hub`` that has no outcome yet and commit records, rejections and the boards they
    touch to ``ORG/results`` in one commit (none when there is nothing new). ``scheduler`` (with ``retries``)
    grades one submission per task on a Dask cluster (:func:`tgbhub.scale.evaluate`); the grader's cache
    (``cache_dir``) and temporary folder must then be on a filesystem every worker shares.

    Raises:
        PublishError: if the hub cannot be read or refuses the commit.
        DatasetNotFoundError, SourceUnavailableError: if a submission's dataset cannot be loaded for grading (then
            nothing is committed: a dataset that is not at hand is no fault of the submission).
        MissingExtraError, SchedulerUnavailableError: for ``scheduler`` without Dask, or one that does not answer.
    """
    from tgbhub import scale
    from tgbhub.evaluate import EVALUATOR_VERSION
    from tgbhub.evaluate.graded import Graded

    target = hub_target(hub, endpoint=endpoint, token=token)
    report = UpdateReport()
    with target.open_repo(repo_for(SUBMISSIONS_REPO, org), write=False) as subs, \
            tempfile.TemporaryDirectory(prefix="tgbhub-grade-") as scratch:
        if subs is None:
            return report
        _, sub_head = subs.refs()
        if sub_head is None:
            return report
        folders = _submission_folders(subs.tree(sub_head))
        with target.open_repo(repo_for(RESULTS_REPO, org), write=True) as out:
            assert out is not None  # write=True creates the repo
            _, head = out.refs()
            tree = out.tree(head) if head is not None else {}
            pending = {key: files for key, files in folders.items()
                       if record_path(key[0], key[1], key[2]) not in tree
                       and rejection_path(key[0], key[1], key[2]) not in tree}
            if not pending:
                return report
            written: list[RepoFile] = []
            fresh: dict[tuple[str, str, str], Entry] = {}
            groups: dict[tuple[str, str, str], list[tuple[Entry, Path]]] = {}
            for (dataset, task, sid), files in sorted(pending.items()):
                entry = _entry(subs, sub_head, dataset, task, sid, files)
                local = subs.download(sub_head, f"{folder_of(dataset, task, sid)}/{SUBMISSION_FILE}", Path(scratch))
                groups.setdefault((entry.meta["dataset"], task, entry.meta["split"]), []).append((entry, local))
                fresh[(dataset, task, sid)] = entry
            graded_at = _utc(now)
            for (ref, task, split), items in groups.items():
                api.load_dataset(ref, cache_dir=cache_dir, offline=offline)  # not at hand: raise, reject nobody
                # with the tasks its task documents declare (window-forecast), which the record names
                manifest = api.with_task_documents(api.manifest_of(ref, cache_dir=cache_dir, offline=offline))
                rows = scale.evaluate(ref, [path for _, path in items], scheduler=scheduler, cache_dir=cache_dir,
                                      offline=offline, task=task, split=split,
                                      retries=scale.DEFAULT_RETRIES if retries is None else retries)
                for (entry, path), row in zip(items, rows, strict=True):
                    dataset = entry.meta["dataset"]
                    if row["status"] != "ok":
                        entry.rejection = {"submission": entry.id, "dataset": dataset, "task": task, "split": split,
                                           "message": row.get("error", ""), "evaluator_version": EVALUATOR_VERSION,
                                           "graded": graded_at}
                        written.append(_json_file(rejection_path(dataset, task, entry.id), entry.rejection))
                        report.rejected.append(entry.id)
                        continue
                    result = {k: v for k, v in row.items() if k not in ("file", "status", "worker", "seconds")}
                    run = {"submission": os.fspath(path), "seed": entry.meta.get("seed"),
                           "hyperparameters": entry.meta.get("hyperparameters")}
                    graded = Graded("evaluate", result, model=str(entry.meta["model"]), run=run)
                    entry.record = records.make_record(graded, manifest=manifest, cache_dir=cache_dir,
                                                       offline=offline, now=now)
                    written.append(_file(record_path(dataset, task, entry.id),
                                         records.canonical_json(entry.record) + b"\n"))
                    report.graded.append(entry.id)
            for board in sorted({entry.board for entry in fresh.values()}):
                entries = [fresh.get(key) or _known(subs, sub_head, out, head, tree, key, files)
                           for key, files in sorted(folders.items()) if key[:2] == board]
                rows = board_rows([e for e in entries if e is not None], _task_of(entries, cache_dir, offline))
                new_ids = {key[2] for key in fresh if key[:2] == board}
                report.flagged += [s for row in rows if row["flagged"] for s in row["submission"].split(",")
                                   if s in new_ids]
                board_file = board_path(*board)
                written.append(_file(board_file, board_bytes(rows)))
                report.boards.append(board_file)
            report.commit = commit_files(out, written, f"tgbhub leaderboard update: graded {len(report.graded)}, "
                                         f"rejected {len(report.rejected)}, flagged {len(report.flagged)}")
    return report


def _submission_folders(tree: Mapping[str, tuple[str | None, str]]) -> dict[tuple[str, str, str], set[str]]:
    """``(family/name, task, id) -> file names`` of every complete submission (one with its file and meta)."""
    found: dict[tuple[str, str, str], set[str]] = {}
    for path in tree:
        key = parse_path(path)
        if key is not None:
            found.setdefault(key, set()).add(path.rsplit("/", 1)[1])
    return {key: names for key, names in found.items() if {SUBMISSION_FILE, META_FILE} <= names}


def _entry(subs: RepoSession, head: str, dataset: str, task: str, sid: str, files: set[str]) -> Entry:
    folder = folder_of(dataset, task, sid)
    meta = json.loads(subs.read(head, f"{folder}/{META_FILE}"))
    claim = subs.read(head, f"{folder}/{CLAIM_FILE}") if CLAIM_FILE in files else None
    return Entry(sid, (dataset, task), meta, claim)


def _known(subs: RepoSession, sub_head: str, out: RepoSession, head: str | None,
           tree: Mapping[str, tuple[str | None, str]], key: tuple[str, str, str], files: set[str]) -> Entry | None:
    """A submission graded by an earlier update, with its outcome read back from the results repo (``None`` if it
    has none yet: pushed after this update listed the pending ones)."""
    entry = _entry(subs, sub_head, *key, files)
    graded, rejected = record_path(*key), rejection_path(*key)
    if graded in tree and head is not None:
        entry.record = json.loads(out.read(head, graded))
        records.check_record(entry.record, f"the results repo's {graded}")
    elif rejected in tree and head is not None:
        entry.rejection = json.loads(out.read(head, rejected))
    else:
        return None
    return entry


def _task_of(entries: Sequence[Entry | None], cache_dir: str | os.PathLike[str] | None,
             offline: bool | None) -> Mapping[str, Any]:
    """The board's task as its newest dataset version declares it (its primary metric, and direction)."""
    present = [e for e in entries if e is not None]
    ref = max((e.meta["dataset"] for e in present), key=_version_key)
    manifest = api.with_task_documents(api.manifest_of(ref, cache_dir=cache_dir, offline=offline))
    return manifest.task_named(present[0].board[1])


def _version_key(ref: str) -> tuple[int, ...]:
    version = ref.partition("@")[2]
    return tuple(int(p) if p.isdigit() else 0 for p in version.split("."))


def _json_file(path: str, value: Mapping[str, Any]) -> RepoFile:
    return _file(path, (json.dumps(records.canonical(value), indent=1, sort_keys=True) + "\n").encode())


def _file(path: str, data: bytes) -> RepoFile:
    return RepoFile(path, hashlib.sha256(data).hexdigest(), len(data), data=data)


def _utc(now: datetime | None) -> str:
    return (now or datetime.now(timezone.utc)).astimezone(timezone.utc).isoformat(timespec="seconds") \
        .replace("+00:00", "Z")


# --- the board: flags, aggregation, ranking (pure) ----------------------------------------------------------------

def check_claim(claim: bytes | None, record: Mapping[str, Any], primary: str
                ) -> tuple[bool, float | None, str, list[str]]:
    """``(flagged, claimed value of the ``primary`` metric or None, message, metrics that differ)`` of a
    submitter's claim against the grader's record. A claim that is not an intact record, or graded another file, is
    flagged too."""
    if claim is None:
        return False, None, "", []
    try:
        found = json.loads(claim)
        records.check_record(found, "the claim")
    except (json.JSONDecodeError, UnicodeDecodeError, RecordError) as exc:
        return True, None, f"the claim is not an intact result record ({exc}); the re-graded values stand", []
    claimed_metrics = found.get("metrics") or {}
    if (found.get("submission") or {}).get("sha256") != (record.get("submission") or {}).get("sha256"):
        return True, _number(claimed_metrics.get(primary)), ("the claim graded another file than the one submitted; "
                                                             "the re-graded values stand"), []
    differ = [name for name in sorted(claimed_metrics) if name in record["metrics"]
              and not _close(claimed_metrics[name], record["metrics"][name])]
    text = "; ".join(f"claimed {name} {claimed_metrics[name]!r}, re-graded {record['metrics'][name]!r}"
                     for name in differ)
    message = f"{text} (the re-graded values stand)" if differ else ""
    return bool(differ), _number(claimed_metrics.get(primary)), message, differ


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _close(claimed: Any, regraded: Any) -> bool:
    a, b = _number(claimed), _number(regraded)
    if a is None or b is None:
        return claimed == regraded
    return a == b or math.isclose(a, b, rel_tol=CLAIM_RTOL, abs_tol=0.0)


def _config_key(record: Mapping[str, Any]) -> str:
    """What seeds of one configuration share (:data:`tgbhub.results.records.AGGREGATE_KEYS`), as one string."""
    values = []
    for dotted in records.AGGREGATE_KEYS:
        value: Any = record
        for part in dotted.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        values.append(value)
    return json.dumps(records.canonical(values), sort_keys=True)


def _groups(entries: Sequence[Entry]) -> list[list[Entry]]:
    """Graded entries as seed groups: one configuration, each seed once; an entry without a seed stands alone, and
    a seed submitted twice (two files) opens a second group rather than counting twice."""
    buckets: dict[str, list[list[Entry]]] = {}
    alone: list[list[Entry]] = []
    for entry in sorted(entries, key=lambda e: (str(e.meta.get("submitted")), e.id)):
        record = entry.record
        assert record is not None
        seed = record["model"]["seed"]
        if seed is None:
            alone.append([entry])
            continue
        groups = buckets.setdefault(_config_key(record), [])
        for group in groups:
            if all(other.record["model"]["seed"] != seed for other in group):  # type: ignore[index]
                group.append(entry)
                break
        else:
            groups.append([entry])
    seeded = [sorted(group, key=_seed_order) for groups in buckets.values() for group in groups]
    return seeded + alone


def _seed_order(entry: Entry) -> tuple[int, float, str]:
    seed = entry.record["model"]["seed"]  # type: ignore[index]
    return (0, float(seed), "") if isinstance(seed, (int, float)) else (1, 0.0, str(seed))


def board_rows(entries: Sequence[Entry], task: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows of one board (columns :data:`COLUMNS`): ranked rows by rank, then rejected rows by date.

    Raises:
        RecordError: if a stored record was edited (its ``record_sha256`` no longer matches).
    """
    from tgbhub.evaluate.directions import higher_is_better, primary_metric

    metric = primary_metric(task)
    upward = higher_is_better(metric, task)
    ranked: list[dict[str, Any]] = []
    rejected: list[dict[str, Any]] = []
    graded: list[Entry] = []
    for entry in entries:
        if entry.record is not None and metric not in entry.record["metrics"]:
            entry.rejection = {"message": f"the evaluator reported no {metric!r} (metrics "
                                          f"{sorted(entry.record['metrics'])}); the board ranks by it"}
            entry.record = None
        if entry.record is not None:
            graded.append(entry)
        elif entry.rejection is not None:
            rejected.append(_rejected_row(entry, metric))
    for group in _groups(graded):
        ranked.append(_ranked_row(group, metric))
    ranked.sort(key=lambda r: (-r["mean"] if upward else r["mean"], r["date"], r["model"], r["submission"]))
    for index, row in enumerate(ranked):
        previous = ranked[index - 1] if index else None
        row["rank"] = previous["rank"] if previous is not None and previous["mean"] == row["mean"] else index + 1
    rejected.sort(key=lambda r: (r["date"], r["submission"]))
    return ranked + rejected


def _ranked_row(group: list[Entry], metric: str) -> dict[str, Any]:
    seeds = [e.record for e in group]
    entry = records.aggregate(seeds)  # type: ignore[arg-type]
    checks = [check_claim(e.claim, e.record, metric) for e in group]  # type: ignore[arg-type]
    claimed = [c[1] for c in checks]
    first = group[0]
    return {"rank": None, "model": str(first.meta["model"]), "metric": metric,
            "mean": float(entry["metrics"][metric]["mean"]), "std": entry["metrics"][metric]["std"],
            "n": int(entry["n"]), "seeds": json.dumps([s for s in entry["seeds"] if s is not None]), "verified": True,
            "flagged": any(c[0] for c in checks),
            "claimed": (sum(claimed) / len(claimed)) if all(c is not None for c in claimed) else None,  # type: ignore
            "status": "ranked", "message": "; ".join(c[2] for c in checks if c[2]),
            "date": max(str(e.meta.get("submitted", ""))[:10] for e in group),
            # one link per row (the site's contract): the first seed's record; every seed's lies beside it, named
            # by its id in `submission`
            "record": record_path(first.meta["dataset"], first.board[1], first.id),
            "submission": ",".join(e.id for e in group),
            "paper": next((e.meta.get("paper") for e in group if e.meta.get("paper")), None),
            "dataset": str(first.meta["dataset"])}


def _rejected_row(entry: Entry, metric: str) -> dict[str, Any]:
    seed = entry.meta.get("seed")
    claimed = None
    if entry.claim is not None:
        try:
            claimed = _number((json.loads(entry.claim).get("metrics") or {}).get(metric))
        except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
            claimed = None
    return {"rank": None, "model": str(entry.meta.get("model")), "metric": metric, "mean": None, "std": None, "n": 1,
            "seeds": json.dumps([] if seed is None else [seed]), "verified": False, "flagged": False,
            "claimed": claimed, "status": "rejected", "message": str(entry.rejection["message"]),  # type: ignore
            "date": str(entry.meta.get("submitted", ""))[:10], "record": "", "submission": entry.id,
            "paper": entry.meta.get("paper"), "dataset": str(entry.meta.get("dataset"))}


def board_bytes(rows: Sequence[Mapping[str, Any]]) -> bytes:
    """``leaderboard.parquet``'s bytes: :data:`COLUMNS` in order, the same bytes for the same rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(name, getattr(pa, kind)() if kind != "bool" else pa.bool_()) for name, kind in COLUMNS])
    table = pa.Table.from_pylist([{name: row[name] for name, _ in COLUMNS} for row in rows], schema=schema)
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


# --- the reader ---------------------------------------------------------------------------------------------------

def leaderboard(name: str, task: str | None = None, *, endpoint: str | None = None, org: str | None = None,
                token: str | None = None, revision: str = "main",
                cache_dir: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
    """The board of dataset ``name`` (``family/name``; a version, if given, only picks the default task) and
    ``task`` (default: the dataset's default task), from the hub at ``endpoint`` (default: ``$TGBHUB_ENDPOINT``).
    One dict per row, columns :data:`COLUMNS`.

    The board is fetched the way tgbhub fetches every hub file (:mod:`tgbhub.sources.hf`): ``huggingface_hub``
    resolves it at ``revision`` (commit, size, ETag, CDN location, with its own auth headers), the bytes stream into a
    temporary file in ``cache_dir`` (default: the tgbhub cache), are checked against the ETag (the LFS sha256; a git
    blob id for a file stored outside LFS) and only then take their final name, ``leaderboards/<org>/<commit>/...``.
    A board already there for that commit is read without a download.

    >>> rows = leaderboard("t-grab/ce-64", "ranking", endpoint="http://127.0.0.1:8090")  # doctest: +SKIP

    Raises:
        InvalidNameError: if no hub is configured.
        DatasetNotFoundError, ManifestError: for an unknown dataset or task.
        FetchError: if the hub is unreachable or has no board for the dataset and task.
        IntegrityError: if the downloaded bytes do not match the hub's ETag (nothing is kept).
    """
    import pyarrow.parquet as pq

    from tgbhub.errors import InvalidNameError

    url = config.hub_endpoint(endpoint)
    if url is None:
        raise InvalidNameError("no hub to read the leaderboard from: pass endpoint= (--endpoint URL) or set "
                               "TGBHUB_ENDPOINT, e.g. the URL `tgbhub hub serve ROOT` prints")
    manifest = api.resolve(*_split_ref(name))
    chosen = str(manifest.task_named(task).get("name")) if task is None else task
    repo, path = repo_for(RESULTS_REPO, org), board_path(manifest.name, chosen)
    local = _fetch_verified(url, repo, path, revision, config.hub_token(token),
                            config.cache_root(cache_dir) / "leaderboards",
                            f"The board exists once the hub's maintainer ran `tgbhub leaderboard update --hub HUB` "
                            f"after a submission to {manifest.name} task {chosen}; check the name, --task and "
                            "--endpoint")
    return pq.read_table(local).to_pylist()


def _fetch_verified(url: str, repo: str, path: str, revision: str, token: str | None, folder: Path,
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


def _split_ref(name: str) -> tuple[str, str | None]:
    base, _, version = name.partition("@")
    return base, version or None


def table_lines(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """A board as text: rank, model, metric mean ± std (n seeds), mark, date, record."""
    shown = []
    for row in rows:
        if row["status"] == "ranked":
            spread = f" ± {row['std']:.4f}" if row["std"] is not None else ""
            value = f"{row['metric']} {row['mean']:.4f}{spread} ({row['n']} seed{'s' if row['n'] != 1 else ''})"
            mark = "FLAGGED" if row["flagged"] else "verified"
        else:
            value, mark = f"{row['metric']} -", "rejected"
        shown.append({"rank": row["rank"] if row["rank"] is not None else "-", "model": row["model"], "metric": value,
                      "mark": mark, "date": row["date"], "record": row["record"] or "-"})
    columns = ("rank", "model", "metric", "mark", "date", "record")
    widths = {c: max(len(c), *(len(str(r[c])) for r in shown)) if shown else len(c) for c in columns}
    out = ["  ".join(c.ljust(widths[c]) for c in columns).rstrip()]
    out += ["  ".join(str(r[c]).ljust(widths[c]) for c in columns).rstrip() for r in shown]
    out += [f"  {row['submission']}: {row['message']}" for row in rows if row["message"]]
    return out


# --- item 3: baselines on the board from day one -----------------------------------------------------------------

def seed_baselines(to: str | HubTarget, *, family: str = "t-grab", datasets: Sequence[str] | None = None,
                   models: Sequence[str] | None = None, org: str | None = None, endpoint: str | None = None,
                   token: str | None = None, cache_dir: str | os.PathLike[str] | None = None,
                   offline: bool | None = None) -> list[Submitted]:
    """Run every heuristic baseline of every task of ``family``'s datasets (or only ``datasets``, short or full
    names; only ``models``), record each run, and submit each with its record to ``to`` in one commit. Returns one
    :class:`~tgbhub.results.submissions.Submitted` per run; a run already submitted is ``exists``.

    Raises:
        DatasetNotFoundError: for an unknown dataset.
        PublishError: as :func:`tgbhub.results.submissions.submit_many`.
    """
    from tgbhub.baselines.registry import models_for
    from tgbhub.results.submissions import prepare

    target = hub_target(to, endpoint=endpoint, token=token)
    names = ([n if "/" in n else f"{family}/{n}" for n in datasets] if datasets
             else [n for n in api.registry().names(family)])
    prepared = []
    with tempfile.TemporaryDirectory(prefix="tgbhub-baselines-") as scratch:
        for name in names:
            manifest = api.with_task_documents(api.manifest_of(name, cache_dir=cache_dir, offline=offline))
            for task in manifest.tasks:
                for model in models_for(str(task.get("type"))):
                    if models is not None and model not in models:
                        continue
                    out = Path(scratch) / f"{manifest.short_name}-{task['name']}-{model}.parquet"
                    graded = api.run_baseline(model, f"{manifest.name}@{manifest.version}", task=str(task["name"]),
                                              out=out, cache_dir=cache_dir, offline=offline)
                    record = records.make_record(graded, manifest=manifest, cache_dir=cache_dir, offline=offline)
                    prepared.append(prepare(f"{manifest.name}@{manifest.version}", out, model=model, record=record,
                                            task=str(task["name"]), split=graded.result.get("split"),
                                            cache_dir=cache_dir, offline=offline))
        return submit_many(prepared, target, org=org, message=f"tgbhub leaderboard seed-baselines: {family}, "
                           f"{len(prepared)} runs") if prepared else []


#: the result record a trained run keeps beside its files (``tgbhub train --out DIR --record DIR/record.json``)
RUN_RECORD = "record.json"


def seed_runs(to: str | HubTarget, runs: Sequence[str | os.PathLike[str]], *, org: str | None = None,
              endpoint: str | None = None, token: str | None = None,
              cache_dir: str | os.PathLike[str] | None = None, offline: bool | None = None) -> list[Submitted]:
    """Submit trained runs to ``to`` in one commit: each folder of ``runs`` is a ``tgbhub train`` output holding its
    submission and its result record (``record.json``: ``tgbhub train ... --out DIR --record DIR/record.json``).
    The record's model, seed, hyper-parameters, task and split go with the submission as its claim; the board's
    update re-grades it like any other, and seeds of one model and configuration join one row.

    Raises:
        RecordError: if a folder has no ``record.json`` (saying how to write one), or it is not an intact record.
        InvalidNameError: if the submission the record names is not in the folder.
        PublishError: as :func:`tgbhub.results.submissions.submit_many`.
    """
    from tgbhub.results.submissions import prepare

    target = hub_target(to, endpoint=endpoint, token=token)
    prepared = []
    for run in runs:
        folder = Path(run)
        path = folder / RUN_RECORD
        if not path.is_file():
            raise RecordError(f"{folder} has no {RUN_RECORD}: write the run's result record with `tgbhub train ... "
                              f"--out {folder} --record {path}` (or `tgbhub.results.records.record(graded, path)`)")
        record = records.read_record(path)
        submission = folder / str((record.get("submission") or {}).get("file") or "submission.parquet")
        prepared.append(prepare(str(record["dataset"]["ref"]), submission, model=str(record["model"]["name"]),
                                record=record, task=record["task"]["name"], split=record.get("split"),
                                cache_dir=cache_dir, offline=offline))
    return submit_many(prepared, target, org=org, message=f"tgbhub leaderboard seed-baselines: {len(prepared)} "
                       "trained runs") if prepared else []
