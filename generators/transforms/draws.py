"""The counter-based draws of a variant and the exact orderings built on them, shared by the transforms.

Every definition here is part of a variant's bytes: see :mod:`generators.tlpcf.distort` (the module docstring's
*Raw draws*, *Uniforms*, *SHUFFLE* and *INTENSE(k)*) for the conventions they implement, and bump
:data:`generators.tlpcf.distort.KEY_VERSION` if any of them changes.
"""

from __future__ import annotations

import numpy as np

from tgbhub.errors import GenerationError

from ..negatives import _GOLDEN
from . import is_int

_MASK64 = (1 << 64) - 1
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def check_key(key: object) -> np.uint64:
    """``key`` as a numpy uint64.

    Raises:
        GenerationError: if ``key`` is not an int in ``[0, 2**64)``.
    """
    if not is_int(key) or not 0 <= int(key) <= _MASK64:
        raise GenerationError(f"key must be an int in [0, 2**64), got {key!r}; derive it with derivation_key(...)")
    return np.uint64(int(key))


def raw_draws(key: int, count: int, start: int = 0) -> np.ndarray:
    """Draws ``start .. start + count - 1`` of the stream of ``key`` as uint64 (see :mod:`generators.tlpcf.distort`'s
    docstring).

    ``x_i = mix64(key + (i + 1) * 0x9E3779B97F4A7C15 mod 2**64)``: output ``i`` of SplitMix64 seeded with ``key``.

    Raises:
        GenerationError: if ``key`` is not in ``[0, 2**64)`` or ``count``/``start`` is negative.
    """
    k = check_key(key)
    if not is_int(count) or not is_int(start) or count < 0 or start < 0:
        raise GenerationError(f"count and start must be non-negative ints, got count={count!r}, start={start!r}")
    # uint64 array arithmetic wraps modulo 2**64 silently (numpy scalars would warn), so stay in arrays
    z = np.arange(int(start) + 1, int(start) + int(count) + 1, dtype=np.uint64)
    z *= _GOLDEN
    z += k
    z ^= z >> np.uint64(30)
    z *= _M1
    z ^= z >> np.uint64(27)
    z *= _M2
    z ^= z >> np.uint64(31)
    return z


def open_uniform(x: np.ndarray) -> np.ndarray:
    """``((x >> 12) + 0.5) * 2**-52`` as float64: uniform on the open interval ``(0, 1)``, every step exact."""
    top = (np.asarray(x, dtype=np.uint64) >> np.uint64(12)).astype(np.float64)  # < 2**52: exact
    top += 0.5  # m + 1/2 with m < 2**52 needs 53 significant bits: exact
    top *= 2.0 ** -52  # a power of two: exact
    return top


def _packed_order(high: np.ndarray, bits: int) -> np.ndarray:
    """Indices ordered by ``(high[i], i)`` from one plain sort of the keys ``high << bits | i``.

    ``high`` holds non-negative integers (uint64) with ``high << bits`` below ``2**64``, and ``n <= 2**bits``. The
    keys are unique, so any sort, numpy's fast unstable one included, has the one answer a stable argsort would
    give; one sort of bare integers instead of numpy's stable argsort (timsort for 64-bit types) is about twice as
    fast.
    """
    n = len(high)
    keys = high << np.uint64(bits)
    keys |= np.arange(n, dtype=np.uint64)
    keys.sort()
    return (keys & np.uint64((1 << bits) - 1)).astype(np.int64)


def stable_order(draws: np.ndarray) -> np.ndarray:
    """Indices ordered by ``(draws[i], i)``: a stable argsort, whose result is unique whatever the algorithm.

    Integer values (integer-valued floats too, like the snapshot times SHUFFLE permutes) spanning fewer than 2**16
    values take numpy's radix sort of 16-bit keys, wider spans that pack with the index into 64 bits
    :func:`_packed_order`; anything else numpy's stable argsort. Every path returns the stable argsort's indices.
    """
    values = np.asarray(draws)
    n = len(values)
    bits = max(1, (n - 1).bit_length())
    if n > 1 and values.dtype.kind in "iuf":
        low, top = values.min(), values.max()
        whole: np.ndarray | None = None  # the values as int64, where that is exact
        if values.dtype.kind == "f":
            # |v| < 2**53 keeps the int64 cast exact; then integer-valued means the cast round-trips (-0.0 too)
            if np.isfinite(low) and np.isfinite(top) and -2.0 ** 53 < low and top < 2.0 ** 53:
                cast = values.astype(np.int64)
                whole = cast if np.array_equal(cast, values) else None
        elif values.dtype != np.uint64 or int(top) < 1 << 63:
            whole = values.astype(np.int64)
        if whole is not None and int(top) - int(low) < 1 << 16:
            # few distinct values (a split's snapshots): numpy's stable sort of 16-bit keys is a linear radix sort
            return np.argsort((whole - int(low)).astype(np.uint16), kind="stable").astype(np.int64, copy=False)
        if whole is not None and (int(top) - int(low) + 1) << bits <= 1 << 63:
            return _packed_order((whole - int(low)).astype(np.uint64), bits)
    return np.argsort(values, kind="stable").astype(np.int64, copy=False)


def shuffle_permutation(n: int, key: int) -> np.ndarray:
    """A uniform permutation of ``0..n-1`` (int64): ids ordered by ``(raw_draws(key, n)[id], id)``.

    ``perm[j]`` is the id with the ``j``-th smallest draw; SHUFFLE gives event ``j`` the timestamp of event
    ``perm[j]``. Uniform because the draws are i.i.d. uniform 64-bit values (ties aside, probability about
    ``n**2 / 2**65``, broken by id).

    Raises:
        GenerationError: for a bad ``key`` or a negative ``n``.
    """
    draws = raw_draws(key, n)
    if n > 1:
        # Order by the draws' top 64 - bits bits packed with the id: exact unless two draws share those bits
        # (probability about n**2 / 2**(65 - bits)), in which case the full stable argsort decides.
        bits = (n - 1).bit_length()
        order = _packed_order(draws >> np.uint64(bits), bits)
        top = draws[order] >> np.uint64(bits)
        if not np.any(top[1:] == top[:-1]):
            return order
    return stable_order(draws)


def inside(t_new: np.ndarray, t_old: np.ndarray, half_width: float) -> np.ndarray:
    """Move every ``t_new`` with ``|t_new - t_old| >= half_width`` one ulp at a time towards ``t_old``.

    ``t + jitter`` is rounded to float64; when ``ulp(t)`` is not tiny next to ``tau_bar`` the rounded value can
    sit at distance ``tau_bar`` or beyond even though ``|jitter| < tau_bar``. Terminates: at ``t_old`` the
    distance is 0.
    """
    bad = np.flatnonzero(np.abs(t_new - t_old) >= half_width)
    while len(bad):
        t_new[bad] = np.nextafter(t_new[bad], t_old[bad])
        bad = bad[np.abs(t_new[bad] - t_old[bad]) >= half_width]
    return t_new
