"""Issue 12: files in TGB's exact formats, built here at small size (tests/tgb_formats.py), read back by py-tgb 2.3.0.

Each family is written, zipped under the upstream release's name, unzipped into a fresh folder the way py-tgb's
download does, and loaded by py-tgb's own ``LinkPropPredDataset`` / ``NodePropPredDataset`` (``download=False``, no
network, nothing written into site-packages). py-tgb's arrays must equal what was written after py-tgb's own
transformations, which these tests spell out because an importer has to reproduce them:

* tgbl (``load_edgelist_wiki``: wiki, subreddit, uci, enron, lastfm): no id remap; destinations shifted by
  ``max(src) + 1``; float timestamps cast to int; edge features = CSV columns 4 onwards; ``edge_idxs`` 0..E-1.
* tkgl: nodes remapped in order of first appearance (head, then tail, row by row); Wikidata-style relations
  (smallpedia, wikidata) remapped the same way, integer relations (polecat, icews, yago) kept; then inverse edges
  ``(tail, head, ts, rel + R)``, R = number of distinct relations, appended *after* all originals; ``edge_idxs``
  1..E then ``idx + E + 1``; ``edge_feat`` zeros with E rows (not 2E); the quantile split over the doubled arrays.
* thgl: nodes remapped by first appearance, relation ids kept, no inverses; ``node_type[id] = type`` as float64;
  ``edge_feat`` zeros (E, 1), or for thgl-forum ``[num_words / 10000, score / 10000]``.
* tgbn-trade: nations remapped by first appearance; every array float64 (no int cast); ``edge_feat`` = weight;
  ``edge_idxs`` 1..E; labels ``{year: {node: vector of len(node_ids)}}``, nodes in label-file order.
* every split: ``train <= quantile(ts, 0.70) < val <= quantile(ts, 0.85) < test`` (tkgl-yago: 0.8 / 0.9).
"""

from __future__ import annotations

import os
import pickle
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from tests import tgb_formats as F

pytest.importorskip("tgb.linkproppred.dataset")

REPRESENTATIVE = ("tgbl-wiki", "tkgl-smallpedia", "thgl-software", "tgbn-trade")
ALL_NAMES = REPRESENTATIVE + ("tgbl-uci", "tkgl-polecat", "tkgl-wikidata", "tkgl-yago", "thgl-forum")

EXPECTED_FILES = {
    "tgbl-wiki": {"tgbl-wiki_edgelist_v2.csv", "tgbl-wiki_val_ns_v2.pkl", "tgbl-wiki_test_ns_v2.pkl"},
    "tgbl-uci": {"tgbl-uci_edgelist.csv", "tgbl-uci_val_ns.pkl", "tgbl-uci_test_ns.pkl"},
    "tkgl-smallpedia": {"tkgl-smallpedia_edgelist.csv", "tkgl-smallpedia_static_edgelist.csv",
                        "tkgl-smallpedia_val_ns.pkl", "tkgl-smallpedia_test_ns.pkl"},
    "tkgl-wikidata": {"tkgl-wikidata_edgelist.csv", "tkgl-wikidata_static_edgelist.csv",
                      "tkgl-wikidata_val_ns.pkl", "tkgl-wikidata_test_ns.pkl"},
    "tkgl-polecat": {"tkgl-polecat_edgelist.csv", "tkgl-polecat_val_ns.pkl", "tkgl-polecat_test_ns.pkl"},
    "tkgl-yago": {"tkgl-yago_edgelist.csv", "tkgl-yago_val_ns.pkl", "tkgl-yago_test_ns.pkl"},
    "thgl-software": {"thgl-software_edgelist.csv", "thgl-software_nodetype.csv", "thgl-software_val_ns.pkl",
                      "thgl-software_test_ns.pkl"},
    "thgl-forum": {"thgl-forum_edgelist.csv", "thgl-forum_nodetype.csv", "thgl-forum_val_ns.pkl",
                   "thgl-forum_test_ns.pkl"},
    "tgbn-trade": {"tgbn-trade_edgelist.csv", "tgbn-trade_node_labels.csv"},
}


