"""Scale past one machine: build, verify and grade on a Dask cluster (the optional ``dask`` extra).

One dataset (or one submission) is one task. A task runs the very path a serial call runs,
:func:`tgbhub.api.load_dataset`, on the worker, against the cache root the client names (a shared filesystem in
production), so the per-version lock, the private staging folder and verify-before-rename apply unchanged: a worker
that dies mid-build leaves an unmarked staging folder that nobody trusts and the next installer removes, and the
scheduler runs the task again elsewhere. What travels over the network is small: the client sends a name, the cache
path and the manifest facts it expects; the worker sends back one row (status, digests, worker, seconds, error).
Artifact bytes never pass through the client.

Per-dataset failures never raise: they come back as rows (``status == "failed"``, ``error``), every task runs to
its end, and :meth:`BuildReport.raise_for_failures` turns them into one error when a caller wants that. The command
line prints the summary and exits 1.

Dask is imported only inside the functions that talk to a cluster: without the ``dask`` extra the serial path works
and the cluster path raises :class:`~tgbhub.errors.MissingExtraError`.
"""

from __future__ import annotations

import os
import re
import socket
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypedDict

from tgbhub import api, cache, config
from tgbhub.errors import (
    DatasetNotFoundError,
    GenerationError,
    InvalidNameError,
    MissingExtraError,
    SchedulerUnavailableError,
    TgbhubError,
    VersionNotFoundError,
)
from tgbhub.progress import track

if TYPE_CHECKING:
    from distributed import Client

    from tgbhub.evaluate.counterfactual import Report
    from tgbhub.manifest import Manifest

#: how ``--scheduler`` is written; ``local`` starts one worker process per CPU core
SCHEDULER_FORMS = "tcp://HOST:8786 (a running scheduler), local (one worker process per core) or local:N"
#: a task that raises something unexpected (not a TgbhubError) runs this many more times; a killed worker's task is
#: rescheduled by the scheduler itself (distributed.scheduler.allowed-failures), not counted here
DEFAULT_RETRIES = 2
#: how long to wait for a remote scheduler to answer
CONNECT_TIMEOUT = "30s"
_LOCAL = re.compile(r"local(?::(\d+))?")


class CatalogueFacts(TypedDict):
    """What the client's catalogue pins of a dataset, for a worker to compare against: the version and every file's
    ``[sha256, digest]``."""

    version: str
    files: dict[str, list[str | None]]


@dataclass(frozen=True)
class BuildRow:
    """One dataset's outcome. ``status`` is ``built`` (this call installed it), ``fetched`` (from a hub or mirror),
    ``cached`` (already verified in the cache) or ``failed`` (``error`` says why). ``digest`` is the logical content
    digest of the dataset's data file and ``sha256`` every file's hash as the cache recorded it when it verified the
    bytes; ``worker`` is the Dask worker's address (or ``host:pid`` in-process)."""

    name: str
    version: str | None
    status: str
    digest: str | None = None
    sha256: Mapping[str, str] = field(default_factory=dict)
    worker: str | None = None
    pid: int | None = None
    seconds: float = 0.0
    error: str | None = None


