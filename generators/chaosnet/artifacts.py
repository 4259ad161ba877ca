"""ChaosNetBench artifacts: one byte-stable HDF5 file per instance, and the Croissant manifest that describes it.

The file holds flat datasets (no groups: HDF5 groups carry modification times) written with ``track_times=False``:

====================== ===================== ==========================================================
``state``              float64 (ICs, T, 2N)  ``[q_1..q_N, p_1..p_N]`` mod 2pi; one uncompressed chunk per IC
``initial_conditions`` float64 (ICs, 2N)     ``[q0, p0]`` with p0 unwrapped in [-pi, pi)
``seeds``              int64 (ICs,)          per-trajectory seeds
``lambda_max``         float64 (ICs,)        Benettin maximal Lyapunov exponent over the T recorded steps
``sali``               float64 (ICs, S)      SALI screens, one column per horizon in ``sali_horizons``
``sali_iterations``    int64 (ICs, S)        the iteration of the stored SALI value (early stop at 1e-12)
``sali_horizons``      int64 (S,)            screen horizons (1,000 = upstream's, 5,000)
``adjacency_*``        float32               ``ring`` (N, N), ``jacobian`` and ``coupling_only`` (2N, 2N)
====================== ===================== ==========================================================

Chaotic float64 mantissas do not compress (gzip level 4 keeps 94.6 % of the bytes upstream), so ``state`` is stored
uncompressed: a load can memory-map it, and a build spends no time in zlib.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from tgbhub.errors import GenerationError
from tgbhub.hashing import DIGEST_ALGORITHM, column_sha256 as sha256_of, content_digest
from tgbhub.manifest import Recipe, plain

from ..libm import check_libm
from ..manifests import croissant_document, file_object
from . import preflight
from .catalogue import CITATION, GENERATOR, REGIMES, UPSTREAM, VERSION, Instance, history_until, responsible_ai
from .dynamics import (
    BASE_SEED,
    SALI_CHAOTIC,
    SALI_REGULAR,
    SALI_STOP,
    Simulation,
    deviation_vectors,
    deviation_vectors_blas,
    sali_label,
    simulate,
    trajectory_seed,
)

TRAJECTORIES_FILE = "trajectories.h5"
LICENSE = "https://creativecommons.org/licenses/by/4.0/"
ARRAYS = ("state", "initial_conditions", "seeds", "lambda_max", "sali", "sali_iterations", "sali_horizons",
          "adjacency_ring", "adjacency_jacobian", "adjacency_coupling_only")
#: how each generator version makes an IC's SALI deviation vectors (1.0.0 through BLAS, see its changelog entry)
DEVIATION: dict[str, Callable[[int, int], np.ndarray]] = {"1.0.0": deviation_vectors_blas, "1.1.0": deviation_vectors}


# ------------------------------------------------------------------------------------------------ topology


def ring_adjacency(n: int) -> np.ndarray:
    """Sites on a ring: ``A[i, i +- 1 mod N] = 1`` (float32, symmetric, 2N nonzeros)."""
    ring = np.zeros((n, n), dtype=np.float32)
    sites = np.arange(n)
    ring[sites, (sites + 1) % n] = 1.0
    ring[sites, (sites - 1) % n] = 1.0
    return ring


def jacobian_adjacency(n: int) -> np.ndarray:
    """Upstream's 2N x 2N dependency pattern in blocked order, rows depend on columns, diagonal zeroed (6N nonzeros).

    q_i <- q_{i+-1} (coupling through p') and p_i; p_i <- q_i and q_{i+-1}; no p-p edges. Not symmetric.
    """
    ring, eye, zero = ring_adjacency(n), np.eye(n, dtype=np.float32), np.zeros((n, n), dtype=np.float32)
    pattern = np.block([[ring, eye], [ring + eye, zero]])
    np.fill_diagonal(pattern, 0.0)
    return (pattern > 0).astype(np.float32)


def coupling_only_adjacency(n: int) -> np.ndarray:
    """Only the epsilon-dependent edges: q_i <- q_{i+-1} and p_i <- q_{i+-1} (4N nonzeros)."""
    ring, zero = ring_adjacency(n), np.zeros((n, n), dtype=np.float32)
    return np.block([[ring, zero], [ring, zero]])


# ------------------------------------------------------------------------------------------------ generation


def seeds_of(instance_params: Mapping[str, Any], base_seed: int = BASE_SEED) -> np.ndarray:
    """The per-IC seeds of an instance."""
    k, epsilon, n = instance_params["K"], instance_params["epsilon"], instance_params["N"]
    return np.array([trajectory_seed(k, epsilon, n, ic, base_seed) for ic in range(instance_params["n_ics"])],
                    dtype=np.int64)


def generate(params: Mapping[str, Any], base_seed: int = BASE_SEED, version: str = VERSION) -> Simulation:
    """Simulate an instance from its recipe parameters with generator ``version``.

    Raises:
        GenerationError: if this machine's ``sin``/``cos``/``log`` are not the reference ones.
    """
    check_libm()
    return simulate(params["K"], params["epsilon"], params["N"], seeds_of(params, base_seed), params["transient"],
                    params["steps"], tuple(params["sali_horizons"]), DEVIATION[version])


def arrays_of(simulation: Simulation) -> dict[str, np.ndarray]:
    """The file's datasets, in the fixed order the logical digest uses."""
    n = simulation.initial_conditions.shape[1] // 2
    return {"state": simulation.states, "initial_conditions": simulation.initial_conditions,
            "seeds": simulation.seeds, "lambda_max": simulation.lyapunov, "sali": simulation.sali,
            "sali_iterations": simulation.sali_iterations,
            "sali_horizons": np.asarray(simulation.sali_horizons, dtype=np.int64),
            "adjacency_ring": ring_adjacency(n), "adjacency_jacobian": jacobian_adjacency(n),
            "adjacency_coupling_only": coupling_only_adjacency(n)}


def write_trajectories(arrays: Mapping[str, np.ndarray], params: Mapping[str, Any],
                       path: str | os.PathLike[str], version: str = VERSION) -> None:
    """Write the instance's HDF5 file: fixed dataset order and dtypes, no timestamps, one chunk per IC (byte-stable).

    """
    import h5py  # a core dependency; imported on use so that reading manifests stays light

    with h5py.File(path, "w", libver="earliest", track_order=False) as handle:
        for key in ("K", "rho", "epsilon"):
            handle.attrs[key] = float(params[key])
        for key in ("N", "transient", "steps"):
            handle.attrs[key] = int(params[key])
        handle.attrs["variable_ordering"] = "blocked"
        handle.attrs["generator"] = f"{GENERATOR}@{version}"
        for name in ARRAYS:
            values = np.ascontiguousarray(arrays[name])
            little = values.dtype.newbyteorder("<")
            chunks = (1, *values.shape[1:]) if name == "state" else None
            handle.create_dataset(name, data=values.astype(little, copy=False), chunks=chunks, track_times=False)


def check_recipe(recipe: Recipe) -> None:
    """The preflight of a build: every component check that can run without the long computation (well under a
    second for any instance, once numba's cache is warm).

    Raises:
        GenerationError: if this tgbhub lacks the recipe's generator version, or a component of this machine
            computes differently from the one that published the data (named, with the way out).
    """
    if recipe.generator != GENERATOR or recipe.version not in DEVIATION:
        raise GenerationError(f"recipe needs {recipe.generator} version {recipe.version}; this tgbhub has "
                              f"{GENERATOR} versions {', '.join(DEVIATION)}. Install the tgbhub release that matches "
                              "the dataset version, or fetch it from a hub")
    deviation = DEVIATION[recipe.version]
    if deviation is deviation_vectors_blas:
        preflight.check_blas(deviation)
    preflight.check(plain(recipe.params), int(recipe.seed), plain(recipe.checks), deviation)


def build_recipe(recipe: Recipe, folder: Path) -> Path:
    """The local-build entry point: check, then regenerate an instance's file from its manifest recipe into
    ``folder``.

    Raises:
        GenerationError: if :func:`check_recipe` refuses the build (before the long computation).
    """
    check_recipe(recipe)
    params = plain(recipe.params)
    path = folder / TRAJECTORIES_FILE
    write_trajectories(arrays_of(generate(params, int(recipe.seed), recipe.version)), params, path, recipe.version)
    return path


# ------------------------------------------------------------------------------------------------ manifest


def _mean_std(values: np.ndarray) -> tuple[float, float]:
    """Population mean and std, each sum correctly rounded (``math.fsum``): no pairwise or SIMD summation order."""
    items = [float(v) for v in values]
    mean = math.fsum(items) / len(items)
    return mean, math.sqrt(math.fsum((v - mean) ** 2 for v in items) / len(items))


def writer_versions() -> dict[str, str]:
    """The HDF5 writer behind this process's file bytes (the sha256 is for downloads; rebuilds verify by digest)."""
    import h5py  # a core dependency, imported on use like the writer

    return {"h5py": h5py.__version__, "hdf5": h5py.version.hdf5_version}


def _split_of(ic: int, splits: Mapping[str, tuple[int, int]]) -> str:
    return next(name for name, (lo, hi) in splits.items() if lo <= ic < hi)


def statistics(instance: Instance, simulation: Simulation) -> dict[str, Any]:
    """Per-instance indicator summaries and sizes (what the README tables and tests read)."""
    lyapunov = simulation.lyapunov
    lambda_mean, lambda_std = _mean_std(lyapunov)
    screens = {}
    for column, horizon in enumerate(simulation.sali_horizons):
        labels = [sali_label(v) for v in simulation.sali[:, column]]
        screens[str(horizon)] = {"chaotic_fraction": labels.count("chaotic") / len(labels),
                                 "counts": {name: labels.count(name) for name in ("chaotic", "sticky", "regular")}}
    return {
        "num_ics": instance.n_ics, "num_steps": instance.steps, "transient": instance.transient,
        "num_sites": instance.n, "num_variables": 2 * instance.n, "num_rows": instance.n_ics * instance.steps,
        "lambda_mean": lambda_mean, "lambda_std": lambda_std,
        "lambda_min": float(lyapunov.min()), "lambda_max": float(lyapunov.max()),
        "lyapunov_time": 1.0 / lambda_mean,
        "lyapunov_time_note": "1 / mean lambda, in map steps; lambda by Benettin over the recorded steps",
        "chaotic_fraction": screens[str(simulation.sali_horizons[-1])]["chaotic_fraction"],
        "sali_screens": screens,
        "regime": REGIMES[instance.k],
    }


def graph_block(instance: Instance) -> dict[str, Any]:
    """What the dataset object reads: file layout, sizes, topology, parameters and the indicator conventions."""
    n = instance.n
    return {"kind": "trajectories", "trajectories_file": TRAJECTORIES_FILE, "state_array": "state",
            "num_nodes": 2 * n, "num_sites": n, "num_snapshots": instance.steps, "num_ics": instance.n_ics,
            "topology": "ring", "variable_ordering": "blocked",
            "variables": [f"q_{i + 1}" for i in range(n)] + [f"p_{i + 1}" for i in range(n)],
            "adjacency": {"ring": "adjacency_ring", "jacobian": "adjacency_jacobian",
                          "coupling_only": "adjacency_coupling_only"},
            "params": {"K": instance.k, "rho": instance.rho, "epsilon": instance.epsilon, "N": n},
            "indicators": {"lambda": "lambda_max", "sali": "sali", "sali_iterations": "sali_iterations",
                           "sali_horizons": "sali_horizons", "chaotic_below": SALI_CHAOTIC,
                           "regular_above": SALI_REGULAR},
            "upstream_key": instance.upstream_key, "tier": instance.tier}


def task_block(instance: Instance) -> dict[str, Any]:
    return {
        "name": "rollout", "type": "rollout-forecasting", "context": 48, "horizon": 12,
        "strides": {"train": 12, "val": 1, "test": 1},
        "windows": {"default": "parity", "parity": "over the split's ICs concatenated in time, as upstream "
                    "(some windows straddle two ICs)", "clean": "within each IC only"},
        "normalisation": {"kind": "z-score", "fit_split": "train", "ddof": 0, "min_std": 1e-8,
                          "cast_after": "float32"},
        "teacher_forced": {"metrics": ["mse", "mae"], "cumulative_horizons": [3, 6, 12]},
        "rollout": {"block": 12, "context_rows": 48, "nrmse_denominator": "population std of the whole true "
                    "continuation (all steps and variables, normalised units) + 1e-8", "std_eps": 1e-8,
                    "vpt_threshold": 1.0, "vpt": "first 0-based step with NRMSE > threshold, else the number of "
                    "predicted steps", "aggregate": "mean and population std over the split's ICs"},
        "validity": {"metric": "test_mse", "threshold": 0.95, "rule": "valid when the seed-mean teacher-forced "
                     "test MSE is below the threshold"},
        "primary_metric": "vpt", "report_split": "test",
        "submission": {"format": "parquet", "kind": "rollouts",
                       "columns": [{"name": "ic", "type": "int64"}, {"name": "t", "type": "int64"},
                                   {"name": "values", "type": "list<float32>"}],
                       "rows": "one per (IC of the split, predicted step t = context .. steps - 1)",
                       "values": "the 2N predicted variables at step t, in the blocked order, normalised (z-scored "
                                 "with the train statistics)"},
    }


def discrepancies(instance: Instance, stats: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Where upstream's paper or code and our data differ, with this instance's numbers."""
    screens = stats["sali_screens"]
    short, long = (str(h) for h in instance.sali_horizons)
    return [
        {"field": f"sali_{short} labels", "paper": "orbit labels from a SALI screen of 1,000 tangent-map steps",
         "ours": {f"chaotic_fraction_{short}": screens[short]["chaotic_fraction"],
                  f"chaotic_fraction_{long}": screens[long]["chaotic_fraction"], "lambda_min": stats["lambda_min"]},
         "evidence": "The 1,000-step screen is horizon-limited: in a weakly coupled lattice the top Lyapunov "
                     "exponents nearly coincide, SALI decays like exp(-(l1 - l2) n), and orbits with clearly "
                     f"positive lambda are labelled sticky or regular. We keep it for parity and add a {long}-step "
                     "screen; use lambda_max or the longer screen as the chaos indicator."},
        {"field": "lambda_max", "paper": "Benettin over the 10^4 recorded steps; the released generator writes NaN",
         "ours": "Benettin over the recorded steps, vector carried through the transient"},
        {"field": "SALI early stop", "paper": "1e-8 (Croissant text); upstream's code stops at 1e-12",
         "ours": f"code behaviour: stop at {SALI_STOP}; labels chaotic < {SALI_CHAOTIC}, regular > {SALI_REGULAR}"},
    ]


def _ic_records(instance: Instance, simulation: Simulation) -> list[dict[str, Any]]:
    rows = []
    for ic in range(instance.n_ics):
        row = {"ics/ic": ic, "ics/split": _split_of(ic, instance.splits), "ics/seed": int(simulation.seeds[ic]),
               "ics/lambda_max": float(simulation.lyapunov[ic])}
        for column, horizon in enumerate(simulation.sali_horizons):
            row[f"ics/sali_{horizon}"] = float(simulation.sali[ic, column])
            row[f"ics/label_{horizon}"] = sali_label(float(simulation.sali[ic, column]))
        rows.append(row)
    return rows


def _ic_fields(horizons: tuple[int, ...]) -> list[dict[str, Any]]:
    fields = [("ic", "cr:Int64", "index of the initial condition"), ("split", "sc:Text", "train, val or test"),
              ("seed", "cr:Int64", "per-trajectory seed"),
              ("lambda_max", "cr:Float64", "Benettin maximal Lyapunov exponent (per map step)")]
    for horizon in horizons:
        fields += [(f"sali_{horizon}", "cr:Float64", f"SALI after at most {horizon} tangent-map steps"),
                   (f"label_{horizon}", "sc:Text", "chaotic / sticky / regular from that SALI")]
    return [{"@type": "cr:Field", "@id": f"ics/{name}", "name": name, "dataType": kind, "description": text}
            for name, kind, text in fields]


def manifest_document(instance: Instance, simulation: Simulation, arrays: Mapping[str, np.ndarray],
                      folder: Path) -> dict[str, Any]:
    """The Croissant 1.1 JSON-LD manifest of one built instance (``folder`` holds its file)."""
    path = folder / TRAJECTORIES_FILE
    stats = statistics(instance, simulation)
    history = history_until(instance.version)
    description = (f"ChaosNetBench coupled standard map on a ring of N={instance.n} sites, K={instance.k!r}, "
                   f"rho={instance.rho!r} (epsilon={instance.epsilon!r}; upstream key {instance.upstream_key}): "
                   f"{instance.n_ics} initial conditions x {instance.steps:,} recorded steps after a "
                   f"{instance.transient:,}-step transient, float64, bit-exact with {UPSTREAM}. "
                   f"{TRAJECTORIES_FILE} holds state (ICs, steps, 2N) in blocked order [q_1..q_N, p_1..p_N] mod 2pi, "
                   "initial_conditions, seeds, lambda_max, sali (+ sali_iterations, sali_horizons) and the "
                   "adjacency_ring / adjacency_jacobian / adjacency_coupling_only matrices.")
    return croissant_document(
        name=instance.name, version=instance.version, description=description, license=LICENSE,
        published=history[-1]["date"], citation=CITATION, responsible_ai=responsible_ai(instance),
        distribution=[file_object(TRAJECTORIES_FILE, path)],
        record_sets=[{
            "@type": "cr:RecordSet", "@id": "ics", "name": "ics", "key": {"@id": "ics/ic"},
            "description": "One record per initial condition: split, seed and chaos indicators (the trajectories "
                           f"themselves are the HDF5 dataset 'state' of {TRAJECTORIES_FILE}).",
            "field": _ic_fields(simulation.sali_horizons), "data": _ic_records(instance, simulation)}],
        recipe={"generator": GENERATOR, "version": instance.version, "params": instance.params, "seed": BASE_SEED,
                "checks": preflight.fingerprints(simulation, DEVIATION[instance.version])},
        digest=[{"file": TRAJECTORIES_FILE, "algorithm": DIGEST_ALGORITHM, "columns": list(ARRAYS),
                 "value": content_digest({name: arrays[name] for name in ARRAYS}),
                 "arrays": {name: sha256_of(arrays[name]) for name in ARRAYS if name != "state"},
                 "state_per_ic": [sha256_of(arrays["state"][ic]) for ic in range(instance.n_ics)],
                 "array_algorithm": "sha256 of the C-order little-endian bytes",
                 "writer": writer_versions()}],
        graph=graph_block(instance),
        splits={"unit": "initial-condition", "boundaries": {k: list(v) for k, v in instance.splits.items()}},
        tasks=[task_block(instance)], list_tasks=False, stats=stats, discrepancies=discrepancies(instance, stats),
        extra={"changelog": history})


def build_folder(instance: Instance, folder: Path) -> tuple[Simulation, dict[str, Any]]:
    """Generate one instance into ``folder`` and return its simulation and manifest document.

    Raises:
        GenerationError: if a preflight check finds this machine cannot reproduce the published values.
    """
    simulation = generate(instance.params, version=instance.version)
    arrays = arrays_of(simulation)
    folder.mkdir(parents=True, exist_ok=True)
    write_trajectories(arrays, instance.params, folder / TRAJECTORIES_FILE, instance.version)
    return simulation, manifest_document(instance, simulation, arrays, folder)
