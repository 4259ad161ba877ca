"""The coupled standard map on a ring, bit for bit as ChaosNetBench generates it, plus its tangent-map indicators.

One kernel pass per initial condition (IC) computes the trajectory and, from the same ``sin``/``cos`` values, the
chaos indicators: the maximal Lyapunov exponent (Benettin, one deviation vector, over the recorded steps) and two
SALI screens (the upstream 1,000-step screen and a 5,000-step one). ICs are independent, so they run in parallel;
each IC's arithmetic is sequential and fixed, so the result does not depend on the thread count.

Upstream operation order, which bit-exactness depends on (htmoges/ChaosNetBench@8e1c630, ``CoupledStandardMap``)::

    p' = (p + K * sin(q_i)) + (-eps) * (sin(q_{i+1} - q_i) + sin(q_{i-1} - q_i))
    q' = (q_i + p') mod 2pi           (numpy's floor-mod; p is stored mod 2pi, integrated unwrapped)

``q_{i-1} - q_i`` is exactly ``-(q_i - q_{i-1})`` in IEEE arithmetic and the C library's ``sin`` is odd, so each
step needs one ``sin`` per site for the kick and one per ring edge for the coupling.

Determinism beyond one machine (docs/determinism.md). Every float that reaches a published array is computed
here in a fixed, documented order with plain IEEE operations:

* no BLAS: the deviation vectors' norms and dot product are sequential Python loops (``np.linalg.norm``/``np.dot``
  go through OpenBLAS, whose kernel, chosen per CPU at run time, sums in another order: that made generator 1.0.0's
  SALI values machine-dependent; :func:`deviation_vectors_blas` keeps that version rebuildable where it can be);
* every reduction in the kernels (norms, SALI, Benettin's log sum) is a scalar loop compiled without ``fastmath``,
  so LLVM neither reorders nor vectorises it nor contracts ``a * b + c`` into an FMA: the vector width and the
  thread count (one IC per thread) cannot change it (a test reads the machine code);
* ``sin``, ``cos`` and ``log`` are the C library's scalar functions through pinned symbols (:mod:`.libm`), probed
  against the reference build before a build;
* random draws are numpy's *bit generators*, whose raw streams are fixed by their algorithms, converted to floats
  here (:func:`initial_condition`), plus ``RandomState.randn`` (numpy's legacy stream, frozen by its policy);
* the SALI checkpoints are computed in exact integer arithmetic (:func:`sali_checkpoints`), not with ``pow``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np

from ..jit import announce_compile
from ..libm import c_log, c_sin, c_sincos

BASE_SEED = 42
TWO_PI = 2.0 * math.pi
SALI_STOP = 1e-12  # upstream's early termination (the Croissant text says 1e-8; the code runs 1e-12)
SALI_CHAOTIC = 1e-8
SALI_REGULAR = 1e-4
SALI_CHECKPOINTS = 500
#: what the first-compile notices say (generators.jit): numba compiles either kernel in 5 s on a 2-core VM, in 14 s
#: on other machines
SIMULATE_NOTICE = ("the standard-map kernel", "5 to 15 s")
TRAJECTORIES_NOTICE = ("the standard-map trajectory kernel", "5 to 15 s")


def epsilon_of(k: float, rho: float) -> float:
    """Upstream's coupling: ``round(rho * K, 6)`` (so 0.97 * 0.075 gives 0.07275)."""
    return round(rho * k, 6)


def trajectory_seed(k: float, epsilon: float, n: int, ic: int, base_seed: int = BASE_SEED) -> int:
    """Upstream's per-trajectory seed: ``base + int(sha256("base|K:.10f|eps:.10f|N|ic")[:8], 16) mod 2**31``."""
    key = f"{base_seed}|{k:.10f}|{epsilon:.10f}|{n}|{ic}"
    return base_seed + int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % (2**31)


def initial_condition(seed: int, n: int) -> np.ndarray:
    """``[q0, p0]``: N draws U[0, 2pi) then N draws U[-pi, pi), as upstream's ``default_rng(seed).uniform``.

    Computed from the PCG64 bit generator's raw 64-bit outputs (``SeedSequence(seed)`` state, as ``default_rng``),
    converted explicitly the way numpy's ``uniform`` does (``low + (high - low) * ((raw >> 11) * 2**-53)``), so the
    values do not rest on ``Generator.uniform``, whose algorithm numpy's compatibility policy lets change.
    """
    raw = np.random.PCG64(seed).random_raw(2 * n)
    unit = [(int(bits) >> 11) * _TWO_POW_MINUS_53 for bits in raw]
    q0 = [0.0 + TWO_PI * u for u in unit[:n]]
    p0 = [-math.pi + (math.pi - -math.pi) * u for u in unit[n:]]
    return np.array(q0 + p0, dtype=np.float64)


