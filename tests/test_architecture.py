"""The one-way data flow (architecture §1, §10): no module imports a hop that comes later in the flow; the library
reaches the generators only through the build source, and generators import only manifest, hashing and errors."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# module (or package) -> tgbhub/generators modules it may import (imports inside functions count the same)
ALLOWED = {
    "tgbhub.errors": set(),
    "tgbhub.config": {"tgbhub.errors"},
    "tgbhub.hashing": {"tgbhub.errors"},
    "tgbhub.manifest": {"tgbhub.errors"},
    "tgbhub.columns": {"tgbhub.errors"},
    "tgbhub.progress": set(),
    # registries filled from one explicit list of modules each (evaluators, baselines, trainers)
    "tgbhub.plugins": set(),
    "tgbhub.registry": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.config"},
    "tgbhub.cache": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.hashing", "tgbhub.config", "tgbhub.columns"},
    # the hub layout (repo paths, tags) and the publish targets / local Hub server; no client-side hops
    "tgbhub.hub": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.hashing", "tgbhub.hub"},
    # where bytes come from; sources.build is the one module that reaches the generators (checked below)
    "tgbhub.sources": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.hashing", "tgbhub.config", "tgbhub.cache",
                       "tgbhub.sources", "tgbhub.hub", "tgbhub.progress", "generators"},
    # the task registry (tasks as plug-ins); its plug-ins are named by module path, not imported here
    "tgbhub.tasks.specs": {"tgbhub.errors", "tgbhub.manifest"},
    # windows, batches, diagnostics and the PyG adapter: pure functions over dataset objects (link forecasting),
    # and the window task's plug-in
    "tgbhub.forecasting": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.forecasting", "tgbhub.tasks.specs"},
    "tgbhub.data": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.columns", "tgbhub.data", "tgbhub.forecasting"},
    # `tgbhub import SOURCE NAME`: find or download a release, then the build source's one install path
    "tgbhub.local.imports": {"tgbhub.errors", "tgbhub.config", "tgbhub.cache", "tgbhub.hashing", "tgbhub.manifest",
                         "tgbhub.progress", "tgbhub.sources", "tgbhub.registry"},
    # task documents (tasks versioned on their own) and their artifacts in the verified cache
    "tgbhub.tasks.documents": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.registry"},
    "tgbhub.local.task_artifacts": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.cache", "tgbhub.progress", "tgbhub.tasks.documents",
                         "tgbhub.tasks.specs", "tgbhub.sources"},
    # variants built on request: names -> the verified parent -> the build source's one install path
    "tgbhub.local.derive": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.registry", "tgbhub.sources"},
    # loader adapters (DyGLib / the TLPCF forks' ml_ files / TGB negatives): pure functions over dataset objects
    "tgbhub.compat.export": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.hashing", "tgbhub.data"},
    # declared-task helpers (candidate sets, graded ranges) shared by evaluate and baselines
    "tgbhub.tasks.declared": {"tgbhub.errors", "tgbhub.manifest"},
    "tgbhub.evaluate": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.tasks.declared", "tgbhub.evaluate", "tgbhub.forecasting",
                        "tgbhub.plugins"},
    # baselines write submissions; they never import the evaluator that grades them
    "tgbhub.baselines": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.tasks.declared", "tgbhub.data", "tgbhub.baselines",
                         "tgbhub.forecasting", "tgbhub.plugins"},
    # trainable baselines (issue 14): the baselines' side of the layers, so never the evaluator that grades them
    "tgbhub.trainers": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.tasks.declared", "tgbhub.data", "tgbhub.baselines",
                        "tgbhub.progress", "tgbhub.trainers", "tgbhub.plugins"},
    # applications on top of the API (they import tgbhub.api; only the CLI and scripts import them)
    "tgbhub.scale": {"tgbhub", "tgbhub.api", "tgbhub.cache", "tgbhub.config", "tgbhub.errors", "tgbhub.evaluate",
                     "tgbhub.progress"},
    "tgbhub.training": {"tgbhub.api", "tgbhub.cache", "tgbhub.config", "tgbhub.errors", "tgbhub.evaluate",
                        "tgbhub.manifest", "tgbhub.tasks.declared", "tgbhub.trainers"},
    # result records (issue 23): re-grades through the API; a heuristic's options are its hyper-parameters
    "tgbhub.results.records": {"tgbhub", "tgbhub.api", "tgbhub.baselines", "tgbhub.cache", "tgbhub.errors", "tgbhub.hashing",
                       "tgbhub.evaluate"},
    # the static catalogue site (issue 23): pages from manifests, the derived index and the importers' cards
    "tgbhub.site": {"tgbhub", "tgbhub.api", "tgbhub.config", "tgbhub.errors", "tgbhub.manifest", "tgbhub.registry",
                    "tgbhub.site"},
    "tgbhub.publish": {"tgbhub.api", "tgbhub.cache", "tgbhub.columns", "tgbhub.config", "tgbhub.errors",
                       "tgbhub.hashing", "tgbhub.hub", "tgbhub.manifest", "tgbhub.progress", "tgbhub.registry"},
    "tgbhub.local.doctor": {"tgbhub.errors", "tgbhub.registry", "tgbhub.sources"},
    # submissions and leaderboards on a hub (issue 23): push through the publish targets, grade through the API (and
    # the Dask backend), write result records; the baselines fill the boards
    "tgbhub.results.submissions": {"tgbhub", "tgbhub.api", "tgbhub.config", "tgbhub.errors", "tgbhub.evaluate",
                           "tgbhub.hashing", "tgbhub.hub", "tgbhub.publish", "tgbhub.results.records", "tgbhub.tasks.declared"},
    "tgbhub.results.leaderboards": {"tgbhub", "tgbhub.api", "tgbhub.baselines", "tgbhub.config", "tgbhub.errors",
                            "tgbhub.evaluate", "tgbhub.hashing", "tgbhub.hub", "tgbhub.results.records", "tgbhub.scale",
                            "tgbhub.sources", "tgbhub.results.submissions"},
    "tgbhub.protocols": {"tgbhub.baselines", "tgbhub.errors", "tgbhub.evaluate", "tgbhub.forecasting",
                         "tgbhub.sources"},
    # py-tgb's API on top of tgbhub's: it loads datasets and binds evaluators
    "tgbhub.compat": {"tgbhub.api", "tgbhub.cache", "tgbhub.config", "tgbhub.data", "tgbhub.errors",
                      "tgbhub.evaluate", "tgbhub.local.imports", "tgbhub.sources"},
    # the repository's generators/ folder, installed as generators (tgbhub/generators is a link to it); inside
    # it imports are relative, so only its imports of tgbhub modules show here. What a generator needs of the rest of
    # the library (the evaluator's ATD/ACD, a task's definition, the cache root) is handed to it as an argument.
    "generators": {"tgbhub.manifest", "tgbhub.hashing", "tgbhub.errors"},
}
# architecture §1: the composition roots are the API and the CLI (the package's __init__ re-exports the API)
ROOTS = {"tgbhub", "tgbhub.api", "tgbhub.cli"}
# ... and scripts: `python -m generators` and `python -m generators.forecast` are the authoring scripts; like
# scripts/, they hand the builders what those take from the library
SCRIPTS = {"generators.__main__", "generators.forecast.__main__"}
APPLICATIONS = {"tgbhub.scale", "tgbhub.training", "tgbhub.publish", "tgbhub.results.records", "tgbhub.local.doctor",
                "tgbhub.protocols", "tgbhub.compat", "tgbhub.site", "tgbhub.results.submissions", "tgbhub.results.leaderboards"}


def _library_files(root: Path = ROOT) -> list[Path]:
    """Every module once: tgbhub's own files (not through the tgbhub/generators link, which resolves to generators/)
    and generators/'s."""
    link = root / "tgbhub" / "generators"
    own = [p for p in root.glob("tgbhub/**/*.py") if link not in p.parents]
    return sorted([*own, *root.glob("generators/**/*.py")])


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The tgbhub/generators modules a file imports, at the top or inside functions (``ast.walk`` visits every
    node); ``from tgbhub import x`` counts as ``tgbhub.x`` when x is a module, else as the package itself."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module == "tgbhub" and node.level == 0:
            found.update(f"tgbhub.{a.name}" if _is_module(f"tgbhub.{a.name}") else "tgbhub" for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return {name for name in found if name.split(".")[0] in {"tgbhub", "generators"}}


def _is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _owner(module: str) -> str | None:
    if module == "generators" or module.startswith("generators."):
        module = module.removeprefix("tgbhub.")  # the installed name of the generators/ folder
    if module == "tgbhub":
        return "tgbhub"
    for key in sorted(ALLOWED, key=len, reverse=True):
        if module == key or module.startswith(key + "."):
            return key
    return None


def violations(modules: list[tuple[str, Path]]) -> list[str]:
    """Every import of a hop a module's layer may not import, as ``"<module> imports <module>"``; a module with no
    declared layer is one too."""
    found = []
    for module, path in modules:
        if module in ROOTS or module in SCRIPTS:
            continue
        owner = _owner(module)
        if owner is None:
            found.append(f"{module} has no declared layer: add it to ALLOWED")
            continue
        for imported in _imports(path):
            if _owner(imported) not in ALLOWED[owner] and imported not in ALLOWED[owner]:
                found.append(f"{module} imports {imported}")
    return found


def generator_users(modules: list[tuple[str, Path]]) -> set[str]:
    """The library modules (not scripts) that import generator code."""
    return {module for module, path in modules if module.split(".")[0] == "tgbhub" and any(
        i.startswith(("generators", "generators")) for i in _imports(path))}


def _modules() -> list[tuple[str, Path]]:
    return [(_module_name(p), p) for p in _library_files()]


def test_layers_only_import_earlier_hops() -> None:
    assert not violations(_modules())


def test_only_the_build_source_reaches_the_generators() -> None:
    # architecture §1: the client reaches the generators only through the build source
    assert generator_users(_modules()) <= {"tgbhub.local.gateway"}


def test_the_api_does_not_import_the_applications_on_top_of_it() -> None:
    api = ROOT / "tgbhub" / "api.py"
    assert not {i for i in _imports(api) if _owner(i) in APPLICATIONS}


def test_a_planted_import_inside_a_function_fails_the_test(tmp_path: Path) -> None:
    """The checks see through function bodies: a generator reaching into the evaluator, and a library module reaching
    into a generator, each planted inside a function, are both reported."""
    planted_generator = tmp_path / "generator.py"
    planted_generator.write_text("def stats():\n    from tgbhub.evaluate.metrics import atd\n    return atd\n")
    planted_library = tmp_path / "library.py"
    planted_library.write_text("def build():\n    from generators.tgrab import catalogue\n    return catalogue\n")
    planted = [("generators.tgrab.planted", planted_generator), ("tgbhub.data.planted", planted_library)]
    assert violations(planted) == ["generators.tgrab.planted imports tgbhub.evaluate.metrics",
                                   "tgbhub.data.planted imports generators.tgrab"]
    assert generator_users(planted) == {"tgbhub.data.planted"}
    assert not violations(_modules())  # and the real tree stays clean


def test_generators_are_installed_inside_the_tgbhub_namespace() -> None:
    """The wheel must not claim the global module name ``generators``: it ships the folder as tgbhub/generators,
    and nothing imports the top-level name (inside generators/ imports are relative)."""
    link = ROOT / "tgbhub" / "generators"
    assert link.is_symlink() and link.resolve() == (ROOT / "generators").resolve()
    for path in _library_files():
        assert not any(i == "generators" or i.startswith("generators.") for i in _imports(path)), path


def test_no_dataset_name_branches_in_library_code() -> None:
    for path in (p for p in _library_files() if p.parts[len(ROOT.parts)] == "tgbhub"):
        text = path.read_text()
        assert "t-grab/" not in text.replace('"t-grab/ce-64"', "").replace("'t-grab/ce-64", ""), path


def test_import_tgbhub_loads_neither_the_dask_backend_nor_the_trainers() -> None:
    code = ("import sys, tgbhub; print(sorted(m for m in ('tgbhub.scale', 'tgbhub.training', 'dask', 'torch') "
            "if m in sys.modules)); print(tgbhub.build.__module__, tgbhub.train.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.split("\n")[:2] == ["[]", "tgbhub.scale tgbhub.training"]
