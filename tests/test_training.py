"""tgbhub.train and `tgbhub train`: fit, predict, grade with the reference evaluator, write the run."""

from __future__ import annotations

import json
import shlex
import sys

import pyarrow.parquet as pq
import pytest

import tgbhub
from tgbhub import cli
from tgbhub.errors import InvalidNameError, MissingExtraError, UnsupportedTaskError
from tgbhub.training import RESULT_KEYS, default_out, task_for

NAME = "chaosnet/mini-k0.5-rho0.3-n8"
SMOKE = {"epochs": 1, "limit_batches": 3, "progress": False, "device": "cpu"}


def test_train_writes_checkpoint_submission_and_result(tmp_path):
    pytest.importorskip("torch")
    result = tgbhub.train("dlinear", NAME, seed=1, out=tmp_path / "run", cache_dir=tmp_path / "cache", **SMOKE)
    assert set(RESULT_KEYS) <= set(result) and result["task"] == "rollout" and result["split"] == "test"
    assert result["epochs_run"] == 1 and result["device"] == "cpu" and result["seed"] == 1
    assert {"vpt", "test_mse"} <= set(result["metrics"])
    files = result["files"]
    written = json.loads((tmp_path / "run" / "result.json").read_text())
    assert written["metrics"] == pytest.approx(result["metrics"]) and written["files"] == files
    regraded = tgbhub.get_evaluator(tgbhub.load_dataset(NAME, cache_dir=tmp_path / "cache")).evaluate(
        files["submission"], split="test")
    assert regraded["metrics"]["vpt"] == result["metrics"]["vpt"]  # the file holds what was graded
    assert pq.read_schema(files["submission"]).names == ["ic", "t", "values"]


def test_cli_prints_the_documented_json(tmp_path, capsys):
    pytest.importorskip("torch")
    code = cli.main(["--cache-dir", str(tmp_path / "cache"), "train", "dlinear", NAME, "--seed", "2", "--device",
                     "cpu", "--epochs", "1", "--limit-batches", "2", "--out", str(tmp_path / "run"), "--json"])
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    assert list(printed) == list(RESULT_KEYS) and printed["model"] == "dlinear" and printed["seed"] == 2
    assert (tmp_path / "run" / "model.pt").is_file()


def test_cli_refuses_a_malformed_hparam(tmp_path, capsys):
    code = cli.main(["--cache-dir", str(tmp_path), "train", "dlinear", NAME, "--hparam", "nonsense"])
    assert code != 0 and "KEY=VALUE" in capsys.readouterr().err


def test_task_is_the_first_the_model_trains_for(tmp_path):
    ranking_first = tgbhub.resolve("t-grab/pdet-4-1")
    assert task_for(tgbhub.resolve(NAME), "lstm")["type"] == "rollout-forecasting"
    with pytest.raises(UnsupportedTaskError, match="snapshot-link-prediction: gclstm.*'lstm' trains for "
                                                   "rollout-forecasting tasks"):
        task_for(ranking_first, "lstm")
    assert default_out("tcn", "chaosnet/k0.5-rho0.3-n8", 7).name == "train-tcn-chaosnet-k0.5-rho0.3-n8-s7"


def test_without_torch_the_error_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(MissingExtraError, match=r"pip install -e '\.\[train\]'"):
        tgbhub.train("dlinear", NAME, out=tmp_path / "run", cache_dir=tmp_path / "cache", **SMOKE)


def test_bad_device_is_refused_before_any_work(tmp_path):
    with pytest.raises(InvalidNameError, match="device 'gpu'"):
        tgbhub.train("dlinear", NAME, device="gpu", cache_dir=tmp_path / "cache", progress=False)


#: one tiny run per trainer family and task type: (model, dataset, task, hparams)
REGRADE_RUNS = [("dlinear", NAME, "rollout", {}),
                ("gclstm", "t-grab/pdet-4-1", "snapshot-f1", {"channels": 8}),
                ("gclstm", "t-grab/pdet-4-1", "ranking", {"channels": 8})]


@pytest.fixture(scope="module")
def shared_train_cache(tmp_path_factory: pytest.TempPathFactory):
    return tmp_path_factory.mktemp("train-cache")


@pytest.mark.parametrize(("model", "name", "task", "hparams"), REGRADE_RUNS, ids=[r[2] for r in REGRADE_RUNS])
def test_the_printed_regrade_command_prints_what_the_run_printed(tmp_path, capsys, shared_train_cache, model, name,
                                                                 task, hparams):
    torch = pytest.importorskip("torch")
    if model == "gclstm":
        pytest.importorskip("torch_geometric")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny models: a second OpenMP thread only waits on a shared 2-core machine
    try:
        code = cli.main(["--cache-dir", str(shared_train_cache), "train", model, name, "--task", task, "--seed", "3",
                         "--device", "cpu", "--epochs", "1", "--limit-batches", "3", "--out", str(tmp_path / "run"),
                         *[f"--hparam={k}={v}" for k, v in hparams.items()]])
    finally:
        torch.set_num_threads(threads)
    trained = capsys.readouterr().out.splitlines()
    assert code == 0
    command = json.loads((tmp_path / "run" / "result.json").read_text())["regrade"]
    assert f"   regrade: {command}" in trained
    argv = shlex.split(command)
    assert argv[0] == "tgbhub" and "evaluate" in argv

    assert cli.main(argv[1:]) == 0
    regraded = capsys.readouterr().out.splitlines()
    # the run prints the evaluator's lines (plus the model's name), then its own facts (seed, device, files)
    assert [line for line in trained if not line.startswith("     model:")][:len(regraded)] == regraded
    if task == "rollout":  # the teacher-forced forecasts were written: the MSE and the screen are graded again
        assert any(line.startswith("  validity: test_mse") for line in regraded)

    assert cli.main([*argv[1:], "--json"]) == 0
    graded = json.loads(capsys.readouterr().out)
    written = json.loads((tmp_path / "run" / "result.json").read_text())
    assert graded["metrics"] == written["metrics"]  # exact: the same values, not approximately
    assert graded.get("validity_screen") == written.get("validity_screen")


