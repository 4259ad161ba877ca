"""The transform registry: every transform that derives a variant from a temporal graph (``base~kind-...-sSEED``).

A transform is a plug-in: one module defining ``TRANSFORM`` (a :class:`~.spec.Transform`: its parameters with
bounds, the dataset kinds it applies to, its invariants and ``apply``), named here by one line of
:data:`REGISTERED`. Naming, parameter checks, the build, ``tgbhub list``/``info``, ``load_dataset``, ``export`` and
``counterfactual`` all read this registry; nothing else lists transforms.

Adding a transform: write ``generators/transforms/<name>.py`` defining ``TRANSFORM``, then add one line to
:data:`REGISTERED` (a module path starting with ``.`` is inside this folder; any other is imported as written).

Derived datasets' names: ``<family>/<base>~<kind>[-<param><value>...]-s<seed>``, parameters alphabetically,
``scope`` left out (it is always the test split), e.g. ``t-grab/ce-64~intense-k5-s0``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypeGuard

import numpy as np

from tgbhub.errors import GenerationError
from tgbhub.plugins import PluginTable

from .spec import Param, Transform

__all__ = ["REGISTERED", "SCOPES", "MAX_SEED", "TRANSFORMS", "Param", "Transform", "applicable", "canonical_params",
           "check_seed", "is_int", "kind_label", "names", "parse_kind", "parse_suffix", "transform", "transforms",
           "derived_suffix"]

#: transform kind -> the module that defines its ``TRANSFORM``
REGISTERED: dict[str, str] = {
    "shuffle": ".shuffle",
    "intense": ".intense",
}
#: the registered transforms, each module imported when its kind is first read
TRANSFORMS: PluginTable[str, Transform] = PluginTable("transform", REGISTERED, attribute="TRANSFORM",
                                                      package=__package__, error=GenerationError,
                                                      hint=" (see `tgbhub list --transforms`)")
#: the splits a transform may rewrite; TLPCF distorts the test split only (docs/derived.md)
SCOPES: tuple[str, ...] = ("test",)
DEFAULT_SCOPE = "test"
#: seeds are non-negative and below 2**63 (a variant's key hashes the seed's decimal digits)
MAX_SEED = 2 ** 63 - 1
#: a variant's kind as written in its name: the transform and its parameters (``intense-k5``)
_KIND = r"(?P<kind>[a-z]+)(?P<params>(?:-[a-z]+\d+)*)"
_SUFFIX = re.compile(rf"^{_KIND}-s(?P<seed>\d+)$")
_PARAM = re.compile(r"-([a-z]+)(\d+)")


def names() -> list[str]:
    """Every registered transform kind, in registration order."""
    return list(REGISTERED)


def transform(kind: str) -> Transform:
    """The registered transform ``kind``.

    Raises:
        GenerationError: if no transform of that name is registered (listing the known ones).
    """
    return TRANSFORMS.require(kind)


def transforms() -> list[Transform]:
    """Every registered transform, in registration order."""
    return list(TRANSFORMS.values())


def is_int(value: object) -> TypeGuard[int | np.integer]:
    """A true integer: Python or numpy int, never a bool (``True`` would otherwise pass as 1)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def canonical_params(kind: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """Validate a kind's parameters and return them canonical: defaults filled, the kind's own parameters
    alphabetically, then ``scope`` (e.g. ``{"k": 5, "scope": "test"}`` for ``intense``), ints as Python ints.

    Raises:
        GenerationError: for an unknown kind or parameter, a missing required one, a value that is not an int or is
            outside its bounds (naming the allowed range), a ``scope`` other than ``"test"``, or a ``seed`` among the
            parameters.
    """
    spec = transform(kind)
    own = {p.name: p for p in spec.params}
    unknown = sorted(set(params) - set(own) - {"scope"})
    if unknown:
        hint = " (pass the seed separately, not among the parameters)" if "seed" in unknown else ""
        accepted = ", ".join([*sorted(own), "scope"])
        raise GenerationError(f"transform {kind!r} has no parameter {unknown[0]!r}{hint}; it accepts: {accepted}")
    out: dict[str, Any] = {}
    for name in sorted(own):
        param = own[name]
        value = params.get(name, param.default)
        if value is None:
            raise GenerationError(f"transform {kind!r} needs {name!r} ({param.describe()}); e.g. "
                                  f"~{kind}-{name}{param.low}-s0")
        if not is_int(value):
            raise GenerationError(f"transform {kind!r}: {name} must be an int, got {value!r} "
                                  f"({type(value).__name__}); {param.describe()}")
        if not param.low <= value <= param.high:
            raise GenerationError(f"transform {kind!r}: {name}={value} is out of range; {param.describe()}")
        out[name] = int(value)
    scope = params.get("scope", DEFAULT_SCOPE)
    if scope not in SCOPES:
        raise GenerationError(f"scope {scope!r} is not supported; transforms apply to {', '.join(SCOPES)} only "
                              "(drop scope or pass scope=test)")
    out["scope"] = scope
    return out


def check_seed(seed: object, where: str) -> int:
    """``seed`` as an int.

    Raises:
        GenerationError: if it is not an int in ``[0, MAX_SEED]``.
    """
    if not is_int(seed) or not 0 <= seed <= MAX_SEED:
        raise GenerationError(f"variant seed {seed!r} of {where} must be an int in [0, 2**63 - 1], e.g. 0")
    return int(seed)


def kind_label(kind: str, params: Mapping[str, Any]) -> str:
    """A variant's kind as its canonical name writes it, before the seed: ``intense-k5``, ``shuffle``.

    Raises:
        GenerationError: as :func:`canonical_params`.
    """
    canonical = canonical_params(kind, params)
    return kind + "".join(f"-{key}{value}" for key, value in canonical.items() if key != "scope")


def derived_suffix(kind: str, params: Mapping[str, Any], seed: int) -> str:
    """What follows ``~`` in a variant's canonical name: ``intense-k5-s0``.

    Raises:
        GenerationError: as :func:`canonical_params` and :func:`check_seed`.
    """
    return f"{kind_label(kind, params)}-s{check_seed(seed, kind)}"


def parse_kind(label: str) -> tuple[str, dict[str, int]] | None:
    """``(kind, params)`` of a kind written as in a variant's name (``intense-k5``), or ``None`` if it has not the
    grammar's shape (whether the kind and values are valid is :func:`canonical_params`' to say)."""
    match = re.fullmatch(_KIND, label)
    if match is None:
        return None
    return match["kind"], {key: int(value) for key, value in _PARAM.findall(match["params"])}


def parse_suffix(suffix: str) -> tuple[str, dict[str, int], int] | None:
    """``(kind, params, seed)`` of a variant name's suffix (what follows ``~``), or ``None`` if it has not the
    grammar's shape (whether the kind and values are valid is :func:`canonical_params`' to say)."""
    match = _SUFFIX.fullmatch(suffix)
    if match is None:
        return None
    params = {key: int(value) for key, value in _PARAM.findall(match["params"])}
    return match["kind"], params, int(match["seed"])


def applicable(kind: str, dataset: str, dataset_kind: str | None) -> None:
    """Refuse a transform on a dataset of a kind it does not apply to.

    Raises:
        GenerationError: naming the transform, the dataset, its kind and the kinds the transform applies to.
    """
    spec = transform(kind)
    if dataset_kind not in spec.applies_to:
        raise GenerationError(f"transform {kind!r} applies to {', '.join(sorted(spec.applies_to))} datasets; "
                              f"{dataset} is a {dataset_kind or 'dataset of undeclared kind'} dataset")
