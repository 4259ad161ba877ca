"""Every GPU measurement the project still owes, in priority order within a device-time budget (``scripts/gpu-check``).

GPU time here comes in short slots (a lent machine, commands of at most 10 minutes, nothing kept between slots), so
what to run is decided ahead, here, not during the slot. The plan, in priority order:

1. ``speed/<model>``: tgbhub's ChaosNet trainer against upstream's training loop (``scripts/bench train``'s
   functions) for all four models on ``chaosnet/k0.5-rho0.3-n8``: a few hundred train batches (extrapolated to the
   epoch and labelled so), the full validation pass, the rollout of the test ICs;
2. ``evaluate``: the GPU rows of ``scripts/bench evaluate`` (MRR of 1M x 100 scores held on the GPU);
3. ``agreement/<model>``: DLinear and LSTM trained on the CPU and on the GPU from the same seed (a short fixed run):
   validation MSE per epoch and the largest weight difference;
4. ``reproduction/<model>/<instance>/s<seed>``: Graph WaveNet and TCN by the published protocol on
   ``k0.5-rho0.3-n8`` and ``k2.0-rho0.2-n8``, seed 42 on all four pairs first, then 43, then 44. These runs keep
   their whole fit state after every epoch (``tgbhub train --resume``) and stop at an epoch boundary before the
   budget ends, so one run spans as many commands and slots as it needs.

Every finished step writes a record (``OUT/records/<step>.json``: canonical JSON with its own sha256; a reproduction
holds tgbhub's result record of the run, see docs/leaderboards.md) and is not run again; a failed step records its
error and is tried again next time. At the end the plan prints what is left. ``--pack FILE`` writes the records and
the unfinished runs' states as one ``.tar.gz`` (what a device machine's ``$OUT`` can carry back); ``scripts/gpu-report``
turns records into docs/gpu.md's tables and figure.

``--dry-run`` runs the same plan on the CPU with tiny limits (mini instances, a few batches, small models) and
writes records of the same shape, marked ``dry_run``; the test suite runs it.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
import tarfile
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

FORMAT = "tgbhub-gpu-check/1"
INSTANCES = ("chaosnet/k0.5-rho0.3-n8", "chaosnet/k2.0-rho0.2-n8")
DRY_INSTANCES = ("chaosnet/mini-k0.5-rho0.3-n8", "chaosnet/mini-k2.0-rho0.3-n8")
SPEED_MODELS = ("graph_wavenet", "dlinear", "lstm", "tcn")  # the two with a speed goal first
AGREEMENT_MODELS = ("dlinear", "lstm")
#: also run with TensorFloat-32 off, which tells TF32's rounding apart from a fault in the GPU path
AGREEMENT_FP32_MODELS = ("lstm",)
REPRODUCTION_MODELS = ("graph_wavenet", "tcn")
SEEDS = (42, 43, 44)
#: upstream's loop on an H100, seconds per train epoch at batch 32, as measured upstream (the trainers' issue), and
#: the 20x goals set against them
UPSTREAM_H100_EPOCH_S = {"graph_wavenet": 78.0, "lstm": 17.8, "dlinear": 13.6}
GOAL_EPOCH_S = {"graph_wavenet": 4.0, "dlinear": 0.7}
#: GPU and CPU agree when every epoch's validation MSE is within this relative difference (float32 kernels sum in
#: another order on the GPU; cuDNN may use TF32 for the LSTM)
AGREEMENT_RTOL = 1e-3
#: model sizes a CPU dry run can afford (the published ones cost tens of MFLOP a window)
TINY = {"dlinear": {}, "lstm": {"hidden": 8}, "tcn": {"channels": 4, "end_channels": 8},
        "graph_wavenet": {"residual_channels": 4, "dilation_channels": 4, "skip_channels": 8, "end_channels": 8}}


@dataclass(frozen=True)
class Limits:
    """How big each step is: the GPU plan's sizes, or a dry run's."""

    device: str
    dry_run: bool
    instances: tuple[str, str]
    speed_batches: int
    upstream_workers: int
    eval_queries: int
    eval_negatives: int
    eval_repeats: int
    agreement_batches: int
    agreement_epochs: int
    repro_epochs: int | None  # None: the protocol's 50
    repro_batches: int | None  # None: every batch
    hparams: Mapping[str, Mapping[str, Any]]
    #: the default cost of each step kind, seconds (a step is not started when its estimate exceeds what is left)
    estimates: Mapping[str, float]
    #: a resumable step is started only with at least this much left, and stops this much before the end
    min_slice: float
    margin: float


GPU = Limits("cuda", False, INSTANCES, 300, 4, 1_000_000, 100, 5, 200, 2, None, None, {},
             {"speed/graph_wavenet": 240, "speed/tcn": 240, "speed/lstm": 150, "speed/dlinear": 120,
              "evaluate": 60, "agreement/dlinear": 90, "agreement/lstm": 150,
              "agreement/lstm-fp32": 150}, min_slice=90, margin=60)
DRY = Limits("cpu", True, DRY_INSTANCES, 2, 0, 2_000, 20, 1, 2, 1, 2, 2, TINY, {}, min_slice=0, margin=0)


@dataclass
class Outcome:
    """What a step did: ``done`` (``data`` is its record's content), ``paused`` (resumable, state kept) or
    ``failed`` (``note`` says why)."""

    status: str
    data: dict[str, Any] = field(default_factory=dict)
    note: str = ""


@dataclass(frozen=True)
class Step:
    key: str
    kind: str
    action: Callable[[Context, float], Outcome]
    resumable: bool = False


class Context:
    """The run's folder, limits and datasets (loaded once, on first use)."""

    def __init__(self, out: Path, limits: Limits, cache_dir: Path | None = None) -> None:
        self.out = out
        self.limits = limits
        self.cache_dir = cache_dir
        self._datasets: dict[str, Any] = {}

    @property
    def records(self) -> Path:
        return self.out / "records"

    @property
    def runs(self) -> Path:
        return self.out / "runs"

    def dataset(self, name: str) -> Any:
        import tgbhub

        if name not in self._datasets:
            self._datasets[name] = tgbhub.load_dataset(name, cache_dir=self.cache_dir)
        return self._datasets[name]

    def record_path(self, key: str) -> Path:
        return self.records / (key.replace("/", "__") + ".json")

    def done(self, key: str) -> bool:
        path = self.record_path(key)
        return path.exists() and json.loads(path.read_text()).get("status") == "measured"

    def estimate(self, step: Step) -> float:
        """The step's default cost, or what its last (failed) attempt took if that was more."""
        base = self.limits.estimates.get(step.key, 0.0)
        path = self.record_path(step.key)
        if path.exists():
            base = max(base, float(json.loads(path.read_text()).get("seconds", 0.0)))
        return base


# ------------------------------------------------------------------------------------------------------ records


def device_block(device: str) -> dict[str, Any]:
    """The device a step ran on (the record's ``environment`` names the GPU model, torch and CUDA)."""
    import torch

    block: dict[str, Any] = {"device": device}
    if device.startswith("cuda"):
        block["gpu_memory_gib"] = round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1)
    return block


