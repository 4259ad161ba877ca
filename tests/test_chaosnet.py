"""The ChaosNetBench generator: bit-exact trajectories (SHA-256 test vectors from upstream's code), indicators checked
against an independent implementation, the catalogue, byte-stable HDF5 files, and the floating-point portability
guards."""

from __future__ import annotations

import ast
import hashlib
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

from generators import libm
from generators.chaosnet.artifacts import (arrays_of, coupling_only_adjacency, jacobian_adjacency, ring_adjacency,
                                           write_trajectories)
from generators.chaosnet.catalogue import full_instances, instances, mini_instances
from generators.chaosnet.dynamics import (deviation_vectors, deviation_vectors_blas, epsilon_of, floor_mod_array,
                                          initial_condition, sali_checkpoints, sali_label, simulate, trajectories,
                                          trajectory_seed)
from generators.chaosnet.reference import simulate_numpy
from tests import chaosnet_reference
from tgbhub.hashing import file_sha256

ROOT = Path(__file__).resolve().parent.parent

# computed with upstream's generate_trajectory: (K, rho, N), seeds of ic_00 and ic_01, q0[0], first stored q_1,
# sha256 of ic_00's (10000, 2N)
TEST_VECTORS = [
    ((0.5, 0.05, 8), (510329322, 1026948677), 5.359488905958688, 5.121014026218638,
     "a18a2be926a92d0d6b6ce174eff36d5e2e76eb37943aad5000fc1a03f28875c4"),
    ((2.0, 0.2, 8), (863414062, 1035430293), 5.284316526166263, 4.23797480074996,
     "e1420aa02ca45b457ce898ae941712647ed74fe266c4cd8d14e81a87c1ad6605"),
    ((6.5, 0.5, 32), (1924360725, 590708433), 4.737214418919448, 4.65004174276352,
     "85240bbd9a374975fcc7bb79baaa7d4844b34ed739de365024f9b3ead6fb52a4"),
]
GLIBC_X86_FMA = (platform.machine() == "x86_64" and platform.libc_ver()[0] == "glibc"
                 and " fma " in Path("/proc/cpuinfo").read_text().replace("\n", " ") + " ")


@pytest.mark.parametrize("vector", TEST_VECTORS, ids=lambda v: "k{}-rho{}-n{}".format(*v[0]))
def test_spec_test_vectors(vector) -> None:
    (k, rho, n), seeds, q0, q1, sha = vector
    eps = epsilon_of(k, rho)
    assert (trajectory_seed(k, eps, n, 0), trajectory_seed(k, eps, n, 1)) == seeds
    simulation = simulate(k, eps, n, np.array(seeds[:1]), transient=1000, steps=10_000)
    state = simulation.states[0]
    assert simulation.initial_conditions[0, 0] == q0
    assert state[0, 0] == q1
    assert state.shape == (10_000, 2 * n)
    assert hashlib.sha256(state.astype("<f8").tobytes()).hexdigest() == sha


def test_kernel_equals_the_vectorised_numpy_recurrence_bit_for_bit() -> None:
    k, eps, n = 6.5, epsilon_of(6.5, 0.15), 16
    seeds = np.array([trajectory_seed(k, eps, n, ic) for ic in range(3)])
    ours = simulate(k, eps, n, seeds, transient=50, steps=3000, sali_horizons=(100,)).states
    assert np.array_equal(ours, simulate_numpy(k, eps, n, seeds, transient=50, steps=3000))
    assert np.array_equal(ours, trajectories(k, eps, n, seeds, transient=50, steps=3000))
    assert ((ours >= 0) & (ours < 2 * np.pi)).all()  # q and stored p both wrapped into [0, 2pi)


def test_floor_mod_is_numpys_mod_bit_for_bit() -> None:
    """The kernels reduce mod 2pi without the C library's fmod; every value must equal np.mod's, signed zeros too."""
    rng = np.random.default_rng(7)
    multiples = rng.integers(-10**6, 10**6, 200_000).astype(float) * (2 * np.pi)
    near = [multiples]
    for direction in (np.inf, -np.inf):
        step = multiples
        for _ in range(3):
            step = np.nextafter(step, direction)
            near.append(step)
    x = np.concatenate([rng.uniform(-20, 20, 400_000), rng.uniform(-2e5, 2e5, 400_000), rng.normal(0, 1e-6, 10_000),
                        *near, [0.0, -0.0, 2 * np.pi, -2 * np.pi, 1e-300, -1e-300, -1e-17, np.pi]])
    ours = floor_mod_array(x)
    assert np.array_equal(ours.view(np.int64), np.mod(x, 2 * np.pi).view(np.int64))
    with pytest.raises(ValueError, match="mod-2pi range"):
        simulate(6.5, 3.25, 8, np.array([1]), 1000, 10**8)


