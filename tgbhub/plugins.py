"""Registries filled from one explicit list of modules each, imported on first read.

The evaluators, the baselines and the trainers register by decorator (``@register_evaluator("<task type>")``...).
Their built-in modules are named in their registry's :class:`PluginTable` (the one explicit list), and imported the
first time the table is read; no ``__init__`` imports modules at its bottom for their side effects, and a module
that registers never needs its package's ``__init__``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class PluginTable(Mapping[K, V], Generic[K, V]):
    """A read-only mapping of registered plug-ins; ``modules`` (module paths) are imported on the first read, and
    :meth:`add` (what the decorators call) registers without reading, so importing a module never recurses."""

    def __init__(self, what: str, modules: tuple[str, ...]) -> None:
        self.what = what
        self.modules = modules
        self._entries: dict[K, V] = {}
        self._loaded = False

    def add(self, key: K, value: V) -> None:
        """Register ``value`` under ``key``.

        Raises:
            ValueError: if ``key`` is already registered to another value (two plug-ins for one key would disagree).
        """
        existing = self._entries.get(key, value)
        if existing is not value:
            raise ValueError(f"{self.what} {key!r} is already registered, to "
                             f"{getattr(existing, '__qualname__', existing)}")
        self._entries[key] = value

    def _load(self) -> dict[K, V]:
        if not self._loaded:
            self._loaded = True  # first: a listed module that reads the table while importing does not recurse
            for module in self.modules:
                importlib.import_module(module)
        return self._entries

    def __getitem__(self, key: K) -> V:
        return self._load()[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())
