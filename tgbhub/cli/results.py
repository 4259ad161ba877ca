"""Results commands: submit a submission to a hub, show, update and seed its leaderboards."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from tgbhub.cli.grammar import (
    Parser,
    add_dataset,
    add_hub_options,
    add_hub_read_options,
    add_scheduler_options,
    command,
    listed,
    name_list,
    notice,
)
from tgbhub.cli.output import print_json
from tgbhub.errors import InvalidNameError
from tgbhub.results.display import terminal_safe

GROUP = "results"


def run_submit(args: argparse.Namespace) -> int:
    """Push a submission (and its claimed record) into the hub's submissions repo; the hub's ``tgbhub leaderboard
    update`` grades it, never this command."""
    from tgbhub.results.submissions import submit

    done = submit(args.name, args.submission, to=args.hub, model=args.model, record=args.record, paper=args.paper,
                  task=args.task, split=args.split, seed=args.seed, org=args.org, endpoint=args.endpoint,
                  token=args.token, cache_dir=args.cache_dir, offline=args.offline or None)
    if args.json:
        return print_json(done.to_json())
    print(terminal_safe(f"{done.status}: {done.repo} {done.folder} ({done.dataset}, task {done.task})"))
    return 0


def run_show(args: argparse.Namespace) -> int:
    """Print a dataset's leaderboard."""
    from tgbhub.results import leaderboards

    rows = leaderboards.leaderboard(args.name, args.task, endpoint=args.endpoint, org=args.org, token=args.token,
                                    cache_dir=args.cache_dir)
    if args.json:
        return print_json(rows)
    print("\n".join(leaderboards.table_lines(rows)))
    return 0


def run_update(args: argparse.Namespace) -> int:
    """Grade every new submission on the hub and commit records and boards (the hub's maintainer)."""
    from tgbhub.results import grader

    report = grader.update(args.hub, org=args.org, endpoint=args.endpoint, token=args.token,
                           scheduler=args.scheduler, retries=args.retries, cache_dir=args.cache_dir,
                           offline=args.offline or None, time_limit=args.time_limit)
    if args.json:
        return print_json(report.to_json())
    print("\n".join(report.lines()))
    return 0


def run_seed(args: argparse.Namespace) -> int:
    """Submit every heuristic baseline of a family, trained runs (``--runs``), or train the catalogued
    reproductions and submit them (``--trained``), to the hub."""
    from tgbhub.results import leaderboards

    if args.runs and args.trained:
        raise InvalidNameError("--runs submits runs trained already; --trained trains the catalogued reproductions "
                               "and submits them: use one or the other")
    trained_only = [option for option, value in (("--seeds", args.seeds), ("--epochs", args.epochs),
                                                 ("--limit-batches", args.limit_batches), ("--out", args.out),
                                                 ("--device", args.device)) if value is not None]
    if trained_only and not args.trained:
        raise InvalidNameError(f"{trained_only[0]} sets how --trained trains; add --trained, or drop "
                               f"{trained_only[0]}")
    family = args.family or ("t-grab" if not args.trained else None)
    datasets = name_list(args.datasets, "--datasets", family or "t-grab")
    models = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else None
    access = {"org": args.org, "endpoint": args.endpoint, "token": args.token, "cache_dir": args.cache_dir,
              "offline": args.offline or None}
    if args.runs and (datasets or models):
        raise InvalidNameError("--runs submits the trained runs in those folders; --datasets and --models choose "
                               "heuristics to run: use one or the other")
    if args.trained:
        done = leaderboards.seed_trained(args.hub, family=family, datasets=datasets, models=models,
                                         seeds=_seeds(args.seeds), epochs=args.epochs,
                                         limit_batches=args.limit_batches, device=args.device or "auto",
                                         out=args.out, **access)
    elif args.runs:
        done = leaderboards.seed_runs(args.hub, args.runs, **access)
    else:
        done = leaderboards.seed_baselines(args.hub, family=str(family), datasets=datasets, models=models, **access)
    if args.json:
        return print_json([item.to_json() for item in done])
    for item in done:
        print(terminal_safe(f"{item.status}: {item.dataset} {item.task} {item.folder.rsplit('/', 1)[1]}"))
    return 0


def _seeds(text: str | None) -> list[int] | None:
    """``--seeds 42,43`` as integers.

    Raises:
        InvalidNameError: for an item that is not an integer.
    """
    if text is None:
        return None
    seeds = []
    for word in (w.strip() for w in text.split(",")):
        try:
            seeds.append(int(word))
        except ValueError:
            raise InvalidNameError(f"--seeds {text!r}: {word!r} is not an integer seed; write e.g. --seeds "
                                   "42,43,44") from None
    return seeds


def read_old_leaderboard(argv: Sequence[str]) -> list[str]:
    """``argv`` with the older leaderboard spellings rewritten, each with a notice: ``leaderboard NAME`` is
    ``leaderboard show NAME`` and ``leaderboard seed-baselines`` is ``leaderboard seed``."""
    words = list(argv)
    if "leaderboard" not in words:
        return words
    at = words.index("leaderboard") + 1
    if at < len(words) and words[at] == "seed-baselines":
        notice("`tgbhub leaderboard seed-baselines` is now `tgbhub leaderboard seed`")
        words[at] = "seed"
    elif at < len(words) and "/" in words[at]:
        notice(f"`tgbhub leaderboard {words[at]}` is now `tgbhub leaderboard show {words[at]}`")
        words.insert(at, "show")
    return words


