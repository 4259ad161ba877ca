"""TGB loading benchmark (run through ``scripts/bench tgb``): a tgbl-format release of ``--edges`` edges (default
1,000,000) with its val/test negatives, loaded from tgbhub's verified cache against py-tgb 2.3.0's processed cache of
the same files, in the same run; prints a markdown table of medians and ratios (py-tgb time / tgbhub time).

Setup (not timed, except the two one-off rows):
  A release in tgbl-wiki v2's exact layout is written to a scratch folder: ``tgbl-wiki_edgelist_v2.csv`` (JODIE's
  CSV: header ``user_id,item_id,timestamp,state_label,comma_separated_list_of_features``, rows src, dst, timestamp
  written as a float ``36.0``, state label, then ``--feat-dim`` edge features, 4 by default where the real file has
  172, to keep the CSV small), ``tgbl-wiki_{val,test}_ns_v2.pkl`` (py-tgb's pickled dicts, HIGHEST_PROTOCOL: key
  ``(np.int64(src), np.int64(dst + max(src) + 1), np.int64(t))`` for every val/test edge of py-tgb's quantile split,
  value an int64 array of ``--q`` destinations, 20 by default, drawn uniformly without replacement from the
  destination range minus the positive; upstream's hist_rnd draws half of them from the source's train history,
  which changes what is drawn, not how long anything takes), and the flat zip ``tgbl-wiki-v2.zip`` (deflate,
  level 1). Users are drawn with a Zipf-like skew, timestamps rise by 0-39 per edge, and (src, dst, t) triples are
  unique, so the pickles hold exactly one key per val/test edge, as both loaders see them. Then, each once:
    * "one-off: tgbhub import": ``tgbhub.local.imports.import_tgb("tgbl-wiki", zip, expected_stats=...)`` reads the zip,
      converts CSV and pickles to Parquet / .npy, checks the release's own num_nodes / num_edges, writes the
      manifest and installs it verified into a scratch cache.
    * "one-off: py-tgb processing": py-tgb's ``LinkPropPredDataset(download=False)`` on the unzipped folder, which
      parses the CSV and writes its processed cache (``ml_tgbl-wiki.pkl``, ``ml_tgbl-wiki_edge.pkl``).
  Before timing, both sides are checked to agree: py-tgb's ``full_data`` sources, destinations, timestamps and
  edge_feat equal tgbhub's (``tgbhub.compat.tgb``'s ``full_data`` and the native ``ds.t/src/dst/edge_feat``), and the
  negatives of a sample of ``--check-queries`` val and test edges are equal through py-tgb's ``query_batch``,
  tgbhub.compat.tgb's ``query_batch`` and the native ``ds.negatives(split)`` rows.

Timed rows (median of ``--repeats``; every repeat of every cell runs in a fresh Python subprocess, so no in-process
cache helps either side; start-up and module imports happen before the clock starts; the OS page cache is warm on
both sides, as the setup just wrote and read the files: these are warm-cache, not cold-disk, numbers):
  1. edges, cached: tgbhub ``load_dataset("tgb/tgbl-wiki", offline=True)`` (manifest, verified cache, memory-mapped
     columns) and reading every value of t, src, dst and edge_feat (their sums) vs py-tgb's ``LinkPropPredDataset``
     constructor from its processed cache (pickled DataFrame and features, full_data, masks, sampler) and the same
     sums over ``full_data``. A second row times ``tgbhub.compat.tgb.LinkPropPredDataset`` (py-tgb's API: full_data
     in py-tgb's row order, masks) with the same sums. An info row times the same load a second time in the same
     subprocess (tgbhub's registry index and lazily imported modules warm; py-tgb's the same), to show what the
     first load spends once per process.
  2. negatives, cached: with each side's dataset already open (not timed), tgbhub ``ds.negatives("test")`` and
     reading every value (``int(np.asarray(neg.negatives).sum())``) vs py-tgb ``load_test_ns()`` (unpickling the
     dict) and reading every value of every array (one ``np.concatenate`` of the dict's values, then its sum); and
     the same for val and test together.
  3. negatives of every test edge through the query API in batches of ``--batch`` (200), after each side's
     ``load_test_ns()`` (not timed): py-tgb ``negative_sampler.query_batch`` vs ``tgbhub.compat.tgb``'s
     ``negative_sampler.query_batch`` (both return a list of lists of ints), and, as a second row, tgbhub's native
     loop (``ds.negatives("test").negatives[i:i + batch]`` copied to an array, row order = test edges in time order)
     against the same py-tgb time. The results are kept and checksummed after the clock stops.
"one-off" rows are single measurements (see Setup). Each timed cell returns a checksum of what it read; the script
refuses to print a row whose two sides differ.
Nothing is extrapolated: every number is measured at the size the table's title states.

Run time: about 3.5 min at the default 1M edges on 2 cores, most of it py-tgb's subprocesses importing torch and
torch_geometric (about 5-7 s each, not timed); ``--repeats 3`` or ``--edges 100000`` for a quicker look.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("TGBHUB_NO_PROGRESS", "1")
os.environ.setdefault("TGBHUB_OFFLINE", "1")

from scripts._draws import distinct_draws  # noqa: E402
from scripts._table import print_table  # noqa: E402
from tests import tgb_formats as formats  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

NAME = "tgbl-wiki"
HUB_NAME = f"tgb/{NAME}"
RESULT = "BENCH_TGB_RESULT "


# --- the release (setup, not timed) ----------------------------------------------------------------------------------

def write_release(folder: Path, edges: int, users: int, items: int, feat_dim: int, q: int,
                  seed: int) -> tuple[dict[str, Path], dict[str, int]]:
    """tgbl-wiki v2's three files in ``folder`` (see the module docstring) and the release's own statistics."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    weight = 1.0 / np.arange(1, users + 1) ** 0.8
    src = rng.choice(users, edges, p=weight / weight.sum()).astype(np.int64)
    src[0] = users - 1  # every user id range end appears, so max(src) is users - 1
    dst = rng.integers(0, items, edges).astype(np.int64)
    dst[:2] = (0, items - 1)
    t = np.cumsum(rng.integers(0, 40, edges)).astype(np.int64)
    # unique (src, dst, t): a repeated triple would share one pickle key; move its dst until none is repeated
    while True:
        key = (t * users + src) * items + dst
        _, first = np.unique(key, return_index=True)
        repeated = np.setdiff1d(np.arange(edges), first)
        if not len(repeated):
            break
        dst[repeated] = (dst[repeated] + 1 + rng.integers(0, items - 1, len(repeated))) % items
    label = (rng.random(edges) < 0.02).astype(np.int64)
    features = np.round(rng.normal(0.0, 0.5, (edges, feat_dim)), 3)

    edgelist = folder / formats.edgelist_name(NAME)
    columns = {"user_id": pa.array(src), "item_id": pa.array(dst),
               "timestamp": pc.binary_join_element_wise(pc.cast(pa.array(t), pa.string()), ".0", ""),
               "state_label": pa.array(label)}
    columns.update({f"f{k}": pa.array(features[:, k]) for k in range(feat_dim)})
    with open(edgelist, "wb") as handle:
        handle.write(b"user_id,item_id,timestamp,state_label,comma_separated_list_of_features\n")
        pcsv.write_csv(pa.table(columns), handle, pcsv.WriteOptions(include_header=False, quoting_style="none"))

    # py-tgb's view: dst shifted past max(src), its quantile split, keys of numpy int64 scalars
    p_dst = dst + int(src.max()) + 1
    val_time, test_time = np.quantile(t, [0.70, 0.85])
    masks = {"val": (t > val_time) & (t <= test_time), "test": t > test_time}
    lo = int(p_dst.min())
    paths = {"edgelist": edgelist}
    for split, mask in masks.items():
        s, d, ts = src[mask], p_dst[mask], t[mask]
        draws = distinct_draws(rng, len(s), items - 1, q)
        negatives = lo + draws + (draws >= (d - lo)[:, None])  # skip the positive destination
        table = {(a, b, c): row for a, b, c, row in zip(s, d, ts, negatives)}
        paths[f"{split}_ns"] = folder / formats.ns_name(NAME, split)
        with open(paths[f"{split}_ns"], "wb") as handle:
            pickle.dump(table, handle, protocol=pickle.HIGHEST_PROTOCOL)
    stats = {"num_nodes": int(len(np.union1d(src, p_dst))), "num_edges": int(edges)}
    return paths, stats


