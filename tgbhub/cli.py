"""The ``tgbhub`` command: list, info, get, build, publish and serve datasets."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from tgbhub import __version__, api
from tgbhub.config import output_folder
from tgbhub.errors import CacheWriteError, InvalidNameError, TgbhubError, TrainingPaused
from tgbhub.manifest import Manifest, plain

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def human_bytes(size: int) -> str:
    """``1536`` -> ``'1.5 KiB'``: three significant digits, binary units."""
    value, unit = float(size), 0
    while value >= 1024 and unit < len(_UNITS) - 1:
        value, unit = value / 1024, unit + 1
    return f"{size} B" if unit == 0 else f"{value:.3g} {_UNITS[unit]}"


def _summary(manifest: Manifest) -> dict[str, Any]:
    stats = manifest.stats
    return {"name": manifest.name, "version": manifest.version, "num_nodes": manifest.graph.get("num_nodes"),
            "num_rows": stats.get("num_rows"), "num_snapshots": manifest.graph.get("num_snapshots"),
            "splits": list(manifest.splits), "bytes": sum(f.size for f in manifest.files),
            "derived_from": manifest.derived_from, "transform": manifest.transform}


def _print_table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> None:
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in columns}
    print("  ".join(c.ljust(widths[c]) for c in columns).rstrip())
    for row in rows:
        print("  ".join(str(row[c]).ljust(widths[c]) for c in columns).rstrip())


def cmd_list(args: argparse.Namespace) -> int:
    """Every dataset (JSON: all rows, derived ones with ``derived_from`` and ``transform``); the table shows base
    datasets with a count of their derived variants, and the variants themselves with ``--derived``; ``--transforms``
    lists the transforms any temporal graph can be derived with."""
    if args.transforms:
        return _list_transforms(args.json)
    if args.importers:
        return _list_importers(args.json)
    if args.tasks:
        return _list_tasks(args.json)
    rows = api.catalogue_rows(args.family, cache_dir=args.cache_dir)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    variants: dict[str, int] = {}
    for row in rows:
        if row["derived_from"]:
            base = row["derived_from"].partition("@")[0]
            variants[base] = variants.get(base, 0) + 1
    shown = [{**row, "version": row["version"] or "-", "size": human_bytes(row["bytes"]) if row["bytes"] else "-",
              "variants": variants.get(row["name"], 0)} for row in rows if args.derived or not row["derived_from"]]
    _print_table(shown, ["name", "version", "num_nodes", "num_rows", "num_snapshots", "size", "variants", "status"])
    return 0


def _print_cards(cards: Sequence[Mapping[str, Any]], as_json: bool, lines: Any) -> int:
    """Plug-in cards as JSON, or ``lines(card)`` (a list of lines) for each."""
    if as_json:
        print(json.dumps(list(cards), indent=1))
    else:
        print("\n".join(line for card in cards for line in lines(card)))
    return 0


def _list_tasks(as_json: bool) -> int:
    """The registered tasks a dataset declares on request when no bundled task document does."""
    return _print_cards(api.task_cards(), as_json, lambda card: [
        f"{card['summary']} (version {card['version']}); declared for {', '.join(card['applies_to'])} datasets"])


def _list_importers(as_json: bool) -> int:
    """The registered importers: ``tgbhub import SOURCE NAME``'s choices, their families and what they import."""
    return _print_cards(api.importers(), as_json, lambda item: [
        f"{item['name']}: {item['summary']}; datasets named {item['family']}/NAME, e.g. `tgbhub import "
        f"{item['name']} {item['example']}`"])


def _list_transforms(as_json: bool) -> int:
    """The registered transforms: name, what it does, its parameters with bounds, the dataset kinds it applies to."""
    return _print_cards(api.transforms(), as_json, lambda card: [
        f"{card['name']}: {card['summary']}", f"  applies to: {', '.join(card['applies_to'])}; e.g. "
        f"BASE{card['example']}", *(f"  {param}" for param in card["params"])])


def _task_lines(task: Mapping[str, Any]) -> list[str]:
    """One line per task, plus one per split whose leading snapshots the grader skips."""
    metrics = task.get("metrics") or [task.get("primary_metric") or task.get("metric")]
    lines = [f"{task.get('name')} ({task.get('type')}): {', '.join(str(m) for m in metrics if m)} on "
             f"{task.get('report_split', 'test')}"]
    if task.get("document"):  # a task versioned on its own, next to the dataset's manifest
        horizon = task.get("horizon", {})
        lines.append(f"  task document {task['document']}; horizon {horizon.get('value')} {horizon.get('unit')}")
    for split, count in task.get("skip_leading", {}).items():
        lines.append(f"  {split}: the first {count} snapshots are not graded (the task's skip_leading)")
    return lines


def _print_block(label: str, lines: Sequence[str]) -> None:
    """``label: first line`` with the other lines aligned under it."""
    for index, line in enumerate(lines):
        print(f"{label if index == 0 else '':>14}{':' if index == 0 else ' '} {line}")


def _history_lines(manifest: Manifest, versions: Sequence[str]) -> list[str]:
    """The changelog, newest first; versions without an entry are still listed."""
    entries = {str(e.get("version")): e for e in manifest.changelog}
    lines = []
    for version in reversed(versions):
        entry = entries.get(version)
        if entry is None:
            lines.append(version)
            continue
        lines.append(f"{version} ({entry.get('date', '?')}): {entry.get('summary', '')}")
        if entry.get("invalidates"):
            lines.append(f"  changes: {entry['invalidates']}")
    return lines

