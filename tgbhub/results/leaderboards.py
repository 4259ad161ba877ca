"""Leaderboards on a hub for their readers: ``tgbhub leaderboard show NAME`` / ``tgbhub.leaderboard(name)`` downloads
a board with ``huggingface_hub`` from the hub's endpoint and checks its bytes against the hub's ETag before returning
the rows; ``tgbhub leaderboard seed`` puts the heuristic baselines, trained runs and the trainers' catalogued
reproductions (:mod:`tgbhub.results.reproductions`) on the boards from day one.

The maintainer's side, grading and ranking, is :mod:`tgbhub.results.grader` and :mod:`tgbhub.results.ranking`.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tgbhub import api, config
from tgbhub.errors import RecordError
from tgbhub.results import records
from tgbhub.results.display import terminal_safe
from tgbhub.results.outcomes import board_path, fetch_verified
from tgbhub.results.reproductions import Reproduction
from tgbhub.results.submissions import (
    RESULTS_REPO,
    HubTarget,
    Submission,
    Submitted,
    hub_target,
    repo_for,
    submit_many,
)


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
    local = fetch_verified(url, repo, path, revision, config.hub_token(token),
                            config.cache_root(cache_dir) / "leaderboards",
                            f"The board exists once the hub's maintainer ran `tgbhub leaderboard update --hub HUB` "
                            f"after a submission to {manifest.name} task {chosen}; check the name, --task and "
                            "--endpoint")
    return pq.read_table(local).to_pylist()


def _split_ref(name: str) -> tuple[str, str | None]:
    base, _, version = name.partition("@")
    return base, version or None


def table_lines(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """A board as text: rank, model, metric mean ± std (n seeds), mark, date, record; every value escaped for the
    terminal (:func:`terminal_safe`), as a submitter wrote the model name, paper and message."""
    shown = []
    for row in rows:
        if row["status"] == "ranked":
            spread = f" ± {row['std']:.4f}" if row["std"] is not None else ""
            value = f"{row['metric']} {row['mean']:.4f}{spread} ({row['n']} seed{'s' if row['n'] != 1 else ''})"
            mark = "FLAGGED" if row["flagged"] else "verified"
        else:
            value, mark = f"{row['metric']} -", "rejected"
        shown.append({key: terminal_safe(text) for key, text in (
            ("rank", row["rank"] if row["rank"] is not None else "-"), ("model", row["model"]), ("metric", value),
            ("mark", mark), ("date", row["date"]), ("record", row["record"] or "-"))})
    columns = ("rank", "model", "metric", "mark", "date", "record")
    widths = {c: max(len(c), *(len(str(r[c])) for r in shown)) if shown else len(c) for c in columns}
    out = ["  ".join(c.ljust(widths[c]) for c in columns).rstrip()]
    out += ["  ".join(str(r[c]).ljust(widths[c]) for c in columns).rstrip() for r in shown]
    out += [f"  {terminal_safe(row['submission'])}: {terminal_safe(row['message'])}" for row in rows if row["message"]]
    return out


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
    The record's model, seed, hyper-parameters, task and split go with the submission as its claim (and, for a
    run :func:`seed_trained` wrote, its ``reproduction`` block's paper as the row's paper); the board's update
    re-grades it like any other, and seeds of one model and configuration join one row.

    Raises:
        RecordError: if a folder has no ``record.json`` (saying how to write one), or it is not an intact record.
        InvalidNameError: if the submission the record names is not in the folder.
        PublishError: as :func:`tgbhub.results.submissions.submit_many`.
    """
    target = hub_target(to, endpoint=endpoint, token=token)
    prepared = [_prepare_run(Path(run), cache_dir=cache_dir, offline=offline) for run in runs]
    return submit_many(prepared, target, org=org, message=f"tgbhub leaderboard seed-baselines: {len(prepared)} "
                       "trained runs") if prepared else []


def _prepare_run(folder: Path, *, cache_dir: str | os.PathLike[str] | None,
                 offline: bool | None) -> Submission:
    """A trained run's folder as a submission: its record is the claim, and a reproduction's record names the
    paper its row cites (:func:`seed_trained`).

    Raises:
        RecordError: if the folder has no intact ``record.json``.
        InvalidNameError: if the submission the record names is not in the folder.
    """
    from tgbhub.results.submissions import prepare

    path = folder / RUN_RECORD
    if not path.is_file():
        raise RecordError(f"{folder} has no {RUN_RECORD}: write the run's result record with `tgbhub train ... "
                          f"--out {folder} --record {path}` (or `tgbhub.results.records.record(graded, path)`)")
    record = records.read_record(path)
    submission = folder / str((record.get("submission") or {}).get("file") or "submission.parquet")
    paper = (record.get("reproduction") or {}).get("paper")
    return prepare(str(record["dataset"]["ref"]), submission, model=str(record["model"]["name"]), record=record,
                   task=record["task"]["name"], split=record.get("split"),
                   paper=paper if isinstance(paper, str) else None, cache_dir=cache_dir, offline=offline)


