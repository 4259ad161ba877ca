"""TGN and GraphMixer on continuous time by TGB's protocol (tgbhub.trainers.events), on a tiny tgbl-wiki release in
TGB's format, imported into a temporary cache: batches of events, one-vs-many ranking against the task's own negatives,
early stopping on val MRR, records that verify, bit-reproducibility, and batched evaluation equal to TGB's per-query
loop.
"""

from __future__ import annotations

import json
import types

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_geometric")

import tgbhub  # noqa: E402
from tests import tgb_formats as formats  # noqa: E402
from tgbhub import api, cli  # noqa: E402
from tgbhub.errors import IntegrityError, InvalidNameError, UnsupportedTaskError  # noqa: E402
from tgbhub.local.imports import import_tgb  # noqa: E402
from tgbhub.trainers import TrainConfig, load_checkpoint, make_trainer, save_checkpoint  # noqa: E402
from tgbhub.trainers.events import (  # noqa: E402
    EventTrainer,
    GraphMixerTrainer,
    TGNRankingTrainer,
    batch_grid,
    query_rows,
)
from tgbhub.trainers.snapshot import SnapshotTrainer  # noqa: E402

NAME = "tgb/tgbl-wiki"
TINY = {"memory_dim": 8, "time_dim": 8, "embedding_dim": 8}
MIXER = {"neighbors": 5, "time_dim": 8, "embedding_dim": 8, "node_dim": 8, "time_gap": 100, "layers": 1}
SMOKE = {"epochs": 2, "progress": False, "device": "cpu"}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory):
    """A 1,000-event tgbl-wiki release (4 edge features, about 60 negatives a query), imported into a fresh cache."""
    folder = tmp_path_factory.mktemp("tgbl")
    files = formats.write_tgbl(folder / "files", "tgbl-wiki", n_edges=1000, seed=0, feat_dim=4)
    zipped = formats.zip_dataset(files, folder / "zips")
    truth = files.truth
    shifted = truth["dst"] + truth["src"].max() + 1  # py-tgb's ids: items after users
    stats = {"num_nodes": int(len(np.union1d(truth["src"], shifted))), "num_edges": len(truth["src"]),
             "edge_feat_dim": 4}
    import_tgb("tgbl-wiki", zipped, cache_dir=folder / "cache", expected_stats=stats)
    return folder / "cache"


@pytest.fixture(scope="module")
def wiki(cache):
    return tgbhub.load_dataset(NAME, cache_dir=cache, offline=True)


@pytest.fixture(scope="module")
def fitted(wiki) -> dict:
    """Fits shared by the tests: ``(seed, settings) -> (trainer, report)``, each made once."""
    made: dict = {}

    def fit(seed: int = 7, **settings):
        key = (seed, tuple(sorted(settings.items())))
        if key not in made:
            task = wiki.manifest.task_named("ranking")
            trainer = make_trainer(task, "tgn", TrainConfig(seed=seed, hparams=TINY, **{**SMOKE, **settings}),
                                   dataset=wiki)
            made[key] = trainer, trainer.fit(wiki, task)
        return made[key]

    return fit


def _grade(dataset, submission, split: str) -> dict:
    return api.get_evaluator(dataset, "ranking").evaluate(submission, split=split)["metrics"]


def _flat(submission) -> np.ndarray:
    return np.concatenate([np.asarray(submission["pos_score"]), np.asarray(submission["neg_scores"].flatten())])


