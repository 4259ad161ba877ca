"""The site command: the hub's catalogue as a static HTML site."""

from __future__ import annotations

import argparse

from tgbhub.cli.grammar import command, listed
from tgbhub.cli.output import print_json

GROUP = "site and figures"


def run_site_build(args: argparse.Namespace) -> int:
    """Render the catalogue as a static HTML site into OUT and print what was written."""
    from tgbhub.site import build_site

    # a skipped figure is a FigureWarning: one line on stderr (main turns warnings into lines), never on stdout
    report = build_site(args.out, family=args.family, figures=not args.no_figures, require_figures=args.with_figures,
                        cache_dir=args.cache_dir, results=args.results, previews=not args.no_previews)
    if args.json:
        return print_json({"out": str(report.out), "pages": len(report.pages), "figures": list(report.figures),
                           "figures_skipped": dict(report.figures_skipped), "figures_drawn": report.figures_drawn,
                           "previews": list(report.previews), "examples": list(report.examples),
                           "figures_reused": report.figures_reused})
    datasets = f"{len(report.figures)} dataset{'' if len(report.figures) == 1 else 's'}"
    print(f"wrote {len(report.pages)} pages and the figures of {datasets} into {report.out} "
          f"({report.figures_drawn} figures drawn, {report.figures_reused} reused; open {report.out / 'index.html'})")
    return 0


def register(commands: argparse._SubParsersAction) -> list[tuple[str, str]]:
    """Add ``site build``; returns (command, summary) pairs for the main help."""
    site = commands.add_parser("site", description="the hub's catalogue as a static HTML site")
    actions = site.add_subparsers(dest="action", metavar="ACTION", required=True)
    building = command(actions, "build", "render the catalogue as static HTML into OUT", run_site_build)
    building.add_argument("out", metavar="OUT", help="folder to write into (created if missing; pages overwritten)")
    building.add_argument("--family", help="only this family, e.g. chaosnet or tgb")
    figures = building.add_mutually_exclusive_group()
    figures.add_argument("--no-figures", action="store_true", help="draw no figures (by default every dataset the "
                         "cache already holds gets its figures; nothing is built for one, and unchanged ones are "
                         "reused from the cache)")
    figures.add_argument("--with-figures", action="store_true", help="figures are drawn by default; this makes a "
                         "missing matplotlib (the plot extra) an error instead of a warning")
    building.add_argument("--results", metavar="DIR", help="a results repo whose leaderboards/<family>/<name>/<task>"
                          ".parquet fill the leaderboard pages: a checkout, or the git repo `tgbhub leaderboard "
                          "update` writes (e.g. ROOT/datasets/tgbhub/results of a git: hub)")
    building.add_argument("--no-previews", action="store_true", help="show no data on the dataset pages (by default "
                          "every dataset the cache already holds shows the first rows of its files, one query with "
                          "its negatives, and an example submission, graded and kept in the cache)")
    building.add_argument("--json", action="store_true")
    return listed(building)
