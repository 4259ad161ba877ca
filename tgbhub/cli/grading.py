"""Grading commands: evaluate, baseline, counterfactual, verify-result, aggregate-results."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from tgbhub import api
from tgbhub.cli.grammar import (
    MODEL_OR_PARQUET_KIND,
    Parser,
    add_dataset,
    add_hub_read_options,
    add_scheduler_options,
    command,
    holds,
    listed,
    parquet_path,
)
from tgbhub.cli.output import print_json, print_result
from tgbhub.config import output_folder
from tgbhub.errors import TgbhubError
from tgbhub.evaluate.graded import Graded

GROUP = "grading and training"


def write_record(args: argparse.Namespace, graded: Graded) -> None:
    """With ``--record PATH``: the run's result record; the path goes to stderr, so ``--json`` output stays one
    JSON document."""
    if getattr(args, "record", None):
        from tgbhub.results import records

        records.record(graded, args.record, cache_dir=args.cache_dir, offline=args.offline or None)
        print(f"wrote record: {args.record}", file=sys.stderr)


def add_record_option(parser: argparse.ArgumentParser) -> None:
    """``--record PATH`` on a command that grades one run."""
    parser.add_argument("--record", metavar="PATH", help="also write the run's result record (JSON with its own "
                        "sha256), checkable with `tgbhub verify-result`")


def run_evaluate(args: argparse.Namespace) -> int:
    """Grade one submission (exit 2 on its error), or several here or on a Dask cluster: one JSON line per file,
    failures included, and exit 1 if any failed."""
    options = {"task": args.task, "split": args.split, "detail": args.detail, "teacher_forced": args.teacher_forced}
    if len(args.files) == 1 and args.scheduler is None:  # graded here: the Dask backend is not loaded
        graded = api.grade(args.name, args.files[0], cache_dir=args.cache_dir, **options)
        print_result(graded.to_json(), args.json)
        write_record(args, graded)
        return 0
    if args.record:
        raise TgbhubError(f"--record writes the record of one graded file; grade the {len(args.files)} files one "
                          "at a time (without --scheduler), each with its own --record PATH")
    from tgbhub import scale

    rows = scale.evaluate(args.name, args.files, scheduler=args.scheduler, cache_dir=args.cache_dir,
                          retries=args.retries, **options)
    for row in rows:
        print(json.dumps(row))
    return 0 if all(row["status"] == "ok" for row in rows) else 1


def run_baseline(args: argparse.Namespace) -> int:
    """Run a heuristic baseline, grade it and print the result."""
    graded = api.run_baseline(args.model, args.name, task=args.task, split=args.split, out=args.out,
                              cache_dir=args.cache_dir)
    print_result(graded.to_json(), args.json)
    write_record(args, graded)
    return 0


def run_counterfactual(args: argparse.Namespace) -> int:
    """The counterfactual check of a baseline or a predictions file: a table or JSON, and its files."""
    from tgbhub import scale
    from tgbhub.evaluate import counterfactual as harness

    is_file = args.model.endswith(".parquet") or os.path.isfile(args.model)
    report = scale.counterfactual(args.name, None if is_file else args.model,
                                  predictions=args.model if is_file else None, kinds=args.kinds,
                                  seeds=harness.seed_list(args.seeds) if args.seeds else None,
                                  negatives=args.negatives, epsilon=args.epsilon, controls=args.controls,
                                  cache_dir=args.cache_dir, scheduler=args.scheduler, retries=args.retries)
    label = Path(args.model).stem if is_file else args.model
    written = report.write(Path(args.out) if args.out else output_folder("counterfactual", args.name, label))
    if args.record:
        from tgbhub.results import records

        records.record_each(report.graded, args.record, cache_dir=args.cache_dir, offline=args.offline or None)
        print(f"wrote {len(report.graded)} records into {args.record}", file=sys.stderr)
    if args.json:
        return print_json({**report.to_json(), "written": {k: str(v) for k, v in written.items()},
                           "plot_skipped": report.plot_skipped}, allow_nan=False)
    print("\n".join(harness.table_lines(report)))
    for kind, path in written.items():
        print(f"wrote {kind}: {path}")
    if report.plot_skipped:
        print(f"plot skipped: {report.plot_skipped}")
    return 0


def run_generative(args: argparse.Namespace) -> int:
    """ATD/ACD of predicted events against the real test split and the reference baselines."""
    from tgbhub.evaluate import counterfactual as harness, generative

    result = api.generative_check(args.name, args.predictions,
                                  seeds=harness.seed_list(args.seeds) if args.seeds else None,
                                  fallback=args.fallback, clip_to_reference_window=args.clip,
                                  directed=not args.undirected, cache_dir=args.cache_dir,
                                  offline=args.offline or None)
    if args.json:
        return print_json(harness.json_ready(result))
    print("\n".join(generative.generative_lines(result, result["baselines"])))
    return 0


def run_verify_result(args: argparse.Namespace) -> int:
    """Re-check a result record against its submission: exit 0 if every check matches, 1 on any mismatch."""
    from tgbhub.results import records

    found = records.verify(args.record_file, args.submission, cache_dir=args.cache_dir,
                           offline=args.offline or None, rtol=args.rtol, endpoint=args.endpoint, org=args.org,
                           token=args.token)
    print(json.dumps(found.to_json(), indent=1) if args.json else "\n".join(found.lines()))
    return 0 if found.ok else 1


def run_aggregate_results(args: argparse.Namespace) -> int:
    """Several seeds' records as one entry (mean, sample std, n, seeds), printed as JSON."""
    from tgbhub.results import records

    return print_json(records.aggregate([records.read_record(path) for path in args.records]))