def test_indicators_match_an_independent_implementation() -> None:
    k, eps, n = 0.97, epsilon_of(0.97, 0.1), 8
    seeds = np.array([trajectory_seed(k, eps, n, ic) for ic in range(2)])
    ours = simulate(k, eps, n, seeds, transient=300, steps=1200, sali_horizons=(1000, 1500))
    for row, seed in enumerate(seeds):
        lam, sali = chaosnet_reference.indicators(initial_condition(int(seed), n), int(seed), k, eps, 300, 1200,
                                                  (1000, 1500))
        assert ours.lyapunov[row] == pytest.approx(lam, rel=1e-9)
        assert ours.sali[row] == pytest.approx(sali, rel=1e-5)
        assert [sali_label(v) for v in ours.sali[row]] == [sali_label(v) for v in sali]


def test_sali_checkpoints_are_upstreams_log_spaced_iterations() -> None:
    marks = sali_checkpoints(1000)
    assert marks[0] == 1 and marks[-1] == 1000 and np.all(np.diff(marks) > 0) and len(marks) < 500
    # exact integer arithmetic equals upstream's float geomspace for every horizon we use, and then some
    for horizon in (1, 2, 10, 499, 500, 1000, 1500, 2500, 5000, 12345):
        count = min(500, horizon)
        assert np.array_equal(sali_checkpoints(horizon), np.unique(np.geomspace(1, horizon, count).astype(np.int64)))
    assert [sali_label(v) for v in (1e-9, 1e-6, 1e-3)] == ["chaotic", "sticky", "regular"]


def test_initial_conditions_are_default_rng_uniform_draws_bit_for_bit() -> None:
    """Converted from raw PCG64 output by hand, so numpy may change Generator.uniform without changing our data."""
    for seed in (0, 1, 42, 510329322, 2**31 + 41):
        for n in (8, 16, 32):
            rng = np.random.default_rng(seed)
            expected = np.concatenate([rng.uniform(0, 2 * np.pi, size=n), rng.uniform(-np.pi, np.pi, size=n)])
            assert np.array_equal(initial_condition(seed, n), expected)


def test_deviation_vectors_are_orthonormal_and_need_no_blas() -> None:
    for seed in (3, 863414062):
        ours, blas = deviation_vectors(seed, 8), deviation_vectors_blas(seed, 8)
        assert np.allclose(ours, blas, rtol=0, atol=1e-15)            # the same vectors up to summation order
        assert abs(float(ours[0] @ ours[0]) - 1) < 1e-15 and abs(float(ours[0] @ ours[1])) < 1e-15
    tree = ast.parse((ROOT / "generators" / "chaosnet" / "dynamics.py").read_text())
    for function in (n for n in tree.body if isinstance(n, ast.FunctionDef)
                     and n.name in ("deviation_vectors", "_normalised", "initial_condition")):
        for node in ast.walk(function):
            assert not (isinstance(node, ast.Attribute) and node.attr in ("dot", "linalg", "sum", "einsum", "norm")), \
                (function.name, node.attr)
            assert not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult)), function.name


def test_mini_tier_is_the_full_trajectory_seen_500_steps_earlier() -> None:
    k, eps, n = 2.0, epsilon_of(2.0, 0.1), 8
    seeds = np.array([trajectory_seed(k, eps, n, ic) for ic in range(2)])
    mini = simulate(k, eps, n, seeds, transient=500, steps=2000, sali_horizons=(1000,)).states
    full = simulate(k, eps, n, seeds, transient=1000, steps=1500, sali_horizons=(1000,)).states
    assert np.array_equal(mini[:, 500:], full)


def test_catalogue_names_parameters_and_upstream_keys() -> None:
    full = full_instances()
    assert len(full) == 96 and len({i.name for i in full}) == 96 and len(mini_instances()) == 4
    by_name = {i.name: i for i in instances()}
    assert {"chaosnet/k0.97-rho0.075-n16", "chaosnet/k2.0-rho0.1-n8", "chaosnet/k6.5-rho0.5-n32",
            "chaosnet/mini-k0.5-rho0.1-n8"} <= set(by_name)
    assert by_name["chaosnet/k0.97-rho0.075-n16"].epsilon == 0.07275
    assert by_name["chaosnet/k0.5-rho0.075-n8"].upstream_key == "K_0.50_eps_0.04_N_08"   # 0.0375 -> "0.04"
    assert by_name["chaosnet/k0.5-rho0.15-n8"].upstream_key == "K_0.50_eps_0.07_N_08"    # 0.075 -> "0.07"
    assert by_name["chaosnet/k6.5-rho0.5-n32"].params["epsilon"] == 3.25
    assert sorted({i.epsilon for i in full}) == sorted(set(epsilon_of(i.k, i.rho) for i in full))
    assert len({i.epsilon for i in full}) == 29