def test_tgn_on_a_ranking_task_takes_the_protocol_of_the_datasets_time(wiki, tmp_path):
    task = wiki.manifest.task_named("ranking")
    bound = make_trainer(task, "tgn", TrainConfig(), dataset=wiki)
    assert isinstance(bound, TGNRankingTrainer) and isinstance(bound.protocol, EventTrainer)
    settings = bound.hyperparameters()
    assert settings["model"] == {"memory_dim": 100, "time_dim": 100, "embedding_dim": 100, "heads": 2,
                                 "neighbors": 10, "dropout": 0.1}  # TGB's tgn.py
    assert (settings["lr"], settings["epochs"], settings["patience"], settings["batch_size"]) == (1e-4, 50, 5, 200)
    pdet = tgbhub.load_dataset("t-grab/pdet-4-1", cache_dir=tmp_path)
    snapshots = make_trainer(pdet.manifest.task_named("ranking"), "tgn", TrainConfig(), dataset=pdet)
    assert isinstance(snapshots.protocol, SnapshotTrainer)  # T-GRAB's protocol on a dataset with snapshots
    with pytest.raises(UnsupportedTaskError, match="has snapshots"):
        EventTrainer(TrainConfig(device="cpu")).fit(pdet, pdet.manifest.task_named("ranking"))


def test_the_batches_start_at_every_split(wiki):
    grid = batch_grid(wiki, 200)
    assert grid == [0, 200, 400, 600, 700, 850, 1000]  # train 0..700, val 700..850, test 850..1000
    assert batch_grid(wiki, 1000) == [0, 700, 850, 1000]


def test_fit_predict_grade_and_restore(wiki, fitted, tmp_path):
    task = wiki.manifest.task_named("ranking")
    trainer, report = fitted()
    assert report.epochs_run == 2 == len(report.history) and report.device == "cpu"
    assert report.val_metric == "mrr" and report.higher_is_better
    assert report.best_val == max(h["val_mrr"] for h in report.history)
    assert all(np.isfinite(h["train_loss"]) and h["train_loss"] > 0 for h in report.history)
    # the score fit selected by is what the evaluator gives predict("val"): the best epoch's history, streamed again
    val = trainer.predict(wiki, task, "val")
    assert _grade(wiki, val, "val")["mrr"] == pytest.approx(report.best_val, rel=1e-9, abs=1e-12)
    test = trainer.predict(wiki, task, "test")
    assert len(test["query"]) == len(wiki.negatives("test"))
    metrics = _grade(wiki, test, "test")
    assert all(np.isfinite(v) and 0 <= v <= 1 for v in metrics.values())
    path = save_checkpoint(tmp_path / "model.pt", trainer, config=trainer.config, dataset=wiki, task=task,
                           report=report)
    restored = load_checkpoint(path, wiki).trainer
    assert np.array_equal(_flat(restored.predict(wiki, task, "test")), _flat(test))
    assert np.array_equal(_flat(restored.predict(wiki, task, "val")), _flat(val))  # back to an earlier split


def test_same_seed_is_bit_identical_on_cpu_and_another_seed_is_not(wiki, fitted):
    task = wiki.manifest.task_named("ranking")
    torch.manual_seed(123)
    caller = torch.rand(3)
    torch.manual_seed(123)
    first_trainer, first_report = fitted(seed=3, epochs=1)
    first = _flat(first_trainer.predict(wiki, task, "test"))
    assert torch.equal(torch.rand(3), caller)  # fit and predict leave the caller's RNG alone
    again = make_trainer(task, "tgn", TrainConfig(seed=3, hparams=TINY, **{**SMOKE, "epochs": 1}), dataset=wiki)
    report = again.fit(wiki, task)
    assert [h["train_loss"] for h in report.history] == [h["train_loss"] for h in first_report.history]
    assert np.array_equal(_flat(again.predict(wiki, task, "test")), first)
    other, _ = fitted(seed=4, epochs=1)
    assert not np.array_equal(_flat(other.predict(wiki, task, "test")), first)


