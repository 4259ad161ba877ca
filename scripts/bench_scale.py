"""Building on a Dask cluster (run through ``scripts/bench scale``): serial against ``local:1`` and ``local:2``.

A fixed slice of full ChaosNet instances (default: the first 8 of N = 8 in catalogue order; ``--n`` picks another N,
``--count`` the slice size, ``--all`` every one of the 96 trajectories' instances) is built from nothing into a
fresh cache three ways, each time through :func:`tgbhub.scale.build`, the path ``tgbhub build`` takes:

- serial: a fresh process builds them one after another (it pays its own imports and numba's cache load once);
- ``local:N`` for N = 1, 2: a LocalCluster of N single-threaded worker processes on 127.0.0.1, one task per
  instance (each worker pays the same imports on its first task); the cluster's start is timed separately.

Then the same names again on the warm cluster, all cached, which measures the per-task overhead alone (scheduling,
a verified-cache lookup, the row's round trip). Speed-up is serial seconds over cluster seconds; per worker it is
that divided by N (1.0 = perfect scaling).

This machine has 2 CPU cores, shared with other work: local:2 can at best halve the time, and any other load on the
machine shows up directly in the local:2 row. Results are printed as a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scripts._table import print_table
from tgbhub import api, scale

ROOT = Path(__file__).resolve().parent.parent

SERIAL = ("import json, sys, time; from tgbhub import scale; names = json.loads(sys.argv[1]); "
          "started = time.perf_counter(); report = scale.build(names, cache_dir=sys.argv[2]); "
          "report.raise_for_failures(); "
          "print(json.dumps({'seconds': time.perf_counter() - started, "
          "'tasks': [r.seconds for r in report.rows], 'status': [r.status for r in report.rows]}))")


def instances(n: int, count: int | None) -> list[str]:
    """Full (non-mini) ChaosNet instances of size ``n`` (every N when ``n`` is 0), in catalogue order."""
    names = [name for name in api.registry().names("chaosnet") if "/mini-" not in name
             and (n == 0 or name.endswith(f"-n{n}"))]
    return names if count is None else names[:count]


def serial(names: list[str]) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as cache:
        out = subprocess.run([sys.executable, "-c", SERIAL, json.dumps(names), cache], capture_output=True,
                             text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def on_cluster(names: list[str], workers: int) -> dict[str, object]:
    import distributed

    started = time.perf_counter()
    with distributed.LocalCluster(**scale.local_cluster_options(workers)) as cluster, \
            distributed.Client(cluster) as client:
        start = time.perf_counter() - started
        cache = tempfile.mkdtemp(prefix="bench-scale-")
        try:
            cold = scale.build(names, client=client, cache_dir=cache)
            cold.raise_for_failures()
            warm = scale.build(names, client=client, cache_dir=cache)
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    assert all(r.status == "built" for r in cold.rows) and all(r.status == "cached" for r in warm.rows)
    return {"seconds": cold.seconds, "start": start, "tasks": [r.seconds for r in cold.rows],
            "warm": warm.seconds, "warm_tasks": [r.seconds for r in warm.rows]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=8, choices=(0, 8, 16, 32), help="instance size N (0: every N)")
    parser.add_argument("--count", type=int, default=8, help="how many instances (default: %(default)s)")
    parser.add_argument("--all", action="store_true",
                        help="all 96 instances (N = 8, 16, 32; minutes, 27 GiB of cache per run)")
    parser.add_argument("--workers", type=int, nargs="+", default=sorted({1, 2, os.cpu_count() or 1}),
                        help="local:N for each N given (default: 1, 2 and this machine's core count)")
    args = parser.parse_args()
    try:
        import distributed  # noqa: F401
    except ImportError:
        sys.exit("bench_scale needs Dask: pip install -c scripts/constraints.txt -e '.[dask]'")
    names = instances(0, None) if args.all else instances(args.n, args.count)
    started_load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"building {len(names)} ChaosNet instance(s): {names[0]} ... {names[-1]}", file=sys.stderr)
    base = serial(names)
    rows = [["serial (1 process)", "-", f"{base['seconds']:.2f}", f"{statistics.median(base['tasks']):.2f}", "-",
             "1.00", "1.00"]]
    for workers in args.workers:
        result = on_cluster(names, workers)
        speedup = base["seconds"] / result["seconds"]
        rows.append([f"local:{workers}", f"{result['start']:.2f}", f"{result['seconds']:.2f}",
                     f"{statistics.median(result['tasks']):.2f}",
                     f"{1000 * result['warm'] / len(names):.0f} ms "
                     f"({1000 * statistics.median(result['warm_tasks']):.0f})",
                     f"{speedup:.2f}", f"{speedup / workers:.2f}"])
    print_table(["run", "cluster start s", f"build {len(names)} s", "median task s",
                 "cached rerun per task (in task)", "speed-up", "speed-up per worker"], rows)
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"\n{os.cpu_count()} CPU core(s); load average at the start {started_load}, at the end {load} (other work "
          "on the machine takes cores from the workers)")


if __name__ == "__main__":
    main()
