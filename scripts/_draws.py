"""Random draws the TGB benches share: a release's negatives, distinct within each query."""

from __future__ import annotations

import numpy as np


def distinct_draws(rng: np.random.Generator, rows: int, population: int, q: int) -> np.ndarray:
    """``[rows, q]`` draws from ``range(population)``, distinct within each row (Floyd's algorithm, vectorised over
    rows), in a random order per row.

    Raises:
        ValueError: if ``q`` exceeds ``population`` (a row cannot hold ``q`` distinct values).
    """
    if q > population:
        raise ValueError(f"--q {q} exceeds the {population} destinations a query can draw from")
    out = np.empty((rows, q), dtype=np.int64)
    for k, j in enumerate(range(population - q, population)):
        pick = rng.integers(0, j + 1, rows)
        taken = (out[:, :k] == pick[:, None]).any(axis=1) if k else np.zeros(rows, dtype=bool)
        out[:, k] = np.where(taken, j, pick)
    return rng.permuted(out, axis=1)