# --- guards: no network, no writes into the installed package ----------------------------------------------------

def _package_files() -> dict[str, tuple[int, int]]:
    from tgb.utils.info import PROJ_DIR

    out = {}
    for base, dirs, names in os.walk(PROJ_DIR):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for n in names:
            st = os.stat(os.path.join(base, n))
            out[os.path.join(base, n)] = (st.st_size, st.st_mtime_ns)
    return out


@pytest.fixture(autouse=True)
def _guards(monkeypatch: pytest.MonkeyPatch):
    import requests

    def no_network(*args, **kwargs):
        raise AssertionError("network access in a test")

    monkeypatch.setattr(requests.sessions.Session, "request", no_network)
    before = _package_files()
    yield
    assert _package_files() == before, "something was written into py-tgb's package folder"


# --- py-tgb's transformations, spelled out ---------------------------------------------------------------------

def first_appearance(heads: np.ndarray, tails: np.ndarray) -> dict:
    """raw id -> 0, 1, 2, ... in order of first appearance in head0, tail0, head1, tail1, ..."""
    interleaved = np.column_stack([np.asarray(heads), np.asarray(tails)]).ravel()
    uniq, first = np.unique(interleaved, return_index=True)
    order = uniq[np.argsort(first)]
    return {x: k for k, x in enumerate(order.tolist())}


def remap(values: np.ndarray, ids: dict) -> np.ndarray:
    return np.array([ids[x] for x in np.asarray(values).tolist()], dtype=np.int64)


def split_masks(ts: np.ndarray, val_ratio: float = 0.15, test_ratio: float = 0.15):
    val_time, test_time = np.quantile(ts, [1 - val_ratio - test_ratio, 1 - test_ratio])
    return ts <= val_time, (ts > val_time) & (ts <= test_time), ts > test_time


def roundtrip(written: F.FormatFiles, tmp_path: Path) -> F.FormatFiles:
    """Zip as the release names it, unzip into a fresh root as py-tgb's download does."""
    zip_path = F.zip_dataset(written, tmp_path / "release")
    folder = F.unzip_like_pytgb(zip_path, tmp_path / "fresh-root", written.name)
    assert folder == tmp_path / "fresh-root" / F.dir_name(written.name)
    return written.relocated(folder)


def check_masks(ds, ts: np.ndarray, ratio: float = 0.15) -> None:
    train, val, test = split_masks(ts, ratio, ratio)
    assert_array_equal(ds.train_mask, train)
    assert_array_equal(ds.val_mask, val)
    assert_array_equal(ds.test_mask, test)
    assert train.any() and val.any() and test.any()


def split_arrays(ds, split: str):
    mask = ds.val_mask if split == "val" else ds.test_mask
    fd = ds.full_data
    return fd["sources"][mask], fd["destinations"][mask], fd["timestamps"][mask], (
        fd["edge_type"][mask] if "edge_type" in fd else None)


# --- names, files, zips --------------------------------------------------------------------------------------------

def test_names_agree_with_pytgb_info():
    from tgb.utils.info import DATA_NS_STRATEGY_DICT, DATA_NUM_CLASSES, DATA_URL_DICT, DATA_VERSION_DICT

    assert F.PYTGB_VERSIONS == DATA_VERSION_DICT
    assert set(F.PYTGB_PARSERS) == set(DATA_URL_DICT)
    for name, url in DATA_URL_DICT.items():
        assert F.zip_name(name) == url.rsplit("/", 1)[1], name
    for name, strategy in F.PYTGB_NS_STRATEGY.items():
        assert DATA_NS_STRATEGY_DICT[name] == strategy
    assert F.PYTGB_NUM_CLASSES == DATA_NUM_CLASSES


def test_parsers_are_the_ones_pytgb_dispatches_to():
    import inspect

    from tgb.linkproppred.dataset import LinkPropPredDataset
    from tgb.nodeproppred.dataset import NodePropPredDataset

    source = (inspect.getsource(LinkPropPredDataset.generate_processed_files)
              + inspect.getsource(NodePropPredDataset.generate_processed_files))
    for name, parser in F.PYTGB_PARSERS.items():
        found = re.search(rf'self\.name == "{name}":\s*\n\s*df, [^=]*= (\w+)\(', source)
        assert found is not None and found.group(1) == parser, name


