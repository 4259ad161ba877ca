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
