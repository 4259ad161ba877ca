"""ChaosNetBench generation and build benchmarks (run through ``scripts/bench chaosnet``); prints a markdown table.

1. Trajectories of a slice of instances covering all three N (100 ICs x 10,000 steps after a 1,000-step transient):
   tgbhub's numba kernel against a plain vectorised-numpy implementation of the same recurrence
   (``generators/chaosnet/reference.py``, all ICs advanced together), in the same run, with the ratio; both
   extrapolated to all 96 instances (32 per N, the cost does not depend on K or rho) and labelled as such.
2. The full generation tgbhub does for a build: trajectories plus the per-IC indicators (Benettin lambda over the
   recorded steps, SALI screens of 1,000 and 5,000 steps), on the same slice, extrapolated the same way.
3. Building and caching one N=32 instance (512 MB) from nothing: a fresh process, an empty cache, offline (generate,
   write HDF5, verify the sha256, install).
4. A cached load of that instance (open + memory-map + touch one value).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import tgbhub  # noqa: E402
from generators.chaosnet.artifacts import seeds_of  # noqa: E402
from generators.chaosnet.catalogue import N_VALUES, full_instances  # noqa: E402
from generators.chaosnet.dynamics import simulate, trajectories  # noqa: E402
from generators.chaosnet.reference import simulate_numpy  # noqa: E402

SLICE = [(2.0, 0.05), (6.5, 0.5)]  # x N in (8, 16, 32): 6 instances, both ends of the coupling range
BUILD = "chaosnet/k2.0-rho0.2-n32"


def _timed(fn, *args) -> float:
    started = time.perf_counter()
    fn(*args)
    return time.perf_counter() - started


def per_n(measure, instances) -> dict[int, float]:
    """Mean seconds per instance for each N over the slice."""
    times: dict[int, list[float]] = {n: [] for n in N_VALUES}
    for instance in instances:
        params = instance.params
        times[instance.n].append(measure(params))
    return {n: statistics.mean(t) for n, t in times.items()}


def build_in_fresh_process() -> float:
    with tempfile.TemporaryDirectory() as cache:
        code = (f"import time, tgbhub; t = time.perf_counter(); "
                f"ds = tgbhub.load_dataset({BUILD!r}, cache_dir={cache!r}, offline=True); "
                f"assert ds.source == 'build', ds.source; print(time.perf_counter() - t)")
        started = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
        total = time.perf_counter() - started
        print(f"  build {BUILD}: {float(out.stdout):.2f} s inside load_dataset, {total:.2f} s with interpreter "
              "start and imports", file=sys.stderr)
        return total


def cached_load(repeats: int) -> float:
    with tempfile.TemporaryDirectory() as cache:
        tgbhub.load_dataset(BUILD, cache_dir=cache, offline=True)
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            float(tgbhub.load_dataset(BUILD, cache_dir=cache, offline=True).states[99, 9999, 63])
            times.append(time.perf_counter() - started)
        return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3, help="repetitions of the tgbhub measurements (median)")
    args = parser.parse_args()
    instances = [i for i in full_instances() if (i.k, i.rho) in SLICE]
    trajectories(2.0, 0.4, 8, np.array([1, 2]), 10, 10)  # load the compiled kernels once, as any process would
    simulate(2.0, 0.4, 8, np.array([1, 2]), 10, 10, (5,))

    def kernel(p):
        return _timed(trajectories, p["K"], p["epsilon"], p["N"], seeds_of(p), p["transient"], p["steps"])

    def full(p):
        return _timed(simulate, p["K"], p["epsilon"], p["N"], seeds_of(p), p["transient"], p["steps"],
                      tuple(p["sali_horizons"]))

    def numpy_peer(p):
        return _timed(simulate_numpy, p["K"], p["epsilon"], p["N"], seeds_of(p), p["transient"], p["steps"])

    ours = [per_n(kernel, instances) for _ in range(args.repeats)]
    ours_full = [per_n(full, instances) for _ in range(args.repeats)]
    theirs = per_n(numpy_peer, instances)
    median = {n: statistics.median(r[n] for r in ours) for n in N_VALUES}
    median_full = {n: statistics.median(r[n] for r in ours_full) for n in N_VALUES}
    for n in N_VALUES:
        print(f"  N={n}: tgbhub {median[n]:.2f} s (with indicators {median_full[n]:.2f} s), numpy {theirs[n]:.2f} s "
              "per instance", file=sys.stderr)
    per_n_count = len(full_instances()) // len(N_VALUES)
    slice_ours, slice_theirs = sum(2 * median[n] for n in N_VALUES), sum(2 * theirs[n] for n in N_VALUES)
    all_ours = per_n_count * sum(median.values())
    all_full = per_n_count * sum(median_full.values())
    all_theirs = per_n_count * sum(theirs.values())
    builds = [build_in_fresh_process() for _ in range(args.repeats)]
    rows = [
        (f"trajectories, slice of {len(instances)} instances, N = 8/16/32 (s)", f"{slice_ours:.2f}",
         f"{slice_theirs:.1f}", f"{slice_theirs / slice_ours:.1f}x"),
        ("trajectories, all 96 instances, extrapolated from the slice (s)", f"{all_ours:.1f}", f"{all_theirs:.0f}",
         f"{all_theirs / all_ours:.1f}x"),
        ("trajectories + lambda + SALI 1k/5k, all 96, extrapolated (s)", f"{all_full:.1f}", "-", "-"),
        (f"build + cache {BUILD} (512 MB) from nothing, fresh process (s)", f"{statistics.median(builds):.2f}",
         "-", "-"),
        (f"cached load {BUILD} (s)", f"{cached_load(10):.4f}", "-", "-"),
    ]
    header = ("measurement", f"tgbhub (median of {args.repeats})", "vectorised numpy (1 run)", "ratio")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(4)]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |")
    print("| " + " | ".join("-" * w for w in widths) + " |")
    for row in rows:
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths)) + " |")


if __name__ == "__main__":
    main()
