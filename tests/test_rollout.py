"""The rollout-forecasting evaluator, the reference predictors and the benchmark-level views."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import tgbhub
from tgbhub import api
from tgbhub.baselines import run_baseline
from tgbhub.baselines.trajectory import RolloutSubmission, rollout
from tgbhub.cli import main
from tgbhub.errors import ScoreError, SubmissionError, SubmissionScaleWarning
from tgbhub.evaluate.benchmark import (fractional_wins, mcnemar_exact, pairwise, robustness_counts,
                                       wilcoxon_signed_rank)
from tgbhub.evaluate.rollout import looks_raw, nrmse_curve, valid_prediction_time
from tgbhub.evaluate.submission import write_submission

MINI = "chaosnet/mini-k0.5-rho0.1-n8"
FULL_N8 = "chaosnet/k2.0-rho0.2-n8"


@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory):
    return tgbhub.load_dataset(MINI, cache_dir=tmp_path_factory.mktemp("mini"), offline=True)


def _submission(ds, rollouts: np.ndarray) -> dict:
    keys = api.get_evaluator(ds).rollout_keys("test")
    return {**keys, "values": rollouts.reshape(-1, rollouts.shape[2])}


def test_vpt_is_the_first_step_whose_nrmse_exceeds_one() -> None:
    truth = np.tile(np.array([[1.0, -1.0]]), (10, 1))                 # std over everything = 1
    predicted = truth.copy()
    predicted[4:] += 1.5                                              # NRMSE 1.5 from step 4 on
    curve = nrmse_curve(predicted, truth)
    assert curve[:4].tolist() == [0, 0, 0, 0] and curve[4] == pytest.approx(1.5 / (1 + 1e-8))
    assert valid_prediction_time(curve) == 4
    assert valid_prediction_time(nrmse_curve(truth, truth)) == 10     # never exceeds: the number of steps
    assert valid_prediction_time(np.array([1.0, 1.0, 1.01])) == 2     # strictly greater than the threshold
    with pytest.raises(ScoreError, match="NaN"):
        nrmse_curve(np.full((10, 2), np.nan), truth)


def test_perfect_and_partly_wrong_rollouts(mini) -> None:
    truth = mini.trajectories("test")[:, 48:]
    evaluator = mini.evaluator
    perfect = evaluator.evaluate(_submission(mini, truth), split="test", detail=True)
    assert perfect["metrics"]["vpt"] == 1952 and perfect["metrics"]["vpt_std"] == 0
    assert perfect["task_type"] == "rollout-forecasting" and perfect["per_ic"]["ic"] == [4, 5]
    wrong = truth.copy()
    wrong[0, 100:] = -wrong[0, 100:] + 3.0
    wrong[1, 7:] = 10.0
    graded = evaluator.evaluate(_submission(mini, wrong), split="test", detail=True)
    assert graded["per_ic"]["vpt"] == [100, 7]
    assert graded["metrics"]["vpt"] == 53.5 and graded["metrics"]["vpt_std"] == 46.5
    assert graded["metrics"]["vpt_lyapunov"] == pytest.approx(np.mean([100, 7] * mini.indicators["lambda_max"][4:6]))


@pytest.mark.parametrize("mutate, column, message", [
    (lambda s: s.pop("values"), "values", "missing"),
    (lambda s: s.update(values=s["values"][:, :15]), "values", "expected 16"),
    (lambda s: s["ic"].__setitem__(3, 3), "ic", "outside"),
    (lambda s: s["t"].__setitem__(1, 48), "ic", "repeats"),
    (lambda s: s["values"].__setitem__((5, 2), np.nan), "values", "finite"),
    (lambda s: s.update(extra=s["t"]), "extra", "not part"),
])
def test_malformed_rollouts_name_the_column_and_are_never_scored(mini, mutate, column, message) -> None:
    submission = _submission(mini, mini.trajectories("test")[:, 48:].copy())
    submission = {k: np.array(v) for k, v in submission.items()}
    mutate(submission)
    with pytest.raises(SubmissionError, match=message) as error:
        mini.evaluator.evaluate(submission, split="test")
    assert error.value.column == column


def test_a_parquet_file_grades_like_the_columns(mini, tmp_path: Path) -> None:
    submission = run_baseline("persistence", mini, mini.task, "test")
    write_submission(submission, tmp_path / "rollouts.parquet")
    from_file = mini.evaluator.evaluate(tmp_path / "rollouts.parquet", split="test")["metrics"]
    in_memory = mini.evaluator.evaluate(dict(submission), split="test")["metrics"]
    assert from_file == in_memory and "test_mse" not in from_file    # files carry rollouts, not window forecasts


def test_rollout_feeds_back_twelve_steps_per_call_and_truncates_the_last_block() -> None:
    calls = []

    def step_up(window):
        calls.append(window.copy())
        return window[:, -1:, :] + np.arange(1, 13, dtype=np.float32)[None, :, None]

    out = rollout(step_up, np.zeros((2, 48, 3), dtype=np.float32), steps=30, block=12)
    assert out.shape == (2, 30, 3) and len(calls) == 3
    assert np.array_equal(out[0, :, 0], np.arange(1, 31)) and calls[2][0, -1, 0] == 24


def test_reference_predictors_on_the_mini_tier(mini) -> None:
    results = {}
    for model in ("zero", "persistence", "linear"):
        submission = run_baseline(model, mini, mini.task, "test")
        assert isinstance(submission, RolloutSubmission) and submission["values"].shape == (2 * 1952, 16)
        results[model] = mini.evaluator.evaluate(submission, split="test")["metrics"]
    assert 0.95 < results["zero"]["test_mse"] < 1.06 and results["zero"]["vpt"] <= 5
    assert results["persistence"]["vpt"] <= 1 and results["persistence"]["test_mse"] > 1.5
    assert results["linear"]["test_mse"] < results["zero"]["test_mse"] and results["linear"]["valid"] == 1.0
    assert {"mse_h3", "mae_h6", "mse_h12", "nrmse_at_96", "vpt_std"} <= set(results["linear"])
    windows = mini.windows("test")
    forecasts = np.zeros((len(windows), 12, 16), dtype=np.float32)
    as_array = RolloutSubmission(run_baseline("zero", mini, mini.task, "test"))
    as_array.forecasts = forecasts
    assert mini.evaluator.evaluate(as_array, split="test")["metrics"]["test_mse"] == pytest.approx(
        results["zero"]["test_mse"])


def test_cli_baseline_prints_vpt_and_test_mse(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["baseline", "linear", MINI, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["model"] == "linear" and result["split"] == "test"
    assert {"vpt", "vpt_std", "test_mse"} <= set(result["metrics"])


def test_cli_grades_a_rollout_file(mini, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_submission(run_baseline("persistence", mini, mini.task, "test"), tmp_path / "rollouts.parquet")
    assert main(["evaluate", MINI, str(tmp_path / "rollouts.parquet"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    expected = mini.evaluator.evaluate(tmp_path / "rollouts.parquet", split="test")["metrics"]
    assert result["task_type"] == "rollout-forecasting" and result["metrics"] == pytest.approx(expected)


def test_linear_reproduces_the_published_dlinear_numbers(shared_cache: Path) -> None:
    """Closed-form linear least squares is DLinear in function terms. Upstream's results CSV
    (results/chaosnetbench_cml_results.csv) for DLinear at K=2.0, rho=0.2, N=8: test MSE 0.98791 (3-seed mean), VPT
    1.7 with seed std 0, and the per-IC VPT std 1.5524174696. The rollout numbers match exactly, which they can only
    if our test trajectories and train statistics are the ones behind the paper."""
    ds = tgbhub.load_dataset(FULL_N8, cache_dir=shared_cache, offline=True)
    linear = ds.evaluator.evaluate(run_baseline("linear", ds, ds.task, "test"), split="test")["metrics"]
    assert linear["test_mse"] == pytest.approx(0.9879084229469299, abs=5e-4)
    assert linear["vpt"] == pytest.approx(1.7, abs=1e-12) and linear["valid"] == 0.0
    assert linear["vpt_std"] == pytest.approx(1.5524174696260022, abs=1e-9)
    zero = ds.evaluator.evaluate(run_baseline("zero", ds, ds.task, "test"), split="test")["metrics"]
    assert 0.955 <= zero["test_mse"] <= 1.059 and 0.5 <= zero["vpt"] <= 4.5


# ------------------------------------------------------------------------------------------------ benchmark views

RECORDS = [
    {"model": "a", "instance": 1, "K": 0.5, "test_mse": 0.5, "vpt": 10.0},
    {"model": "b", "instance": 1, "K": 0.5, "test_mse": 0.6, "vpt": 10.0},
    {"model": "c", "instance": 1, "K": 0.5, "test_mse": 0.97, "vpt": 30.0},  # invalid: its VPT does not count
    {"model": "a", "instance": 2, "K": 2.0, "test_mse": 0.9, "vpt": 4.0},
    {"model": "b", "instance": 2, "K": 2.0, "test_mse": 0.7, "vpt": 6.0},
    {"model": "c", "instance": 2, "K": 2.0, "test_mse": 0.8, "vpt": 5.0},
    {"model": "a", "instance": 3, "K": 2.0, "test_mse": 0.94, "vpt": 2.0},   # only one valid model: not scored
    {"model": "b", "instance": 3, "K": 2.0, "test_mse": 0.99, "vpt": 3.0},
]


def test_robustness_counts_and_fractional_wins() -> None:
    assert robustness_counts(RECORDS, by="K") == {"a": {"total": 3, 0.5: 1, 2.0: 2}, "b": {"total": 2, 0.5: 1,
                                                                                        2.0: 1},
                                                  "c": {"total": 1, 0.5: 0, 2.0: 1}}
    wins, scored = fractional_wins(RECORDS, by="K")
    assert scored == 2 and wins == {"a": {"total": 0.5, 0.5: 0.5}, "b": {"total": 1.5, 0.5: 0.5, 2.0: 1.0}}
    excluded, _ = fractional_wins(RECORDS, exclude=("b",))
    assert excluded == {"c": {"total": 1.0}}                        # instance 1 has one valid model left
    head = pairwise(RECORDS, "a", "b")
    assert (head["both_valid"], head["a_wins"], head["b_wins"], head["ties"]) == (2, 0, 1, 1)
    assert (head["a_only"], head["b_only"], head["neither"]) == (1, 0, 0) and head["mcnemar_p"] == 1.0


def test_mcnemar_reproduces_the_papers_table_9() -> None:
    # Table 9's (A-only, B-only) counts -> exact McNemar p (scipy's defaults): 4.9e-4, 1.0, 0.125, 6.1e-5, 3.8e-6
    assert mcnemar_exact(0, 12) == pytest.approx(4.9e-4, rel=0.01)
    assert mcnemar_exact(1, 2) == 1.0 and mcnemar_exact(4, 0) == 0.125
    assert mcnemar_exact(15, 0) == pytest.approx(6.1e-5, rel=0.01) and mcnemar_exact(0, 19) == pytest.approx(3.8e-6,
                                                                                                              rel=0.01)


def test_wilcoxon_agrees_with_scipys_defaults() -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(1)
    for trial in range(120):
        n = int(rng.integers(4, 70))
        a = np.round(rng.normal(size=n), int(rng.integers(0, 3)))   # rounding makes ties and zeros
        b = np.round(rng.normal(0.3, 1, size=n), int(rng.integers(0, 3)))
        if trial % 4 == 0:
            b[:2] = a[:2]
        assert wilcoxon_signed_rank(a, b) == pytest.approx(stats.wilcoxon(a, b).pvalue, rel=1e-9, abs=1e-12)
    with pytest.raises(ScoreError):
        wilcoxon_signed_rank([1.0, 2.0], [1.0])


# ------------------------------------------------------------------------------------------- NaN, units, validity

def test_a_diverged_rollout_names_its_trajectory_and_step(mini) -> None:
    rollouts = mini.trajectories("test")[:, 48:].copy()
    rollouts[1, 30:, 5] = np.inf                                      # IC 5 diverges at t = 48 + 30
    rollouts[1, 40:, :] = np.nan
    submission = _submission(mini, rollouts)
    with pytest.raises(SubmissionError) as info:
        mini.evaluator.evaluate(submission, split="test")
    error = info.value
    assert error.column == "values" and "ic=5 first holds NaN/inf at t=78" in str(error)
    assert "1 of 2 ICs" in str(error) and submission["t"][error.row] == 78 and submission["ic"][error.row] == 5
    assert "nan_to_num" not in str(error) and "no sensible fill value" in error.fix and "clip" in error.fix


def test_raw_units_warn_naming_the_scales_and_the_fix(mini) -> None:
    raw = mini.scaler.inverse(mini.trajectories("test")[:, 48:]).astype(np.float32)
    with pytest.warns(SubmissionScaleWarning, match=r"raw \(un-normalised\) units") as caught:
        graded = mini.evaluator.evaluate(_submission(mini, raw), split="test")
    message = str(caught[0].message)
    assert "expected about 0 and 1" in message and "ds.scaler.transform" in message
    assert f"mean {np.mean(mini.scaler.mean):.3g}" in message and graded["warnings"] == [message]
    assert graded["metrics"]["vpt"] == 0                               # what the warning is there to explain
    assert looks_raw(raw, mini.scaler.mean, mini.scaler.std).mean() >= 0.9
    assert not looks_raw(mini.trajectories("test")[:, 48:], mini.scaler.mean, mini.scaler.std).any()


@pytest.mark.parametrize("name", [MINI, FULL_N8])
def test_the_reference_predictors_never_look_raw(name: str, mini, shared_cache: Path) -> None:
    ds = mini if name == MINI else tgbhub.load_dataset(name, cache_dir=shared_cache, offline=True)
    for model in ("zero", "persistence", "linear"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", SubmissionScaleWarning)
            graded = ds.evaluator.evaluate(run_baseline(model, ds, ds.task, "test"), split="test")
        assert "warnings" not in graded, (model, graded.get("warnings"))


def test_validity_screen_on_files_with_and_without_teacher_forced_forecasts(mini, tmp_path: Path) -> None:
    submission = run_baseline("linear", mini, mini.task, "test")
    write_submission(submission, tmp_path / "rollouts.parquet")
    alone = mini.evaluator.evaluate(tmp_path / "rollouts.parquet", split="test")
    assert alone["validity_screen"]["applied"] is False and "teacher_forced" in alone["validity_screen"]["reason"]
    assert "valid" not in alone["metrics"]
    windows = mini.windows("test")
    forecasts = submission.forecasts(windows[np.arange(len(windows))][0])
    keys = mini.evaluator.teacher_forced_keys("test")
    order = np.arange(len(windows))[::-1]                              # rows in any order
    write_submission({"window": keys["window"][order], "values": forecasts.reshape(len(windows), -1)[order]},
                     tmp_path / "teacher-forced.parquet")
    both = mini.evaluator.evaluate(tmp_path / "rollouts.parquet", split="test",
                                   teacher_forced=tmp_path / "teacher-forced.parquet")
    in_memory = mini.evaluator.evaluate(submission, split="test")
    assert both["metrics"]["test_mse"] == pytest.approx(in_memory["metrics"]["test_mse"], rel=1e-12)
    assert both["metrics"]["valid"] == 1.0 and both["validity_screen"] == {
        "applied": True, "metric": "test_mse", "threshold": 0.95, "value": both["metrics"]["test_mse"],
        "valid": True, "scope": in_memory["validity_screen"]["scope"]}
    with pytest.raises(SubmissionError, match="given twice"):
        mini.evaluator.evaluate(submission, split="test", teacher_forced=tmp_path / "teacher-forced.parquet")


def test_cli_applies_the_validity_screen_with_a_teacher_forced_file(mini, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    submission = run_baseline("linear", mini, mini.task, "test")
    write_submission(submission, tmp_path / "rollouts.parquet")
    windows = mini.windows("test")
    forecasts = submission.forecasts(windows[np.arange(len(windows))][0])
    write_submission({"window": mini.evaluator.teacher_forced_keys("test")["window"],
                      "values": forecasts.reshape(len(windows), -1)}, tmp_path / "teacher-forced.parquet")
    assert main(["evaluate", MINI, str(tmp_path / "rollouts.parquet")]) == 0
    assert "validity: not applied: no teacher-forced forecasts" in capsys.readouterr().out
    assert main(["evaluate", MINI, str(tmp_path / "rollouts.parquet"), "--teacher-forced",
                 str(tmp_path / "teacher-forced.parquet")]) == 0
    out = capsys.readouterr().out
    assert "test_mse:" in out and "validity: test_mse" in out and "vs threshold 0.95: valid" in out
    assert main(["evaluate", "t-grab/pdet-2-1", str(tmp_path / "rollouts.parquet"), "--task", "snapshot-f1",
                 "--teacher-forced", str(tmp_path / "teacher-forced.parquet")]) == 2
    assert "--teacher-forced applies to rollout-forecasting tasks only" in capsys.readouterr().err


@pytest.mark.parametrize("mutate, column, words", [
    (lambda f: f.pop("window"), "window", "missing"),
    (lambda f: f.update(values=f["values"][:, :-1]), "values", r"expected 192 \(horizon 12 x 2N 16\)"),
    (lambda f: f.update(window=f["window"][1:], values=f["values"][1:]), "window", "lacks 1 of the"),
])
def test_malformed_teacher_forced_files_are_refused(mini, mutate, column: str, words: str) -> None:
    rollouts = _submission(mini, mini.trajectories("test")[:, 48:])
    count = len(mini.evaluator.teacher_forced_keys("test")["window"])
    forecasts = {"window": np.arange(count), "values": np.zeros((count, 12 * 16), dtype=np.float32)}
    mutate(forecasts)
    with pytest.raises(SubmissionError, match=words) as info:
        mini.evaluator.evaluate(rollouts, split="test", teacher_forced=forecasts)
    assert info.value.column == column


def test_non_finite_teacher_forced_forecasts_name_the_window_and_step(mini) -> None:
    rollouts = _submission(mini, mini.trajectories("test")[:, 48:])
    count = len(mini.evaluator.teacher_forced_keys("test")["window"])
    values = np.zeros((count, 12, 16), dtype=np.float32)
    values[3000, 7, 3] = np.nan
    with pytest.raises(ScoreError, match="window 3000 holds NaN or inf at step 7"):
        mini.evaluator.evaluate(rollouts, split="test",
                                teacher_forced={"window": np.arange(count), "values": values.reshape(count, -1)})
