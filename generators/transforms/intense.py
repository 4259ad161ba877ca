"""INTENSE(k) (TLPCF): every test event replaced by k copies, each jittered by U(-tau_bar, tau_bar)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .draws import inside, open_uniform, raw_draws
from .spec import Param, Transform

#: copies per event: the paper's k = 5, the k = 1 control; the bound keeps a variant within ~100x its split
K = Param("k", 1, 100, "jittered copies per event")


def _apply(t: np.ndarray, params: Mapping[str, Any], key: int,
           tau: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    k, n = int(params["k"]), len(t)
    old = np.repeat(t, k)
    jitter = open_uniform(raw_draws(key, n * k))  # draw j * k + c -> event j, copy c
    jitter *= 2.0
    jitter -= 1.0  # (2u - 1): exact, a multiple of 2**-52 inside (-1, 1)
    jitter *= tau
    new_t = inside(old + jitter, old, float(tau))  # type: ignore[arg-type]
    return new_t, np.repeat(np.arange(n, dtype=np.int64), k), np.tile(np.arange(k, dtype=np.int32), n)


def _checks(before: np.ndarray, after: np.ndarray, origin: np.ndarray, tau: float | None) -> dict[str, Any]:
    shift = np.abs(after - before[origin])
    return {"max_abs_jitter_over_tau_bar": float(shift.max() / tau) if len(shift) else 0.0,
            "jitter_below_tau_bar": bool((shift < tau).all())}


TRANSFORM = Transform(
    name="intense", summary="INTENSE(k): each test event replaced by k copies jittered by U(-tau_bar, tau_bar) "
    "(TLPCF)", params=(K,), applies_to=frozenset({"temporal-graph"}), needs_tau_bar=True,
    copies=lambda params: int(params["k"]), apply=_apply, checks=_checks,
    describe=lambda params: f"INTENSE with k = {params.get('k')} ({params.get('k')} copies of every test event, each "
                            "jittered by U(-tau_bar, tau_bar); the originals dropped)")
