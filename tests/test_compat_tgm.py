"""TGM (tgm-lib 0.1.0b1) on tgbhub's cache: ``ds.to_tgm()`` is a ``DGData`` holding the dataset's rows, declared
features and labels, split as TGB splits it; ``tgbhub.compat.tgm``'s hook hands out the negatives py-tgb's own sampler
hands out, read from the dataset's arrays; and TGM's EdgeBank link-prediction loop (its examples/linkproppred
protocol: score each batch edge against its negatives, then update the model) graded by py-tgb's Evaluator and by the
bundled evaluator on the same scores gives one MRR. Releases are small ones in TGB's formats (tests/tgb_formats.py),
imported as ``tgbhub import tgb`` imports them."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tgbhub
from tests import tgb_formats as formats
from tests.test_pyg import flight_release, import_release, trade_release
from tgbhub.compat.tgm import _query_index, link_hooks, negatives_hook
from tgbhub.data import Negatives, TemporalGraphDataset
from tgbhub.errors import IntegrityError, MissingExtraError, UnsupportedTaskError

torch = pytest.importorskip("torch")
tgm = pytest.importorskip("tgm")
pytest.importorskip("tgb.linkproppred.evaluate")

from tgm import DGraph  # noqa: E402
from tgm.data import DGDataLoader  # noqa: E402
from tgm.nn import EdgeBankPredictor  # noqa: E402

NAME = "tgbl-wiki"
SPLITS = ("train", "val", "test")
#: TGM's own examples, carried as test data (tests/tgm_examples: upstream's files with their data lines marked)
EXAMPLES = Path(__file__).resolve().parent / "tgm_examples"
#: sha256 of edgebank.py's lines that are TGM's (its 5-line header and the lines marked "# tgbhub:" left out): the
#: upstream file at v0.1.0b1 without its DGData.from_tgb and TGBNegativeEdgeSamplerHook lines
EDGEBANK_UPSTREAM = "b03bb59b8f1c71b932e190ed5da02de21b92e4fe745b6dfdcbe119b6782ed3ff"


@dataclasses.dataclass(frozen=True)
class Wiki:
    ds: TemporalGraphDataset
    pytgb: Any
    cache: Path


@pytest.fixture(scope="module")
def wiki(tmp_path_factory: pytest.TempPathFactory) -> Wiki:
    """A small tgbl-wiki (172-d edge features, hist_rnd negatives), py-tgb's load of it and tgbhub's import."""
    folder = tmp_path_factory.mktemp("wiki")
    files = formats.write_tgbl(folder / formats.dir_name(NAME), NAME, n_edges=600, seed=0)
    pytgb = formats.load_with_pytgb(files)
    data = pytgb.full_data
    stats = {"num_nodes": int(len(np.union1d(data["sources"], data["destinations"]))),
             "num_edges": int(len(data["sources"]))}
    return Wiki(import_release(files, folder, stats), pytgb, folder / "cache")


def _edges(data: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(src, dst, t)`` of a DGData's edge events."""
    index = data.edge_index.numpy()
    return index[:, 0], index[:, 1], data.time[data.edge_mask].numpy()


def test_dgdata_holds_the_rows_in_tgbs_splits(wiki: Wiki) -> None:
    ds = wiki.ds
    data = ds.to_tgm()
    assert str(data.time_delta.unit) == "s"  # the manifest's time_unit: second
    src, dst, t = _edges(data)
    assert np.array_equal(src, ds.src) and np.array_equal(dst, ds.dst) and np.array_equal(t, ds.t)
    assert np.array_equal(data.edge_x.numpy(), ds.columns["edge_feat"].astype(np.float32))
    for name, part in zip(SPLITS, data.split(), strict=True):
        lo, hi = ds.splits[name]
        src, dst, t = _edges(part)
        assert len(src) == hi - lo > 0, name
        assert np.array_equal(src, ds.src[lo:hi]) and np.array_equal(dst, ds.dst[lo:hi]), name
        assert np.array_equal(t, ds.t[lo:hi]), name


