"""The distorted variants we publish, and the grammar that names every variant.

Names: ``<family>/<base>~<kind>[-<param><value>...]-s<seed>``, parameters in alphabetical order, e.g.
``t-grab/ce-64~shuffle-s3``, ``t-grab/ce-64~intense-k5-s0``. A form like ``<dataset>@distort=...`` would collide with
``name@version``; ``~`` cannot appear in a base name, so a variant's name says where it comes from and still takes a
version: ``t-grab/ce-64~shuffle-s3@1.0.0``. A variant lives in its base's family (``tgbhub list --family t-grab``
shows it next to its base, and it is published in the same hub repo).

Published defaults (docs/derived.md): for every T-GRAB dataset, ``shuffle``, ``intense`` with k = 5 (the paper's)
and k = 1 (the control that jitters without duplicating), seeds 0-9, test split only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tgbhub.errors import InvalidNameError

from ..tgrab.catalogue import entries as tgrab_entries
from ..transforms import derived_suffix, kind_label, parse_kind, parse_suffix

GENERATOR = "tlpcf/distort"
#: the transform's code version: a variant's bytes are a function of (parent content, kind, params, seed, VERSION)
VERSION = "1.0.0"
#: the published variant kinds, ``(kind, params)``, and seeds of every T-GRAB dataset: the counterfactual check's
#: default conditions too
DEFAULT_KINDS: tuple[tuple[str, dict[str, int]], ...] = (("shuffle", {}), ("intense", {"k": 5}),
                                                         ("intense", {"k": 1}))
DEFAULT_SEEDS = tuple(range(10))
CITATION = ("@article{rahman2024tlpcf, title={Rethinking Evaluation Strategy for Temporal Link Prediction through "
            "Counterfactual Analysis}, author={Rahman, Aniq Ur and Modell, Alexander and Coon, Justin P.}, "
            "journal={Preprint}, year={2024}, note={code: github.com/Aniq55/TLPCF}}")


def derived_name(base: str, kind: str, params: Mapping[str, Any], seed: int) -> str:
    """The canonical name of a variant of ``base`` (``family/name``); ``scope`` is implied (always the test split).

    Raises:
        GenerationError: for an unknown kind, a missing, invalid or out-of-range parameter, or a bad seed.
    """
    return f"{base}~{derived_suffix(kind, params, seed)}"


def derived_names(base: str, kinds: Sequence[str] | None = None, seeds: Sequence[int] | None = None) -> list[str]:
    """The canonical names of ``base``'s variants of each kind in ``kinds``, written as in a variant's name
    (``shuffle``, ``intense-k5``; default the published kinds), and each seed in ``seeds`` (default the published
    seeds): in kind order, then by seed.

    Raises:
        InvalidNameError: for a kind not written ``KIND[-PARAMVALUE...]``, or not as a canonical name writes it
            (naming the canonical spelling).
        GenerationError: for an unknown kind, a missing, invalid or out-of-range parameter, or a bad seed.
    """
    chosen = DEFAULT_KINDS if kinds is None else [_written_kind(label) for label in kinds]
    return [derived_name(base, kind, params, seed) for kind, params in chosen
            for seed in (DEFAULT_SEEDS if seeds is None else seeds)]


def _written_kind(label: str) -> tuple[str, dict[str, int]]:
    """``(kind, params)`` of a kind written as in a canonical variant name (``intense-k5``).

    Raises:
        InvalidNameError: if ``label`` is not written so.
        GenerationError: for an unknown kind or a missing, invalid or out-of-range parameter.
    """
    parsed = parse_kind(label) if isinstance(label, str) else None
    if parsed is None:
        raise InvalidNameError(f"variant kind {label!r} is not KIND[-PARAMVALUE...]; write it as in a variant's name, "
                               "e.g. shuffle or intense-k5")
    canonical = kind_label(*parsed)
    if canonical != label:
        raise InvalidNameError(f"variant kind {label!r} is not written canonically; write {canonical!r}")
    return parsed


def parse_derived(name: str) -> tuple[str, str, dict[str, int], int] | None:
    """``(base, kind, params, seed)`` of a variant name, or ``None`` if ``name`` names no variant."""
    base, tilde, suffix = name.partition("~")
    parsed = parse_suffix(suffix) if tilde else None
    if parsed is None:
        return None
    kind, params, seed = parsed
    return base, kind, params, seed


@dataclass(frozen=True)
class Derivation:
    """How one derived dataset is made: its base (``family/name``) and the base version it pins, transform and seed.

    Its version is its parent's: ``base~kind-...@V`` is derived from ``base@V``, so one ``name@version`` means the same
    bytes on every machine, whatever other versions of the base it holds. (A transform whose output changes is a new
    transform, never a new version of a variant.)
    """

    base: str
    base_version: str
    kind: str
    params: dict[str, Any]
    seed: int

    @property
    def version(self) -> str:
        return self.base_version

    @property
    def name(self) -> str:
        return derived_name(self.base, self.kind, self.params, self.seed)

    @property
    def parent(self) -> str:
        return f"{self.base}@{self.base_version}"


def defaults() -> list[Derivation]:
    """Every published default variant: for each T-GRAB dataset, each default kind, seeds 0-9."""
    return [Derivation(base=entry.name, base_version=entry.version, kind=kind, params=params, seed=seed)
            for entry in tgrab_entries() for kind, params in DEFAULT_KINDS for seed in DEFAULT_SEEDS]
