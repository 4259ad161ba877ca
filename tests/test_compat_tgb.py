"""tgbhub.compat.tgb: py-tgb 2.3.0's LinkPropPredDataset / NodePropPredDataset / Evaluator surface served from the
verified cache, checked against py-tgb itself on small releases in TGB's exact formats (tgbl, TGB 2.0's tkgl and thgl,
tgbn); TGB's EdgeBank examples (tgbl, and TGB 2.0's with relation types) and a persistent-forecast node loop run with
one import line changed and print the same metric."""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import io
import os
import pickle
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType, SimpleNamespace

import numpy as np
import pytest

import tgbhub
from tests import tgb_formats as formats
from tgbhub.compat.tgb import (Evaluator, LinkPropPredDataset, NodePropPredDataset, pytgb_full_data,
                               pytgb_node_data)
from tgbhub.errors import (DatasetNotFoundError, FetchError, InvalidNameError, ScoreError, SourceWarning,
                           UnsupportedTaskError)
from tgbhub.local.imports import import_tgb
from tgbhub.local.gateway import kept_release
from generators.tgb import catalogue

NAME = "tgbl-wiki"
SPLITS = ("val", "test")


@dataclasses.dataclass(frozen=True)
class Imported:
    """A small release in TGB's format: its files, py-tgb's own load of them, its zip and a cache it is imported in."""

    files: formats.FormatFiles
    pytgb: object
    zipped: Path
    cache: Path
    stats: dict


def _import(files: formats.FormatFiles, folder: Path) -> Imported:
    zipped = formats.zip_dataset(files, folder / "zips")
    pytgb = formats.load_with_pytgb(files)
    data = pytgb.full_data
    originals = len(data["sources"]) // (2 if files.name.startswith("tkgl-") else 1)  # py-tgb adds TKG inverses
    stats = {"num_nodes": int(len(np.union1d(data["sources"], data["destinations"]))), "num_edges": int(originals)}
    import_tgb(files.name, zipped, cache_dir=folder / "cache", expected_stats=stats)
    return Imported(files, pytgb, zipped, folder / "cache", stats)


def _shuffle_rows(edgelist: Path, seed: int) -> None:
    """Permute the CSV's data rows (the header stays first): py-tgb keeps CSV order, tgbhub stores time order."""
    header, *rows = edgelist.read_text().splitlines()
    order = np.random.default_rng(seed).permutation(len(rows))
    edgelist.write_text("\n".join([header, *(rows[i] for i in order)]) + "\n")


@pytest.fixture(scope="module")
def wiki(tmp_path_factory: pytest.TempPathFactory) -> Imported:
    """tgbl-wiki as written (time-ordered CSV, ragged negatives), in a folder named as py-tgb names it."""
    folder = tmp_path_factory.mktemp("wiki")
    return _import(formats.write_tgbl(folder / formats.dir_name(NAME), NAME, n_edges=1000, seed=0), folder)


@pytest.fixture(scope="module")
def shuffled_wiki(tmp_path_factory: pytest.TempPathFactory) -> Imported:
    """tgbl-wiki whose CSV rows are not in time order (as tgbl-coin and -flight were before their v2)."""
    folder = tmp_path_factory.mktemp("shuffled")
    files = formats.write_tgbl(folder / formats.dir_name(NAME), NAME, n_edges=800, seed=4)
    _shuffle_rows(files.files["edgelist"], seed=5)
    return _import(files, folder)


def _ours(release: Imported) -> LinkPropPredDataset:
    dataset = LinkPropPredDataset(name=NAME, root="ignored", preprocess=True, cache_dir=release.cache)
    dataset.load_val_ns()
    dataset.load_test_ns()
    return dataset


def _assert_same_full_data(ours: dict, theirs: dict) -> None:
    assert sorted(ours) == sorted(theirs)
    for key, expected in theirs.items():
        assert ours[key].dtype == expected.dtype and ours[key].shape == expected.shape, key
        assert np.array_equal(ours[key], expected), key


# --- the dataset: full_data, masks, metric, counts -------------------------------------------------------------------

@pytest.mark.parametrize("release_name", ["wiki", "shuffled_wiki"])
def test_full_data_masks_and_metric_equal_pytgbs(release_name: str, request: pytest.FixtureRequest) -> None:
    release = request.getfixturevalue(release_name)
    theirs, ours = release.pytgb, _ours(release)
    _assert_same_full_data(ours.full_data, theirs.full_data)
    if release_name == "shuffled_wiki":  # the CSV order py-tgb keeps is not time order: edge_id put it back
        assert (np.diff(theirs.full_data["timestamps"]) < 0).any()
    for mask in ("train_mask", "val_mask", "test_mask"):
        assert getattr(ours, mask).dtype == np.bool_ and np.array_equal(getattr(ours, mask), getattr(theirs, mask))
    assert ours.eval_metric == theirs.eval_metric == "mrr"
    assert (ours.num_nodes, ours.num_edges, ours.num_rels) == (theirs.num_nodes, theirs.num_edges, theirs.num_rels)
    assert (ours.min_dst_idx, ours.max_dst_idx) == (theirs.min_dst_idx, theirs.max_dst_idx)
    assert np.array_equal(ours.edge_feat, theirs.edge_feat)
    assert ours.node_feat is theirs.node_feat is None and ours.edge_type is theirs.edge_type is None
    assert ours.node_type is theirs.node_type is None
    assert ours.negative_sampler is ours.ns_sampler
    assert Path(ours.root).is_dir() and Path(ours.root).is_relative_to(release.cache)


def _text_id_release(folder: Path, name: str, seed: int) -> formats.FormatFiles:
    """A small tgbl-coin / tgbl-comment release: text ids (py-tgb renumbers them by first appearance), and negatives
    keyed by py-tgb's processed ids."""
    rng = np.random.default_rng(seed)
    people = [f"0x{i:03x}" for i in range(25)]
    times = np.sort(rng.integers(1_600_000_000, 1_600_050_000, 300))
    if name == "tgbl-coin":
        header = ["time", "src", "dst", "weight"]
        rows = [[int(t), people[rng.integers(25)], people[rng.integers(25)], float(rng.choice([0.0, 2.5, 800.0]))]
                for t in times]
    else:
        header = ["ts", "src", "dst", "num_words", "score"]
        rows = [[int(t), people[rng.integers(25)], people[rng.integers(25)], int(rng.integers(0, 900)),
                 int(rng.integers(-5, 50))] for t in times]
    folder.mkdir(parents=True)
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows([header, *rows])
    paths = {"edgelist": folder / formats.edgelist_name(name)}
    paths["edgelist"].write_text(buffer.getvalue())
    ids: dict[str, int] = {}
    for row in rows:
        ids.setdefault(row[1], len(ids))
        ids.setdefault(row[2], len(ids))
    val_time, test_time = np.quantile(times, [0.70, 0.85])
    for split, inside in (("val", (times > val_time) & (times <= test_time)), ("test", times > test_time)):
        table = {(np.int64(ids[r[1]]), np.int64(ids[r[2]]), np.int64(r[0])): rng.choice(len(ids), 7, replace=False)
                 for r, keep in zip(rows, inside) if keep}
        paths[f"{split}_ns"] = folder / formats.ns_name(name, split)
        paths[f"{split}_ns"].write_bytes(pickle.dumps(table, protocol=pickle.HIGHEST_PROTOCOL))
    return formats.FormatFiles(name, folder, paths, {})


