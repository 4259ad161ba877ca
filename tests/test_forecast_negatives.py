"""Per-window negatives of link forecasting (generators/forecast): the pool rules of docs/forecasting.md (Negatives),
determinism."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tgbhub
from tgbhub.errors import GenerationError
from tgbhub.forecasting.windows import events, pair_code, window_index
from generators.forecast.negatives import group_negatives
from tgbhub.forecasting import task as definition
from generators.forecast.task import SEED, build, dataset_view
from generators.negatives import stream_key


@pytest.fixture(scope="module")
def ds(shared_cache: Path):
    return tgbhub.load_dataset("t-grab/ce-4", cache_dir=shared_cache)


@pytest.mark.parametrize("split", ["val", "test"])
def test_negatives_follow_the_pool_rules(ds, split: str) -> None:
    ev = events(ds)
    index = window_index(ev, split, 1)
    negatives = ds.window_negatives(split)
    lo, hi = ev.range(split)
    codes = ev.pair_codes()
    neg = pair_code(negatives.neg_src, negatives.neg_dst, ev.num_nodes)
    assert len(negatives) == hi - lo and (negatives.window == index.window_of(np.arange(lo, hi))).all()
    assert (negatives.neg_src < negatives.neg_dst).all()  # symmetric graph: canonical u < v, never a self loop
    for w in index.nonempty[:: max(1, len(index.nonempty) // 40)]:
        a, b = index.lo[w], index.hi[w]
        mine = neg[a - lo:b - lo]
        assert not np.isin(mine, codes[a:b]).any(), "a negative is positive in its own window"
        from_pool = negatives.fill[a - lo:b - lo] == 0
        assert np.isin(mine[from_pool], codes[:a]).all(), "a pool negative was not seen before the window"
        assert len(np.unique(mine)) == len(mine), "negatives repeat inside a window"


def test_rebuilds_are_identical_and_the_seed_matters(ds) -> None:
    columns = {ds.manifest.graph["edges_file"]: {"t": ds.t, "src": ds.src, "dst": ds.dst}}
    first, second = build(ds.manifest, columns, SEED, definition), build(ds.manifest, columns, SEED, definition)
    assert all((first[f][c] == second[f][c]).all() for f in first for c in first[f])
    other = build(ds.manifest, columns, 1, definition)
    file = "window-negatives-test.parquet"
    assert (first[file]["window"] == other[file]["window"]).all()
    assert (first[file]["neg_dst"] != other[file]["neg_dst"]).mean() > 0.5
    assert set(dataset_view(ds.manifest, columns).__dict__) == {"manifest", "t", "src", "dst"}


def test_a_short_pool_is_topped_up_with_distinct_random_pairs() -> None:
    # 6 nodes, directed; history has one pair (0, 1); a window of 4 events needs 4 negatives
    src = np.array([0, 2, 3, 4, 5])
    dst = np.array([1, 3, 4, 5, 0])
    t = np.array([0, 1, 1, 1, 1])
    codes = pair_code(src, dst, 6)
    key = stream_key("unit", "test", 0)
    neg_src, neg_dst, fill = group_negatives(codes, t, np.array([0]), np.array([1]), np.array([5]), 6, False, key)
    drawn = pair_code(neg_src, neg_dst, 6)
    assert fill.tolist() == [0, 1, 1, 1] and drawn[0] == codes[0]
    assert (neg_src != neg_dst).all() and len(set(drawn.tolist())) == 4 and not np.isin(drawn, codes[1:]).any()
    again = group_negatives(codes, t, np.array([0]), np.array([1]), np.array([5]), 6, False, key)
    assert (again[1] == neg_dst).all()


def test_pairs_run_out_then_negatives_repeat_but_never_match_a_positive() -> None:
    # 3 nodes undirected: 3 pairs; a window of 3 events over 2 distinct pairs leaves 1 pair to draw 3 times
    src, dst, t = np.array([0, 0, 0]), np.array([1, 2, 1]), np.array([5, 5, 5])
    codes = pair_code(src, dst, 3)
    neg_src, neg_dst, fill = group_negatives(codes, t, np.array([0]), np.array([0]), np.array([3]), 3, True,
                                             stream_key("unit", "x", 0))
    assert pair_code(neg_src, neg_dst, 3).tolist() == [1 * 3 + 2] * 3 and fill.tolist() == [1, 1, 1]


def test_no_pair_left_is_an_error_not_a_hang() -> None:
    src, dst, t = np.array([0]), np.array([1]), np.array([7])
    with pytest.raises(GenerationError, match=r"group 0 \(events 0\.\.0, t 7\.\.7\) needs negatives, but all 1 "
                                              r"unordered pairs of the 2-node graph are positive.*more nodes"):
        group_negatives(pair_code(src, dst, 2), t, np.array([0]), np.array([0]), np.array([1]), 2, True,
                        stream_key("unit", "x", 0))
    with pytest.raises(GenerationError, match="num_nodes=1 node.*at least 2 nodes"):
        group_negatives(np.array([0]), t, np.array([0]), np.array([0]), np.array([1]), 1, False,
                        stream_key("unit", "x", 0))
