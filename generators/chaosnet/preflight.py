"""Checks that run before a ChaosNetBench build and name the component that would make it differ from the published
data, in well under a second, instead of a digest mismatch after the whole computation.

A chaotic trajectory turns a one-ulp difference anywhere into different data, so a rebuild is only worth starting
when every component that produces published values computes them exactly as the machine that published them.
The components, in the order they are checked (each check is cheap and needs only the ones before it):

1. the C library's ``sin``/``cos``/``log`` (:func:`~generators.libm.check_libm`, probe arguments);
2. generator 1.0.0 only: the OpenBLAS kernel (that version's deviation vectors went through BLAS);
3. the first IC's seed, initial condition (PCG64 bit generator) and deviation vectors (``RandomState.randn``);
4. the first IC simulated alone through the real kernel (ICs are independent, so its trajectory, Lyapunov exponent
   and SALI values equal the full build's): trajectory, then ``lambda_max``, then SALI.

The expected values of 3-4 are the manifest recipe's ``checks`` block, written by :func:`fingerprints` when the
manifest was made. Generator 1.0.0's manifests have none, so only 1-2 run for them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from tgbhub.errors import GenerationError
from tgbhub.hashing import column_sha256 as sha256_of

from ..libm import check_libm
from .dynamics import Simulation, initial_condition, simulate, trajectory_seed

#: sha256 of generator 1.0.0's deviation vectors for seeds 0-99 at N = 8, 16 and 32, as OpenBLAS's AVX-512
#: ``SkylakeX`` kernel computes them (the kernel the 1.0.0 data were published with). ``Haswell``, ``Zen`` and
#: ``Prescott`` give other hashes.
BLAS_REFERENCE = "0f34fbc4125e12347fbaaf9fbfa6d62b1fad638a4bb18ad7d5d82a682a64d29d"
_WAY_OUT = ("The published values cannot be rebuilt on this machine, so no build was started: fetch the dataset "
            "from a hub or mirror (set TGBHUB_ENDPOINT or TGBHUB_MIRRORS, offline mode off), or build it on an "
            "x86-64 Linux machine with glibc and FMA.")


def _exact(value: float) -> str:
    return float(value).hex()


def fingerprints(simulation: Simulation, deviation: Callable[[int, int], np.ndarray]) -> dict[str, Any]:
    """The ``checks`` block of a manifest recipe: the first IC's values, component by component (exact)."""
    n = simulation.initial_conditions.shape[1] // 2
    seed = int(simulation.seeds[0])
    return {"ic": 0, "seed": seed,
            "initial_condition_sha256": sha256_of(simulation.initial_conditions[0]),
            "deviation_vectors_sha256": sha256_of(deviation(seed, n)),
            "state_sha256": sha256_of(simulation.states[0]),
            "lambda_max": _exact(simulation.lyapunov[0]),
            "sali": [_exact(v) for v in simulation.sali[0]],
            "sali_iterations": [int(v) for v in simulation.sali_iterations[0]]}


def blas_hash(deviation_blas: Callable[[int, int], np.ndarray]) -> str:
    """The hash :data:`BLAS_REFERENCE` is compared with, computed with this machine's BLAS."""
    digest = hashlib.sha256()
    for n in (8, 16, 32):
        for seed in range(100):
            digest.update(deviation_blas(seed, n).astype("<f8").tobytes())
    return digest.hexdigest()


def _refuse(component: str, expected: object, actual: object, cause: str) -> GenerationError:
    return GenerationError(f"this machine computes the {component} differently from the machine that published the "
                           f"data (expected {expected}, got {actual}): {cause}. {_WAY_OUT}")


def check_blas(deviation_blas: Callable[[int, int], np.ndarray]) -> None:
    """Refuse generator 1.0.0 builds where OpenBLAS does not run the kernel its deviation vectors were made with.

    Raises:
        GenerationError: naming the kernel and the way out (version 1.1.0, or ``OPENBLAS_CORETYPE=SkylakeX``).
    """
    actual = blas_hash(deviation_blas)
    if actual != BLAS_REFERENCE:
        raise GenerationError(
            "generator 1.0.0's SALI deviation vectors went through BLAS (np.linalg.norm, np.dot), and this machine's "
            f"OpenBLAS kernel rounds them differently from the AVX-512 SkylakeX kernel the 1.0.0 data were published "
            f"with (probe hash {actual[:16]}..., reference {BLAS_REFERENCE[:16]}...). Use version 1.1.0 or newer, "
            "which computes them without BLAS and rebuilds on every supported machine (load the dataset without "
            "'@1.0.0'); or, on a CPU with AVX-512, set OPENBLAS_CORETYPE=SkylakeX before starting Python.")


def check(params: Mapping[str, Any], base_seed: int, checks: Mapping[str, Any],
          deviation: Callable[[int, int], np.ndarray]) -> None:
    """Run the cheap component checks of one instance's build (the module docstring lists them).

    Raises:
        GenerationError: naming the first component that differs, both values, the likely cause and the way out.
    """
    check_libm()
    if not checks:
        return
    if checks.get("ic") != 0:
        raise GenerationError(f"the recipe's checks describe IC {checks.get('ic')!r}; this tgbhub checks IC 0. "
                              "Regenerate the manifest with `python -m scripts.manifests NAME` from a checkout")
    k, epsilon, n = params["K"], params["epsilon"], params["N"]
    seed = trajectory_seed(k, epsilon, n, 0, base_seed)
    if seed != checks["seed"]:
        raise _refuse("per-trajectory seed", checks["seed"], seed, "the seed rule (sha256 of the parameters) "
                      "formats K or epsilon differently; is the recipe's epsilon the manifest's?")
    _compare("initial condition", checks["initial_condition_sha256"], sha256_of(initial_condition(seed, n)),
             "numpy's PCG64 bit generator or SeedSequence differs from the one the data were published with")
    _compare("SALI deviation vectors", checks["deviation_vectors_sha256"], sha256_of(deviation(seed, n)),
             "numpy's legacy RandomState.randn, or the C library's log it calls, differs")
    one = simulate(k, epsilon, n, np.array([seed]), params["transient"], params["steps"],
                   tuple(params["sali_horizons"]), deviation)
    _compare("trajectory", checks["state_sha256"], sha256_of(one.states[0]),
             "the compiled map kernel (numba/LLVM code generation) or the C library's sin/cos differs")
    _compare("Lyapunov exponent", checks["lambda_max"], _exact(one.lyapunov[0]),
             "the tangent-map kernel or the C library's log differs")
    _compare("SALI values", list(checks["sali"]), [_exact(v) for v in one.sali[0]],
             "the SALI kernel's arithmetic differs")


def _compare(component: str, expected: object, actual: object, cause: str) -> None:
    if expected != actual:
        raise _refuse(component, expected, actual, cause)
