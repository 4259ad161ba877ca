"""Test-only: ChaosNetBench's indicator procedures as upstream describes them, in plain numpy, one IC at a time.

An independent implementation of the tangent map, Benettin's maximal Lyapunov exponent and the SALI screen
(docs/chaosnet.md, Chaos indicators), written from that description: per-site loops for the coupling,
``np.linalg.norm`` for norms. The tests compare the numba kernel's indicators against it.
"""

from __future__ import annotations

import numpy as np


def step(q: np.ndarray, p: np.ndarray, k: float, eps: float) -> tuple[np.ndarray, np.ndarray]:
    n = len(q)
    coupling = np.array([-eps * (np.sin(q[(i + 1) % n] - q[i]) + np.sin(q[(i - 1) % n] - q[i])) for i in range(n)])
    p_new = p + k * np.sin(q) + coupling
    return np.mod(q + p_new, 2 * np.pi), p_new


def tangent(q: np.ndarray, dq: np.ndarray, dp: np.ndarray, k: float, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Deviation vectors ``(m, N)`` one step ahead, using q before the step."""
    n = len(q)
    dp_new = dp + k * np.cos(q)[None, :] * dq
    for i in range(n):
        nxt, prv = (i + 1) % n, (i - 1) % n
        dp_new[:, i] -= eps * (np.cos(q[nxt] - q[i]) * (dq[:, nxt] - dq[:, i])
                               + np.cos(q[prv] - q[i]) * (dq[:, prv] - dq[:, i]))
    return dq + dp_new, dp_new


def indicators(ic: np.ndarray, seed: int, k: float, eps: float, transient: int, steps: int,
               horizons: tuple[int, ...]) -> tuple[float, list[float]]:
    """``(lambda_max, [SALI per horizon])`` for one IC: Benettin over the ``steps`` recorded steps with the vector
    carried through the transient; SALI screens from the IC with early stop below 1e-12."""
    n = len(ic) // 2
    q, p = ic[:n].copy(), ic[n:].copy()
    vectors = np.random.RandomState(seed).randn(2, 2 * n)
    vectors[0] /= np.linalg.norm(vectors[0])
    vectors[1] -= np.dot(vectors[1], vectors[0]) * vectors[0]
    vectors[1] /= np.linalg.norm(vectors[1])
    dq, dp = vectors[:, :n].copy(), vectors[:, n:].copy()
    checks = [set(np.unique(np.geomspace(1, h, min(500, h)).astype(int)).tolist()) for h in horizons]
    sali = [np.nan] * len(horizons)
    done = [False] * len(horizons)
    log_sum = 0.0
    for it in range(transient + steps):
        dq, dp = tangent(q, dq, dp, k, eps)
        q, p = step(q, p, k, eps)
        for row in range(2):
            norm = np.linalg.norm(np.concatenate([dq[row], dp[row]]))
            if row == 0 and it >= transient:
                log_sum += np.log(norm)
            dq[row] /= norm
            dp[row] /= norm
        for screen, horizon in enumerate(horizons):
            if done[screen] or (it + 1) not in checks[screen]:
                continue
            v1, v2 = np.concatenate([dq[0], dp[0]]), np.concatenate([dq[1], dp[1]])
            v1, v2 = v1 / (np.linalg.norm(v1) + 1e-300), v2 / (np.linalg.norm(v2) + 1e-300)
            sali[screen] = min(np.linalg.norm(v1 + v2), np.linalg.norm(v1 - v2))
            done[screen] = sali[screen] < 1e-12 or it + 1 >= horizon
    return log_sum / steps, [max(s, 1e-12) if s <= 0 else s for s in sali]