@dataclass(frozen=True)
class BuildReport:
    """Every row of a build, in the order the names were given, and where and how long it ran."""

    rows: tuple[BuildRow, ...]
    scheduler: str
    seconds: float

    @property
    def failed(self) -> list[BuildRow]:
        return [row for row in self.rows if row.status == "failed"]

    @property
    def ok(self) -> bool:
        return not self.failed

    def count(self, status: str) -> int:
        return sum(1 for row in self.rows if row.status == status)

    def to_json(self) -> list[dict[str, Any]]:
        return [{**asdict(row), "sha256": dict(row.sha256)} for row in self.rows]

    def table(self) -> str:
        """The report as a markdown table (name, version, status, seconds, worker, digest or error)."""
        lines = ["| dataset | version | status | seconds | worker | digest / error |", "|---|---|---|---|---|---|"]
        for row in self.rows:
            detail = (row.digest or "")[:16] if row.status != "failed" else (row.error or "").replace("|", "/")
            lines.append(f"| {row.name} | {row.version or ''} | {row.status} | {row.seconds:.2f} | "
                         f"{row.worker or ''} | {detail} |")
        return "\n".join(lines)

    def __str__(self) -> str:
        return (f"{len(self.rows) - len(self.failed)} of {len(self.rows)} dataset(s) ready on {self.scheduler} in "
                f"{self.seconds:.1f} s\n{self.table()}")

    def raise_for_failures(self) -> None:
        """Raise if any dataset failed (every task has finished by now).

        Raises:
            GenerationError: listing each failed dataset and its reason.
        """
        if self.failed:
            listed = "; ".join(f"{row.name}: {row.error}" for row in self.failed)
            raise GenerationError(f"{len(self.failed)} of {len(self.rows)} dataset(s) failed on {self.scheduler}: "
                                  f"{listed}. Fix each reason above and build those names again; the others are "
                                  "verified in the cache and will be found there")


def build(names: Sequence[str], *, client: Client | None = None, scheduler: str | None = None,
          cache_dir: str | os.PathLike[str] | None = None, offline: bool | None = True,
          retries: int = DEFAULT_RETRIES) -> BuildReport:
    """Build (or find verified in the cache) every dataset in ``names``, one task per dataset.

    ``client`` is a ``distributed.Client`` to run on; else ``scheduler`` names one (see :data:`SCHEDULER_FORMS`;
    a cluster started here is closed at the end); with neither, the datasets build here, one after another. Every
    worker installs into ``cache_dir`` (resolved here, made absolute: on a real cluster it must be one shared
    filesystem path) through :func:`tgbhub.api.load_dataset` with ``offline`` (default: rebuild locally, no socket;
    ``None``: each worker's ``$TGBHUB_OFFLINE``, so a worker may fetch from its configured hub or mirror).
    A worker killed mid-build leaves nothing trusted; the scheduler reruns its task on another worker.

    >>> report = build(["t-grab/ce-64"], scheduler="local:2")   # doctest: +SKIP
    >>> report.rows[0].status, report.rows[0].digest             # doctest: +SKIP

    Raises:
        InvalidNameError: if ``scheduler`` is malformed or both ``client`` and ``scheduler`` are given.
        MissingExtraError: if a cluster is asked for and dask[distributed] is not installed.
        SchedulerUnavailableError: if the scheduler at an address cannot be reached within :data:`CONNECT_TIMEOUT`.
    Per-dataset failures are rows (``status == "failed"``), not exceptions; see :meth:`BuildReport.raise_for_failures`.
    """
    root = str(config.cache_root(cache_dir).absolute())
    calls = [(name, root, offline, _expected(name)) for name in names]
    started = time.perf_counter()
    with _session(client, scheduler) as (dask_client, label):
        if dask_client is None:
            raw = [build_task(*call) for call in track(calls, desc="building", unit="dataset",
                                                             label=lambda call: call[0])]
        else:
            raw = _run(dask_client, build_task, calls, [f"build-{name}" for name in names], retries,
                       lambda call, error: _failed_row(call[0], error))
    rows = tuple(BuildRow(**row) for row in raw)
    return BuildReport(rows=rows, scheduler=label, seconds=round(time.perf_counter() - started, 3))


