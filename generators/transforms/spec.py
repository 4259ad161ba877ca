"""What a transform plug-in declares (one module per transform in this folder, registered in
:data:`generators.transforms.REGISTERED`).

A transform rewrites the *events* of one split of a temporal graph (the test split: TLPCF's scope). The shared
driver (:func:`generators.tlpcf.distort.distort_with_facts`) validates the columns, finds the events (one per
undirected edge for symmetric data), calls the transform's ``apply`` on their timestamps, then sorts the copies and
restores the mirror rows; the variant's files, negatives, statistics and manifest are the same for every transform
(:mod:`generators.tlpcf.artifacts`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

#: the column dtypes of every variant's events file (``test-events.parquet``), whatever the transform and the parent:
#: the shared driver rewrites timestamps in float64 (INTENSE's jittered times are fractional, and one schema serves
#: every variant), so ``t`` is float64 even where the parent stores int64 snapshot indices (a SHUFFLE's permuted times
#: are whole numbers stored as float64); ``src`` and ``dst`` keep the parent's int32
EVENT_DTYPES: Mapping[str, str] = MappingProxyType({"t": "float64", "src": "int32", "dst": "int32",
                                                    "orig_event_id": "int64", "copy_idx": "int32"})
#: the one line a transform's card gives of its dtype change
DTYPE_CHANGE = ("t becomes float64 whatever the parent stores (int64 snapshot indices included): the rows kept from "
                "the parent are exposed as float64 too, so the column has one dtype; src and dst keep int32")


@dataclass(frozen=True)
class Param:
    """One integer parameter of a transform: its name as it appears in a variant's name (``k`` in
    ``~intense-k5-s0``), its inclusive bounds, its default (``None``: required) and a few words for help texts."""

    name: str
    low: int
    high: int
    help: str
    default: int | None = None

    def describe(self) -> str:
        """``k: int in [1, 100], required (jittered copies per event)``."""
        default = "required" if self.default is None else f"default {self.default}"
        return f"{self.name}: int in [{self.low}, {self.high}], {default} ({self.help})"


#: ``apply(t, params, key, tau_bar)``: the events' float64 timestamps (stored order), the canonical parameters, the
#: variant's uint64 key and tau_bar of the events (``None`` where undefined and not needed) -> ``(new_t,
#: orig_event_id, copy_idx)`` of every output copy, generated in ``(orig_event_id, copy_idx)`` order
Apply = Callable[[np.ndarray, Mapping[str, Any], int, "float | None"], tuple[np.ndarray, np.ndarray, np.ndarray]]
#: ``checks(t_before, t_after, origin, tau_bar)``: the transform's own invariants as named facts (a ``False`` fact
#: fails the build); ``origin`` maps each output event to its input event
Checks = Callable[[np.ndarray, np.ndarray, np.ndarray, "float | None"], dict[str, Any]]


@dataclass(frozen=True)
class Transform:
    """One transform plug-in.

    ``name``: its kind as it appears in variant names (``shuffle``). ``summary``: one line for ``tgbhub list``/
    ``info``. ``params``: its own parameters (every transform also takes ``scope``, the split it rewrites).
    ``applies_to``: the dataset kinds (manifest ``graph.kind``) it can rewrite. ``needs_tau_bar``: whether ``apply``
    needs tau_bar (the build then refuses a split where it is undefined). ``copies(params)``: output events per input
    event. ``apply``/``checks``: see :data:`Apply` and :data:`Checks`. ``describe(params)``: the phrase a variant's
    manifest description starts with.
    """

    name: str
    summary: str
    params: tuple[Param, ...]
    applies_to: frozenset[str]
    needs_tau_bar: bool
    copies: Callable[[Mapping[str, Any]], int]
    apply: Apply
    checks: Checks
    describe: Callable[[Mapping[str, Any]], str]

    @property
    def dtypes(self) -> Mapping[str, str]:
        """The column dtypes of the variant's events file (:data:`EVENT_DTYPES`: the shared driver writes them)."""
        return EVENT_DTYPES

    def card(self) -> dict[str, Any]:
        """What ``tgbhub list``/``info`` show of the transform, its column ``dtypes`` and ``dtype_change`` included."""
        return {"name": self.name, "summary": self.summary, "applies_to": sorted(self.applies_to),
                "params": [p.describe() for p in self.params], "example": f"~{self.name}"
                + "".join(f"-{p.name}{p.default if p.default is not None else p.low}" for p in self.params) + "-s0",
                "dtypes": dict(self.dtypes), "dtype_change": DTYPE_CHANGE}
