"""``tgbhub doctor``: what this machine is, as far as bit-exact rebuilds are concerned, and whether each family's
newest datasets would rebuild here (their preflight checks, which take well under a second and build nothing).

What matters for reproducibility (docs/determinism.md): the C library's ``sin``/``cos``/``log`` (ChaosNet's
published values are glibc's FMA build on x86-64), the library versions behind the file bytes (which only change
the sha256 of a rebuild, never its content digest), and, for ChaosNet 1.0.0 only, the OpenBLAS kernel.
"""

from __future__ import annotations

import ctypes
import glob
import os
import platform
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

from tgbhub.errors import TgbhubError
from tgbhub.local.gateway import BuildSource
from tgbhub.registry import Registry, natural_key, parse_reference

PACKAGES = ("tgbhub", "numpy", "numba", "llvmlite", "h5py", "pyarrow", "huggingface-hub")


def _cpu() -> dict[str, Any]:
    flags: set[str] = set()
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                model = value.strip()
            elif key.strip() == "flags":
                flags = set(value.split())
    except OSError:
        pass
    return {"model": model, "machine": platform.machine(),
            "features": [f for f in ("fma", "avx2", "avx512f") if f in flags]}


def blas_core() -> str | None:
    """The kernel numpy's bundled OpenBLAS picked (``OPENBLAS_CORETYPE`` overrides it); ``None`` if unknown."""
    import numpy

    for path in glob.glob(os.path.join(os.path.dirname(numpy.__file__), os.pardir, "numpy.libs", "*openblas*")):
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for symbol in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename", "openblas_get_corename64_",
                       "openblas_get_corename"):
            function = getattr(library, symbol, None)
            if function is not None:
                function.restype = ctypes.c_char_p
                return function().decode()
    return None


def _versions() -> dict[str, str]:
    found = {}
    for package in PACKAGES:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = "not installed"
    try:
        import h5py

        found["hdf5 (library)"] = h5py.version.hdf5_version
    except ImportError:
        pass
    return found


def _newest(registry: Registry) -> Iterator[tuple[str, str]]:
    """One representative per family: its smallest dataset (by total file size) at its newest version."""
    for family in registry.families():
        best = None
        for name in sorted(registry.names(family, derived=False), key=natural_key):
            manifest = registry.resolve(parse_reference(name))
            size = sum(f.size for f in manifest.files)
            if manifest.recipe is not None and (best is None or size < best[0]):
                best = (size, name, manifest.version)
        if best is not None:
            yield best[1], best[2]


def report(registry: Registry | None = None) -> dict[str, Any]:
    """The machine, the libraries, and each family's preflight verdict (``ok`` or the refusal's message)."""
    catalogue = registry or Registry()
    checks = {}
    for name, version in _newest(catalogue):
        manifest = catalogue.resolve(parse_reference(name, version))
        try:
            BuildSource().preflight(manifest)
            checks[f"{name}@{version}"] = "ok: rebuilds here bit for bit"
        except TgbhubError as exc:
            checks[f"{name}@{version}"] = f"refused: {exc}"
    return {"platform": platform.platform(), "libc": " ".join(platform.libc_ver()), "cpu": _cpu(),
            "openblas_kernel": blas_core(), "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
            "versions": _versions(), "preflight": checks}
