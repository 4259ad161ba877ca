"""A one-line notice on stderr before a numba kernel compiles for the first time in a process.

numba compiles a kernel on its first call, which for the standard-map kernel takes 5 to 15 s with nothing on screen:
long enough to look like a hang. Every kernel here is ``cache=True``, so the compiled code is kept on disk (next to
the module in ``__pycache__``, or in ``NUMBA_CACHE_DIR``, or, when the install is read-only, in numba's user cache
folder) and later processes load it in well under a second; the notice is printed only when a compile will really
happen: the kernel has no code for the call's argument types in this process, and none in the on-disk cache.

The notice changes nothing about what is computed: the kernels, their flags and their cached machine code are
numba's own (numba keys a cache entry by the CPU's name and features, so cached code is never reused on a
machine it was not compiled for).
"""

from __future__ import annotations

import os
import sys
import threading
import weakref
from collections.abc import Sequence
from typing import Any, TextIO

#: kernels already announced in this process (one notice each, even when threads race to the first call)
_announced: weakref.WeakSet[object] = weakref.WeakSet()
_lock = threading.Lock()
#: set by `tgbhub --quiet`: no notices on stderr, errors only
QUIET_ENV = "TGBHUB_QUIET"


def will_compile(kernel: Any, args: Sequence[object]) -> bool:
    """Whether calling the numba dispatcher ``kernel`` with ``args`` compiles it now.

    ``False`` when this process already holds code for the arguments' types, when numba's on-disk cache has it (a
    load, not a compile), or when ``kernel`` is not compiled at all (``NUMBA_DISABLE_JIT=1``). Reads numba's
    dispatcher and cache index, some of it private; where they are not as expected (another numba), the answer is
    "compiles" while the kernel has no code yet: a notice too many rather than a silent pause. Raises nothing.
    """
    overloads = getattr(kernel, "overloads", None)
    if overloads is None:
        return False  # a plain Python function: nothing to compile
    try:
        signature = tuple(kernel.typeof_pyval(a) for a in args)
    except Exception:  # noqa: BLE001 - a notice must never break the call it announces
        return not overloads
    if signature in overloads:
        return False
    return not _in_disk_cache(kernel, signature)


def _in_disk_cache(kernel: Any, signature: tuple[Any, ...]) -> bool:
    """Whether numba's on-disk cache holds ``kernel`` compiled for ``signature`` on this machine (the same index
    lookup numba's ``Cache.load_overload`` does before it compiles)."""
    cache = getattr(kernel, "_cache", None)
    index_key = getattr(cache, "_index_key", None)
    cache_file = getattr(cache, "_cache_file", None)
    if index_key is None or cache_file is None:
        return False  # no on-disk cache (cache=False), or a numba whose cache looks otherwise
    try:
        return index_key(signature, kernel.targetctx.codegen()) in cache_file._load_index()
    except Exception:  # noqa: BLE001 - an unreadable index is numba's to report when it loads; here: "not cached"
        return False


def announce_compile(kernel: Any, args: Sequence[object], what: str, duration: str,
                     stream: TextIO | None = None) -> bool:
    """Print ``compiling WHAT (first use in this process, about DURATION)...`` on stderr (or ``stream``) when
    ``kernel(*args)`` is about to compile (:func:`will_compile`) and ``kernel`` has not been announced in this
    process yet, unless ``TGBHUB_QUIET`` is set. Call it just before the kernel. Returns whether it printed. Raises
    nothing (a failed write to the stream aside).
    """
    if os.environ.get(QUIET_ENV):  # `tgbhub --quiet`: errors only
        return False
    with _lock:
        if kernel in _announced or not will_compile(kernel, args):
            return False
        _announced.add(kernel)
    print(f"compiling {what} (first use in this process, about {duration})...", file=stream or sys.stderr,
          flush=True)
    return True