def test_a_batch_of_queries_scores_as_tgbs_loop_over_single_queries(wiki, fitted):
    trainer, _ = fitted()
    protocol = trainer.protocol
    module = protocol.module
    start = wiki.splits["test"][0]
    protocol._seek(start)
    negatives = wiki.negatives("test")
    first = np.flatnonzero(query_rows(wiki, negatives, *wiki.splits["test"]) < start + 200)  # the first batch
    src = torch.as_tensor(np.asarray(negatives.src, dtype=np.int64)[first])
    dst = torch.as_tensor(np.asarray(negatives.dst, dtype=np.int64)[first])
    matrix = np.asarray(negatives.negatives)[first]
    neg, valid = torch.as_tensor(np.maximum(matrix, 0).astype(np.int64)), torch.as_tensor(matrix >= 0)
    times = torch.as_tensor(np.asarray(negatives.t, dtype=np.int64)[first])
    with torch.no_grad():
        pos, negs = module.query_logits(src, dst, neg, valid, times)
        for i in range(len(first)):  # TGB's test loop: one query, its own subgraph, at a time
            count = int(negatives.count[first[i]])
            query_src = src[i].repeat(1 + count)
            query_dst = torch.cat([dst[i:i + 1], neg[i, :count]])
            z, assoc = module.embed(torch.unique(torch.cat([query_src, query_dst])))
            alone = module.decoder(z[assoc[query_src]], z[assoc[query_dst]])
            torch.testing.assert_close(alone[0], pos[i], rtol=1e-5, atol=1e-6)
            torch.testing.assert_close(alone[1:], negs[i, :count], rtol=1e-5, atol=1e-6)
    submitted = trainer.predict(wiki, wiki.manifest.task_named("ranking"), "test")
    assert np.array_equal(np.asarray(submitted["pos_score"])[first], pos.numpy())


def test_queries_find_the_first_row_of_their_edge():
    rows = types.SimpleNamespace(t=np.array([5, 7, 7, 7, 9]), src=np.array([0, 1, 1, 2, 0]),
                                 dst=np.array([3, 4, 4, 3, 4]), num_nodes=5, name="x", version="1")

    def negatives(t, src, dst):
        return types.SimpleNamespace(t=np.array(t), src=np.array(src), dst=np.array(dst), file="neg", split="val")

    # one query per row, in row order: the rows themselves
    assert query_rows(rows, negatives([7, 7], [1, 2], [4, 3]), 2, 4).tolist() == [2, 3]
    # a repeated edge has one query (TGB's key); queries in any order
    assert query_rows(rows, negatives([9, 7, 7], [0, 2, 1], [4, 3, 4]), 1, 5).tolist() == [4, 3, 1]
    with pytest.raises(IntegrityError, match="first query 0"):
        query_rows(rows, negatives([8], [0], [4]), 1, 5)


def test_tgn_learns_above_random_and_above_its_untrained_self(wiki):
    task = wiki.manifest.task_named("ranking")
    sizes = {"memory_dim": 16, "time_dim": 16, "embedding_dim": 16}

    def run(lr: float, epochs: int) -> tuple[float, float]:
        config = TrainConfig(seed=1, hparams=sizes, lr=lr, batch_size=50, epochs=epochs, patience=epochs,
                             progress=False, device="cpu")
        trainer = make_trainer(task, "tgn", config, dataset=wiki)
        report = trainer.fit(wiki, task)
        return report.best_val, _grade(wiki, trainer.predict(wiki, task, "test"), "test")["mrr"]

    count = np.asarray(wiki.negatives("val").count)
    # random scores: the positive's rank is uniform over 1..count+1, E[1/rank] = H(count+1)/(count+1) (about 0.08)
    random_mrr = float(np.mean([np.sum(1.0 / np.arange(1, c + 2)) / (c + 1) for c in count]))
    val, test = run(3e-2, 16)  # TGB's loss squashes its sigmoid scores again: a tiny model needs more steps
    untrained_val, untrained_test = run(1e-7, 1)  # the same initial weights, barely moved
    assert val > 1.5 * random_mrr and val > untrained_val
    assert test > 1.5 * random_mrr and test > untrained_test


def test_wrong_settings_and_calls_say_what_to_do(wiki):
    task = wiki.manifest.task_named("ranking")
    with pytest.raises(InvalidNameError, match="divisible by heads"):
        make_trainer(task, "tgn", TrainConfig(hparams={"embedding_dim": 9}), dataset=wiki).hyperparameters()
    with pytest.raises(InvalidNameError, match="no hyper-parameter 'channels'"):
        make_trainer(task, "tgn", TrainConfig(hparams={"channels": 9}), dataset=wiki).hyperparameters()
    with pytest.raises(InvalidNameError, match="compile or amp"):
        make_trainer(task, "tgn", TrainConfig(amp=True), dataset=wiki).hyperparameters()
    with pytest.raises(InvalidNameError, match="no weights yet"):
        make_trainer(task, "tgn", TrainConfig(), dataset=wiki).predict(wiki, task, "test")
    with pytest.raises(UnsupportedTaskError, match="continuous time"):
        make_trainer(task, "gclstm", TrainConfig(device="cpu")).fit(wiki, task)


