"""`tgbhub import tgb` for TGB 2.0's multi-relational releases (tkgl-*, thgl-*) in py-tgb 2.3.0's exact formats:
converted, verified, cached, and checked against py-tgb's own load of the same files (generators/tgb/tkgl.py,
generators/tgb/thgl.py) and against py-tgb's Evaluator (tgbhub/evaluate/filtered.py, tgbhub/evaluate/ranking.py).

One small release per layout: string Wikidata ids with static edges (tkgl-smallpedia, 1-vs-all), integer ids
(tkgl-polecat, 1-vs-all), 1-vs-q TKG negatives (tkgl-wikidata), node types (thgl-software) and edge features
(thgl-forum).
"""

from __future__ import annotations

import pickle
import warnings
import zipfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import tgbhub
from tests import tgb_formats as formats
from tgbhub.errors import GenerationError, IntegrityError, ScoreError, SourceWarning, SubmissionError
from tgbhub.local.imports import import_tgb

pytest.importorskip("tgb.linkproppred.dataset")

NAMES = ("tkgl-smallpedia", "tkgl-polecat", "tkgl-wikidata", "thgl-software", "thgl-forum")
N_EDGES = 600
SPLIT_NAMES = ("train", "val", "test")


def small_stats(name: str, pytgb) -> dict:
    """The statistics of a small release as the catalogue counts them (original edges, no inverses), from py-tgb."""
    data = pytgb.full_data
    inverses = name.startswith("tkgl-")
    e = len(data["sources"]) // 2 if inverses else len(data["sources"])
    masks = dict(zip(SPLIT_NAMES, (pytgb.train_mask, pytgb.val_mask, pytgb.test_mask)))
    stats = {"num_nodes": int(pytgb.num_nodes), "num_edges": e,
             "num_relations": int(pytgb.num_rels) // (2 if inverses else 1),
             "num_timestamps": int(len(np.unique(data["timestamps"]))),
             "split_edges": {k: int(mask[:e].sum()) for k, mask in masks.items()},
             "split_timestamps": {k: int(len(np.unique(data["timestamps"][mask]))) for k, mask in masks.items()}}
    if name in formats.TKGL_STRING_NAMES:
        stats["num_static_edges"] = int(len(pytgb.static_data["head"]))
    if pytgb.node_type is not None:
        stats["num_node_types"] = int(len(np.unique(pytgb.node_type)))
    if name == "thgl-forum":
        stats["edge_feat_dim"] = int(data["edge_feat"].shape[1])
    return stats


@pytest.fixture(scope="module", params=NAMES)
def imported(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """A small release of one dataset, imported and loaded by tgbhub, and py-tgb's own load of the same files."""
    name = request.param
    folder = tmp_path_factory.mktemp(name)
    files = formats.write(folder / "files", name, n_edges=N_EDGES, seed=0)
    zipped = formats.zip_dataset(files, folder / "zips")
    pytgb = formats.load_with_pytgb(files)
    stats = small_stats(name, pytgb)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SourceWarning)
        manifest = import_tgb(name, zipped, cache_dir=folder / "cache", expected_stats=stats)
    ds = tgbhub.load_dataset(f"tgb/{name}", cache_dir=folder / "cache", offline=True)
    return SimpleNamespace(name=name, pytgb=pytgb, ds=ds, manifest=manifest, stats=stats, zipped=zipped,
                           warned=[str(w.message) for w in caught if issubclass(w.category, SourceWarning)])


def split_queries(ds, split: str) -> tuple[np.ndarray, ...]:
    """``src, dst, t, edge_type`` of the split's rows (its queries, in stored order), as int64."""
    lo, hi = ds.splits[split]
    return tuple(np.asarray(column[lo:hi], dtype=np.int64) for column in
                 (ds.src, ds.dst, ds.t, ds.columns["edge_type"]))