def register(commands: argparse._SubParsersAction) -> list[tuple[str, str]]:
    """Add ``submit`` and ``leaderboard show|update|seed``; returns (command, summary) pairs for the main help."""
    submitting = _add_submit(commands)
    board = commands.add_parser("leaderboard", description="a dataset's leaderboard on a hub: show it, or (the hub's "
                                "maintainer) grade new submissions into the boards, or seed them with baselines")
    actions = board.add_subparsers(dest="action", metavar="ACTION", required=True)
    return listed(submitting, _add_show(actions), _add_update(actions), _add_seed(actions))


def _add_submit(commands: argparse._SubParsersAction) -> Parser:
    submitting = command(commands, "submit", "push a submission to a hub, to be graded there", run_submit,
                         description="push a submission (and its claimed record) to a hub's submissions repo, to be "
                         "graded by the hub's `tgbhub leaderboard update`")
    add_dataset(submitting)
    submitting.add_argument("submission", metavar="SUBMISSION", help="the Parquet file, in the task's schema")
    add_hub_options(submitting)
    submitting.add_argument("--model", required=True, metavar="M", help="the model's name on the board")
    submitting.add_argument("--record", metavar="R", help="the result record --record wrote for this file (your "
                            "claim; the grader re-grades and flags a claim that differs)")
    submitting.add_argument("--paper", metavar="URL", help="the paper or code to cite")
    submitting.add_argument("--task", help="task name (default: the task whose columns the file has)")
    submitting.add_argument("--split", help="graded split: the task's report split, the one its board ranks (the "
                            "default; any other is refused)")
    submitting.add_argument("--seed", type=int, metavar="S", help="the run's seed; seeds of one model aggregate "
                            "into one row (default: the record's)")
    submitting.add_argument("--json", action="store_true")
    return submitting


def _add_show(actions: argparse._SubParsersAction) -> Parser:
    showing = command(actions, "show", "print a dataset's leaderboard", run_show)
    add_dataset(showing)
    showing.add_argument("--task", help="task name (default: the dataset's default task)")
    add_hub_read_options(showing)
    showing.add_argument("--json", action="store_true", help="print the rows as JSON")
    return showing


def _add_update(actions: argparse._SubParsersAction) -> Parser:
    updating = command(actions, "update", "grade new submissions into the boards (maintainer)", run_update,
                       description="grade every new submission and commit records and boards (the hub's maintainer)")
    add_hub_options(updating, hub_help="git:ROOT or hf: where the submissions and results repos are")
    add_scheduler_options(updating)
    updating.add_argument("--time-limit", type=float, metavar="SECONDS", help="how long one submission may take to "
                          "grade before it is stopped and rejected (default: 300; not applied on a --scheduler "
                          "cluster)")
    updating.add_argument("--json", action="store_true")
    return updating


def _add_seed(actions: argparse._SubParsersAction) -> Parser:
    from tgbhub.results.reproductions import PLANS  # a catalogue of plain values: cheap for --help

    seeding = command(actions, "seed", "submit baselines, trained runs or reproductions", run_seed,
                      description="run and submit every heuristic baseline of a family, submit trained runs "
                      "(--runs), or train the catalogued reproductions and submit them (--trained)")
    add_hub_options(seeding, hub_help="git:ROOT or hf: where to submit")
    families = ", ".join(PLANS)
    seeding.add_argument("--family", help="the family whose datasets to run (default: t-grab; with --trained: "
                         f"every family with reproductions, {families})")
    seeding.add_argument("--datasets", metavar="FAMILY/NAME,...",
                         help="comma-separated subset, e.g. t-grab/ce-64,t-grab/pdet-2-4 (default: all; with "
                         "--trained: the catalogue's)")
    seeding.add_argument("--models", help="comma-separated baselines (default: every baseline of each task; with "
                         "--trained: the catalogue's, " + "; ".join(",".join(p.models) for p in PLANS.values()) + ")")
    seeding.add_argument("--runs", nargs="+", metavar="DIR", help="instead: submit these trained runs (`tgbhub train "
                         "--out DIR --record DIR/record.json` folders), each with its record as the claim")
    seeding.add_argument("--trained", action="store_true", help="instead: train the catalogued reproductions "
                         "(docs/leaderboards.md) and submit each run with its record")
    seeding.add_argument("--seeds", metavar="S,...", help="with --trained: comma-separated seeds (default: the "
                         "catalogue's, " + "; ".join(",".join(map(str, p.seeds)) for p in PLANS.values()) + ")")
    seeding.add_argument("--epochs", type=int, metavar="N", help="with --trained: maximum epochs (default: the "
                         "catalogue's)")
    seeding.add_argument("--limit-batches", type=int, metavar="N", help="with --trained: cap train batches per "
                         "epoch (smoke runs; not comparable to a published number)")
    seeding.add_argument("--device", help="with --trained: auto (the default: CUDA when present, else CPU), cpu, "
                         "cuda or cuda:N")
    seeding.add_argument("--out", metavar="DIR", help="with --trained: keep the run folders here (default: a "
                         "temporary folder); a folder holding the same run's record is submitted, not trained again")
    seeding.add_argument("--json", action="store_true")
    return seeding
