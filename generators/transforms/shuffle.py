"""SHUFFLE (TLPCF): the test timestamps permuted across the test events; pairs and the timestamp multiset kept."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .draws import shuffle_permutation
from .spec import Transform


def _apply(t: np.ndarray, params: Mapping[str, Any], key: int,
           tau: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = len(t)
    return t[shuffle_permutation(n, key)], np.arange(n, dtype=np.int64), np.zeros(n, dtype=np.int32)


def _checks(before: np.ndarray, after: np.ndarray, origin: np.ndarray, tau: float | None) -> dict[str, Any]:
    return {"timestamp_multiset_unchanged": bool(np.array_equal(np.sort(before), np.sort(after)))}


TRANSFORM = Transform(
    name="shuffle", summary="SHUFFLE: the test timestamps permuted across the test events (TLPCF)", params=(),
    applies_to=frozenset({"temporal-graph"}), needs_tau_bar=False, copies=lambda params: 1, apply=_apply,
    checks=_checks,
    describe=lambda params: "SHUFFLE (the test timestamps permuted across the test events)")
