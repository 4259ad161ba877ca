"""The import structure of tgbhub/ and generators/: an ordered list of layers, and the two rules an order cannot say.

Every module of both trees belongs to exactly one layer of :data:`LAYERS`, the package's face (``tgbhub/__init__.py``),
the API and the command line included; a module may import its own layer and earlier ones, never a later one.

What counts as an import, read from the source (nothing is run):

- an ``import`` or ``from ... import`` statement anywhere in the file: at module level, inside a function or a class,
  under ``if TYPE_CHECKING:``; a relative one is resolved against the module's package, as Python resolves it;
- a call to ``import_module``/``importlib.import_module``/``__import__`` whose target is a string literal; a relative
  target is resolved against the call's package where that is a literal, ``__package__`` or ``__name__``;
- a string literal, anywhere in the module, that names a module of this tree: dotted (``"tgbhub.evaluate.ranking"``)
  or relative (``".tgrab.family"``, resolved against the module's package as ``import_module(name, __package__)``
  resolves it). The plug-in tables (the evaluators', baselines' and trainers' ``PluginTable``, the ``REGISTERED``
  dicts of tasks, families, importers and transforms, TGB's converters) write their modules as such strings and
  import them later through a variable, which no reading of calls can follow: the literal is where the dependency is
  declared, so that is where it counts. Every literal counts, not only those of known tables, so a new table needs no
  change here; a string that names a module without meaning it (``".git"`` beside ``tgbhub/hub/git.py``) is counted
  too, a false alarm that names its line, where a narrower rule would miss a real import in silence. A bare top-level
  name (``"tgbhub"``, ``"generators"``) is not counted: it is also the program's, the distribution's and a folder's
  name, and no plug-in table names a top-level package.

An import of a module of this tree that does not exist (``tgbhub.generators``, gone with the move of generators/ to
its own package) is reported too.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: the trees whose every module belongs to a layer
TREES = ("tgbhub", "generators")

#: the layers, lowest first: a module may import its own layer and the earlier ones. An entry is a dotted file path
#: and covers that file, or that folder and everything in it; ``tgbhub.__init__`` is the package's face alone.
LAYERS: dict[str, tuple[str, ...]] = {
    # all that generator code may import of the library (the plug-in loader included: families, importers and
    # transforms are plug-ins as evaluators are)
    "kernel": ("tgbhub.errors", "tgbhub.hashing", "tgbhub.manifest", "tgbhub.memory", "tgbhub.plugins",
               "tgbhub.version"),
    "generators": ("generators",),
    "foundation": ("tgbhub.config", "tgbhub.columns", "tgbhub.progress", "tgbhub.registry", "tgbhub.cache"),
    # task definitions and windows, pure functions: one layer, as tasks.specs names tgbhub.forecasting.task as a
    # plug-in and that module imports tasks.specs back
    "definitions": ("tgbhub.tasks", "tgbhub.forecasting"),
    "data": ("tgbhub.data",),
    "evaluate": ("tgbhub.evaluate",),
    "models": ("tgbhub.baselines", "tgbhub.trainers"),
    # where releases live and where bytes come from
    "remote": ("tgbhub.hub", "tgbhub.sources"),
    # what is made on this machine, through the one gateway to the generators
    "local": ("tgbhub.local",),
    "api": ("tgbhub.api",),
    # on top of the API; they may import each other
    "applications": ("tgbhub.scale", "tgbhub.training", "tgbhub.publish", "tgbhub.protocols", "tgbhub.results",
                     "tgbhub.site", "tgbhub.compat", "tgbhub.plot"),
    # the package's face (the API re-exported, the applications' entry points lazily) and the command line
    "roots": ("tgbhub.__init__", "tgbhub.cli"),
}
#: (importers, imported): pairs the order allows and the design does not
FORBIDDEN: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    # models write submissions; they never import the evaluator that grades them
    (("tgbhub.baselines", "tgbhub.trainers"), ("tgbhub.evaluate",)),
)
#: imported -> the only modules outside it that may import it
GATES: dict[str, tuple[str, ...]] = {"generators": ("tgbhub.local.gateway",)}

_NAME = re.compile(r"\.*[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


class Import(NamedTuple):
    """One import: ``target`` the module imported (for ``from X import a``: ``X.a`` when that is a module, else
    ``X``), ``written`` the full dotted name as written (``X.a``), ``module`` the part that must be a module."""

    target: str
    written: str
    module: str
    line: int


def modules(root: Path = ROOT, trees: tuple[str, ...] = TREES) -> dict[str, Path]:
    """Every module under ``root``'s ``trees``: dotted name -> its file (a folder for a package without
    ``__init__.py``)."""
    found: dict[str, Path] = {}
    for tree in trees:
        for path in sorted((root / tree).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                found[".".join(parts[:-1])] = path
            else:
                found[".".join(parts)] = path
                for depth in range(1, len(parts)):
                    found.setdefault(".".join(parts[:depth]), path.parents[len(parts) - 1 - depth])
    return found


def _file_key(name: str, path: Path) -> str:
    """The dotted file path layer entries match: ``tgbhub.results.records``; ``tgbhub.__init__`` for a package."""
    return f"{name}.__init__" if path.is_dir() or path.name == "__init__.py" else name


def _covers(entries: tuple[str, ...], key: str) -> bool:
    return any(key == entry or key.startswith(entry + ".") for entry in entries)


def layer_of(name: str, known: dict[str, Path]) -> int | None:
    """The position in :data:`LAYERS` of module ``name``'s layer, or ``None`` where it has none."""
    key = _file_key(name, known[name])
    return next((i for i, entries in enumerate(LAYERS.values()) if _covers(entries, key)), None)