def test_train_and_the_cli_write_a_record_that_verifies(cache, tmp_path, capsys):
    result = tgbhub.train("tgn", NAME, seed=5, cache_dir=cache, out=tmp_path / "api", hparams=TINY, **SMOKE)
    assert result["task"] == "ranking" and result["split"] == "test" and result["epochs_run"] == 2
    assert result["hyperparameters"]["protocol"] == "tgb events" and "mrr" in result["metrics"]
    written = json.loads((tmp_path / "api" / "result.json").read_text())
    assert written["metrics"] == result["metrics"] and (tmp_path / "api" / "model.pt").is_file()

    out, record = tmp_path / "cli", tmp_path / "record.json"
    code = cli.main(["--offline", "--cache-dir", str(cache), "train", "tgn", NAME, "--seed", "5", "--device", "cpu",
                     "--epochs", "2", "--out", str(out), "--record", str(record), "--json",
                     *[f"--hparam={k}={v}" for k, v in TINY.items()]])
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["metrics"] == result["metrics"]  # the same seed through the API and the command line
    assert cli.main(["--offline", "--cache-dir", str(cache), "verify-result", str(record),
                     str(out / "submission.parquet")]) == 0
    assert cli.main(["--offline", "--cache-dir", str(cache), "train", "tgn", NAME, "--batch-size", "0"]) != 0


def test_the_fit_says_its_estimate_once_and_keeps_it_in_the_report(wiki, capsys, monkeypatch):
    """The shared loop (tgbhub.trainers.history) times the first epoch's batches: one notice, and as tgn can pause and
    resume, the bound it names is --resume --time-limit."""
    from tgbhub.trainers import base

    clock = iter(range(0, 10**6, 900))  # every batch looks 15 minutes long
    monkeypatch.setattr(base, "clock", lambda: float(next(clock)))
    task = wiki.manifest.task_named("ranking")
    trainer = make_trainer(task, "tgn", TrainConfig(hparams=TINY, **{**SMOKE, "progress": True}), dataset=wiki)
    report = trainer.fit(wiki, task)
    said = [line for line in capsys.readouterr().err.splitlines() if "per epoch" in line]
    assert len(said) == 1 and said[0].startswith("tgbhub: notice: tgn: about ")
    assert "early stopping (patience 5) needs" not in said[0]  # 2 epochs: fewer than patience + 1
    assert "--resume --time-limit 3600 (exit 3 when paused; run the same command again to go on)" in said[0]
    assert report.epoch_estimate is not None and report.epoch_estimate["seconds_per_epoch"] > 600


# --- GraphMixer: the same protocol, another network ---------------------------------------------------------------

def test_graphmixer_takes_tgms_settings_and_refuses_what_it_cannot_train(wiki):
    task = wiki.manifest.task_named("ranking")
    trainer = make_trainer(task, "graphmixer", TrainConfig(), dataset=wiki)
    assert isinstance(trainer, GraphMixerTrainer)
    settings = trainer.hyperparameters()
    assert settings["model"] == {"neighbors": 20, "time_dim": 100, "embedding_dim": 128, "node_dim": 100,
                                 "time_gap": 2000, "layers": 2, "dropout": 0.1}  # TGM's graphmixer.py
    assert (settings["lr"], settings["epochs"], settings["patience"], settings["batch_size"]) == (2e-4, 50, 5, 200)
    with pytest.raises(InvalidNameError, match="no hyper-parameter 'memory_dim'"):
        make_trainer(task, "graphmixer", TrainConfig(hparams={"memory_dim": 8})).hyperparameters()
    snapshots = types.SimpleNamespace(snapshot_splits={"train": (0, 3)}, name="t-grab/x", version="1.0.0")
    with pytest.raises(UnsupportedTaskError, match="graphmixer trains by TGB's event protocol.*train tgn"):
        trainer._check(snapshots, task)