@pytest.mark.parametrize("name", ALL_NAMES)
def test_files_zip_and_determinism(tmp_path: Path, name: str):
    a = F.write(tmp_path / "a" / F.dir_name(name), name, seed=3)
    b = F.write(tmp_path / "b" / F.dir_name(name), name, seed=3)
    c = F.write(tmp_path / "c" / F.dir_name(name), name, seed=4)
    assert {p.name for p in a.files.values()} == EXPECTED_FILES[name]
    assert {p.name for p in a.folder.iterdir()} == EXPECTED_FILES[name]
    for role in a.files:
        assert a.files[role].read_bytes() == b.files[role].read_bytes(), role
    assert a.files["edgelist"].read_bytes() != c.files["edgelist"].read_bytes()

    za, zb = F.zip_dataset(a, tmp_path / "za"), F.zip_dataset(b, tmp_path / "zb")
    assert za.name == b.zip_name == {"tgbl-wiki": "tgbl-wiki-v2.zip"}.get(name, f"{name}.zip")
    assert za.read_bytes() == zb.read_bytes()
    with zipfile.ZipFile(za) as zf:
        assert set(zf.namelist()) == EXPECTED_FILES[name]            # flat: py-tgb extracts into <root>/<dir>/
        for role, path in a.files.items():
            assert zf.read(path.name) == path.read_bytes()


@pytest.mark.parametrize("name", [n for n in ALL_NAMES if not n.startswith("tgbn")])
def test_pickle_layout(tmp_path: Path, name: str):
    files = F.write(tmp_path / F.dir_name(name), name)
    for split in ("val", "test"):
        with open(files.files[f"{split}_ns"], "rb") as fh:
            raw = fh.read()
        assert raw[:2] == bytes([0x80, pickle.HIGHEST_PROTOCOL])
        loaded = pickle.loads(raw)
        assert type(loaded) is dict and len(loaded) > 0
        for key, value in loaded.items():
            assert type(key) is tuple and len(key) == 3
            assert all(type(k) is np.int64 for k in key)
            assert isinstance(value, np.ndarray) and value.ndim == 1
            assert value.dtype in ((np.int64, np.float64) if name.startswith("tgbl") else (np.int64,))
        assert set(loaded) == set(files.truth["negatives"][split])


# --- tgbl -----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["tgbl-wiki", "tgbl-uci"])
def test_tgbl_read_by_pytgb(tmp_path: Path, name: str):
    files = roundtrip(F.write_tgbl(tmp_path / "written", name), tmp_path)
    ds = F.load_with_pytgb(files)
    t = files.truth
    n = len(t["src"])
    fd = ds.full_data
    exp_src = t["src"]
    exp_dst = t["dst"] + t["src"].max() + 1
    exp_ts = t["ts"].astype(np.int64)
    assert_array_equal(fd["sources"], exp_src)
    assert_array_equal(fd["destinations"], exp_dst)
    assert_array_equal(fd["timestamps"], exp_ts)
    assert fd["sources"].dtype == fd["destinations"].dtype == fd["timestamps"].dtype == np.int64
    assert fd["edge_feat"].shape == (n, 172)
    assert_allclose(fd["edge_feat"], t["edge_feat"], rtol=1e-12, atol=0)
    assert_array_equal(fd["edge_idxs"], np.arange(n))
    assert_array_equal(fd["w"], np.ones(n))
    assert_array_equal(fd["edge_label"], np.ones(n))
    assert "edge_type" not in fd and ds.node_type is None and ds.node_feat is None
    assert ds.num_nodes == len(np.unique(np.concatenate([exp_src, exp_dst])))
    assert ds.eval_metric == "mrr"
    check_masks(ds, exp_ts)

    for split in ("val", "test"):
        s, d, ts, _ = split_arrays(ds, split)
        got = ds.negative_sampler.query_batch(s, d, ts, split_mode=split)
        truth = t["negatives"][split]
        assert got == [[int(x) for x in truth[(a, b, c)]] for a, b, c in zip(s, d, ts)]
        assert set(truth) == set(zip(s.tolist(), d.tolist(), ts.tolist()))   # one key per distinct positive


