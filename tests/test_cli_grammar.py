"""The command line's grammar (tgbhub/cli/grammar.py), checked on every command by walking the parser: one spelling
of a dataset, of a hub and of an output; "did you mean" for every mistyped command, option and choice; a main help
that fits one screen; and no heavy import for ``--help`` or ``list``."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from tgbhub.cli import build_parser, main
from tgbhub.cli.grammar import DATASET, GLOBAL_OPTIONS, leaves

PARSER = build_parser()
LEAVES = leaves(PARSER)
#: every command, as typed: ``list``, ``hub serve``
COMMANDS = [leaf.prog.split(" ", 1)[1] for leaf in LEAVES]


def _actions(leaf: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in leaf._actions if a.help is not argparse.SUPPRESS or a.option_strings]


def _option(leaf: argparse.ArgumentParser, name: str) -> argparse.Action | None:
    return leaf._option_string_actions.get(name)


def test_the_walk_reaches_every_command() -> None:
    assert len(COMMANDS) == len(set(COMMANDS)) >= 22
    assert {"list", "info", "import", "hub serve", "leaderboard show", "leaderboard update", "leaderboard seed",
            "site build", "generative"} <= set(COMMANDS)


@pytest.mark.parametrize("leaf", LEAVES, ids=COMMANDS)
def test_a_dataset_is_family_slash_name_in_every_command(leaf: argparse.ArgumentParser) -> None:
    for action in leaf._actions:
        if not action.option_strings and action.dest in ("name", "names"):
            assert action.metavar == DATASET, (leaf.prog, action.dest)
        if "--datasets" in action.option_strings:
            assert action.metavar == "FAMILY/NAME,...", leaf.prog
        if action.metavar and "NAME" in str(action.metavar) and action.dest not in ("name", "names", "datasets"):
            pytest.fail(f"{leaf.prog}: {action.dest} names a dataset another way ({action.metavar})")


@pytest.mark.parametrize("leaf", LEAVES, ids=COMMANDS)
def test_a_hub_is_one_option_with_its_access_options(leaf: argparse.ArgumentParser) -> None:
    hub = _option(leaf, "--hub")
    to = _option(leaf, "--to")
    assert to is hub, leaf.prog  # --to is only the older spelling of --hub
    if hub is None:
        return
    assert hub.option_strings[0] == "--hub" and hub.dest == "hub" and hub.metavar == "HUB"
    for option in ("--org", "--endpoint", "--token"):
        assert _option(leaf, option) is not None, (leaf.prog, option)


@pytest.mark.parametrize("leaf", LEAVES, ids=COMMANDS)
def test_an_out_is_a_folder_or_a_file_whose_suffix_says_its_format(leaf: argparse.ArgumentParser) -> None:
    out = _option(leaf, "--out")
    if out is None:
        return
    assert out.metavar == "DIR" or out.metavar == "FILE.parquet", leaf.prog
    if out.metavar == "FILE.parquet":
        with pytest.raises(argparse.ArgumentTypeError, match="name it \\*.parquet"):
            out.type("scores.csv")  # type: ignore[misc]
        assert out.type("scores.parquet") == "scores.parquet"  # type: ignore[misc]


@pytest.mark.parametrize("leaf", LEAVES, ids=COMMANDS)
def test_every_command_has_a_summary_and_takes_the_global_options(leaf: argparse.ArgumentParser) -> None:
    assert 0 < len(leaf.summary) <= 60, leaf.prog  # type: ignore[attr-defined]
    for option in GLOBAL_OPTIONS:
        assert _option(leaf, option) is not None, (leaf.prog, option)


def _required(leaf: argparse.ArgumentParser) -> list[str]:
    """Words that satisfy ``leaf``'s required arguments, so that only the mistyped option is wrong."""
    words = []
    for action in leaf._actions:
        if not action.option_strings and action.nargs not in ("?", "*") and action.help is not argparse.SUPPRESS:
            words.append("t-grab/ce-4" if action.metavar == DATASET else "x")
        elif action.option_strings and action.required:
            words += [action.option_strings[0], action.choices[0] if action.choices else "x"]  # type: ignore[index]
    return words


def _own_option(leaf: argparse.ArgumentParser) -> str | None:
    """The command's first option of its own long enough that dropping a letter leaves a close match."""
    own = [o for a in leaf._actions for o in a.option_strings
           if o.startswith("--") and len(o) > 6 and o not in GLOBAL_OPTIONS and o not in ("--help", "--to")]
    return own[0] if own else None


