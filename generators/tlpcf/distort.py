"""TLPCF's two test-split distortions, SHUFFLE and INTENSE(k), as pure and bit-deterministic functions.

docs/derived.md states the algorithms, their invariants, the variants and their names, the storage and the
determinism rules; ``tests/test_distort.py`` checks the invariants and the distributions.

Conventions
-----------
*Events.* The input is the parent's **test split** in stored order (sorted by ``(t, src, dst)``). With
``symmetric=False`` every row is an event. With ``symmetric=True`` (the undirected T-GRAB convention: each
undirected edge is stored as the two rows ``(u, v, t)`` and ``(v, u, t)``) an event is a row with ``src < dst``
or a self-loop row ``src == dst`` (which has no mirror); rows with ``src > dst`` are mirrors, checked to pair up
exactly with the events and then re-derived from them. ``orig_event_id`` is an event's index among the events in
input order; for symmetric data without self-loops that is the index of the parent's ``src < dst`` rows, i.e. the
row of the parent's ranking query (``negatives-test.parquet``).

*Derivation key.* ``derivation_key`` hashes ``tgbhub-distort-v1|<parent digest>|<kind>|<canonical params>|<seed>``
(e.g. ``tgbhub-distort-v1|ab12..|intense|k=5,scope=test|3``) with sha256 and reads the first 8 bytes
little-endian as a uint64. Canonical params: every parameter filled in (``scope=test`` by default), the kind's
own parameters alphabetically, then ``scope``, each as ``name=value``.

*Raw draws.* Draw ``i`` (``i = 0, 1, ...``) of a variant is output ``i`` of SplitMix64 seeded with the key:
``x_i = mix64(key + (i + 1) * 0x9E3779B97F4A7C15 mod 2**64)``, with ``mix64`` the SplitMix64 finaliser
(:func:`generators.negatives._mix`). Any draw is computable alone (counter-based), and only uint64 wraparound,
shifts and xors are involved, so the stream is the same on every machine and numpy version.

*Uniforms.* ``u_i = ((x_i >> 12) + 0.5) * 2**-52``: the top 52 bits, centred in their cell. Every step is exact
in float64, so ``u`` lies in the **open** interval ``(0, 1)`` (its extremes are ``2**-53`` and ``1 - 2**-53``)
and the jitter ``(2u - 1) * tau_bar`` is strictly inside ``(-tau_bar, tau_bar)``. (The 53-bit variant
``((x >> 11) + 0.5) * 2**-53`` is not exact: ``(2**53 - 1) + 0.5`` rounds to ``2**53``, giving ``u = 1``.)

*SHUFFLE.* ``perm = shuffle_permutation(n, key)``: the event ids ``0..n-1`` ordered by ``(x_id, id)``, i.e. by
their draw with ties (probability about ``n**2 / 2**65``) broken by the smaller id, via a stable argsort.
Event ``j`` keeps its ``(src, dst)`` and receives the timestamp of event ``perm[j]``. ``copy_idx`` is 0.

*INTENSE(k).* Event ``j`` emits ``k`` copies; copy ``c`` (``0 <= c < k``) has time ``t_j + (2u - 1) * tau_bar``
with ``u`` from draw ``j * k + c``. So ``k = 1`` and ``k = 5`` variants are different streams (their keys differ
anyway), each deterministic. ``tau_bar`` is :func:`tau_bar` of the events' timestamps (not of the doubled rows).
If float64 rounding of ``t + jitter`` lands ``tau_bar`` or more away from ``t`` (possible when ``t`` is large
next to ``tau_bar``), the copy is moved one ulp at a time towards ``t`` until it is strictly inside, so the
invariant ``|t' - t| < tau_bar`` holds for the stored floats, not only in exact arithmetic.

*Output.* Columns ``t`` float64, ``src`` int32, ``dst`` int32, ``orig_event_id`` int64, ``copy_idx`` int32,
rows sorted by ``(t, orig_event_id, copy_idx, direction)``: for symmetric data each ``src < dst`` row is
immediately followed by its mirror (same ``t``, ``orig_event_id`` and ``copy_idx``).

Nothing here uses numpy's ``Generator``/``RandomState`` methods (numpy only promises their streams per build),
global RNG state, BLAS, threads or float reductions whose result depends on their order: only elementwise IEEE
operations, exact ``min``/``max`` and stable sorts, whose results are unique.

The draws, the uniforms, the SHUFFLE permutation and the ulp correction of INTENSE are defined in
:mod:`generators.transforms.draws` (the transforms call them; this driver calls the transforms) and re-exported
here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from tgbhub.errors import GenerationError

from ..transforms import canonical_params, is_int, transform
from ..transforms.draws import (  # noqa: F401 (documented here)
    check_key as _check_key,
    inside,
    open_uniform,
    raw_draws,
    shuffle_permutation,
    stable_order as _stable_order,
)

#: the prefix of the hashed variant string; bump it if any definition in this module or in
#: :mod:`generators.transforms.draws` (the draws and orderings the transforms share) changes
KEY_VERSION = "tgbhub-distort-v1"

_EXACT_INT = 1 << 53  # integers beyond this lose their value in float64


def _params_string(params: Mapping[str, Any]) -> str:
    return ",".join(f"{name}={value}" for name, value in params.items())


def derivation_string(parent_digest: str, kind: str, params: Mapping[str, Any], seed: int) -> str:
    """The string :func:`derivation_key` hashes, e.g. ``tgbhub-distort-v1|<digest>|intense|k=5,scope=test|3``.

    Raises:
        GenerationError: for a bad digest (empty, or holding ``|`` or whitespace, which would make the string
            ambiguous), bad parameters (see :func:`canonical_params`) or a seed that is not a non-negative int.
    """
    if not isinstance(parent_digest, str) or not parent_digest or any(c == "|" or c.isspace() for c in parent_digest):
        raise GenerationError(f"parent digest must be a non-empty string without '|' or whitespace, got "
                              f"{parent_digest!r}; pass the parent dataset's content digest (hex)")
    if not is_int(seed) or seed < 0:
        raise GenerationError(f"seed must be a non-negative int, got {seed!r}; pass e.g. seed=0")
    canonical = canonical_params(kind, params)
    return f"{KEY_VERSION}|{parent_digest}|{kind}|{_params_string(canonical)}|{int(seed)}"


def derivation_key(parent_digest: str, kind: str, params: Mapping[str, Any], seed: int) -> int:
    """The uint64 key of one variant: the first 8 bytes, little-endian, of sha256 of :func:`derivation_string`.

    Invariant to the order of ``params`` and to spelled-out defaults (``scope="test"``).

    Raises:
        GenerationError: as :func:`derivation_string`.
    """
    digest = hashlib.sha256(derivation_string(parent_digest, kind, params, seed).encode()).digest()
    return int.from_bytes(digest[:8], "little")


def tau_bar(t: np.ndarray) -> float:
    """The INTENSE jitter half-width: ``(max t - min t) / len(t)`` over the events, as float64.

    For integer timestamps the span is taken exactly (Python ints) and divided once, correctly rounded; for float
    timestamps the span is one float64 subtraction. ``min``/``max`` are exact, so the value is order-independent.

    Raises:
        GenerationError: on fewer than 2 events or a zero span (tau_bar is then undefined).
    """
    t = np.asarray(t)
    if len(t) < 2:
        raise GenerationError(f"tau_bar needs at least 2 events, got {len(t)}; INTENSE cannot jitter a split that "
                              "small (pick a parent whose test split has events at two or more times)")
    span: int | float
    if np.issubdtype(t.dtype, np.integer):
        span = int(t.max()) - int(t.min())
        value = span / len(t)  # int / int: correctly rounded true division
    else:
        span = float(t.max()) - float(t.min())
        value = span / len(t)
    if span == 0:
        raise GenerationError(f"tau_bar is undefined: all {len(t)} events share the timestamp {t[0]!r} (zero span); "
                              "INTENSE needs a test split spanning more than one time")
    return float(value)


def _timestamps(t: ArrayLike) -> np.ndarray:
    """The input timestamps as float64, refusing values float64 cannot carry exactly or at all."""
    t = np.asarray(t)
    if t.ndim != 1:
        raise GenerationError(f"t must be one-dimensional, got shape {t.shape}; pass the split's t column")
    if np.issubdtype(t.dtype, np.integer):
        if len(t) and max(abs(int(t.min())), abs(int(t.max()))) > _EXACT_INT:
            raise GenerationError(f"timestamps up to {max(abs(int(t.min())), abs(int(t.max())))} exceed 2**53 and "
                                  "cannot be stored exactly as float64; rebase t (subtract its minimum) first")
        return t.astype(np.float64)
    if not np.issubdtype(t.dtype, np.floating):
        raise GenerationError(f"t must be int64 or float64, got dtype {t.dtype}; cast the timestamps first")
    t = t.astype(np.float64)
    if not np.all(np.isfinite(t)):
        bad = int(np.flatnonzero(~np.isfinite(t))[0])
        raise GenerationError(f"t[{bad}] = {t[bad]!r} is not finite; drop or repair that row before distorting")
    return t


def _node_ids(values: ArrayLike, name: str, length: int) -> np.ndarray:
    array = np.asarray(values)
    if array.shape != (length,):
        raise GenerationError(f"{name} has shape {array.shape} but t has {length} rows; pass aligned columns")
    if not np.issubdtype(array.dtype, np.integer):
        raise GenerationError(f"{name} must hold integer node ids, got dtype {array.dtype}; cast it to int32")
    if length and (int(array.min()) < 0 or int(array.max()) > np.iinfo(np.int32).max):
        raise GenerationError(f"{name} holds ids outside [0, 2**31): {int(array.min())}..{int(array.max())}; "
                              "node ids must be non-negative int32")
    return array.astype(np.int32, copy=False)


def _same_triples(t: np.ndarray, src: np.ndarray, dst: np.ndarray, forward: np.ndarray, mirrors: np.ndarray) -> bool:
    """Whether the multisets ``(t, src, dst)`` of the rows ``forward`` and ``(t, dst, src)`` of ``mirrors`` are equal.

    Each triple is packed into one int64 ``(time rank * nodes + low) * nodes + high`` (injective; the time rank
    comes from one pass when ``t`` is sorted, as stored splits are) and the two key arrays are counted (small key
    spaces) or sorted, and compared: instead of two three-key lexsorts. Falls back to the lexsorts when the keys
    would not fit in 63 bits. Exact either way: equal sorted keys mean equal multisets.
    """
    if len(t) and np.all(t[1:] >= t[:-1]):
        rank = np.zeros(len(t), dtype=np.int64)
        np.cumsum(t[1:] != t[:-1], out=rank[1:])
    else:
        rank = np.unique(t, return_inverse=True)[1].astype(np.int64).reshape(-1)
    nodes = int(max(src.max(initial=0), dst.max(initial=0))) + 1
    space = (int(rank[-1]) + 1 if len(rank) else 1) * nodes * nodes
    if space < 1 << 63:
        a = (rank[forward] * nodes + src[forward]) * nodes + dst[forward]
        b = (rank[mirrors] * nodes + dst[mirrors]) * nodes + src[mirrors]
        if space <= 8 * len(t) + (1 << 16):
            # A small key space (T-GRAB: snapshots x nodes**2): no sort. Stored splits list each forward row once
            # in key order (strictly increasing a); then b, of the same length, is the same multiset iff it holds
            # every key of a (len(a) distinct keys among len(b) values leave room for no other).
            if len(a) < 2 or bool(np.all(a[1:] > a[:-1])):
                seen = np.zeros(space, dtype=bool)
                seen[b] = True
                return bool(seen[a].all())
            return bool(np.array_equal(np.bincount(a, minlength=space), np.bincount(b, minlength=space)))
        a.sort()
        b.sort()
        return bool(np.array_equal(a, b))
    a = np.lexsort((dst[forward], src[forward], t[forward]))
    b = np.lexsort((src[mirrors], dst[mirrors], t[mirrors]))
    return bool(np.array_equal(t[forward][a], t[mirrors][b]) and np.array_equal(src[forward][a], dst[mirrors][b])
                and np.array_equal(dst[forward][a], src[mirrors][b]))


def _events(src: np.ndarray, dst: np.ndarray, t: np.ndarray, symmetric: bool) -> np.ndarray:
    """Row indices of the events, in input order; for symmetric data also check every mirror is present."""
    if not symmetric:
        return np.arange(len(t), dtype=np.int64)
    forward = np.flatnonzero(src < dst)
    mirrors = np.flatnonzero(src > dst)
    # without self-loops (2 * forward rows = all rows) the events are the forward rows: skip a third scan
    events = forward if 2 * len(forward) == len(src) else np.flatnonzero(src <= dst)
    # the mirrors must be exactly the forward rows reversed: compare the two (t, low, high) multisets
    if len(forward) != len(mirrors) or not _same_triples(t, src, dst, forward, mirrors):
        raise GenerationError(f"symmetric=True but the {len(forward)} rows with src < dst and the {len(mirrors)} "
                              "rows with src > dst are not mirror images (same t, endpoints swapped); pass "
                              "symmetric=False for directed data")
    return events.astype(np.int64)


def _interleave(even: np.ndarray, odd: np.ndarray) -> np.ndarray:
    """``[even[0], odd[0], even[1], odd[1], ...]`` in ``even``'s dtype."""
    out = np.empty(2 * len(even), dtype=even.dtype)
    out[0::2], out[1::2] = even, odd
    return out


