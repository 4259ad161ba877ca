"""The command line's grammar, shared by every command: the parser, global options accepted before or after any
command, "did you mean" for unknown commands, choices and options, one way to name a dataset, a hub and an output.

The rules (``tests/test_cli_grammar.py`` walks the parser and checks each on every command):

- a dataset is ``FAMILY/NAME[@VERSION]`` wherever one is named (:data:`DATASET`);
- a hub is ``--hub HUB`` (``git:ROOT``, ``hf`` or, for ``publish``, ``mirror:DIR``) with ``--org``, ``--endpoint``
  and ``--token`` beside it (:func:`add_hub_options`);
- ``--out`` is a folder, or a file whose suffix says its format (:func:`parquet_path` refuses any other suffix);
- a file given as a positional argument (a submission, a record) is a file: a folder there is refused, naming the
  file in it, and two positional arguments given in each other's places are called swapped, with the command
  written the right way round (:class:`Kind`, checked by :meth:`Parser.parse_known_args` on every command);
- every command has a one-line summary, and the main help lists them by group on one screen.
"""

from __future__ import annotations

import argparse
import difflib
import itertools
import os
import re
import shlex
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from tgbhub.progress import notice

#: the metavar of every argument that names a dataset
DATASET = "FAMILY/NAME[@VERSION]"
#: options accepted before or after any command (``tgbhub --cache-dir X build N`` = ``tgbhub build N --cache-dir X``)
GLOBAL_OPTIONS = ("--cache-dir", "--offline", "--json", "--quiet")
#: the help of every hub option, one text each, so the commands that take a hub describe it alike
HUB_HELP = {
    "--hub": "git:ROOT (the repos `tgbhub hub serve ROOT` serves) or hf (a Hugging Face Hub: --endpoint, --token)",
    "--org": "the hub organisation (default: $TGBHUB_HUB_ORG, else tgbhub)",
    "--endpoint": "hub URL (default: $TGBHUB_ENDPOINT, else huggingface.co)",
    "--token": "write token for hf (default: $TGBHUB_TOKEN, else $HF_TOKEN)",
}

Handler = Callable[[argparse.Namespace], int]


def _closest(word: str, choices: Iterable[str]) -> str | None:
    found = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return found[0] if found else None


