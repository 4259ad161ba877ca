"""The trained reproductions a hub's boards carry beside the heuristics (``tgbhub leaderboard seed --trained``).

A catalogue, not code paths: each family that has trainable models names the models it reproduces, the seeds, the
epoch bound (the published protocol's, or one that keeps a run within minutes on a 2-core CPU), the paper whose
protocol the trainer follows, and the datasets it runs on by default. Published per-instance numbers
(:data:`PUBLISHED`) are quoted from the paper's own results file; they travel with each run's record (its
``reproduction`` block), never onto the board as a score.

- ChaosNetBench: DLinear and LSTM by the published protocol (at most 50 epochs, early stopping after 10) on every
  instance :data:`PUBLISHED` has numbers for. DLinear runs 1.5-35 min per seed on one CPU thread, the LSTM 49-66 min
  (docs/baselines.md measured both); TCN and Graph WaveNet, hours per run on a CPU, are the GPU checks' job.
- T-GRAB: GC-LSTM and TGN with T-GRAB's sizes on the two smallest deterministic-periodicity datasets (pdet-2-1 and
  pdet-4-1: 96 and 192 snapshots), bounded to :data:`TGRAB_EPOCHS` epochs, 0.5-2 min a run on 2 CPU threads:
  T-GRAB's own bound (100,000 epochs, stopped by a patience of 100 on the train loss) runs for hours, and the paper
  publishes average ranks, not per-dataset scores, so there is no number to match and the row says what a bounded
  run earns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tgbhub.errors import InvalidNameError

CHAOSNET_PAPER = "https://arxiv.org/abs/2605.09676"
TGRAB_PAPER = "https://doi.org/10.1145/3770854.3785699"
#: where :data:`PUBLISHED`'s numbers come from
CHAOSNET_SOURCE = ("ChaosNetBench results/chaosnetbench_cml_results.csv (htmoges/ChaosNetBench@8e1c630): mean and "
                   "std over upstream's 3 seeds")
#: the epoch bound of the T-GRAB reproductions, as T-GRAB's periodicity runs in docs/baselines.md: with T-GRAB's
#: sizes and 2 CPU threads, 60 epochs train in 23 s (GC-LSTM) and 63 s (TGN) on pdet-2-1, 113 s and 95 s on pdet-4-1
TGRAB_EPOCHS = 60


@dataclass(frozen=True)
class Published:
    """A paper's number for one dataset and model: ``metrics`` maps a metric to its ``mean`` (and ``std`` where the
    source gives one) over ``seeds`` runs, quoted from ``source``."""

    metrics: Mapping[str, Mapping[str, float]]
    source: str
    seeds: int

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data, as a record's ``reproduction.published`` holds it."""
        return {"metrics": {name: dict(value) for name, value in self.metrics.items()}, "source": self.source,
                "seeds": self.seeds}


def _chaosnet(test_mse: float, std: float, vpt: float) -> Published:
    return Published({"test_mse": {"mean": test_mse, "std": std}, "vpt": {"mean": vpt}}, CHAOSNET_SOURCE, 3)


#: published per-instance results, ``(dataset, model) -> Published``: upstream's CSV rows for the instances tgbhub's
#: reproductions run on (scripts/gpu_check.py and docs/figures/training-runs.json quote the same rows)
PUBLISHED: dict[tuple[str, str], Published] = {
    ("chaosnet/k0.5-rho0.3-n8", "dlinear"): _chaosnet(0.88882, 0.00007, 3.93),
    ("chaosnet/k0.5-rho0.3-n8", "lstm"): _chaosnet(0.64285, 0.00035, 10.1),
    ("chaosnet/k0.5-rho0.3-n8", "tcn"): _chaosnet(0.61873, 0.00117, 9.8),
    ("chaosnet/k0.5-rho0.3-n8", "graph_wavenet"): _chaosnet(0.54457, 0.02037, 11.12),
    ("chaosnet/k2.0-rho0.2-n8", "dlinear"): _chaosnet(0.98791, 0.00016, 1.7),
    ("chaosnet/k2.0-rho0.2-n8", "lstm"): _chaosnet(0.86822, 0.00133, 4.03),
    ("chaosnet/k2.0-rho0.2-n8", "tcn"): _chaosnet(0.88438, 0.00019, 3.23),
    ("chaosnet/k2.0-rho0.2-n8", "graph_wavenet"): _chaosnet(0.7983, 0.02405, 4.65),
}


