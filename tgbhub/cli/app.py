"""The ``tgbhub`` command: the parser assembled from the command groups, and :func:`main`, which runs one command
and turns every failure into one line and an exit code."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TextIO

from tgbhub.cli import datasets, grading, hub, plot, results, site, training
from tgbhub.cli.grammar import Parser, accept_global_options, leaves, notice, refuse_unknown
from tgbhub.config import OFFLINE_ENV
from tgbhub.errors import CacheWriteError, TgbhubError, TrainingPaused
from tgbhub.progress import NO_PROGRESS_ENV, QUIET_ENV
from tgbhub.version import __version__

#: the command groups, in the order the main help lists them
GROUPS = (datasets, grading, training, hub, results, site, plot)
USAGE = "tgbhub [--cache-dir DIR] [--offline] [--json] [--quiet] COMMAND ..."


def build_parser() -> argparse.ArgumentParser:
    """The whole command line: global options, then one subcommand per command of every group."""
    parser = Parser(prog="tgbhub", usage=USAGE, formatter_class=argparse.RawDescriptionHelpFormatter, add_help=False)
    options = parser.add_argument_group("global options (before or after the command)")
    options.add_argument("-h", "--help", action="help", help="show this help and exit")
    options.add_argument("--version", action="version", version=f"tgbhub {__version__}")
    options.add_argument("--cache-dir", metavar="DIR", help="cache root (default: $TGBHUB_CACHE, else a user folder)")
    options.add_argument("--offline", action="store_true", help="open no socket (as TGBHUB_OFFLINE=1)")
    options.add_argument("--json", action="store_true", help="print JSON where the command has a JSON form")
    options.add_argument("--quiet", action="store_true", help="no progress lines or notices on stderr")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, help=argparse.SUPPRESS,
                                     parser_class=Parser, prog="tgbhub")
    listed: dict[str, list[tuple[str, str]]] = {}
    for group in GROUPS:  # modules may share a heading (``train`` is listed with the grading commands)
        listed.setdefault(group.GROUP, []).extend(group.register(commands))
    width = max(len(name) for pairs in listed.values() for name, _ in pairs)
    parser.description = "\n".join([
        "The dataset hub for temporal-graph learning; `tgbhub COMMAND --help` gives a command's options.",
        *(f"  {group}:\n" + "\n".join(f"    {name:<{width}}  {summary}" for name, summary in pairs)
          for group, pairs in listed.items())])
    accept_global_options(leaves(parser))
    return parser


def read_old_spellings(argv: Sequence[str]) -> list[str]:
    """``argv`` with the older spellings rewritten, each with a notice: ``leaderboard NAME`` (now ``leaderboard
    show NAME``), ``leaderboard seed-baselines`` (``leaderboard seed``) and ``counterfactual NAME --generative
    FILE`` (``generative NAME FILE``)."""
    words = results.read_old_leaderboard(argv)
    if "counterfactual" in words and "--generative" in words[:-1]:
        at = words.index("--generative")
        predictions = words[at + 1]
        del words[at:at + 2]
        words[words.index("counterfactual")] = "generative"
        words.append(predictions)
        notice(f"`tgbhub counterfactual NAME --generative {predictions}` is now `tgbhub generative NAME "
               f"{predictions}`")
    return words


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line parsed; exits 2 with one line (and a close match) on a mistake. ``--quiet`` already holds
    here, for the notices an older spelling prints."""
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    with _environment({QUIET_ENV: "1"} if "--quiet" in words else {}):
        args, extras = parser.parse_known_args(read_old_spellings(words))
        if extras:
            refuse_unknown(getattr(args, "leaf", parser), extras)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``tgbhub`` command; returns its exit code: 0 done, 1 a check that failed, 2 an error (one line on
    stderr), 3 a paused run, 130 interrupted, 141 a closed output pipe."""
    args = parse(argv)
    try:
        with _one_line_warnings(), _environment(_settings(args)):
            code = args.run(args)
        sys.stdout.flush()  # a closed pipe shows up here, inside the handler, not at interpreter exit
        return code
    except TrainingPaused as exc:  # not a failure: a scheduler tells "run again" (3) from "broken" (2)
        print(f"tgbhub: paused: {exc}", file=sys.stderr)
        return 3
    except TgbhubError as exc:
        print(f"tgbhub: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # `tgbhub list | head` closed our stdout: stop quietly; point stdout at devnull so the exit flush is silent.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:  # after BrokenPipeError, which is one
        if not CacheWriteError.applies(exc):
            raise
        print(f"tgbhub: error: {CacheWriteError('the output', exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tgbhub: interrupted (nothing half-written takes its final name)", file=sys.stderr)
        return 130


def _one_line_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                      file: TextIO | None = None, line: str | None = None) -> None:
    """On the command line a warning is a message for a person, not a source location."""
    print(f"tgbhub: warning: {message}", file=file or sys.stderr)


@contextmanager
def _one_line_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.showwarning = _one_line_warning
        yield


@contextmanager
def _environment(settings: Mapping[str, str]) -> Iterator[None]:
    """Global options that are environment settings hold while the command runs and are restored after, for
    in-process callers."""
    before = {key: os.environ.get(key) for key in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _settings(args: argparse.Namespace) -> dict[str, str]:
    """``--offline``: TGBHUB_OFFLINE=1; ``--quiet``: no progress lines, no notices."""
    settings = {OFFLINE_ENV: "1"} if args.offline else {}
    if args.quiet:
        settings.update({NO_PROGRESS_ENV: "1", QUIET_ENV: "1"})
    return settings