class RegistryHelp(argparse.HelpFormatter):
    """Fills ``{baselines}`` and ``{trainers}`` in a help text only when help is printed: reading the registries
    imports every baseline and trainer module, which no other run of the command line needs."""

    def _expand_help(self, action: argparse.Action) -> str:
        text = super()._expand_help(action)
        for kind in ("baselines", "trainers"):
            if f"{{{kind}}}" in text:
                text = text.replace(f"{{{kind}}}", models_by_task(kind))
        return text


def models_by_task(kind: str) -> str:
    """``type: a, b; type: c`` from the registry of heuristic baselines or of trainers."""
    keys: Iterable[tuple[str, str]]  # (task type, model) of each registered entry
    if kind == "baselines":
        from tgbhub.baselines.registry import BASELINES

        keys = BASELINES
    else:
        from tgbhub.trainers.base import TRAINERS

        keys = TRAINERS
    by_type: dict[str, list[str]] = {}
    for task_type, model in sorted(keys):
        by_type.setdefault(task_type, []).append(model)
    return "; ".join(f"{task_type}: {', '.join(models)}" for task_type, models in by_type.items())


def register(commands: argparse._SubParsersAction) -> list[tuple[str, str]]:
    """Add the grading commands; returns (command, summary) pairs for the main help."""
    return listed(_add_evaluate(commands), _add_baseline(commands), _add_counterfactual(commands),
                  _add_generative(commands), *_add_results(commands))


def _add_evaluate(commands: argparse._SubParsersAction) -> Parser:
    evaluate = command(commands, "evaluate", "grade a submission against a dataset's task",
                       run_evaluate)
    add_dataset(evaluate)
    evaluate.add_argument("files", nargs="+", metavar="FILE", help="the submission(s), Parquet files in the task's "
                          "declared schema; several print one JSON line each")
    evaluate.add_argument("--split", help="split to grade (default: the task's report split, usually test)")
    evaluate.add_argument("--task", help="task name (default: the task whose columns the file has, else the "
                          "dataset's default task)")
    evaluate.add_argument("--detail", action="store_true", help="add per-snapshot or per-query detail")
    evaluate.add_argument("--teacher-forced", metavar="FILE", help="rollout forecasting only: Parquet file of "
                          "teacher-forced window forecasts (columns window, values); adds the test MSE and applies "
                          "the validity screen")
    evaluate.add_argument("--json", action="store_true")
    add_record_option(evaluate)
    add_scheduler_options(evaluate)
    return evaluate


