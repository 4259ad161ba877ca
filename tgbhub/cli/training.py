"""The training command: fit a trainable baseline, grade it, write checkpoint and submission."""

from __future__ import annotations

import argparse
import json
from typing import Any

from tgbhub.cli.grading import RegistryHelp, add_record_option, write_record
from tgbhub.cli.grammar import add_dataset, command, listed
from tgbhub.cli.output import print_json, print_result
from tgbhub.errors import InvalidNameError

GROUP = "grading and training"

#: how long a run takes and how to bound it: the part of ``tgbhub train --help`` after the options
EPILOG = """\
how long a run takes:
  every model trains by its published protocol, and early stopping is what usually ends it:
    ChaosNet models: at most 50 epochs; stops after 10 without a better validation MSE
    tgn, graphmixer on continuous time (TGB): at most 50 epochs; stops after 5 without a better
      validation MRR
    gclstm, tgn on snapshots (T-GRAB): at most 100000 epochs (the paper's setting, kept as published);
      stops after 100 without a lower train loss, so early stopping, not the epoch count, ends the run
  after the first batches, a notice on stderr estimates the time per epoch, the time early stopping
  needs at the least and the upper bound (--quiet hides it).

examples:
  tgbhub train dlinear chaosnet/k0.5-rho0.3-n8 --resume --time-limit 3600
      at most an hour per call: pauses at an epoch boundary (exit 3); the same command goes on
      (--time-limit: any model tgbhub ships; each pauses and resumes bit-identically on CPU)
  tgbhub train tgn t-grab/ce-64 --epochs 20
      a bounded run (not comparable to the published numbers)
"""


class TrainHelp(RegistryHelp, argparse.RawDescriptionHelpFormatter):
    """The registry-filling help, with the epilog's lines kept as written (an example is one line)."""


def hparams(pairs: list[str]) -> dict[str, Any]:
    """``["channels=8", "dropout=0.1"]`` -> ``{"channels": 8, "dropout": 0.1}`` (values parsed as JSON, else text).

    Raises:
        InvalidNameError: for an item without ``=``.
    """
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InvalidNameError(f"--hparam {pair!r} is not KEY=VALUE; write e.g. --hparam channels=64")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def run_train(args: argparse.Namespace) -> int:
    """Train, grade and print the run (exit 3, via main, when a time limit paused it)."""
    from tgbhub.training import RESULT_KEYS, train

    options = {k: getattr(args, k) for k in ("batch_size", "lr", "patience", "limit_batches", "time_limit")
               if getattr(args, k) is not None}
    result = train(args.model, args.name, seed=args.seed, device=args.device, epochs=args.epochs, out=args.out,
                   task=args.task, split=args.split, cache_dir=args.cache_dir, hparams=hparams(args.hparam),
                   compile=args.compile, amp=args.amp, resume=args.resume, **options)
    write_record(args, result)
    if args.json:
        return print_json({k: result[k] for k in RESULT_KEYS})
    print_result(result.to_json(), False)
    print(f"{'seed':>10}: {result['seed']}")
    print(f"{'device':>10}: {result['device']}")
    print(f"{'epochs':>10}: {result['epochs_run']} run, best {result['best_epoch'] + 1}")
    print(f"{'train':>10}: {result['train_seconds']:.1f} s")
    for key, path in result.get("files", {}).items():
        print(f"{key:>10}: {path}")
    if result.get("regrade"):
        print(f"{'regrade':>10}: {result['regrade']}")
    return 0


def register(commands: argparse._SubParsersAction) -> list[tuple[str, str]]:
    """Add ``train``; returns (command, summary) pairs for the main help."""
    trainer = command(commands, "train", "train a neural baseline and grade it", run_train,
                      description="train a neural baseline, grade it, write checkpoint and submission",
                      formatter_class=TrainHelp, epilog=EPILOG)
    trainer.add_argument("model", help="the model, by task type: {trainers}")
    add_dataset(trainer)
    trainer.add_argument("--seed", type=int, default=42, help="seed of weights, shuffling and dropout (default 42)")
    trainer.add_argument("--device", default="auto", help="auto (CUDA when present, else CPU), cpu, cuda or cuda:N")
    trainer.add_argument("--epochs", type=int, help="maximum epochs (default: the model's published protocol; "
                         "early stopping usually ends a run first, see below)")
    trainer.add_argument("--batch-size", type=int, help="default: the published protocol's")
    trainer.add_argument("--lr", type=float, help="learning rate (default: the model's published one)")
    trainer.add_argument("--patience", type=int, help="early-stopping patience in epochs (default: the protocol's)")
    trainer.add_argument("--limit-batches", type=int, help="cap train batches per epoch (smoke runs; not comparable "
                         "to published numbers)")
    trainer.add_argument("--hparam", action="append", default=[], metavar="KEY=VALUE",
                         help="override a model size, e.g. --hparam channels=64 (repeatable)")
    trainer.add_argument("--compile", action="store_true", help="torch.compile the model (off by default)")
    trainer.add_argument("--amp", action="store_true", help="bfloat16 autocast of the training steps; validation "
                         "and rollout stay float32 (off by default)")
    trainer.add_argument("--task", help="task name (default: the dataset's first task the model trains for)")
    trainer.add_argument("--split", help="split to predict and grade (default: the task's report split)")
    trainer.add_argument("--out", metavar="DIR", help="folder for model.pt, submission.parquet and result.json "
                         "(default: ./train-MODEL-FAMILY-NAME-sSEED)")
    trainer.add_argument("--resume", action="store_true", help="keep the fit's state in OUT/fit-state.pt after every "
                         "epoch and go on from it when it exists (a run over several processes or GPU slots)")
    trainer.add_argument("--time-limit", type=float, metavar="SECONDS", help="with --resume, e.g. --resume "
                         "--time-limit 3600: stop at the epoch boundary before an epoch that would end later than "
                         "this (exit 3; run the same command again to go on); every model tgbhub ships can "
                         "pause and resume")
    trainer.add_argument("--json", action="store_true", help="print the run's JSON summary")
    add_record_option(trainer)
    return listed(trainer)