def zip_release(files: dict[str, Path], out_dir: Path) -> Path:
    """The flat upstream zip ``tgbl-wiki-v2.zip`` (deflate level 1: the format upstream uses, written faster)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / formats.zip_name(NAME)
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for path in files.values():
            archive.write(path, path.name)
    return target


def setup(work: Path, args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, float], dict[str, float]]:
    """Write, zip, import (tgbhub) and process (py-tgb) the release; returns the paths, the one-off times and the
    sizes (MiB) of what each side loads."""
    from tgbhub.local.imports import import_tgb

    started = time.perf_counter()
    files, stats = write_release(work / "release", args.edges, args.users, args.items, args.feat_dim, args.q,
                                 args.seed)
    zipped = zip_release(files, work / "zips")
    written = time.perf_counter() - started
    pytgb_folder = formats.unzip_like_pytgb(zipped, work / "pytgb", NAME)
    shutil.rmtree(work / "release")
    cache = work / "tgbhub-cache"

    started = time.perf_counter()
    import_tgb(NAME, zipped, cache_dir=cache, expected_stats=stats)
    imported = time.perf_counter() - started

    from tgb.linkproppred.dataset import LinkPropPredDataset

    root, meta = formats.pytgb_root(pytgb_folder, NAME)
    started = time.perf_counter()
    with formats._no_download():
        LinkPropPredDataset(name=NAME, root=root, meta_dict=meta, preprocess=True, download=False)
    processed = time.perf_counter() - started
    paths = {"cache": str(cache), "pytgb_root": root, "pytgb_meta": meta, "zip": str(zipped)}

    def mib(folder: Path, pattern: str) -> float:
        return sum(p.stat().st_size for p in folder.rglob(pattern) if p.is_file()) / 2 ** 20

    sizes = {"zip": zipped.stat().st_size / 2 ** 20, "csv": (pytgb_folder / formats.edgelist_name(NAME)).stat().st_size
             / 2 ** 20, "pytgb_processed": mib(pytgb_folder, "ml_*.pkl"), "pytgb_ns": mib(pytgb_folder, "*_ns_*.pkl"),
             "tgbhub_cache": mib(cache, "*") - mib(cache / "downloads", "*") if (cache / "downloads").exists()
             else mib(cache, "*")}
    return paths, {"write": written, "import": imported, "process": processed}, sizes


# --- agreement (not timed) -------------------------------------------------------------------------------------------

def check_agreement(paths: dict[str, Any], sample: int, seed: int) -> None:
    """Raises AssertionError unless py-tgb's and tgbhub's edges and (sampled) negatives are the same."""
    import tgbhub
    from tgb.linkproppred.dataset import LinkPropPredDataset as PytgbDataset
    from tgbhub.compat.tgb import LinkPropPredDataset as CompatDataset

    with formats._no_download():
        theirs = PytgbDataset(name=NAME, root=paths["pytgb_root"], meta_dict=paths["pytgb_meta"], download=False)
    theirs.load_val_ns()
    theirs.load_test_ns()
    ours = CompatDataset(name=NAME, cache_dir=paths["cache"])
    ours.load_val_ns()
    ours.load_test_ns()
    native = tgbhub.load_dataset(HUB_NAME, cache_dir=paths["cache"], offline=True)
    data = theirs.full_data
    for key in ("sources", "destinations", "timestamps", "edge_feat"):
        assert np.array_equal(ours.full_data[key], data[key]), f"compat full_data[{key!r}] differs from py-tgb's"
    order = np.argsort(data["timestamps"], kind="stable")
    for column, key in (("src", "sources"), ("dst", "destinations"), ("t", "timestamps")):
        assert np.array_equal(getattr(native, column), data[key][order]), f"ds.{column} differs from py-tgb's"
    assert np.array_equal(np.asarray(native.columns["edge_feat"], dtype=np.float64), data["edge_feat"][order])
    rng = np.random.default_rng(seed)
    for split, mask in (("val", theirs.val_mask), ("test", theirs.test_mask)):
        assert np.array_equal(getattr(ours, f"{split}_mask"), mask), f"{split} masks differ"
        rows = np.flatnonzero(mask)
        picked = np.sort(rng.choice(len(rows), min(sample, len(rows)), replace=False))
        s, d, t = (data[k][rows[picked]] for k in ("sources", "destinations", "timestamps"))
        expected = [[int(x) for x in row] for row in theirs.negative_sampler.query_batch(s, d, t, split_mode=split)]
        assert ours.negative_sampler.query_batch(s, d, t, split_mode=split) == expected, f"{split}: query_batch"
        negatives = native.negatives(split)
        lo, hi = native.splits[split]
        assert len(negatives) == hi - lo == len(rows), f"{split}: {len(negatives)} queries, {len(rows)} edges"
        assert np.array_equal(negatives.src[picked], s) and np.array_equal(negatives.t[picked], t)
        got = [np.asarray(negatives.negatives[i, :negatives.count[i]]).tolist() for i in picked]
        assert got == expected, f"{split}: ds.negatives rows differ from py-tgb's"


# --- the timed cells, each run in a fresh subprocess ---------------------------------------------------------------

def _pytgb(paths: dict[str, Any]) -> Any:
    from tgb.linkproppred.dataset import LinkPropPredDataset

    return LinkPropPredDataset(name=NAME, root=paths["pytgb_root"], meta_dict=paths["pytgb_meta"], download=False)


def _edge_sums(t: np.ndarray, src: np.ndarray, dst: np.ndarray, feat: np.ndarray) -> list[float]:
    return [int(t.sum()), int(src.sum()), int(dst.sum()), round(float(np.asarray(feat).sum()), 6)]


def _batches(n: int, batch: int) -> range:
    return range(0, n, batch)


def run_cell(cell: str, paths: dict[str, Any], batch: int) -> dict[str, Any]:
    """Time ``cell`` (its untimed preparation first); returns ``seconds``, a ``check`` sum of what it read and, for
    the edges cells, ``again``: the same load a second time in the same process (an info row)."""
    import tgbhub
    import tgbhub.compat.tgb as compat

    clock = time.perf_counter
    if cell.startswith("edges/"):
        def load() -> list[float]:
            if cell == "edges/tgbhub":
                ds = tgbhub.load_dataset(HUB_NAME, cache_dir=paths["cache"], offline=True)
                return _edge_sums(ds.t, ds.src, ds.dst, ds.columns["edge_feat"])
            ds = compat.LinkPropPredDataset(name=NAME, cache_dir=paths["cache"]) if cell == "edges/compat" else \
                _pytgb(paths)
            data = ds.full_data
            return _edge_sums(data["timestamps"], data["sources"], data["destinations"], data["edge_feat"])

        started = clock()
        check = load()
        seconds = clock() - started
        started = clock()
        load()
        return {"seconds": seconds, "check": check, "again": clock() - started}
    if cell.startswith("neg-"):
        splits = ("val", "test") if cell.startswith("neg-valtest") else ("test",)
        if cell.endswith("/tgbhub"):
            ds = tgbhub.load_dataset(HUB_NAME, cache_dir=paths["cache"], offline=True)
            started = clock()
            check = [int(np.asarray(ds.negatives(split).negatives).sum(dtype=np.int64)) for split in splits]
            return {"seconds": clock() - started, "check": check}
        ds = _pytgb(paths)
        started = clock()
        check = []
        for split in splits:
            getattr(ds, f"load_{split}_ns")()
            check.append(int(np.concatenate(list(ds.negative_sampler.eval_set[split].values())).sum()))
        return {"seconds": clock() - started, "check": check}
    if cell.startswith("query/"):
        if cell == "query/native":
            negatives = tgbhub.load_dataset(HUB_NAME, cache_dir=paths["cache"], offline=True).negatives("test")
            rows = len(negatives)
            started = clock()
            out = [np.array(negatives.negatives[i:i + batch]) for i in _batches(rows, batch)]
            elapsed = clock() - started
            return {"seconds": elapsed, "check": [rows, int(sum(int(block.sum(dtype=np.int64)) for block in out))]}
        ds = _pytgb(paths) if cell == "query/pytgb" else compat.LinkPropPredDataset(name=NAME, cache_dir=paths["cache"])
        ds.load_test_ns()
        data, mask = ds.full_data, ds.test_mask
        src, dst, t = data["sources"][mask], data["destinations"][mask], data["timestamps"][mask]
        sampler = ds.negative_sampler
        started = clock()
        out = [sampler.query_batch(src[i:i + batch], dst[i:i + batch], t[i:i + batch], split_mode="test")
               for i in _batches(len(src), batch)]
        elapsed = clock() - started
        total = int(sum(int(x) for block in out for row in block for x in row))
        return {"seconds": elapsed, "check": [len(src), total]}
    raise ValueError(f"unknown cell {cell!r}")


def child(cell: str, paths_json: str, batch: int) -> None:
    """The subprocess: import the cell's library (not timed; py-tgb's import pulls in torch and torch_geometric,
    about 5 s, which is why tgbhub's cells do not import it), run one cell, print its time and checksum."""
    modules = ["pyarrow.parquet", "tgbhub", "tgbhub.compat.tgb"]
    if cell.endswith("/pytgb"):
        modules += ["pandas", "tgb.linkproppred.dataset"]
    for module in modules:
        importlib.import_module(module)
    paths = json.loads(paths_json)
    if cell.endswith("/pytgb"):
        with formats._no_download():
            result = run_cell(cell, paths, batch)
    else:
        result = run_cell(cell, paths, batch)
    print(RESULT + json.dumps(result), flush=True)


