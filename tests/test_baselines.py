"""Heuristic baselines: the T-GRAB paper's claims, causality, and the `tgbhub baseline` command."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tgbhub
from tgbhub.baselines import BASELINES, models_for, run_baseline
from tgbhub.baselines.memory import PairTimes
from tgbhub.cli import main
from tgbhub.errors import UnsupportedTaskError

MODELS = ["edgebank", "edgebank-train", "edgebank-tw", "persistence"]


def _baseline(model: str, name: str, cache: Path, capsys, *extra: str) -> dict:
    assert main(["--cache-dir", str(cache), "baseline", model, name, "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_registry_is_keyed_by_task_type() -> None:
    for task_type in ("snapshot-link-prediction", "one-vs-many-ranking"):
        assert set(MODELS) <= set(models_for(task_type))
    with pytest.raises(UnsupportedTaskError, match="available: edgebank"):
        run_baseline("oracle", None, {"type": "snapshot-link-prediction"}, "test")
    assert all(callable(fn) for fn in BASELINES.values())


def test_pair_times_only_look_back() -> None:
    memory = PairTimes(np.array([2, 5, 5]), np.array([0, 0, 1]), np.array([1, 1, 2]), num_nodes=3, horizon=10)
    # pair (0,1) seen at 2 and 5; asking at t=5 sees only t=2 (strictly earlier), at t=6 sees 5; (1,0) never
    assert memory.last_before([0, 0, 0, 1, 1], [1, 1, 1, 0, 2], [2, 5, 6, 9, 5]).tolist() == [-1, 2, 5, -1, -1]


@pytest.mark.parametrize("n", [1, 2, 4])
def test_paper_claims_on_pdet_2_n(n: int, shared_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name = f"t-grab/pdet-2-{n}"
    persistence = _baseline("persistence", name, shared_cache, capsys)
    assert set(persistence) >= {"dataset", "version", "split", "model", "metrics"}
    assert (persistence["dataset"], persistence["split"], persistence["model"]) == (name, "test", "persistence")
    # persistence: 0 at change points (the two ER graphs share no edge) and 1 - 1/n over all test snapshots
    assert persistence["metrics"]["f1_change_points"] == 0.0
    assert persistence["metrics"]["f1"] == pytest.approx(1 - 1 / n)
    # EdgeBank (train-only memory, the paper's) predicts the union of both graphs whatever n is: 0.6654
    for model in ("edgebank-train", "edgebank"):
        edgebank = _baseline(model, name, shared_cache, capsys)
        assert edgebank["metrics"]["f1"] == pytest.approx(0.66544, abs=1e-4)
        assert edgebank["metrics"]["f1_change_points"] == pytest.approx(0.66544, abs=1e-4)


def test_edgebank_train_ignores_history_after_train(shared_cache: Path) -> None:
    ds = tgbhub.load_dataset("t-grab/ce-1", cache_dir=shared_cache)
    task = ds.manifest.task
    train_only = run_baseline("edgebank-train", ds, task, "test_inductive")["score"]
    everything = run_baseline("edgebank", ds, task, "test_inductive")["score"]
    window = run_baseline("edgebank-tw", ds, task, "test_inductive")["score"]
    # the full memory contains the train memory and the window; only it knows the inductive nodes 91-100,
    # which first appear in earlier snapshots of this very split
    assert (everything >= train_only).all() and (everything >= window).all() and (everything > train_only).any()


def test_ranking_baselines_through_the_cli(shared_cache: Path, capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    out = tmp_path / "edgebank.parquet"
    result = _baseline("edgebank", "t-grab/pdet-2-1", shared_cache, capsys, "--task", "ranking", "--out", str(out))
    assert set(result["metrics"]) == {"mrr", "hits@1", "hits@3", "hits@10"}
    assert 0 < result["metrics"]["mrr"] <= 1
    # the written submission grades to the same numbers through `tgbhub evaluate` (task found from its columns)
    assert main(["--cache-dir", str(shared_cache), "evaluate", "t-grab/pdet-2-1", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"] == result["metrics"]
    persistence = _baseline("persistence", "t-grab/pdet-2-1", shared_cache, capsys, "--task", "ranking")
    # pdet-2-1 alternates two graphs, so the previous snapshot never holds the true edge: every positive
    # scores 0 and ties with the negatives that also score 0 -> mean rank 1 + 20/2 = 11 at best
    assert persistence["metrics"]["hits@1"] == 0.0


def test_unknown_model_is_an_error(shared_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--cache-dir", str(shared_cache), "baseline", "oracle", "t-grab/pdet-2-1"]) == 2
    assert "available: edgebank, edgebank-train, edgebank-tw, persistence" in capsys.readouterr().err


@pytest.mark.slow
def test_every_tgrab_dataset_runs_every_baseline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in tgbhub.api.registry().names("t-grab", derived=False):
        for model in MODELS:
            for task in ("snapshot-f1", "ranking"):
                result = _baseline(model, name, tmp_path, capsys, "--task", task)
                assert all(0.0 <= v <= 1.0 for v in result["metrics"].values())