def test_tgbl_negatives_follow_hist_rnd(tmp_path: Path):
    files = F.write_tgbl(tmp_path / "w", "tgbl-wiki")
    t = files.truth
    q, max_hist = t["q"], int(t["q"] * t["hist_ratio"])
    src, dst, ts = t["src"], t["dst"] + t["src"].max() + 1, t["ts"].astype(np.int64)
    train, val, test = split_masks(ts)
    universe = np.arange(dst.min(), dst.max() + 1)
    ragged = floats = 0
    for split, mask in (("val", val), ("test", test)):
        for (s, d, when), neg in t["negatives"][split].items():
            conflict = dst[mask & (src == s) & (ts == when)]
            history = np.unique(dst[train & (src == s)])
            assert d in conflict
            assert len(np.unique(neg)) == len(neg) and np.isin(neg, universe).all()
            assert not np.isin(neg, conflict).any()
            n_hist = int(np.isin(neg, history).sum())
            assert n_hist == min(max_hist, len(np.setdiff1d(history, conflict)))
            n_rest = len(np.setdiff1d(universe, np.concatenate([conflict, history])))
            assert len(neg) == n_hist + min(q - n_hist, n_rest)
            ragged += len(neg) < q
            if neg.dtype == np.float64:                  # upstream's quirk: no train history -> float array
                assert len(history) == 0
                floats += 1
    assert floats > 0 and ragged > 0


# --- tkgl -----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["tkgl-smallpedia", "tkgl-polecat", "tkgl-wikidata", "tkgl-yago"])
def test_tkgl_read_by_pytgb(tmp_path: Path, name: str):
    files = roundtrip(F.write_tkgl(tmp_path / "written", name), tmp_path)
    ds = F.load_with_pytgb(files)
    t = files.truth
    e = len(t["ts"])
    ids = first_appearance(t["head"], t["tail"])
    src, dst = remap(t["head"], ids), remap(t["tail"], ids)
    if name in F.TKGL_STRING_NAMES:
        rel_ids = {r: k for k, r in enumerate(dict.fromkeys(t["relation_type"].tolist()))}
        rel = remap(t["relation_type"], rel_ids)
    else:
        rel = t["relation_type"].astype(np.int64)
    n_rels = len(np.unique(rel))
    fd = ds.full_data
    assert_array_equal(fd["sources"], np.concatenate([src, dst]))
    assert_array_equal(fd["destinations"], np.concatenate([dst, src]))
    assert_array_equal(fd["timestamps"], np.concatenate([t["ts"], t["ts"]]))
    assert_array_equal(fd["edge_type"], np.concatenate([rel, rel + n_rels]))
    assert_array_equal(ds.edge_type, fd["edge_type"])
    assert_array_equal(fd["edge_idxs"], np.concatenate([np.arange(1, e + 1), np.arange(1, e + 1) + e + 1]))
    assert_array_equal(fd["w"], np.ones(2 * e))
    assert fd["edge_feat"].shape == (e, 1) and not fd["edge_feat"].any()     # originals only: E rows, not 2E
    assert ds.num_nodes == len(ids) and ds.num_rels == 2 * n_rels and ds.num_edges == 2 * e
    assert ds.node_type is None
    ratio = 0.1 if name == "tkgl-yago" else 0.15
    check_masks(ds, fd["timestamps"], ratio)

    strategy = F.PYTGB_NS_STRATEGY[name]
    largest_conflict = 0
    for split in ("val", "test"):
        s, d, ts, r = split_arrays(ds, split)
        got = ds.negative_sampler.query_batch(s, d, ts, r, split_mode=split)
        truth = t["negatives"][split]
        assert set(truth) == set(zip(ts.tolist(), s.tolist(), r.tolist()))   # keys (ts, src, rel), inverses too
        assert (r >= n_rels).sum() == len(r) // 2
        for a, b, c, k, neg in zip(s, d, ts, r, got):
            conflict = d[(s == a) & (ts == c) & (r == k)]
            largest_conflict = max(largest_conflict, len(conflict))
            if strategy == "time-filtered":              # stored: the conflict set; served: every other node
                assert_array_equal(np.sort(truth[(c, a, k)]), np.unique(conflict))
                assert_array_equal(neg, np.setdiff1d(np.arange(len(ids)), conflict))
            else:
                assert_array_equal(neg, truth[(c, a, k)])
                assert len(neg) == t["q"]
    assert largest_conflict > 1

    if name in F.TKGL_STRING_NAMES:
        # static edges: nodes keep the temporal ids, new nodes continue them; known relations keep their id,
        # new ones get 2R, 2R + 1, ... in order of first appearance
        static = ds.static_data
        all_ids = dict(ids)
        for x in np.column_stack([t["static_head"], t["static_tail"]]).ravel().tolist():
            all_ids.setdefault(x, len(all_ids))
        static_rel_ids = dict(rel_ids)
        for x in t["static_relation_type"].tolist():
            static_rel_ids.setdefault(x, 2 * n_rels + len(static_rel_ids) - len(rel_ids))
        assert_array_equal(static["head"], remap(t["static_head"], all_ids))
        assert_array_equal(static["tail"], remap(t["static_tail"], all_ids))
        assert_array_equal(static["edge_type"], remap(t["static_relation_type"], static_rel_ids))
        assert len(all_ids) > len(ids) and len(static_rel_ids) > len(rel_ids)


