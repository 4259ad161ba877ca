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


def pcg64_generator(seed: int) -> np.random.Generator:
    """Return ``np.random.Generator(np.random.PCG64(seed))``, the stream modern numpy code seeds explicitly."""
    return np.random.Generator(np.random.PCG64(seed))