@pytest.fixture(scope="module")
def mixed(wiki):
    task = wiki.manifest.task_named("ranking")
    trainer = make_trainer(task, "graphmixer", TrainConfig(seed=2, hparams=MIXER, **SMOKE), dataset=wiki)
    return trainer, trainer.fit(wiki, task)


def test_graphmixer_fits_predicts_grades_and_restores(wiki, mixed, tmp_path):
    task = wiki.manifest.task_named("ranking")
    trainer, report = mixed
    assert report.epochs_run == 2 and report.best_val == max(h["val_mrr"] for h in report.history)
    assert all(h["train_seconds"] > 0 and h["val_seconds"] > 0 for h in report.history)
    val = trainer.predict(wiki, task, "val")
    assert _grade(wiki, val, "val")["mrr"] == pytest.approx(report.best_val, rel=1e-9, abs=1e-12)
    test = trainer.predict(wiki, task, "test")
    path = save_checkpoint(tmp_path / "mixer.pt", trainer, config=trainer.config, dataset=wiki, task=task,
                           report=report)
    restored = load_checkpoint(path, wiki).trainer
    assert np.array_equal(_flat(restored.predict(wiki, task, "test")), _flat(test))
    again = make_trainer(task, "graphmixer", TrainConfig(seed=2, hparams=MIXER, **SMOKE), dataset=wiki)
    assert [h["train_loss"] for h in again.fit(wiki, task).history] == [h["train_loss"] for h in report.history]


def test_graphmixer_scores_a_batch_of_queries_as_one_query_at_a_time(wiki, mixed):
    """Each node is embedded at its query's time from the history before the batch, negatives included: a whole
    batch at once gives what a per-query loop gives."""
    trainer, _ = mixed
    module = trainer.module
    start = wiki.splits["test"][0]
    trainer._seek(start)
    negatives = wiki.negatives("test")
    first = np.flatnonzero(query_rows(wiki, negatives, *wiki.splits["test"]) < start + 200)
    src = torch.as_tensor(np.asarray(negatives.src, dtype=np.int64)[first])
    dst = torch.as_tensor(np.asarray(negatives.dst, dtype=np.int64)[first])
    times = torch.as_tensor(np.asarray(negatives.t, dtype=np.int64)[first])
    matrix = np.asarray(negatives.negatives)[first]
    neg, valid = torch.as_tensor(np.maximum(matrix, 0).astype(np.int64)), torch.as_tensor(matrix >= 0)
    with torch.no_grad():
        pos, negs = module.query_logits(src, dst, neg, valid, times)
        for i in range(0, len(first), 17):
            count = int(negatives.count[first[i]])
            nodes = torch.cat([src[i:i + 1], dst[i:i + 1], neg[i, :count]])
            z = module.embed_at(nodes, times[i].repeat(nodes.numel()))
            alone = module.decoder(z[:1].expand(count + 1, -1), z[1:])
            torch.testing.assert_close(alone[0], pos[i], rtol=1e-5, atol=1e-6)
            torch.testing.assert_close(alone[1:], negs[i, :count], rtol=1e-5, atol=1e-6)
        # a node's embedding depends on the query time: the same node later is another vector
        later = module.embed_at(src[:1].repeat(2), torch.stack([times[0], times[0] + 10_000]))
        assert not torch.equal(later[0], later[1])


def test_graphmixer_learns_above_random(wiki):
    task = wiki.manifest.task_named("ranking")
    config = TrainConfig(seed=1, hparams=MIXER, lr=1e-2, batch_size=50, epochs=6, patience=6, progress=False,
                         device="cpu")
    trainer = make_trainer(task, "graphmixer", config, dataset=wiki)
    report = trainer.fit(wiki, task)
    count = np.asarray(wiki.negatives("val").count)
    random_mrr = float(np.mean([np.sum(1.0 / np.arange(1, c + 2)) / (c + 1) for c in count]))
    assert report.best_val > 1.5 * random_mrr
    assert _grade(wiki, trainer.predict(wiki, task, "test"), "test")["mrr"] > 1.5 * random_mrr