def cmd_info(args: argparse.Namespace) -> int:
    # a derived dataset's manifest is derived on request: its first `info` builds it into the cache
    try:
        manifest = api.with_task_documents(api.manifest_of(args.name, cache_dir=args.cache_dir))
    except TgbhubError:
        card = api.catalogue_card(args.name)  # a dataset an importer's catalogue has, not imported here
        if card is None:
            raise
        card = {**card, "status": "import required"}
        print(json.dumps(card, indent=1) if args.json else "\n".join(
            f"{k:>14}: {v}" for k, v in card.items() if k != "citation") + f"\n{'citation':>14}:\n{card['citation']}")
        return 0
    recipe = plain(manifest.raw.get("recipe")) or {}
    registry = api.registry()
    # a variant built on request is not in the catalogue: its versions are its base's
    listed = manifest.name if registry.has(manifest.name) or not manifest.derived_from else \
        manifest.derived_from.partition("@")[0]
    info = {**_summary(manifest), "versions": registry.versions(listed),
            "description": manifest.description, "splits": {k: list(v) for k, v in manifest.splits.items()},
            "recipe": recipe, "task": plain(manifest.task), "tasks": [plain(t) for t in manifest.tasks],
            "citation": manifest.raw.get("citeAs"), "changelog": [plain(e) for e in manifest.changelog],
            "files": [{"name": f.name, "sha256": f.sha256, "size": f.size, "digest": f.digest} for f in manifest.files],
            "known_discrepancies": plain(manifest.known_discrepancies),
            "tasks_on_request": [{"name": spec.name, "type": spec.type, "version": spec.version,
                                  "summary": spec.summary} for spec in api.tasks_on_request(manifest)]}
    if args.json:
        print(json.dumps(info, indent=1))
        return 0
    for key in ("name", "version", "description", "num_nodes", "num_rows", "num_snapshots", "splits"):
        print(f"{key:>14}: {info[key]}")
    if manifest.derived_from:
        transform = info["transform"]
        shown = ", ".join(f"{k}={v}" for k, v in transform["params"].items())
        print(f"{'derived from':>14}: {manifest.derived_from} by {transform['kind']} ({shown}), seed {transform['seed']}"
              f"; files hold only the rows it replaces ({manifest.graph['replaces']['split']})")
    if recipe:
        params = ", ".join(f"{k}={v}" for k, v in recipe.get("params", {}).items() if not isinstance(v, dict))
        print(f"{'recipe':>14}: {recipe.get('generator')} {recipe.get('version')}, seed {recipe.get('seed')}")
        print(f"{'':>14}  {params}")
    tasks = info["tasks"] or ([info["task"]] if info["task"] else [])
    lines = [line for task in tasks for line in _task_lines(task)]
    for spec in info["tasks_on_request"]:
        lines.append(f"{spec['summary']}; declared on request: its document and artifacts are built from the "
                     "verified data on first use")
    _print_block("tasks", lines)
    for entry in info["files"]:
        print(f"{'file':>14}: {entry['name']} ({human_bytes(entry['size'])}, sha256 {entry['sha256'][:16]}...)")
    for item in info["known_discrepancies"]:
        print(f"{'discrepancy':>14}: {item.get('field')}: paper {item.get('paper')} vs ours {item.get('ours', '-')}")
    _print_block("versions", _history_lines(manifest, info["versions"]))
    if info["citation"]:
        print(f"{'cite as':>14}:\n{info['citation']}")
    return 0


