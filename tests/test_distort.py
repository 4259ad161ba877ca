"""TLPCF distortions (docs/derived.md, The two distortions): exact invariants, determinism, distributions, probes."""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tgbhub.errors import GenerationError
from generators.negatives import _mix
from generators.tlpcf.distort import (KEY_VERSION, _stable_order, canonical_params, distort,
                                             distort_with_facts, inside, open_uniform, raw_draws, shuffle_permutation,
                                             tau_bar, derivation_key, derivation_string)
from generators.transforms import names, transform
from tgbhub.hashing import content_digest

ROOT = Path(__file__).resolve().parent.parent
DIGEST = "0f" * 32  # a stand-in parent content digest
MASK = (1 << 64) - 1
COLUMNS = {"t": np.float64, "src": np.int32, "dst": np.int32, "orig_event_id": np.int64, "copy_idx": np.int32}


# ----------------------------------------------------------------------------------------------------- helpers

def _splitmix_reference(key: int, i: int) -> int:
    """Pure-Python SplitMix64 output ``i`` for seed ``key`` (independent of the numpy implementation)."""
    z = (key + (i + 1) * 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def _directed_stream(n: int = 400, nodes: int = 30, seed: int = 7) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A small directed stream sorted by (t, src, dst), with repeated pairs and tied timestamps."""
    rng = np.random.default_rng(seed)  # test data only: its exact values do not matter
    t = np.sort(rng.integers(0, n // 2, n)).astype(np.int64)
    src = rng.integers(0, nodes, n).astype(np.int32)
    dst = rng.integers(0, nodes, n).astype(np.int32)
    order = np.lexsort((dst, src, t))
    return src[order], dst[order], t[order]


def _symmetric(src: np.ndarray, dst: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Store each undirected edge both ways (self-loops once), sorted by (t, src, dst)."""
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    loops = lo == hi
    s = np.concatenate([lo, hi[~loops]])
    d = np.concatenate([hi, lo[~loops]])
    tt = np.concatenate([t, t[~loops]])
    order = np.lexsort((d, s, tt))
    return s[order], d[order], tt[order]


def _events_in(src, dst, t, symmetric):
    keep = src <= dst if symmetric else np.ones(len(t), dtype=bool)
    return src[keep], dst[keep], t[keep]


def _events_out(cols, symmetric):
    keep = cols["src"] <= cols["dst"] if symmetric else np.ones(len(cols["t"]), dtype=bool)
    return {name: values[keep] for name, values in cols.items()}


def _pair_counts(src, dst):
    return dict(zip(*np.unique(src.astype(np.int64) << 32 | dst.astype(np.int64), return_counts=True)))


def _degrees(src, dst, nodes):
    return np.bincount(src, minlength=nodes) + np.bincount(dst, minlength=nodes)


def _is_sorted(cols) -> bool:
    direction = (cols["src"] > cols["dst"]).astype(np.int64)
    order = np.lexsort((direction, cols["copy_idx"], cols["orig_event_id"], cols["t"]))
    return np.array_equal(order, np.arange(len(order)))


def _check_mirrors(cols) -> None:
    """Every src > dst row directly follows its src < dst twin, with the same t, event and copy."""
    mirror = np.flatnonzero(cols["src"] > cols["dst"])
    assert np.all(mirror > 0)
    twin = mirror - 1
    assert np.array_equal(cols["src"][twin], cols["dst"][mirror])
    assert np.array_equal(cols["dst"][twin], cols["src"][mirror])
    for name in ("t", "orig_event_id", "copy_idx"):
        assert np.array_equal(cols[name][twin], cols[name][mirror])
    forward = cols["src"] < cols["dst"]
    assert forward.sum() == len(mirror)


def _check_columns(cols) -> None:
    assert list(cols) == list(COLUMNS)
    for name, dtype in COLUMNS.items():
        assert cols[name].dtype == dtype, name
        assert len(cols[name]) == len(cols["t"])
    assert _is_sorted(cols)


def _check_shuffle(src, dst, t, cols, symmetric) -> None:
    """SHUFFLE's exact invariants: every real pair keeps its multiplicity; timestamps, degrees, nodes, range kept."""
    _check_columns(cols)
    es, ed, et = _events_in(src, dst, t, symmetric)
    out = _events_out(cols, symmetric)
    n = len(et)
    assert len(out["t"]) == n
    assert np.array_equal(np.sort(out["t"]), np.sort(et.astype(np.float64)))
    assert np.array_equal(np.sort(out["orig_event_id"]), np.arange(n))  # every id exactly once
    assert np.all(out["copy_idx"] == 0)
    eid = out["orig_event_id"]
    assert np.array_equal(out["src"], es[eid]) and np.array_equal(out["dst"], ed[eid])  # keeps its own pair
    assert _pair_counts(out["src"], out["dst"]) == _pair_counts(es, ed)
    nodes = int(max(src.max(), dst.max())) + 1
    assert np.array_equal(_degrees(cols["src"], cols["dst"], nodes), _degrees(src, dst, nodes))
    assert set(np.concatenate([cols["src"], cols["dst"]]).tolist()) == set(np.concatenate([src, dst]).tolist())
    assert cols["t"].min() == t.min() and cols["t"].max() == t.max()
    assert len(cols["t"]) == len(t)
    if symmetric:
        _check_mirrors(cols)


def _check_intense(src, dst, t, cols, k, symmetric) -> float:
    """INTENSE(k)'s exact invariants: k copies per event, counts and degrees times k, every copy within tau_bar;
    returns tau_bar."""
    _check_columns(cols)
    es, ed, et = _events_in(src, dst, t, symmetric)
    out = _events_out(cols, symmetric)
    n = len(et)
    tau = tau_bar(et)
    assert len(out["t"]) == k * n and len(cols["t"]) == k * len(t)
    assert np.array_equal(np.bincount(out["orig_event_id"], minlength=n), np.full(n, k))
    per_copy = out["orig_event_id"] * k + out["copy_idx"]
    assert np.array_equal(np.sort(per_copy), np.arange(k * n))  # k distinct copy_idx per event
    eid = out["orig_event_id"]
    assert np.array_equal(out["src"], es[eid]) and np.array_equal(out["dst"], ed[eid])
    assert {p: c * k for p, c in _pair_counts(es, ed).items()} == _pair_counts(out["src"], out["dst"])
    nodes = int(max(src.max(), dst.max())) + 1
    assert np.array_equal(_degrees(cols["src"], cols["dst"], nodes), k * _degrees(src, dst, nodes))
    assert set(np.concatenate([cols["src"], cols["dst"]]).tolist()) == set(np.concatenate([src, dst]).tolist())
    assert np.all(np.abs(out["t"] - et[eid].astype(np.float64)) < tau)  # strictly
    assert cols["t"].min() > t.min() - tau and cols["t"].max() < t.max() + tau
    if symmetric:
        _check_mirrors(cols)
    return tau


def _digest(cols) -> str:
    return content_digest(cols)


# ------------------------------------------------------------------------------------------ the real dataset

@pytest.fixture(scope="module")
def tgrab_test() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from generators.tgrab.artifacts import generate
    from generators.tgrab.catalogue import GENERATORS, entries

    entry = next(e for e in entries() if e.name == "t-grab/pdet-2-16")
    edges = generate({"generator": entry.generator, "version": GENERATORS[entry.generator].version,
                      "params": entry.params, "seed": entry.seed})
    lo, hi = GENERATORS[entry.generator].splits(entry.params)["test"]
    first, last = np.searchsorted(edges.t, [lo, hi])
    return edges.src[first:last], edges.dst[first:last], edges.t[first:last]


# ------------------------------------------------------------------------------------- parameters and keys

def test_kinds_and_canonical_params() -> None:
    assert names() == ["shuffle", "intense"]
    assert [p.name for p in transform("intense").params] == ["k"] and not transform("shuffle").params
    assert canonical_params("shuffle", {}) == {"scope": "test"}
    assert canonical_params("shuffle", {"scope": "test"}) == {"scope": "test"}
    got = canonical_params("intense", {"scope": "test", "k": np.int64(5)})
    assert got == {"k": 5, "scope": "test"} and list(got) == ["k", "scope"] and type(got["k"]) is int


@pytest.mark.parametrize(("kind", "params", "needle"), [
    ("jitter", {}, "unknown transform 'jitter'"),
    ("shuffle", {"k": 5}, "no parameter 'k'"),
    ("intense", {"k": 5, "width": 2}, "no parameter 'width'"),
    ("intense", {"k": 5, "seed": 0}, "pass the seed separately"),
    ("intense", {}, "needs 'k'"),
    ("intense", {"k": 0}, r"k=0 is out of range; k: int in \[1, 100\]"),
    ("intense", {"k": -3}, r"k=-3 is out of range; k: int in \[1, 100\]"),
    ("intense", {"k": 999999}, r"k=999999 is out of range; k: int in \[1, 100\]"),
    ("intense", {"k": 5.0}, "k must be an int"),
    ("intense", {"k": "5"}, "k must be an int"),
    ("intense", {"k": True}, "k must be an int"),
    ("shuffle", {"scope": "val"}, "scope 'val' is not supported"),
])
def test_canonical_params_refuses(kind, params, needle) -> None:
    with pytest.raises(GenerationError, match=needle):
        canonical_params(kind, params)


def test_variant_key_is_canonical_and_documented() -> None:
    text = derivation_string(DIGEST, "intense", {"scope": "test", "k": 5}, 3)
    assert text == f"{KEY_VERSION}|{DIGEST}|intense|k=5,scope=test|3"
    assert derivation_string(DIGEST, "shuffle", {}, 0) == f"tgbhub-distort-v1|{DIGEST}|shuffle|scope=test|0"
    expected = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    assert derivation_key(DIGEST, "intense", {"k": 5}, 3) == expected
    assert derivation_key(DIGEST, "intense", {"scope": "test", "k": 5}, 3) == expected
    assert derivation_key(DIGEST, "intense", {"k": 5, "scope": "test"}, np.int64(3)) == expected
    assert derivation_key(DIGEST, "intense", {"k": 5}, 3) == GOLDEN_KEY  # pinned: the hash recipe never drifts
    keys = {derivation_key(DIGEST, kind, params, seed) for kind, params in
            (("shuffle", {}), ("intense", {"k": 1}), ("intense", {"k": 5})) for seed in range(10)}
    assert len(keys) == 30 and all(0 <= key <= MASK for key in keys)
    assert derivation_key("1f" * 32, "shuffle", {}, 0) != derivation_key(DIGEST, "shuffle", {}, 0)


@pytest.mark.parametrize("seed", [-1, 1.0, True, "0", None])
def test_variant_key_refuses_bad_seeds(seed) -> None:
    with pytest.raises(GenerationError, match="seed must be a non-negative int"):
        derivation_key(DIGEST, "shuffle", {}, seed)


@pytest.mark.parametrize("digest", ["", "a|b", "ab cd", None])
def test_variant_key_refuses_bad_digests(digest) -> None:
    with pytest.raises(GenerationError, match="parent digest"):
        derivation_key(digest, "shuffle", {}, 0)


# --------------------------------------------------------------------------------------------- the stream

def test_raw_draws_are_splitmix64_outputs() -> None:
    for key in (0, 1, 12345, MASK, derivation_key(DIGEST, "shuffle", {}, 0)):
        draws = raw_draws(key, 50)
        assert draws.dtype == np.uint64
        assert [int(x) for x in draws] == [_splitmix_reference(key, i) for i in range(50)]
        # the same finaliser as the negatives' streams
        assert int(draws[7]) == _mix(np.uint64((key + 8 * 0x9E3779B97F4A7C15) & MASK))
        assert np.array_equal(raw_draws(key, 10, start=40), draws[40:])  # counter-based: any slice alone


def test_open_uniform_is_strictly_inside_and_exact() -> None:
    extremes = np.array([0, MASK, 1 << 63, (1 << 12) - 1], dtype=np.uint64)
    u = open_uniform(extremes)
    assert u[0] == 2.0 ** -53 and u[1] == 1 - 2.0 ** -53 and u[2] == 0.5 + 2.0 ** -53 and u[3] == u[0]
    assert np.all((u > 0) & (u < 1))
    jitter = (2 * u - 1) * 0.37
    assert np.all(np.abs(jitter) < 0.37)
    # why 52 bits: the 53-bit form rounds its top value up to exactly 1
    assert (float(2 ** 53 - 1) + 0.5) * 2.0 ** -53 == 1.0


@pytest.mark.parametrize("bad", [-1, 1 << 64, 1.5, True])
def test_bad_keys_are_refused(bad) -> None:
    with pytest.raises(GenerationError, match="key must be an int"):
        raw_draws(bad, 3)
    src, dst, t = _directed_stream(20)
    with pytest.raises(GenerationError, match="key must be an int"):
        distort(src, dst, t, "shuffle", {}, bad, symmetric=False)


def test_tau_bar() -> None:
    assert tau_bar(np.array([3, 5, 11, 11], dtype=np.int64)) == 2.0
    assert tau_bar(np.array([0.5, 2.0, 1.0])) == 0.5
    assert tau_bar(np.array([0, 10 ** 15 + 1], dtype=np.int64)) == (10 ** 15 + 1) / 2
    with pytest.raises(GenerationError, match="at least 2 events, got 1"):
        tau_bar(np.array([4]))
    with pytest.raises(GenerationError, match="zero span"):
        tau_bar(np.array([4, 4, 4]))


def test_permutation_is_a_stable_sort_on_draw_then_id() -> None:
    assert _stable_order(np.array([5, 3, 5, 3, 0], dtype=np.uint64)).tolist() == [4, 1, 3, 0, 2]
    key = derivation_key(DIGEST, "shuffle", {}, 4)
    perm = shuffle_permutation(1000, key)
    assert perm.dtype == np.int64 and np.array_equal(np.sort(perm), np.arange(1000))
    draws = [_splitmix_reference(key, i) for i in range(1000)]
    assert perm.tolist() == sorted(range(1000), key=lambda i: (draws[i], i))
    assert len(shuffle_permutation(0, key)) == 0


def test_jitter_follows_the_documented_draws() -> None:
    """Copy c of event j is t_j + (2u - 1) tau_bar with u from draw j * k + c, computed here in pure Python."""
    src, dst, t = _directed_stream(60)
    k = 3
    key = derivation_key(DIGEST, "intense", {"k": k}, 2)
    cols = distort(src, dst, t, "intense", {"k": k}, key, symmetric=False)
    tau = (int(t.max()) - int(t.min())) / len(t)
    for row in range(len(cols["t"])):
        j, c = int(cols["orig_event_id"][row]), int(cols["copy_idx"][row])
        u = ((_splitmix_reference(key, j * k + c) >> 12) + 0.5) * 2.0 ** -52
        assert cols["t"][row] == float(t[j]) + (2 * u - 1) * tau


def test_float_rounding_never_reaches_tau_bar() -> None:
    tau = 2.0 ** -40
    old = np.array([1.0, 1.0, 1e6])
    jitter = np.array([tau * (1 - 2.0 ** -52), -tau * (1 - 2.0 ** -52), 0.0])
    naive = old + jitter
    assert naive[0] - old[0] == tau  # what the nudge is for
    fixed = inside(naive.copy(), old, tau)
    assert np.all(np.abs(fixed - old) < tau) and fixed[2] == 1e6
    assert fixed[0] == np.nextafter(naive[0], 0.0)


# ---------------------------------------------------------------------------------------- exact invariants

@pytest.mark.parametrize("symmetric", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_shuffle_invariants_tiny(symmetric: bool, seed: int) -> None:
    src, dst, t = _directed_stream(seed=seed + 10)
    if symmetric:
        src, dst, t = _symmetric(src, dst, t)
    key = derivation_key(DIGEST, "shuffle", {}, seed)
    cols = distort(src, dst, t, "shuffle", {}, key, symmetric=symmetric)
    _check_shuffle(src, dst, t, cols, symmetric)
    # event j got the timestamp of event perm[j]
    _, _, et = _events_in(src, dst, t, symmetric)
    out = _events_out(cols, symmetric)
    perm = shuffle_permutation(len(et), key)
    assert np.array_equal(out["t"], et[perm][out["orig_event_id"]].astype(np.float64))


@pytest.mark.parametrize("symmetric", [False, True])
@pytest.mark.parametrize("k", [1, 2, 5])
def test_intense_invariants_tiny(symmetric: bool, k: int) -> None:
    src, dst, t = _directed_stream(seed=k)
    if symmetric:
        src, dst, t = _symmetric(src, dst, t)
    cols, facts = distort_with_facts(src, dst, t, "intense", {"k": k}, derivation_key(DIGEST, "intense", {"k": k}, 0),
                                     symmetric=symmetric)
    tau = _check_intense(src, dst, t, cols, k, symmetric)
    n = len(_events_in(src, dst, t, symmetric)[2])
    assert facts == {"kind": "intense", "params": {"k": k, "scope": "test"}, "tau_bar": tau, "n_events_in": n,
                     "n_events_out": k * n, "n_rows_in": len(t), "n_rows_out": k * len(t),
                     "t_min_in": float(t.min()), "t_max_in": float(t.max()),
                     "t_min_out": float(cols["t"].min()), "t_max_out": float(cols["t"].max())}


def test_float_timestamps_and_self_loops() -> None:
    src = np.array([0, 2, 1, 3, 3, 0], dtype=np.int32)
    dst = np.array([1, 2, 0, 1, 3, 2], dtype=np.int32)  # (2,2) and (3,3) are self-loops
    t = np.array([0.25, 0.5, 0.75, 1.5, 2.0, 4.0])
    s, d, tt = _symmetric(src, dst, t)
    assert len(s) == 10  # self-loops are stored once
    for kind, params in (("shuffle", {}), ("intense", {"k": 4})):
        cols = distort(s, d, tt, kind, params, derivation_key(DIGEST, kind, params, 1), symmetric=True)
        if kind == "shuffle":
            _check_shuffle(s, d, tt, cols, True)
        else:
            _check_intense(s, d, tt, cols, 4, True)
        assert (cols["src"] == cols["dst"]).sum() == 2 * (4 if kind == "intense" else 1)


def test_tgrab_shuffle_invariants(tgrab_test) -> None:
    src, dst, t = tgrab_test
    assert len(t) == 14_080 and np.all(src != dst)
    for seed in range(3):
        key = derivation_key(DIGEST, "shuffle", {}, seed)
        cols, facts = distort_with_facts(src, dst, t, "shuffle", {}, key, symmetric=True)
        _check_shuffle(src, dst, t, cols, True)
        assert facts["n_events_in"] == facts["n_events_out"] == 7_040 and facts["n_rows_out"] == 14_080
        assert facts["tau_bar"] == (int(t.max()) - int(t.min())) / 7_040
        # event ids are the parent's src < dst rows in order: the ranking queries
        forward = src < dst
        out = _events_out(cols, True)
        assert np.array_equal(src[forward][out["orig_event_id"]], out["src"])
        # binned global counts unchanged (exact under SHUFFLE)
        edges = np.arange(1407.5, 1536, 4.0)
        assert np.array_equal(np.histogram(cols["t"], edges)[0], np.histogram(t, edges)[0])


@pytest.mark.parametrize("k", [1, 5])
def test_tgrab_intense_invariants(tgrab_test, k: int) -> None:
    src, dst, t = tgrab_test
    cols = distort(src, dst, t, "intense", {"k": k}, derivation_key(DIGEST, "intense", {"k": k}, 0), symmetric=True)
    tau = _check_intense(src, dst, t, cols, k, True)
    assert tau == 127 / 7_040
    forward = src < dst
    out = _events_out(cols, True)
    assert np.all(np.abs(out["t"] - t[forward][out["orig_event_id"]]) < tau)
    # binned counts: bins whose edges lie further than tau_bar from every event count exactly k times as many
    edges = np.arange(1407.5, 1536, 8.0)
    assert np.array_equal(np.histogram(cols["t"], edges)[0], k * np.histogram(t, edges)[0])


def test_intense_binned_counts_within_edge_bound() -> None:
    """Binned counts on continuous times: |count' - k count| <= k * (events within tau_bar of the bin's edges)."""
    t = np.cumsum(np.random.default_rng(3).exponential(1.0, 3000))
    src = np.zeros(3000, dtype=np.int32)
    dst = np.ones(3000, dtype=np.int32)
    k = 5
    cols = distort(src, dst, t, "intense", {"k": k}, derivation_key(DIGEST, "intense", {"k": k}, 0), symmetric=False)
    tau = tau_bar(t)
    edges = np.linspace(t.min() - 1, t.max() + 1, 31)
    before, after = np.histogram(t, edges)[0], np.histogram(cols["t"], edges)[0]
    near = [int(np.sum((np.abs(t - edges[b]) < tau) | (np.abs(t - edges[b + 1]) < tau))) for b in range(30)]
    assert np.all(np.abs(after - k * before) <= k * np.array(near))
    assert after.sum() == k * before.sum()


# ------------------------------------------------------------------------------------------- determinism

def test_same_key_same_bytes_and_seeds_differ(tgrab_test) -> None:
    src, dst, t = tgrab_test
    perms, jitters = set(), set()
    for seed in range(10):
        for kind, params in (("shuffle", {}), ("intense", {"k": 5})):
            key = derivation_key(DIGEST, kind, params, seed)
            a = distort(src, dst, t, kind, params, key, symmetric=True)
            b = distort(src.copy(), dst.copy(), t.copy(), kind, params, key, symmetric=True)
            assert all(a[name].tobytes() == b[name].tobytes() for name in COLUMNS)
            (perms if kind == "shuffle" else jitters).add(_digest(a))
    assert len(perms) == 10 and len(jitters) == 10
    # k = 1 is a stream of its own, not copy 0 of k = 5
    one = distort(src, dst, t, "intense", {"k": 1}, derivation_key(DIGEST, "intense", {"k": 1}, 0), symmetric=True)
    five = distort(src, dst, t, "intense", {"k": 5}, derivation_key(DIGEST, "intense", {"k": 5}, 0), symmetric=True)
    first = five["copy_idx"] == 0
    assert not np.array_equal(np.sort(one["t"]), np.sort(five["t"][first]))


_SUBPROCESS = """
import json, numpy as np
from generators.tlpcf.distort import distort, derivation_key
from tgbhub.hashing import content_digest
rng = np.random.default_rng(5)
t = np.sort(rng.integers(0, 5000, 20000)).astype(np.int64)
src = rng.integers(0, 300, 20000).astype(np.int32)
dst = rng.integers(0, 300, 20000).astype(np.int32)
out = {}
for kind, params in (("shuffle", {}), ("intense", {"k": 5}), ("intense", {"k": 1})):
    key = derivation_key("0f" * 32, kind, params, 7)
    out[f"{kind}{params}"] = content_digest(distort(src, dst, t, kind, params, key, symmetric=False))
print(json.dumps(out, sort_keys=True))
"""


def test_identical_bytes_across_processes_and_blas_settings() -> None:
    runs = []
    for extra in ({"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"},
                  {"OPENBLAS_NUM_THREADS": "4", "OMP_NUM_THREADS": "4", "OPENBLAS_CORETYPE": "Prescott"}):
        env = {**os.environ, **extra}
        done = subprocess.run([sys.executable, "-c", _SUBPROCESS], cwd=ROOT, env=env, capture_output=True, text=True,
                              check=True)
        runs.append(json.loads(done.stdout))
    assert runs[0] == runs[1] and len(set(runs[0].values())) == 3


# golden values: a change in any definition (key string, stream, uniform, permutation, sort) must bump KEY_VERSION
GOLDEN_KEY = 0x98910BDBE1FCD93F
GOLDEN = {"shuffle": "324e93730f105cc91b37370795689203fac65118c5fefc5cd5087f2aae62c97a",
          "intense": "58cff126da164fe5db48415b156fe43665b88c2c771a1d8f564cd942940b278f"}


def _golden_stream() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Input built by integer arithmetic only (numpy's Generator output may change between releases)."""
    i = np.arange(300, dtype=np.int64)
    src, dst = ((i * 7) % 23).astype(np.int32), ((i * 11 + 5) % 29).astype(np.int32)
    return _symmetric(src, dst, i // 3 * 10 + (i % 3))


@pytest.mark.parametrize("kind", ["shuffle", "intense"])
def test_golden_bytes(kind: str) -> None:
    src, dst, t = _golden_stream()
    params = {"k": 5} if kind == "intense" else {}
    cols = distort(src, dst, t, kind, params, derivation_key(DIGEST, kind, params, 0), symmetric=True)
    assert _digest(cols) == GOLDEN[kind]


def test_global_rng_state_is_untouched(tgrab_test) -> None:
    src, dst, t = tgrab_test
    np.random.seed(99)
    random.seed(99)
    numpy_before, python_before = np.random.get_state(), random.getstate()
    for kind, params in (("shuffle", {}), ("intense", {"k": 5})):
        distort(src, dst, t, kind, params, derivation_key(DIGEST, kind, params, 0), symmetric=True)
    shuffle_permutation(100, 1)
    numpy_after = np.random.get_state()
    assert numpy_before[0] == numpy_after[0] and np.array_equal(numpy_before[1], numpy_after[1])
    assert numpy_before[2:] == numpy_after[2:]
    assert random.getstate() == python_before


# ------------------------------------------------------------------------------------------- refusals

def test_distort_refuses_bad_input() -> None:
    src, dst, t = _directed_stream(50)
    key = derivation_key(DIGEST, "shuffle", {}, 0)
    with pytest.raises(GenerationError, match="not mirror images"):
        distort(src, dst, t, "shuffle", {}, key, symmetric=True)
    with pytest.raises(GenerationError, match="dst has shape"):
        distort(src, dst[:-1], t, "shuffle", {}, key, symmetric=False)
    with pytest.raises(GenerationError, match="not finite"):
        distort(src, dst, np.where(np.arange(50) == 3, np.nan, t.astype(float)), "shuffle", {}, key, symmetric=False)
    with pytest.raises(GenerationError, match="exceed 2\\*\\*53"):
        distort(src, dst, t + (1 << 60), "shuffle", {}, key, symmetric=False)
    with pytest.raises(GenerationError, match="integer node ids"):
        distort(src.astype(float), dst, t, "shuffle", {}, key, symmetric=False)
    with pytest.raises(GenerationError, match="needs 'k'"):
        distort(src, dst, t, "intense", {}, key, symmetric=False)
    with pytest.raises(GenerationError, match="zero span"):
        distort(src, dst, np.zeros(50, dtype=np.int64), "intense", {"k": 2}, key, symmetric=False)


def test_shuffle_of_a_degenerate_split_is_allowed() -> None:
    one = np.array([1], dtype=np.int32)
    cols, facts = distort_with_facts(one, one + 1, np.array([7]), "shuffle", {}, 3, symmetric=False)
    assert cols["t"].tolist() == [7.0] and facts["tau_bar"] is None
    empty = np.array([], dtype=np.int32)
    cols, facts = distort_with_facts(empty, empty, np.array([], dtype=np.int64), "shuffle", {}, 3, symmetric=True)
    assert all(len(v) == 0 for v in cols.values()) and facts["t_min_out"] is None


# ------------------------------------------------------------------------------- distributions, statistical

def _ks_uniform(x: np.ndarray, lo: float, hi: float) -> float:
    """Kolmogorov-Smirnov statistic of ``x`` against Uniform(lo, hi)."""
    x = np.sort((x - lo) / (hi - lo))
    n = len(x)
    return float(max(np.max(np.arange(1, n + 1) / n - x), np.max(x - np.arange(n) / n)))


def _chi2_critical(dof: int, z: float = 2.3263) -> float:
    """Wilson-Hilferty upper quantile of chi-square (z = 2.3263: p = 0.01)."""
    return dof * (1 - 2 / (9 * dof) + z * math.sqrt(2 / (9 * dof))) ** 3


def test_jitter_is_uniform_and_copies_independent(tgrab_test) -> None:
    src, dst, t = tgrab_test
    k = 5
    forward = src < dst
    for seed in (0, 1):
        cols = distort(src, dst, t, "intense", {"k": k}, derivation_key(DIGEST, "intense", {"k": k}, seed),
                       symmetric=True)
        out = _events_out(cols, True)
        tau = 127 / 7_040
        scaled = (out["t"] - t[forward][out["orig_event_id"]]) / tau
        n = len(scaled)
        assert n == 35_200
        assert _ks_uniform(scaled, -1.0, 1.0) < 1.628 / math.sqrt(n)  # KS critical value at p = 0.01
        grid = np.empty((7_040, k))
        grid[out["orig_event_id"], out["copy_idx"]] = scaled
        corr = np.corrcoef(grid, rowvar=False)
        assert np.max(np.abs(corr - np.eye(k))) < 4 / math.sqrt(7_040)


def test_jitter_ks_with_scipy(tgrab_test) -> None:
    stats = pytest.importorskip("scipy.stats")
    src, dst, t = tgrab_test
    cols = distort(src, dst, t, "intense", {"k": 5}, derivation_key(DIGEST, "intense", {"k": 5}, 2), symmetric=True)
    out = _events_out(cols, True)
    scaled = (out["t"] - t[src < dst][out["orig_event_id"]]) / (127 / 7_040)
    assert stats.kstest(scaled, stats.uniform(loc=-1, scale=2).cdf).pvalue > 0.01


def test_shuffle_is_uniform_over_seeds() -> None:
    n, draws = 5, 12_000
    counts: dict[tuple[int, ...], int] = {}
    target = np.zeros(n, dtype=np.int64)  # where source timestamp 0 lands
    fixed = 0
    t = np.arange(n, dtype=np.int64) * 10
    src = np.arange(n, dtype=np.int32)
    for seed in range(draws):
        key = derivation_key(DIGEST, "shuffle", {}, seed)
        perm = tuple(shuffle_permutation(n, key).tolist())
        counts[perm] = counts.get(perm, 0) + 1
        target[perm.index(0)] += 1
        if seed < 2_000:  # the full transform agrees with the permutation
            cols = distort(src, src + 1, t, "shuffle", {}, key, symmetric=False)
            got = np.empty(n)
            got[cols["orig_event_id"]] = cols["t"]
            fixed += int(np.sum(got == t))
    assert len(counts) == 120
    expected = draws / 120
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    assert chi2 < _chi2_critical(119)
    chi2_target = float(np.sum((target - draws / n) ** 2 / (draws / n)))
    assert chi2_target < _chi2_critical(n - 1)
    assert abs(fixed / (2_000 * n) - 1 / n) < 0.02  # P(an event keeps its own timestamp) = 1/|E|


# ---------------------------------------------------------- temporal-structure probes: a periodic stream

def _mean_pair_cv(cols_src, cols_dst, cols_t) -> float:
    pair = cols_src.astype(np.int64) << 32 | cols_dst.astype(np.int64)
    order = np.lexsort((cols_t, pair))
    pair, times = pair[order], cols_t[order]
    cvs = []
    for p in np.unique(pair):
        gaps = np.diff(times[pair == p])
        cvs.append(gaps.std() / gaps.mean())
    return float(np.mean(cvs))


def test_periodic_stream_cv() -> None:
    """Per-pair inter-event CV: 0 before, about 1 after SHUFFLE, about sqrt(k - 1) = 2 after INTENSE(5)."""
    rng = np.random.default_rng(11)
    rows = []
    for p in range(60):
        period = int(rng.integers(40, 161))
        phase = int(rng.integers(0, period))
        times = np.arange(phase, 60_000, period)
        rows.append(np.stack([times, np.full(len(times), p), np.full(len(times), p + 100)]))
    t, src, dst = np.concatenate(rows, axis=1)
    order = np.lexsort((dst, src, t))
    t, src, dst = t[order].astype(np.int64), src[order].astype(np.int32), dst[order].astype(np.int32)
    assert _mean_pair_cv(src, dst, t.astype(float)) == 0.0
    shuffled = distort(src, dst, t, "shuffle", {}, derivation_key(DIGEST, "shuffle", {}, 0), symmetric=False)
    cv_shuffle = _mean_pair_cv(shuffled["src"], shuffled["dst"], shuffled["t"])
    assert 0.9 < cv_shuffle < 1.1
    intense = distort(src, dst, t, "intense", {"k": 5}, derivation_key(DIGEST, "intense", {"k": 5}, 0),
                      symmetric=False)
    cv_intense = _mean_pair_cv(intense["src"], intense["dst"], intense["t"])
    assert 1.85 < cv_intense < 2.1