@pytest.mark.parametrize("name", ["tgbl-coin", "tgbl-comment"])
def test_other_parsers_full_data_equal_pytgbs(name: str, tmp_path: Path) -> None:
    """py-tgb's CSV parsers give float64 edge_idxs from 1 and w = a feature column; ours reproduce that."""
    release = _import(_text_id_release(tmp_path / formats.dir_name(name), name, seed=2), tmp_path)
    ours = LinkPropPredDataset(name, cache_dir=release.cache)
    _assert_same_full_data(ours.full_data, release.pytgb.full_data)
    assert ours.full_data["edge_idxs"][0] == 1.0 and not (ours.full_data["w"] == 1).all()
    for mask in ("train_mask", "val_mask", "test_mask"):
        assert np.array_equal(getattr(ours, mask), getattr(release.pytgb, mask))
    ours.load_test_ns()
    data, test = release.pytgb.full_data, release.pytgb.test_mask
    keys = [data[column][test] for column in ("sources", "destinations", "timestamps")]
    assert ours.negative_sampler.query_batch(*keys) == release.pytgb.negative_sampler.query_batch(*keys)


@pytest.fixture(scope="module")
def flight(tmp_path_factory: pytest.TempPathFactory) -> Imported:
    """tgbl-flight's v2 release (OpenSky edges, airport node features), in a folder named as py-tgb names it."""
    folder = tmp_path_factory.mktemp("flight")
    return _import(formats.write_flight(folder / formats.dir_name("tgbl-flight")), folder)


def test_flight_full_data_node_feat_and_negatives_equal_pytgbs(flight: Imported) -> None:
    """tgbl-flight: py-tgb's csv_to_pd_data view (float64 edge_idxs from 1, w = 1, 16 encoded characters) and its
    airport ``node_feat`` (same values, shape and dtype), read from the imported files."""
    theirs, ours = flight.pytgb, LinkPropPredDataset("tgbl-flight", cache_dir=flight.cache)
    _assert_same_full_data(ours.full_data, theirs.full_data)
    for mask in ("train_mask", "val_mask", "test_mask"):
        assert np.array_equal(getattr(ours, mask), getattr(theirs, mask))
    assert theirs.node_feat is not None and theirs.node_feat.any()
    assert ours.node_feat.dtype == theirs.node_feat.dtype == np.float64
    assert ours.node_feat.shape == theirs.node_feat.shape == (ours.num_nodes, 20)
    assert np.array_equal(ours.node_feat, theirs.node_feat)
    assert ours.node_type is theirs.node_type is None and ours.edge_type is theirs.edge_type is None
    assert (ours.num_nodes, ours.num_edges, ours.num_rels) == (theirs.num_nodes, theirs.num_edges, theirs.num_rels)
    data = theirs.full_data
    for split in SPLITS:
        getattr(ours, f"load_{split}_ns")()
        mask = getattr(theirs, f"{split}_mask")
        keys = [data[column][mask] for column in ("sources", "destinations", "timestamps")]
        assert ours.negative_sampler.query_batch(*keys, split_mode=split) == \
            theirs.negative_sampler.query_batch(*keys, split_mode=split)


# --- the negative sampler ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("release_name", ["wiki", "shuffled_wiki"])
def test_query_batch_equals_pytgbs_for_every_val_and_test_edge(release_name: str,
                                                               request: pytest.FixtureRequest) -> None:
    torch = pytest.importorskip("torch")
    release = request.getfixturevalue(release_name)
    theirs, ours = release.pytgb, _ours(release)
    data = theirs.full_data
    for split in SPLITS:
        mask = getattr(theirs, f"{split}_mask")
        keys = [data[column][mask] for column in ("sources", "destinations", "timestamps")]
        expected = theirs.negative_sampler.query_batch(*keys, split_mode=split)
        got = ours.negative_sampler.query_batch(*keys, split_mode=split)
        assert got == expected and len(got) == int(mask.sum())
        assert all(type(v) is int for v in got[0])  # py-tgb's type: lists of Python ints
        permuted = np.random.default_rng(0).permutation(len(expected))  # any order, torch tensors, small batches
        for lo in range(0, len(permuted), 37):
            batch = permuted[lo:lo + 37]
            tensors = [torch.from_numpy(column[batch]) for column in keys]
            assert ours.negative_sampler.query_batch(*tensors, split_mode=split) == [expected[i] for i in batch]
        negatives, count = ours.negative_sampler.query_batch_padded(*keys, split_mode=split)
        assert count.tolist() == [len(row) for row in expected] and (negatives[:, :count.min()] >= 0).all()
    assert release_name != "wiki" or len({len(row) for row in expected}) > 1  # ragged, as the real tgbl-wiki


def test_query_batch_refuses_what_pytgb_refuses(wiki: Imported) -> None:
    theirs, ours = wiki.pytgb, LinkPropPredDataset(NAME, cache_dir=wiki.cache)
    data, test = theirs.full_data, theirs.test_mask
    src, dst, t = (data[column][test][:5] for column in ("sources", "destinations", "timestamps"))
    with pytest.raises(ValueError, match="load the test evaluation set first"):
        ours.negative_sampler.query_batch(src, dst, t, split_mode="test")
    ours.load_test_ns()
    assert ours.negative_sampler.query_batch(src, dst, t.astype(np.float64)) == \
        theirs.negative_sampler.query_batch(src, dst, t.astype(np.float64))  # 36.0 finds the key of 36 in both
    absent = (src, dst, t + 1) if not np.isin(t + 1, t).any() else (src, dst + 10_000, t)
    for sampler in (theirs.negative_sampler, ours.negative_sampler):
        with pytest.raises(ValueError, match="not in the 'test' evaluation set"):
            sampler.query_batch(*absent, split_mode="test")
    with pytest.raises(ValueError, match="not in the 'test' evaluation set"):
        ours.negative_sampler.query_batch(src, dst, t + 0.5)
    with pytest.raises(ValueError, match="not in the 'val' evaluation set|load the val"):
        ours.negative_sampler.query_batch(src, dst, t, split_mode="val")
    with pytest.raises(ValueError, match="5, 4 and 5 entries"):
        ours.negative_sampler.query_batch(src, dst[:4], t)
    with pytest.raises(ValueError, match="without an edge type"):
        ours.negative_sampler.query_batch(src, dst, t, edge_type=np.zeros(5, dtype=np.int64))
    with pytest.raises(ValueError, match="'val' or 'test'"):
        ours.negative_sampler.query_batch(src, dst, t, split_mode="train")
    with pytest.raises(UnsupportedTaskError, match="load_test_ns"):
        ours.negative_sampler.load_eval_set(str(wiki.files.files["test_ns"]), split_mode="test")
    ours.negative_sampler.reset_eval_set("test")
    with pytest.raises(ValueError, match="load the test evaluation set first"):
        ours.negative_sampler.query_batch(src, dst, t)