def cmd_get(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    dataset = api.load_dataset(args.name, args.version, cache_dir=args.cache_dir, offline=args.offline or None)
    card = {**dataset.card(), "seconds": round(time.perf_counter() - started, 3)}
    print(json.dumps(card, indent=1) if args.json else "\n".join(f"{k:>14}: {v}" for k, v in card.items()))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    """Re-hash the cached files of the named datasets (or of every cached one) and repair what is damaged; exit 1 if
    something stays damaged."""
    if not args.names and not args.all:
        raise TgbhubError("nothing to verify: name datasets, or pass --all for every dataset in the cache")
    rows = api.verify(args.names or None, cache_dir=args.cache_dir, offline=args.offline or None,
                      repair=not args.no_repair)
    if args.json:
        print(json.dumps(rows, indent=1))
    elif rows:
        _print_table([{**row, "files": ", ".join(row["files"]) or "-"} for row in rows],
                     ["name", "version", "status", "files"])
    else:
        print("the cache holds no dataset")
    return 1 if any(row["status"] == "damaged" for row in rows) else 0


def cmd_build(args: argparse.Namespace) -> int:
    """Build every named dataset that can be built, here or as one task each on a Dask cluster (``--scheduler``);
    with ``--tasks`` also the artifacts of every task they declare through a task document (grading then needs
    nothing more, offline included); report the ones that could not, and exit 1 if any failed (after every dataset
    has had its turn). ``--family``/``--all`` take base datasets, and their derived variants with ``--derived``."""
    from tgbhub import scale

    registry = api.registry()
    if args.all:
        names = registry.names(derived=args.derived)
    elif args.family:
        if args.family not in registry.families():
            raise TgbhubError(f"unknown family {args.family!r}; families: {', '.join(registry.families())}")
        names = registry.names(args.family, derived=args.derived)
    else:
        names = args.names
    if not names:
        raise TgbhubError("nothing to build: name datasets, or pass --family F or --all")
    report = scale.build(names, scheduler=args.scheduler, cache_dir=args.cache_dir, retries=args.retries)
    tasks = {row.name: api.prepare_tasks(row.name, cache_dir=args.cache_dir)
             for row in report.rows if args.tasks and row not in report.failed}
    if args.json:
        rows = report.to_json()
        for row in rows if args.tasks else []:
            row["tasks"] = tasks.get(row["name"], [])
        print(json.dumps(rows, indent=1))
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


def cmd_publish(args: argparse.Namespace) -> int:
    from tgbhub.publish import parse_target, publish  # deferred: pulls in the hub targets

    target = parse_target(args.to, endpoint=args.endpoint, token=args.token, private=args.private)
    datasets = [n.strip() for n in args.datasets.split(",") if n.strip()] if args.datasets else None
    results = publish(args.family, args.version, target, datasets=datasets, repo=args.repo, cache_dir=args.cache_dir)
    for result in results:
        print(f"{result.status}: {result.repo_id} {result.tag} {result.commit[:12]} -> {result.location}".rstrip())
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    """Print what matters for bit-exact rebuilds on this machine; exit 1 if a family's preflight refuses."""
    from tgbhub.local.doctor import report  # deferred: runs the generators' probes

    found = report()
    if args.json:
        print(json.dumps(found, indent=1))
    else:
        for key in ("platform", "libc", "cpu", "openblas_kernel", "OPENBLAS_CORETYPE"):
            print(f"{key:>18}: {found[key]}")
        for package, version in found["versions"].items():
            print(f"{package:>18}: {version}")
        for dataset, verdict in found["preflight"].items():
            print(f"{'preflight':>18}: {dataset}: {verdict}")
    return 0 if all(v.startswith("ok") for v in found["preflight"].values()) else 1


def cmd_hub_serve(args: argparse.Namespace) -> int:
    """Serve ROOT's repos (and, unless --site or --no-site, the catalogue site built from them, rebuilt whenever
    the results repo gets a commit) until Ctrl-C or SIGTERM."""
    import signal

    from tgbhub.hub.serve import start_local_hub  # deferred: only the server needs it
    from tgbhub.site.live import REFRESH_SECONDS, LiveSite

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with start_local_hub(args.root, port=args.port, host=args.host, state_dir=args.state_dir,
                         site=args.site) as hub:
        live = None if args.site is not None or args.no_site else LiveSite(hub, args.cache_dir)
        if live is not None:
            live.build()
        site = f"  the catalogue site: {hub.url}/\n" if hub.site is not None else ""
        print(f"serving {hub.root} at {hub.url} (Ctrl-C stops)\n"
              f"  export TGBHUB_ENDPOINT={hub.url}   # tgbhub.load_dataset fetches from here\n"
              f"  export HF_ENDPOINT={hub.url}       # huggingface_hub / datasets, set before importing them\n"
              f"{site}  olah's config and log: {hub.state_dir}",
              flush=True)
        try:
            while not stop.wait(REFRESH_SECONDS):
                if live is not None and live.refresh():
                    print(f"site rebuilt: the results repo is at {live.head}", flush=True)
        except KeyboardInterrupt:
            pass
        finally:
            if live is not None:
                live.close()
    return 0


def _print_result(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(result, indent=1))
        return
    for key in ("dataset", "version", "task", "split", "model", "digest"):
        if key in result:
            print(f"{key:>10}: {result[key]}")
    for key, value in result["metrics"].items():
        print(f"{key:>10}: {value:.6f}")
    skipped = result.get("skipped_snapshots")
    if skipped:
        print(f"{'skipped':>10}: snapshots {skipped['first']}..{skipped['last']} ({skipped['count']}): "
              f"{skipped['reason']}")
    screen = result.get("validity_screen")
    if screen:
        verdict = (f"{screen['metric']} {screen['value']:.6f} vs threshold {screen['threshold']}: "
                   f"{'valid' if screen['valid'] else 'NOT valid'}" if screen.get("applied")
                   else f"not applied: {screen.get('reason')}")
        print(f"{'validity':>10}: {verdict}")


def _hparams(pairs: list[str]) -> dict[str, Any]:
    """``["channels=8", "dropout=0.1"]`` -> ``{"channels": 8, "dropout": 0.1}`` (values parsed as JSON, else text).

    Raises:
        InvalidNameError: for an item without ``=``.
    """
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InvalidNameError(f"--hparam {pair!r} is not KEY=VALUE; write e.g. --hparam channels=64")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def cmd_train(args: argparse.Namespace) -> int:
    from tgbhub.training import RESULT_KEYS, train

    options = {k: getattr(args, k) for k in ("batch_size", "lr", "patience", "limit_batches", "time_limit")
               if getattr(args, k) is not None}
    result = train(args.model, args.name, seed=args.seed, device=args.device, epochs=args.epochs, out=args.out,
                   task=args.task, split=args.split, cache_dir=args.cache_dir, hparams=_hparams(args.hparam),
                   compile=args.compile, amp=args.amp, resume=args.resume, **options)
    _write_records(args, [result])
    if args.json:
        print(json.dumps({k: result[k] for k in RESULT_KEYS}, indent=1))
        return 0
    _print_result(result.to_json(), False)
    print(f"{'seed':>10}: {result['seed']}")
    print(f"{'device':>10}: {result['device']}")
    print(f"{'epochs':>10}: {result['epochs_run']} run, best {result['best_epoch'] + 1}")
    print(f"{'train':>10}: {result['train_seconds']:.1f} s")
    for key, path in result.get("files", {}).items():
        print(f"{key:>10}: {path}")
    if result.get("regrade"):
        print(f"{'regrade':>10}: {result['regrade']}")
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Grade one submission (the result, or its error: exit 2), or several, here or as one task each on a Dask
    cluster (``--scheduler``): then one JSON line per file, in order, failures included, and exit 1 if any failed."""
    options = {"task": args.task, "split": args.split, "detail": args.detail, "teacher_forced": args.teacher_forced}
    if len(args.files) == 1 and args.scheduler is None:  # graded here: the Dask backend is not loaded
        graded = api.grade(args.name, args.files[0], cache_dir=args.cache_dir, **options)
        _print_result(graded.to_json(), args.json)
        _write_records(args, [graded])
        return 0
    if args.record:
        raise TgbhubError(f"--record writes the record of one graded file; grade the {len(args.files)} files one "
                          "at a time (without --scheduler), each with its own --record PATH")
    from tgbhub import scale

    rows = scale.evaluate(args.name, args.files, scheduler=args.scheduler, cache_dir=args.cache_dir,
                          retries=args.retries, **options)
    for row in rows:
        print(json.dumps(row))
    return 0 if all(row["status"] == "ok" for row in rows) else 1


def cmd_baseline(args: argparse.Namespace) -> int:
    graded = api.run_baseline(args.model, args.name, task=args.task, split=args.split, out=args.out or None,
                              cache_dir=args.cache_dir)
    _print_result(graded.to_json(), args.json)
    _write_records(args, [graded])
    return 0


def cmd_counterfactual(args: argparse.Namespace) -> int:
    """The TLPCF counterfactual check of a baseline or a predictions file (table, JSON, Parquet, plot), or with
    ``--generative FILE`` the ATD/ACD evaluation of predicted events against the reference baselines."""
    from tgbhub.evaluate import counterfactual as harness
    from tgbhub.evaluate import generative

    if args.generative and args.scheduler:
        raise TgbhubError("--scheduler runs the variants' builds of the counterfactual check as tasks; --generative "
                          "reads few variants and runs here: drop --scheduler")
    if args.generative:
        name = args.name or args.model
        real = api.load_dataset(name, cache_dir=args.cache_dir)
        options = {"fallback": args.fallback, "clip_to_reference_window": args.clip, "directed": not args.undirected}
        result = generative.generative_evaluation(real, args.generative, **options)
        kinds = [("shuffle", "shuffles"), ("intense-k1", "jittered")]
        found = {key: [api.load_dataset(f"{real.manifest.name}~{kind}-s{seed}", cache_dir=args.cache_dir)
                       for seed in harness.seed_list(args.seeds or "0-9")] for kind, key in kinds}
        result["baselines"] = generative.generative_baselines(real, **found, **options)
        print(json.dumps(harness.json_ready(result), indent=1) if args.json else
              "\n".join(generative.generative_lines(result, result["baselines"])))
        return 0
    if args.name is None:
        raise TgbhubError("counterfactual needs MODEL and NAME, e.g. tgbhub counterfactual edgebank family/name "
                          "(or NAME with --generative FILE)")
    from tgbhub import scale  # with --scheduler: the base and its variants are made ready first, one task each

    is_file = args.model.endswith(".parquet") or os.path.isfile(args.model)
    report = scale.counterfactual(args.name, None if is_file else args.model,
                                  predictions=args.model if is_file else None, kinds=args.kinds,
                                  seeds=harness.seed_list(args.seeds) if args.seeds else None,
                                  negatives=args.negatives, epsilon=args.epsilon, controls=args.controls,
                                  cache_dir=args.cache_dir, scheduler=args.scheduler, retries=args.retries)
    label = Path(args.model).stem if is_file else args.model
    out = Path(args.out) if args.out else output_folder("counterfactual", args.name, label)
    written = report.write(out)
    _write_records(args, report.graded)
    if args.json:
        print(json.dumps({**report.to_json(), "written": {k: str(v) for k, v in written.items()},
                          "plot_skipped": report.plot_skipped}, indent=1, allow_nan=False))
        return 0
    print("\n".join(harness.table_lines(report)))
    for kind, path in written.items():
        print(f"wrote {kind}: {path}")
    if report.plot_skipped:
        print(f"plot skipped: {report.plot_skipped}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """Import a dataset of another benchmark's release (TGB) into the verified cache and print its card."""
    from tgbhub.local.imports import import_dataset

    manifest = import_dataset(args.benchmark, args.name, args.source, cache_dir=args.cache_dir,
                              offline=args.offline or None, manifests=args.manifests,
                              expected_stats=_expected_stats(args.expected_stats))
    dataset = api.load_dataset(manifest.name, manifest.version, cache_dir=args.cache_dir, offline=True)
    source = manifest.stats.get("source", {})  # what the importer records of the release it read
    card = {**dataset.card(), "imported_from": source.get("zip"), "zip_sha256": source.get("zip_sha256"),
            "upstream": source.get("url"), "checked": manifest.stats.get("checked_against_published")}
    print(json.dumps(card, indent=1) if args.json else "\n".join(f"{k:>14}: {v}" for k, v in card.items()))
    return 0


def _expected_stats(path: str | None) -> dict[str, Any] | None:
    """The statistics a modified release is checked against, from a JSON object file.

    Raises:
        InvalidNameError: if the file is missing, not JSON, or not an object of statistics.
    """
    if path is None:
        return None
    try:
        stats = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvalidNameError(f"--expected-stats {path!r}: cannot read it ({exc.strerror}); pass a JSON file such as "
                               "{\"num_edges\": 157474, \"num_nodes\": 9227}") from None
    except json.JSONDecodeError as exc:
        raise InvalidNameError(f"--expected-stats {path!r} is not JSON ({exc.msg} at line {exc.lineno}); write an "
                               "object of statistics, e.g. {\"num_edges\": 157474}") from None
    if not isinstance(stats, dict) or not stats:
        found = "an empty object" if stats == {} else f"a JSON {type(stats).__name__}"
        raise InvalidNameError(f"--expected-stats {path!r} holds {found}, not an object of statistics; write e.g. "
                               "{\"num_edges\": 157474, \"num_nodes\": 9227}")
    return stats


def _write_records(args: argparse.Namespace, graded: Sequence[Any]) -> None:
    """With ``--record PATH``: the result record of the run (:mod:`tgbhub.results.records`), or for the counterfactual check
    (several graded conditions) one record per condition and run in the folder PATH; the paths go to stderr, so
    ``--json`` output stays one JSON document."""
    if not getattr(args, "record", None):
        return
    from tgbhub.results import records

    options = {"cache_dir": args.cache_dir, "offline": args.offline or None}
    if args.run is not cmd_counterfactual:
        records.record(graded[0], args.record, **options)
        print(f"wrote record: {args.record}", file=sys.stderr)
        return
    folder = Path(args.record)
    for item in graded:
        run = item.run
        name = f"{Path(str(item.model)).stem}-{run['condition']}-r{run.get('run')}.json".replace("/", "_")
        records.record(item, folder / name, **options)
    print(f"wrote {len(graded)} records into {folder}", file=sys.stderr)


def cmd_verify_result(args: argparse.Namespace) -> int:
    """Re-check a result record against its submission: exit 0 if every check matches, 1 on any mismatch (2, via
    :func:`main`, for a missing or edited record or a missing submission)."""
    from tgbhub.results import records

    found = records.verify(args.record_file, args.submission, cache_dir=args.cache_dir,
                           offline=args.offline or None, rtol=args.rtol)
    print(json.dumps(found.to_json(), indent=1) if args.json else "\n".join(found.lines()))
    return 0 if found.ok else 1


def cmd_aggregate_results(args: argparse.Namespace) -> int:
    """Several seeds' records as one entry (mean, sample std, n, seeds), printed as JSON."""
    from tgbhub.results import records

    print(json.dumps(records.aggregate([records.read_record(path) for path in args.records]), indent=1))
    return 0


def _add_results_commands(commands: Any) -> None:
    """``--record PATH`` on every graded run, ``verify-result`` and ``aggregate-results`` (issue 23)."""
    for name in ("evaluate", "baseline", "train"):
        commands.choices[name].add_argument("--record", metavar="PATH", help="also write the run's result record "
                                            "(JSON with its own sha256), checkable with `tgbhub verify-result`")
    commands.choices["counterfactual"].add_argument("--record", metavar="DIR", help="also write one result record "
                                                    "per graded condition and run into this folder")
    checking = commands.add_parser("verify-result", help="re-check a result record: its sha256, the submission's "
                                   "sha256 and a re-grade of the submission, metric by metric")
    checking.add_argument("record_file", metavar="RECORD", help="the JSON file --record wrote")
    checking.add_argument("submission", metavar="SUBMISSION", help="the Parquet file the record's run graded")
    checking.add_argument("--rtol", type=float, default=0.0, help="relative tolerance per metric (default 0: exact; "
                          "only for a re-grade on another machine or numpy build, whose float sums may differ in "
                          "the last bits)")
    checking.add_argument("--json", action="store_true")
    checking.set_defaults(run=cmd_verify_result)
    combining = commands.add_parser("aggregate-results", help="several seeds' result records as one entry (mean, "
                                    "sample std, n, seeds)")
    combining.add_argument("records", nargs="+", metavar="RECORD")
    combining.set_defaults(run=cmd_aggregate_results)


def cmd_submit(args: argparse.Namespace) -> int:
    """Push a submission (and its claimed record) into the hub's submissions repo; it is graded by the hub's
    ``tgbhub leaderboard update``, never here."""
    from tgbhub.results.submissions import submit

    done = submit(args.name, args.submission, to=args.to, model=args.model, record=args.record, paper=args.paper,
                  task=args.task, split=args.split, seed=args.seed, org=args.org, endpoint=args.endpoint,
                  token=args.token, cache_dir=args.cache_dir, offline=args.offline or None)
    if args.json:
        print(json.dumps(done.to_json(), indent=1))
    else:
        print(f"{done.status}: {done.repo} {done.folder} ({done.dataset}, task {done.task})")
    return 0


#: the literal first words of ``tgbhub leaderboard`` that are actions, not a dataset NAME (names hold a ``/``)
_LEADERBOARD_ACTIONS = ("update", "seed-baselines")


def cmd_leaderboard(args: argparse.Namespace) -> int:
    """``tgbhub leaderboard NAME``: print a board; ``update``: grade new submissions (the hub maintainer);
    ``seed-baselines``: submit every heuristic baseline of a family."""
    from tgbhub.results import leaderboards

    action = args.name if args.name in _LEADERBOARD_ACTIONS else "show"
    for option, value, owner in (("--hub", args.hub, "update"), ("--scheduler", args.scheduler, "update"),
                                 ("--to", args.to, "seed-baselines"), ("--runs", args.runs, "seed-baselines")):
        if value is not None and action != owner:
            raise InvalidNameError(f"{option} belongs to `tgbhub leaderboard {owner}`, not to `tgbhub leaderboard "
                                   f"{args.name}`; see `tgbhub leaderboard --help`")
    if action == "update":
        if args.hub is None:
            raise InvalidNameError("tgbhub leaderboard update needs --hub HUB (git:ROOT or hf)")
        report = leaderboards.update(args.hub, org=args.org, endpoint=args.endpoint, token=args.token,
                                     scheduler=args.scheduler, retries=args.retries, cache_dir=args.cache_dir,
                                     offline=args.offline or None)
        print(json.dumps(report.to_json(), indent=1) if args.json else "\n".join(report.lines()))
        return 0
    if action == "seed-baselines":
        if args.to is None:
            raise InvalidNameError("tgbhub leaderboard seed-baselines needs --to HUB (git:ROOT or hf)")
        datasets = [n.strip() for n in args.datasets.split(",") if n.strip()] if args.datasets else None
        models = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else None
        if args.runs:
            if datasets or models:
                raise InvalidNameError("--runs submits the trained runs in those folders; --datasets and --models "
                                       "choose heuristics to run: use one or the other")
            done = leaderboards.seed_runs(args.to, args.runs, org=args.org, endpoint=args.endpoint, token=args.token,
                                          cache_dir=args.cache_dir, offline=args.offline or None)
        else:
            done = leaderboards.seed_baselines(args.to, family=args.family, datasets=datasets, models=models,
                                               org=args.org, endpoint=args.endpoint, token=args.token,
                                               cache_dir=args.cache_dir, offline=args.offline or None)
        if args.json:
            print(json.dumps([item.to_json() for item in done], indent=1))
        else:
            for item in done:
                print(f"{item.status}: {item.dataset} {item.task} {item.folder.rsplit('/', 1)[1]}")
        return 0
    rows = leaderboards.leaderboard(args.name, args.task, endpoint=args.endpoint, org=args.org, token=args.token,
                                    cache_dir=args.cache_dir)
    print(json.dumps(rows, indent=1) if args.json else "\n".join(leaderboards.table_lines(rows)))
    return 0


def _add_leaderboard_commands(commands: Any) -> None:
    """``tgbhub submit`` and ``tgbhub leaderboard NAME | update | seed-baselines`` (issue 23)."""
    submitting = commands.add_parser("submit", help="push a submission (and its claimed record) to a hub's "
                                     "submissions repo, to be graded by the hub's `tgbhub leaderboard update`")
    submitting.add_argument("name", help="family/name[@version]")
    submitting.add_argument("submission", metavar="SUBMISSION", help="the Parquet file, in the task's schema")
    submitting.add_argument("--to", required=True, metavar="HUB", help="git:ROOT (a hub `tgbhub hub serve ROOT` "
                            "serves) or hf (--endpoint URL, --token)")
    submitting.add_argument("--model", required=True, metavar="M", help="the model's name on the board")
    submitting.add_argument("--record", metavar="R", help="the result record --record wrote for this file (your "
                            "claim; the grader re-grades and flags a claim that differs)")
    submitting.add_argument("--paper", metavar="URL", help="the paper or code to cite")
    submitting.add_argument("--task", help="task name (default: the task whose columns the file has)")
    submitting.add_argument("--split", help="graded split (default: the task's report split)")
    submitting.add_argument("--seed", type=int, metavar="S", help="the run's seed; seeds of one model aggregate "
                            "into one row (default: the record's)")
    hub_options = [("--org", "the hub organisation (default: $TGBHUB_HUB_ORG, else tgbhub)"),
                   ("--endpoint", "hub URL (--to hf / reading: default $TGBHUB_ENDPOINT)"),
                   ("--token", "write token for --to hf (default: $TGBHUB_TOKEN, else $HF_TOKEN)")]
    for option, text in hub_options:
        submitting.add_argument(option, help=text)
    submitting.add_argument("--json", action="store_true")
    submitting.set_defaults(run=cmd_submit)
    board = commands.add_parser(
        "leaderboard", help="show a dataset's leaderboard, or (maintainer) grade new submissions into the boards",
        description="tgbhub leaderboard NAME [--task T] [--endpoint URL]: print a board. "
        "tgbhub leaderboard update --hub HUB: grade every new submission and commit records and boards (the hub's "
        "maintainer). tgbhub leaderboard seed-baselines --to HUB [--family F]: run and submit every heuristic "
        "baseline.")
    board.add_argument("name", metavar="NAME|update|seed-baselines",
                       help="a dataset family/name to show its board, or the action update / seed-baselines")
    showing = board.add_argument_group("NAME (show a board)")
    showing.add_argument("--task", help="task name (default: the dataset's default task)")
    showing.add_argument("--json", action="store_true", help="print the rows as JSON")
    updating = board.add_argument_group("update (the hub maintainer)")
    updating.add_argument("--hub", metavar="HUB", help="git:ROOT or hf: where the submissions and results repos are")
    updating.add_argument("--scheduler", metavar="ADDRESS", help="grade one submission per task on a Dask cluster "
                          "(tcp://HOST:8786, local, local:N; needs tgbhub[dask])")
    updating.add_argument("--retries", type=int, default=2, help="with --scheduler: reruns of a crashed task")
    seeding = board.add_argument_group("seed-baselines")
    seeding.add_argument("--to", metavar="HUB", help="git:ROOT or hf: where to submit")
    seeding.add_argument("--family", default="t-grab", help="the family whose datasets to run (default: %(default)s)")
    seeding.add_argument("--datasets", help="comma-separated subset, e.g. ce-64,pdet-2-4 (default: all)")
    seeding.add_argument("--models", help="comma-separated baselines (default: every baseline of each task)")
    seeding.add_argument("--runs", nargs="+", metavar="DIR", help="instead: submit these trained runs (`tgbhub train "
                         "--out DIR --record DIR/record.json` folders), each with its record as the claim")
    common = board.add_argument_group("hub access (all forms)")
    for option, text in hub_options:
        common.add_argument(option, help=text)
    board.set_defaults(run=cmd_leaderboard)


def cmd_site_build(args: argparse.Namespace) -> int:
    """Render the catalogue as a static HTML site into OUT and print what was written."""
    from tgbhub.site import build_site

    report = build_site(args.out, family=args.family, with_figures=args.with_figures, cache_dir=args.cache_dir,
                        results=args.results)
    if args.json:
        print(json.dumps({"out": str(report.out), "pages": len(report.pages), "figures": list(report.figures),
                          "figures_skipped": dict(report.figures_skipped)}, indent=1))
        return 0
    print(f"wrote {len(report.pages)} pages and {len(report.figures)} figures into {report.out} "
          f"(open {report.out / 'index.html'})")
    for name, reason in report.figures_skipped.items():
        print(f"figure skipped: {name}: {reason}")
    return 0


def _add_site_command(commands: Any) -> None:
    """``tgbhub site build OUT``: the catalogue as static HTML (issue 23)."""
    site = commands.add_parser("site", help="the hub's catalogue as a static HTML site")
    site_commands = site.add_subparsers(dest="site_command", required=True)
    building = site_commands.add_parser("build", help="render the catalogue, one page per dataset, into OUT")
    building.add_argument("out", metavar="OUT", help="folder to write into (created if missing; pages overwritten)")
    building.add_argument("--family", help="only this family, e.g. chaosnet or tgb")
    building.add_argument("--with-figures", action="store_true", help="draw one figure per dataset the cache already "
                          "holds (needs matplotlib: pip install 'tgbhub[plot]'); nothing is built for a figure")
    building.add_argument("--results", metavar="DIR", help="a results repo whose leaderboards/<family>/<name>/<task>"
                          ".parquet fill the leaderboard pages: a checkout, or the git repo `tgbhub leaderboard "
                          "update` writes (e.g. ROOT/datasets/tgbhub/results of a git: hub)")
    building.add_argument("--json", action="store_true")
    building.set_defaults(run=cmd_site_build)
    _accept_global_options([building])


def _add_import_command(commands: Any) -> None:
    importing = commands.add_parser("import", help="import a benchmark's dataset from its release (download or "
                                    "local copy), converted and verified, into the cache")
    importing.add_argument("benchmark", choices=api.importer_names(),
                           help="whose release, e.g. tgb (TGB 1.x and 2.0); `tgbhub list --importers` says more")
    importing.add_argument("name", help="the dataset's name in that benchmark, e.g. tgbl-wiki")
    importing.add_argument("--from", dest="source", help="a local zip, a folder holding it, or an http(s) URL "
                           "(default: the copy a previous import kept, else TGB's upstream URL)")
    importing.add_argument("--offline", action="store_true", help="never download")
    importing.add_argument("--manifests", help="also write the manifest into this manifest root (a maintainer "
                           "bundling the import, e.g. the repository's manifests/, before `tgbhub publish tgb`)")
    importing.add_argument("--expected-stats", metavar="FILE", help="a release you changed on purpose: check it "
                           "against the statistics in this JSON object (keys as in `tgbhub info tgb/NAME`) instead "
                           "of TGB's published ones; the manifest records the import as a modified release")
    importing.add_argument("--json", action="store_true")
    importing.set_defaults(run=cmd_import)


def cmd_export(args: argparse.Namespace) -> int:
    """Export a dataset for another loader (DyGLib, the TLPCF forks' ml_ files, TGB's negatives pickle) and print
    what was written."""
    from tgbhub.compat import export

    dataset = api.load_dataset(args.name, cache_dir=args.cache_dir)
    written = export.export(dataset, args.format, args.out, split=args.split, task=args.task)
    if args.json:
        print(json.dumps({"format": written.format, "dataset": written.dataset,
                          "files": [str(p) for p in written.files], "info": written.info}, indent=1, default=str))
        return 0
    print(f"{written.dataset}: {written.format} export")
    for path in written.files:
        print(f"wrote {path} ({human_bytes(path.stat().st_size)})")
    info = written.info
    for key in ("counts", "split_times", "counts_by_rule", "misassigned", "test_rows_before_test_start",
                "dropped_splits", "queries", "keys"):
        if key in info:
            print(f"{key}: {json.dumps(info[key])}")
    return 0


def cmd_forecast_stats(args: argparse.Namespace) -> int:
    """Batch-evaluation diagnostics of a dataset (NMI of timestamp and batch/window id, leakage counts, batch
    durations, window sizes; link-forecasting spec §1.3-1.4): a table or JSON, and with --out a JSON and a PNG."""
    from tgbhub.cache import write_text_atomic
    from tgbhub.errors import MissingExtraError
    from tgbhub.forecasting import diagnostics

    dataset = api.load_dataset(args.name, cache_dir=args.cache_dir)
    report = diagnostics.report(dataset, batch_size=args.batch_size, horizon=args.horizon, split=args.split)
    written: dict[str, Path] = {}
    plot_skipped = None
    if not args.no_files:
        stem = output_folder("forecast-stats", dataset.manifest.name).name
        out = Path(args.out) if args.out else Path(stem)
        out.mkdir(parents=True, exist_ok=True)
        written["json"] = out / f"{stem}.json"
        write_text_atomic(written["json"], json.dumps(report, indent=1, allow_nan=False) + "\n")
        try:
            written["plot"] = diagnostics.plot_report(report, out / f"{stem}.png")
        except MissingExtraError as exc:
            plot_skipped = str(exc)
    if args.json:
        print(json.dumps({**report, "written": {k: str(v) for k, v in written.items()}, "plot_skipped": plot_skipped},
                         indent=1, allow_nan=False))
        return 0
    print("\n".join(diagnostics.report_lines(report)))
    for kind, path in written.items():
        print(f"wrote {kind}: {path}")
    if plot_skipped:
        print(f"plot skipped: {plot_skipped}")
    return 0


def _add_forecast_stats_command(commands: Any) -> None:
    stats = commands.add_parser("forecast-stats", help="batch vs window diagnostics of a dataset (NMI, leakage, "
                                "batch durations, window sizes)")
    stats.add_argument("name", help="family/name[@version]")
    stats.add_argument("--batch-size", type=int, default=200, help="batch size b (default: %(default)s)")
    stats.add_argument("--horizon", type=float, help="window length h in the dataset's time unit (default: the "
                       "window-forecast task's horizon, else nice(b x T/m), one snapshot for discrete time)")
    stats.add_argument("--split", default="test", help="the split of the per-split measures (default: %(default)s)")
    stats.add_argument("--json", action="store_true")
    stats.add_argument("--out", help="folder for forecast-stats-NAME.json and .png (default: ./forecast-stats-NAME/)")
    stats.add_argument("--no-files", action="store_true", help="print only; write no JSON or figure")
    stats.set_defaults(run=cmd_forecast_stats)


def _add_scheduler_options(command: argparse.ArgumentParser) -> None:
    """--scheduler and --retries: run one task per item on a Dask cluster (pip install 'tgbhub[dask]')."""
    from tgbhub.scale import DEFAULT_RETRIES, SCHEDULER_FORMS

    command.add_argument("--scheduler", metavar="ADDRESS",
                         help=f"run one task per item on a Dask cluster: {SCHEDULER_FORMS}; the cache (--cache-dir) "
                         "and files must be on a filesystem every worker shares (needs tgbhub[dask])")
    command.add_argument("--retries", type=int, default=DEFAULT_RETRIES,
                         help="with --scheduler: reruns of a task that crashed unexpectedly (default: %(default)s; a "
                         "killed worker's task is rerun elsewhere regardless)")


def _models_by_task(kind: str) -> str:
    """``type: a, b; type: c`` from the registry of heuristic baselines or of trainers, so a registered plug-in is
    listed without an edit here (--task picks a dataset's task of another type)."""
    if kind == "baselines":
        from tgbhub.baselines.registry import BASELINES as table
    else:
        from tgbhub.trainers.base import TRAINERS as table
    by_type: dict[str, list[str]] = {}
    for task_type, model in sorted(table):
        by_type.setdefault(task_type, []).append(model)
    return "; ".join(f"{task_type}: {', '.join(models)}" for task_type, models in by_type.items())


class _RegistryHelp(argparse.HelpFormatter):
    """Fills ``{baselines}`` and ``{trainers}`` in a help text only when help is printed: reading the registries
    imports every baseline and trainer module, which no other run of the command line needs."""

    def _expand_help(self, action: argparse.Action) -> str:
        text = super()._expand_help(action)
        for kind in ("baselines", "trainers"):
            if "{%s}" % kind in text:
                text = text.replace("{%s}" % kind, _models_by_task(kind))
        return text


def _add_grading_commands(commands: Any) -> None:
    evaluate = commands.add_parser("evaluate", help="grade a submission file (Parquet) against a dataset's task")
    evaluate.add_argument("name", help="family/name[@version]")
    evaluate.add_argument("files", nargs="+", metavar="FILE",
                          help="the submission(s), Parquet files in the task's declared schema; several print one "
                          "JSON line each")
    evaluate.add_argument("--split", help="split to grade (default: the task's report split, usually test)")
    evaluate.add_argument("--task", help="task name (default: the task whose columns the file has, else the "
                          "dataset's default task)")
    evaluate.add_argument("--detail", action="store_true", help="add per-snapshot or per-query detail")
    evaluate.add_argument("--teacher-forced", metavar="FILE",
                          help="rollout forecasting only: Parquet file of teacher-forced window forecasts (columns "
                          "window, values); adds the test MSE and applies the validity screen")
    evaluate.add_argument("--json", action="store_true")
    _add_scheduler_options(evaluate)
    evaluate.set_defaults(run=cmd_evaluate)
    baseline = commands.add_parser("baseline", help="run a heuristic baseline and grade it",
                                   formatter_class=_RegistryHelp)
    baseline.add_argument("model", help="the heuristic, by task type: {baselines}; options "
                          "follow a colon, e.g. edgebank-tw:memory=dyglib,seed=0 (window forecasting)")
    baseline.add_argument("name", help="family/name[@version]")
    baseline.add_argument("--split", help="split to predict (default: the task's report split)")
    baseline.add_argument("--task", help="task name (default: the dataset's default task)")
    baseline.add_argument("--out", help="also write the submission to this Parquet file")
    baseline.add_argument("--json", action="store_true")
    baseline.set_defaults(run=cmd_baseline)
    trainer = commands.add_parser("train", help="train a neural baseline, grade it, write checkpoint and submission",
                                  formatter_class=_RegistryHelp)
    trainer.add_argument("model", help="the model, by task type: {trainers}")
    trainer.add_argument("name", help="family/name[@version]")
    trainer.add_argument("--seed", type=int, default=42, help="seed of weights, shuffling and dropout (default 42)")
    trainer.add_argument("--device", default="auto", help="auto (CUDA when present, else CPU), cpu, cuda or cuda:N")
    trainer.add_argument("--epochs", type=int, help="maximum epochs (default: the model's published protocol)")
    trainer.add_argument("--batch-size", type=int, help="default: the published protocol's")
    trainer.add_argument("--lr", type=float, help="learning rate (default: the model's published one)")
    trainer.add_argument("--patience", type=int, help="early-stopping patience in epochs (default: the protocol's)")
    trainer.add_argument("--limit-batches", type=int, help="cap train batches per epoch (smoke runs; not comparable "
                         "to published numbers)")
    trainer.add_argument("--hparam", action="append", default=[], metavar="KEY=VALUE",
                         help="override a model size, e.g. --hparam channels=64 (repeatable)")
    trainer.add_argument("--compile", action="store_true", help="torch.compile the model (off by default)")
    trainer.add_argument("--amp", action="store_true", help="bfloat16 autocast of the training steps; validation "
                         "and rollout stay float32 (off by default)")
    trainer.add_argument("--task", help="task name (default: the dataset's first task the model trains for)")
    trainer.add_argument("--split", help="split to predict and grade (default: the task's report split)")
    trainer.add_argument("--out", help="folder for model.pt, submission.parquet and result.json (default: "
                         "./train-MODEL-NAME-sSEED)")
    trainer.add_argument("--resume", action="store_true", help="keep the fit's state in OUT/fit-state.pt after every "
                         "epoch and go on from it when it exists (a run over several processes or GPU slots; "
                         "ChaosNet models)")
    trainer.add_argument("--time-limit", type=float, metavar="SECONDS", help="with --resume: stop at the epoch "
                         "boundary before an epoch that would end later than this (exit 3; run again to go on)")
    trainer.add_argument("--json", action="store_true", help="print the run's JSON summary")
    trainer.set_defaults(run=cmd_train)
    counter = commands.add_parser("counterfactual", help="TLPCF counterfactual check on distorted test splits")
    counter.add_argument("model", help="a ranking baseline (edgebank, persistence, recency, ...) or a long-format "
                         "predictions Parquet file (columns variant, run, query, neg_rank, score); with --generative "
                         "the dataset NAME")
    counter.add_argument("name", nargs="?", help="the base dataset, family/name[@version]")
    counter.add_argument("--negatives", choices=("paired", "regenerated"), default="paired",
                         help="paired: each distorted query keeps its real event's negatives (default); regenerated: "
                         "hist-rnd recomputed on the distorted stream")
    counter.add_argument("--kinds", nargs="+", help="variant kinds (default: shuffle intense-k5 intense-k1)")
    counter.add_argument("--seeds", help="variant seeds, e.g. 0-9 (default) or 0,1,2")
    counter.add_argument("--controls", nargs="*", default=["edgebank", "recency"],
                         help="control heuristics scored on the same variants (default: edgebank recency)")
    counter.add_argument("--epsilon", type=float, default=0.05, help="the margin of margin_drop (default: 0.05)")
    counter.add_argument("--out", help="folder for counterfactual.json/.parquet/.png (default: "
                         "./counterfactual-MODEL-DATASET)")
    counter.add_argument("--generative", metavar="FILE", help="instead: ATD/ACD of predicted events (Parquet: src, "
                         "dst, t[, sample_id]) against the real test split and the reference baselines")
    counter.add_argument("--fallback", default="cap", choices=("cap", "horizon_end", "error"),
                         help="--generative: ATD's missing-pair convention (default: cap)")
    counter.add_argument("--clip", action="store_true", help="--generative: drop predicted events outside the real "
                         "test window")
    counter.add_argument("--undirected", action="store_true", help="--generative: (u, v) and (v, u) are one pair")
    counter.add_argument("--json", action="store_true")
    _add_scheduler_options(counter)
    counter.set_defaults(run=cmd_counterfactual)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tgbhub", description="The dataset hub for temporal-graph learning.")
    parser.add_argument("--version", action="version", version=f"tgbhub {__version__}")
    parser.add_argument("--cache-dir", help="cache root (default: $TGBHUB_CACHE, else the user cache folder)")
    parser.add_argument("--offline", action="store_true", help="open no socket (as TGBHUB_OFFLINE=1)")
    parser.add_argument("--json", action="store_true", help="print JSON where the command has a JSON form")
    parser.add_argument("--quiet", action="store_true", help="no progress lines or notices on stderr; errors and "
                        "warnings still print")
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="list datasets")
    listing.add_argument("--family", help="only this family, e.g. t-grab")
    listing.add_argument("--derived", action="store_true",
                         help="also list derived datasets (distorted variants), one row each")
    listing.add_argument("--json", action="store_true", help="every dataset, derived ones included, as JSON")
    listing.add_argument("--tasks", action="store_true",
                         help="list the registered tasks every dataset of a kind declares (e.g. window-forecast)")
    listing.add_argument("--importers", action="store_true",
                         help="list the benchmarks whose releases `tgbhub import SOURCE NAME` converts")
    listing.add_argument("--transforms", action="store_true",
                         help="list the transforms a variant can be derived with (name~KIND[-pN...]-sSEED)")
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
    verify = commands.add_parser("verify", help="re-hash cached files (bit rot keeps sizes and mtimes) and repair")
    verify.add_argument("names", nargs="*", help="family/name[@version] ... (default with --all: every cached one)")
    verify.add_argument("--all", action="store_true", help="every dataset the cache holds")
    verify.add_argument("--no-repair", action="store_true", help="report a damaged entry (withdrawn) without "
                        "fetching or rebuilding it")
    verify.add_argument("--offline", action="store_true", help="repair from the cache's own rebuild only")
    verify.add_argument("--json", action="store_true")
    verify.set_defaults(run=cmd_verify)
    build = commands.add_parser("build", help="regenerate datasets locally into the cache")
    build.add_argument("names", nargs="*", help="family/name[@version] ...")
    build.add_argument("--family", help="every dataset of a family")
    build.add_argument("--all", action="store_true", help="every base dataset")
    build.add_argument("--derived", action="store_true",
                       help="with --family/--all: their published derived variants too (1,560 for t-grab)")
    build.add_argument("--tasks", action="store_true", help="also build the artifacts of every task the datasets "
                       "declare through a task document (e.g. window-forecast negatives), so grading needs no more")
    build.add_argument("--json", action="store_true", help="one row per dataset: status, digests, worker, seconds")
    _add_scheduler_options(build)
    build.set_defaults(run=cmd_build)
    publish = commands.add_parser("publish", help="publish one version of a family to a hub or mirror")
    publish.add_argument("family", help="e.g. t-grab")
    publish.add_argument("--version", required=True,
                         help="the version to publish, e.g. 1.0.0 (tags v1.0.0 and NAME-v1.0.0 per dataset)")
    publish.add_argument("--to", required=True, metavar="TARGET",
                         help="hf (Hugging Face Hub API), git:ROOT (repos for `tgbhub hub serve ROOT`) or mirror:DIR")
    publish.add_argument("--datasets", help="comma-separated subset, e.g. ce-64,ce-256 (default: the whole family)")
    publish.add_argument("--repo", help="ORG/NAME of the family repo (default: $TGBHUB_HUB_ORG or tgbhub, /FAMILY)")
    publish.add_argument("--endpoint", help="hub URL for --to hf (default: $TGBHUB_ENDPOINT, else huggingface.co)")
    publish.add_argument("--token", help="write token for --to hf (default: $TGBHUB_TOKEN, else $HF_TOKEN)")
    publish.add_argument("--private", action="store_true", help="create the repo private (--to hf)")
    publish.set_defaults(run=cmd_publish)
    hub = commands.add_parser("hub", help="run a local Hugging Face-compatible hub")
    hub_commands = hub.add_subparsers(dest="hub_command", required=True)
    serve = hub_commands.add_parser("serve", help="serve the git repos under ROOT (olah in offline mirror mode)")
    serve.add_argument("root", help="the folder `tgbhub publish --to git:ROOT` wrote")
    serve.add_argument("--port", type=int, default=8090, help="port (default: %(default)s; 0 picks a free one)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: %(default)s)")
    serve.add_argument("--state-dir", metavar="DIR",
                       help="where olah's config and log go, outside ROOT (default: the user's state folder, "
                       "tgbhub/hub/<root name>-<hash>); nothing is ever written into ROOT")
    serve.add_argument("--site", metavar="DIR", help="serve this `tgbhub site build` output at / (under /site/); "
                       "default: build one at start into the state folder, with the leaderboards of "
                       "ROOT/datasets/<org>/results if that repo exists")
    serve.add_argument("--no-site", action="store_true", help="serve the Hub API only")
    serve.set_defaults(run=cmd_hub_serve)
    doctor = commands.add_parser("doctor", help="check whether this machine rebuilds the published data bit for bit")
    doctor.add_argument("--json", action="store_true")
    doctor.set_defaults(run=cmd_doctor)
    _add_grading_commands(commands)
    exporting = commands.add_parser("export", help="write a dataset's files for another loader (DyGLib, the TLPCF "
                                    "forks' ml_ files, TGB's (src, dst, t)-keyed negatives)")
    exporting.add_argument("name", help="family/name[@version], e.g. a variant family/base~shuffle-s0")
    exporting.add_argument("--format", required=True, choices=("dyglib", "ml", "tgb-negatives"),
                           help="dyglib: ml_<name>.csv with a split column; ml: the paper's shuffle_<j>_ / "
                           "intense_<k>_<j>_ml_<ds> files and split_times; tgb-negatives: <name>_<split>_ns.pkl")
    exporting.add_argument("--out", required=True, help="folder to write into (created if missing)")
    exporting.add_argument("--split", default="test", help="tgb-negatives: the split (default: %(default)s)")
    exporting.add_argument("--task", help="tgb-negatives: the ranking task (default: the dataset's default, "
                           "paired on a variant; e.g. ranking-regenerated)")
    exporting.add_argument("--json", action="store_true")
    exporting.set_defaults(run=cmd_export)
    _add_forecast_stats_command(commands)
    _add_import_command(commands)
    _add_results_commands(commands)
    _add_leaderboard_commands(commands)
    _add_site_command(commands)
    _accept_global_options(commands.choices.values())
    return parser