# --- thgl -----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["thgl-software", "thgl-forum"])
def test_thgl_read_by_pytgb(tmp_path: Path, name: str):
    files = roundtrip(F.write_thgl(tmp_path / "written", name), tmp_path)
    ds = F.load_with_pytgb(files)
    t = files.truth
    e = len(t["ts"])
    ids = first_appearance(t["head"], t["tail"])
    assert list(ids) != sorted(ids)                       # the remap is not the identity here
    fd = ds.full_data
    assert_array_equal(fd["sources"], remap(t["head"], ids))
    assert_array_equal(fd["destinations"], remap(t["tail"], ids))
    assert_array_equal(fd["timestamps"], t["ts"])
    assert_array_equal(fd["edge_type"], t["relation_type"])
    assert_array_equal(fd["edge_idxs"], np.arange(1, e + 1))
    if name == "thgl-forum":
        assert_allclose(fd["edge_feat"], np.column_stack([t["num_words"] / 10000, t["score"] / 10000]), rtol=1e-15)
    else:
        assert fd["edge_feat"].shape == (e, 1) and not fd["edge_feat"].any()
    node_type = np.zeros(len(ids))
    node_type[remap(t["node_id"], ids)] = t["node_type"]
    assert ds.node_type.dtype == np.float64
    assert_array_equal(ds.node_type, node_type)
    check_masks(ds, t["ts"])

    largest_conflict = 0
    for split in ("val", "test"):
        s, d, ts, r = split_arrays(ds, split)
        got = ds.negative_sampler.query_batch(s, d, ts, r, split_mode=split)
        truth = t["negatives"][split]
        assert set(truth) == set(zip(ts.tolist(), s.tolist(), r.tolist()))
        for a, b, c, k, neg in zip(s, d, ts, r, got):
            assert_array_equal(neg, truth[(c, a, k)])
            conflict = d[(s == a) & (ts == c) & (r == k)]
            largest_conflict = max(largest_conflict, len(conflict))
            assert len(neg) == len(np.unique(neg)) == t["q"]
            assert not np.isin(neg, conflict).any()
            assert (node_type[neg] == node_type[b]).all()
    assert largest_conflict > 1


# --- tgbn -----------------------------------------------------------------------------------------------------------

def expected_trade_labels(t: dict, ids: dict) -> dict:
    out: dict[int, dict[int, np.ndarray]] = {}
    for year, u, v, w in zip(t["label_year"].tolist(), t["label_nation"].tolist(),
                             t["label_trading_nation"].tolist(), t["label_weight"].tolist()):
        out.setdefault(year, {}).setdefault(ids[u], np.zeros(len(ids)))[ids[v]] = w
    return out