def write_record(ctx: Context, step: Step, outcome: Outcome, seconds: float, now: datetime | None = None) -> Path:
    """The step's record: canonical JSON with its own sha256 (:mod:`tgbhub.results.records`' rules), written atomically."""
    from tgbhub.results import records
    from tgbhub.cache import write_text_atomic

    record = {"format": FORMAT, "step": step.key, "kind": step.kind, "dry_run": ctx.limits.dry_run,
              "status": "measured" if outcome.status == "done" else outcome.status, "note": outcome.note,
              "seconds": round(seconds, 3), "device": device_block(ctx.limits.device),
              "environment": records.environment(), "data": outcome.data,
              "created": (now or datetime.now(timezone.utc)).isoformat(timespec="seconds").replace("+00:00", "Z")}
    record = records.canonical(record)
    record["record_sha256"] = records.record_sha256(record)
    path = ctx.record_path(step.key)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, records.canonical_json(record).decode("utf-8") + "\n")
    return path


# -------------------------------------------------------------------------------------------------------- steps


def speed_step(model: str) -> Step:
    def act(ctx: Context, seconds: float) -> Outcome:
        from scripts import bench_train

        limits = ctx.limits
        dataset = ctx.dataset(limits.instances[0])
        full = len(dataset.windows("train")) // 32
        hparams = dict(limits.hparams.get(model, {}))
        ours = bench_train.ours(dataset, model, limits.device, 1, limits.speed_batches, 42, hparams)
        theirs = bench_train.upstream(dataset, model, limits.device, 1, limits.speed_batches, 42,
                                      limits.upstream_workers, hparams)
        sides = {"tgbhub": ours, "upstream": theirs}
        data = {"dataset": dataset.name, "model": model, "batch_size": 32, "full_batches": full,
                "measured_batches": {k: int(v["batches"]) for k, v in sides.items()},
                "train_epoch_s": {k: v["train"] * full / v["batches"] for k, v in sides.items()},
                "train_epoch_extrapolated": any(v["batches"] != full for v in sides.values()),
                "val_pass_s": {k: v["val"] for k, v in sides.items()},
                "rollout_s": {k: v["rollout"] for k, v in sides.items()},
                "upstream_loop_workers": limits.upstream_workers,
                "upstream_published_h100_epoch_s": UPSTREAM_H100_EPOCH_S.get(model),
                "goal_epoch_s": GOAL_EPOCH_S.get(model)}
        return Outcome("done", data)

    return Step(f"speed/{model}", "speed", act)