def _normalised(values: list[float]) -> list[float]:
    """``values / ||values||`` with the squares summed in index order (no BLAS, no pairwise summation)."""
    total = 0.0
    for value in values:
        total += value * value
    norm = math.sqrt(total)
    return [value / norm for value in values]


def deviation_vectors(seed: int, n: int) -> np.ndarray:
    """The SALI screen's two unit deviation vectors: ``RandomState(seed).randn(2, 2N)``, Gram-Schmidt, as upstream.

    The first one is also the Benettin vector (upstream's ``compute_mle`` draws the same ``randn`` row). Every sum
    runs in index order in plain float64 (generator 1.1.0); upstream's ``np.linalg.norm``/``np.dot`` are BLAS calls
    whose rounding depends on the CPU (see :func:`deviation_vectors_blas`).
    """
    first, second = (row.tolist() for row in np.random.RandomState(seed).randn(2, 2 * n))
    first = _normalised(first)
    dot = 0.0
    for a, b in zip(second, first, strict=True):
        dot += a * b
    second = _normalised([a - dot * b for a, b in zip(second, first, strict=True)])
    return np.array([first, second], dtype=np.float64)


def deviation_vectors_blas(seed: int, n: int) -> np.ndarray:
    """Generator 1.0.0's deviation vectors: upstream's code verbatim, through BLAS.

    Their last bits depend on the OpenBLAS kernel picked for the CPU (the published 1.0.0 values are the AVX-512
    ``SkylakeX`` kernel's); :func:`generators.chaosnet.preflight.check_blas` tells before a build whether this
    machine's kernel is that one.
    """
    vectors = np.random.RandomState(seed).randn(2, 2 * n)
    vectors[0] /= np.linalg.norm(vectors[0])  # BLAS: deliberately kept for the 1.0.0 data only
    vectors[1] -= np.dot(vectors[1], vectors[0]) * vectors[0]
    vectors[1] /= np.linalg.norm(vectors[1])
    return vectors


def sali_checkpoints(horizon: int) -> np.ndarray:
    """Iterations at which upstream evaluates SALI: ``unique(int(geomspace(1, horizon, min(500, horizon))))``.

    ``geomspace`` goes through ``pow``, whose last bit varies with numpy's SIMD paths; here each mark
    ``floor(horizon ** (i / (m - 1)))`` is the largest integer ``k`` with ``k ** (m - 1) <= horizon ** i``, found in
    exact integer arithmetic. For every horizon we use, no mark lies within 1e-4 of an integer, so numpy's floats
    agree (a test checks the two).
    """
    count = min(SALI_CHECKPOINTS, horizon)
    if count <= 1:
        return np.ones(1, dtype=np.int64)
    marks = []
    for i in range(count):
        target = horizon**i
        low, high = 1, horizon
        while low < high:
            middle = (low + high + 1) // 2
            if middle ** (count - 1) <= target:
                low = middle
            else:
                high = middle - 1
        marks.append(low)
    return np.unique(np.array(marks, dtype=np.int64))


def sali_label(value: float) -> str:
    """Upstream's three-way label: chaotic below 1e-8, regular above 1e-4, sticky between."""
    if value < SALI_CHAOTIC:
        return "chaotic"
    return "regular" if value > SALI_REGULAR else "sticky"


@dataclass(frozen=True)
class Simulation:
    """Trajectories and per-IC indicators of one instance.

    ``states`` is ``(n_ics, steps, 2N)`` in the blocked order ``[q_1..q_N, p_1 mod 2pi..p_N mod 2pi]``;
    ``sali`` and ``sali_iterations`` have one column per screen horizon (in ``sali_horizons`` order).
    """

    states: np.ndarray
    initial_conditions: np.ndarray
    seeds: np.ndarray
    lyapunov: np.ndarray
    sali: np.ndarray
    sali_iterations: np.ndarray
    sali_horizons: tuple[int, ...]


