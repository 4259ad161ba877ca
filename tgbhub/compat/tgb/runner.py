"""Run one of TGB's scripts unchanged on tgbhub's data: for the running process only, every ``tgb`` module name
(``tgb.linkproppred.dataset``, ``tgb.utils.utils``, ...) resolves to a module whose names are
:mod:`tgbhub.compat.tgb`'s, so py-tgb is neither needed nor imported even where it is installed.

The mapping is a meta-path finder placed first on ``sys.meta_path`` while the script runs and removed afterwards
(with the ``tgb`` modules it created); nothing is installed or written outside the process.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import os
import runpy
import sys
from collections.abc import Iterator, Mapping, Sequence
from types import ModuleType
from typing import Any

#: py-tgb's modules that TGB's example scripts import, and the names each serves here (all from
#: :mod:`tgbhub.compat.tgb`); a package is a module of this table with submodules in it
TGB_MODULES: Mapping[str, tuple[str, ...]] = {
    "tgb": (),
    "tgb.linkproppred": (),
    "tgb.linkproppred.dataset": ("LinkPropPredDataset",),
    "tgb.linkproppred.dataset_pyg": ("PyGLinkPropPredDataset",),
    "tgb.linkproppred.evaluate": ("Evaluator",),
    "tgb.linkproppred.negative_sampler": ("NegativeEdgeSampler",),
    "tgb.linkproppred.tkg_negative_sampler": ("TKGNegativeEdgeSampler",),
    "tgb.linkproppred.thg_negative_sampler": ("THGNegativeEdgeSampler",),
    "tgb.nodeproppred": (),
    "tgb.nodeproppred.dataset": ("NodePropPredDataset",),
    "tgb.nodeproppred.dataset_pyg": ("PyGNodePropPredDataset",),
    "tgb.nodeproppred.evaluate": ("Evaluator",),
    "tgb.utils": (),
    "tgb.utils.utils": ("set_random_seed", "get_args", "save_results", "split_by_time"),
    "tgb.utils.stats": ("plot_curve",),
}


#: py-tgb's top-level package: the module names the finder answers for
PYTGB_PACKAGE = "tgb"


def in_pytgb(name: str) -> bool:
    """Whether ``name`` is py-tgb's package or one of its modules."""
    return name.split(".")[0] == PYTGB_PACKAGE


def _is_package(name: str) -> bool:
    return any(other.startswith(name + ".") for other in TGB_MODULES)


class _AliasLoader(importlib.abc.Loader):
    """Fills a ``tgb`` module with lazy references to :mod:`tgbhub.compat.tgb`'s names (a PyG name imports torch
    only when the script reads it)."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # the default module object

    def exec_module(self, module: ModuleType) -> None:
        served = TGB_MODULES[module.__name__]

        def lookup(name: str) -> Any:
            if name not in served:
                raise AttributeError(f"tgbhub.compat.tgb does not serve {module.__name__}.{name} (py-tgb's); it "
                                     f"serves {', '.join(served) or 'no names'} there")
            import tgbhub.compat.tgb as compat

            return getattr(compat, name)

        module.__getattr__ = lookup  # type: ignore[method-assign]
        module.__all__ = list(served)  # type: ignore[attr-defined]


class TgbAliasFinder(importlib.abc.MetaPathFinder):
    """Finds every module of :data:`TGB_MODULES` as an alias of :mod:`tgbhub.compat.tgb`'s names, and refuses any
    other ``tgb`` module (instead of letting an installed py-tgb serve it)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        """The alias spec of ``fullname``; ``None`` for names outside ``tgb``.

        Raises:
            ModuleNotFoundError: for a ``tgb`` module this package does not serve, naming the ones it does.
        """
        if not in_pytgb(fullname):
            return None
        if fullname not in TGB_MODULES:
            raise ModuleNotFoundError(f"tgbhub.compat.tgb does not serve py-tgb's module {fullname}; it serves "
                                      f"{', '.join(name for name in TGB_MODULES if TGB_MODULES[name])}",
                                      name=fullname)
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(), is_package=_is_package(fullname))


@contextlib.contextmanager
def tgb_aliases() -> Iterator[None]:
    """While active, ``import tgb...`` resolves to :mod:`tgbhub.compat.tgb` (:class:`TgbAliasFinder` first on
    ``sys.meta_path``); on exit the finder and the ``tgb`` modules are removed and any ``tgb`` modules imported
    before are put back."""
    saved = {name: module for name, module in sys.modules.items() if in_pytgb(name)}
    for name in saved:
        del sys.modules[name]
    finder = TgbAliasFinder()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for name in [name for name in sys.modules if in_pytgb(name)]:
            del sys.modules[name]
        sys.modules.update(saved)


def run_script(script: str | os.PathLike[str], args: Sequence[str] = ()) -> None:
    """Run the Python file ``script`` as ``__main__`` with command-line arguments ``args`` (``sys.argv`` and
    ``sys.path[0]`` as ``python SCRIPT ARGS`` sets them), its ``tgb`` imports served by :mod:`tgbhub.compat.tgb`
    (:func:`tgb_aliases`).

    Raises:
        FileNotFoundError: if ``script`` is not a file.
        SystemExit: as the script raises it; any other exception the script raises propagates.
    """
    path = os.path.abspath(script)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{script} is not a file; pass the path of a TGB script, e.g. "
                                "examples/linkproppred/tgbl-wiki/edgebank.py in a TGB checkout")
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [path, *args]
    sys.path.insert(0, os.path.dirname(path))
    try:
        with tgb_aliases():
            runpy.run_path(path, run_name="__main__")
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path
