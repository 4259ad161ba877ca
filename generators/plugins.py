"""Loading a registered plug-in (a transform, an importer): the module a registration line names, imported once."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from tgbhub.errors import GenerationError

_loaded: dict[tuple[str, str], Any] = {}


def load(registered: Mapping[str, str], name: str, attribute: str, package: str, unknown: str) -> Any:
    """The ``attribute`` (``TRANSFORM``, ``IMPORTER``) of the module ``registered[name]`` names: a path starting
    with ``.`` is inside ``package``, any other is imported as written; the plug-in's ``name`` must be ``name``.

    Raises:
        GenerationError: ``unknown`` (which names the known plug-ins) if ``name`` is not registered, or if the module
            defines a plug-in of another name than its registration line.
    """
    module = registered.get(name)
    if module is None:
        raise GenerationError(unknown)
    key = (module, attribute)
    if key not in _loaded:
        found = getattr(importlib.import_module(module, package if module.startswith(".") else None), attribute)
        if found.name != name:
            raise GenerationError(f"module {module} defines {attribute} {found.name!r} but is registered as {name!r}; "
                                  f"make the registration line and {attribute}.name agree")
        _loaded[key] = found
    return _loaded[key]
