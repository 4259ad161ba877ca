"""A plain vectorised-numpy implementation of the same recurrence: the peer of the benchmark and a cross-check.

All ICs advance together as ``(n_ics, N)`` arrays; the coupling uses two ``np.roll`` sines in upstream's order. It
computes trajectories only (no indicators), which is what ``scripts/bench chaosnet`` compares.
"""

from __future__ import annotations

import numpy as np

from .dynamics import initial_condition


def simulate_numpy(k: float, epsilon: float, n: int, seeds: np.ndarray, transient: int, steps: int) -> np.ndarray:
    """States ``(n_ics, steps, 2N)`` in the blocked order, computed with numpy ufuncs over all ICs at once."""
    ics = np.stack([initial_condition(int(s), n) for s in seeds])
    q, p = ics[:, :n].copy(), ics[:, n:].copy()
    states = np.empty((len(seeds), steps, 2 * n))
    two_pi = 2 * np.pi
    for step in range(transient + steps):
        if step >= transient:
            states[:, step - transient, :n] = q
            states[:, step - transient, n:] = np.mod(p, two_pi)
        coupling = -epsilon * (np.sin(np.roll(q, -1, axis=1) - q) + np.sin(np.roll(q, 1, axis=1) - q))
        p = p + k * np.sin(q) + coupling
        q = np.mod(q + p, two_pi)
    return states
