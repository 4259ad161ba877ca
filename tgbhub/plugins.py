"""Plug-ins of every kind, each kind registered in one explicit table of module paths, imported on first read.

Every registry of plug-ins is a :class:`PluginTable`; nothing else imports plug-in modules. A table is filled one of
two ways:

* *named* (transforms, importers, dataset families, tasks): a mapping ``name -> module path``, one registration line
  per plug-in. The module defines the plug-in as one attribute (``TRANSFORM``, ``IMPORTER``, ``FAMILY``, ``TASK``)
  whose ``name`` is its registration line's; it is imported the first time its name is read, so listing the names
  imports nothing.
* *listed* (evaluators, baselines, trainers): a tuple of module paths, all imported on the first read; each module
  registers its plug-ins with :meth:`PluginTable.add` (through a decorator such as ``@register_evaluator``).

No ``__init__`` imports modules at its bottom for their side effects, and a module that registers never needs its
package's ``__init__``. This module imports nothing of tgbhub, so the library and the generators both use it.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import Any, Generic, TypeVar, overload

K = TypeVar("K")
V = TypeVar("V")
D = TypeVar("D")


class PluginTable(Mapping[K, V], Generic[K, V]):
    """A read-only mapping of one kind's plug-ins, loaded from the kind's explicit table of module paths on first
    read; :meth:`add` (what the decorators of listed plug-ins call) registers without reading, so importing a module
    never recurses.

    Args:
        what: the plug-in kind in words, for messages (``"transform"``).
        modules: named plug-ins: the registration table, ``name -> module path`` (kept, not copied, so a line added
            to it later is seen); listed plug-ins: a tuple of module paths.
        attribute: for named plug-ins, the module attribute that holds the plug-in (``"TRANSFORM"``).
        package: the package that a module path starting with ``.`` is relative to; any other path is imported as
            written.
        error: the exception class raised for an unknown name (:meth:`require`) and for a module that defines no
            plug-in or another one than its registration line names.
        hint: what :meth:`require`'s unknown-name message ends with (``" (see `tgbhub list --transforms`)"``).

    Raises:
        ValueError: if named plug-ins come without ``attribute``, or listed ones with it.
    """

    def __init__(self, what: str, modules: Mapping[K, str] | tuple[str, ...], *, attribute: str | None = None,
                 package: str | None = None, error: type[Exception] = LookupError, hint: str = "") -> None:
        named = isinstance(modules, Mapping)
        if named != (attribute is not None):
            raise ValueError(f"{what} plug-ins: pass attribute= with a name -> module table, and only then (got "
                             f"attribute={attribute!r} with a {type(modules).__name__})")
        self.what = what
        self.modules = modules
        self.attribute = attribute
        self.package = package
        self.error = error
        self.hint = hint
        self._entries: dict[K, V] = {}  # listed plug-ins, as registered
        self._by_module: dict[str, Any] = {}  # named plug-ins, by the module that defines them
        self._loaded = False

    @property
    def _named(self) -> Mapping[K, str] | None:
        return self.modules if isinstance(self.modules, Mapping) else None

    def _import(self, module: str) -> Any:
        return importlib.import_module(module, self.package if module.startswith(".") else None)

    def add(self, key: K, value: V) -> None:
        """Register ``value`` under ``key`` (listed plug-ins).

        Raises:
            ValueError: if ``key`` is already registered to another value (two plug-ins for one key would disagree),
                or this table holds named plug-ins (those are registered by their line in the table).
        """
        if self._named is not None:
            raise ValueError(f"{self.what} plug-ins are registered by one line each in their table, not by add(); "
                             f"add {key!r} there")
        existing = self._entries.get(key, value)
        if existing is not value:
            raise ValueError(f"{self.what} {key!r} is already registered, to "
                             f"{getattr(existing, '__qualname__', existing)}")
        self._entries[key] = value

    def _load(self) -> dict[K, V]:
        """The listed plug-ins, their modules imported on the first call."""
        if not self._loaded:
            self._loaded = True  # first: a listed module that reads the table while importing does not recurse
            for module in self.modules:
                self._import(module)  # type: ignore[arg-type]
        return self._entries

    def _load_named(self, named: Mapping[K, str], key: K) -> V:
        """The plug-in the module of ``key``'s registration line defines, imported once.

        Raises:
            KeyError: if ``key`` has no registration line.
            error: if the module defines no plug-in, or one of another name.
        """
        module = named[key]
        if module not in self._by_module:
            found = getattr(self._import(module), self.attribute, None)  # type: ignore[arg-type]
            if found is None:
                raise self.error(f"{self.what} module {module} defines no {self.attribute}, but is registered as "
                                 f"{key!r}; define {self.attribute} there or fix the registration line")
            if getattr(found, "name", None) != key:
                raise self.error(f"{self.what} module {module} defines {getattr(found, 'name', None)!r} but is "
                                 f"registered as {key!r}; make the registration line and {self.attribute}.name agree")
            self._by_module[module] = found
        return self._by_module[module]

    def require(self, key: K) -> V:
        """The plug-in registered as ``key``.

        Raises:
            error: if none is (the message lists the known ones), or its module defines none or another one.
        """
        if key not in self:
            raise self.error(f"unknown {self.what} {key!r}; known: {', '.join(str(k) for k in self) or 'none'}"
                             f"{self.hint}")
        return self[key]

    def __getitem__(self, key: K) -> V:
        named = self._named
        return self._load()[key] if named is None else self._load_named(named, key)

    def __contains__(self, key: object) -> bool:
        named = self._named
        return key in (self._load() if named is None else named)

    @overload
    def get(self, key: K) -> V | None: ...

    @overload
    def get(self, key: K, default: D) -> V | D: ...

    def get(self, key: K, default: Any = None) -> Any:
        """The plug-in registered as ``key``, or ``default`` (a ``KeyError`` raised while importing a plug-in's
        module propagates rather than reading as an unknown name)."""
        return self[key] if key in self else default

    def __iter__(self) -> Iterator[K]:
        named = self._named
        return iter(list(self._load() if named is None else named))

    def __len__(self) -> int:
        named = self._named
        return len(self._load() if named is None else named)
