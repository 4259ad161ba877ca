"""tgbhub.memory: freed memory handed back to the system, so a loop over row groups keeps one group's peak."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: 256 MiB in 64 KiB blocks (below malloc's mmap threshold: they come from the heap), every other one freed: the
#: heap cannot shrink from its top, so the freed half stays resident until someone trims it; prints the resident
#: MiB after freeing and after giving back
FRAGMENTED = """
from pathlib import Path
from tgbhub.memory import give_back_memory

def resident():
    line = next(l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith("VmRSS:"))
    return int(line.split()[1]) >> 10

blocks = [bytearray(64 << 10) for _ in range(4096)]
del blocks[::2]
freed = resident()
give_back_memory()
print(freed, resident())
"""


def test_freed_heap_memory_leaves_the_resident_set() -> None:
    done = subprocess.run([sys.executable, "-c", FRAGMENTED], capture_output=True, text=True, check=True, cwd=ROOT)
    freed, given_back = (int(value) for value in done.stdout.split())
    assert freed - given_back > 96, (freed, given_back)  # most of the 128 MiB freed in the heap's middle


def test_giving_back_twice_is_harmless_and_quick() -> None:
    import time

    from tgbhub.memory import give_back_memory

    started = time.perf_counter()
    for _ in range(100):
        give_back_memory()
    assert time.perf_counter() - started < 1.0