def _split(value: float, bits: int) -> tuple[float, float]:
    """``value = high + low`` with ``high`` its leading ``bits`` significant bits (both exact)."""
    mantissa, exponent = math.frexp(value)
    high = math.ldexp(math.floor(math.ldexp(mantissa, bits)), exponent - bits)
    return high, value - high


# 2pi = _C1 + _C2 exactly, 26 + 27 significant bits: n * _C1 and n * _C2 are exact for integers n < 2**26.
_C1, _C2 = _split(TWO_PI, 26)
_INV_TWO_PI = 1.0 / TWO_PI
_TWO_POW_MINUS_53 = 1.0 / 9007199254740992.0
_EXACT_LIMIT = 2.0**25 * TWO_PI


@numba.njit(cache=True, inline="always")
def _floor_mod(x: float) -> float:  # pragma: no cover - compiled
    """numpy's ``np.mod(x, 2pi)`` bit for bit (``r = fmod(x, 2pi)``, then ``r + 2pi`` rounded if ``r < 0``, +0.0 for
    exact multiples), without calling the C library's fmod, which took about 40 % of the orbit kernel's time.

    With ``n = floor(x / 2pi)`` the floor remainder ``x - n 2pi`` is exactly representable, and
    ``(x - n*_C1) - n*_C2`` computes it exactly: ``n*_C1`` and ``n*_C2`` are exact products, ``x - n*_C1`` is exact
    (both are multiples of ulp(x), and the difference is small), and the last subtraction's exact result is
    representable. For ``x <= -2pi`` that value equals numpy's ``fmod(x) + 2pi``, whose exact sum is representable
    too; in ``(-2pi, 0)`` numpy rounds ``x + 2pi`` once, so we do the same. A misjudged ``n`` (from rounding in
    ``x * (1/2pi)``) shows as ``r < 0`` or ``r >= 2pi`` and the neighbouring ``n`` is taken. Everything is
    branch-free selects, so the loops vectorise (signs vary unpredictably along a trajectory). Valid for
    ``|x| < _EXACT_LIMIT`` (2**25 * 2pi): :func:`_check_bounded` proves every argument is, before a kernel runs.
    """
    n = np.floor(x * _INV_TWO_PI)
    r = (x - n * _C1) - n * _C2
    below = (x - (n - 1.0) * _C1) - (n - 1.0) * _C2
    above = (x - (n + 1.0) * _C1) - (n + 1.0) * _C2
    r = below if r < 0.0 else r
    r = above if r >= TWO_PI else r
    r = x + TWO_PI if -TWO_PI < x < 0.0 else r
    return r + 0.0  # -0.0 + 0.0 is +0.0; every other value is unchanged


@numba.njit(cache=True)
def _floor_mod_all(values, out):  # pragma: no cover - compiled
    for i in range(values.shape[0]):
        out[i] = _floor_mod(values[i])


def floor_mod_array(values: np.ndarray) -> np.ndarray:
    """The kernels' ``x mod 2pi`` applied to an array (for tests: it must equal ``np.mod(values, 2 * np.pi)``)."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    out = np.empty_like(values)
    _floor_mod_all(values, out)
    return out


@numba.njit(cache=True, inline="always")
def _tangent_step(w, n, k, eps, cos_q, cos_d):  # pragma: no cover - compiled
    """Upstream's tangent map in place on ``w = [dq, dp]``; returns the new vector's Euclidean norm."""
    for i in range(n):
        nxt = i + 1 if i + 1 < n else 0
        prv = i - 1 if i > 0 else n - 1
        dq = w[i]
        kick = w[n + i] + k * cos_q[i] * dq
        coupling = cos_d[i] * (w[nxt] - dq) + cos_d[prv] * (w[prv] - dq)
        w[n + i] = kick - eps * coupling
    total = 0.0
    for i in range(n):
        w[i] = w[i] + w[n + i]
    for i in range(2 * n):
        total += w[i] * w[i]
    return math.sqrt(total)


@numba.njit(cache=True, inline="always")
def _sali(w1, w2):  # pragma: no cover - compiled
    norm1 = 0.0
    norm2 = 0.0
    for i in range(w1.shape[0]):
        norm1 += w1[i] * w1[i]
        norm2 += w2[i] * w2[i]
    norm1 = math.sqrt(norm1) + 1e-300
    norm2 = math.sqrt(norm2) + 1e-300
    plus = 0.0
    minus = 0.0
    for i in range(w1.shape[0]):
        a = w1[i] / norm1
        b = w2[i] / norm2
        plus += (a + b) * (a + b)
        minus += (a - b) * (a - b)
    return min(math.sqrt(plus), math.sqrt(minus))


@numba.njit(cache=True, inline="always")
def _record(states, ic, row, q, p, n):  # pragma: no cover - compiled
    """Store one recorded step: q as iterated (already in [0, 2pi)), p reduced mod 2pi (upstream stores it so)."""
    for i in range(n):
        states[ic, row, i] = q[i]
        states[ic, row, n + i] = _floor_mod(p[i])


@numba.njit(cache=True, inline="always")
def _orbit_step(q, p, n, k, eps, sin_q, sin_d):  # pragma: no cover - compiled
    """One map step from ``sin(q_i)`` and ``sin(q_{i+1} - q_i)``, in upstream's order of operations."""
    for i in range(n):
        prv = i - 1 if i > 0 else n - 1
        # sin(q_{i-1} - q_i) == -sin_d[prv] exactly; x + (-y) == x - y exactly.
        p[i] = (p[i] + k * sin_q[i]) + (-eps) * (sin_d[i] - sin_d[prv])
    for i in range(n):
        q[i] = _floor_mod(q[i] + p[i])


