"""Dataset commands: list, info, get, build, verify, import, export, forecast-stats, doctor."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from tgbhub import api
from tgbhub.cli.grammar import Parser, add_dataset, add_scheduler_options, command, listed, notice
from tgbhub.cli.output import human_bytes, print_block, print_card, print_cards, print_json, print_table
from tgbhub.errors import TgbhubError

if TYPE_CHECKING:
    from tgbhub.data import TemporalGraphDataset

GROUP = "datasets"


def run_list(args: argparse.Namespace) -> int:
    """Every dataset, or the registered tasks, importers or transforms."""
    if args.transforms:
        return print_cards(api.transforms(), args.json, lambda card: [
            f"{card['name']}: {card['summary']}", f"  applies to: {', '.join(card['applies_to'])}; e.g. "
            f"BASE{card['example']}", *(f"  {param}" for param in card["params"]), f"  dtypes: {card['dtype_change']}"])
    if args.importers:
        return print_cards(api.importers(), args.json, lambda item: [
            f"{item['name']}: {item['summary']}; datasets named {item['family']}/NAME, e.g. `tgbhub import "
            f"{item['family']}/{item['example']}`"])
    if args.tasks:
        return print_cards(api.task_cards(), args.json, lambda card: [
            f"{card['summary']} (version {card['version']}); declared for {', '.join(card['applies_to'])} datasets"])
    rows = api.catalogue_rows(args.family, cache_dir=args.cache_dir)
    if args.json:
        return print_json(rows)
    variants: dict[str, int] = {}
    for row in rows:
        if row["derived_from"]:
            base = row["derived_from"].partition("@")[0]
            variants[base] = variants.get(base, 0) + 1
    shown = [{**{k: _cell(v) for k, v in row.items()}, "time": _time_cell(row),
              "size": human_bytes(row["bytes"]) if row["bytes"] else UNKNOWN, "variants": variants.get(row["name"], 0)}
             for row in rows if args.derived or not row["derived_from"]]
    print_table(shown, ["name", "version", "num_nodes", "num_rows", "time", "size", "variants", "status"])
    return 0


#: the one placeholder ``tgbhub list`` prints for a value not known yet (an import's counts before it is imported)
UNKNOWN = "-"


def _cell(value: Any) -> Any:
    """``value`` for the table, :data:`UNKNOWN` for every spelling of "not known" (None, empty, NaN)."""
    if value is None or value == "" or (isinstance(value, float) and value != value):
        return UNKNOWN
    return value


def _time_cell(row: Mapping[str, Any]) -> str:
    """The ``time`` column, its unit in the cell: ``16 snapshots`` (discrete time), ``2000 steps`` (trajectories:
    steps per initial condition), ``152757 timestamps`` (continuous time: distinct timestamps, TGB's published count)
    or :data:`UNKNOWN`."""
    if "num_sites" in row:
        return f"{row['num_snapshots']} steps" if row.get("num_snapshots") is not None else UNKNOWN
    if row.get("num_snapshots") is not None:
        return f"{row['num_snapshots']} snapshots"
    if row.get("num_timestamps") is not None:
        return f"{row['num_timestamps']} timestamps"
    return UNKNOWN


def run_info(args: argparse.Namespace) -> int:
    """A dataset's card: summary, recipe, tasks, files, discrepancies, versions, citation."""
    info = api.describe(args.name, cache_dir=args.cache_dir)
    if args.json:
        return print_json(info)
    if info.get("status") == "import required":  # an importer's catalogue card: nothing is cached yet
        print("\n".join(f"{k:>14}: {v}" for k, v in info.items() if k != "citation"))
        print(f"{'citation':>14}:\n{info['citation']}")
        return 0
    for line in _info_lines(info):
        print(line)
    print_block("tasks", _task_lines(info))
    for entry in info["files"]:
        digest = f"{entry['digest'][:16]}..." if entry["digest"] else "-"
        print(f"{'file':>14}: {entry['name']} ({human_bytes(entry['size'])}, sha256 {entry['sha256'][:16]}..., "
              f"digest {digest})")
    for item in info["known_discrepancies"]:
        print(f"{'discrepancy':>14}: {item.get('field')}: paper {item.get('paper')} vs ours {item.get('ours', '-')}")
    print_block("versions", _history_lines(info))
    if info["citation"]:
        print(f"{'cite as':>14}:\n{info['citation']}")
    return 0


def _info_lines(info: Mapping[str, Any]) -> list[str]:
    """The summary, lineage, recipe and hash lines of ``tgbhub info``."""
    lines = [f"{key:>14}: {info[key]}" for key in ("name", "version", "description", "num_nodes", "num_sites",
                                                   "num_rows", "num_snapshots") if key in info]
    lines.append(f"{'splits':>14}: {info['splits']} (rows)")
    for key, unit in (("snapshot_splits", "snapshots"), ("ic_splits", "initial conditions")):
        if info.get(key):
            lines.append(f"{'':>14}  {info[key]} ({unit})")
    transform = info["transform"]
    if info["derived_from"]:
        shown = ", ".join(f"{k}={v}" for k, v in transform["params"].items())
        lines.append(f"{'derived from':>14}: {info['derived_from']} by {transform['kind']} ({shown}), seed "
                     f"{transform['seed']}; files hold only the rows it replaces ({info['replaces']})")
    recipe = info["recipe"]
    if recipe:
        params = ", ".join(f"{k}={v}" for k, v in recipe.get("params", {}).items() if not isinstance(v, dict))
        lines.append(f"{'recipe':>14}: {recipe.get('generator')} {recipe.get('version')}, seed {recipe.get('seed')}")
        lines.append(f"{'':>14}  {params}")
    lines += [f"{'sha256':>14}: {info['hash_kinds']['sha256']}", f"{'digest':>14}: {info['hash_kinds']['digest']}"]
    return lines


def _task_lines(info: Mapping[str, Any]) -> list[str]:
    """One line per declared task (and per split whose leading snapshots are not graded), then the tasks declared
    on request."""
    lines = []
    for task in info["tasks"] or ([info["task"]] if info["task"] else []):
        metrics = task.get("metrics") or [task.get("primary_metric") or task.get("metric")]
        lines.append(f"{task.get('name')} ({task.get('type')}): {', '.join(str(m) for m in metrics if m)} on "
                     f"{task.get('report_split', 'test')}")
        if task.get("document"):  # a task versioned on its own, next to the dataset's manifest
            horizon = task.get("horizon", {})
            lines.append(f"  task document {task['document']}; horizon {horizon.get('value')} {horizon.get('unit')}")
        for split, count in task.get("skip_leading", {}).items():
            lines.append(f"  {split}: the first {count} snapshots are not graded (the task's skip_leading)")
    for spec in info["tasks_on_request"]:
        lines.append(f"{spec['summary']}; declared on request: its document and artifacts are built from the "
                     "verified data on first use")
    return lines


def _history_lines(info: Mapping[str, Any]) -> list[str]:
    """The changelog, newest first; versions without an entry are still listed."""
    entries = {str(e.get("version")): e for e in info["changelog"]}
    lines = []
    for version in reversed(info["versions"]):
        entry = entries.get(version)
        if entry is None:
            lines.append(version)
            continue
        lines.append(f"{version} ({entry.get('date', '?')}): {entry.get('summary', '')}")
        if entry.get("invalidates"):
            lines.append(f"  changes: {entry['invalidates']}")
    return lines


def run_get(args: argparse.Namespace) -> int:
    """Fetch (or build) a dataset into the cache and print its card."""
    started = time.perf_counter()
    dataset = api.load_dataset(args.name, args.version, cache_dir=args.cache_dir, offline=args.offline or None)
    return print_card({**dataset.card(), "seconds": round(time.perf_counter() - started, 3)}, args.json)


def run_verify(args: argparse.Namespace) -> int:
    """Re-hash cached files and repair; exit 1 if something stays damaged."""
    if not args.names and not args.all:
        raise TgbhubError("nothing to verify: name datasets, or pass --all for every dataset in the cache")
    rows = api.verify(args.names or None, cache_dir=args.cache_dir, offline=args.offline or None,
                      repair=not args.no_repair)
    if args.json:
        print_json(rows)
    elif rows:
        print_table([{**row, "files": ", ".join(row["files"]) or "-"} for row in rows],
                    ["name", "version", "status", "files"])
    else:
        print("the cache holds no dataset")
    return 1 if any(row["status"] == "damaged" for row in rows) else 0


def run_build(args: argparse.Namespace) -> int:
    """Build datasets here or on a Dask cluster; exit 1 if any failed (after every dataset has had its turn)."""
    from tgbhub import scale

    names = api.registry().select(args.names, family=args.family, every=args.all, derived=args.derived)
    report = scale.build(names, scheduler=args.scheduler, cache_dir=args.cache_dir, retries=args.retries)
    tasks = {row.name: api.prepare_tasks(row.name, cache_dir=args.cache_dir)
             for row in report.rows if args.tasks and row not in report.failed}
    if args.json:
        print_json([{**row, **({"tasks": tasks.get(row["name"], [])} if args.tasks else {})}
                    for row in report.to_json()])
        return 0 if report.ok else 1
    ready = len(report.rows) - len(report.failed)
    built = report.count("built")
    print(f"{ready} of {len(names)} dataset(s) ready ({built} built, {ready - built} already cached) "
          f"in {report.seconds:.1f} s" + ("" if args.scheduler is None else f" on {report.scheduler}"))
    if args.tasks:
        print(f"task artifacts ready: {sum(len(v) for v in tasks.values())} "
              f"({', '.join(sorted({t for v in tasks.values() for t in v})) or 'no task has any'})")
    if args.scheduler is not None:
        print(report.table())
    if report.failed:
        print(f"{len(report.failed)} failed:", file=sys.stderr)
        for row in report.failed:
            print(f"  {row.name}: {row.error}", file=sys.stderr)
    return 0 if report.ok else 1


def run_import(args: argparse.Namespace) -> int:
    """Import a dataset of another benchmark's release into the verified cache and print its card; a family alone
    imports every dataset of the folder ``--from`` names."""
    from tgbhub.local.imports import import_dataset, importer_for, importer_of_family, read_expected_stats

    every = importer_of_family(args.name) if args.old_name is None else None
    if every is not None:
        return _import_every(args, every)
    name = _import_name(args.name, args.old_name)
    manifest = import_dataset(importer_for(name), name, args.source, cache_dir=args.cache_dir,
                              offline=args.offline or None, manifests=args.manifests,
                              expected_stats=read_expected_stats(args.expected_stats))
    dataset = api.load_dataset(manifest.name, manifest.version, cache_dir=args.cache_dir, offline=True)
    source = manifest.stats.get("source", {})  # what the importer records of the release it read
    return print_card({**dataset.card(), "imported_from": source.get("zip"), "zip_sha256": source.get("zip_sha256"),
                       "upstream": source.get("url"), "checked": manifest.stats.get("checked_against_published")},
                      args.json)


def _import_every(args: argparse.Namespace, importer: str) -> int:
    """``tgbhub import FAMILY --from FOLDER``: one line per dataset found, then a summary; exit 1 if one was
    refused."""
    from tgbhub.local.imports import import_every, read_expected_stats

    rows = import_every(importer, args.source, cache_dir=args.cache_dir, manifests=args.manifests,
                        expected_stats=read_expected_stats(args.expected_stats))
    refused = [row for row in rows if row.manifest is None]
    if args.json:
        print_json([{"name": row.name, "folder": str(row.folder),
                     "version": row.manifest.version if row.manifest else None,
                     "imported_from": row.manifest.stats.get("source", {}).get("zip") if row.manifest else None,
                     "error": str(row.error) if row.error else None} for row in rows])
        return 1 if refused else 0
    for row in rows:
        if row.manifest is None:
            print(f"{row.name}: refused, nothing installed: {row.error}")
        else:
            read = row.manifest.stats.get("source", {}).get("zip")
            print(f"{row.name}@{row.manifest.version}: imported from {row.folder}" + (f": {read}" if read else ""))
    print(f"{len(rows) - len(refused)} of {len(rows)} dataset(s) in {args.source} imported"
          + (f", {len(refused)} refused" if refused else ""))
    return 1 if refused else 0


def _import_name(name: str, old_name: str | None) -> str:
    """``tgb/tgbl-wiki``; the older two-word form (``tgb tgbl-wiki``) is read with a notice."""
    if old_name is None:
        return name
    notice(f"`tgbhub import {name} {old_name}` is now `tgbhub import {name}/{old_name}`")
    return f"{name}/{old_name}"


def run_export(args: argparse.Namespace) -> int:
    """Write a dataset's files for another loader and print what was written."""
    from tgbhub.compat import export

    written = export.export(api.load_dataset(args.name, cache_dir=args.cache_dir), args.format, args.out,
                            split=args.split, task=args.task)
    if args.json:
        return print_json({"format": written.format, "dataset": written.dataset,
                           "files": [str(p) for p in written.files], "info": written.info}, default=str)
    print(f"{written.dataset}: {written.format} export")
    for path in written.files:
        print(f"wrote {path} ({human_bytes(path.stat().st_size)})")
    for key in ("counts", "split_times", "counts_by_rule", "misassigned", "test_rows_before_test_start",
                "dropped_splits", "queries", "keys"):
        if key in written.info:
            print(f"{key}: {json.dumps(written.info[key])}")
    return 0


def run_forecast_stats(args: argparse.Namespace) -> int:
    """Batch vs window diagnostics: a table or JSON, and unless --no-files a JSON and a figure."""
    from tgbhub.forecasting import diagnostics

    # the diagnostics read a temporal graph's events (a trajectory dataset fails there, as before)
    dataset = cast("TemporalGraphDataset", api.load_dataset(args.name, cache_dir=args.cache_dir))
    report = diagnostics.report(dataset, batch_size=args.batch_size, horizon=args.horizon, split=args.split)
    written, plot_skipped = ({}, None) if args.no_files else \
        diagnostics.write_report(report, dataset.manifest.name, args.out)
    if args.json:
        return print_json({**report, "written": {k: str(v) for k, v in written.items()},
                           "plot_skipped": plot_skipped}, allow_nan=False)
    print("\n".join(diagnostics.report_lines(report)))
    _print_written(written, plot_skipped)
    return 0


def _print_written(written: Mapping[str, Path], plot_skipped: str | None) -> None:
    for kind, path in written.items():
        print(f"wrote {kind}: {path}")
    if plot_skipped:
        print(f"plot skipped: {plot_skipped}")


def run_doctor(args: argparse.Namespace) -> int:
    """What matters for bit-exact rebuilds on this machine; exit 1 if a family's preflight refuses."""
    from tgbhub.local.doctor import report  # runs the generators' probes

    found = report()
    if args.json:
        print_json(found)
    else:
        for key in ("platform", "libc", "cpu", "openblas_kernel", "OPENBLAS_CORETYPE"):
            print(f"{key:>18}: {found[key]}")
        for package, version in found["versions"].items():
            print(f"{package:>18}: {version}")
        for dataset, verdict in found["preflight"].items():
            print(f"{'preflight':>18}: {dataset}: {verdict}")
    return 0 if all(v.startswith("ok") for v in found["preflight"].values()) else 1


def register(commands: argparse._SubParsersAction) -> list[tuple[str, str]]:
    """Add the dataset commands; returns (command, summary) pairs for the main help."""
    doctor = command(commands, "doctor", "can this machine rebuild the published data bit for bit?", run_doctor)
    doctor.add_argument("--json", action="store_true")
    return listed(_add_list(commands), _add_info(commands), _add_get(commands), _add_build(commands),
                  _add_verify(commands), _add_import(commands), _add_export(commands), _add_forecast_stats(commands),
                  doctor)


def _add_list(commands: argparse._SubParsersAction) -> Parser:
    listing = command(commands, "list", "list datasets, tasks, importers or transforms", run_list)
    listing.add_argument("--family", help="only this family, e.g. t-grab")
    listing.add_argument("--derived", action="store_true", help="also list derived datasets, one row each")
    listing.add_argument("--json", action="store_true", help="every dataset, derived ones included, as JSON")
    shown = listing.add_mutually_exclusive_group()
    shown.add_argument("--tasks", action="store_true", help="the registered tasks a dataset kind declares")
    shown.add_argument("--importers", action="store_true", help="the benchmarks `tgbhub import` converts")
    shown.add_argument("--transforms", action="store_true",
                       help="the transforms a derived dataset is made with (FAMILY/NAME~KIND[-pN...]-sSEED)")
    return listing


def _add_info(commands: argparse._SubParsersAction) -> Parser:
    info = command(commands, "info", "show a dataset's card", run_info,
                   description="show a dataset's card: recipe, tasks, files, versions, citation")
    add_dataset(info)
    info.add_argument("--json", action="store_true")
    return info


def _add_get(commands: argparse._SubParsersAction) -> Parser:
    get = command(commands, "get", "fetch (or build) a dataset into the cache", run_get)
    add_dataset(get)
    get.add_argument("--version", help="exact version (default: newest)")
    get.add_argument("--offline", action="store_true", help="open no socket: cache or local build only")
    get.add_argument("--json", action="store_true")
    return get


def _add_build(commands: argparse._SubParsersAction) -> Parser:
    build = command(commands, "build", "regenerate datasets locally into the cache", run_build)
    add_dataset(build, "names", nargs="*", help="the datasets, e.g. t-grab/ce-64 t-grab/ce-256")
    build.add_argument("--family", help="every dataset of a family")
    build.add_argument("--all", action="store_true", help="every base dataset")
    build.add_argument("--derived", action="store_true",
                       help="with --family/--all: their published derived datasets too (1,560 for t-grab)")
    build.add_argument("--tasks", action="store_true", help="also build the artifacts of every task the datasets "
                       "declare through a task document, so grading needs no more")
    build.add_argument("--json", action="store_true", help="one row per dataset: status, digests, worker, seconds")
    add_scheduler_options(build)
    return build


def _add_verify(commands: argparse._SubParsersAction) -> Parser:
    verify = command(commands, "verify", "re-hash cached files and repair damage", run_verify,
                     description="re-hash cached files (bit rot keeps sizes and mtimes) and repair what is damaged")
    add_dataset(verify, "names", nargs="*", help="the datasets (or --all: every cached one)")
    verify.add_argument("--all", action="store_true", help="every dataset the cache holds")
    verify.add_argument("--no-repair", action="store_true", help="report a damaged entry (withdrawn) without "
                        "fetching or rebuilding it")
    verify.add_argument("--offline", action="store_true", help="repair from the cache's own rebuild only")
    verify.add_argument("--json", action="store_true")
    return verify


def _add_import(commands: argparse._SubParsersAction) -> Parser:
    importing = command(commands, "import", "import another benchmark's release (TGB)",
                        run_import)
    add_dataset(importing, help="the dataset, e.g. tgb/tgbl-wiki (`tgbhub list --importers` names the families); "
                "a family alone (tgb) with --from FOLDER imports every dataset that folder holds")
    importing.add_argument("old_name", nargs="?", help=argparse.SUPPRESS)
    importing.add_argument("--from", dest="source", help="a local zip, a folder holding it, or an http(s) URL "
                           "(default: the copy a previous import kept, else the upstream URL); for tgb also the "
                           "folder py-tgb keeps a dataset in (its zip or extracted files), or py-tgb's datasets/ "
                           "folder")
    importing.add_argument("--offline", action="store_true", help="never download")
    importing.add_argument("--manifests", metavar="DIR", help="also write the manifest into this manifest root (a "
                           "maintainer bundling the import before `tgbhub publish tgb`)")
    importing.add_argument("--expected-stats", metavar="FILE", help="a release you changed on purpose: check it "
                           "against the statistics in this JSON object (keys as in `tgbhub info tgb/NAME`); the "
                           "manifest records the import as a modified release")
    importing.add_argument("--json", action="store_true")
    return importing


def _add_export(commands: argparse._SubParsersAction) -> Parser:
    exporting = command(commands, "export", "write files for another loader (DyGLib, ml_, TGB)", run_export)
    add_dataset(exporting, help="the dataset, e.g. a variant t-grab/pdet-2-16~shuffle-s0")
    exporting.add_argument("--format", required=True, choices=("dyglib", "ml", "tgb-negatives"),
                           help="dyglib: ml_<name>.csv with a split column; ml: the paper's shuffle_<j>_ / "
                           "intense_<k>_<j>_ml_<ds> files and split_times; tgb-negatives: <name>_<split>_ns.pkl")
    exporting.add_argument("--out", required=True, metavar="DIR", help="folder to write into (created if missing)")
    exporting.add_argument("--split", default="test", help="tgb-negatives: the split (default: %(default)s)")
    exporting.add_argument("--task", help="tgb-negatives: the ranking task (default: the dataset's default)")
    exporting.add_argument("--json", action="store_true")
    return exporting


def _add_forecast_stats(commands: argparse._SubParsersAction) -> Parser:
    stats = command(commands, "forecast-stats", "batch vs window diagnostics (NMI, leakage)", run_forecast_stats)
    add_dataset(stats)
    stats.add_argument("--batch-size", type=int, default=200, help="batch size b (default: %(default)s)")
    stats.add_argument("--horizon", type=float, help="window length h in the dataset's time unit (default: the "
                       "window-forecast task's horizon, else nice(b x T/m), one snapshot for discrete time)")
    stats.add_argument("--split", default="test", help="the split of the per-split measures (default: %(default)s)")
    stats.add_argument("--json", action="store_true")
    stats.add_argument("--out", metavar="DIR", help="folder for forecast-stats-NAME.json and .png (default: "
                       "./forecast-stats-FAMILY-NAME/)")
    stats.add_argument("--no-files", action="store_true", help="print only; write no JSON or figure")
    return stats