def _resolve(name: str, package: str | None) -> str | None:
    """``name`` made absolute against ``package`` as Python's import does; ``None`` where it cannot be."""
    if not name.startswith("."):
        return name
    try:
        return importlib.util.resolve_name(name, package) if package else None
    except ImportError:
        return None


def _call_package(call: ast.Call, module: str, package: str) -> str | None:
    """The package an ``import_module`` call resolves a relative target against, where it is literal."""
    given = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "package"), None)
    if isinstance(given, ast.Constant) and isinstance(given.value, str):
        return given.value
    if isinstance(given, ast.Name):
        return {"__package__": package, "__name__": module}.get(given.id)
    return None


def _import_call(node: ast.Call, module: str, package: str) -> str | None:
    """The target of an ``import_module``/``__import__`` call with a literal one, made absolute; else ``None``."""
    func = node.func
    called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    if called not in ("import_module", "__import__") or not node.args:
        return None
    first = node.args[0]
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        return None
    if called == "__import__":
        level = node.args[4] if len(node.args) > 4 else next((k.value for k in node.keywords if k.arg == "level"), None)
        dots = level.value if isinstance(level, ast.Constant) and isinstance(level.value, int) else 0
        return _resolve("." * dots + first.value, package)
    return _resolve(first.value, _call_package(node, module, package))


