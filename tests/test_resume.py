"""Resumable fits (tgbhub.trainers.resume): a fit paused at a time limit and resumed, call after call, ends where an
uninterrupted fit ends, bit for bit on CPU; a state file of another run is refused."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

import tgbhub  # noqa: E402
from tgbhub import cli  # noqa: E402
from tgbhub.errors import IntegrityError, InvalidNameError, TrainingPaused, UnsupportedTaskError  # noqa: E402
from tgbhub.trainers import TrainConfig, make_trainer  # noqa: E402
from tgbhub.trainers.resume import Deadline  # noqa: E402

NAME = "chaosnet/mini-k0.5-rho0.3-n8"
#: Graph WaveNet has dropout (torch's global generator) and BatchNorm-free residual blocks; LSTM has none: both kinds
TINY = {"lstm": {"hidden": 8},
        "graph_wavenet": {"residual_channels": 4, "dilation_channels": 4, "skip_channels": 8, "end_channels": 8}}
SMOKE = {"epochs": 4, "limit_batches": 3, "progress": False, "device": "cpu"}


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory):
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def dataset(cache):
    return tgbhub.load_dataset(NAME, cache_dir=cache)


def _fit(dataset, model: str, **settings):
    trainer = make_trainer(dataset.task, model, TrainConfig(**{**SMOKE, "hparams": TINY[model], **settings}))
    return trainer, trainer.fit(dataset, dataset.task)


def _same_weights(a, b) -> bool:
    a, b = a.state()["weights"], b.state()["weights"]
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def _losses(report) -> list[tuple[float, float, float]]:
    return [(h["train_mse"], h["val_mse"], h["lr"]) for h in report.history]


@pytest.mark.parametrize("model", ["lstm", "graph_wavenet"])
def test_a_fit_paused_every_epoch_and_resumed_is_bit_identical_to_one_run(dataset, tmp_path, model):
    straight, whole = _fit(dataset, model, seed=5)
    state = tmp_path / "fit-state.pt"
    calls = []
    while True:
        resumed, report = _fit(dataset, model, seed=5, state_file=str(state), time_limit=0)
        calls.append(report)
        if report.finished:
            break
        assert len(calls) < 10, "the paused fit never finished"
    # a time limit of 0 lets each call run exactly one epoch (one always runs), so four calls for four epochs
    assert [r.epochs_run for r in calls] == [1, 2, 3, 4]
    assert [r.resumed_at for r in calls] == [None, 1, 2, 3]
    assert not any(r.finished for r in calls[:-1])
    assert _losses(report) == _losses(whole)
    assert (report.best_epoch, report.best_val) == (whole.best_epoch, whole.best_val)
    assert _same_weights(resumed, straight)
    assert report.train_seconds >= sum(h["seconds"] for h in report.history) * 0.99


def test_a_resumed_fit_that_had_ended_restores_the_best_weights_and_trains_no_more(dataset, tmp_path):
    state = str(tmp_path / "fit-state.pt")
    first, report = _fit(dataset, "lstm", seed=2, state_file=state)
    again, repeat = _fit(dataset, "lstm", seed=2, state_file=state)
    assert report.finished and repeat.finished and repeat.resumed_at == 4
    assert _losses(repeat) == _losses(report) and repeat.best_epoch == report.best_epoch
    assert _same_weights(first, again)


def test_a_state_file_of_another_run_is_refused_naming_what_differs(dataset, tmp_path):
    state = str(tmp_path / "fit-state.pt")
    _fit(dataset, "lstm", seed=2, state_file=state, time_limit=0)
    with pytest.raises(IntegrityError, match=r"run\.seed = 2.*run\.seed = 3.*another run"):
        _fit(dataset, "lstm", seed=3, state_file=state)
    with pytest.raises(IntegrityError, match=r"hyperparameters\.model\.hidden"):
        _fit(dataset, "lstm", seed=2, state_file=state, hparams={"hidden": 6})


def test_a_trainer_that_cannot_resume_refuses_a_state_file(monkeypatch):
    """Every model tgbhub ships can pause and resume; one registered without ``resumable`` (a plugin's) cannot, and
    asking it for a time limit is refused with the models that can."""
    from tgbhub.trainers import TRAINERS

    task = {"type": "snapshot-link-prediction", "name": "link"}
    # registered the way a plug-in registers, and taken out again when the test ends
    monkeypatch.setitem(TRAINERS._load(), ("snapshot-link-prediction", "plugin"), lambda config: object())
    with pytest.raises(UnsupportedTaskError, match="'plugin' cannot pause and resume.*gclstm.*graph_wavenet"):
        make_trainer(task, "plugin", TrainConfig(time_limit=60))
    assert getattr(make_trainer(task, "gclstm", TrainConfig(time_limit=60)), "resumable", False)


def test_deadline_judges_by_the_slowest_epoch_on_its_clock():
    now = [100.0]
    deadline = Deadline(60, clock=lambda: now[0])
    now[0] = 130.0
    assert deadline.allows(30) and not deadline.allows(30.5)
    assert Deadline(None, clock=lambda: now[0]).allows(1e9)


def test_train_pauses_with_exit_3_and_the_same_command_with_resume_finishes(cache, dataset, tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["--cache-dir", str(cache), "train", "lstm", NAME, "--device", "cpu", "--epochs", "2",
            "--limit-batches", "2", "--hparam", "hidden=8", "--out", str(out), "--resume", "--time-limit", "0",
            "--json"]
    assert cli.main(argv) == 3
    message = capsys.readouterr().err
    assert "paused after epoch 1 of 2" in message and "--resume" in message and str(out / "fit-state.pt") in message
    assert not (out / "result.json").exists()
    assert cli.main(argv) == 0
    result = json.loads((out / "result.json").read_text())
    assert result["epochs_run"] == 2 and len(result["history"]) == 2
    with pytest.raises(InvalidNameError, match="without resume would stop the fit with nothing kept"):
        tgbhub.train("lstm", NAME, cache_dir=cache, device="cpu", out=tmp_path / "lost", time_limit=0)
    with pytest.raises(TrainingPaused):
        tgbhub.train("lstm", NAME, cache_dir=cache, device="cpu", epochs=3, limit_batches=2,
                     hparams={"hidden": 8}, out=tmp_path / "other", resume=True, time_limit=0, progress=False)