def build_task(name: str, root: str, offline: bool | None, expected: CatalogueFacts | None) -> dict[str, Any]:
    """One dataset, on whichever process runs it: the serial path (:func:`tgbhub.api.load_dataset`) into ``root``,
    then the verified entry's hashes. ``expected`` holds the client's manifest facts (version and every file's
    sha256 and digest); a worker whose catalogue differs refuses rather than install other data under that name.

    A :class:`~tgbhub.errors.TgbhubError` becomes a failed row (deterministic: running it again would not help);
    anything else propagates, so the scheduler retries it.
    """
    started = time.perf_counter()
    worker, pid = _where()
    try:
        # the client's version, pinned: a worker whose newest differs builds what the client asked for, or fails
        pinned = expected["version"] if expected is not None and "@" not in name else None
        dataset = api.load_dataset(name, pinned, cache_dir=root, offline=offline)
        manifest = dataset.manifest
        _check_same_catalogue(name, manifest, expected)
        entry = cache.lookup(manifest, Path(root))
        if entry is None:  # removed by someone else between our install and this look: say so, never guess
            raise GenerationError(f"{manifest.name}@{manifest.version} was installed but is no longer complete in "
                                  f"{root}; another process is clearing that cache: build it again")
        status = {"cache": "cached", "build": "built"}.get(dataset.source, "fetched")
        return dict(name=name, version=manifest.version, status=status, digest=dataset.digest or None,
                    sha256=dict(entry.sha256), worker=worker, pid=pid,
                    seconds=round(time.perf_counter() - started, 3))
    except TgbhubError as exc:  # one dataset's failure must not cost the others their build
        row = _failed_row(name, str(exc))
        return {**row, "version": expected["version"] if expected is not None else None, "worker": worker, "pid": pid,
                "seconds": round(time.perf_counter() - started, 3)}


