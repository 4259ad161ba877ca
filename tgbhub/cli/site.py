"""The site command: the hub's catalogue as a static HTML site."""

from __future__ import annotations

import argparse

from tgbhub.cli.grammar import command, listed
from tgbhub.cli.output import print_json

GROUP = "site"


def run_site_build(args: argparse.Namespace) -> int:
    """Render the catalogue as a static HTML site into OUT and print what was written."""
    from tgbhub.site import build_site

    report = build_site(args.out, family=args.family, with_figures=args.with_figures, cache_dir=args.cache_dir,
                        results=args.results)
    if args.json:
        return print_json({"out": str(report.out), "pages": len(report.pages), "figures": list(report.figures),
                           "figures_skipped": dict(report.figures_skipped)})
    print(f"wrote {len(report.pages)} pages and {len(report.figures)} figures into {report.out} "
          f"(open {report.out / 'index.html'})")
    for name, reason in report.figures_skipped.items():
        print(f"figure skipped: {name}: {reason}")
    return 0


def register(commands: argparse._SubParsersAction) -> list[tuple[str, str]]:
    """Add ``site build``; returns (command, summary) pairs for the main help."""
    site = commands.add_parser("site", description="the hub's catalogue as a static HTML site")
    actions = site.add_subparsers(dest="action", metavar="ACTION", required=True)
    building = command(actions, "build", "render the catalogue as static HTML into OUT", run_site_build)
    building.add_argument("out", metavar="OUT", help="folder to write into (created if missing; pages overwritten)")
    building.add_argument("--family", help="only this family, e.g. chaosnet or tgb")
    building.add_argument("--with-figures", action="store_true", help="draw one figure per dataset the cache already "
                          "holds (needs matplotlib, the plot extra); nothing is built for a figure")
    building.add_argument("--results", metavar="DIR", help="a results repo whose leaderboards/<family>/<name>/<task>"
                          ".parquet fill the leaderboard pages: a checkout, or the git repo `tgbhub leaderboard "
                          "update` writes (e.g. ROOT/datasets/tgbhub/results of a git: hub)")
    building.add_argument("--json", action="store_true")
    return listed(building)