@dataclass(frozen=True)
class FamilyPlan:
    """What ``seed --trained`` runs for one family: ``models``, ``seeds``, ``epochs`` (``None``: the model's
    published protocol), the ``paper`` whose protocol the trainers follow, and the default ``datasets`` (``None``:
    every dataset :data:`PUBLISHED` has a number for with one of ``models``)."""

    family: str
    models: tuple[str, ...]
    seeds: tuple[int, ...]
    epochs: int | None
    paper: str
    datasets: tuple[str, ...] | None = None
    why: str = ""

    def default_datasets(self) -> list[str]:
        """The datasets run when none are named."""
        if self.datasets is not None:
            return list(self.datasets)
        return sorted({name for name, model in PUBLISHED if model in self.models
                       and name.split("/", 1)[0] == self.family})


PLANS: dict[str, FamilyPlan] = {plan.family: plan for plan in (
    FamilyPlan("chaosnet", ("dlinear", "lstm"), (42, 43, 44), None, CHAOSNET_PAPER,
               why="the published protocol on the instances with published per-instance numbers; TCN and Graph "
                   "WaveNet take hours a run on a CPU"),
    FamilyPlan("t-grab", ("gclstm", "tgn"), (3457, 3458, 3459), TGRAB_EPOCHS, TGRAB_PAPER,
               datasets=("t-grab/pdet-2-1", "t-grab/pdet-4-1"),
               why=f"the two smallest P_det datasets (96 and 192 snapshots), {TGRAB_EPOCHS} epochs: 0.5-2 min a run"),
)}


@dataclass(frozen=True)
class Reproduction:
    """One configuration to train and submit: ``model`` on ``dataset`` for each of ``seeds``, at most ``epochs``
    (``None``: the protocol's), with the ``paper`` the board row cites and the ``published`` number, if any."""

    dataset: str
    model: str
    seeds: tuple[int, ...]
    epochs: int | None
    paper: str
    published: Published | None = None
    hparams: Mapping[str, Any] = field(default_factory=dict)

    def note(self) -> dict[str, Any]:
        """The ``reproduction`` block a run's record carries: paper, epoch bound, the catalogue it came from and
        the published number (``None`` where the paper publishes none for this dataset and model)."""
        return {"catalogue": __name__, "paper": self.paper, "epochs": self.epochs,
                "published": self.published.to_json() if self.published is not None else None}


def plan(family: str | None = None, datasets: Sequence[str] | None = None, models: Sequence[str] | None = None,
         seeds: Sequence[int] | None = None, epochs: int | None = None,
         hparams: Mapping[str, Mapping[str, Any]] | None = None) -> list[Reproduction]:
    """The reproductions to run: every family of :data:`PLANS` (or ``family``), each plan's default datasets (or
    ``datasets``, full ``family/name`` names of any family with a plan), its models (or those of ``models`` it
    trains), its seeds (or ``seeds``) and epoch bound (or ``epochs``). ``hparams`` maps a model to size overrides
    (tests use tiny ones).

    Returns:
        One :class:`Reproduction` per (dataset, model), in catalogue order.

    Raises:
        InvalidNameError: for a family without trained reproductions, a dataset named without its family or of such
            a family, a model no chosen family reproduces, an empty seed list or an epoch bound below 1.
    """
    known = ", ".join(PLANS)
    if family is not None and family not in PLANS:
        raise InvalidNameError(f"family {family!r} has no trained reproductions; --trained runs those of {known} "
                               "(omit --family for all)")
    if epochs is not None and epochs < 1:
        raise InvalidNameError(f"--epochs {epochs} is not a positive number of epochs; pass e.g. --epochs 1")
    if seeds is not None and not seeds:
        raise InvalidNameError("--seeds names no seed; pass e.g. --seeds 42,43,44")
    chosen: list[tuple[FamilyPlan, str]] = []
    if datasets:
        for name in datasets:
            owner = name.split("/", 1)[0] if "/" in name else None
            if owner is None or owner not in PLANS or (family is not None and owner != family):
                raise InvalidNameError(f"dataset {name!r} is not of a family with trained reproductions "
                                       f"({family or known}); name FAMILY/NAME of one of them, e.g. "
                                       f"{PLANS[family or next(iter(PLANS))].default_datasets()[0]}")
            chosen.append((PLANS[owner], name.partition("@")[0]))
    else:
        chosen = [(found, name) for found in PLANS.values() if family in (None, found.family)
                  for name in found.default_datasets()]
    if models is not None:
        offered = {m for found, _ in chosen for m in found.models}
        unknown = [m for m in models if m not in offered]
        if unknown:
            raise InvalidNameError(f"no chosen family reproduces model {unknown[0]!r}; they reproduce "
                                   f"{', '.join(sorted(offered))} (--models)")
    out = []
    for found, name in chosen:
        for model in found.models:
            if models is not None and model not in models:
                continue
            out.append(Reproduction(name, model, tuple(seeds) if seeds is not None else found.seeds,
                                    epochs if epochs is not None else found.epochs, found.paper,
                                    PUBLISHED.get((name, model)), dict((hparams or {}).get(model, {}))))
    return out
