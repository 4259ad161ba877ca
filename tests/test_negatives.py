"""Pre-generated negatives: never a true edge, rectangular, deterministic per query, served by ds.negatives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tgbhub
from generators.tgrab.artifacts import build_folder
from generators.ranking import RANKING_Q
from generators.tgrab.catalogue import entries
from generators.negatives import (audit_pooled, dst_time_filtered, hist_rnd, history_csr, node_type_filtered,
                                         relation_pools, stream_key, time_filtered, type_pools)
from tgbhub.errors import InvalidNameError
from tgbhub.hashing import file_sha256


@pytest.fixture(scope="module")
def ds(shared_cache: Path) -> tgbhub.data.TemporalGraphDataset:
    return tgbhub.load_dataset("t-grab/pdet-8-1", cache_dir=shared_cache)


def _truth_by_source(ds, split: str) -> dict[tuple[int, int], set[int]]:
    rows = ds.split(split)
    out: dict[tuple[int, int], set[int]] = {}
    for t, s, d in zip(rows.t.tolist(), rows.src.tolist(), rows.dst.tolist()):
        out.setdefault((t, s), set()).add(d)
    return out


@pytest.mark.parametrize("split", ["val", "test"])
def test_negatives_are_never_true_edges_self_or_repeated(ds, split: str) -> None:
    negatives = ds.negatives(split)
    rows = ds.split(split)
    queries = rows.src < rows.dst
    assert len(negatives) == int(queries.sum())  # one query per undirected edge
    assert negatives.negatives.dtype == np.int32 and negatives.negatives.shape == (len(negatives), RANKING_Q)
    assert np.array_equal(negatives.t, rows.t[queries]) and np.array_equal(negatives.dst, rows.dst[queries])
    truth = _truth_by_source(ds, split)
    for i in range(len(negatives)):
        row = negatives.negatives[i]
        real = row[: negatives.count[i]]
        assert (row[negatives.count[i]:] == -1).all() and (real >= 0).all()
        assert len(set(real.tolist())) == len(real)
        conflicts = truth[(int(negatives.t[i]), int(negatives.src[i]))]
        assert not conflicts & set(real.tolist()) and int(negatives.src[i]) not in real


def test_historical_half_comes_from_history(ds) -> None:
    negatives = ds.negatives("test")
    start = ds.snapshot_splits["test"][0]
    before = ds.t < start
    history: dict[int, set[int]] = {}
    for s, d in zip(ds.src[before].tolist(), ds.dst[before].tolist()):
        history.setdefault(s, set()).add(d)
    truth = _truth_by_source(ds, "test")
    for i in range(len(negatives)):
        s = int(negatives.src[i])
        pool = history.get(s, set()) - truth[(int(negatives.t[i]), s)]
        drawn = negatives.negatives[i, : negatives.count[i]].tolist()
        # hist_rnd: min(q/2, pool) from the source's history, first; the rest from outside it (100 nodes: ample)
        n_hist = min(RANKING_Q // 2, len(pool))
        assert set(drawn[:n_hist]) <= pool and not set(drawn[n_hist:]) & history.get(s, set())
        assert negatives.count[i] == RANKING_Q


def test_subset_regenerates_alone_and_seeds_differ_by_split(ds) -> None:
    negatives = ds.negatives("test")
    start, stop = ds.snapshot_splits["test"]
    rows = ds.split("test")
    first = int(np.searchsorted(ds.t, start))
    history = history_csr(ds.src[:first], ds.dst[:first], ds.num_nodes)
    spec = ds.manifest.recipe.params["negatives"]
    key = stream_key(spec["namespace"], "test", ds.manifest.recipe.seed)
    query_rows = np.flatnonzero(rows.src < rows.dst)
    picked = np.array([3, 17, len(query_rows) - 1])
    again, count = hist_rnd(rows.t, rows.src, rows.dst, history, ds.num_nodes, RANKING_Q, spec["hist_ratio"], key,
                            queries=query_rows[picked], ids=picked)
    assert np.array_equal(again, negatives.negatives[picked]) and np.array_equal(count, negatives.count[picked])
    other, _ = hist_rnd(rows.t, rows.src, rows.dst, history, ds.num_nodes, RANKING_Q, spec["hist_ratio"],
                        stream_key(spec["namespace"], "val", ds.manifest.recipe.seed), queries=query_rows[picked],
                        ids=picked)
    assert not np.array_equal(other, again)


def test_short_pools_are_padded_with_a_count() -> None:
    # 4 nodes, q = 5: node 0's pool is at most {1, 2, 3} minus its conflicts
    t, src, dst = np.array([0, 0]), np.array([0, 0]), np.array([1, 2])
    negatives, count = hist_rnd(t, src, dst, history_csr(np.array([0]), np.array([3]), 4), 4, 5, 0.5,
                                stream_key("x", "test", 0))
    # conflicts {1, 2} and the source 0 leave only node 3 (historical): count 1, then -1 padding
    assert count.tolist() == [1, 1] and negatives.tolist() == [[3, -1, -1, -1, -1]] * 2


def test_tkg_and_thg_strategies_exclude_conflicts() -> None:
    rng = np.random.default_rng(0)
    t = rng.integers(0, 5, 300)
    src, rel, dst = rng.integers(0, 40, 300), rng.integers(0, 3, 300), rng.integers(0, 40, 300)
    true = {}
    for a, b, c, d in zip(t.tolist(), src.tolist(), rel.tolist(), dst.tolist()):
        true.setdefault((a, b, c), set()).add(d)
    offsets, indices = time_filtered(t, src, rel, dst)
    for i in range(300):
        assert set(indices[offsets[i]:offsets[i + 1]].tolist()) == true[(t[i], src[i], rel[i])]
    key = stream_key("tkg", "test", 1)
    neg, count = dst_time_filtered(t, src, rel, dst, rel, dst, 40, 10, key)
    types = rng.integers(0, 2, 40)
    typed, typed_count = node_type_filtered(t, src, rel, dst, types, 10, key)
    for i in range(300):
        conflicts = true[(t[i], src[i], rel[i])]
        assert not conflicts & set(neg[i, :count[i]].tolist()) and count[i] == 10
        real = typed[i, :typed_count[i]]
        assert not conflicts & set(real.tolist()) and (types[real] == types[dst[i]]).all()
    assert np.array_equal(neg, dst_time_filtered(t, src, rel, dst, rel, dst, 40, 10, key)[0])  # deterministic


def test_filter_sets_are_sorted_without_repeats_and_shared_by_a_key() -> None:
    t, src, rel, dst = (np.array(x) for x in ([5, 5, 5, 5, 6, 5], [1, 1, 1, 2, 1, 1], [0, 0, 0, 0, 0, 1],
                                              [9, 3, 9, 9, 3, 4]))
    offsets, indices = time_filtered(t, src, rel, dst)  # rows 0 and 2 repeat (5, 1, 0, 9)
    sets = [indices[offsets[i]:offsets[i + 1]].tolist() for i in range(len(t))]
    assert sets == [[3, 9], [3, 9], [3, 9], [9], [3], [4]]
    empty = time_filtered(*(np.zeros(0, dtype=np.int64) for _ in range(4)))
    assert empty[0].tolist() == [0] and len(empty[1]) == 0


def test_the_samplers_pools_check_negatives_drawn_elsewhere() -> None:
    """The pools a sampler draws from are the ones negatives drawn elsewhere (TGB's pickles) are checked against:
    the samplers' own draws pass; a negative moved outside the pool or into the conflict set is counted."""
    rng = np.random.default_rng(3)
    n, nodes = 400, 60
    t, src, rel = rng.integers(0, 6, n), rng.integers(0, nodes, n), rng.integers(0, 4, n)
    types = rng.integers(0, 3, nodes)
    dst = rng.integers(0, nodes, n)
    key = stream_key("audit", "test", 0)
    pools = type_pools(dst, types)
    assert all(pools.indices[pools.offsets[p]:pools.offsets[p + 1]].tolist() == np.flatnonzero(types == k).tolist()
               for p, k in enumerate(np.unique(types[dst])))
    negatives, count = node_type_filtered(t, src, rel, dst, types, 8, key)
    clean = audit_pooled(negatives, count, t, src, rel, dst, pools, nodes)
    assert clean.outside_pool.sum() == clean.in_conflict_set.sum() == clean.holds_dst.sum() == 0
    assert ((clean.pool_left < count) == 0).all()
    tampered = negatives.copy()
    stranger = int(np.flatnonzero(types != types[dst[0]])[0])
    tampered[0, 0], tampered[1, 0] = stranger, dst[1]  # another type; the query's own destination
    found = audit_pooled(tampered, count, t, src, rel, dst, pools, nodes)
    assert found.outside_pool.tolist()[:2] == [1, 0] and found.outside_pool[2:].sum() == 0
    assert found.in_conflict_set.tolist()[:2] == [0, 1] and bool(found.holds_dst[1]) and found.holds_dst.sum() == 1

    pools = relation_pools(rel, rel, dst)  # wikidata: the relation's objects anywhere in the data
    assert all(set(pools.indices[pools.offsets[pools.pool_of[i]]:pools.offsets[pools.pool_of[i] + 1]].tolist())
               == set(dst[rel == rel[i]].tolist()) for i in range(n))
    negatives, count = dst_time_filtered(t, src, rel, dst, rel, dst, nodes, 50, key)
    found = audit_pooled(negatives, count, t, src, rel, dst, pools, nodes)
    short = found.pool_left < count
    assert short.any() and found.outside_pool[short].sum() > 0
    # a short pool is used up first (less the source), only then filled from outside it
    assert (found.outside_pool <= np.maximum(count - found.pool_left + 1, 0)).all()
    assert found.in_conflict_set.sum() == 0  # unlike TGB's fallback, the sampler here never draws a true object


def test_manifest_declares_the_files_and_rebuilds_them_byte_for_byte(ds, tmp_path: Path) -> None:
    task = ds.manifest.task_named("ranking")
    assert task["type"] == "one-vs-many-ranking" and task["negatives"]["q"] == RANKING_Q
    assert set(task["negatives"]["files"]) == {"val", "test"}
    entry = next(e for e in entries() if e.name == ds.name)
    build_folder(entry, tmp_path)
    for name in task["negatives"]["files"].values():
        assert file_sha256(tmp_path / name) == ds.manifest.file(name).sha256
    with pytest.raises(InvalidNameError, match="splits with negatives: val, test"):
        ds.negatives("train")