@numba.njit(cache=True, parallel=True, error_model="numpy")
def _simulate(ics, vectors, k, eps, transient, steps, horizons, checkpoints, states, lyapunov, sali,
              sali_iter):  # pragma: no cover - compiled
    n_ics = ics.shape[0]
    n = ics.shape[1] // 2
    total = transient + steps
    n_screens = horizons.shape[0]
    # Each screen ends by its horizon at the latest: its last checkpoint is the horizon, which simulate() checks
    # is within the computed steps.
    for ic in numba.prange(n_ics):
        q = ics[ic, :n].copy()
        p = ics[ic, n:].copy()
        w1 = vectors[ic, 0].copy()
        w2 = vectors[ic, 1].copy()
        sin_q = np.empty(n)
        cos_q = np.empty(n)
        sin_d = np.empty(n)
        cos_d = np.empty(n)
        next_check = np.zeros(n_screens, dtype=np.int64)
        done = np.zeros(n_screens, dtype=np.bool_)
        screening = n_screens
        log_sum = 0.0
        for step in range(total):
            if step >= transient:
                _record(states, ic, step - transient, q, p, n)
            for i in range(n):
                sin_q[i], cos_q[i] = c_sincos(q[i])
                nxt = i + 1 if i + 1 < n else 0
                sin_d[i], cos_d[i] = c_sincos(q[nxt] - q[i])
            # Tangent map first (it uses q before the step), then the orbit, as upstream.
            norm1 = _tangent_step(w1, n, k, eps, cos_q, cos_d)
            for i in range(2 * n):
                w1[i] /= norm1
            if step >= transient:
                log_sum += c_log(norm1)
            if screening > 0:  # the second vector only serves the SALI screens; chaotic orbits finish early
                norm2 = _tangent_step(w2, n, k, eps, cos_q, cos_d)
                for i in range(2 * n):
                    w2[i] /= norm2
                iteration = step + 1
                for s in range(n_screens):
                    if done[s] or iteration != checkpoints[s, next_check[s]]:
                        continue
                    value = _sali(w1, w2)
                    sali[ic, s] = value
                    sali_iter[ic, s] = iteration
                    next_check[s] += 1
                    if value < SALI_STOP or iteration >= horizons[s]:
                        done[s] = True
                        screening -= 1
            _orbit_step(q, p, n, k, eps, sin_q, sin_d)
        lyapunov[ic] = log_sum / steps


@numba.njit(cache=True, parallel=True, error_model="numpy")
def _trajectories(ics, k, eps, transient, steps, states):  # pragma: no cover - compiled
    # The orbit part of _simulate alone (one sin per site and per ring edge): the same values, about half the work.
    n = ics.shape[1] // 2
    for ic in numba.prange(ics.shape[0]):
        q = ics[ic, :n].copy()
        p = ics[ic, n:].copy()
        sin_q = np.empty(n)
        sin_d = np.empty(n)
        for step in range(transient + steps):
            if step >= transient:
                _record(states, ic, step - transient, q, p, n)
            for i in range(n):
                sin_q[i] = c_sin(q[i])
                nxt = i + 1 if i + 1 < n else 0
                sin_d[i] = c_sin(q[nxt] - q[i])
            _orbit_step(q, p, n, k, eps, sin_q, sin_d)


