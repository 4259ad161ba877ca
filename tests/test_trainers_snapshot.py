"""T-GRAB's temporal-graph trainers (tgbhub.trainers.snapshot: gclstm, tgn) on datasets built by the real generators.

Runs with tiny sizes and a capped number of training snapshots: what is checked is the protocol (predict before
observe, history carried into val/test, graded submissions, checkpoints, bit-reproducibility), not model quality.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_geometric")

import tgbhub  # noqa: E402
from tgbhub import api  # noqa: E402
from tgbhub.errors import IntegrityError, InvalidNameError, UnsupportedTaskError  # noqa: E402
from tgbhub.trainers import TrainConfig, load_checkpoint, make_trainer, save_checkpoint, trainers_for  # noqa: E402
from tgbhub.trainers.snapshot import training_negatives  # noqa: E402

PDET, CE = "t-grab/pdet-4-1", "t-grab/ce-1"
TINY = {"gclstm": {"channels": 8}, "tgn": {"memory_dim": 8, "time_dim": 8, "embedding_dim": 8}}
SMOKE = {"epochs": 2, "limit_batches": 12, "progress": False, "device": "cpu"}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def datasets(tmp_path_factory: pytest.TempPathFactory) -> dict:
    cache = tmp_path_factory.mktemp("cache")
    return {name: tgbhub.load_dataset(name, cache_dir=cache) for name in (PDET, CE)}


@pytest.fixture(scope="module")
def fitted(datasets: dict) -> dict:
    """Fits shared by the tests: ``(dataset, task, model, seed) -> (trainer, report)``, each made once."""
    made: dict = {}

    def fit(name: str, task_name: str, model: str, seed: int = 7, **settings):
        key = (name, task_name, model, seed, tuple(sorted(settings.items())))
        if key not in made:
            dataset = datasets[name]
            task = dataset.manifest.task_named(task_name)
            config = TrainConfig(seed=seed, hparams=TINY[model], **{**SMOKE, **settings})
            trainer = make_trainer(task, model, config)
            made[key] = trainer, trainer.fit(dataset, task)
        return made[key]

    return fit


def _grade(dataset, task_name: str, submission, split: str) -> dict:
    return api.get_evaluator(dataset, task_name).evaluate(submission, split=split)["metrics"]


def _scores(submission) -> np.ndarray:
    if "score" in submission:
        return np.asarray(submission["score"])
    flat = np.asarray(submission["neg_scores"].flatten())
    return np.concatenate([np.asarray(submission["pos_score"]), flat])


def test_registry_lists_both_models_for_both_task_types():
    for task_type in ("snapshot-link-prediction", "one-vs-many-ranking"):
        assert {"gclstm", "tgn"} <= set(trainers_for(task_type))


def test_importing_the_trainers_needs_neither_torch_nor_torch_geometric():
    code = ("import sys, tgbhub.trainers.snapshot as s; s.resolve_sizes('tgn', {}, 100); "
            "print(sorted(m for m in ('torch', 'torch_geometric') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("name,task_name,model", [
    (PDET, "snapshot-f1", "gclstm"), (PDET, "snapshot-f1", "tgn"),
    (PDET, "ranking", "gclstm"), (PDET, "ranking", "tgn"),
    (CE, "snapshot-f1", "gclstm"), (CE, "ranking", "gclstm"), (CE, "snapshot-f1", "tgn"),
])
def test_fit_predict_and_grade(datasets, fitted, name, task_name, model):
    dataset = datasets[name]
    # CE: 2,801 train snapshots of history to stream per epoch (TGN's memory, PyG's, is a Python loop per node and
    # snapshot: ~10 s of it on one core), so CE trains one epoch
    settings = {"epochs": 1} if name == CE else {}
    trainer, report = fitted(name, task_name, model, **settings)
    epochs = settings.get("epochs", SMOKE["epochs"])
    metric = "f1" if task_name == "snapshot-f1" else "mrr"
    assert report.epochs_run == epochs == len(report.history) and report.device == "cpu"
    assert report.best_val == max(h[f"val_{metric}"] for h in report.history)
    assert report.val_metric == metric and report.higher_is_better
    assert all(np.isfinite(h["train_loss"]) and h["train_loss"] > 0 for h in report.history)
    # the validation score fit selected by is what the evaluator gives predict("val"): the same history, streamed
    val = trainer.predict(dataset, dataset.manifest.task_named(task_name), "val")
    assert _grade(dataset, task_name, val, "val")[metric] == pytest.approx(report.best_val, rel=1e-9, abs=1e-12)
    test = trainer.predict(dataset, dataset.manifest.task_named(task_name), "test")
    scores = _scores(test)
    assert scores.dtype == np.float32 and ((scores >= 0) & (scores <= 1)).all()
    metrics = _grade(dataset, task_name, test, "test")
    assert all(np.isfinite(v) and 0 <= v <= 1 for v in metrics.values()) and metric in metrics
    assert trainer.hyperparameters()["model"] == {**trainer.hyperparameters()["model"], **TINY[model]}


def test_a_split_after_test_streams_through_test_first(datasets, fitted):
    dataset = datasets[CE]
    task = dataset.manifest.task_named("snapshot-f1")
    trainer, _ = fitted(CE, "snapshot-f1", "gclstm", epochs=1)
    submission = trainer.predict(dataset, task, "test_inductive")
    start, stop = dataset.snapshot_splits["test_inductive"]
    skip = task["skip_leading"]["test_inductive"]
    assert len(submission["t"]) == (stop - start - skip) * 2 * (dataset.num_nodes - 1)
    assert int(submission["t"].min()) == start + skip
    assert 0 <= _grade(dataset, "snapshot-f1", submission, "test_inductive")["f1"] <= 1


@pytest.mark.parametrize("model", ["gclstm", "tgn"])
def test_a_checkpoint_restores_identical_predictions(datasets, fitted, tmp_path, model):
    dataset = datasets[PDET]
    task = dataset.manifest.task_named("snapshot-f1")
    trainer, report = fitted(PDET, "snapshot-f1", model)
    expected = trainer.predict(dataset, task, "test")["score"]
    assert all(v.device.type == "cpu" for v in trainer.state()["weights"].values())
    path = save_checkpoint(tmp_path / "model.pt", trainer, config=trainer.config, dataset=dataset, task=task,
                           report=report)
    restored = load_checkpoint(path, dataset).trainer  # a fresh trainer, from torch.load(weights_only=True)
    assert np.array_equal(restored.predict(dataset, task, "test")["score"], expected)
    # going back to an earlier split and forward again resumes from the kept history states
    assert np.array_equal(restored.predict(dataset, task, "val")["score"],
                          trainer.predict(dataset, task, "val")["score"])
    assert np.array_equal(restored.predict(dataset, task, "test")["score"], expected)


@pytest.mark.parametrize("model", ["gclstm", "tgn"])
def test_same_seed_is_bit_identical_on_cpu_and_another_seed_is_not(datasets, fitted, model):
    dataset = datasets[PDET]
    task = dataset.manifest.task_named("snapshot-f1")
    torch.manual_seed(123)
    caller = torch.rand(3)
    torch.manual_seed(123)
    first = fitted(PDET, "snapshot-f1", model, seed=3, epochs=1)[0].predict(dataset, task, "test")["score"]
    assert torch.equal(torch.rand(3), caller)  # fit and predict leave the caller's RNG alone
    again = make_trainer(task, model, TrainConfig(seed=3, hparams=TINY[model], **{**SMOKE, "epochs": 1}))
    again.fit(dataset, task)
    other = fitted(PDET, "snapshot-f1", model, seed=4, epochs=1)[0].predict(dataset, task, "test")["score"]
    assert np.array_equal(again.predict(dataset, task, "test")["score"], first)
    assert not np.array_equal(other, first)


def test_the_protocol_defaults_and_overrides():
    task = {"type": "snapshot-link-prediction", "name": "snapshot-f1"}
    settings = make_trainer(task, "gclstm", TrainConfig()).hyperparameters()
    assert settings["model"] == {"channels": 128, "K": 2, "decoder_dropout": 0.2}
    assert (settings["lr"], settings["patience"], settings["epochs"]) == (1e-4, 100, 100_000)
    tgn = make_trainer(task, "tgn", TrainConfig(lr=1e-3, patience=5, epochs=3)).hyperparameters()
    assert (tgn["lr"], tgn["patience"], tgn["epochs"]) == (1e-3, 5, 3)
    assert {k: tgn["model"][k] for k in ("time_dim", "heads", "neighbors")} == {"time_dim": 100, "heads": 2,
                                                                                 "neighbors": 20}


def test_default_sizes_match_the_papers_model_sizes():
    from tgbhub.trainers.graph_models import SnapshotEdges, build
    from tgbhub.trainers.snapshot import resolve_sizes

    edges = SnapshotEdges([0], [1], [0], [0, 1], "cpu")

    def parameters(model: str) -> int:
        return sum(p.numel() for p in build(model, 100, resolve_sizes(model, {}, 100), edges).parameters())

    # T-GRAB's Table 6 (100 nodes): GC-LSTM 233k, TGN 207k (its periodicity TGN; ours has no DyGLib embedding)
    assert parameters("gclstm") == pytest.approx(233_000, rel=0.005)
    assert parameters("tgn") == pytest.approx(207_000, rel=0.03)


def test_wrong_settings_and_calls_say_what_to_do(datasets, fitted):
    dataset = datasets[PDET]
    task = dataset.manifest.task_named("snapshot-f1")
    with pytest.raises(InvalidNameError, match="no hyper-parameter 'layers'"):
        make_trainer(task, "gclstm", TrainConfig(hparams={"layers": 2})).hyperparameters()
    with pytest.raises(InvalidNameError, match="one snapshot per step"):
        make_trainer(task, "tgn", TrainConfig(batch_size=200)).hyperparameters()
    with pytest.raises(InvalidNameError, match="divisible by heads"):
        make_trainer(task, "tgn", TrainConfig(hparams={"embedding_dim": 9}, device="cpu")).fit(dataset, task)
    with pytest.raises(InvalidNameError, match="no weights yet"):
        make_trainer(task, "tgn", TrainConfig()).predict(dataset, task, "test")
    trainer = make_trainer(task, "gclstm", TrainConfig())
    with pytest.raises(UnsupportedTaskError, match="answers snapshot-link-prediction"):
        trainer.fit(dataset, dataset.manifest.task_named("ranking"))
    trained, _ = fitted(PDET, "snapshot-f1", "gclstm")
    with pytest.raises(IntegrityError, match="fitted on"):
        trained.predict(datasets[CE], datasets[CE].manifest.task_named("snapshot-f1"), "test")


def test_training_negatives_keep_the_source_and_miss_the_positives():
    torch.manual_seed(0)
    src = torch.arange(6).repeat_interleave(5)
    dst = (src + torch.arange(1, 6).repeat(6)) % 8  # each source links to 5 of 8 nodes: a clash is likely
    neg = training_negatives(torch, src, dst, 8)
    assert neg.shape == src.shape and bool(((neg >= 0) & (neg < 8)).all())
    assert not bool(torch.isin(src * 8 + neg, src * 8 + dst).any())


def test_the_split_message_store_equals_pygs():
    from torch_geometric.nn.models.tgn import IdentityMessage, LastAggregator, TGNMemory

    from tgbhub.trainers.graph_models import SplitStoreMemory

    torch.manual_seed(0)
    ours = SplitStoreMemory(10, 1, 4, 3, IdentityMessage(1, 4, 3), LastAggregator())
    theirs = TGNMemory(10, 1, 4, 3, IdentityMessage(1, 4, 3), LastAggregator())
    theirs.load_state_dict(ours.state_dict())
    generator = torch.Generator().manual_seed(1)
    for step, mode in enumerate([True, True, True, False, False]):
        ours.train(mode), theirs.train(mode)
        src, dst = torch.randint(0, 10, (2, 7), generator=generator)
        for memory in (ours, theirs):
            memory.update_state(src, dst, torch.full((7,), step), torch.ones(7, 1))
        assert torch.equal(ours(torch.arange(10))[0], theirs(torch.arange(10))[0])
        assert torch.equal(ours.memory, theirs.memory) and torch.equal(ours.last_update, theirs.last_update)


def test_the_fused_gc_lstm_convolution_equals_one_chebconv_per_gate():
    from torch_geometric.nn import ChebConv

    from tgbhub.trainers.graph_models import GCLSTMCell

    torch.manual_seed(0)
    cell = GCLSTMCell(num_nodes=6, channels=4, k=2)
    edge_index = torch.tensor([[0, 1, 1, 2, 3, 4], [1, 0, 2, 1, 4, 3]])
    h, c = torch.randn(6, 4), torch.randn(6, 4)
    gates = []
    for g in range(4):
        conv = ChebConv(4, 4, K=2)
        for k, lin in enumerate(conv.lins):
            lin.weight.data = cell.conv.lins[k].weight.data[g * 4:(g + 1) * 4].clone()
        conv.bias.data = cell.conv.bias.data[g * 4:(g + 1) * 4].clone()
        gates.append(cell.input_weight[:, g * 4:(g + 1) * 4] + conv(h, edge_index))
    i, f, g_, o = gates
    c_ref = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g_)
    h_new, c_new = cell(edge_index, h, c)
    torch.testing.assert_close(c_new, c_ref)
    torch.testing.assert_close(h_new, torch.sigmoid(o) * torch.tanh(c_ref))


def test_the_fit_says_how_long_early_stopping_takes(datasets, capsys, monkeypatch):
    """T-GRAB's 100,000 epochs are kept as published: the estimate says early stopping (patience) ends the run, and
    gives both the soonest stop and the upper bound."""
    from tgbhub.trainers import base

    clock = iter(range(0, 10**6, 10))  # every snapshot looks 10 s long
    monkeypatch.setattr(base, "clock", lambda: float(next(clock)))
    dataset = datasets[PDET]
    task = dataset.manifest.task_named("snapshot-f1")
    config = TrainConfig(hparams=TINY["gclstm"], **{**SMOKE, "epochs": None, "progress": True, "limit_batches": 5})
    trainer = make_trainer(task, "gclstm", config)
    trainer.hyperparameters()
    monkeypatch.setattr(trainer, "_train_epoch", _one_epoch_then_stop(trainer))
    trainer.fit(dataset, task)
    said = [line for line in capsys.readouterr().err.splitlines() if "per epoch" in line]
    assert len(said) == 1 and "(from 4 of 5 batches" in said[0]  # batch 1 untimed, then 3 more and 5 s
    assert "early stopping (patience 100) needs 101+ epochs" in said[0] and "at most 100000 epochs" in said[0]


def _one_epoch_then_stop(trainer):
    """The trainer's own train pass, once; the next epoch ends the fit (a NaN loss stops it) so the test stays short."""
    original = trainer._train_epoch
    calls = []

    def epoch(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs) if len(calls) == 1 else float("nan")

    return epoch


