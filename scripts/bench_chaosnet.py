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
5. Refusing a build this machine could not reproduce (a manifest whose recipe checks or digest are altered, so the
   refusal is certain): the preflight (checks before building) against the way 1.0.0 found out (build everything,
   then compare the content digest). Same outcome, a SourceUnavailableError; in-process, kernels loaded.

Measured rows and extrapolated rows are printed as two separate tables.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import tgbhub
from tgbhub import api
from tgbhub.errors import SourceUnavailableError
from tgbhub.manifest import parse_manifest
from tgbhub.local.gateway import BuildSource
from generators.chaosnet.artifacts import seeds_of
from generators.chaosnet.catalogue import N_VALUES, full_instances
from generators.chaosnet.dynamics import simulate, trajectories
from generators.chaosnet.reference import simulate_numpy

ROOT = Path(__file__).resolve().parent.parent

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


def refusal(alter: str) -> float:
    """Seconds until a build of BUILD that cannot verify is refused: ``alter`` is ``checks`` (the preflight catches
    it) or ``digest`` (no checks, a wrong digest: the whole build runs first)."""
    doc = json.loads(api.registry().path(BUILD, api.resolve(BUILD).version).read_text())
    if alter == "checks":
        doc["recipe"]["checks"]["lambda_max"] = "0x1.0p-1"
    else:
        doc["recipe"].pop("checks")
        doc["digest"][0]["value"] = "0" * 64
        doc["distribution"][0]["sha256"] = "0" * 64
    manifest = parse_manifest(doc)
    with tempfile.TemporaryDirectory() as cache:
        started = time.perf_counter()
        try:
            api.ensure_cached(manifest, Path(cache), [BuildSource()])
        except SourceUnavailableError:
            return time.perf_counter() - started
    raise RuntimeError(f"the altered {alter} of {BUILD} was accepted")


def _print_table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |")
    print("| " + " | ".join("-" * w for w in widths) + " |")
    for row in rows:
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths)) + " |")


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
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # each refusal also warns that the build source failed
        preflight = statistics.median(refusal("checks") for _ in range(args.repeats))
        late = statistics.median(refusal("digest") for _ in range(args.repeats))
    measured = [
        (f"trajectories, slice of {len(instances)} instances, N = 8/16/32 (s)", f"{slice_ours:.2f}",
         f"{slice_theirs:.1f}", f"{slice_theirs / slice_ours:.1f}x"),
        (f"build + cache {BUILD} (512 MB) from nothing, fresh process (s)", f"{statistics.median(builds):.2f}",
         "-", "-"),
        (f"cached load {BUILD} (s)", f"{cached_load(10):.4f}", "-", "-"),
        (f"refuse an unreproducible {BUILD}: preflight vs build-then-digest (s)", f"{preflight:.3f}",
         f"{late:.2f}", f"{late / preflight:.0f}x"),
    ]
    extrapolated = [
        ("trajectories, all 96 instances (s)", f"{all_ours:.1f}", f"{all_theirs:.0f}", f"{all_theirs / all_ours:.1f}x"),
        ("trajectories + lambda + SALI 1k/5k, all 96 (s)", f"{all_full:.1f}", "-", "-"),
    ]
    _print_table(("measured", f"tgbhub (median of {args.repeats})", "peer (numpy 1 run / build-then-digest)",
                  "ratio"), measured)
    print()
    _print_table(("EXTRAPOLATED from the slice (32 instances per N)", "tgbhub", "vectorised numpy", "ratio"),
                 extrapolated)


if __name__ == "__main__":
    main()