def _expand_mirrors(t: np.ndarray, src: np.ndarray, dst: np.ndarray, eid: np.ndarray, copy: np.ndarray,
                    symmetric: bool) -> dict[str, np.ndarray]:
    """Output columns from sorted event copies: for symmetric data each non-loop copy is followed by its mirror."""
    if not symmetric:
        return {"t": t, "src": src, "dst": dst, "orig_event_id": eid, "copy_idx": copy}
    if len(t) and np.all(src != dst):
        # no self-loops (every T-GRAB split): each copy is followed by its mirror, a plain interleave (strided
        # copies are ~3x faster than np.repeat, which handles any repeat counts)
        return {"t": _interleave(t, t), "src": _interleave(src, dst), "dst": _interleave(dst, src),
                "orig_event_id": _interleave(eid, eid), "copy_idx": _interleave(copy, copy)}
    width = 1 + (src != dst).astype(np.int64)
    start = np.zeros(len(t), dtype=np.int64)
    np.cumsum(width[:-1], out=start[1:])
    total = int(width.sum())
    out_src = np.empty(total, dtype=np.int32)
    out_dst = np.empty(total, dtype=np.int32)
    out_src[start], out_dst[start] = src, dst
    mirrored = start[width == 2] + 1
    out_src[mirrored], out_dst[mirrored] = dst[width == 2], src[width == 2]
    return {"t": np.repeat(t, width), "src": out_src, "dst": out_dst, "orig_event_id": np.repeat(eid, width),
            "copy_idx": np.repeat(copy, width)}


