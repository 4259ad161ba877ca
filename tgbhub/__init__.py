"""tgbhub: the dataset hub for temporal-graph learning.

>>> import tgbhub
>>> ds = tgbhub.load_dataset("t-grab/ce-64")   # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from tgbhub.api import counterfactual, get_evaluator, load_dataset, manifest_of, resolve
from tgbhub.errors import (
    DatasetNotFoundError,
    FetchError,
    GenerationError,
    IntegrityError,
    InvalidNameError,
    ManifestError,
    PublishError,
    SourceUnavailableError,
    SourceWarning,
    SubmissionError,
    TgbhubError,
    VersionConflictError,
    VersionNotFoundError,
)
from tgbhub.version import __version__

__all__ = [
    "DatasetNotFoundError", "FetchError", "GenerationError", "IntegrityError", "InvalidNameError", "ManifestError",
    "PublishError", "SourceUnavailableError", "SourceWarning", "SubmissionError", "TgbhubError",
    "VersionConflictError", "VersionNotFoundError", "__version__", "build", "counterfactual", "get_evaluator",
    "leaderboard", "load_dataset", "manifest_of", "resolve", "submit", "train",
]


#: names re-exported from the applications on top of the API, imported when first used: ``import tgbhub`` loads
#: neither the Dask backend nor the trainers
_LAZY = {"build": "tgbhub.scale", "train": "tgbhub.training", "leaderboard": "tgbhub.results.leaderboards",
         "submit": "tgbhub.results.submissions"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'tgbhub' has no attribute {name!r}")