#: every command with an option of its own (aggregate-results and doctor have none, besides the global ones)
WITH_OPTIONS = [leaf for leaf in LEAVES if _own_option(leaf) is not None]


def test_only_commands_without_options_of_their_own_are_left_out_of_the_typo_walk() -> None:
    assert {leaf.prog for leaf in LEAVES} - {leaf.prog for leaf in WITH_OPTIONS} <= {
        "tgbhub aggregate-results", "tgbhub doctor", "tgbhub info", "tgbhub verify-result"}


@pytest.mark.parametrize("leaf", WITH_OPTIONS, ids=[leaf.prog.split(" ", 1)[1] for leaf in WITH_OPTIONS])
def test_a_mistyped_option_gets_its_closest_one(leaf: argparse.ArgumentParser, capsys) -> None:
    option = _own_option(leaf)
    assert option is not None
    typo = option[:3] + option[4:]  # one letter dropped
    with pytest.raises(SystemExit) as exited:
        main([*leaf.prog.split()[1:], *_required(leaf), typo])
    err = capsys.readouterr().err.strip().splitlines()
    assert exited.value.code == 2 and len(err) == 1 and f"did you mean {option!r}?" in err[0], err


@pytest.mark.parametrize("argv, words", [
    (["lst"], "unknown command 'lst' (did you mean 'list'?)"),
    (["leaderboard", "shw", "t-grab/ce-4"], "unknown command 'shw' (did you mean 'show'?)"),
    (["hub", "serv", "ROOT"], "unknown command 'serv' (did you mean 'serve'?)"),
    (["export", "t-grab/ce-4", "--format", "dyglb", "--out", "x"], "--format takes one of dyglib, ml, tgb-negatives, "
     "not 'dyglb' (did you mean 'dyglib'?)"),
    (["baseline", "edgebank", "t-grab/ce-4", "--out", "scores.csv"], "'scores.csv' is written as Parquet: name it "
     "*.parquet (e.g. scores.parquet)"),
])
def test_a_usage_mistake_is_one_line_with_a_suggestion(argv, words, capsys) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert exited.value.code == 2 and len(err) == 1 and words in err[0], err


def test_the_main_help_fits_one_screen_and_lists_every_command_by_group(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert len(lines) <= 40 and max(len(line) for line in lines) <= 100
    listed = {line.strip().split("  ")[0] for line in lines if line.startswith("    ")}
    listed |= {" ".join(line.split()[:2]) for line in lines if line.startswith("    ")}
    assert set(COMMANDS) <= listed
    for group in ("datasets:", "grading and training:", "hub:", "results:", "site and figures:"):
        assert f"  {group}" in lines


@pytest.mark.parametrize("argv, new", [
    (["import", "tgb", "tgbl-wiki", "--offline"], "`tgbhub import tgb/tgbl-wiki`"),
    (["leaderboard", "t-grab/ce-4", "--endpoint", "http://127.0.0.1:9"], "`tgbhub leaderboard show t-grab/ce-4`"),
    (["publish", "t-grab", "--version", "9.9.9", "--to", "mirror:MISSING"], "--to is now --hub"),
])
def test_an_older_spelling_still_works_with_a_notice(argv, new, tmp_path, capsys) -> None:
    """The older form is read (the command then fails for its own reasons here: nothing to import offline, no hub,
    no such version) and a notice names the new spelling."""
    argv = [str(tmp_path / "m") if a == "mirror:MISSING" else a for a in argv]
    main(["--cache-dir", str(tmp_path / "cache"), *argv])
    err = capsys.readouterr().err
    assert "tgbhub: notice:" in err and new in err, err


def test_quiet_silences_the_notice_of_an_older_spelling(tmp_path, capsys) -> None:
    main(["--cache-dir", str(tmp_path), "--quiet", "import", "tgb", "tgbl-wiki", "--offline"])
    assert "tgbhub: notice:" not in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--help"], ["list"], ["info", "t-grab/ce-4"]])
def test_help_and_listing_import_no_heavy_module(argv) -> None:
    code = ("import sys, io, contextlib; from tgbhub.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n"
            f"        main({argv!r})\n"
            "    except SystemExit:\n"
            "        pass\n"
            "print(sorted(m for m in ('torch', 'numba', 'pyarrow.compute', 'dask', 'matplotlib', 'jinja2') "
            "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr
