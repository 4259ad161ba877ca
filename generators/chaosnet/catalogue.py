"""The ChaosNetBench instances we publish: the 96 benchmark instances and the 4-instance mini tier.

Names use K and rho as the grid literals (Python's shortest float repr): ``chaosnet/k0.97-rho0.075-n16``. Epsilon is
derived (``round(rho * K, 6)``) and recorded at full precision with upstream's HDF5 group key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .dynamics import epsilon_of

GENERATOR = "chaosnet/coupled-standard-map"
#: the generator version new manifests are written with; every dataset version is built by its recipe's version
VERSION = "1.1.0"
#: every published version, oldest first: each manifest carries the history up to its own version
CHANGELOG = (
    {"version": "1.0.0", "date": "2026-11-21",
     "summary": "Initial release: upstream's trajectories bit for bit, lambda_max (Benettin) and two SALI screens.",
     "invalidates": "nothing (first release)"},
    {"version": "1.1.0", "date": "2026-11-22",
     "summary": "The SALI deviation vectors are normalised and orthogonalised with plain float64 loops in index "
                "order instead of BLAS (np.linalg.norm, np.dot): 1.0.0's values were those of OpenBLAS's AVX-512 "
                "SkylakeX kernel and could not be rebuilt on machines whose OpenBLAS picks another kernel. state, "
                "initial_conditions, seeds and the adjacency matrices are unchanged. sali changes where the screen "
                "ends near machine precision (every label is unchanged; sali_iterations moves by one checkpoint on "
                "3 of the 100 instances), and lambda_max changes in the last bits on 1,268 of the 9,624 ICs "
                "(relative change at most 2.7e-14). Manifests also gain recipe checks (a build that could not "
                "reproduce refuses in under a second, naming the component that differs), the HDF5 writer version, "
                "and statistics summed exactly (math.fsum).",
     "invalidates": "only results that read 1.0.0's sali values or lambda_max at full precision; trajectories, "
                    "SALI labels, forecasting results, normalisation statistics and windows are identical"})
K_VALUES = (0.5, 0.97, 2.0, 6.5)
RHO_VALUES = (0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5)
N_VALUES = (8, 16, 32)
# Upstream's MiniConfig: K in {0.5, 2.0}, rho in {0.1, 0.3}, N = 8, 6 ICs, 2,000 steps after a 500-step transient.
MINI_K = (0.5, 2.0)
MINI_RHO = (0.1, 0.3)
REGIMES = {0.5: "near-integrable", 0.97: "mixed, regular-dominant", 2.0: "mixed, chaos-dominant",
           6.5: "extended chaos"}
UPSTREAM = "htmoges/ChaosNetBench@8e1c630 (chaosnetbench/dataset.py, systems/standard_map.py)"
CITATION = ("@article{moges2026chaosnetbench, title={ChaosNetBench: Benchmarking Spatio-Temporal Graph Neural "
            "Networks on Chaotic Lattice Dynamics}, author={Moges, Henok Tenaw and Skokos, Charalampos and Moodley, "
            "Deshendran}, journal={arXiv:2605.09676}, year={2026}}")


def history_until(version: str) -> list[dict[str, str]]:
    """The changelog entries up to and including ``version`` (what that version's manifest carries).

    Raises:
        ValueError: if ``version`` was never released.
    """
    released = [entry["version"] for entry in CHANGELOG]
    if version not in released:
        raise ValueError(f"ChaosNetBench version {version!r} is not in the changelog ({', '.join(released)})")
    return [dict(entry) for entry in CHANGELOG[:released.index(version) + 1]]


@dataclass(frozen=True)
class Instance:
    """One ChaosNetBench instance to build: parameters, protocol sizes and IC splits."""

    name: str
    k: float
    rho: float
    n: int
    n_ics: int
    transient: int
    steps: int
    sali_horizons: tuple[int, ...]
    splits: dict[str, tuple[int, int]]
    tier: str
    version: str = VERSION

    @property
    def epsilon(self) -> float:
        return epsilon_of(self.k, self.rho)

    @property
    def upstream_key(self) -> str:
        """Upstream's HDF5 group (two-decimal K and epsilon, so 0.0375 shows as 0.04 and 0.075 as 0.07)."""
        return f"K_{self.k:.2f}_eps_{self.epsilon:.2f}_N_{self.n:02d}"

    @property
    def params(self) -> dict[str, Any]:
        """The recipe parameters: everything the generator needs besides the base seed."""
        return {"K": self.k, "rho": self.rho, "epsilon": self.epsilon, "N": self.n, "n_ics": self.n_ics,
                "transient": self.transient, "steps": self.steps, "sali_horizons": list(self.sali_horizons),
                "seed_rule": "base + int(sha256(f'{base}|{K:.10f}|{epsilon:.10f}|{N}|{ic}')[:8], 16) % 2**31",
                "upstream_key": self.upstream_key}


def instance_name(k: float, rho: float, n: int, prefix: str = "") -> str:
    return f"chaosnet/{prefix}k{k!r}-rho{rho!r}-n{n}"


def full_instances() -> list[Instance]:
    """The 96 benchmark instances (100 ICs x 10,000 recorded steps after a 1,000-step transient)."""
    return [Instance(name=instance_name(k, rho, n), k=k, rho=rho, n=n, n_ics=100, transient=1000, steps=10_000,
                     sali_horizons=(1000, 5000), splits={"train": (0, 70), "val": (70, 80), "test": (80, 100)},
                     tier="benchmark")
            for k in K_VALUES for rho in RHO_VALUES for n in N_VALUES]


def mini_instances() -> list[Instance]:
    """Upstream's mini tier (6 ICs x 2,000 steps after 500), for tests and demos; splits 3 / 1 / 2 ICs."""
    return [Instance(name=instance_name(k, rho, 8, "mini-"), k=k, rho=rho, n=8, n_ics=6, transient=500, steps=2000,
                     sali_horizons=(1000, 2500), splits={"train": (0, 3), "val": (3, 4), "test": (4, 6)},
                     tier="mini")
            for k in MINI_K for rho in MINI_RHO]


def instances() -> list[Instance]:
    """Every ChaosNetBench dataset version we publish, mini tier first."""
    return [*mini_instances(), *full_instances()]


def responsible_ai(instance: Instance) -> dict[str, Any]:
    """The Croissant RAI fields of a ChaosNetBench instance (collection, use, limits, bias, people), with the
    instance's own map parameters and regime."""
    return {
        "rai:dataCollection": (
            f"Simulated, not collected: float64 trajectories of the coupled standard map on a ring of N={instance.n} "
            f"sites with K={instance.k!r} ({REGIMES[instance.k]} regime) and rho={instance.rho!r}, integrated by "
            f"tgbhub's {GENERATOR} generator bit-exactly as the ChaosNetBench reference implementation ({UPSTREAM}) "
            "does; initial conditions come from the seeded rule in recipe.params.seed_rule, and the Lyapunov "
            "exponents and SALI indicators are computed from the same map."),
        "rai:dataUseCases": [
            "Benchmarking spatio-temporal graph neural networks and other sequence models on forecasting chaotic "
            "lattice dynamics (ChaosNetBench, Moges et al. 2026): autoregressive rollouts graded by valid prediction "
            "time and error growth.",
            "Studying how nonlinearity (K), coupling (rho) and lattice size (N) change predictability, using each "
            "trajectory's largest Lyapunov exponent and SALI label.",
            "Not intended as a model of any physical system beyond the coupled standard map."],
        "rai:dataLimitations": [
            "One dynamical system: a symplectic map on a ring with nearest-neighbour coupling, noise-free; "
            "conclusions may not transfer to other systems, continuous-time flows, measured (noisy) data or "
            "irregular graphs.",
            "A finite grid of K, rho and N with a fixed number of initial conditions and recorded steps per "
            "instance; how far ahead a trajectory is predictable depends on how chaotic it is (lambda_max).",
            "The SALI labels (chaotic / sticky / regular) are indicators computed up to a finite number of steps, "
            "not ground truth."],
        "rai:dataBiases": [
            "No social or demographic bias: the data describes no people.",
            "The sample is designed: the benchmark authors chose the K values to span regimes from near-integrable "
            "to extended chaos, and initial conditions follow one seeded rule, so behaviours such as long sticky "
            "orbits are rare and the mix of regular and chaotic trajectories differs between instances."],
        "rai:personalSensitiveInformation": [
            "None: numerical simulation of a mathematical map; no record refers to a person."],
        "rai:dataSocialImpact": (
            "Low direct risk: simulated dynamics about no one. Forecasting skill on this map is not evidence of skill "
            "on weather, climate or other real chaotic systems; do not present it as such."),
    }
