"""The ChaosNetBench trainers (tgbhub.trainers.chaosnet) on a mini instance built by the real generator."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tgbhub  # noqa: E402
from tgbhub.baselines.trajectory import rollout  # noqa: E402
from tgbhub.errors import IntegrityError, InvalidNameError, UnsupportedTaskError  # noqa: E402
from tgbhub.trainers import (TrainConfig, load_checkpoint, make_trainer, save_checkpoint,  # noqa: E402
                             trainers_for)
from tgbhub.trainers.torchutil import EarlyStopping  # noqa: E402

NAME = "chaosnet/mini-k0.5-rho0.3-n8"
SMOKE = {"epochs": 2, "limit_batches": 4, "progress": False, "device": "cpu"}
#: sizes small enough for a CPU test (the published ones cost about 40 MFLOP per TCN window)
TINY = {"dlinear": {}, "lstm": {"hidden": 8}, "tcn": {"channels": 4, "end_channels": 8},
        "graph_wavenet": {"residual_channels": 4, "dilation_channels": 4, "skip_channels": 8, "end_channels": 8}}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory):
    return tgbhub.load_dataset(NAME, cache_dir=tmp_path_factory.mktemp("cache"))


def _fit(dataset, model: str, **settings):
    config = TrainConfig(**{**SMOKE, "hparams": TINY.get(model, {}), **settings})
    trainer = make_trainer(dataset.task, model, config)
    return trainer, trainer.fit(dataset, dataset.task)


def test_registry_lists_the_four_models():
    assert {"dlinear", "lstm", "tcn", "graph_wavenet"} <= set(trainers_for("rollout-forecasting"))


@pytest.mark.parametrize("model", ["dlinear", "lstm", "tcn", "graph_wavenet"])
def test_each_model_trains_predicts_and_is_graded(dataset, model):
    trainer, report = _fit(dataset, model)
    assert report.epochs_run == 2 and len(report.history) == 2 and report.device == "cpu"
    assert 0 <= report.best_epoch < 2 and np.isfinite(report.best_val)
    assert report.best_val == min(h["val_mse"] for h in report.history)
    assert report.val_metric == "mse" and not report.higher_is_better
    submission = trainer.predict(dataset, dataset.task, "test")
    result = tgbhub.get_evaluator(dataset).evaluate(submission, split="test")
    metrics = result["metrics"]
    assert np.isfinite(metrics["test_mse"]) and metrics["vpt"] >= 0 and result["validity_screen"]["applied"]


def test_teacher_forced_mse_of_the_trainer_equals_the_evaluators(dataset):
    trainer, _ = _fit(dataset, "dlinear")
    submission = trainer.predict(dataset, dataset.task, "val")
    graded = tgbhub.get_evaluator(dataset).evaluate(submission, split="val")["metrics"]["val_mse"]
    own = trainer.mean_squared_error(trainer._windows(torch, dataset, dataset.task, "val"))
    assert own == pytest.approx(graded, rel=1e-5)


def test_rollout_on_the_device_matches_the_reference_recursion(dataset):
    trainer, _ = _fit(dataset, "lstm")
    context = dataset.trajectories("test")[:, :48]

    def forecaster(x: np.ndarray) -> np.ndarray:
        return trainer.forecast(torch.as_tensor(x)).numpy()

    expected = rollout(forecaster, context, 100, 12)
    np.testing.assert_allclose(trainer.rollout(context, 100, 12), expected, rtol=1e-5, atol=1e-5)


def test_same_seed_is_bit_identical_on_cpu_and_another_seed_is_not(dataset):
    first = _fit(dataset, "lstm", seed=3)[0].state()["weights"]
    again = _fit(dataset, "lstm", seed=3)[0].state()["weights"]
    other = _fit(dataset, "lstm", seed=4)[0].state()["weights"]
    assert all(torch.equal(first[k], again[k]) for k in first)
    assert not all(torch.equal(first[k], other[k]) for k in first)


def test_amp_trains_in_bfloat16_close_to_float32(dataset):
    _, plain = _fit(dataset, "dlinear")
    _, amp = _fit(dataset, "dlinear", amp=True)
    losses = [[h["train_mse"] for h in report.history] for report in (plain, amp)]
    assert losses[0] != losses[1]  # autocast ran: bfloat16 rounds the matmuls
    assert np.allclose(losses[0], losses[1], rtol=0.05) and np.isfinite(amp.best_val)


@pytest.mark.skipif(shutil.which("g++") is None and shutil.which("clang++") is None,
                    reason="torch.compile on CPU generates C++ and needs a compiler (g++ or clang++)")
@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")  # torch's own import
def test_compiled_training_matches_eager(dataset):
    _, plain = _fit(dataset, "dlinear", epochs=1)
    _, compiled = _fit(dataset, "dlinear", epochs=1, compile=True)
    assert compiled.history[0]["train_mse"] == pytest.approx(plain.history[0]["train_mse"], rel=1e-5)
    assert compiled.best_val == pytest.approx(plain.best_val, rel=1e-5)


def test_fit_leaves_the_callers_torch_rng_alone(dataset):
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    _fit(dataset, "dlinear", seed=9)
    assert torch.equal(torch.rand(3), expected)


def test_checkpoint_round_trip_predicts_the_same(dataset, tmp_path):
    trainer, report = _fit(dataset, "lstm")
    config = TrainConfig(**SMOKE, hparams=TINY["lstm"])
    path = save_checkpoint(tmp_path / "m.pt", trainer, config=config, dataset=dataset, task=dataset.task,
                           report=report)
    loaded = load_checkpoint(path, dataset)
    assert loaded.record["dataset"]["digest"] == dataset.digest and loaded.record["model"] == "lstm"
    assert loaded.record["report"]["best_epoch"] == report.best_epoch
    before = trainer.predict(dataset, dataset.task, "test")
    after = loaded.trainer.predict(dataset, dataset.task, "test")
    np.testing.assert_array_equal(before["values"], after["values"])


def test_checkpoint_refuses_other_data(dataset, tmp_path):
    trainer, report = _fit(dataset, "dlinear")
    path = save_checkpoint(tmp_path / "m.pt", trainer, config=TrainConfig(**SMOKE), dataset=dataset,
                           task=dataset.task, report=report)
    other = tgbhub.load_dataset("chaosnet/mini-k2.0-rho0.3-n8", cache_dir=tmp_path / "cache")
    with pytest.raises(IntegrityError, match="mini-k0.5-rho0.3-n8"):
        load_checkpoint(path, other)
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(InvalidNameError, match="not a readable tgbhub checkpoint"):
        load_checkpoint(tmp_path / "junk.pt", dataset)


def test_bad_settings_are_refused_with_the_fix(dataset):
    with pytest.raises(InvalidNameError, match="no hyper-parameter 'depth'"):
        _fit(dataset, "dlinear", hparams={"depth": 3})
    with pytest.raises(InvalidNameError, match="device 'tpu'"):
        TrainConfig(device="tpu")
    with pytest.raises(InvalidNameError, match="epochs must be a positive integer"):
        TrainConfig(epochs=0)
    if not torch.cuda.is_available():
        with pytest.raises(InvalidNameError, match="no CUDA device"):
            _fit(dataset, "dlinear", device="cuda")
    with pytest.raises(UnsupportedTaskError, match="graph_wavenet"):
        make_trainer({"name": "x", "type": "rollout-forecasting"}, "graph-wavenet", TrainConfig())
    with pytest.raises(InvalidNameError, match="no weights yet"):
        make_trainer(dataset.task, "dlinear", TrainConfig()).predict(dataset, dataset.task, "test")


def test_early_stopping_keeps_the_best_epoch():
    module = torch.nn.Linear(2, 1)
    stopper = EarlyStopping(patience=2)
    assert not stopper.update(0, 1.0, module)
    best = {k: v.clone() for k, v in module.state_dict().items()}
    with torch.no_grad():
        module.weight.add_(1.0)
    assert not stopper.update(1, 1.0, module)  # equal is not a strict improvement
    assert stopper.update(2, 2.0, module)
    stopper.restore(module)
    assert stopper.best_epoch == 0 and all(torch.equal(module.state_dict()[k], best[k]) for k in best)