def distort_with_facts(src: np.ndarray, dst: np.ndarray, t: np.ndarray, kind: str, params: Mapping[str, Any],
                       key: int, *, symmetric: bool) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """:func:`distort`, plus its facts for the manifest.

    Facts: ``kind``, ``params`` (canonical), ``tau_bar`` (float; ``None`` for a SHUFFLE of a split where it is
    undefined), ``n_events_in``/``n_events_out``, ``n_rows_in``/``n_rows_out``, and ``t_min_in``/``t_max_in``/
    ``t_min_out``/``t_max_out`` (floats; ``None`` when there are no rows).

    Raises:
        GenerationError: as :func:`distort`.
    """
    canonical = canonical_params(kind, params)
    k64 = _check_key(key)
    tf = _timestamps(t)
    s = _node_ids(src, "src", len(tf))
    d = _node_ids(dst, "dst", len(tf))
    rows = _events(s, d, tf, bool(symmetric))
    es, ed = s[rows], d[rows]
    et_raw = np.asarray(t)[rows]
    n = len(rows)
    spec = transform(kind)
    if spec.needs_tau_bar:
        half_width: float | None = tau_bar(et_raw)
    else:
        try:
            half_width = tau_bar(et_raw)
        except GenerationError:
            half_width = None  # the transform does not need it; the facts record that it is undefined
    new_t, eid, copy = spec.apply(tf[rows], canonical, int(k64), half_width)
    out_s, out_d = es[eid], ed[eid]
    # copies are generated in (orig_event_id, copy_idx) order, so a stable sort on t alone yields the full key
    order = _stable_order(new_t)
    columns = _expand_mirrors(new_t[order], out_s[order], out_d[order], eid[order], copy[order], bool(symmetric))
    facts = {
        "kind": kind, "params": canonical, "tau_bar": half_width,
        "n_events_in": n, "n_events_out": len(new_t), "n_rows_in": len(tf), "n_rows_out": len(columns["t"]),
        "t_min_in": float(tf.min()) if len(tf) else None, "t_max_in": float(tf.max()) if len(tf) else None,
        "t_min_out": float(new_t.min()) if len(new_t) else None,
        "t_max_out": float(new_t.max()) if len(new_t) else None,
    }
    return columns, facts


