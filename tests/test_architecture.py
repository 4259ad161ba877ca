"""The one-way data flow (architecture §1): no module imports a hop that comes later in the flow."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# module (or package) -> tgbhub/generators modules it may import; api and cli are the composition roots.
ALLOWED = {
    "tgbhub.errors": set(),
    "tgbhub.config": {"tgbhub.errors"},
    "tgbhub.hashing": {"tgbhub.errors"},
    "tgbhub.manifest": {"tgbhub.errors"},
    "tgbhub.columns": {"tgbhub.errors"},
    "tgbhub.progress": set(),
    "tgbhub.registry": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.config"},
    "tgbhub.cache": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.hashing", "tgbhub.config", "tgbhub.columns"},
    # the hub layout (repo paths, tags) and the publish targets / local Hub server; no client-side hops
    "tgbhub.hub": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.hashing", "tgbhub.hub"},
    "tgbhub.sources": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.hashing", "tgbhub.config", "tgbhub.cache",
                       "tgbhub.sources", "tgbhub.hub", "tgbhub.progress", "generators"},
    # windows, batches, diagnostics and the PyG adapter: pure functions over dataset objects (link forecasting)
    "tgbhub.forecasting": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.forecasting", "tgbhub.taskdocs"},
    "tgbhub.data": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.columns", "tgbhub.data", "tgbhub.forecasting"},
    # TGB's catalogue and import (issue 12)
    "tgbhub.tgb": {"tgbhub.errors"},
    # task documents (tasks versioned on their own) and their artifacts in the verified cache
    "tgbhub.taskdocs": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.registry"},
    "tgbhub.taskcache": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.cache", "tgbhub.progress", "tgbhub.taskdocs",
                         "tgbhub.sources"},
    # variants built on request: names -> the verified parent -> the build source's one install path
    "tgbhub.derive": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.registry", "tgbhub.sources"},
    # loader adapters (DyGLib / the TLPCF forks' ml_ files / TGB negatives): pure functions over dataset objects
    "tgbhub.export": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.hashing", "tgbhub.data"},
    # declared-task helpers (candidate sets, graded ranges) shared by evaluate and baselines
    "tgbhub.tasks": {"tgbhub.errors", "tgbhub.manifest"},
    "tgbhub.evaluate": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.tasks", "tgbhub.evaluate", "tgbhub.forecasting"},
    # baselines write submissions; they never import the evaluator that grades them
    "tgbhub.baselines": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.tasks", "tgbhub.data", "tgbhub.baselines",
                         "tgbhub.forecasting"},
    # trainable baselines (issue 14): the baselines' side of the layers, so never the evaluator that grades them
    "tgbhub.trainers": {"tgbhub.errors", "tgbhub.manifest", "tgbhub.tasks", "tgbhub.data", "tgbhub.baselines",
                        "tgbhub.progress", "tgbhub.trainers"},
    # the repository's generators/ folder, installed as tgbhub.generators (tgbhub/generators is a link to it); inside
    # it imports are relative, so only its imports of tgbhub modules show here
    # (and the pure metric functions, which a derived dataset's manifest records: ATD/ACD against its parent)
    # (and the window index the forecasting task's negatives are drawn per; the authoring CLIs read the catalogue)
    # (and TGB's catalogue plus the cache root, where the TGB family finds the release an import kept)
    "generators": {"tgbhub.manifest", "tgbhub.hashing", "tgbhub.errors", "tgbhub.evaluate.metrics",
                   "tgbhub.forecasting", "tgbhub.taskdocs", "tgbhub.registry", "tgbhub.tgb", "tgbhub.config"},
}
ROOTS = {"tgbhub", "tgbhub.api", "tgbhub.cli", "tgbhub.publish", "tgbhub.doctor", "tgbhub.protocols",
         "tgbhub.importing", "tgbhub.training"}
# py-tgb's API on top of tgbhub's (a composition root: it loads datasets and binds evaluators)
ROOTS |= {"tgbhub.compat", "tgbhub.compat.tgb"}
# the Dask backend (issue 13): a composition root that runs api.load_dataset / the evaluator as cluster tasks
ROOTS |= {"tgbhub.scale"}


def _library_files() -> list[Path]:
    """Every module once: tgbhub's own files (not through the tgbhub/generators link) and generators/'s."""
    link = ROOT / "tgbhub" / "generators"
    own = [p for p in ROOT.glob("tgbhub/**/*.py") if link not in p.parents]
    return sorted([*own, *ROOT.glob("generators/**/*.py")])


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return {name for name in found if name.split(".")[0] in {"tgbhub", "generators"}}


def _owner(module: str) -> str | None:
    if module == "tgbhub.generators" or module.startswith("tgbhub.generators."):
        module = module.removeprefix("tgbhub.")  # the installed name of the generators/ folder
    for key in sorted(ALLOWED, key=len, reverse=True):
        if module == key or module.startswith(key + "."):
            return key
    return None


def test_layers_only_import_earlier_hops() -> None:
    violations = []
    for path in _library_files():
        module = _module_name(path)
        if module in ROOTS:
            continue
        owner = _owner(module)
        assert owner is not None, f"{module} has no declared layer: add it to ALLOWED"
        for imported in _imports(path):
            if _owner(imported) not in ALLOWED[owner] and imported not in ALLOWED[owner]:
                violations.append(f"{module} imports {imported}")
    assert not violations, violations


def test_only_the_build_source_reaches_the_generators() -> None:
    users = {_module_name(p) for p in _library_files() if p.parts[len(ROOT.parts)] == "tgbhub" and any(
        i.startswith("tgbhub.generators") or i.startswith("generators") for i in _imports(p))}
    # architecture §1: the client reaches the generators only through the build source
    assert users <= {"tgbhub.sources.build"}, users


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