@pytest.mark.parametrize("model", ["gclstm", "tgn"])
def test_a_fit_paused_by_its_time_limit_goes_on_to_the_same_model(datasets, tmp_path, model):
    """--resume --time-limit on T-GRAB's protocol: three calls of one epoch each end where one uninterrupted fit ends,
    bit for bit (the negatives' draws come back with torch's generator state)."""
    dataset = datasets[PDET]
    task = dataset.manifest.task_named("snapshot-f1")

    def config(**extra) -> TrainConfig:
        return TrainConfig(seed=4, hparams=TINY[model], **{**SMOKE, "epochs": 3, "limit_batches": 6, **extra})

    whole = make_trainer(task, model, config())
    whole_report = whole.fit(dataset, task)
    state, reports = tmp_path / "fit-state.pt", []
    while not reports or not reports[-1].finished:
        trainer = make_trainer(task, model, config(state_file=str(state), time_limit=0))
        reports.append(trainer.fit(dataset, task))
        assert len(reports) <= 3
    report = reports[-1]
    assert [r.finished for r in reports] == [False, False, True] and report.resumed_at == 2
    assert [h["train_loss"] for h in report.history] == [h["train_loss"] for h in whole_report.history]
    assert (report.best_epoch, report.best_val, report.val_metric) == (whole_report.best_epoch,
                                                                       whole_report.best_val, whole_report.val_metric)
    resumed, uninterrupted = trainer.predict(dataset, task, "test"), whole.predict(dataset, task, "test")
    assert np.array_equal(_scores(resumed), _scores(uninterrupted))