def spawn(cell: str, paths: dict[str, Any], batch: int) -> dict[str, Any]:
    # the child runs as this module from the repository root, where ``scripts`` is importable
    done = subprocess.run([sys.executable, "-m", __spec__.name, "--child", cell, "--paths", json.dumps(paths),
                           "--batch", str(batch)], capture_output=True, text=True, check=False, cwd=ROOT)
    lines = [line for line in done.stdout.splitlines() if line.startswith(RESULT)]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"cell {cell} failed (exit {done.returncode}):\n{done.stdout[-3000:]}\n"
                           f"{done.stderr[-3000:]}")
    return json.loads(lines[-1][len(RESULT):])


# --- the table -------------------------------------------------------------------------------------------------------

ROWS = [  # label, tgbhub cell, py-tgb cell
    ("edges, cached: load + read t, src, dst, edge_feat", "edges/tgbhub", "edges/pytgb"),
    ("edges, cached, py-tgb's API: tgbhub.compat.tgb.LinkPropPredDataset + read full_data", "edges/compat",
     "edges/pytgb"),
    ("negatives, cached: test split, load + read every value", "neg-test/tgbhub", "neg-test/pytgb"),
    ("negatives, cached: val + test, load + read every value", "neg-valtest/tgbhub", "neg-valtest/pytgb"),
    ("every test edge's negatives, query_batch({batch} a call): tgbhub.compat.tgb vs py-tgb", "query/compat",
     "query/pytgb"),
    ("every test edge's negatives, {batch} rows a step: ds.negatives('test').negatives[i:i+{batch}] vs py-tgb "
     "query_batch", "query/native", "query/pytgb"),
]


