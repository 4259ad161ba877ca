"""The ``tgbhub`` command: list, info, get and build datasets."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

from tgbhub import api
from tgbhub.errors import TgbhubError
from tgbhub.manifest import Manifest, plain
from tgbhub.progress import track


def _summary(manifest: Manifest) -> dict[str, Any]:
    stats = manifest.stats
    return {"name": manifest.name, "version": manifest.version, "num_nodes": manifest.graph.get("num_nodes"),
            "num_rows": stats.get("num_rows"), "num_snapshots": manifest.graph.get("num_snapshots"),
            "splits": list(manifest.splits), "bytes": sum(f.size for f in manifest.files)}


def _print_table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> None:
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in columns}
    print("  ".join(c.ljust(widths[c]) for c in columns))
    for row in rows:
        print("  ".join(str(row[c]).ljust(widths[c]) for c in columns))


def cmd_list(args: argparse.Namespace) -> int:
    registry = api.registry()
    if args.family and args.family not in registry.families():
        raise TgbhubError(f"unknown family {args.family!r}; families: {', '.join(registry.families())}")
    rows = [_summary(api.resolve(name)) for name in registry.names(args.family)]
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        _print_table(rows, ["name", "version", "num_nodes", "num_rows", "num_snapshots", "bytes"])
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    manifest = api.resolve(args.name)
    info = {**_summary(manifest), "versions": api.registry().versions(manifest.name),
            "description": manifest.description, "splits": {k: list(v) for k, v in manifest.splits.items()},
            "recipe": plain(manifest.raw.get("recipe")), "task": plain(manifest.task),
            "files": [{"name": f.name, "sha256": f.sha256, "size": f.size, "digest": f.digest} for f in manifest.files],
            "known_discrepancies": plain(manifest.known_discrepancies)}
    if args.json:
        print(json.dumps(info, indent=1))
        return 0
    for key in ("name", "version", "versions", "description", "num_nodes", "num_rows", "num_snapshots", "splits"):
        print(f"{key:>14}: {info[key]}")
    for entry in info["files"]:
        print(f"{'file':>14}: {entry['name']} ({entry['size']} B, sha256 {entry['sha256'][:16]}...)")
    for item in info["known_discrepancies"]:
        print(f"{'discrepancy':>14}: {item.get('field')}: paper {item.get('paper')} vs ours {item.get('ours', '-')}")
    return 0


def cmd_get(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    dataset = api.load_dataset(args.name, args.version, cache_dir=args.cache_dir, offline=args.offline or None)
    card = {**dataset.card(), "seconds": round(time.perf_counter() - started, 3)}
    print(json.dumps(card, indent=1) if args.json else "\n".join(f"{k:>14}: {v}" for k, v in card.items()))
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    registry = api.registry()
    if args.all:
        names = registry.names()
    elif args.family:
        names = registry.names(args.family)
        if not names:
            raise TgbhubError(f"unknown family {args.family!r}; families: {', '.join(registry.families())}")
    else:
        names = args.names
    if not names:
        raise TgbhubError("nothing to build: name datasets, or pass --family F or --all")
    started = time.perf_counter()
    sources = {}
    for name in track(names, desc="building", unit="dataset"):
        sources[name] = api.load_dataset(name, cache_dir=args.cache_dir, offline=True).source
    built = sum(1 for s in sources.values() if s == "build")
    print(f"{len(names)} dataset(s) ready ({built} built, {len(names) - built} already cached) "
          f"in {time.perf_counter() - started:.1f} s")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tgbhub", description="The dataset hub for temporal-graph learning.")
    parser.add_argument("--cache-dir", help="cache root (default: $TGBHUB_CACHE, else the user cache folder)")
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="list datasets")
    listing.add_argument("--family", help="only this family, e.g. t-grab")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(run=cmd_list)
    info = commands.add_parser("info", help="show a dataset's manifest summary")
    info.add_argument("name", help="family/name[@version]")
    info.add_argument("--json", action="store_true")
    info.set_defaults(run=cmd_info)
    get = commands.add_parser("get", help="fetch (or build) a dataset into the cache and print its card")
    get.add_argument("name", help="family/name[@version]")
    get.add_argument("--version", help="exact version (default: newest)")
    get.add_argument("--offline", action="store_true", help="open no socket: cache or local build only")
    get.add_argument("--json", action="store_true")
    get.set_defaults(run=cmd_get)
    build = commands.add_parser("build", help="regenerate datasets locally into the cache")
    build.add_argument("names", nargs="*", help="family/name[@version] ...")
    build.add_argument("--family", help="every dataset of a family")
    build.add_argument("--all", action="store_true", help="every dataset")
    build.set_defaults(run=cmd_build)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except TgbhubError as exc:
        print(f"tgbhub: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