def _one_line_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                      file: TextIO | None = None, line: str | None = None) -> None:
    """On the command line a warning is a message for a person, not a source location."""
    print(f"tgbhub: warning: {message}", file=file or sys.stderr)


@contextmanager
def _cli_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.showwarning = _one_line_warning
        yield


#: options accepted before or after any command (``tgbhub --cache-dir X build N`` = ``tgbhub build N --cache-dir X``)
GLOBAL_OPTIONS = ("--cache-dir", "--offline", "--json", "--quiet")


def _accept_global_options(subcommands: Any) -> None:
    """Let every command take the global options after its name too. A command's own definition keeps its help but
    gets no default of its own (``SUPPRESS``), so an option given before the command is not reset by the command's
    default; a command without one gets it added the same way."""
    for sub in subcommands:
        for option in GLOBAL_OPTIONS:
            action = sub._option_string_actions.get(option)  # argparse keeps no public index of a parser's options
            if action is not None:
                action.default = argparse.SUPPRESS
            elif option == "--cache-dir":
                sub.add_argument(option, default=argparse.SUPPRESS, help="cache root (as the global --cache-dir)")
            else:
                sub.add_argument(option, action="store_true", default=argparse.SUPPRESS,
                                 help=f"as the global {option}")


@contextmanager
def _environment(settings: Mapping[str, str]) -> Iterator[None]:
    """Global options that are environment settings (``--offline``: TGBHUB_OFFLINE=1; ``--quiet``: no progress, no
    notices) hold while the command runs and are restored after, for in-process callers."""
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
    settings = {"TGBHUB_OFFLINE": "1"} if args.offline else {}
    if args.quiet:
        settings.update(TGBHUB_NO_PROGRESS="1", TGBHUB_QUIET="1")
    return settings


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        with _cli_warnings(), _environment(_settings(args)):
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


if __name__ == "__main__":
    raise SystemExit(main())