def test_tgbn_read_by_pytgb(tmp_path: Path):
    files = roundtrip(F.write_tgbn(tmp_path / "written"), tmp_path)
    ds = F.load_with_pytgb(files)
    t = files.truth
    e = len(t["year"])
    ids = first_appearance(t["nation"], t["trading_nation"])
    fd = ds.full_data
    assert fd["sources"].dtype == fd["timestamps"].dtype == np.float64      # no int cast for node datasets
    assert_array_equal(fd["sources"], remap(t["nation"], ids))
    assert_array_equal(fd["destinations"], remap(t["trading_nation"], ids))
    assert_array_equal(fd["timestamps"], t["year"])
    assert_array_equal(fd["edge_idxs"], np.arange(1, e + 1))
    assert_array_equal(fd["edge_feat"], t["weight"].reshape(-1, 1))
    assert ds.num_classes == t["num_classes"] == len(ids) == 255
    assert ds.eval_metric == "ndcg"
    check_masks(ds, fd["timestamps"])

    expected = expected_trade_labels(t, ids)
    assert list(ds.node_label_dict) == list(expected)
    for year in expected:
        assert list(ds.node_label_dict[year]) == list(expected[year])
    ds.reset_label_time()
    for year in sorted(expected):
        assert ds.find_next_labels_batch(year - 1) is None
        label_ts, nodes, labels = ds.find_next_labels_batch(year)
        assert_array_equal(label_ts, np.full(len(expected[year]), year))
        assert_array_equal(nodes, list(expected[year]))
        assert_array_equal(labels, np.stack(list(expected[year].values())))
        assert_allclose(labels.sum(axis=1), 1.0, rtol=1e-12)
    assert ds.find_next_labels_batch(10**9) is None


def test_tgbn_pyg_get_node_label(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    pytest.importorskip("torch_geometric")
    from tgb.nodeproppred.dataset_pyg import PyGNodePropPredDataset

    files = roundtrip(F.write_tgbn(tmp_path / "written"), tmp_path)
    root, meta = F.pytgb_root(files.folder, files.name)
    assert meta is None
    monkeypatch.chdir(tmp_path)
    ds = PyGNodePropPredDataset(name=files.name, root=root, download=False)
    ids = first_appearance(files.truth["nation"], files.truth["trading_nation"])
    expected = expected_trade_labels(files.truth, ids)
    first = min(expected)
    assert ds.get_node_label(first - 1) is None
    label_ts, nodes, labels = ds.get_node_label(first)
    assert nodes.tolist() == list(expected[first])
    assert_allclose(labels.numpy(), np.stack(list(expected[first].values())), rtol=1e-6)


# --- py-tgb's processed cache and its own download path ------------------------------------------------------------

@pytest.mark.parametrize("name", REPRESENTATIVE)
def test_second_load_from_pytgb_cache_is_identical(tmp_path: Path, name: str):
    files = F.write(tmp_path / F.dir_name(name), name)
    first = F.load_with_pytgb(files)
    assert any(p.name.startswith("ml_") for p in files.folder.iterdir())
    second = F.load_with_pytgb(files)
    for key in ("sources", "destinations", "timestamps", "edge_idxs"):
        assert_array_equal(second.full_data[key], first.full_data[key])
    if files.kind == "link":
        assert_array_equal(second.full_data.get("edge_type", []), first.full_data.get("edge_type", []))
        if first.node_type is not None:
            assert_array_equal(second.node_type, first.node_type)


class _FakeResponse:
    def __init__(self, body: bytes) -> None:
        self.body = body
        self.headers = {"content-length": str(len(body))}

    def iter_content(self, chunk_size: int = 1024):
        for k in range(0, len(self.body), chunk_size):
            yield self.body[k:k + chunk_size]


@pytest.mark.parametrize("name", REPRESENTATIVE)
def test_pytgb_download_path_accepts_the_zip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str):
    """py-tgb's own download code (requests.get stubbed with the zip's bytes) saves, extracts and loads it."""
    import requests
    from tgb.linkproppred.dataset import LinkPropPredDataset
    from tgb.nodeproppred.dataset import NodePropPredDataset
    from tgb.utils.info import DATA_URL_DICT

    written = F.write(tmp_path / "written" / F.dir_name(name), name)
    zip_path = F.zip_dataset(written, tmp_path / "release")
    asked = []

    def fake_get(url, stream=False, **kwargs):
        asked.append(url)
        return _FakeResponse((tmp_path / "release" / url.rsplit("/", 1)[1]).read_bytes())

    monkeypatch.setattr(requests, "get", fake_get)
    (tmp_path / "dl-root").mkdir()
    root, meta = F.pytgb_root(tmp_path / "dl-root" / F.dir_name(name), name)
    cls = NodePropPredDataset if written.kind == "node" else LinkPropPredDataset
    ds = cls(name=name, root=root, download=True)
    assert asked == [DATA_URL_DICT[name]]
    folder = tmp_path / "dl-root" / F.dir_name(name)
    assert (folder / f"{name}.zip").read_bytes() == zip_path.read_bytes()     # kept, under py-tgb's local name
    reference = F.load_with_pytgb(written)
    for key in ("sources", "destinations", "timestamps"):
        assert_array_equal(ds.full_data[key], reference.full_data[key])


