"""The one exception tree of tgbhub.

Every class subclasses :class:`TgbhubError` and the builtin a caller would naturally catch, and every message says
what went wrong, with which value, and how to fix it.
"""

from __future__ import annotations

import errno
from collections.abc import Sequence
from typing import Any, TypeGuard


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

    @classmethod
    def with_advice(cls, name: str, advice: str) -> DatasetNotFoundError:
        """The error for a dataset that exists elsewhere but not here, with what to do instead of a suggestion."""
        error = cls(name)
        error.args = (f"{name!r} is not in this cache: {advice}.",)
        return error


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


class ScoreError(TgbhubError, ValueError):
    """Scores handed to a metric have the wrong shape, dtype, or hold NaN/inf; no metric was computed."""


class SubmissionError(TgbhubError, ValueError):
    """A submission file breaks its task's schema; it names the column, the first bad row and the fix, never a score."""

    def __init__(self, column: str, row: int | None, problem: str, fix: str) -> None:
        self.column = column
        self.row = row
        self.problem = problem
        self.fix = fix
        where = f"column {column!r}" + (f", row {row}" if row is not None else "")
        super().__init__(f"submission {where}: {problem}. {fix}")


class RecordError(TgbhubError, ValueError):
    """A result record cannot be used as asked: missing or unreadable, not a record, edited after it was written (its
    ``record_sha256`` no longer matches), or records that cannot be aggregated; the message names the file or field
    and the fix."""


class TrainingPaused(TgbhubError, RuntimeError):
    """A resumable fit stopped at its time limit before its protocol ended; its state file holds every epoch run."""

    def __init__(self, message: str, *, state_file: str, epochs_run: int, epochs: int) -> None:
        self.state_file = state_file
        self.epochs_run = epochs_run
        self.epochs = epochs
        super().__init__(message)


class NotFittedError(TgbhubError, RuntimeError):
    """A trainer was asked to predict, forecast or save before :meth:`fit` or :meth:`restore` gave it a network."""


class UnsupportedTaskError(TgbhubError, LookupError):
    """A manifest declares a task (or a baseline model) this tgbhub has no implementation for."""


class FetchError(TgbhubError, OSError):
    """A source (hub or mirror) could not deliver a file: unreachable, missing, refused or interrupted."""

    def __init__(self, source: str, what: str, reason: str, fix: str) -> None:
        self.source = source
        self.what = what
        self.reason = reason
        super().__init__(f"{source}: could not fetch {what}: {reason}. {fix}")


class PublishError(TgbhubError, RuntimeError):
    """A publish could not be carried out (bad target, unverifiable files, a hub that refused the write)."""


class VersionConflictError(PublishError, ValueError):
    """The version is already published with different content; published versions never change."""

    def __init__(self, repo: str, tag: str, differing: Sequence[str]) -> None:
        self.repo = repo
        self.tag = tag
        self.differing = tuple(differing)
        shown = ", ".join(self.differing[:5]) + (f" and {len(self.differing) - 5} more" if len(differing) > 5 else "")
        super().__init__(f"{repo} already has {tag} with different content ({shown}); a published version never "
                         "changes. Publish the new content under a new version (bump the manifests' version).")


class SchedulerUnavailableError(TgbhubError, OSError):
    """A Dask scheduler named by ``--scheduler`` did not answer; the message says how to start or reach one."""


class CacheWriteError(TgbhubError, OSError):
    """The cache (or an output folder) cannot be written: full disk, read-only file system, a path that is a file, no
    permission. Not a source's fault, so no other source is tried; the message names the path and the way out."""

    ADVICE = {
        errno.ENOSPC: "the disk is full: free space, or point the cache elsewhere (--cache-dir DIR or TGBHUB_CACHE)",
        errno.EDQUOT: "the disk quota is used up: free space, or point the cache elsewhere (--cache-dir DIR)",
        errno.EROFS: "the file system is read-only: point the cache at a writable folder (--cache-dir DIR)",
        errno.EACCES: "no permission to write there: point the cache at a folder you own (--cache-dir DIR)",
        errno.EPERM: "no permission to write there: point the cache at a folder you own (--cache-dir DIR)",
        errno.ENOTDIR: "a path on the way is a file, not a folder: pass a folder (--cache-dir DIR, --out DIR)",
        errno.ENOENT: "a folder on the way does not exist: create it, or pass an existing one",
    }

    def __init__(self, what: str, exc: OSError) -> None:
        self.what = what
        path = exc.filename or "?"
        advice = self.ADVICE.get(exc.errno or 0, "check the path and the disk")
        super().__init__(exc.errno, f"cannot write {what} at {path}: {exc.strerror or exc}; {advice}")

    def __str__(self) -> str:
        return str(self.args[1])

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled as made (a Dask worker sends it back to the client): its __init__ takes other arguments than args
        return _restore, (type(self), self.args, dict(self.__dict__))

    @classmethod
    def applies(cls, exc: BaseException) -> TypeGuard[OSError]:
        """Whether ``exc`` is a local write failure (full disk, read-only, not a folder, no permission)."""
        return isinstance(exc, OSError) and not isinstance(exc, TgbhubError) and exc.errno in cls.ADVICE


