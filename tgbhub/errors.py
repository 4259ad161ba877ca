"""The one exception tree of tgbhub.

Every class subclasses :class:`TgbhubError` and the builtin a caller would naturally catch, and every message says
what went wrong, with which value, and how to fix it.
"""

from __future__ import annotations

from collections.abc import Sequence


class TgbhubError(Exception):
    """Base class of every error tgbhub raises on purpose."""


class InvalidNameError(TgbhubError, ValueError):
    """A dataset reference is malformed (bad characters, ``..``, extra ``/``, absolute path, bad version)."""


class DatasetNotFoundError(TgbhubError, LookupError):
    """No manifest declares the requested dataset."""

    def __init__(self, name: str, suggestions: Sequence[str] = ()) -> None:
        self.name = name
        self.suggestions = tuple(suggestions)
        hint = f" Did you mean {', '.join(repr(s) for s in self.suggestions)}?" if self.suggestions else ""
        super().__init__(f"unknown dataset {name!r}.{hint} Run `tgbhub list` to see every dataset.")


class VersionNotFoundError(TgbhubError, LookupError):
    """The dataset exists, but not in the requested version."""

    def __init__(self, name: str, version: str, available: Sequence[str]) -> None:
        self.name = name
        self.version = version
        self.available = tuple(available)
        super().__init__(f"dataset {name!r} has no version {version!r}; available versions: "
                         f"{', '.join(self.available)}. Pin one of them, e.g. '{name}@{self.available[-1]}'.")


class ManifestError(TgbhubError, ValueError):
    """A manifest is missing a field or holds a value of the wrong shape."""


class IntegrityError(TgbhubError, ValueError):
    """Bytes did not match what the manifest promises; nothing was installed."""

    def __init__(self, what: str, expected: str, actual: str, fix: str) -> None:
        self.what = what
        self.expected = expected
        self.actual = actual
        super().__init__(f"{what}: expected {expected}, got {actual}. {fix}")


class SourceUnavailableError(TgbhubError, OSError):
    """No configured source could provide the dataset; lists what each source said."""

    def __init__(self, name: str, failures: Sequence[tuple[str, str]], fix: str) -> None:
        self.name = name
        self.failures = tuple(failures)
        details = "; ".join(f"{source}: {reason}" for source, reason in self.failures) or "no source is configured"
        super().__init__(f"could not obtain {name!r} ({details}). {fix}")


class GenerationError(TgbhubError, RuntimeError):
    """A generator could not rebuild a dataset from its recipe."""
