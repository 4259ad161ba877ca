"""tgbhub: the dataset hub for temporal-graph learning.

>>> import tgbhub
>>> ds = tgbhub.load_dataset("t-grab/ce-64")   # doctest: +SKIP
"""

from __future__ import annotations

from tgbhub.api import counterfactual, get_evaluator, load_dataset, manifest_of, resolve
from tgbhub.errors import (DatasetNotFoundError, FetchError, GenerationError, IntegrityError, InvalidNameError,
                           ManifestError, PublishError, SourceUnavailableError, SourceWarning, SubmissionError,
                           TgbhubError, VersionConflictError, VersionNotFoundError)
from tgbhub.scale import build
from tgbhub.training import train

__version__ = "0.1.0"

__all__ = [
    "DatasetNotFoundError", "FetchError", "GenerationError", "IntegrityError", "InvalidNameError", "ManifestError",
    "PublishError", "SourceUnavailableError", "SourceWarning", "SubmissionError", "TgbhubError",
    "VersionConflictError", "VersionNotFoundError", "__version__", "build", "counterfactual", "get_evaluator",
    "load_dataset", "manifest_of", "resolve", "train",
]