def test_edges_types_features_and_masks_equal_pytgbs(imported: SimpleNamespace) -> None:
    ds, pytgb, data = imported.ds, imported.pytgb, imported.pytgb.full_data
    assert (imported.manifest.name, ds.source) == (f"tgb/{imported.name}", "cache")
    edge_id = np.asarray(ds.columns["edge_id"])
    # time-sorted, unlike py-tgb's TKG arrays; at equal t in py-tgb's order (originals first, each in CSV order)
    assert_array_equal(np.lexsort((edge_id, ds.t)), np.arange(len(edge_id)))
    order = np.argsort(edge_id)
    assert_array_equal(edge_id[order], np.arange(len(data["sources"])))
    assert_array_equal(ds.src[order], data["sources"])
    assert_array_equal(ds.dst[order], data["destinations"])
    assert_array_equal(ds.t[order], data["timestamps"])
    assert_array_equal(ds.columns["edge_type"][order], data["edge_type"])
    assert ds.num_nodes == pytgb.num_nodes
    e = imported.stats["num_edges"]
    if imported.name.startswith("tkgl-"):
        inverse = np.asarray(ds.columns["inverse"])
        assert_array_equal(inverse, edge_id >= e)
        assert_array_equal(data["edge_idxs"], np.where(edge_id[order] < e, edge_id[order] + 1, edge_id[order] + 2))
        first_inverse = np.flatnonzero(inverse)[0]
        assert inverse[first_inverse:].sum() < len(inverse) - first_inverse  # interleaved by time, not appended
        assert imported.manifest.graph["edge_types"]["inverse_offset"] == imported.stats["num_relations"]
    else:
        assert_array_equal(data["edge_idxs"], edge_id[order] + 1)
    if imported.name == "thgl-forum":
        assert_array_equal(ds.columns["edge_feat"][order], data["edge_feat"])    # bit for bit
    for split, mask in zip(SPLIT_NAMES, (pytgb.train_mask, pytgb.val_mask, pytgb.test_mask)):
        lo, hi = ds.splits[split]
        ours = np.zeros(len(edge_id), dtype=bool)
        ours[edge_id[lo:hi]] = True
        assert_array_equal(ours, mask, err_msg=split)


def test_node_types_and_static_edges_equal_pytgbs(imported: SimpleNamespace) -> None:
    pytgb, ds = imported.pytgb, imported.ds
    if pytgb.node_type is not None:
        nodes = ds.artifact("nodes.parquet")
        assert_array_equal(nodes["node"], np.arange(pytgb.num_nodes))
        assert_array_equal(nodes["type"], pytgb.node_type)
        assert imported.manifest.graph["node_types"]["num_node_types"] == imported.stats["num_node_types"] > 1
    if imported.name in formats.TKGL_STRING_NAMES:
        static = ds.artifact("static-edges.parquet")
        for column in ("head", "tail", "edge_type"):
            assert_array_equal(static[column], pytgb.static_data[column], column)
        largest = int(max(static["head"].max(), static["tail"].max()))
        assert largest >= pytgb.num_nodes                                   # static-only entities continue the ids
        declared = imported.manifest.graph["static_edges"]
        assert (declared["num_edges"], declared["num_nodes"]) == (len(static["head"]), largest + 1)


def test_every_query_has_pytgbs_negatives(imported: SimpleNamespace) -> None:
    ds, pytgb = imported.ds, imported.pytgb
    task = ds.task
    for split in ("val", "test"):
        src, dst, t, rel = split_queries(ds, split)
        expected = pytgb.negative_sampler.query_batch(src, dst, t, rel, split_mode=split)
        if task["type"] == "time-filtered-ranking":            # ours: the filter set; py-tgb: every other node
            sets = ds.get_evaluator().filter_sets(split)
            for column, values in (("src", src), ("dst", dst), ("t", t), ("edge_type", rel)):
                assert_array_equal(getattr(sets, column), values)
            everyone = np.arange(task["candidates"]["num_candidates"])
            for i, theirs in enumerate(expected):
                assert_array_equal(np.setdiff1d(everyone, sets.indices[sets.offsets[i]:sets.offsets[i + 1]]), theirs)
            assert np.diff(sets.offsets).max() > 1 and len(sets) == len(src)
        else:
            negatives = ds.negatives(split)
            assert_array_equal(negatives.dst, dst)
            assert [negatives.negatives[i, :negatives.count[i]].tolist() for i in range(len(src))] == [
                np.asarray(row).tolist() for row in expected]
            holding = sum(int(d in row) for d, row in zip(dst.tolist(), expected))
            if imported.name.startswith("tkgl-"):                     # upstream's fallback, counted in the manifest
                assert imported.manifest.stats["negatives_holding_dst"][split] == holding
            else:
                assert holding == 0