class Parser(argparse.ArgumentParser):
    """An argparse parser whose mistakes are one line naming the bad word, a close match and where help is; a
    command's parser also keeps its one-line ``summary`` for the main help."""

    summary = ""

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        """argparse's parse, then the checks every command shares on its positional arguments (:func:`check_kinds`):
        a folder where a file belongs, two arguments in each other's places. A word the command does not know is
        reported first (by the caller), so these run only when every word was taken."""
        parsed, extras = super().parse_known_args(args, namespace)
        if not extras:
            check_kinds(self, parsed, list(sys.argv[1:] if args is None else args))
        return parsed, extras

    def error(self, message: str) -> NoReturn:
        """Print ``tgbhub: error: ...`` with a suggestion and exit 2 (argparse's contract for usage errors)."""
        invalid = re.search(r"argument (\S+): invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if invalid:
            what, word, listed = invalid.groups()
            choices = re.findall(r"'([^']*)'", listed) or [c.strip() for c in listed.split(",")]
            if what in ("COMMAND", "ACTION"):
                message = f"unknown command {word!r}{did_you_mean(word, choices)}"
            else:
                message = f"{what} takes one of {', '.join(choices)}, not {word!r}{did_you_mean(word, choices)}"
        fail(f"{message}; see `{self.prog} --help`")


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``" (did you mean 'list'?)"`` for the closest of ``choices``, else ``""``."""
    close = _closest(word, choices)
    return f" (did you mean {close!r}?)" if close else ""


def fail(message: str) -> NoReturn:
    """Exit 2 with one line on stderr, as every usage error does."""
    print(f"tgbhub: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def refuse_unknown(parser: argparse.ArgumentParser, extras: Sequence[str]) -> NoReturn:
    """Exit 2 naming the first word ``parser`` (the command's own) does not know, with its closest option."""
    word = extras[0]
    options = [o for action in parser._actions for o in action.option_strings]  # no public index of a parser's
    if word.startswith("-"):
        option = word.split("=")[0]
        fail(f"{parser.prog} has no option {option!r}{did_you_mean(option, options)}; see `{parser.prog} --help`")
    fail(f"{parser.prog}: unexpected argument {word!r}; see `{parser.prog} --help`")


def command(commands: argparse._SubParsersAction, name: str, summary: str, run: Handler,
            **options: Any) -> Parser:
    """Add the command ``name`` with its one-line ``summary`` (the main help's line; its own help's first line
    unless ``description`` says more) and its handler."""
    parser = commands.add_parser(name, description=options.pop("description", summary), **options)
    parser.summary = summary
    parser.set_defaults(run=run, leaf=parser)
    return parser


def listed(*parsers: Parser) -> list[tuple[str, str]]:
    """``(command, summary)`` of each parser, as the main help lists them (``hub serve``, ``list``)."""
    return [(parser.prog.split(" ", 1)[1], parser.summary) for parser in parsers]


def add_dataset(parser: argparse.ArgumentParser, dest: str = "name", **options: Any) -> None:
    """The dataset argument, in the one spelling every command uses."""
    parser.add_argument(dest, metavar=DATASET, **{"help": "the dataset, e.g. t-grab/ce-64", **options})


def add_hub_options(parser: argparse.ArgumentParser, required: bool = True, hub_help: str | None = None) -> None:
    """``--hub HUB`` and its access options; ``--to`` is still read, with a notice."""
    parser.add_argument("--hub", "--to", dest="hub", metavar="HUB", required=required, action=_HubOption,
                        help=hub_help or HUB_HELP["--hub"])
    for option in ("--org", "--endpoint", "--token"):
        parser.add_argument(option, help=HUB_HELP[option])


def add_hub_read_options(parser: argparse.ArgumentParser) -> None:
    """``--org``, ``--endpoint`` and a read ``--token``: where a command reads a hub's published results."""
    parser.add_argument("--org", help=HUB_HELP["--org"])
    parser.add_argument("--endpoint", help=HUB_HELP["--endpoint"])
    parser.add_argument("--token", help="read token for a private hub (default: $TGBHUB_TOKEN, else $HF_TOKEN)")


class _HubOption(argparse.Action):
    """``--hub``, or the older ``--to`` with a notice that names the new spelling."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        if option_string == "--to":
            notice(f"--to is now --hub: `{parser.prog} --hub {values}`")
        setattr(namespace, self.dest, values)


def add_scheduler_options(parser: argparse.ArgumentParser) -> None:
    """``--scheduler`` and ``--retries``: one task per item on a Dask cluster."""
    from tgbhub.scale import DEFAULT_RETRIES, SCHEDULER_FORMS  # the backend's own defaults; dask loads on use only

    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help=f"run one task per item on a Dask cluster: {SCHEDULER_FORMS}; the cache and files must "
                        "be on a filesystem every worker shares (needs the dask extra)")
    parser.add_argument("--retries", type=int, default=DEFAULT_RETRIES, help="with --scheduler: reruns of a task "
                        "that crashed unexpectedly (default: %(default)s; a killed worker's task is rerun elsewhere "
                        "regardless)")


def name_list(text: str | None, option: str, family: str) -> list[str] | None:
    """A comma-separated ``--datasets`` value as full ``family/name`` names; a name written without its family (the
    older form) is read as ``family``'s, with a notice."""
    if not text:
        return None
    names = [n.strip() for n in text.split(",") if n.strip()]
    bare = [n for n in names if "/" not in n]
    if bare:
        notice(f"{option} takes FAMILY/NAME names: read {bare[0]!r} as '{family}/{bare[0]}'")
    return [n if "/" in n else f"{family}/{n}" for n in names]


def parquet_path(text: str) -> str:
    """An ``--out`` that is a Parquet file: its suffix must say so.

    Raises:
        argparse.ArgumentTypeError: for another suffix (the file would be Parquet under a misleading name).
    """
    if not text.endswith(".parquet"):
        raise argparse.ArgumentTypeError(f"{text!r} is written as Parquet: name it *.parquet "
                                         f"(e.g. {text.rsplit('.', 1)[0] if '.' in text else text}.parquet)")
    return text


@dataclass(frozen=True)
class Kind:
    """What a positional argument holds, as far as the words alone (and whether a file exists) tell: enough to see
    that two arguments were given in each other's places, or a folder where a file belongs.

    ``label`` names it in messages (``a dataset``); ``looks_like(word)`` says whether ``word`` could be one;
    ``suffix`` is a file's (a folder given instead is refused, naming the files with that suffix in it).
    """

    label: str
    looks_like: Callable[[str], bool]
    suffix: str | None = None


#: the suffixes of the files positional arguments take: a word with one of them is that kind of file and no other
FILE_SUFFIXES = (".parquet", ".json")


def _is_file_of(suffix: str) -> Callable[[str], bool]:
    """A word that names a ``suffix`` file: it has that suffix, or it is an existing file with no other known one."""
    def looks_like(word: str) -> bool:
        if word.endswith(suffix):
            return True
        return os.path.isfile(word) and not word.endswith(FILE_SUFFIXES)

    return looks_like


def _is_dataset(word: str) -> bool:
    """``FAMILY/NAME[@VERSION]`` as the registry spells it, and not a file's name."""
    from tgbhub.errors import InvalidNameError
    from tgbhub.registry import parse_reference

    if word.endswith(FILE_SUFFIXES) or os.path.isfile(word):
        return False
    try:
        parse_reference(word)
    except InvalidNameError:
        return False
    return True


def _is_model(word: str) -> bool:
    """A model or baseline name (``edgebank``, ``edgebank-tw:memory=dyglib``): no ``/``, not a file."""
    return "/" not in word and not word.endswith(FILE_SUFFIXES) and not os.path.exists(word)


DATASET_KIND = Kind("a dataset", _is_dataset)
MODEL_KIND = Kind("a model name", _is_model)
PARQUET_KIND = Kind("a Parquet file", _is_file_of(".parquet"), ".parquet")
RECORD_KIND = Kind("a result record (JSON)", _is_file_of(".json"), ".json")
MODEL_OR_PARQUET_KIND = Kind("a model name or a Parquet file",
                             lambda word: _is_model(word) or _is_file_of(".parquet")(word), ".parquet")
#: the kind of a positional argument by its metavar, so every command's arguments are checked without each
#: command declaring it (a command may still set its own with :func:`holds`)
KINDS_BY_METAVAR = {DATASET: DATASET_KIND, "FILE": PARQUET_KIND, "SUBMISSION": PARQUET_KIND, "RECORD": RECORD_KIND,
                    "MODEL": MODEL_KIND}


def holds(action: argparse.Action, kind: Kind) -> argparse.Action:
    """Declare what the positional ``action`` holds (see :class:`Kind`); returns it."""
    action.kind = kind  # type: ignore[attr-defined]  # argparse's Action has no field for it
    return action


def kind_of(action: argparse.Action) -> Kind | None:
    """What a positional argument holds: its declared :class:`Kind`, else the one its metavar (or, for ``model``,
    its name) says; ``None`` for an option or an argument of no known kind."""
    if action.option_strings:
        return None
    declared = getattr(action, "kind", None)
    if isinstance(declared, Kind):
        return declared
    return KINDS_BY_METAVAR.get(str(action.metavar or action.dest.upper()))


def check_kinds(parser: argparse.ArgumentParser, parsed: argparse.Namespace, words: Sequence[str]) -> None:
    """Refuse, in one line, a folder given where a file belongs, and two positional arguments given in each other's
    places (each would be valid in the other's: ``tgbhub evaluate preds.parquet t-grab/pdet-2-16``), with the
    command written the right way round.

    Raises:
        SystemExit: 2, after the line on stderr (argparse's contract for usage errors).
    """
    given = []
    for action in parser._actions:  # argparse keeps no public list of a parser's positionals
        kind = kind_of(action)
        value = getattr(parsed, action.dest, None)
        if kind is None or value is None:
            continue
        values = value if isinstance(value, list) else [value]
        for word in values:
            if kind.suffix is not None and isinstance(word, str) and os.path.isdir(word):
                parser.error(_folder_message(parser.prog, action, kind, word))
        given.append((action, kind, values))
    for (first, first_kind, firsts), (second, second_kind, seconds) in itertools.pairwise(given):
        if len(firsts) != 1 or len(seconds) != 1 or firsts[0] == seconds[0]:
            continue  # a swap is two single words; several files in a row are not one
        a, b = firsts[0], seconds[0]
        as_given = first_kind.looks_like(a) and second_kind.looks_like(b)
        if as_given or not (first_kind.looks_like(b) and second_kind.looks_like(a)):
            continue
        fixed = list(words)
        if a in fixed and b in fixed:
            i, j = fixed.index(a), fixed.index(b)
            fixed[i], fixed[j] = b, a
        parser.error(f"the arguments look swapped: {a!r} is {second_kind.label} and {b!r} is {first_kind.label}; "
                     f"`{parser.prog}` takes {_metavar(first)} first, then {_metavar(second)}: write "
                     f"`{parser.prog} {shlex.join(fixed)}`")


def _metavar(action: argparse.Action) -> str:
    return str(action.metavar or action.dest.upper())


def _folder_message(prog: str, action: argparse.Action, kind: Kind, folder: str) -> str:
    """``FILE '.' is a folder ...``, naming the file(s) in it that would fit."""
    suffix = kind.suffix or ""
    try:
        inside = sorted(entry.name for entry in os.scandir(folder) if entry.name.endswith(suffix) and entry.is_file())
    except OSError:
        inside = []
    said = f"{_metavar(action)} {folder!r} is a folder, but `{prog}` takes {kind.label} there"
    if len(inside) == 1:
        return f"{said}: pass the one in it, {os.path.join(folder, inside[0])}"
    if inside:
        shown = ", ".join(os.path.join(folder, name) for name in inside[:3]) + (", ..." if len(inside) > 3 else "")
        return f"{said}: pass one of the {len(inside)} *{suffix} files in it ({shown})"
    return f"{said}, and it holds no *{suffix} file: pass the file itself"


def accept_global_options(parsers: Iterable[argparse.ArgumentParser]) -> None:
    """Let every command take the global options after its name too. A command's own definition keeps its help but
    gets no default of its own (``SUPPRESS``), so an option given before the command is not reset by the command's
    default."""
    for sub in parsers:
        for option in GLOBAL_OPTIONS:
            action = sub._option_string_actions.get(option)  # argparse keeps no public index of a parser's options
            if action is not None:
                action.default = argparse.SUPPRESS
            elif option == "--cache-dir":
                sub.add_argument(option, metavar="DIR", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
            else:
                sub.add_argument(option, action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def leaves(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every command parser below ``parser`` that runs something (``hub serve``, not ``hub``)."""
    found: list[argparse.ArgumentParser] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # aliases map to the same parser
                found.extend(leaves(sub) if _has_commands(sub) else [sub])
    return found


def _has_commands(parser: argparse.ArgumentParser) -> bool:
    return any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)
