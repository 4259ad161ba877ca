"""``python -m tgbhub.compat.tgb run SCRIPT [ARGS...]``: run one of TGB's scripts unchanged, its ``tgb`` imports
served by :mod:`tgbhub.compat.tgb` for this process only (:func:`tgbhub.compat.tgb.runner.run_script`)."""

from __future__ import annotations

import argparse
import sys

from tgbhub.compat.tgb.runner import run_script


def parser() -> argparse.ArgumentParser:
    """The command line: ``run SCRIPT [ARGS...]`` (everything after SCRIPT goes to the script)."""
    top = argparse.ArgumentParser(prog="python -m tgbhub.compat.tgb",
                                  description="Run a TGB script unchanged on tgbhub's verified data, without py-tgb.")
    commands = top.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run SCRIPT with ARGS, its tgb imports served by tgbhub.compat.tgb")
    run.add_argument("script", help="the Python file, e.g. examples/linkproppred/tgbl-wiki/edgebank.py")
    run.add_argument("args", nargs=argparse.REMAINDER, help="the script's own arguments")
    return top


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` and run the script.

    Returns:
        0 once the script finished (its own ``sys.exit`` passes through).

    Raises:
        FileNotFoundError: if the script is not a file.
    """
    options = parser().parse_args(argv)
    run_script(options.script, options.args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