def test_tasks_declare_tgbs_protocols(imported: SimpleNamespace) -> None:
    task, entry = imported.ds.task, formats.PYTGB_NS_STRATEGY[imported.name]
    if entry == "time-filtered":
        assert task["type"] == "time-filtered-ranking"
        assert task["candidates"]["num_candidates"] == imported.pytgb.num_nodes
        assert [c["name"] for c in task["submission"]["columns"]] == ["query", "scores"]
        assert "negatives" not in task and set(task["filter"]["files"]) == {"val", "test"}  # 1-vs-all: filters only
    else:
        assert task["type"] == "one-vs-many-ranking"
        assert imported.ds.negatives("test").q == task["negatives"]["q"] == {"tkgl-wikidata": 60, "thgl-software": 20,
                                                                             "thgl-forum": 20}[imported.name]
    assert set(task["metrics"]) >= {"mrr", "hits@10"} and "average" in task["tie_rule"]


def test_tgbs_negatives_are_checked_against_the_samplers_rules(imported: SimpleNamespace) -> None:
    """The import checks TGB's negatives with the samplers' rules (generators/negatives.py): time-filtered sets
    against the sets the edges determine, 1-vs-q negatives against the query's pool (the relation's objects anywhere
    in the data; the true destination's node type) and its conflict set. The files written in TGB's format follow
    TGB's generators, so the sets agree and the THG negatives keep to their type; tkgl-wikidata's short pools take
    upstream's fallback (all nodes; docs/tgb.md, TGB's protocol), which the counts and the warning report.
    Recomputed here with sets."""
    ds, stats = imported.ds, imported.manifest.stats
    if ds.task["type"] == "time-filtered-ranking":
        keys = {split: len({tuple(row) for row in np.column_stack(split_queries(ds, split)[1:][::-1]).tolist()})
                for split in ("val", "test")}
        assert dict(stats["filter_sets_checked"]) == keys
        assert dict(stats["filter_sets_differing"]) == dict(stats["filter_sets_lacking_dst"]) == {"val": 0, "test": 0}
        assert imported.warned == []
        return
    node_type = ds.artifact("nodes.parquet")["type"] if imported.name.startswith("thgl-") else None
    edge_type = np.asarray(ds.columns["edge_type"])
    pools = {r: set(ds.dst[edge_type == r].tolist()) for r in np.unique(edge_type).tolist()}
    for split in ("val", "test"):
        src, dst, t, rel = split_queries(ds, split)
        negatives = ds.negatives(split)
        truth: dict[tuple, set] = {}
        for key in zip(t.tolist(), src.tolist(), rel.tolist(), dst.tolist()):
            truth.setdefault(key[:3], set()).add(key[3])
        outside = clashing = holding = 0
        for i, key in enumerate(zip(t.tolist(), src.tolist(), rel.tolist())):
            drawn = negatives.negatives[i, :negatives.count[i]].tolist()
            pool = pools[key[2]] if node_type is None else set(np.flatnonzero(node_type == node_type[dst[i]]).tolist())
            outside += sum(n not in pool for n in drawn)
            clashing += sum(n in truth[key] for n in drawn)
            holding += int(dst[i] in drawn)
        assert stats["negatives_outside_pool"][split] == outside
        assert stats["negatives_in_conflict_set"][split] == clashing
        assert stats["negatives_holding_dst"][split] == holding
        if node_type is not None:
            assert outside == clashing == stats["short_pool_queries"][split] == 0
        else:
            assert outside > 0 and stats["short_pool_queries"][split] > 0
    if node_type is not None:
        assert imported.warned == []
    else:
        assert len(imported.warned) == 2 and all("fallback" in text for text in imported.warned)
        assert f"{stats['negatives_outside_pool']['test']} negatives of the test split lie outside" in \
            imported.warned[1]


def pytgb_mrr(name: str, pos: np.ndarray, negatives: list[np.ndarray]) -> tuple[float, float]:
    """py-tgb's Evaluator, one call per query (its examples' pattern), averaged: (mrr, hits@10)."""
    from tgb.linkproppred.evaluate import Evaluator

    theirs = Evaluator(name=name)
    out = [theirs.eval({"y_pred_pos": pos[i:i + 1], "y_pred_neg": negatives[i][None, :], "eval_metric": ["mrr"]})
           for i in range(len(pos))]
    return float(np.mean([o["mrr"] for o in out])), float(np.mean([o["hits@10"] for o in out]))


