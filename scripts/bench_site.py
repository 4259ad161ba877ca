"""Site figure benchmark (``python -m scripts.bench_site``): drawing a family's figures against building its data,
and one large synthetic temporal graph drawn on its memory-mapped columns; prints a markdown table.

1. Build every base dataset of ``--family`` (default: the 52 T-GRAB datasets, up to t-grab/psto-64-p90's 9.1M rows)
   into an empty cache: the peer, the work a figure must not cost much more than.
2. Draw every figure of every one of them as ``tgbhub site build`` does (open from the cache, draw, store in the
   cache's figure store): ours, cold, in one process and spread over worker processes (the default: one per CPU, up
   to 8). Then again with the store filled (a rebuild): nothing is drawn.
3. A synthetic temporal graph of ``--rows`` events (default 10M; power-law node ids, 1,000 snapshots) written as
   ``.npy`` columns and memory-mapped: every temporal figure drawn, its time and the peak of what numpy allocates
   above the mapped columns (``tracemalloc``, which numpy reports to), against generating and writing the columns.

ratio = ours / peer (the goal: drawing within 2x the build).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np

import tgbhub
import tgbhub.plot
from scripts._table import print_table
from tgbhub import api
from tgbhub.data import TemporalGraphDataset
from tgbhub.manifest import parse_manifest, plain

#: the synthetic graph's shape: enough nodes and snapshots that every bincount and unique is a real one
NODES = 200_000
SNAPSHOTS = 1_000


def synthetic(rows: int, folder: Path, seed: int = 0) -> tuple[TemporalGraphDataset, float]:
    """A temporal graph of ``rows`` events as memory-mapped ``.npy`` columns under ``folder``, with a manifest made
    from t-grab/pdet-2-1's (its sizes and splits replaced), and the seconds generating and writing took."""
    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    t = np.sort(rng.integers(0, SNAPSHOTS, rows, dtype=np.int64))
    np.save(folder / "t.npy", t)
    del t
    for column in ("src", "dst"):  # a heavy-tailed degree distribution, as real graphs have
        ids = (rng.pareto(1.2, rows) * 50).astype(np.int64) % NODES
        np.save(folder / f"{column}.npy", ids.astype(np.int32))
        del ids
    built = time.perf_counter() - started
    doc = plain(api.resolve("t-grab/pdet-2-1").raw)
    doc["name"] = f"t-grab/synthetic-{rows}"
    doc["graph"].update(num_nodes=NODES, num_snapshots=SNAPSHOTS)
    cut_val, cut_test = int(SNAPSHOTS * 0.7), int(SNAPSHOTS * 0.85)
    doc["splits"] = {"unit": "snapshot", "boundaries": {"train": [0, cut_val], "val": [cut_val, cut_test],
                                                        "test": [cut_test, SNAPSHOTS]}}
    columns = {name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in ("t", "src", "dst")}
    return TemporalGraphDataset(parse_manifest(doc), columns, "synthetic"), built


def measure_large(rows: int, folder: Path) -> dict[str, Any]:
    """Draw every temporal figure of a ``rows``-event synthetic graph (:func:`synthetic`).

    Returns:
        ``rows``, ``build_seconds`` (generate and write the columns), ``draw_seconds`` (every figure, saved as PNG)
        and ``peak_bytes``: the peak numpy and Python allocation while drawing, above the memory-mapped columns.
    """
    ds, built = synthetic(rows, folder / "columns")
    tgbhub.plot.require_matplotlib("scripts/bench_site.py")  # matplotlib's own import is not the drawing's memory
    tracemalloc.start()
    started = time.perf_counter()
    for drawn in tgbhub.plot.draw_all(ds):
        tgbhub.plot.save(drawn.figure, folder / f"{drawn.kind}.png")
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"rows": rows, "build_seconds": built, "draw_seconds": seconds, "peak_bytes": peak}


def family(name: str, limit: int | None) -> dict[str, Any]:
    """Build a family's base datasets into an empty cache, then draw their figures cold and warm (the site's way)."""
    from tgbhub.site.builder import page_path
    from tgbhub.site.figures import STORE, default_workers, site_figures

    names = api.registry().names(name, derived=False)[:limit]
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        started = time.perf_counter()
        rows_total = 0
        for dataset in names:
            rows_total += tgbhub.load_dataset(dataset, cache_dir=root, offline=True).num_rows
        built = time.perf_counter() - started
        rows = [row for row in api.catalogue_rows(name, cache_dir=root) if row["name"] in names]
        manifests = {dataset: api.resolve(dataset) for dataset in names}
        pages = {dataset: page_path(dataset) for dataset in names}
        started = time.perf_counter()
        serial = site_figures(rows, manifests, root, pages, required=True, workers=1)
        drawn_serial = time.perf_counter() - started
        shutil.rmtree(root / STORE)
        started = time.perf_counter()
        cold = site_figures(rows, manifests, root, pages, required=True)
        drawn = time.perf_counter() - started
        assert serial.drawn == cold.drawn
        started = time.perf_counter()
        warm = site_figures(rows, manifests, root, pages, required=True)
        reused = time.perf_counter() - started
    return {"datasets": len(names), "rows": rows_total, "build": built, "draw": drawn, "figures": cold.drawn,
            "rebuild": reused, "reused": warm.reused, "serial": drawn_serial, "workers": default_workers(len(names))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--family", default="t-grab", help="the family whose base datasets are built and drawn")
    parser.add_argument("--limit", type=int, help="only the family's first N datasets (default: all)")
    parser.add_argument("--rows", type=int, default=10_000_000, help="events of the synthetic graph (default 10M)")
    args = parser.parse_args()
    found = family(args.family, args.limit)
    with tempfile.TemporaryDirectory() as folder:
        large = measure_large(args.rows, Path(folder))
    print(f"{args.family}: {found['datasets']} datasets, {found['rows']:,} rows; synthetic: {args.rows:,} rows, "
          f"{NODES:,} nodes, {SNAPSHOTS} snapshots. One run each; ratio = ours / peer (goal: at most 2).\n")
    header = ("ours", "seconds", "peer (same data)", "peer seconds", "ratio (ours / peer)", "note")
    print_table(header, [
        (f"draw {found['figures']} figures of {found['datasets']} {args.family} datasets (cold)",
         f"{found['draw']:.1f}", "build them into an empty cache", f"{found['build']:.1f}",
         f"{found['draw'] / found['build']:.2f}",
         f"{found['workers']} worker processes (one per CPU, up to 8); open from the cache, draw, store"),
        ("the same, in one process", f"{found['serial']:.1f}", "build them into an empty cache",
         f"{found['build']:.1f}", f"{found['serial'] / found['build']:.2f}", "figure_workers=1"),
        (f"site rebuild: {found['reused']} figures reused", f"{found['rebuild']:.2f}",
         "build them into an empty cache", f"{found['build']:.1f}", f"{found['rebuild'] / found['build']:.3f}",
         "nothing drawn"),
        (f"draw every figure of {args.rows:,} synthetic rows", f"{large['draw_seconds']:.1f}",
         "generate and write its columns", f"{large['build_seconds']:.1f}",
         f"{large['draw_seconds'] / large['build_seconds']:.2f}",
         f"peak allocation above the mapped columns {large['peak_bytes'] / 2**20:.0f} MiB"),
    ])


if __name__ == "__main__":
    main()
