"""The plot command: a dataset's figures as files, for a paper (the figures the site's pages show)."""

from __future__ import annotations

import argparse

from tgbhub.cli.grammar import add_dataset, command, listed
from tgbhub.cli.output import print_json

GROUP = "site and figures"


def run_plot(args: argparse.Namespace) -> int:
    """Draw the dataset's figures (every kind that applies, or those of --kind) from the cache into --out."""
    from pathlib import Path

    from tgbhub import config, plot
    from tgbhub.site.figures import cached_manifest, load_from_cache

    plot.require_matplotlib("`tgbhub plot`")  # before reading any data: an explicit request fails at once
    root = config.cache_root(args.cache_dir)
    # a figure never builds or downloads: the manifest and the data must be in the cache (or the catalogue) already
    manifest = cached_manifest(args.name, root)
    kinds = args.kind or list(plot.kinds_for(manifest))
    dataset = load_from_cache(manifest, root)
    out = Path(args.out) if args.out else config.output_folder("plot", manifest.name)
    stem = manifest.name.split("/", 1)[1]
    written = []
    for drawn in plot.draw_all(dataset, kinds):
        path = plot.save(drawn.figure, out / f"{stem}.{drawn.kind}.{args.format}")
        written.append({"kind": drawn.kind, "file": str(path), "alt": drawn.alt})
    if args.json:
        return print_json({"name": manifest.name, "version": manifest.version, "figures": written})
    for item in written:
        print(f"{item['kind']}: {item['file']}")
    return 0


def register(commands: argparse._SubParsersAction) -> list[tuple[str, str]]:
    """Add ``plot``; returns (command, summary) pairs for the main help."""
    from tgbhub.plot import KINDS  # numpy only: matplotlib loads when a figure is drawn

    plotting = command(commands, "plot", "draw a cached dataset's figures as files", run_plot,
                       description="draw a dataset's figures (activity, edge appearance and traffic, degrees, "
                       "novelty across splits; a trajectory's space-time picture and chaos indicators) from the "
                       "cache into DIR; nothing is built or downloaded for a figure")
    add_dataset(plotting)
    plotting.add_argument("--kind", action="append", choices=list(KINDS), metavar="KIND",
                          help=f"only this figure (repeatable): {', '.join(KINDS)} (default: every kind that "
                          "applies)")
    plotting.add_argument("--out", metavar="DIR", help="folder to write NAME.KIND.FORMAT into (default: "
                          "./plot-FAMILY-NAME)")
    plotting.add_argument("--format", choices=("png", "pdf", "svg"), default="png",
                          help="file format (default: %(default)s)")
    plotting.add_argument("--json", action="store_true")
    return listed(plotting)