def test_declared_node_features_and_labels_reach_tgm(tmp_path: Path) -> None:
    flight = flight_release(tmp_path / "flight")
    declared = flight.manifest.graph["node_feat"]
    data = flight.to_tgm(time_delta="s")  # tgbl-flight's time_unit is its granularity; its timestamps are seconds
    nodes = flight.artifact(declared["file"])[declared["column"]]
    assert np.array_equal(data.static_node_x.numpy(), nodes.astype(np.float32))
    assert data.edge_x.shape == (flight.num_rows, 16) and str(data.time_delta.unit) == "s"
    trade = trade_release(tmp_path / "trade")
    rows, labels = trade.manifest.task["labels"]["rows"], trade.node_labels()
    assert labels is not None and str(trade.to_tgm().time_delta.unit) == "Y"
    whole = trade.to_tgm()
    assert np.array_equal(whole.node_y_nids.numpy(), labels["node"]) and np.array_equal(_edges(whole)[0], trade.src)
    # TGM hands a split the labels of [first edge time - 1, last edge time): the ones the task grades there (its
    # split re-sorts the events of a timestamp, so rows are compared in (t, node) order)
    for name, part in zip(SPLITS, whole.split(), strict=True):
        lo, hi = rows[name]
        t, node = part.time[part.node_y_mask].numpy(), part.node_y_nids.numpy()
        order = np.lexsort((node, t))
        assert part.node_y.shape == (hi - lo, trade.manifest.graph["num_classes"]), name
        assert np.array_equal(t[order], labels["t"][lo:hi]) and np.array_equal(node[order], labels["node"][lo:hi])
        assert np.array_equal(part.node_y.numpy()[order], labels["label"][lo:hi].astype(np.float32)), name


def test_the_hook_hands_out_pytgbs_negatives(wiki: Wiki) -> None:
    ds, sampler = wiki.ds, wiki.pytgb.negative_sampler
    hooks = link_hooks(ds)
    _, val, test = ds.to_tgm().split()
    for name, part in (("val", val), ("test", test)):
        seen = 0
        with hooks.activate(name):
            for batch in DGDataLoader(DGraph(part), 64, hook_manager=hooks):
                expected = sampler.query_batch(batch.edge_src, batch.edge_dst, batch.edge_time, split_mode=name)
                assert [n.tolist() for n in batch.neg_batch_list] == [list(map(int, e)) for e in expected]
                assert batch.neg_batch_list[0].dtype == torch.int32
                assert set(batch.neg.tolist()) == set(np.concatenate(expected).astype(int).tolist())
                assert len(batch.neg_time) == len(batch.neg)
                assert int(batch.neg_time.min()) >= int(batch.edge_time.min())
                assert int(batch.neg_time.max()) <= int(batch.edge_time.max())
                seen += len(batch.edge_src)
        assert seen == len(ds.negatives(name)) > 0


def _edgebank_scores(ds: TemporalGraphDataset) -> dict[str, list[tuple[float, np.ndarray]]]:
    """TGM's EdgeBank on the train rows, then val and test in turn, as TGM's edgebank example runs it: each batch
    edge scored against its negatives, then the batch added to the bank."""
    train, val, test = ds.to_tgm().split()
    bank = DGraph(train).materialize(materialize_features=False)
    model = EdgeBankPredictor(bank.edge_src, bank.edge_dst, bank.edge_time, memory_mode="unlimited",
                              window_ratio=0.15, pos_prob=1.0)
    hooks = link_hooks(ds)
    scores: dict[str, list[tuple[float, np.ndarray]]] = {}
    for name, part in (("val", val), ("test", test)):
        scores[name] = []
        with hooks.activate(name):
            for batch in DGDataLoader(DGraph(part), 50, hook_manager=hooks):
                for i, negatives in enumerate(batch.neg_batch_list):
                    src = batch.edge_src[i].repeat(len(negatives) + 1)
                    dst = torch.cat([batch.edge_dst[i].unsqueeze(0), negatives])
                    predicted = model(src, dst).numpy().astype(np.float64)
                    scores[name].append((float(predicted[0]), predicted[1:]))
                model.update(batch.edge_src, batch.edge_dst, batch.edge_time)
    return scores


def test_edgebank_mrr_is_the_bundled_evaluators_and_pytgbs(wiki: Wiki) -> None:
    from tgb.linkproppred.evaluate import Evaluator

    ds, evaluator = wiki.ds, Evaluator(name=NAME)
    for name, scored in _edgebank_scores(ds).items():
        theirs = np.array([evaluator.eval({"y_pred_pos": np.array([pos]), "y_pred_neg": neg,
                                           "eval_metric": ["mrr"]})["mrr"] for pos, neg in scored], dtype=np.float64)
        # the k-th edge the loop scored is query k of the split
        submission = {"query": np.arange(len(scored)), "pos_score": np.array([pos for pos, _ in scored]),
                      "neg_scores": [neg for _, neg in scored]}
        ours = ds.evaluator.evaluate(submission, split=name, detail=True)
        assert ours["num_queries"] == len(scored) == len(ds.negatives(name))
        ranks = np.asarray(ours["per_query"]["rank"])
        # py-tgb reports float32 reciprocal ranks
        np.testing.assert_allclose(1.0 / ranks, theirs, rtol=1e-6)
        assert abs(ours["metrics"]["mrr"] - theirs.mean()) < 1e-6
        assert 0 < ours["metrics"]["mrr"] < 1 and len(np.unique(ranks)) > 1  # neither all first nor all tied