def grade_task(name: str, file: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """One submission on whichever process runs it: ``{"file", "status": "ok", "worker", "seconds", **result}``, or
    ``status == "failed"`` with ``error`` (a malformed submission is a row, never a score)."""
    started = time.perf_counter()
    worker, _ = _where()
    try:
        result = api.grade(name, file, **options).to_json()
        status = {"status": "ok"}
    except TgbhubError as exc:
        result, status = {}, {"status": "failed", "error": str(exc)}
    return {"file": file, **status, "worker": worker, "seconds": round(time.perf_counter() - started, 3), **result}


def evaluate(name: str, files: Sequence[str | os.PathLike[str]], *, client: Client | None = None,
             scheduler: str | None = None, cache_dir: str | os.PathLike[str] | None = None, offline: bool | None = None,
             retries: int = DEFAULT_RETRIES, **options: Any) -> list[dict[str, Any]]:
    """Grade many submission ``files`` against dataset ``name``, one task each; one row per file, in order.

    ``options`` are :func:`tgbhub.api.grade`'s (``task``, ``split``, ``detail``, ``teacher_forced``). File paths are
    made absolute here and must be readable by every worker (a shared filesystem, like the cache). The dataset is made
    ready in the cache first, by one task, so the graders only read it.

    Raises:
        InvalidNameError, MissingExtraError, TgbhubError: as :func:`build` (for the cluster).
        TgbhubError: as :func:`tgbhub.api.grade`, if the dataset itself cannot be made ready (then no file is graded).
    """
    root = str(config.cache_root(cache_dir).absolute())
    paths = [str(Path(f).absolute()) for f in files]
    settings = {**options, "cache_dir": root, "offline": offline}
    if settings.get("teacher_forced"):  # a worker's working folder is not ours
        settings["teacher_forced"] = str(Path(settings["teacher_forced"]).absolute())
    with _session(client, scheduler) as (dask_client, _):
        if dask_client is None:
            return [grade_task(name, path, settings) for path in track(paths, desc="grading", unit="file")]
        dask_client.submit(_ready, name, root, offline, key=f"tgbhub-ready-{uuid.uuid4().hex}", retries=retries,
                           pure=False).result()
        return _run(dask_client, grade_task, [(name, path, settings) for path in paths],
                    [f"grade-{Path(p).name}" for p in paths], retries,
                    lambda call, error: {"file": call[1], "status": "failed", "error": error})


def counterfactual(name: str, model: str | None = None, *, predictions: str | os.PathLike[str] | None = None,
                   kinds: Sequence[str] | None = None, seeds: Sequence[int] | None = None, client: Client | None = None,
                   scheduler: str | None = None, cache_dir: str | os.PathLike[str] | None = None,
                   offline: bool | None = None, retries: int = DEFAULT_RETRIES, **options: Any) -> Report:
    """:func:`tgbhub.api.counterfactual`, with the base dataset and every variant it reads first made ready in the
    cache as one task each (the variants' builds are the long part); the scoring then runs here, from the cache.
    ``options`` are the rest of :func:`tgbhub.api.counterfactual`'s keywords (``negatives``, ``controls``,
    ``epsilon``). Without ``client`` and ``scheduler`` this is :func:`tgbhub.api.counterfactual` itself.

    Raises:
        InvalidNameError, MissingExtraError, TgbhubError: as :func:`build` (for the cluster).
        GenerationError: listing every dataset or variant that could not be made ready (after all were tried).
        Exception: whatever :func:`tgbhub.api.counterfactual` raises.
    """
    root = str(config.cache_root(cache_dir).absolute())
    settings = dict(predictions=predictions, kinds=kinds, seeds=seeds, cache_dir=root, offline=offline, **options)
    if client is not None or scheduler is not None:
        names = [name, *_derived_names(name, predictions, kinds, seeds)]
        build(names, client=client, scheduler=scheduler, cache_dir=root, offline=offline,
              retries=retries).raise_for_failures()
    return api.counterfactual(name, model, **settings)


def _derived_names(name: str, predictions: str | os.PathLike[str] | None, kinds: Sequence[str] | None,
                   seeds: Sequence[int] | None) -> list[str]:
    """The variants :func:`tgbhub.api.counterfactual` will load for these arguments (its defaults; with a
    predictions file and neither kinds nor seeds, the ones the file scores)."""
    from tgbhub.evaluate.counterfactual import REAL, read_predictions

    if predictions is not None and kinds is None and seeds is None:
        return sorted({variant for variant, _ in read_predictions(predictions) if variant != REAL})
    return api.derived_names(api.resolve(name).name, kinds or None, seeds)


def _ready(name: str, root: str, offline: bool | None) -> str:
    """Load ``name`` into ``root`` once, on a worker (its errors reach the client as they are)."""
    return api.load_dataset(name, cache_dir=root, offline=offline).manifest.version


def _expected(name: str) -> CatalogueFacts | None:
    """The client's manifest facts for ``name``, pinned, for a worker to compare against; ``None`` when the client's
    catalogue does not know the name (a variant built on request, an import, a typo): the worker's own
    :func:`~tgbhub.api.load_dataset` then decides, and its error comes back as a row."""
    try:
        manifest = api.resolve(name)
    except (DatasetNotFoundError, VersionNotFoundError, InvalidNameError):
        return None
    return {"version": manifest.version, "files": {f.name: [f.sha256, f.digest] for f in manifest.files}}


def _check_same_catalogue(name: str, manifest: Manifest, expected: CatalogueFacts | None) -> None:
    """Raises GenerationError if the worker's manifest is not the one the client resolved."""
    if expected is None:
        return
    mine: CatalogueFacts = {"version": manifest.version,
                            "files": {f.name: [f.sha256, f.digest] for f in manifest.files}}
    if mine != dict(expected):
        from tgbhub.version import __version__

        raise GenerationError(f"{name}: this worker's catalogue resolves it to version {manifest.version} with other "
                              f"file hashes than the client's ({expected['version']}); install the client's "
                              f"tgbhub version on every worker (this worker has tgbhub {__version__})")


def _failed_row(name: str, error: str) -> dict[str, Any]:
    return dict(name=name, version=None, status="failed", error=error)


def _where() -> tuple[str, int]:
    """The Dask worker's address when running on one, else ``host:pid``; and the process id."""
    try:
        from distributed import get_worker

        return get_worker().address, os.getpid()
    except (ImportError, ValueError):  # not on a worker (ValueError) or no Dask at all
        return f"{socket.gethostname()}:{os.getpid()}", os.getpid()


def _run(client: Client, function: Callable[..., dict[str, Any]], calls: Sequence[tuple[Any, ...]],
         labels: Sequence[str], retries: int,
         failed: Callable[[tuple[Any, ...], str], dict[str, Any]]) -> list[dict[str, Any]]:
    """Submit one task per call, wait for every one, and return their rows in call order; a task that still raised
    after its retries (or whose workers kept dying: ``KilledWorker``) becomes a failed row, never a lost one."""
    from distributed import as_completed

    run = uuid.uuid4().hex[:8]  # a fresh key per call of ours: pure=False alone would still share our readable keys
    # the index too: two calls may share a label (files of one name in two folders), and one key is one task to Dask
    futures = {client.submit(function, *call, key=f"tgbhub-{label}-{index}-{run}", retries=retries, pure=False): index
               for index, (call, label) in enumerate(zip(calls, labels, strict=True))}
    rows: list[dict[str, Any] | None] = [None] * len(calls)
    for future in track(as_completed(futures), desc="tasks", total=len(futures), unit="task"):
        index = futures[future]
        try:
            rows[index] = future.result()
        except Exception as exc:  # noqa: BLE001 - any task error is a row: the summary must hold every dataset
            rows[index] = failed(calls[index], f"{type(exc).__name__}: {exc}")
    return [row if row is not None else failed(call, "the cluster returned no result for this task")
            for call, row in zip(calls, rows, strict=True)]


@contextmanager
def _session(client: Client | None, scheduler: str | None) -> Iterator[tuple[Client | None, str]]:
    """The Dask client to run on and a label for reports: ``client`` as given (left open), a client of a cluster
    started or reached from ``scheduler`` (closed at the end), or ``(None, "serial")``.

    Raises:
        InvalidNameError: for both or a malformed ``scheduler``.
        MissingExtraError: if Dask is needed and not installed.
        SchedulerUnavailableError: if the scheduler at an address does not answer.
    """
    if client is not None and scheduler is not None:
        raise InvalidNameError("pass client= or scheduler=, not both: a client already names its scheduler")
    if client is not None:
        yield client, str(getattr(client.scheduler, "address", "client"))
        return
    if scheduler is None:
        yield None, "serial"
        return
    workers = _local_workers(scheduler)
    distributed = _distributed()
    if workers is None:
        try:
            remote = distributed.Client(scheduler, timeout=CONNECT_TIMEOUT)
        except OSError as exc:  # distributed's timeouts and refusals are OSErrors
            raise SchedulerUnavailableError(
                f"could not reach the Dask scheduler at {scheduler!r} within {CONNECT_TIMEOUT} ({exc}); start one "
                "(`dask scheduler`, then `dask worker ADDRESS` on each machine) or check the address, or use "
                "--scheduler local:N for a cluster on this machine") from exc
        with remote:
            yield remote, scheduler
        return
    with distributed.LocalCluster(**local_cluster_options(workers)) as cluster, distributed.Client(cluster) as local:
        yield local, f"local:{workers}"


def local_cluster_options(workers: int) -> dict[str, Any]:
    """``LocalCluster`` keywords for ``local:N``: N worker processes of one thread each (the generators' kernels are
    single-threaded and hold the GIL in places), on loopback, no dashboard, no progress bars in workers' stderr."""
    return dict(n_workers=workers, processes=True, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                env={"TGBHUB_NO_PROGRESS": "1"})


def _local_workers(scheduler: str) -> int | None:
    """``local`` -> the number of cores, ``local:N`` -> N, an address -> ``None``.

    Raises:
        InvalidNameError: for anything else, naming the accepted forms.
    """
    match = _LOCAL.fullmatch(scheduler.strip())
    if match is not None:
        workers = int(match.group(1)) if match.group(1) else (os.cpu_count() or 1)
        if workers < 1:
            raise InvalidNameError(f"--scheduler {scheduler!r} asks for no workers; write local:1 or more")
        return workers
    if "://" in scheduler and not scheduler.endswith("://"):
        return None
    raise InvalidNameError(f"--scheduler {scheduler!r} is not a scheduler; write {SCHEDULER_FORMS}")


def _distributed() -> ModuleType:
    """The ``distributed`` module, imported only when a cluster is asked for.

    Raises:
        MissingExtraError: naming the ``dask`` extra, if Dask is not installed.
    """
    try:
        import distributed
    except ImportError as exc:
        raise MissingExtraError("dask", "dask", "running on a Dask cluster (--scheduler / client=)") from exc
    return distributed
