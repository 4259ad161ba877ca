"""Handing memory a long computation has freed back to the system, so its resident set follows what it holds.

Arrow's memory pool keeps freed blocks for reuse, and glibc's malloc keeps freed heap pages below its (self-raising)
mmap threshold: after a step that allocated large transient blocks (a Parquet row group written or read, a CSV
block parsed) the resident set stays at that step's peak and the next step's comes on top. A loop over row groups
calls :func:`give_back_memory` between them, and its peak stays one step's, however many steps it takes.
"""

from __future__ import annotations

import ctypes
import functools
import platform
import sys

import pyarrow as pa


def give_back_memory() -> None:
    """Return what Arrow's default pool and glibc's malloc keep of freed memory to the system (on another libc,
    only Arrow's pool is asked)."""
    pa.default_memory_pool().release_unused()
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)


@functools.cache
def _glibc() -> ctypes.CDLL | None:
    """glibc, where the process runs on it (its ``malloc_trim``), else None."""
    if sys.platform != "linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None