def imports(name: str, path: Path, known: dict[str, Path]) -> Iterator[Import]:
    """Every import of module ``name`` (its file ``path``), as the module docstring counts them; a relative import
    statement that reaches above the top-level package has ``module`` ``""``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(alias.name, alias.name, alias.name, line)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve("." * node.level + (node.module or ""), package) or ""
            for alias in node.names:
                written = f"{base}.{alias.name}" if base else "." * node.level + ".".join(
                    filter(None, (node.module, alias.name)))
                yield Import(written if written in known else base, written, base, line)
        elif isinstance(node, ast.Call) and (target := _import_call(node, name, package)) is not None:
            yield Import(target, target, target, line)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _NAME.fullmatch(node.value):
            target = _resolve(node.value, package) if node.value.startswith(".") else node.value
            if target in known and "." in target:
                yield Import(target, target, target, line)


def violations(root: Path = ROOT) -> list[str]:
    """Every breach of the layers, of :data:`FORBIDDEN` and of :data:`GATES` under ``root``, one line each; a module
    without a layer, a layer entry that covers no module and an import of a module of these trees that does not exist
    are breaches too."""
    known = modules(root)
    found = [f"LAYERS entry {entry} covers no module" for entries in LAYERS.values() for entry in entries
             if not any(_covers((entry,), _file_key(name, path)) for name, path in known.items())]
    names = list(LAYERS)
    for name, path in known.items():
        if path.is_dir():
            continue
        layer = layer_of(name, known)
        if layer is None:
            found.append(f"{name} belongs to no layer: add it to LAYERS")
            continue
        for imp in imports(name, path, known):
            where = f"{name} imports {imp.target or imp.written} (line {imp.line})"
            if imp.module.split(".")[0] not in TREES and imp.module:
                continue
            if imp.module not in known:
                found.append(f"{where}: no such module in this tree")
                continue
            theirs = layer_of(imp.target, known)
            key, their_key = _file_key(name, path), _file_key(imp.target, known[imp.target])
            if theirs is not None and theirs > layer:
                found.append(f"{where}: layer {names[layer]} may not import layer {names[theirs]}, which is above it")
            for importers, imported in FORBIDDEN:
                if _covers(importers, key) and _covers(imported, their_key):
                    found.append(f"{where}: {'/'.join(importers)} may not import {'/'.join(imported)}")
            for gated, allowed in GATES.items():
                if _covers((gated,), their_key) and not _covers((gated, *allowed), key):
                    found.append(f"{where}: only {', '.join(allowed)} may import {gated}")
    return found


def test_every_module_keeps_to_its_layer() -> None:
    assert violations() == []


def test_only_the_gateway_imports_generator_code() -> None:
    known = modules()
    users = {name for name, path in known.items() if path.is_file() and name.split(".")[0] == "tgbhub"
             and any(i.target.split(".")[0] == "generators" for i in imports(name, path, known))}
    assert users == {"tgbhub.local.gateway"}


def test_generators_import_only_the_kernel() -> None:
    known = modules()
    used = {i.target for name, path in known.items() if path.is_file() and name.split(".")[0] == "generators"
            for i in imports(name, path, known) if i.target.split(".")[0] == "tgbhub"}
    assert used <= {"tgbhub.errors", "tgbhub.hashing", "tgbhub.manifest", "tgbhub.memory", "tgbhub.plugins"}


def test_the_api_does_not_import_the_applications_on_top_of_it() -> None:
    known = modules()
    applications = LAYERS["applications"]
    assert not [i for i in imports("tgbhub.api", known["tgbhub.api"], known) if _covers(applications, i.target)]


PLANTED = [
    # a relative import inside a function, from the dataset objects up to the gateway
    ("tgbhub/data/grading.py",
     "\n\ndef _planted():\n    from ..local.gateway import BuildSource\n    return BuildSource\n",
     "tgbhub.data.grading imports tgbhub.local.gateway"),
    # a generator reaching into the evaluator through import_module
    ("generators/tgb/release.py",
     "\n\ndef _planted():\n    import importlib\n    return importlib.import_module(\"tgbhub.evaluate.metrics\")\n",
     "generators.tgb.release imports tgbhub.evaluate.metrics"),
    # a relative import_module target, resolved against __package__
    ("tgbhub/evaluate/metrics.py",
     "\n\ndef _planted():\n    import importlib\n    return importlib.import_module(\"..sources.hf\", __package__)\n",
     "tgbhub.evaluate.metrics imports tgbhub.sources.hf"),
    # a plug-in table naming a module of a later layer
    ("tgbhub/tasks/specs.py", "\n_PLANTED = {\"board\": \"tgbhub.results.leaderboards\"}\n",
     "tgbhub.tasks.specs imports tgbhub.results.leaderboards"),
    # a relative plug-in table entry, resolved against the module's package
    ("tgbhub/forecasting/task.py", "\n_PLANTED = {\"window\": \"..evaluate.window\"}\n",
     "tgbhub.forecasting.task imports tgbhub.evaluate.window"),
    # allowed by the order, refused by FORBIDDEN
    ("tgbhub/baselines/recency.py", "\nfrom tgbhub.evaluate import metrics as _planted\n",
     "tgbhub.baselines.recency imports tgbhub.evaluate.metrics"),
    # allowed by the order, refused by the gate
    ("tgbhub/local/derive.py", "\n\ndef _planted():\n    from generators import transforms\n    return transforms\n",
     "tgbhub.local.derive imports generators.transforms"),
    # the old location of the generators
    ("tgbhub/sources/http.py", "\n\ndef _planted():\n    import tgbhub.generators.build\n",
     "tgbhub.sources.http imports tgbhub.generators.build"),
    # a module nobody placed
    ("tgbhub/newroom.py", "", "tgbhub.newroom belongs to no layer"),
]


@pytest.mark.parametrize(("where", "code", "reported"), PLANTED, ids=[p[0] for p in PLANTED])
def test_a_planted_violation_is_reported(where: str, code: str, reported: str, tmp_path: Path) -> None:
    """A violation planted in a copy of the tree is reported, and nothing else changes."""
    for tree in TREES:
        shutil.copytree(ROOT / tree, tmp_path / tree, ignore=shutil.ignore_patterns("__pycache__"))
    before = set(violations(tmp_path))
    planted = tmp_path / where
    planted.write_text((planted.read_text(encoding="utf-8") if planted.exists() else "") + code, encoding="utf-8")
    new = sorted(set(violations(tmp_path)) - before)
    assert len(new) == 1 and new[0].startswith(reported), new


def test_generators_is_its_own_package_in_the_wheel() -> None:
    """The wheel ships generators/ as the top-level package ``generators`` beside tgbhub; nothing (library, scripts,
    tests) imports the old ``tgbhub.generators``."""
    tomllib = pytest.importorskip("tomllib")
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert set(packages["packages"]) >= {"tgbhub", "generators"}
    assert (ROOT / "generators" / "__init__.py").is_file() and not (ROOT / "tgbhub" / "generators").exists()
    everything = modules(ROOT, (*TREES, "scripts", "tests"))
    stale = [f"{name}:{i.line}" for name, path in everything.items() if path.is_file()
             for i in imports(name, path, everything)
             if i.written == "tgbhub.generators" or i.written.startswith("tgbhub.generators.")]
    assert stale == []


def _dataset_families() -> set[str]:
    from generators.families import REGISTERED as FAMILIES
    from generators.importers import REGISTERED as IMPORTERS

    return {*FAMILIES, *IMPORTERS}


def _branch_literals(tree: ast.AST) -> Iterator[ast.Constant]:
    """The string literals code branches on: compared (``==``, ``in``), passed to ``startswith``/``endswith``, or
    matched by a ``case``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("startswith", "endswith")):
            operands = list(node.args)
        elif isinstance(node, ast.match_case):
            operands = [node.pattern]
        else:
            continue
        for operand in operands:
            yield from (n for n in ast.walk(operand) if isinstance(n, ast.Constant) and isinstance(n.value, str))