def _check_bounded(k: float, epsilon: float, transient: int, steps: int) -> None:
    """Every value the kernels reduce mod 2pi stays below ``_EXACT_LIMIT``: ``|sin| <= 1`` bounds each step's
    momentum kick by ``|K| + 2|eps|``, and the ICs start within ``pi`` (p) and ``2pi`` (q) of 0.

    Raises:
        ValueError: if ``steps`` is not positive, ``transient`` is negative, or the bound could be exceeded.
    """
    if steps <= 0 or transient < 0:
        raise ValueError(f"steps must be positive and transient non-negative, got steps={steps}, "
                         f"transient={transient}")
    bound = 3 * math.pi + (transient + steps) * (abs(k) + 2 * abs(epsilon))
    if not bound < _EXACT_LIMIT:
        raise ValueError(f"K={k}, epsilon={epsilon} over {transient + steps} steps could push the momentum to "
                         f"{bound:.3g}, beyond the exact mod-2pi range {_EXACT_LIMIT:.3g}; use fewer steps")


def trajectories(k: float, epsilon: float, n: int, seeds: np.ndarray, transient: int, steps: int) -> np.ndarray:
    """Only the states ``(n_ics, steps, 2N)`` of :func:`simulate` (bit-identical), without the indicators.

    Raises:
        ValueError: if ``steps`` is not positive, ``transient`` is negative, or the momentum bound is exceeded.
    """
    _check_bounded(k, epsilon, transient, steps)
    ics = np.stack([initial_condition(int(s), n) for s in seeds])
    states = np.empty((len(ics), steps, 2 * n), dtype=np.float64)
    arguments = (ics, float(k), float(epsilon), int(transient), int(steps), states)
    announce_compile(_trajectories, arguments, *TRAJECTORIES_NOTICE)
    _trajectories(*arguments)
    return states


def simulate(k: float, epsilon: float, n: int, seeds: np.ndarray, transient: int, steps: int,
             sali_horizons: tuple[int, ...] = (1000, 5000),
             deviation: Callable[[int, int], np.ndarray] = deviation_vectors) -> Simulation:
    """Trajectories and indicators of the ICs drawn from ``seeds`` (one seed per IC).

    ``deviation`` makes an IC's two initial deviation vectors from its seed (generator 1.0.0 used
    :func:`deviation_vectors_blas`).

    Raises:
        ValueError: if ``steps`` is not positive, ``transient`` negative, the momentum bound exceeded, or a SALI
            horizon exceeds ``transient + steps``.
    """
    _check_bounded(k, epsilon, transient, steps)
    if max(sali_horizons) > transient + steps:
        raise ValueError(f"SALI horizons {sali_horizons} exceed the {transient + steps} computed steps; "
                         "shorten the horizons or lengthen the trajectory")
    seeds = np.asarray(seeds, dtype=np.int64)
    ics = np.stack([initial_condition(int(s), n) for s in seeds])
    vectors = np.stack([deviation(int(s), n) for s in seeds])
    horizons = np.asarray(sali_horizons, dtype=np.int64)
    width = max(len(sali_checkpoints(h)) for h in sali_horizons) + 1
    # Padded with -1 (never equal to an iteration); the sentinel column keeps the index in range after the last check.
    checkpoints = np.full((len(horizons), width), -1, dtype=np.int64)
    for row, horizon in enumerate(sali_horizons):
        marks = sali_checkpoints(horizon)
        checkpoints[row, :len(marks)] = marks
    states = np.empty((len(seeds), steps, 2 * n), dtype=np.float64)
    lyapunov = np.empty(len(seeds), dtype=np.float64)
    sali = np.full((len(seeds), len(horizons)), np.nan, dtype=np.float64)
    sali_iter = np.zeros((len(seeds), len(horizons)), dtype=np.int64)
    arguments = (ics, vectors, float(k), float(epsilon), int(transient), int(steps), horizons, checkpoints, states,
                 lyapunov, sali, sali_iter)
    announce_compile(_simulate, arguments, *SIMULATE_NOTICE)
    _simulate(*arguments)
    # Upstream stores an exact-zero SALI as 1e-12 (still "chaotic").
    sali[sali <= 0.0] = SALI_STOP
    return Simulation(states=states, initial_conditions=ics, seeds=seeds, lyapunov=lyapunov, sali=sali,
                      sali_iterations=sali_iter, sali_horizons=tuple(int(h) for h in sali_horizons))