def test_what_tgm_cannot_hold_is_refused(shared_cache: Path) -> None:
    base = tgbhub.load_dataset("t-grab/ce-1", cache_dir=shared_cache)
    assert isinstance(base, TemporalGraphDataset)
    parts = base.to_tgm().split()  # snapshot splits never share a timestamp
    assert [int(p.edge_index.shape[0]) for p in parts] == [hi - lo for lo, hi in base.splits.values()][:3]
    assert str(base.to_tgm().time_delta.unit) == "r" and base.to_tgm().static_node_x.shape == (101, 101)
    # a symmetric graph ranks one direction of each undirected edge: not one query per batch edge
    with pytest.raises(UnsupportedTaskError, match="one to one"):
        negatives_hook(base, "test")
    variant = tgbhub.load_dataset("t-grab/ce-1~intense-k1-s0", cache_dir=shared_cache)
    assert isinstance(variant, TemporalGraphDataset)
    with pytest.raises(UnsupportedTaskError, match="non-negative integers"):
        variant.to_tgm()


def test_a_key_shared_by_queries_with_other_negatives_is_refused() -> None:
    ids = np.array([1, 1, 2], dtype=np.int32)
    table = np.array([[5, 6], [5, 6], [7, -1]], dtype=np.int32)
    same = Negatives("test", "negatives-test.parquet", np.array([3, 3, 4]), ids, ids + 10, table,
                     np.array([2, 2, 1], dtype=np.int32))
    assert _query_index(same, table.astype(np.int64), np.asarray(same.count)) == {(1, 11, 3): 0, (2, 12, 4): 2}
    other = dataclasses.replace(same, negatives=np.array([[5, 6], [5, 7], [7, -1]], dtype=np.int32))
    with pytest.raises(IntegrityError, match="queries 0 and 1"):
        _query_index(other, np.asarray(other.negatives).astype(np.int64), np.asarray(other.count))


def test_without_tgm_the_error_names_the_extra(wiki: Wiki, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "tgm" or m.startswith("tgm.")]:
        monkeypatch.setitem(sys.modules, name, None)  # a None entry makes `import` raise ModuleNotFoundError
    for call in (wiki.ds.to_tgm, lambda: link_hooks(wiki.ds)):
        with pytest.raises(MissingExtraError, match=r"pip install -e '\.\[tgm\]'"):
            call()


def test_tgms_own_edgebank_example_runs_on_tgbhubs_data(wiki: Wiki, tmp_path: Path) -> None:
    """TGM's examples/linkproppred/edgebank.py, unchanged but for where its data and negatives come from, runs end to
    end on tgbhub's cache (no py-tgb dataset anywhere) and prints the MRRs py-tgb's Evaluator gives EdgeBank's scores
    on the same data."""
    from tgb.linkproppred.evaluate import Evaluator

    script = EXAMPLES / "edgebank.py"
    ours = "".join(line for line in script.read_text().splitlines(keepends=True)[5:] if "# tgbhub:" not in line)
    assert hashlib.sha256(ours.encode()).hexdigest() == EDGEBANK_UPSTREAM  # still TGM's code
    log = tmp_path / "edgebank.log"
    env = {**os.environ, "TGBHUB_CACHE": str(wiki.cache), "TGBHUB_OFFLINE": "1", "TQDM_DISABLE": "1"}
    done = subprocess.run([sys.executable, str(script), "--dataset", NAME, "--bsize", "50", "--log-file-path",
                           str(log)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    entries = [json.loads(line[line.index('{"metric"'):]) for line in log.read_text().splitlines()
               if '{"metric"' in line]
    printed = {entry["metric"]: entry["value"] for entry in entries}
    evaluator = Evaluator(name=NAME)
    for name, scored in _edgebank_scores(wiki.ds).items():
        expected = np.mean([evaluator.eval({"y_pred_pos": np.array([pos]), "y_pred_neg": neg,
                                            "eval_metric": ["mrr"]})["mrr"] for pos, neg in scored])
        label = "Validation mrr" if name == "val" else "Test mrr"
        assert abs(printed[label] - expected) < 1e-6 and 0 < expected < 1, (name, printed)