def test_adjacency_matrices_have_upstreams_patterns() -> None:
    ring, jac, coupling = ring_adjacency(8), jacobian_adjacency(8), coupling_only_adjacency(8)
    assert ring.dtype == jac.dtype == coupling.dtype == np.float32
    assert (ring == ring.T).all() and ring.sum() == 16 and np.trace(ring) == 0
    assert jac.sum() == 48 and not (jac == jac.T).all() and np.trace(jac) == 0
    assert jac[:8, 8:].sum() == 8 and jac[8:, 8:].sum() == 0          # q_i <- p_i; no p-p edges
    assert coupling.sum() == 32 and (coupling <= jac).all()


def test_hdf5_file_is_byte_stable_chunked_per_ic_and_complete(tmp_path: Path) -> None:
    instance = next(i for i in mini_instances() if i.name == "chaosnet/mini-k0.5-rho0.3-n8")
    arrays = arrays_of(simulate(instance.k, instance.epsilon, instance.n,
                                np.array([trajectory_seed(instance.k, instance.epsilon, 8, ic) for ic in range(6)]),
                                instance.transient, instance.steps, instance.sali_horizons))
    write_trajectories(arrays, instance.params, tmp_path / "a.h5")
    write_trajectories(arrays, instance.params, tmp_path / "b.h5")
    assert file_sha256(tmp_path / "a.h5") == file_sha256(tmp_path / "b.h5")
    with h5py.File(tmp_path / "a.h5") as handle:
        state = handle["state"]
        assert state.chunks == (1, 2000, 16) and state.compression is None and state.dtype == np.dtype("<f8")
        assert set(handle) == set(arrays)
        assert np.array_equal(state[()], arrays["state"]) and handle.attrs["epsilon"] == instance.epsilon


def test_libm_gives_the_reference_sin_and_cos_here() -> None:
    if not GLIBC_X86_FMA:
        pytest.skip("the reference is glibc's FMA build of sin/cos on x86-64; this machine has another libm")
    assert libm.libm_mismatches() == []


def test_kernel_machine_code_calls_only_the_pinned_libm_and_fuses_nothing(tmp_path: Path) -> None:
    """Compile the kernels afresh (cached code cannot be inspected) and read every function's assembly: the only
    math calls are our pinned sin/sincos/log; no SVML, no FMA instructions."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "NUMBA_DUMP_ASSEMBLY": "1"}
    code = "import numpy as np; from generators.chaosnet.dynamics import simulate, trajectories; " \
           "simulate(2.0, 0.4, 8, np.array([1]), 1, 2, (1,)); trajectories(2.0, 0.4, 8, np.array([1]), 1, 2)"
    assembly = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT,
                              check=True).stdout
    assert "tgbhub_cnb_sincos" in assembly and "tgbhub_cnb_sin" in assembly
    called = set(re.findall(r"(?:movabsq\s+\$|call\w*\s+)([A-Za-z_][A-Za-z_0-9.@]*)", assembly))
    math = {name for name in called if re.search(r"svml|sin|cos|tan|exp|log|pow|fmod|sqrt", name, re.I)}
    assert math == {"tgbhub_cnb_sincos", "tgbhub_cnb_sin", "tgbhub_cnb_log"}, math
    assert not re.search(r"\bv?fn?m(add|sub)\d+[sp]d\b", assembly), "FMA instructions would change the rounding"


@pytest.mark.skipif(not GLIBC_X86_FMA, reason="needs glibc on an x86-64 CPU with FMA to switch to its SSE2 build")
def test_a_machine_with_another_sin_refuses_to_build_and_says_why(tmp_path: Path) -> None:
    """glibc picks its SSE2 build of sin/cos when told the CPU lacks FMA; that build differs from the reference, so
    a build must refuse plainly rather than serve chaotic-divergent data as the published dataset."""
    env = {**os.environ, "GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2,-FMA,-AVX512F,-AVX", "TGBHUB_NO_PROGRESS": "1",
           "TGBHUB_CACHE": str(tmp_path / "cache")}
    probe = subprocess.run([sys.executable, "-c", "from generators.libm import libm_mismatches as m; "
                            "print(len(m()))"], capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    assert int(probe.stdout) > 0
    run = subprocess.run([sys.executable, "-m", "tgbhub.cli", "get", "chaosnet/mini-k0.5-rho0.1-n8", "--offline"],
                         capture_output=True, text=True, env=env, cwd=ROOT)
    assert run.returncode != 0
    assert "computes sin/cos/log differently" in run.stderr and "not the published" in run.stderr
    assert "offline mode off" not in run.stderr.lower() or "Offline mode is on" in run.stderr
    assert not list((tmp_path / "cache").glob("chaosnet/mini-k0.5-rho0.1-n8/*/COMPLETE"))