def evaluate_step() -> Step:
    def act(ctx: Context, seconds: float) -> Outcome:
        from scripts import bench_evaluate

        limits = ctx.limits
        try:
            rows = bench_evaluate.tensor_rows(limits.eval_queries, limits.eval_negatives, limits.eval_repeats,
                                              limits.device)
        except ImportError as exc:  # py-tgb, the peer, is a test extra: carried as a wheel to a GPU image
            return Outcome("failed", note=f"{exc}: carry the peer's wheels (scripts/gpu-check --fetch-wheels)")
        data = {"queries": limits.eval_queries, "negatives": limits.eval_negatives, "repeats": limits.eval_repeats,
                "rows": [{"what": what, "tgbhub_s": float(ours), "peer_s": float(peer), "ratio": ratio}
                         for what, ours, peer, ratio in rows]}
        return Outcome("done", data)

    return Step("evaluate", "evaluate", act)


def agreement_step(model: str, tf32: bool = True) -> Step:
    """The same short run on the CPU and on the GPU; ``tf32=False`` turns TensorFloat-32 off in cuDNN and in
    matrix products for the GPU side (PyTorch allows it in cuDNN by default, whose RNN and convolution kernels then
    round their inputs to 10 mantissa bits)."""

    def act(ctx: Context, seconds: float) -> Outcome:
        import torch

        from tgbhub.trainers import TrainConfig, make_trainer

        limits = ctx.limits
        dataset = ctx.dataset(limits.instances[0])
        runs: dict[str, Any] = {}
        for side, device in (("cpu", "cpu"), ("gpu", limits.device)):  # a dry run's "gpu" side is the CPU again
            config = TrainConfig(seed=42, device=device, epochs=limits.agreement_epochs,
                                 limit_batches=limits.agreement_batches, patience=limits.agreement_epochs + 1,
                                 progress=False, hparams=dict(limits.hparams.get(model, {})))
            trainer = make_trainer(dataset.task, model, config)
            with _tf32(tf32):
                report = trainer.fit(dataset, dataset.task)
            runs[side] = (report, trainer.state()["weights"])
        (cpu, cpu_weights), (gpu, gpu_weights) = runs["cpu"], runs["gpu"]
        cpu_mse = [h["val_mse"] for h in cpu.history]
        gpu_mse = [h["val_mse"] for h in gpu.history]
        rel = max(abs(a - b) / max(abs(a), 1e-12) for a, b in zip(cpu_mse, gpu_mse))
        weight_diff = max(float((cpu_weights[k].float() - gpu_weights[k].float()).abs().max()) for k in cpu_weights)
        data = {"dataset": dataset.name, "model": model, "epochs": limits.agreement_epochs,
                "batches_per_epoch": limits.agreement_batches, "val_mse": {"cpu": cpu_mse, "gpu": gpu_mse},
                "max_rel_val_mse_diff": rel, "max_abs_weight_diff": weight_diff, "rtol": AGREEMENT_RTOL,
                "agrees": rel <= AGREEMENT_RTOL, "tf32": tf32 and torch.backends.cudnn.allow_tf32}
        return Outcome("done", data)

    return Step(f"agreement/{model}" + ("" if tf32 else "-fp32"), "agreement", act)