# --- the evaluator ---------------------------------------------------------------------------------------------------

def test_evaluator_equals_pytgbs_on_scores_with_ties() -> None:
    torch = pytest.importorskip("torch")
    from tgb.linkproppred.evaluate import Evaluator as PytgbEvaluator

    rng = np.random.default_rng(7)
    pos = rng.integers(0, 5, 400).astype(np.float32)  # few distinct values: ties everywhere
    neg = rng.integers(0, 5, (400, 60)).astype(np.float32)
    for k in (10, 3):
        request = {"y_pred_pos": pos, "y_pred_neg": neg, "eval_metric": ["mrr"]}
        theirs = PytgbEvaluator(name=NAME, k_value=k).eval(request)
        ours = Evaluator(name=NAME, k_value=k).eval(request)
        assert list(ours) == list(theirs) == [f"hits@{k}", "mrr"]
        for metric in theirs:  # py-tgb's float32 arithmetic, bit for bit, and its numpy float32 scalars
            assert type(ours[metric]) is type(theirs[metric]) is np.float32
            assert ours[metric] == theirs[metric]
    evaluator = Evaluator(name=NAME)
    per_query = [evaluator.eval({"y_pred_pos": pos[i:i + 1], "y_pred_neg": neg[i], "eval_metric": ["mrr"]})["mrr"]
                 for i in range(len(pos))]  # TGB's examples: one positive, its negatives as (Q,)
    batched = evaluator.eval({"y_pred_pos": torch.from_numpy(pos)[:, None], "y_pred_neg": torch.from_numpy(neg),
                              "eval_metric": ["hits@", "mrr"]})
    assert float(np.mean(per_query)) == pytest.approx(float(batched["mrr"]), abs=1e-6)  # float32 means
    constant = evaluator.eval({"y_pred_pos": np.zeros(2), "y_pred_neg": np.zeros((2, 999)), "eval_metric": ["mrr"]})
    assert constant["mrr"] == pytest.approx(1 / 500.5)  # a constant scorer gets the middle rank


def test_evaluator_refuses_nan_and_broadcast_shapes_where_pytgb_scores_them() -> None:
    from tgb.linkproppred.evaluate import Evaluator as PytgbEvaluator

    theirs, ours = PytgbEvaluator(name=NAME), Evaluator(name=NAME)
    nan_positive = {"y_pred_pos": np.array([np.nan, 0.2]), "y_pred_neg": np.array([[0.5, 0.9], [0.1, 0.3]]),
                    "eval_metric": ["mrr"]}
    assert float(theirs.eval({**nan_positive, "y_pred_pos": nan_positive["y_pred_pos"][:1],
                              "y_pred_neg": nan_positive["y_pred_neg"][:1]})["mrr"]) == 1.0
    with pytest.raises(ScoreError, match="query 0 has a NaN"):
        ours.eval(nan_positive)
    with pytest.raises(ScoreError, match="NaN or infinite"):
        ours.eval({**nan_positive, "y_pred_pos": np.array([0.1, 0.2]),
                   "y_pred_neg": np.array([[0.5, np.inf], [0.1, 0.3]])})
    broadcast = {"y_pred_pos": np.array([0.1, 0.5, 0.9]), "y_pred_neg": np.array([0.2, 0.6, 0.4]),
                 "eval_metric": ["mrr"]}
    assert 0 < float(theirs.eval(broadcast)["mrr"]) < 1  # py-tgb: a 3x3 comparison, no error
    with pytest.raises(ScoreError, match="expected \\(B,\\) and \\(B, Q\\)"):
        ours.eval(broadcast)
    with pytest.raises(ScoreError, match="expected"):
        ours.eval({**broadcast, "y_pred_neg": np.zeros((2, 5))})
    with pytest.raises(ScoreError, match="eval_metric"):
        ours.eval({"y_pred_pos": np.zeros(1), "y_pred_neg": np.zeros((1, 3))})
    with pytest.raises(ScoreError, match="unsupported eval_metric"):
        ours.eval({**broadcast, "eval_metric": ["auc"]})
    with pytest.raises(ScoreError, match="dtype"):
        ours.eval({"y_pred_pos": np.array(["a"]), "y_pred_neg": np.array([["b"]]), "eval_metric": ["mrr"]})
    with pytest.raises(ScoreError, match="k_value"):
        Evaluator(name=NAME, k_value=0)


# --- TGB's EdgeBank example, one import line changed ----------------------------------------------------------------

PYTGB_IMPORTS = ("from tgb.linkproppred.evaluate import Evaluator\n"
                 "from tgb.linkproppred.dataset import LinkPropPredDataset\n")
TGBHUB_IMPORTS = "from tgbhub.compat.tgb import LinkPropPredDataset, Evaluator\n"

# A shortened copy of TGB's examples/linkproppred/tgbl-wiki/edgebank.py: argument parsing, timing, tqdm and result
# files removed, EdgeBank (unlimited memory) inlined as a set of seen (src, dst) pairs; the data loading, masks,
# memory updates after each batch, query_batch and the per-edge Evaluator.eval calls are the example's.
EDGEBANK_EXAMPLE = '''\
import math
import numpy as np

{imports}
DATA = "tgbl-wiki"
BATCH_SIZE = 200


class EdgeBankPredictor:
    def __init__(self, history_src, history_dst):
        self.memory = set(zip(history_src.tolist(), history_dst.tolist()))

    def update_memory(self, src, dst):
        self.memory.update(zip(src.tolist(), dst.tolist()))

    def predict_link(self, query_src, query_dst):
        return np.array([1.0 if (s, d) in self.memory else 0.0 for s, d in zip(query_src.tolist(),
                                                                                 query_dst.tolist())])


def test(data, test_mask, neg_sampler, split_mode):
    num_batches = math.ceil(len(data["sources"][test_mask]) / BATCH_SIZE)
    perf_list = []
    for batch_idx in range(num_batches):
        start_idx = batch_idx * BATCH_SIZE
        end_idx = min(start_idx + BATCH_SIZE, len(data["sources"][test_mask]))
        pos_src, pos_dst, pos_t = (
            data["sources"][test_mask][start_idx:end_idx],
            data["destinations"][test_mask][start_idx:end_idx],
            data["timestamps"][test_mask][start_idx:end_idx],
        )
        neg_batch_list = neg_sampler.query_batch(pos_src, pos_dst, pos_t, split_mode=split_mode)
        for idx, neg_batch in enumerate(neg_batch_list):
            query_src = np.array([int(pos_src[idx]) for _ in range(len(neg_batch) + 1)])
            query_dst = np.concatenate([np.array([int(pos_dst[idx])]), neg_batch])
            y_pred = edgebank.predict_link(query_src, query_dst)
            input_dict = {{
                "y_pred_pos": np.array([y_pred[0]]),
                "y_pred_neg": np.array(y_pred[1:]),
                "eval_metric": [metric],
            }}
            perf_list.append(evaluator.eval(input_dict)[metric])
        edgebank.update_memory(pos_src, pos_dst)
    return float(np.mean(perf_list))


dataset = LinkPropPredDataset(name=DATA, root={root!r}, preprocess=True)
data = dataset.full_data
metric = dataset.eval_metric
train_mask = dataset.train_mask
val_mask = dataset.val_mask
test_mask = dataset.test_mask
edgebank = EdgeBankPredictor(data["sources"][train_mask], data["destinations"][train_mask])
evaluator = Evaluator(name=DATA)
neg_sampler = dataset.negative_sampler

dataset.load_val_ns()
perf_metric_val = test(data, val_mask, neg_sampler, split_mode="val")
print(f"\\tval: {{metric}}: {{perf_metric_val: .4f}}")
dataset.load_test_ns()
perf_metric_test = test(data, test_mask, neg_sampler, split_mode="test")
print(f"\\tTest: {{metric}}: {{perf_metric_test: .4f}}")
print("exact", repr(perf_metric_val), repr(perf_metric_test))
'''