def distort(src: np.ndarray, dst: np.ndarray, t: np.ndarray, kind: str, params: Mapping[str, Any], key: int, *,
            symmetric: bool) -> dict[str, np.ndarray]:
    """Distort one test split (SHUFFLE or INTENSE(k)); see the module docstring for every convention.

    Args:
        src, dst: the split's endpoints (integer ids, stored as int32).
        t: its timestamps, int64 (``|t| <= 2**53``) or finite float64, in stored order.
        kind, params: ``"shuffle"`` (no parameters) or ``"intense"`` with ``k``; ``scope`` defaults to ``"test"``.
        key: the variant's uint64 key, from :func:`derivation_key`.
        symmetric: the rows store undirected edges both ways (events are the ``src <= dst`` rows).

    Returns:
        ``t`` float64, ``src`` int32, ``dst`` int32, ``orig_event_id`` int64, ``copy_idx`` int32, sorted by
        ``(t, orig_event_id, copy_idx)``, each ``src < dst`` row followed by its mirror when ``symmetric``.

    Raises:
        GenerationError: for bad parameters or key, misaligned or non-integer columns, non-finite or > 2**53
            timestamps, ``symmetric=True`` on rows that are not mirror pairs, or INTENSE on a split with fewer
            than 2 events or a zero time span (tau_bar undefined).
    """
    return distort_with_facts(src, dst, t, kind, params, key, symmetric=symmetric)[0]