class StepClock:
    """A clock that moves ``step`` seconds every time it is read: every batch looks ``step`` seconds long."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def _pace(epochs: int = 50, patience: int = 10, batches: int = 100, resumable: bool = True, **config):
    from tgbhub.trainers.base import EpochPace, FitReport, TrainConfig

    said: list[str] = []
    report = FitReport()
    pace = EpochPace("dlinear", TrainConfig(**config), epochs=epochs, patience=patience, batches=batches,
                     report=report, resumable=resumable, say=said.append)
    return pace, report, said


def test_the_estimate_leaves_out_the_first_batch_and_is_said_once(monkeypatch):
    from tgbhub.trainers import base

    times = iter([0.0, 10.0, 12.0, 14.0, 16.0, 18.0, 20.0, 22.0])  # a slow first batch (warm-up), then 2 s each
    monkeypatch.setattr(base, "clock", lambda: next(times))
    pace, report, said = _pace()
    for done in range(1, 6):  # after batch 1, three more and 5 s: batch 4 (6 s timed) says it
        pace.batch(0, done)
    assert len(said) == 1 and report.epoch_estimate is not None
    assert report.epoch_estimate["seconds_per_epoch"] == pytest.approx(16.0 + 2.0 * 96)  # 208 s, not 100 x 4 s
    assert said[0].startswith("dlinear: about 3 min 28 s per epoch of training (from 4 of 100 batches")
    assert "early stopping (patience 10) needs 11+ epochs, about 38 min" in said[0]
    assert "at most 50 epochs, 2 h 53 min" in said[0] and "--resume --time-limit 3600" in said[0]
    pace.batch(1, 1)  # later epochs say nothing
    assert len(said) == 1


def test_a_short_run_names_no_bound_and_a_model_that_cannot_pause_names_epochs(monkeypatch):
    from tgbhub.trainers import base

    monkeypatch.setattr(base, "clock", StepClock(0.01))
    pace, _, said = _pace(epochs=3, batches=5)
    for done in range(1, 6):
        pace.batch(0, done)
    assert said == ["dlinear: about 0.1 s per epoch of training (from 5 of 5 batches; validation adds to it); 3 "
                    "epochs, about 0.2 s"]
    monkeypatch.setattr(base, "clock", StepClock(600.0))
    pace, _, said = _pace(epochs=100_000, patience=100, batches=2, resumable=False)
    pace.batch(0, 1)
    pace.batch(0, 2)
    assert "needs 101+ epochs" in said[0] and "at most 100000 epochs" in said[0] and "years" in said[0]
    assert "--epochs N or --patience N" in said[0] and "cannot pause and resume" in said[0]
    _, _, said = _pace(progress=False)[0:3]
    assert said == []


@pytest.mark.parametrize("quiet", [False, True], ids=["says", "quiet"])
def test_train_says_the_estimate_once_on_stderr_and_names_the_time_limit(tmp_path, capsys, monkeypatch, quiet):
    """A real tiny run whose batches a fake clock makes last 1000 s each: one notice, with the bound to set."""
    pytest.importorskip("torch")
    from tgbhub.trainers import base

    monkeypatch.setattr(base, "clock", StepClock(1000.0))
    code = cli.main(["--cache-dir", str(tmp_path / "cache"), *(["--quiet"] if quiet else []), "train", "dlinear",
                     NAME, "--device", "cpu", "--epochs", "2", "--limit-batches", "4", "--out", str(tmp_path / "run")])
    assert code == 0
    said = [line for line in capsys.readouterr().err.splitlines() if "per epoch" in line]
    if quiet:
        assert said == []
        return
    assert len(said) == 1 and said[0].startswith("tgbhub: notice: dlinear: about ")
    assert "(from 4 of 4 batches" in said[0] and "2 epochs, about" in said[0]
    assert "--resume --time-limit 3600" in said[0]


def test_train_help_documents_the_time_limit_the_defaults_and_the_estimate(capsys):
    from tgbhub.trainers import chaosnet, events, snapshot

    with pytest.raises(SystemExit):
        cli.main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--time-limit SECONDS with --resume, e.g. --resume --time-limit 3600" in text
    assert "tgbhub train dlinear chaosnet/k0.5-rho0.3-n8 --resume --time-limit 3600" in text
    # the numbers the help states are the protocols' own
    for protocol in (chaosnet.PROTOCOL, events.PROTOCOL):
        assert f"at most {protocol['epochs']} epochs; stops after {protocol['patience']} without" in text
    assert f"at most {snapshot.PROTOCOL['epochs']} epochs" in text
    assert f"stops after {snapshot.PROTOCOL['patience']} without a lower train loss" in text
    assert "a notice on stderr estimates the time per epoch" in text