def _run_example(script: Path, cwd: Path, cache: Path) -> tuple[list[str], list[float], dict[str, bool]]:
    """Run ``script`` as a fresh process (tgbhub's cache from TGBHUB_CACHE, offline); its printed lines, exact
    values and which heavy packages it imported."""
    probe = (f"import runpy, sys; runpy.run_path({str(script)!r}, run_name='__main__'); "
             "print('imported', 'tgb' in sys.modules, 'torch' in sys.modules)")
    env = {**os.environ, "TGBHUB_CACHE": str(cache), "TGBHUB_OFFLINE": "1", "TGBHUB_NO_PROGRESS": "1"}
    done = subprocess.run([sys.executable, "-c", probe], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    exact = next(line for line in lines if line.startswith("exact")).split()[1:]
    imported = next(line for line in lines if line.startswith("imported")).split()[1:]
    printed = [line for line in lines if line.startswith("\t")]
    return printed, [float(x) for x in exact], {"tgb": imported[0] == "True", "torch": imported[1] == "True"}


def test_edgebank_example_prints_the_same_mrr_with_one_import_line_changed(wiki: Imported, tmp_path: Path) -> None:
    root, meta = formats.pytgb_root(wiki.files.folder, NAME)
    assert meta is None  # the example passes no meta_dict: the folder has py-tgb's name
    scripts = {}
    for label, imports in (("pytgb", PYTGB_IMPORTS), ("tgbhub", TGBHUB_IMPORTS)):
        scripts[label] = tmp_path / f"edgebank_{label}.py"
        scripts[label].write_text(EDGEBANK_EXAMPLE.format(imports=imports, root=root))
    changed = set(scripts["pytgb"].read_text().splitlines()) ^ set(scripts["tgbhub"].read_text().splitlines())
    assert changed == set((PYTGB_IMPORTS + TGBHUB_IMPORTS).splitlines())  # nothing but the import line differs
    theirs = _run_example(scripts["pytgb"], tmp_path, tmp_path / "unused-cache")
    ours = _run_example(scripts["tgbhub"], tmp_path, wiki.cache)
    assert ours[0] == theirs[0] and len(ours[0]) == 2 and "mrr" in ours[0][1]
    assert ours[1] == pytest.approx(theirs[1], abs=1e-6) and 0 < ours[1][1] < 1
    assert theirs[2]["tgb"] and not ours[2]["tgb"] and not ours[2]["torch"]  # ours needs neither py-tgb nor torch


def test_the_pyg_route_is_the_datasets_to_pyg(wiki: Imported) -> None:
    pytest.importorskip("torch_geometric")
    from torch_geometric.data import TemporalData

    ours = LinkPropPredDataset(NAME, cache_dir=wiki.cache)
    events = ours.tgbhub_dataset.to_pyg()
    assert isinstance(events, TemporalData)
    assert events.src.tolist() == ours.full_data["sources"].tolist()  # time-ordered release: the same rows
    assert events.msg.shape == ours.full_data["edge_feat"].shape
    assert np.array_equal(events.msg.numpy(), ours.full_data["edge_feat"].astype(np.float32))
    test = ours.tgbhub_dataset.to_pyg("test")
    lo, hi = ours.tgbhub_dataset.splits["test"]
    assert np.array_equal(test.msg.numpy(), ours.full_data["edge_feat"][lo:hi].astype(np.float32))


# --- loading: what is imported when, and what is refused -------------------------------------------------------------

def test_without_an_import_the_errors_say_what_to_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(FileNotFoundError, match="tgbhub import tgb/tgbl-wiki"):
        LinkPropPredDataset(NAME, download=False, cache_dir=tmp_path)
    monkeypatch.setenv("TGBHUB_OFFLINE", "1")
    with pytest.raises(FetchError, match=f"offline.*{catalogue.entry(NAME).url}"):  # download=True, nothing kept
        LinkPropPredDataset(NAME, cache_dir=tmp_path)


def test_download_true_imports_on_first_use_from_the_kept_zip(wiki: Imported, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    entry = dataclasses.replace(catalogue.CATALOGUE[NAME], stats=MappingProxyType(wiki.stats))
    monkeypatch.setattr(catalogue, "CATALOGUE", MappingProxyType({**catalogue.CATALOGUE, NAME: entry}))
    monkeypatch.setenv("TGBHUB_OFFLINE", "1")
    monkeypatch.setenv("TGBHUB_CACHE", str(tmp_path / "cache"))
    kept = kept_release(tmp_path / "cache", "tgb", wiki.zipped.name)
    kept.parent.mkdir(parents=True)
    shutil.copy(wiki.zipped, kept)
    ours = LinkPropPredDataset(name=NAME, root="datasets", preprocess=True)  # py-tgb's call, nothing added
    assert ours.tgbhub_dataset.source == "cache"
    _assert_same_full_data(ours.full_data, wiki.pytgb.full_data)
    assert tgbhub.load_dataset(f"tgb/{NAME}").digest == ours.tgbhub_dataset.digest


def test_names_outside_the_served_surface_are_refused_before_any_io(tmp_path: Path) -> None:
    with pytest.raises(DatasetNotFoundError, match="tgbl-wiki"):
        LinkPropPredDataset("tgbl-wikii", cache_dir=tmp_path)
    with pytest.raises(InvalidNameError, match="NodePropPredDataset"):
        LinkPropPredDataset("tgbn-trade", cache_dir=tmp_path)
    with pytest.raises(InvalidNameError, match="LinkPropPredDataset"):
        NodePropPredDataset("tgbl-wiki", cache_dir=tmp_path)
    for name in ("tkgl-smallpedia", "thgl-forum"):  # served now: not imported, download=False -> py-tgb's error
        with pytest.raises(FileNotFoundError, match=f"tgbhub import tgb/{name}"):
            LinkPropPredDataset(name, download=False, cache_dir=tmp_path)
    with pytest.raises(DatasetNotFoundError):
        Evaluator(name="tgbl-nope")
    assert Evaluator(name="tgbn-trade").valid_metric_list == ["ndcg"]
    assert Evaluator(name="thgl-forum").valid_metric_list == ["hits@", "mrr"]
    assert not list(tmp_path.iterdir())  # nothing downloaded, nothing written


def test_a_parser_whose_view_is_not_reproduced_is_refused() -> None:
    """A parser whose py-tgb view is not reproduced (one this tgbhub does not know, as a newer TGB may add) is refused
    with the way out, not approximated."""
    manifest = SimpleNamespace(stats={"source": {"parser": "csv_to_pd_data_v3"}}, split_unit="row")
    imported = SimpleNamespace(name="tgb/tgbl-flight", version="2.1.0", manifest=manifest)
    with pytest.raises(UnsupportedTaskError, match="'csv_to_pd_data_v3' parser.*tgbhub.load_dataset"):
        pytgb_full_data(imported)
    with pytest.raises(UnsupportedTaskError, match="load_edgelist_trade"):
        pytgb_node_data(imported)


def test_node_dataset_is_imported_on_first_use_from_the_kept_zip(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    name = "tgbn-trade"
    with pytest.raises(FileNotFoundError, match=f"tgbhub import tgb/{name}"):
        NodePropPredDataset(name, download=False, cache_dir=tmp_path / "cache")
    files = formats.write_tgbn(tmp_path / "files", name, n_edges=600, n_nations=40, n_years=4)
    kept = kept_release(tmp_path / "cache", "tgb", formats.zip_name(name))
    formats.zip_dataset(files, kept.parent)
    entry = dataclasses.replace(catalogue.CATALOGUE[name], stats=MappingProxyType({}), profile=MappingProxyType({}))
    monkeypatch.setattr(catalogue, "CATALOGUE", MappingProxyType({**catalogue.CATALOGUE, name: entry}))
    monkeypatch.setenv("TGBHUB_OFFLINE", "1")
    dataset = NodePropPredDataset(name, root="datasets", cache_dir=tmp_path / "cache")
    assert dataset.tgbhub_dataset.source == "cache" and Path(dataset.root).is_relative_to(tmp_path / "cache")
    assert (dataset.num_classes, dataset.eval_metric) == (255, "ndcg")  # py-tgb's DATA_NUM_CLASSES
    assert dataset.full_data["node_label_dict"] is dataset.node_label_dict is dataset.label_dict
    widths = {vector.shape for nodes in dataset.label_dict.values() for vector in nodes.values()}
    assert widths == {(40,)}  # py-tgb's label vectors: one entry per nation of the release, not num_classes


# --- TGB 2.0: tkgl and thgl -------------------------------------------------------------------------------------------

#: one small release per layout: Wikidata ids + static edges (1-vs-all), integer ids (1-vs-all), 1-vs-q TKG
#: negatives, node types, edge features
MULTI = ("tkgl-smallpedia", "tkgl-polecat", "tkgl-wikidata", "thgl-software", "thgl-forum")


@pytest.fixture(scope="module")
def multi(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Imported]:
    """``multi(name)``: a small release of ``name`` (one of :data:`MULTI`), imported once per module, in a folder
    named as py-tgb names it (so TGB's examples find it with no meta_dict)."""
    made: dict[str, Imported] = {}

    def release(name: str) -> Imported:
        if name not in made:
            folder = tmp_path_factory.mktemp(name)
            # wikidata's 1-vs-q negatives come from upstream's generator, whose short-pool fallback draws outside
            # the pool: the import must say so (tests/test_import_tkgl_thgl.py checks the counts)
            expected = (pytest.warns(SourceWarning, match="TGB's fallback") if name == "tkgl-wikidata"
                        else contextlib.nullcontext())
            with expected:
                made[name] = _import(formats.write(folder / formats.dir_name(name), name, n_edges=400, seed=1),
                                     folder)
        return made[name]

    return release


def _ours_multi(release: Imported) -> LinkPropPredDataset:
    dataset = LinkPropPredDataset(name=release.files.name, root="ignored", preprocess=True, cache_dir=release.cache)
    dataset.load_val_ns()
    dataset.load_test_ns()
    return dataset


def _split_keys(pytgb: object, split: str) -> list[np.ndarray]:
    """``sources, destinations, timestamps, edge_type`` of py-tgb's ``split`` edges: its queries, in its order."""
    mask = getattr(pytgb, f"{split}_mask")
    return [pytgb.full_data[column][mask] for column in ("sources", "destinations", "timestamps", "edge_type")]


@pytest.mark.parametrize("name", MULTI)
def test_multi_relational_full_data_and_attributes_equal_pytgbs(name: str, multi: Callable[[str], Imported]) -> None:
    release = multi(name)
    theirs, ours = release.pytgb, _ours_multi(release)
    assert list(ours.full_data) == list(theirs.full_data)  # edge_type last, as py-tgb adds it
    _assert_same_full_data(ours.full_data, theirs.full_data)
    data = theirs.full_data
    if name.startswith("tkgl-"):  # originals, then every inverse (dst, src, t, r + R): not in time order
        e, relations = len(data["sources"]) // 2, ours.num_rels // 2
        assert np.array_equal(data["sources"][e:], data["destinations"][:e])
        assert np.array_equal(data["destinations"][e:], data["sources"][:e])
        assert np.array_equal(data["timestamps"][e:], data["timestamps"][:e])
        assert np.array_equal(data["edge_type"][e:], data["edge_type"][:e] + relations)
        assert (np.diff(data["timestamps"]) < 0).any() and ours.edge_feat.shape == (e, 1)
        assert data["edge_idxs"][e] == e + 2  # py-tgb: idx + max(idx) + 1 on the inverses
    for mask in ("train_mask", "val_mask", "test_mask"):
        assert getattr(ours, mask).dtype == np.bool_ and np.array_equal(getattr(ours, mask), getattr(theirs, mask))
    for attribute in ("eval_metric", "num_nodes", "num_edges", "num_rels", "min_dst_idx", "max_dst_idx"):
        assert getattr(ours, attribute) == getattr(theirs, attribute), attribute
    assert ours.edge_type is ours.full_data["edge_type"] and np.array_equal(ours.edge_type, theirs.edge_type)
    assert ours.edge_feat is ours.full_data["edge_feat"] and ours.node_feat is theirs.node_feat is None
    if theirs.node_type is None:
        assert ours.node_type is None
    else:
        assert ours.node_type.dtype == theirs.node_type.dtype == np.float64
        assert np.array_equal(ours.node_type, theirs.node_type) and len(np.unique(ours.node_type)) > 1
    static = theirs.static_data
    if static is None:
        assert ours.static_data is None
    else:
        assert list(ours.static_data) == list(static) == ["head", "tail", "edge_type"]
        for column, values in static.items():
            assert ours.static_data[column].dtype == values.dtype and np.array_equal(ours.static_data[column], values)
    sampler = type(ours.negative_sampler).__name__
    assert sampler == type(theirs.negative_sampler).__name__ and ours.negative_sampler.strategy == \
        formats.PYTGB_NS_STRATEGY[name]


@pytest.mark.parametrize("name", MULTI)
def test_multi_relational_query_batch_equals_pytgbs_for_every_val_and_test_query(
        name: str, multi: Callable[[str], Imported]) -> None:
    torch = pytest.importorskip("torch")
    release = multi(name)
    theirs, ours = release.pytgb, _ours_multi(release)
    for split in SPLITS:
        keys = _split_keys(theirs, split)
        expected = theirs.negative_sampler.query_batch(*keys, split_mode=split)
        got = ours.negative_sampler.query_batch(*keys, split_mode=split)
        assert len(got) == len(expected) == int(getattr(theirs, f"{split}_mask").sum()) > 0
        for mine, reference in zip(got, expected):
            assert type(mine) is np.ndarray and mine.dtype == reference.dtype == np.int64
            assert np.array_equal(mine, reference)
        if formats.PYTGB_NS_STRATEGY[name] == "time-filtered":  # 1-vs-all: every node but the query's filter set
            assert {len(row) for row in got} != {theirs.num_nodes} and max(map(len, got)) < theirs.num_nodes
        permuted = np.random.default_rng(0).permutation(len(expected))  # any order, torch tensors, small batches
        for lo in range(0, len(permuted), 41):
            batch = permuted[lo:lo + 41]
            tensors = [torch.from_numpy(column[batch]) for column in keys]
            for mine, i in zip(ours.negative_sampler.query_batch(*tensors, split_mode=split), batch):
                assert np.array_equal(mine, expected[i])


def test_multi_relational_query_batch_refuses_what_pytgb_refuses(multi: Callable[[str], Imported]) -> None:
    for name in ("tkgl-smallpedia", "thgl-software"):
        release = multi(name)
        theirs, ours = release.pytgb, LinkPropPredDataset(name, cache_dir=release.cache)
        src, dst, t, rel = (column[:5] for column in _split_keys(theirs, "test"))
        with pytest.raises(ValueError, match="load the test evaluation set first"):
            ours.negative_sampler.query_batch(src, dst, t, rel, split_mode="test")
        ours.load_test_ns()
        floats = [ours.negative_sampler.query_batch(src, dst, t.astype(np.float64), rel),
                  theirs.negative_sampler.query_batch(src, dst, t.astype(np.float64), rel)]
        assert all(np.array_equal(a, b) for a, b in zip(*floats))  # 36.0 finds the key of 36 in both
        other = rel + 1000  # no such relation: py-tgb's error in both
        for sampler in (theirs.negative_sampler, ours.negative_sampler):
            with pytest.raises(ValueError, match="not in the 'test' evaluation set"):
                sampler.query_batch(src, dst, t, other, split_mode="test")
        assert ours.negative_sampler.query_batch(src, dst + 1, t, rel)[0].tolist() == \
            theirs.negative_sampler.query_batch(src, dst, t, rel)[0].tolist()  # dst is not part of the key
        with pytest.raises(ValueError, match="keyed by \\(t, src, edge_type\\)"):
            ours.negative_sampler.query_batch(src, dst, t)
        with pytest.raises(ValueError, match="5, 5, 5 and 4 entries"):
            ours.negative_sampler.query_batch(src, dst, t, rel[:4])
        with pytest.raises(ValueError, match="not in the 'test' evaluation set"):
            ours.negative_sampler.query_batch(src, dst, t + 0.5, rel)
        with pytest.raises(UnsupportedTaskError, match="load_test_ns"):
            ours.negative_sampler.load_eval_set(str(release.files.files["test_ns"]), split_mode="test")
        if name == "tkgl-smallpedia":
            with pytest.raises(ValueError, match="every node except a filter set"):
                ours.negative_sampler.query_batch_padded(src, dst, t, rel)
        else:
            negatives, count = ours.negative_sampler.query_batch_padded(src, dst, t, rel)
            assert negatives.dtype == np.int32 and count.tolist() == [20] * 5
            assert negatives.tolist() == [row.tolist() for row in theirs.negative_sampler.query_batch(src, dst, t, rel)]
        ours.negative_sampler.reset_eval_set("test")
        with pytest.raises(ValueError, match="load the test evaluation set first"):
            ours.negative_sampler.query_batch(src, dst, t, rel)


@pytest.mark.parametrize("name", ["tkgl-polecat", "thgl-forum"])
def test_evaluator_equals_pytgbs_on_multi_relational_negatives(name: str, multi: Callable[[str], Imported]) -> None:
    from tgb.linkproppred.evaluate import Evaluator as PytgbEvaluator

    release = multi(name)
    theirs, ours = release.pytgb, _ours_multi(release)
    keys = _split_keys(theirs, "test")
    negatives = ours.negative_sampler.query_batch(*keys, split_mode="test")
    rng = np.random.default_rng(5)
    scores = rng.integers(0, 4, (len(negatives), theirs.num_nodes)).astype(np.float32)  # ties everywhere
    per_query = {"theirs": [], "ours": []}
    for i, row in enumerate(negatives):
        request = {"y_pred_pos": scores[i, keys[1][i]:keys[1][i] + 1], "y_pred_neg": scores[i, row],
                   "eval_metric": ["mrr"]}
        per_query["theirs"].append(PytgbEvaluator(name=name).eval(request))
        per_query["ours"].append(Evaluator(name=name).eval(request))
    for metric in ("mrr", "hits@10"):
        assert np.mean([r[metric] for r in per_query["ours"]]) == pytest.approx(
            float(np.mean([r[metric] for r in per_query["theirs"]])), abs=1e-6)
    with pytest.raises(ScoreError, match="query 0 has a NaN"):
        Evaluator(name=name).eval({"y_pred_pos": np.array([np.nan]), "y_pred_neg": scores[0, negatives[0]],
                                   "eval_metric": ["mrr"]})


# TGB 2.0's EdgeBank example (examples/linkproppred/tkgl-polecat/edgebank.py, the same for thgl-*), shortened as
# EDGEBANK_EXAMPLE is: EdgeBank (unlimited memory) inlined; the masks, the batches over val and test, query_batch with
# the relation types, the memory update after each batch and the per-edge Evaluator.eval calls are the example's.
EDGEBANK_TGB2_EXAMPLE = '''\
import math
import numpy as np

{imports}
DATA = {name!r}
BATCH_SIZE = 200


class EdgeBankPredictor:
    def __init__(self, history_src, history_dst):
        self.memory = set(zip(history_src.tolist(), history_dst.tolist()))

    def update_memory(self, src, dst, ts):
        self.memory.update(zip(src.tolist(), dst.tolist()))

    def predict_link(self, query_src, query_dst):
        return np.array([1.0 if (s, d) in self.memory else 0.0 for s, d in zip(query_src.tolist(),
                                                                                 query_dst.tolist())])


def test(data, test_mask, neg_sampler, split_mode):
    num_batches = math.ceil(len(data["sources"][test_mask]) / BATCH_SIZE)
    perf_list = []
    hits_list = []
    for batch_idx in range(num_batches):
        start_idx = batch_idx * BATCH_SIZE
        end_idx = min(start_idx + BATCH_SIZE, len(data["sources"][test_mask]))
        pos_src, pos_dst, pos_t, pos_edge = (
            data["sources"][test_mask][start_idx:end_idx],
            data["destinations"][test_mask][start_idx:end_idx],
            data["timestamps"][test_mask][start_idx:end_idx],
            data["edge_type"][test_mask][start_idx:end_idx],
        )
        neg_batch_list = neg_sampler.query_batch(pos_src, pos_dst, pos_t, pos_edge, split_mode=split_mode)
        for idx, neg_batch in enumerate(neg_batch_list):
            query_src = np.array([int(pos_src[idx]) for _ in range(len(neg_batch) + 1)])
            query_dst = np.concatenate([np.array([int(pos_dst[idx])]), neg_batch])
            y_pred = edgebank.predict_link(query_src, query_dst)
            input_dict = {{
                "y_pred_pos": np.array([y_pred[0]]),
                "y_pred_neg": np.array(y_pred[1:]),
                "eval_metric": [metric],
            }}
            results = evaluator.eval(input_dict)
            perf_list.append(results[metric])
            hits_list.append(results["hits@10"])
        edgebank.update_memory(pos_src, pos_dst, pos_t)
    return float(np.mean(perf_list)), float(np.mean(hits_list))


dataset = LinkPropPredDataset(name=DATA, root={root!r}, preprocess=True)
data = dataset.full_data
metric = dataset.eval_metric
train_mask = dataset.train_mask
val_mask = dataset.val_mask
test_mask = dataset.test_mask
edgebank = EdgeBankPredictor(data["sources"][train_mask], data["destinations"][train_mask])
evaluator = Evaluator(name=DATA)
neg_sampler = dataset.negative_sampler

dataset.load_val_ns()
perf_metric_val, perf_hits_val = test(data, val_mask, neg_sampler, split_mode="val")
print(f"\\tval: {{metric}}: {{perf_metric_val: .4f}}")
dataset.load_test_ns()
perf_metric_test, perf_hits_test = test(data, test_mask, neg_sampler, split_mode="test")
print(f"\\tTest: {{metric}}: {{perf_metric_test: .4f}}")
print(f"\\tTest: hits@10: {{perf_hits_test: .4f}}")
print("exact", repr(perf_metric_val), repr(perf_metric_test), repr(perf_hits_test))
'''


@pytest.mark.parametrize("name", ["tkgl-smallpedia", "thgl-software"])
def test_tgb2_edgebank_example_prints_the_same_mrr_with_one_import_line_changed(
        name: str, multi: Callable[[str], Imported], tmp_path: Path) -> None:
    release = multi(name)
    root, meta = formats.pytgb_root(release.files.folder, name)
    assert meta is None  # the example passes no meta_dict: the folder has py-tgb's name
    scripts = {}
    for label, imports in (("pytgb", PYTGB_IMPORTS), ("tgbhub", TGBHUB_IMPORTS)):
        scripts[label] = tmp_path / f"edgebank_{label}.py"
        scripts[label].write_text(EDGEBANK_TGB2_EXAMPLE.format(imports=imports, root=root, name=name))
    changed = set(scripts["pytgb"].read_text().splitlines()) ^ set(scripts["tgbhub"].read_text().splitlines())
    assert changed == set((PYTGB_IMPORTS + TGBHUB_IMPORTS).splitlines())  # nothing but the import line differs
    theirs = _run_example(scripts["pytgb"], tmp_path, tmp_path / "unused-cache")
    ours = _run_example(scripts["tgbhub"], tmp_path, release.cache)
    assert ours[0] == theirs[0] and len(ours[0]) == 3 and "mrr" in ours[0][1]
    assert ours[1] == pytest.approx(theirs[1], abs=1e-6) and 0 < ours[1][1] < 1
    assert theirs[2]["tgb"] and not ours[2]["tgb"] and not ours[2]["torch"]  # ours needs neither py-tgb nor torch


# --- tgbn: the node dataset, its label stream and NDCG ----------------------------------------------------------------

NODE = "tgbn-trade"


@pytest.fixture(scope="module")
def trade(tmp_path_factory: pytest.TempPathFactory) -> Imported:
    """The small tgbn-trade release of tests/test_import_tgbn.py, in a folder named as py-tgb names it."""
    folder = tmp_path_factory.mktemp("trade")
    return _import(formats.write_tgbn(folder / formats.dir_name(NODE), NODE, n_edges=2000, seed=0), folder)


def _label_stream(dataset: object, batch_size: int = 200) -> list[tuple]:
    """What TGB's node examples see (``test_n_upate``): each split's edges in batches, ``find_next_labels_batch``
    whenever a batch's last timestamp passes the current label time; train, val and test in turn without a reset.
    Each batch's rows sorted by node (py-tgb hands them out in the label file's order, tgbhub in node order)."""
    dataset.reset_label_time()
    t, seen = dataset.full_data["timestamps"], []
    for mask in (dataset.train_mask, dataset.val_mask, dataset.test_mask):
        ts, label_t = t[mask], dataset.return_label_ts()
        for start in range(0, len(ts), batch_size):
            query_t = ts[start:start + batch_size][-1]
            if query_t > label_t:
                found = dataset.find_next_labels_batch(query_t)
                if found is None:
                    break
                order = np.argsort(found[1], kind="stable")
                seen.append((int(label_t), *(array[order] for array in found), dataset.return_label_ts()))
                label_t = dataset.return_label_ts()
    dataset.reset_label_time()
    return seen


def test_node_full_data_masks_and_label_stream_equal_pytgbs(trade: Imported) -> None:
    theirs = trade.pytgb
    ours = NodePropPredDataset(name=NODE, root="ignored", preprocess=True, cache_dir=trade.cache)
    assert list(ours.full_data) == list(theirs.full_data)
    _assert_same_full_data({k: v for k, v in ours.full_data.items() if k != "node_label_dict"},
                           {k: v for k, v in theirs.full_data.items() if k != "node_label_dict"})
    assert ours.full_data["sources"].dtype == np.float64  # py-tgb keeps the node parsers' float arrays
    for mask in ("train_mask", "val_mask", "test_mask"):
        assert np.array_equal(getattr(ours, mask), getattr(theirs, mask))
    assert (ours.num_classes, ours.eval_metric) == (theirs.num_classes, theirs.eval_metric)
    assert np.array_equal(ours.edge_feat, theirs.edge_feat) and ours.node_feat is theirs.node_feat is None
    assert ours.label_ts.dtype == theirs.label_ts.dtype and np.array_equal(ours.label_ts, theirs.label_ts)
    mine, reference = ours.node_label_dict, theirs.node_label_dict
    assert sorted(mine) == sorted(reference) and all(type(ts) is int for ts in mine)
    for ts, nodes in reference.items():
        assert sorted(mine[ts]) == sorted(nodes) and all(type(node) is int for node in mine[ts])
        assert all(mine[ts][node].dtype == vector.dtype and np.array_equal(mine[ts][node], vector)
                   for node, vector in nodes.items())
    stream = {"ours": _label_stream(ours), "theirs": _label_stream(theirs)}
    assert len(stream["ours"]) == len(stream["theirs"]) >= 4
    for got, expected in zip(stream["ours"], stream["theirs"]):
        assert got[0] == expected[0] and got[4] == expected[4]
        for mine_array, their_array in zip(got[1:4], expected[1:4]):
            assert mine_array.dtype == their_array.dtype and np.array_equal(mine_array, their_array)
    assert ours.find_next_labels_batch(ours.label_ts[0] - 1) is None and ours.label_ts_idx == 0
    ours.label_ts_idx = len(ours.label_ts)  # past the end: None, and the last label time, as py-tgb
    assert ours.find_next_labels_batch(10 ** 12) is None and ours.return_label_ts() == theirs.label_ts[-1]


def test_node_evaluator_equals_pytgbs_ndcg_and_refuses_what_sklearn_would_score_or_crash_on(trade: Imported) -> None:
    torch = pytest.importorskip("torch")
    from tgb.nodeproppred.evaluate import Evaluator as PytgbEvaluator

    theirs, ours = PytgbEvaluator(name=NODE), Evaluator(name=NODE)
    rng = np.random.default_rng(2)
    for _, _, _, labels, _ in _label_stream(trade.pytgb):
        scores = rng.integers(0, 4, labels.shape).astype(np.float32)  # ties everywhere
        request = {"y_true": labels, "y_pred": scores, "eval_metric": ["ndcg"]}
        expected = theirs.eval(request)["ndcg"]
        assert list(ours.eval(request)) == ["ndcg"] and ours.eval(request)["ndcg"] == pytest.approx(expected, abs=1e-12)
        assert type(ours.eval(request)["ndcg"]) is type(expected) is float  # sklearn's ndcg_score returns a float
        tensors = {**request, "y_true": torch.from_numpy(labels), "y_pred": torch.from_numpy(scores)}
        assert ours.eval(tensors)["ndcg"] == pytest.approx(expected, abs=1e-12)
    good = {"y_true": labels, "y_pred": scores, "eval_metric": ["ndcg"]}
    broken = scores.astype(np.float64)
    broken[3, 7] = np.nan
    with pytest.raises(ScoreError, match="y_pred row 3 holds a NaN.*nan_to_num"):
        ours.eval({**good, "y_pred": broken})
    with pytest.raises(ScoreError, match="expected one shape \\(N, C\\)"):
        ours.eval({**good, "y_pred": scores[:, 1:]})
    with pytest.raises(ScoreError, match="expected one shape"):
        ours.eval({**good, "y_true": labels[0], "y_pred": scores[0]})
    with pytest.raises(ScoreError, match="negative label"):
        ours.eval({**good, "y_true": -labels})
    with pytest.raises(ScoreError, match="unsupported eval_metric \\['mrr'\\]"):
        ours.eval({**good, "eval_metric": ["mrr"]})
    with pytest.raises(ScoreError, match="lacks y_pred"):
        ours.eval({"y_true": labels, "eval_metric": ["ndcg"]})


PYTGB_NODE_IMPORTS = ("from tgb.nodeproppred.dataset import NodePropPredDataset\n"
                      "from tgb.nodeproppred.evaluate import Evaluator\n")
TGBHUB_NODE_IMPORTS = "from tgbhub.compat.tgb import NodePropPredDataset, Evaluator\n"

# TGB's examples/nodeproppred/tgbn-trade/persistant_forecast.py on numpy instead of PyG's loaders (the PyG route
# runs TGB's own script in tests/test_compat_tgb_examples.py): the edges of each split in batches of 200, the labels of a label timestamp fetched once a
# batch passes it, every node predicted by its last seen label vector, NDCG per label timestamp, averaged.
PERSISTENT_FORECAST_EXAMPLE = '''\
import numpy as np

{imports}
name = "tgbn-trade"
dataset = NodePropPredDataset(name=name, root={root!r}, preprocess=True)
num_classes = dataset.num_classes
data = dataset.full_data
eval_metric = dataset.eval_metric
evaluator = Evaluator(name=name)
batch_size = 200
last_seen = {{}}


def test_n_upate(mask):
    label_t = dataset.return_label_ts()
    num_label_ts = 0
    total_score = 0
    ts = data["timestamps"][mask]
    for start in range(0, len(ts), batch_size):
        query_t = ts[start:start + batch_size][-1]
        if query_t > label_t:
            label_tuple = dataset.find_next_labels_batch(query_t)
            if label_tuple is None:
                break
            label_ts, label_srcs, labels = label_tuple
            label_t = dataset.return_label_ts()
            preds = []
            for i in range(0, label_srcs.shape[0]):
                node_id = label_srcs[i]
                preds.append(last_seen.get(node_id, np.zeros(num_classes)))
                last_seen[node_id] = labels[i]
            input_dict = {{"y_true": labels, "y_pred": np.stack(preds, axis=0), "eval_metric": [eval_metric]}}
            total_score += evaluator.eval(input_dict)[eval_metric]
            num_label_ts += 1
    return total_score / num_label_ts


scores = [test_n_upate(mask) for mask in (dataset.train_mask, dataset.val_mask, dataset.test_mask)]
for split, score in zip(("train", "val", "test"), scores):
    print(f"\\t{{split}}: {{eval_metric}}: {{score: .4f}}")
print("exact", *map(repr, map(float, scores)))
dataset.reset_label_time()
'''


def test_persistent_forecast_prints_the_same_ndcg_with_one_import_line_changed(trade: Imported, tmp_path: Path) -> None:
    root, meta = formats.pytgb_root(trade.files.folder, NODE)
    assert meta is None
    scripts = {}
    for label, imports in (("pytgb", PYTGB_NODE_IMPORTS), ("tgbhub", TGBHUB_NODE_IMPORTS)):
        scripts[label] = tmp_path / f"forecast_{label}.py"
        scripts[label].write_text(PERSISTENT_FORECAST_EXAMPLE.format(imports=imports, root=root))
    changed = set(scripts["pytgb"].read_text().splitlines()) ^ set(scripts["tgbhub"].read_text().splitlines())
    assert changed == set((PYTGB_NODE_IMPORTS + TGBHUB_NODE_IMPORTS).splitlines())
    theirs = _run_example(scripts["pytgb"], tmp_path, tmp_path / "unused-cache")
    ours = _run_example(scripts["tgbhub"], tmp_path, trade.cache)
    assert ours[0] == theirs[0] and len(ours[0]) == 3 and "ndcg" in ours[0][2]
    assert ours[1] == pytest.approx(theirs[1], abs=1e-9) and 0 < ours[1][2] < 1
    assert theirs[2]["tgb"] and not ours[2]["tgb"] and not ours[2]["torch"]  # ours needs neither py-tgb nor torch