# --- the Evaluators on the loaded data -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", REPRESENTATIVE)
def test_evaluator_runs_on_loaded_data(tmp_path: Path, name: str):
    files = F.write(tmp_path / F.dir_name(name), name)
    ds = F.load_with_pytgb(files)
    rng = np.random.default_rng(0)
    if files.kind == "node":
        from tgb.nodeproppred.evaluate import Evaluator

        evaluator = Evaluator(name)
        ds.reset_label_time()
        scores = []
        for year in sorted(ds.node_label_dict):
            _, nodes, labels = ds.find_next_labels_batch(year)
            assert labels.shape == (len(nodes), ds.num_classes)
            result = evaluator.eval({"y_true": labels, "y_pred": rng.random(labels.shape), "eval_metric": ["ndcg"]})
            assert set(result) == {"ndcg"} and 0.0 <= result["ndcg"] <= 1.0
            perfect = evaluator.eval({"y_true": labels, "y_pred": labels, "eval_metric": ["ndcg"]})
            assert perfect["ndcg"] == pytest.approx(1.0)
            scores.append(result["ndcg"])
        assert len(scores) == len(ds.node_label_dict)
        return

    from tgb.linkproppred.evaluate import Evaluator

    evaluator = Evaluator(name)
    s, d, ts, r = split_arrays(ds, "test")
    negatives = ds.negative_sampler.query_batch(s, d, ts, r, split_mode="test") if r is not None else \
        ds.negative_sampler.query_batch(s, d, ts, split_mode="test")
    mrrs = []
    for neg in negatives:                                  # per query, since counts may be ragged
        q = len(neg)
        assert q > 0
        result = evaluator.eval({"y_pred_pos": rng.random(1), "y_pred_neg": rng.random((1, q)),
                                 "eval_metric": ["mrr"]})
        assert set(result) == {"mrr", "hits@10"} and 0.0 < result["mrr"] <= 1.0
        mrrs.append(result["mrr"])
        tied = evaluator.eval({"y_pred_pos": np.zeros(1), "y_pred_neg": np.zeros((1, q)), "eval_metric": ["mrr"]})
        assert tied["mrr"] == pytest.approx(1.0 / (q / 2 + 1), rel=1e-6)
    assert 0.0 < float(np.mean(mrrs)) < 1.0
    lengths = {len(n) for n in negatives}
    if len(lengths) == 1:                                  # uniform q: one batched call, shapes (B,) and (B, q)
        q = lengths.pop()
        batch = evaluator.eval({"y_pred_pos": np.ones(len(negatives)), "y_pred_neg": np.zeros((len(negatives), q)),
                                "eval_metric": ["mrr"]})
        assert batch["mrr"] == pytest.approx(1.0) and batch["hits@10"] == pytest.approx(1.0)