def test_no_dataset_name_branches_in_library_code() -> None:
    """Library code never branches on a dataset's or a family's name: what differs between datasets is in their
    manifests, and what differs between families in their plug-ins (names in docstrings, help and examples are
    fine)."""
    families = _dataset_families()
    known = modules(ROOT, ("tgbhub",))
    found = [f"{name}:{c.lineno} {c.value!r}" for name, path in known.items() if path.is_file()
             for c in _branch_literals(ast.parse(path.read_text(encoding="utf-8")))
             if c.value in families or c.value.split("/")[0] in families and "/" in c.value]
    assert found == []


def test_a_dataset_name_branch_is_found_and_a_mention_is_not() -> None:
    code = ('"""Load t-grab/ce-64."""\nif name.startswith("t-grab/"):\n    pass\nif family in ("chaosnet", "x"):\n'
            '    pass\nmatch source:\n    case "tgb":\n        pass\nhelp = "e.g. t-grab/pdet-2-16"\n')
    assert [c.value for c in _branch_literals(ast.parse(code))] == ["t-grab/", "chaosnet", "x", "tgb"]


def test_import_tgbhub_loads_neither_the_dask_backend_nor_the_trainers() -> None:
    code = ("import sys, tgbhub; print(sorted(m for m in ('tgbhub.scale', 'tgbhub.training', 'dask', 'torch') "
            "if m in sys.modules)); print(tgbhub.build.__module__, tgbhub.train.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.split("\n")[:2] == ["[]", "tgbhub.scale tgbhub.training"]