@contextmanager
def _tf32(allowed: bool) -> Iterator[None]:
    """TensorFloat-32 as PyTorch's defaults have it (``allowed``), or off in cuDNN and matrix products."""
    import torch

    saved = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    if not allowed:
        torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = saved


def reproduction_step(model: str, instance: str, seed: int) -> Step:
    short = instance.split("/", 1)[1]
    key = f"reproduction/{model}/{short}/s{seed}"

    def act(ctx: Context, seconds: float) -> Outcome:
        import tgbhub
        from tgbhub.results import records
        from tgbhub.errors import TrainingPaused

        limits = ctx.limits
        folder = ctx.runs / key.replace("/", "__")
        try:
            graded = tgbhub.train(model, instance, seed=seed, device=limits.device, epochs=limits.repro_epochs,
                                  limit_batches=limits.repro_batches, hparams=dict(limits.hparams.get(model, {})),
                                  out=folder, cache_dir=ctx.cache_dir, resume=True,
                                  time_limit=max(0.0, seconds - limits.margin), progress=False)
        except TrainingPaused as exc:
            return Outcome("paused", note=f"paused after epoch {exc.epochs_run}; its state is {exc.state_file}")
        record = records.make_record(graded, cache_dir=ctx.cache_dir)
        data = {"dataset": instance, "model": model, "seed": seed, "published": published(model, instance),
                "result_record": record}
        return Outcome("done", data)

    return Step(key, "reproduction", act, resumable=True)


def published(model: str, instance: str) -> dict[str, Any] | None:
    """Upstream's 3-seed mean and std for ``(model, instance)`` (:data:`tgbhub.results.reproductions.PUBLISHED`), as
    ``{metric}_mean`` / ``{metric}_std``, or ``None``."""
    from tgbhub.results.reproductions import PUBLISHED

    found = PUBLISHED.get((instance, model))
    if found is None:
        return None
    return {f"{metric}_{stat}": value for metric, stats in found.metrics.items() for stat, value in stats.items()}


def plan(limits: Limits) -> list[Step]:
    """Every step, in priority order."""
    steps = [speed_step(model) for model in SPEED_MODELS]
    steps.append(evaluate_step())
    steps += [agreement_step(model) for model in AGREEMENT_MODELS]
    steps += [agreement_step(model, tf32=False) for model in AGREEMENT_FP32_MODELS]
    steps += [reproduction_step(model, instance, seed) for seed in SEEDS for instance in limits.instances
              for model in REPRODUCTION_MODELS]
    return steps


# ------------------------------------------------------------------------------------------------------- runner


@dataclass
class Left:
    """A step the run did not finish, and why."""

    key: str
    why: str


