"""Training benchmarks (run through ``scripts/bench train``), in two parts (``--part``).

ChaosNet (``--part chaosnet``): tgbhub's ChaosNetBench trainer against upstream's own
training loop (``scripts/upstream_loop.py``, a faithful re-creation of ChaosNetBench's ``training.py`` data path:
``Dataset`` + ``DataLoader`` with 4 workers and per-batch host-to-device copies, an ``.item()`` per batch, the
rollout one IC at a time) on the same model, instance, machine and device, in the same run.

Per model and device it prints seconds for one train epoch at batch 32, one validation pass (99,941 stride-1
windows), the rollout of the 20 test ICs (830 model calls each upstream; 830 calls for all ICs together in
tgbhub), and a run of ``--run-epochs`` epochs (50, the protocol's maximum) plus the rollout, with the ratio
upstream / tgbhub. Both sides build the model from the same code with the same seed.

``--batches N`` (default: 200 on CPU, every batch on a GPU) times N train batches and scales to the epoch's 1,822:
those cells are marked "extrapolated". The run row is always an extrapolation from the measured epoch and is
labelled so. The CPU half always runs; the GPU half runs wherever torch sees CUDA (a CPU-only machine says so).

TGN (``--part tgn``): tgbhub's continuous-time TGN against TGB's ``tgn.py`` and TGM's on one release in tgbl-wiki's
layout; see :mod:`scripts._train_tgn`.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

import tgbhub
from scripts._table import print_table
from scripts._train_tgn import add_arguments as add_tgn_arguments, run as run_tgn
from scripts.upstream_loop import run_upstream
from tgbhub.trainers import TrainConfig, make_trainer
from tgbhub.trainers.chaosnet_models import MODELS

MODEL_NAMES = ("dlinear", "lstm", "tcn", "graph_wavenet")
#: the models a CPU-only run times by default (the other two cost tens of MFLOP per window: hours per epoch pair)
CPU_MODELS = ("dlinear", "lstm")


def ours(dataset, model: str, device: str, epochs: int, batches: int | None, seed: int,
         hparams: dict | None = None) -> dict[str, float]:
    """tgbhub's trainer: median train-epoch and val seconds over ``epochs``, and the rollout of every test IC
    (``hparams``: model sizes other than the published ones, for a dry run)."""
    config = TrainConfig(seed=seed, device=device, epochs=epochs, limit_batches=batches, patience=epochs + 1,
                         progress=False, hparams=hparams or {})
    trainer = make_trainer(dataset.task, model, config)
    report = trainer.fit(dataset, dataset.task)
    context = dataset.trajectories("test")
    steps = context.shape[1] - 48
    sync(device)
    tick = time.perf_counter()
    trainer.rollout(context[:, :48], steps, 12)
    sync(device)
    return {"train": statistics.median(h["train_seconds"] for h in report.history),
            "val": statistics.median(h["val_seconds"] for h in report.history),
            "rollout": time.perf_counter() - tick, "batches": report.history[0]["batches"]}


def upstream(dataset, model: str, device: str, epochs: int, batches: int | None, seed: int,
             workers: int, hparams: dict | None = None) -> dict[str, float]:
    builder, defaults, lr = MODELS[model]
    torch.manual_seed(seed)
    module = builder(dataset.num_nodes, **{**defaults, **(hparams or {})})
    out = run_upstream(module, dataset.arrays("train"), dataset.arrays("val"), dataset.trajectories("test"),
                       epochs, lr, device, workers, batches, seed=seed)
    return {"train": statistics.median(out["train_epoch_s"]), "val": statistics.median(out["val_s"]),
            "rollout": out["rollout_s"], "batches": out["train_batches"]}


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def rows_for(model: str, device: str, a: dict[str, float], b: dict[str, float], full: int,
             run_epochs: int) -> list[list[str]]:
    scale = full / a["batches"]
    tag = "" if a["batches"] == full else f" (extrapolated from {a['batches']} batches)"
    cells = [(f"train epoch{tag}", a["train"] * scale, b["train"] * full / b["batches"]),
             ("val pass", a["val"], b["val"]), ("rollout, 20 test ICs", a["rollout"], b["rollout"])]
    run_a = run_epochs * (a["train"] * scale + a["val"]) + a["rollout"]
    run_b = run_epochs * (b["train"] * full / b["batches"] + b["val"]) + b["rollout"]
    cells.append((f"run of {run_epochs} epochs + rollout (extrapolated)", run_a, run_b))
    return [[device, model, what, f"{x:.2f}", f"{y:.2f}", f"{y / x:.1f}x"] for what, x, y in cells]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("chaosnet", "tgn", "all"), default="all",
                        help="chaosnet: the ChaosNet trainer against upstream's loop; tgn: TGN on a tgbl-wiki-layout "
                        "release against TGB's tgn.py and TGM's (scripts/_train_tgn.py); all: both (default)")
    parser.add_argument("--dataset", default="chaosnet/k0.5-rho0.3-n8")
    parser.add_argument("--models", default=None,
                        help="comma-separated (default: all four with a GPU; dlinear,lstm on a CPU-only machine, where "
                        "a TCN or Graph WaveNet validation pass alone takes many minutes)")
    parser.add_argument("--epochs", type=int, default=1, help="epochs timed per side (median over them)")
    parser.add_argument("--batches", type=int, default=None,
                        help="train batches timed per epoch (default: 200 on CPU, all 1,822 on a GPU)")
    parser.add_argument("--run-epochs", type=int, default=50)
    parser.add_argument("--workers", type=int, default=4, help="upstream's DataLoader workers (its default: 4)")
    parser.add_argument("--seed", type=int, default=42)
    add_tgn_arguments(parser)
    args = parser.parse_args(argv)
    if args.part in ("chaosnet", "all"):
        chaosnet(args)
    if args.part in ("tgn", "all"):
        run_tgn(args)


def chaosnet(args: argparse.Namespace) -> None:
    """The ChaosNet part: tgbhub's trainer against upstream's loop, per device and model."""
    dataset = tgbhub.load_dataset(args.dataset)
    full = len(dataset.windows("train")) // 32
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    models = args.models or ",".join(MODEL_NAMES if len(devices) > 1 else CPU_MODELS)
    if len(devices) == 1:
        print(f"No CUDA device here (torch {torch.__version__}): CPU half only ({models}; --models to add tcn or "
              "graph_wavenet); run on a GPU machine for the GPU half.\n")
    rows: list[list[str]] = []
    for device in devices:
        batches = args.batches if args.batches is not None else (200 if device == "cpu" else None)
        for model in models.split(","):
            a = ours(dataset, model, device, args.epochs, batches, args.seed)
            b = upstream(dataset, model, device, args.epochs, batches, args.seed, args.workers)
            rows += rows_for(model, device, a, b, full, args.run_epochs)
    print(f"ChaosNetBench training, {args.dataset}, batch 32, {full} train batches per epoch; seconds (median of "
          f"{args.epochs} epoch(s)); upstream loop with {args.workers} DataLoader workers; "
          f"{torch.get_num_threads()} torch threads\n")
    print_table(["device", "model", "what", "tgbhub s", "upstream s", "upstream / tgbhub"], rows)


if __name__ == "__main__":
    main()