def label(count: int) -> str:
    return f"{count // 1_000_000}M" if count % 1_000_000 == 0 else f"{count:,}"


def main() -> None:
    if "--scale" in sys.argv[1:]:  # the scale bench: its own options (scripts/bench tgb --scale --help)
        from scripts import _tgb_scale

        _tgb_scale.main(sys.argv[1:])
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--edges", type=int, default=1_000_000, help="edges in the release (default 1,000,000)")
    parser.add_argument("--q", type=int, default=20, help="negatives per val/test edge (default 20)")
    parser.add_argument("--feat-dim", type=int, default=4, help="edge feature columns (default 4; tgbl-wiki has 172)")
    parser.add_argument("--users", type=int, default=None, help="source ids (default edges / 20, as tgbl-wiki)")
    parser.add_argument("--items", type=int, default=None, help="destination ids (default max(100, edges / 500))")
    parser.add_argument("--repeats", type=int, default=5, help="fresh-subprocess repeats per cell (default 5)")
    parser.add_argument("--batch", type=int, default=200, help="query_batch size (default 200)")
    parser.add_argument("--check-queries", type=int, default=2000,
                        help="val and test edges whose negatives are compared across loaders (default 2000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, default=None, help="scratch folder (default: a temporary one, removed)")
    parser.add_argument("--scale", action="store_true", help="the scale bench instead: 1M, 10M and 67M-row releases "
                        "imported by tgbhub and py-tgb, MRR over 10M x 100 (about 30 min; --scale --help)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--paths", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.paths, args.batch)
        return
    args.users = args.users or max(50, args.edges // 20)
    args.items = args.items or max(100, args.edges // 500)

    scratch = tempfile.TemporaryDirectory(prefix="bench-tgb-") if args.workdir is None else None
    # absolute: the cells run from the repository root
    work = Path(scratch.name) if scratch else args.workdir.resolve()
    try:
        paths, once, sizes = setup(work, args)
        check_agreement(paths, args.check_queries, args.seed)
        cells = sorted({cell for _, *pair in ROWS for cell in pair})
        times: dict[str, list[float]] = {cell: [] for cell in cells}
        again: dict[str, list[float]] = {cell: [] for cell in cells}
        checks: dict[str, Any] = {}
        for _ in range(args.repeats):  # interleaved, so drift hits both sides alike
            for cell in cells:
                result = spawn(cell, paths, args.batch)
                times[cell].append(result["seconds"])
                if "again" in result:
                    again[cell].append(result["again"])
                if checks.setdefault(cell, result["check"]) != result["check"]:
                    raise RuntimeError(f"cell {cell} read {result['check']}, then {checks[cell]}")
    finally:
        if scratch:
            scratch.cleanup()

    rows = []
    for text, ours, theirs in ROWS:
        if checks[ours] != checks[theirs]:
            raise RuntimeError(f"{text}: tgbhub read {checks[ours]}, py-tgb {checks[theirs]}")
        o, t = statistics.median(times[ours]), statistics.median(times[theirs])
        rows.append((text.format(batch=args.batch) + " (s)", f"{o:.4f}", f"{t:.4f}", f"{t / o:.1f}x"))
    o, t = statistics.median(again["edges/tgbhub"]), statistics.median(again["edges/pytgb"])
    rows.append(("info: edges, cached, the same load again in the same process (tgbhub's registry index and "
                 "py-tgb's imports already warm) (s)", f"{o:.4f}", f"{t:.4f}", f"{t / o:.1f}x"))
    rows.append(("one-off: tgbhub import (zip -> verified cache) vs py-tgb processing (CSV -> ml_*.pkl) (s)",
                 f"{once['import']:.2f}", f"{once['process']:.2f}", "info"))
    title = (f"{label(args.edges)} edges x {args.feat_dim} features, {args.q} negatives per val/test edge "
             f"(tgbl-wiki v2 layout; zip {sizes['zip']:.0f} MiB, CSV {sizes['csv']:.0f} MiB; py-tgb processed "
             f"cache {sizes['pytgb_processed']:.0f} MiB + negatives pickles {sizes['pytgb_ns']:.0f} MiB; tgbhub "
             f"cache {sizes['tgbhub_cache']:.0f} MiB); setup wrote the release in {once['write']:.1f} s")
    print(title)
    print()
    print_table(("work", f"tgbhub (s, median of {args.repeats})", f"py-tgb 2.3.0 (s, median of {args.repeats})",
                 "py-tgb / tgbhub"), rows)


if __name__ == "__main__":
    main()