def run_plan(steps: Sequence[Step], ctx: Context, budget_s: float, clock: Callable[[], float] = time.monotonic,
             say: Callable[[str], None] = print) -> list[Left]:
    """Run ``steps`` in order within ``budget_s`` seconds of ``clock``; returns (and prints) what is left.

    A finished step (its record says ``measured``) is skipped. A step is started only if its estimate fits in what
    is left; a resumable one needs ``min_slice`` and is handed what is left, minus the margin, to stop in. A step
    that raises is recorded as failed and the plan goes on: a slot's minutes are not spent on one broken step.
    """
    start = clock()
    left: list[Left] = []
    for step in steps:
        if ctx.done(step.key):
            continue
        remaining = budget_s - (clock() - start)
        need = ctx.limits.min_slice if step.resumable else ctx.estimate(step)
        if remaining <= 0 or remaining < need:
            left.append(Left(step.key, f"not started: needs about {need / 60:.1f} min, {remaining / 60:.1f} left"))
            continue
        say(f"gpu-check: {step.key} ({remaining / 60:.1f} min left)")
        tick = clock()
        try:
            outcome = step.action(ctx, remaining)
        except Exception as exc:  # recorded and retried next time; the traceback goes to the log
            traceback.print_exc()
            outcome = Outcome("failed", note=f"{type(exc).__name__}: {exc}")
        seconds = clock() - tick
        if outcome.status != "paused":
            write_record(ctx, step, outcome, seconds)
        if outcome.status != "done":
            left.append(Left(step.key, f"{outcome.status}: {outcome.note}"))
        say(f"gpu-check: {step.key}: {outcome.status} in {seconds:.1f} s")
    say(summary(left, len(steps)))
    return left


def summary(left: Sequence[Left], total: int) -> str:
    if not left:
        return f"gpu-check: all {total} steps are measured; nothing is left to run"
    lines = [f"gpu-check: {total - len(left)} of {total} steps measured; left to run:"]
    lines += [f"  {item.key}: {item.why}" for item in left]
    return "\n".join(lines)


def pack(out: Path, target: Path) -> Path:
    """``out``'s records and the fit states of unfinished runs, as one ``.tar.gz`` (checkpoints, submissions and
    caches stay behind: they can be rebuilt, and a device machine brings back 16 MiB a file)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(target, "w:gz") as archive:
        for path in sorted((out / "records").glob("*.json")):
            archive.add(path, arcname=str(path.relative_to(out.parent)))
        finished = {p.stem for p in (out / "records").glob("*.json")
                    if json.loads(p.read_text()).get("status") == "measured"}
        for state in sorted((out / "runs").glob("*/fit-state.pt")):
            if state.parent.name not in finished:
                archive.add(state, arcname=str(state.relative_to(out.parent)))
    return target


def select(steps: Iterable[Step], patterns: Sequence[str] | None) -> list[Step]:
    return [s for s in steps if not patterns or any(fnmatch.fnmatch(s.key, p) for p in patterns)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget-min", type=float, default=25.0, help="device minutes this command may use "
                        "(default 25; keep it under a command's limit, e.g. 9 for 10-minute commands)")
    parser.add_argument("--out", type=Path, default=HERE.parent / ".gpu-check",
                        help="records, runs and states (default .gpu-check; carry it to the next slot)")
    parser.add_argument("--cache-dir", type=Path, help="tgbhub's cache (default: TGBHUB_CACHE, else the user cache)")
    parser.add_argument("--dry-run", action="store_true", help="the same plan on the CPU with tiny limits")
    parser.add_argument("--only", action="append", metavar="PATTERN", help="run only steps matching (fnmatch, "
                        "repeatable), e.g. 'speed/*'")
    parser.add_argument("--list", action="store_true", help="print the plan and each step's state, run nothing")
    parser.add_argument("--pack", type=Path, metavar="FILE", help="afterwards, write records and unfinished states "
                        "to FILE (.tar.gz), e.g. $OUT/gpu-check.tgz on a device machine")
    args = parser.parse_args(argv)
    limits = DRY if args.dry_run else GPU
    if not args.dry_run and not args.list and not _cuda():
        print("gpu-check: torch sees no CUDA device here; run it on a GPU machine, or --dry-run for the CPU "
              "rehearsal", file=sys.stderr)
        return 2
    ctx = Context(args.out.resolve(), limits, args.cache_dir)
    steps = select(plan(limits), args.only)
    if args.list:
        for step in steps:
            print(f"{'measured' if ctx.done(step.key) else 'to run':>8}  {step.key}")
        return 0
    left = run_plan(steps, ctx, args.budget_min * 60)
    if args.pack:
        print(f"gpu-check: packed {pack(ctx.out, args.pack)}")
    return 0 if not left else 1


def _cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


if __name__ == "__main__":
    sys.exit(main())