def test_graphmixer_trains_from_the_command_line_with_a_record_that_verifies(cache, tmp_path):
    out, record = tmp_path / "cli", tmp_path / "record.json"
    code = cli.main(["--offline", "--cache-dir", str(cache), "train", "graphmixer", NAME, "--seed", "3", "--device",
                     "cpu", "--epochs", "1", "--out", str(out), "--record", str(record),
                     *[f"--hparam={k}={v}" for k, v in MIXER.items()]])
    assert code == 0
    assert json.loads(record.read_text())["model"]["name"] == "graphmixer"
    assert cli.main(["--offline", "--cache-dir", str(cache), "verify-result", str(record),
                     str(out / "submission.parquet")]) == 0


@pytest.mark.parametrize("model, sizes", [("tgn", TINY), ("graphmixer", MIXER)])
def test_a_fit_paused_by_its_time_limit_goes_on_to_the_same_model(wiki, tmp_path, model, sizes):
    """With a state file and a time limit (--resume --time-limit), a fit pauses at epoch boundaries and a later call
    goes on where it stopped: three calls of one epoch each end where one uninterrupted fit ends, bit for bit."""
    task = wiki.manifest.task_named("ranking")

    def config(**extra) -> TrainConfig:
        return TrainConfig(seed=5, hparams=sizes, epochs=3, patience=3, progress=False, device="cpu", **extra)

    whole = make_trainer(task, model, config(), dataset=wiki)
    whole_report = whole.fit(wiki, task)
    state, reports = tmp_path / "fit-state.pt", []
    while not reports or not reports[-1].finished:
        trainer = make_trainer(task, model, config(state_file=str(state), time_limit=0), dataset=wiki)
        reports.append(trainer.fit(wiki, task))
        assert len(reports) <= 3
    assert [r.finished for r in reports] == [False, False, True] and reports[-1].resumed_at == 2
    report = reports[-1]
    assert [h["train_loss"] for h in report.history] == [h["train_loss"] for h in whole_report.history]
    assert [h["val_mrr"] for h in report.history] == [h["val_mrr"] for h in whole_report.history]
    assert (report.best_epoch, report.best_val) == (whole_report.best_epoch, whole_report.best_val)
    assert np.array_equal(_flat(trainer.predict(wiki, task, "test")), _flat(whole.predict(wiki, task, "test")))
    # a finished state is not trained again: the next call restores the best epoch
    again = make_trainer(task, model, config(state_file=str(state)), dataset=wiki)
    assert again.fit(wiki, task).epochs_run == 3
    assert np.array_equal(_flat(again.predict(wiki, task, "test")), _flat(whole.predict(wiki, task, "test")))


def test_tgns_memory_takes_each_nodes_latest_message_and_none_for_a_node_without():
    """TGB's LastAggregator (torch_scatter's scatter_max): per node the message with the latest time, the first of
    equal times, zeros where a node has none; PyG's pure-torch fallback gives such a node another node's message."""
    from tgbhub.trainers.graph_models import LatestMessage

    generator = torch.Generator().manual_seed(0)
    for _ in range(50):
        nodes = int(torch.randint(1, 20, (1,), generator=generator))
        count = int(torch.randint(0, 40, (1,), generator=generator))
        index = torch.randint(0, nodes, (count,), generator=generator)
        t = torch.randint(0, 4, (count,), generator=generator)
        msg = torch.randn(count, 3, generator=generator)
        expected = torch.zeros(nodes, 3)
        for node in range(nodes):
            mine = [i for i in range(count) if int(index[i]) == node]
            if mine:
                latest = max(int(t[i]) for i in mine)
                expected[node] = msg[next(i for i in mine if int(t[i]) == latest)]
        assert torch.equal(LatestMessage()(msg, index, t, nodes), expected)
