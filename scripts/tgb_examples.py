"""The table of TGB's example scripts on tgbhub.compat.tgb (docs/tgb.md): for every ``examples/**/*.py`` of a TGB
checkout, whether it runs with only its import lines changed and whether it runs unchanged through
``python -m tgbhub.compat.tgb run``, both in a process where py-tgb cannot be imported, and its printed and saved
metrics against py-tgb 2.3.0 on identical files (a small release in TGB's format, ``tests/tgb_formats.py``).

    python -m scripts.tgb_examples --tgb PATH/TO/TGB [--only REGEX] [--timeout S] [--work DIR]

Scripts whose dependencies are not installed here (DGL, Ray, a compiled sampler, ...) or whose dataset has no small
writer are listed with the reason and not run. Training scripts get ``--num_epoch 1 --num_run 1`` where their
parser takes them. Needs py-tgb (``pip install -e '.[test]'``), torch and torch-geometric.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import re
import tempfile
from pathlib import Path

from tests import compat_tgb_harness as harness, tgb_formats as formats

#: writer keywords per family: small enough for CPU, large enough for every split to have queries
SIZES = {"tgbl": {"n_edges": 400, "seed": 1}, "tkgl": {"n_edges": 400, "seed": 1},
         "thgl": {"n_edges": 400, "seed": 1}, "tgbn": {"n_edges": 2000, "seed": 0}}
#: arguments a training script takes to stay short, added when its parser knows them
SHORT_RUN = {"--num_epoch": "1", "--num_run": "1"}
#: the largest metric difference that counts as equal; above it, py-tgb runs a second time to show its own spread
TOLERANCE = 1e-6


def writable(name: str) -> bool:
    """Whether tests/tgb_formats.py writes ``name``."""
    family = name.split("-")[0]
    names = {"tgbl": (*formats.TGBL_NAMES, "tgbl-flight", *formats.TEXT_ID_HEADERS),
             "tkgl": (*formats.TKGL_STRING_NAMES, *formats.TKGL_INT_NAMES), "thgl": formats.THGL_NAMES,
             "tgbn": formats.TGBN_NAMES}
    return name in names.get(family, ())


def missing_dependencies(tgb_root: Path, script: Path, seen: set[Path] | None = None) -> list[str]:
    """Top-level packages ``script`` (and the TGB ``modules.*`` it imports, recursively) imports that are not
    installed; ``tgb`` and ``modules`` themselves excluded."""
    seen = seen if seen is not None else set()
    seen.add(script)
    missing: set[str] = set()
    for node in ast.walk(ast.parse(script.read_text())):
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 else []
        for name in names:
            top = name.split(".")[0]
            if top == "modules":
                local = tgb_root / (name.replace(".", "/") + ".py")
                if local.is_file() and local not in seen:
                    missing.update(missing_dependencies(tgb_root, local, seen))
            elif top != "tgb" and importlib.util.find_spec(top) is None:
                missing.add(top)
    return sorted(missing)


def short_args(text: str) -> list[str]:
    """The :data:`SHORT_RUN` arguments the script's parser takes (its own or py-tgb's ``get_args``)."""
    shared = re.search(r"from tgb\.utils\.utils import[^\n]*\bget_args\b", text) is not None
    return [part for flag, value in SHORT_RUN.items() if shared or f"'{flag}'" in text or f'"{flag}"' in text
            for part in (flag, value)]


def row(tgb_root: Path, script: Path, work: Path, timeout: float, releases: dict[str, harness.Release]) -> list[str]:
    """One table row: script, task, imports-only?, runner?, metric py-tgb, metric tgbhub, |diff| (or the reason it
    was not run)."""
    relative = script.relative_to(tgb_root).as_posix()
    name = script.parent.name
    task = "node" if name.startswith("tgbn-") else "link"
    label = relative.removeprefix("examples/")
    missing = missing_dependencies(tgb_root, script)
    if missing:
        return [label, task, "-", "-", f"not run: needs {', '.join(missing)}", "", ""]
    if not writable(name):
        return [label, task, "-", "-", f"not run: no small writer for {name}", "", ""]
    if name not in releases:
        releases[name] = harness.build(name, work / name, **SIZES[name.split("-")[0]])
    args = short_args(script.read_text())
    place = work / name / script.stem
    runs = {side: harness.run(side, tgb_root, relative, args, releases[name], place, timeout)
            for side in ("pytgb", "imports", "runner")}
    theirs = runs["pytgb"]
    if not theirs.ok:
        last = (theirs.stderr.strip().splitlines() or ["timed out"])[-1][:100]
        return [label, task, _ok(runs["imports"]), _ok(runs["runner"]), f"py-tgb fails: {last}", "", ""]
    ours = runs["imports"] if runs["imports"].ok else runs["runner"]
    if not ours.ok:
        return [label, task, _ok(runs["imports"]), _ok(runs["runner"]), _shown(theirs.metrics), "", ""]
    diff = f"{harness.max_diff(ours.metrics, theirs.metrics):.1e}"
    if harness.max_diff(ours.metrics, theirs.metrics) > TOLERANCE:
        again = harness.run("pytgb", tgb_root, relative, args, releases[name], place / "again", timeout)
        diff += f"; py-tgb vs py-tgb: {harness.max_diff(again.metrics, theirs.metrics):.1e}" if again.ok else ""
    return [label, task, _ok(runs["imports"]), _ok(runs["runner"]), _shown(theirs.metrics), _shown(ours.metrics),
            diff]


def _ok(run: harness.Run) -> str:
    if run.ok:
        return f"yes ({run.seconds:.0f} s)"
    last = (run.stderr.strip().splitlines() or ["timed out"])[-1]
    return f"no: {last[:80]}"


def _shown(metrics: dict[str, float]) -> str:
    """The saved metrics (else the printed ones), compactly."""
    saved = {key.removeprefix("json "): value for key, value in metrics.items() if key.startswith("json ")}
    chosen = saved or metrics
    return ", ".join(f"{key} {value:.6g}" for key, value in list(chosen.items())[:3])


def main(argv: list[str] | None = None) -> int:
    """Print the markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tgb", type=Path, required=True, help="a TGB checkout (examples/ and modules/)")
    parser.add_argument("--only", default="", help="run the scripts whose path matches this regex")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per script and side")
    parser.add_argument("--work", type=Path, default=None, help="folder for releases and runs (default: temp)")
    options = parser.parse_args(argv)
    tgb_root = options.tgb.resolve()
    scripts = sorted(path for path in (tgb_root / "examples").rglob("*.py") if re.search(options.only, str(path)))
    work = options.work or Path(tempfile.mkdtemp(prefix="tgb-examples-"))
    releases: dict[str, harness.Release] = {}
    print("| script | task | imports only? | runner? | metric py-tgb 2.3.0 | metric tgbhub | max abs diff |")
    print("|---|---|---|---|---|---|---|")
    for script in scripts:
        print("| " + " | ".join(cell.replace("|", "/") for cell in row(tgb_root, script, work, options.timeout,
                                                                           releases)) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