def seed_trained(to: str | HubTarget, *, family: str | None = None, datasets: Sequence[str] | None = None,
                 models: Sequence[str] | None = None, seeds: Sequence[int] | None = None, epochs: int | None = None,
                 hparams: Mapping[str, Mapping[str, Any]] | None = None, limit_batches: int | None = None,
                 device: str = "auto", out: str | os.PathLike[str] | None = None, org: str | None = None,
                 endpoint: str | None = None, token: str | None = None,
                 cache_dir: str | os.PathLike[str] | None = None, offline: bool | None = None) -> list[Submitted]:
    """Train the catalogued reproductions (:mod:`tgbhub.results.reproductions`) and submit every run with its
    record to ``to`` in one commit.

    Each run trains with :func:`tgbhub.train` into its own folder (below ``out``, else a temporary folder),
    ``<family>-<name>-<model>-s<seed>``, and writes its result record there (``record.json``) with a
    ``reproduction`` block: the paper the row cites (the submission's ``paper``), the epoch bound and the paper's
    published number for that dataset and model, if any. The board's update re-grades every run like any
    submission, and the seeds of one configuration join one row. A folder below ``out`` that already holds the
    record of the same run (model, dataset, seed, epoch bound, sizes, batch cap) is submitted as it is, not trained
    again, so an interrupted seeding goes on where it stopped.

    Args:
        to: the hub (``git:ROOT``, ``hf`` or a target).
        family, datasets, models, seeds, epochs, hparams: as :func:`tgbhub.results.reproductions.plan`.
        limit_batches: cap the train batches per epoch (smoke runs; not comparable to a published number).
        device: as :func:`tgbhub.train` (``auto``: CUDA when present, else the CPU).
        out: keep the run folders here (default: a temporary folder, removed afterwards).
        org, endpoint, token: as :func:`tgbhub.results.submissions.submit_many`.
        cache_dir, offline: where datasets are and whether sources may be reached.

    Returns:
        One :class:`~tgbhub.results.submissions.Submitted` per run, in catalogue and seed order; a run already
        submitted is ``exists``.

    Raises:
        InvalidNameError: as :func:`tgbhub.results.reproductions.plan`, or for a bad device or hyper-parameter.
        DatasetNotFoundError, SourceUnavailableError: for a dataset that cannot be loaded.
        RecordError: if a kept run's record is not intact, or is the record of another run (other settings).
        PublishError: as :func:`tgbhub.results.submissions.submit_many`.
    """
    from tgbhub.results.reproductions import plan
    from tgbhub.training import train

    target = hub_target(to, endpoint=endpoint, token=token)  # a bad hub fails before hours of training
    planned = plan(family, datasets, models, seeds, epochs, hparams)
    with tempfile.TemporaryDirectory(prefix="tgbhub-trained-") as scratch:
        base = Path(out) if out is not None else Path(scratch)
        prepared = []
        for item in planned:
            api.load_dataset(item.dataset, cache_dir=cache_dir, offline=offline)  # honours offline; train reads it
            for seed in item.seeds:
                folder = base / f"{item.dataset.replace('/', '-')}-{item.model}-s{seed}"
                if not _kept(folder, item, seed, limit_batches):
                    options: dict[str, Any] = {"limit_batches": limit_batches} if limit_batches is not None else {}
                    graded = train(item.model, item.dataset, seed=seed, device=device, epochs=item.epochs,
                                   out=folder, cache_dir=cache_dir, hparams=item.hparams, **options)
                    made = {key: value for key, value in records.make_record(
                        graded, cache_dir=cache_dir, offline=offline).items() if key != records.SHA_FIELD}
                    # the paper's number stays beside the run, in its claim: the board ranks re-graded values only
                    made["reproduction"] = item.note()
                    made = records.canonical(made)
                    made[records.SHA_FIELD] = records.record_sha256(made)
                    records.write_record(made, folder / RUN_RECORD)
                prepared.append(_prepare_run(folder, cache_dir=cache_dir, offline=offline))
        return submit_many(prepared, target, org=org, message=f"tgbhub leaderboard seed --trained: "
                           f"{len(prepared)} runs") if prepared else []


def _kept(folder: Path, item: Reproduction, seed: int, limit_batches: int | None) -> bool:
    """Whether ``folder`` holds the finished run of ``item`` for ``seed`` already (its record), so that it is
    submitted rather than trained again.

    Raises:
        RecordError: if the record there is not intact, or records a run with other settings (a smoke run kept in
            the same folder must not stand in for the reproduction).
    """
    path = folder / RUN_RECORD
    if not path.is_file():
        return False
    record = records.read_record(path)
    hyper = (record.get("model") or {}).get("hyperparameters") or {}
    found = {"model": (record.get("model") or {}).get("name"), "dataset": (record.get("dataset") or {}).get("name"),
             "seed": (record.get("model") or {}).get("seed"), "reproduction": record.get("reproduction"),
             "limit_batches": hyper.get("limit_batches"),
             "sizes": {key: (hyper.get("model") or {}).get(key) for key in item.hparams}}
    wanted = {"model": item.model, "dataset": item.dataset, "seed": seed, "reproduction": item.note(),
              "limit_batches": limit_batches, "sizes": dict(item.hparams)}
    differ = [key for key in wanted if records.canonical(found[key]) != records.canonical(wanted[key])]
    if differ:
        raise RecordError(f"{path} records another run than {item.model} on {item.dataset}, seed {seed}, as "
                          f"configured now: its {differ[0]} is {found[differ[0]]!r}, not {wanted[differ[0]]!r}; "
                          "delete the folder to train it again, or pass another --out")
    return True
