"""Random streams that reproduce the generators of published benchmarks bit for bit.

Every stream is an explicit object built from an explicit seed; nothing here reads or writes global RNG state.
"""

from __future__ import annotations

import numpy as np


def python_random_stream(seed: int) -> np.random.RandomState:
    """Return an MT19937 stream whose ``random_sample`` equals CPython's ``random.Random(seed).random()``.

    CPython seeds MT19937 with ``init_by_array`` over the 32-bit words of ``abs(seed)``; numpy's legacy
    ``RandomState`` does the same when given a *list* (a scalar or 0-d array takes the ``init_genrand`` path, which
    gives a different stream), and both turn two 32-bit draws into one double the same way (``genrand_res53``).

    Raises:
        ValueError: if ``seed`` is negative (CPython would hash it to ``abs(seed)``; we refuse the ambiguity).
    """
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed}; pass abs(seed) if that is what you mean")
    key: list[int] = []
    rest = seed
    while rest:
        key.append(rest & 0xFFFFFFFF)
        rest >>= 32
    return np.random.RandomState(key or [0])


def numpy_legacy_stream(seed: int) -> np.random.RandomState:
    """Return the stream ``np.random.seed(seed)`` would put behind numpy's legacy global functions."""
    return np.random.RandomState(seed)


def pcg64_permutation(seed: int, n: int) -> np.ndarray:
    """``np.random.Generator(np.random.PCG64(seed)).permutation(n)``, computed from the bit generator's raw output.

    numpy's compatibility policy lets ``Generator`` methods change between releases, but not a bit generator's raw
    stream; so the shuffle is spelled out here: Fisher-Yates from the last item, each index drawn by masked rejection
    from 32-bit halves of the raw 64-bit outputs (low half first), as numpy 1.17-2.x does.
    """
    bits = np.random.PCG64(seed)
    items = list(range(n))
    halves: list[int] = []

    def next32() -> int:
        if not halves:
            raw = int(bits.random_raw())
            halves.extend((raw >> 32, raw & 0xFFFFFFFF))  # popped from the end: the low half comes first
        return halves.pop()

    for i in range(n - 1, 0, -1):
        mask = i
        for shift in (1, 2, 4, 8, 16):
            mask |= mask >> shift
        j = next32() & mask
        while j > i:
            j = next32() & mask
        items[i], items[j] = items[j], items[i]
    return np.array(items, dtype=np.int64)

