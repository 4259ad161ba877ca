"""tgbhub: the dataset hub for temporal-graph learning.

>>> import tgbhub
>>> ds = tgbhub.load_dataset("t-grab/ce-64")   # doctest: +SKIP
"""

from __future__ import annotations

from tgbhub.api import load_dataset, resolve
from tgbhub.errors import (DatasetNotFoundError, GenerationError, IntegrityError, InvalidNameError, ManifestError,
                           SourceUnavailableError, TgbhubError, VersionNotFoundError)

__version__ = "0.1.0"

__all__ = [
    "DatasetNotFoundError", "GenerationError", "IntegrityError", "InvalidNameError", "ManifestError",
    "SourceUnavailableError", "TgbhubError", "VersionNotFoundError", "__version__", "load_dataset", "resolve",
]