def _add_baseline(commands: argparse._SubParsersAction) -> Parser:
    baseline = command(commands, "baseline", "run a heuristic baseline and grade it", run_baseline,
                       formatter_class=RegistryHelp)
    baseline.add_argument("model", help="the heuristic, by task type: {baselines}; options follow a colon, e.g. "
                          "edgebank-tw:memory=dyglib,seed=0 (window forecasting)")
    add_dataset(baseline)
    baseline.add_argument("--split", help="split to predict (default: the task's report split)")
    baseline.add_argument("--task", help="task name (default: the dataset's default task)")
    baseline.add_argument("--out", type=parquet_path, metavar="FILE.parquet",
                          help="also write the submission to this Parquet file")
    baseline.add_argument("--json", action="store_true")
    add_record_option(baseline)
    return baseline


def _add_counterfactual(commands: argparse._SubParsersAction) -> Parser:
    counter = command(commands, "counterfactual", "TLPCF check on temporally distorted test sets",
                      run_counterfactual)
    holds(counter.add_argument("model", help="a ranking baseline (edgebank, persistence, recency, ...) or a "
                               "long-format predictions Parquet file (columns variant, run, query, neg_rank, score)"),
          MODEL_OR_PARQUET_KIND)
    add_dataset(counter, help="the base dataset, e.g. t-grab/pdet-2-16")
    counter.add_argument("--negatives", choices=("paired", "regenerated"), default="paired",
                         help="paired: each distorted query keeps its real event's negatives (default); regenerated: "
                         "hist-rnd recomputed on the distorted stream")
    counter.add_argument("--kinds", nargs="+", help="variant kinds, e.g. shuffle intense-k5 (default: the published "
                         "kinds)")
    counter.add_argument("--seeds", help="variant seeds, e.g. 0-4 or 0,1,2 (default: the published seeds)")
    counter.add_argument("--controls", nargs="*", default=["edgebank", "recency"],
                         help="control heuristics scored on the same variants (default: edgebank recency)")
    counter.add_argument("--epsilon", type=float, default=0.05, help="the margin of margin_drop (default: 0.05)")
    counter.add_argument("--out", metavar="DIR", help="folder for counterfactual.json/.parquet/.png (default: "
                         "./counterfactual-MODEL-FAMILY-NAME)")
    counter.add_argument("--record", metavar="DIR", help="also write one result record per graded condition and "
                         "run into this folder")
    counter.add_argument("--json", action="store_true")
    add_scheduler_options(counter)
    return counter


def _add_generative(commands: argparse._SubParsersAction) -> Parser:
    generative = command(commands, "generative", "ATD/ACD of predicted events vs the real test split",
                         run_generative, description="ATD/ACD of predicted events against the real test split "
                         "and the reference baselines")
    add_dataset(generative, help="the real dataset, e.g. t-grab/pdet-2-16")
    generative.add_argument("predictions", metavar="FILE", help="Parquet: src, dst, t[, sample_id]")
    generative.add_argument("--seeds", help="the oracle variants' seeds, e.g. 0-4 or 0,1,2 (default: the published "
                            "seeds)")
    generative.add_argument("--fallback", default="cap", choices=("cap", "horizon_end", "error"),
                            help="ATD's missing-pair convention (default: cap)")
    generative.add_argument("--clip", action="store_true", help="drop predicted events outside the real test window")
    generative.add_argument("--undirected", action="store_true", help="(u, v) and (v, u) are one pair")
    generative.add_argument("--json", action="store_true")
    return generative


def _add_results(commands: argparse._SubParsersAction) -> tuple[Parser, Parser]:
    checking = command(commands, "verify-result", "re-check a result record by re-grading it",
                       run_verify_result, description="re-check a result record: its sha256, the submission's "
                       "sha256 and a re-grade, metric by metric")
    checking.add_argument("record_file", metavar="RECORD", help="the JSON file --record wrote")
    checking.add_argument("submission", metavar="SUBMISSION", help="the Parquet file the record's run graded")
    checking.add_argument("--rtol", type=float, default=0.0, help="relative tolerance per metric (default 0: exact; "
                          "only for a re-grade on another machine or numpy build, whose float sums may differ in "
                          "the last bits)")
    add_hub_read_options(checking)
    checking.add_argument("--json", action="store_true")
    combining = command(commands, "aggregate-results", "several seeds' records as one (mean, std, n)",
                        run_aggregate_results)
    combining.add_argument("records", nargs="+", metavar="RECORD")
    return checking, combining