def test_evaluators_agree_with_pytgbs_and_ours_refuses_nan(imported: SimpleNamespace) -> None:
    ds, pytgb = imported.ds, imported.pytgb
    src, dst, t, rel = split_queries(ds, "test")
    expected = pytgb.negative_sampler.query_batch(src, dst, t, rel, split_mode="test")
    rng = np.random.default_rng(1)
    evaluator = ds.get_evaluator()
    if ds.task["type"] == "time-filtered-ranking":
        scores = rng.integers(0, 5, (len(src), ds.num_nodes)).astype(np.float32)   # ties on purpose
        theirs = pytgb_mrr(imported.name, scores[np.arange(len(src)), dst],
                           [scores[i, np.asarray(row)] for i, row in enumerate(expected)])
        perm = rng.permutation(len(src))
        batches = [(ids, scores[ids]) for ids in np.array_split(perm, 4)]
        for ours in (evaluator.evaluate_scores(scores), evaluator.evaluate_scores(batches, split="test"),
                     evaluator.evaluate({"query": perm, "scores": scores[perm]})):
            assert ours["metrics"]["mrr"] == pytest.approx(theirs[0], abs=1e-6)
            assert ours["metrics"]["hits@10"] == pytest.approx(theirs[1], abs=1e-6)
            assert ours["num_queries"] == len(src) and ours["split"] == "test"
        scores[3, 0] = np.nan
        with pytest.raises(ScoreError, match="query=3 .*nan_to_num"):
            evaluator.evaluate_scores(scores)
        with pytest.raises(SubmissionError, match="'scores', row 3.*nan_to_num"):
            evaluator.evaluate({"query": np.arange(len(src)), "scores": scores})
        return
    negatives = ds.negatives("test")
    pos = rng.integers(0, 5, len(src)).astype(np.float32)
    neg = rng.integers(0, 5, negatives.negatives.shape).astype(np.float32)
    theirs = pytgb_mrr(imported.name, pos, [neg[i, :negatives.count[i]] for i in range(len(src))])
    submission = {"query": np.arange(len(src)), "pos_score": pos,
                  "neg_scores": [neg[i, :negatives.count[i]].tolist() for i in range(len(src))]}
    ours = evaluator.evaluate(submission)
    assert ours["metrics"]["mrr"] == pytest.approx(theirs[0], abs=1e-6)
    assert ours["metrics"]["hits@10"] == pytest.approx(theirs[1], abs=1e-6)
    pos[0] = np.nan                               # py-tgb scores a NaN positive as rank 1 (MRR 1.0); ours refuses
    with pytest.raises(SubmissionError, match="pos_score"):
        evaluator.evaluate({**submission, "pos_score": pos})


# --- one dataset is enough for the rest ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def smallpedia(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    folder = tmp_path_factory.mktemp("smallpedia")
    files = formats.write(folder / "files", "tkgl-smallpedia", n_edges=300, seed=2)
    zipped = formats.zip_dataset(files, folder / "zips")
    stats = small_stats("tkgl-smallpedia", formats.load_with_pytgb(files))
    import_tgb("tkgl-smallpedia", zipped, cache_dir=folder / "cache", expected_stats=stats)
    return SimpleNamespace(ds=tgbhub.load_dataset("tgb/tkgl-smallpedia", cache_dir=folder / "cache"), zipped=zipped,
                           cache=folder / "cache")