class DiskFullError(CacheWriteError):
    """The disk (or quota) holding the cache filled up while a dataset was installed. Nothing was installed and what
    the install had written was removed; the message names the cache folder, the disk's mount point, the bytes the
    manifest declares and the free bytes, and the way out."""

    def __init__(self, what: str, folder: str, mount: str, free: int | None, declared: int | None,
                 written: int | None, exc: OSError) -> None:
        self.what = what
        self.folder = folder
        self.mount = mount
        self.free = free
        self.declared = declared
        self.written = written
        full = "the disk quota is used up" if exc.errno == errno.EDQUOT else "the disk is full"
        have = "too little free space" if free is None else f"{human_bytes(free)} free"
        if declared is not None:
            # the manifest knows its files only: the cache also keeps each column as an array beside them
            needs = (f"this install needs more: its manifest declares {human_bytes(declared)} of files, and the "
                     "cache keeps their columns as arrays beside them")
        else:
            needs = "this install needs more"
        if written:
            needs += f" ({human_bytes(written)} were written before the disk filled)"
        message = (f"cannot write {what} into the cache at {folder}: {full}. The disk mounted at {mount} has {have}, "
                   f"and {needs}. Nothing was installed and its partial files were removed. Free space on {mount}, "
                   "or point the cache at a disk with room: --cache-dir DIR or TGBHUB_CACHE=DIR")
        OSError.__init__(self, exc.errno or errno.ENOSPC, message)


def _restore(cls: type[CacheWriteError], args: tuple[Any, ...], state: dict[str, Any]) -> CacheWriteError:
    """A :class:`CacheWriteError` (or subclass) back from a pickle, without its ``__init__``."""
    error = cls.__new__(cls, *args)
    OSError.__init__(error, *args)
    error.__dict__.update(state)
    return error


def human_bytes(count: int) -> str:
    """``1536`` -> ``'1.5 KiB'``: three significant digits, binary units (how messages and the command line print
    sizes)."""
    value, units = float(count), ("B", "KiB", "MiB", "GiB", "TiB")
    unit = 0
    while value >= 1024 and unit < len(units) - 1:
        value, unit = value / 1024, unit + 1
    if unit == 0:
        return f"{count} B"
    return f"{value:.3g} {units[unit]}" if value < 1000 else f"{value:.0f} {units[unit]}"  # not 1.01e+03


class SourceWarning(UserWarning):
    """A source failed or served bytes that did not verify; the next source was tried."""


class HubServerError(TgbhubError, RuntimeError):
    """The local Hub server could not be started (olah missing, port taken, olah exited)."""


class MissingExtraError(TgbhubError, ModuleNotFoundError):
    """An optional dependency is not installed; the message names the package and the extra of a checkout's
    install that brings it."""

    def __init__(self, package: str, extra: str, needed_for: str) -> None:
        self.package = package
        self.extra = extra
        # the extra pins what the project tested (torch==2.13.0, the CPU wheel): a bare `pip install torch` would not
        super().__init__(f"{needed_for} needs {package}, which is not installed: in your tgbhub checkout, run "
                         f"pip install -e '.[{extra}]'", name=package)


class SubmissionWarning(UserWarning):
    """A submission was graded, but something in it looks like a mistake the score alone would not reveal."""


class SubmissionScaleWarning(SubmissionWarning):
    """Submitted values sit at the scale of the raw data, not of the normalised targets the task grades against."""
