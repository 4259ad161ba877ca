"""tgbhub.compat.tgb: py-tgb 2.3.0's LinkPropPredDataset / Evaluator surface served from the verified cache, checked
against py-tgb itself on small releases in TGB's exact formats; TGB's EdgeBank example runs with one import line
changed and prints the same MRR."""

from __future__ import annotations

import csv
import dataclasses
import io
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pytest

import tgbhub
from tests import tgb_formats as formats
from tgbhub.compat.tgb import Evaluator, LinkPropPredDataset, NodePropPredDataset
from tgbhub.errors import (DatasetNotFoundError, FetchError, GenerationError, InvalidNameError,
                           ScoreError, UnsupportedTaskError)
from tgbhub.importing import DOWNLOADS, import_tgb
from tgbhub.tgb import catalogue

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
    stats = {"num_nodes": int(len(np.union1d(data["sources"], data["destinations"]))),
             "num_edges": int(len(data["sources"]))}
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
        assert ours["mrr"] == pytest.approx(float(theirs["mrr"]), abs=1e-6)
        assert ours[f"hits@{k}"] == pytest.approx(float(theirs[f"hits@{k}"]), abs=1e-6)
    evaluator = Evaluator(name=NAME)
    per_query = [evaluator.eval({"y_pred_pos": pos[i:i + 1], "y_pred_neg": neg[i], "eval_metric": ["mrr"]})["mrr"]
                 for i in range(len(pos))]  # TGB's examples: one positive, its negatives as (Q,)
    batched = evaluator.eval({"y_pred_pos": torch.from_numpy(pos)[:, None], "y_pred_neg": torch.from_numpy(neg),
                              "eval_metric": ["hits@", "mrr"]})
    assert float(np.mean(per_query)) == pytest.approx(float(batched["mrr"]), abs=1e-12)
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
    with pytest.raises(FileNotFoundError, match="tgbhub import tgb tgbl-wiki"):
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
    kept = tmp_path / "cache" / DOWNLOADS / wiki.zipped.name
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
    with pytest.raises(UnsupportedTaskError, match="tkgl"):
        LinkPropPredDataset("tkgl-smallpedia", cache_dir=tmp_path)
    with pytest.raises(UnsupportedTaskError, match="ndcg"):
        Evaluator(name="tgbn-trade")
    with pytest.raises(DatasetNotFoundError):
        Evaluator(name="tgbl-nope")
    assert not list(tmp_path.iterdir())  # nothing downloaded, nothing written


def test_node_dataset_surface_and_a_clear_error_while_tgbn_cannot_be_imported(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    name = "tgbn-trade"
    with pytest.raises(FileNotFoundError, match=f"tgbhub import tgb {name}"):
        NodePropPredDataset(name, download=False, cache_dir=tmp_path / "cache")
    files = formats.write_tgbn(tmp_path / "files", name, n_edges=600, n_nations=40, n_years=4)
    kept = tmp_path / "cache" / DOWNLOADS / formats.zip_name(name)
    formats.zip_dataset(files, kept.parent)
    entry = dataclasses.replace(catalogue.CATALOGUE[name], stats=MappingProxyType({}), profile=MappingProxyType({}))
    monkeypatch.setattr(catalogue, "CATALOGUE", MappingProxyType({**catalogue.CATALOGUE, name: entry}))
    monkeypatch.setenv("TGBHUB_OFFLINE", "1")
    try:
        dataset = NodePropPredDataset(name, root="datasets", cache_dir=tmp_path / "cache")
    except GenerationError as exc:  # this tgbhub cannot import tgbn yet: the import says so
        assert "not implemented" in str(exc) and name in str(exc)
        return
    assert (dataset.num_classes, dataset.eval_metric) == (255, "ndcg")  # once tgbn imports: the surface is served
    dataset.reset_label_time()
    with pytest.raises(UnsupportedTaskError, match="full_data"):
        dataset.full_data