def test_a_submission_file_is_graded_by_the_cli(smallpedia: SimpleNamespace, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from tgbhub.cli import main
    from tgbhub.evaluate.submission import write_submission

    evaluator = smallpedia.ds.get_evaluator()
    scores = np.random.default_rng(4).random((len(evaluator.filter_sets("test")), smallpedia.ds.num_nodes),
                                             dtype=np.float32)
    order = np.arange(len(scores))[::-1]
    write_submission({"query": order, "scores": scores[order]}, tmp_path / "submission.parquet")
    assert main(["--cache-dir", str(smallpedia.cache), "evaluate", "tgb/tkgl-smallpedia",
                 str(tmp_path / "submission.parquet"), "--json"]) == 0
    graded = json.loads(capsys.readouterr().out)
    assert graded["task_type"] == "time-filtered-ranking" and graded["split"] == "test"
    assert graded["metrics"] == pytest.approx(evaluator.evaluate_scores(scores)["metrics"], abs=1e-12)


def test_in_process_grading_refuses_what_it_cannot_grade(smallpedia: SimpleNamespace) -> None:
    evaluator = smallpedia.ds.get_evaluator()
    n, v = len(evaluator.filter_sets("val")), smallpedia.ds.num_nodes
    scores = np.zeros((n, v), dtype=np.float32)
    with pytest.raises(ScoreError, match="got no scores"):
        evaluator.evaluate_scores([(np.arange(n - 1), scores[:-1])], split="val")
    with pytest.raises(ScoreError, match="twice"):
        evaluator.evaluate_scores([(np.arange(n), scores), (np.array([0]), scores[:1])], split="val")
    with pytest.raises(ScoreError, match=f"expected \\({n}, {v}\\)"):
        evaluator.evaluate_scores(scores[:, 1:], split="val")
    with pytest.raises(SubmissionError, match=f"all {v} nodes"):
        evaluator.evaluate({"query": np.arange(n), "scores": scores[:, 1:]}, split="val")
    tied = evaluator.evaluate_scores(scores, split="val", detail=True)          # a constant scorer: middle rank
    sets = evaluator.filter_sets("val")
    assert_array_equal(tied["per_query"]["rank"], 1 + (v - np.diff(sets.offsets)) / 2)
    torch = pytest.importorskip("torch")
    scores[np.arange(n), np.asarray(sets.dst)] = 1.0                            # every true destination first
    batches = [(torch.arange(n)[k::2], torch.from_numpy(scores[k::2])) for k in (1, 0)]
    assert evaluator.evaluate_scores(batches, split="val")["metrics"]["mrr"] == 1.0


def test_statistics_other_than_published_are_refused(smallpedia: SimpleNamespace, tmp_path: Path) -> None:
    with pytest.raises(IntegrityError) as info:
        import_tgb("tkgl-smallpedia", smallpedia.zipped, cache_dir=tmp_path)    # the catalogue's: 550,376 edges
    message = str(info.value)
    assert "num_edges" in message and "num_relations" in message and "Nothing was installed" in message
    assert not formats.installed(tmp_path / "tgb")


def _replace_member(source: Path, target: Path, suffix: str, data: bytes) -> Path:
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(target, "w") as changed:
        for item in original.infolist():
            changed.writestr(item, data if item.filename.endswith(suffix) else original.read(item))
    return target


def test_a_pickle_that_is_not_this_edge_lists_is_refused(smallpedia: SimpleNamespace, tmp_path: Path) -> None:
    with zipfile.ZipFile(smallpedia.zipped) as archive:
        table = pickle.loads(archive.read("tkgl-smallpedia_test_ns.pkl"))
    key = next(iter(table))
    broken = _replace_member(smallpedia.zipped, tmp_path / smallpedia.zipped.name, "_test_ns.pkl",
                             pickle.dumps({k: v for k, v in table.items() if k != key}))
    with pytest.raises(GenerationError, match="has no entry for the query"):
        import_tgb("tkgl-smallpedia", broken, cache_dir=tmp_path / "cache", expected_stats={})
    assert not formats.installed(tmp_path / "cache" / "tgb")


def test_a_tampered_filter_set_is_kept_and_reported(smallpedia: SimpleNamespace, tmp_path: Path) -> None:
    """A conflict set with a node removed (and one with a node added) is not the set the edges determine: the import
    warns, naming the first such key and both sets, counts them in the manifest, and keeps TGB's sets, which py-tgb
    grades against."""
    with zipfile.ZipFile(smallpedia.zipped) as archive:
        table = pickle.loads(archive.read("tkgl-smallpedia_test_ns.pkl"))
    crowded = max(table, key=lambda k: (len(table[k]), k))  # the largest set (here of one node: it empties)
    removed = int(np.sort(table[crowded])[-1])
    tampered = {**table, crowded: np.setdiff1d(table[crowded], [removed])}
    spare = next(k for k in table if k != crowded)
    added = int(next(n for n in range(smallpedia.ds.num_nodes) if n not in table[spare]))
    tampered[spare] = np.append(table[spare], added)
    broken = _replace_member(smallpedia.zipped, tmp_path / smallpedia.zipped.name, "_test_ns.pkl",
                             pickle.dumps(tampered))
    first = min(int(np.flatnonzero(_key_rows(smallpedia.ds, "test", k))[0]) for k in (crowded, spare))
    shown = crowded if _key_rows(smallpedia.ds, "test", crowded)[first] else spare
    with pytest.warns(SourceWarning, match=rf"2 of the \d+ time-aware filter sets of the test split differ .*"
                                           rf"\(t={shown[0]}, src={shown[1]}, edge_type={shown[2]}\): the pickle holds "
                                           r".* queries' sets lack their own destination: py-tgb then ranks it"):
        manifest = import_tgb("tkgl-smallpedia", broken, cache_dir=tmp_path / "cache", expected_stats={})
    assert dict(manifest.stats["filter_sets_differing"]) == {"val": 0, "test": 2}
    # the removed node is a true destination: its queries now rank it against itself in py-tgb (named, counted)
    assert manifest.stats["filter_sets_lacking_dst"]["test"] == int(
        (_key_rows(smallpedia.ds, "test", crowded) & (split_queries(smallpedia.ds, "test")[1] == removed)).sum()) > 0
    assert manifest.stats["filter_sets_checked"]["test"] == len(table)
    ds = tgbhub.load_dataset("tgb/tkgl-smallpedia", cache_dir=tmp_path / "cache")
    sets = ds.get_evaluator().filter_sets("test")
    for key, kept in ((crowded, tampered[crowded]), (spare, tampered[spare])):
        i = int(np.flatnonzero(_key_rows(ds, "test", key))[0])
        assert_array_equal(sets.indices[sets.offsets[i]:sets.offsets[i + 1]], np.unique(kept))  # TGB's, as pickled


def _key_rows(ds, split: str, key: tuple) -> np.ndarray:
    """Which rows of ``split`` are queries of ``key = (t, src, edge_type)``."""
    src, _, t, rel = split_queries(ds, split)
    return (t == key[0]) & (src == key[1]) & (rel == key[2])


def test_thgl_negatives_of_another_type_are_counted_and_reported(tmp_path: Path) -> None:
    """A THG negative that is not of the true destination's node type is outside the query's pool: the import warns
    and counts it for every query of its key; the negatives stay TGB's."""
    files = formats.write(tmp_path / "files", "thgl-software", n_edges=300, seed=5)
    zipped = formats.zip_dataset(files, tmp_path / "zips")
    pytgb = formats.load_with_pytgb(files)
    with zipfile.ZipFile(zipped) as archive:
        table = pickle.loads(archive.read("thgl-software_val_ns.pkl"))
    key = next(iter(table))
    node_type = pytgb.node_type
    rows = (pytgb.full_data["timestamps"] == key[0]) & (pytgb.full_data["sources"] == key[1]) & \
        (pytgb.full_data["edge_type"] == key[2]) & pytgb.val_mask
    wanted = node_type[pytgb.full_data["destinations"][rows][0]]
    stranger = int(np.flatnonzero(node_type != wanted)[0])
    table[key] = np.concatenate([[stranger], table[key][1:]])
    broken = _replace_member(zipped, tmp_path / zipped.name, "_val_ns.pkl", pickle.dumps(table))
    with pytest.warns(SourceWarning, match=rf"{int(rows.sum())} negatives of the val split lie outside their query's "
                                           rf"pool and 0 in its conflict set.*\(t={key[0]}, src={key[1]}, "
                                           rf"edge_type={key[2]}, dst="):
        manifest = import_tgb("thgl-software", broken, cache_dir=tmp_path / "cache", expected_stats={})
    assert dict(manifest.stats["negatives_outside_pool"]) == {"val": int(rows.sum()), "test": 0}
    assert dict(manifest.stats["negatives_in_conflict_set"]) == {"val": 0, "test": 0}
    ds = tgbhub.load_dataset("tgb/thgl-software", cache_dir=tmp_path / "cache")
    ours = _key_rows(ds, "val", key)
    assert ours.sum() == rows.sum() and (ds.negatives("val").negatives[ours, 0] == stranger).all()  # TGB's, kept


def test_a_node_type_file_naming_unknown_nodes_is_refused(tmp_path: Path) -> None:
    files = formats.write(tmp_path / "files", "thgl-software", n_edges=200, seed=3)
    text = files.files["nodetype"].read_bytes() + b"987654321,1\r\n"
    broken = _replace_member(formats.zip_dataset(files, tmp_path / "zips"), tmp_path / "thgl-software.zip",
                             "_nodetype.csv", text)
    with pytest.raises(GenerationError, match="987654321, which no edge has"):
        import_tgb("thgl-software", broken, cache_dir=tmp_path / "cache", expected_stats={})


def test_a_time_filtered_dataset_has_filters_not_negatives(smallpedia: SimpleNamespace) -> None:
    """1-vs-all data keep filter sets; asking for 1-vs-q negatives names the splits that have some (none), instead
    of reaching for the window task's negatives."""
    from tgbhub.errors import InvalidNameError

    with pytest.raises(InvalidNameError, match="splits with negatives: none"):
        smallpedia.ds.negatives("test")
