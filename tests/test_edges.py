import numpy as np
import pytest

from generators.edges import from_undirected, lexicographic_pairs


def test_both_directions_sorted_and_deduplicated() -> None:
    # snapshot 0: {2,1}, {0,3}, {1,2} again (a repeat); snapshot 1 empty; snapshot 2: {3,0}
    edges = from_undirected(np.array([3, 0, 1]), np.array([2, 0, 1, 3]), np.array([1, 3, 2, 0]), num_nodes=4)
    rows = list(zip(edges.t.tolist(), edges.src.tolist(), edges.dst.tolist()))
    assert rows == [(0, 0, 3), (0, 1, 2), (0, 2, 1), (0, 3, 0), (2, 0, 3), (2, 3, 0)]
    assert edges.num_snapshots == 3
    assert (edges.t.dtype, edges.src.dtype, edges.dst.dtype) == (np.int64, np.int32, np.int32)


def test_counts_must_match_edges() -> None:
    with pytest.raises(ValueError, match="sum to 2"):
        from_undirected(np.array([2]), np.array([0]), np.array([1]), num_nodes=2)


def test_node_ids_must_be_in_range() -> None:
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        from_undirected(np.array([1]), np.array([0]), np.array([3]), num_nodes=3)


def test_lexicographic_pairs_follow_itertools_combinations() -> None:
    import itertools

    u, v = lexicographic_pairs(6)
    assert list(zip(u.tolist(), v.tolist())) == list(itertools.combinations(range(6), 2))
