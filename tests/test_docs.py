"""The documentation cannot drift from the code: every Python and shell example in docs/ and the README runs here.

Each page runs top to bottom in its own working folder (tests/docs_runner.py), with no network beyond 127.0.0.1
(a page may serve its own hub there), against a cache that starts empty in every test session. A block the suite
cannot run says why in a marker on the line before it (``<!-- docs-test: skip: REASON -->``), and every such marker
is listed in ``SKIPPED`` below, so adding one is a reviewed decision. The README test installs a copy of the checkout into a fresh virtual environment with its own
install lines, as written, then runs its quickstart with that environment's ``tgbhub``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
RUNNER = Path(__file__).resolve().parent / "docs_runner.py"
FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w-]*)\s*$")
SKIP = re.compile(r"^\s*<!-- docs-test: skip: (?P<reason>.+?) -->\s*$")
RUN_LANGUAGES = {"python", "bash"}
#: fence languages that are output or prose, never run
SHOWN_LANGUAGES = {"", "text"}
#: (page, line of the fence) -> why the suite does not run it
SKIPPED = {
    ("README.md", "scripts/demo"): "the two commands: CI runs scripts/test, which runs this suite",
    ("hubs.md", "export HF_TOKEN=hf_..."): "publishes to huggingface.co with a write token",
    ("tgb.md", "tgbhub import tgb/tgbl-wiki"): "downloads TGB's release from its host",
    ("tgb.md", "from tgbhub.compat.tgb import LinkPropPredDataset, Evaluator"): "needs that download imported",
}
PAGE_TIMEOUT_S = 600


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: str
    line: int
    lang: str
    code: str
    skip: str | None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks_of(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file, indentation removed, with the skip marker that precedes each."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent = len(opening["indent"])
        end = next(i for i in range(index + 1, len(lines)) if lines[i].strip() == "```")
        code = "\n".join(line[indent:] for line in lines[index + 1:end]) + "\n"
        marker = SKIP.match(lines[index - 1]) if index else None
        found.append(Block(path.name, index + 1, opening["lang"], code, marker["reason"] if marker else None))
        index = end + 1
    return found


def pages() -> list[Path]:
    return sorted(DOCS.glob("*.md"))


def runnable(blocks: list[Block]) -> list[Block]:
    return [block for block in blocks if block.lang in RUN_LANGUAGES and block.skip is None]


def docs_environment(cache: Path, home: Path, bin_dir: Path) -> dict[str, str]:
    """The reader's shell: tgbhub on PATH, an empty cache of this session, no progress bars, and no network: no hub
    endpoint or mirror is set (TGBHUB_*/HF_* variables are dropped), so datasets are built locally unless a page
    starts its own hub on 127.0.0.1, and pip never reaches an index (PIP_NO_INDEX)."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("TGBHUB_", "HF_", "PYTEST_"))}
    env.update(TGBHUB_CACHE=str(cache), TGBHUB_NO_PROGRESS="1", HF_HOME=str(home / "hf"), PIP_NO_INDEX="1",
               HF_HUB_DISABLE_TELEMETRY="1", MPLBACKEND="Agg", PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}")
    return env


def run_page(blocks: list[Block], python: Path | str, cwd: Path, env: dict[str, str]) -> None:
    plan = cwd / ".docs-blocks.json"
    plan.write_text(json.dumps([{"lang": b.lang, "code": b.code, "where": b.where} for b in blocks]))
    runner = subprocess.Popen([str(python), str(RUNNER), str(plan)], cwd=cwd, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = runner.communicate(timeout=PAGE_TIMEOUT_S)
    finally:  # a server a page started in the background (`tgbhub hub serve ... &`) ends with the page
        try:
            os.killpg(runner.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert runner.returncode == 0, f"{blocks[0].page}: an example failed\n{out[-4000:]}\n{err[-6000:]}"


@pytest.fixture(scope="module")
def docs_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("docs-cache")


def test_every_fence_is_run_or_shown() -> None:
    """A block tagged ``sh`` or ``console`` would be skipped silently: only python/bash run, text/plain show."""
    odd = [f"{b.where} ```{b.lang}" for page in [*pages(), ROOT / "README.md"] for b in blocks_of(page)
           if b.lang not in RUN_LANGUAGES | SHOWN_LANGUAGES]
    assert not odd, f"fence languages must be python, bash, text or none: {odd}"


def test_skips_are_the_reviewed_ones() -> None:
    skipped = {(b.page, b.code.splitlines()[0].split("#")[0].strip()): b.skip
               for page in [*pages(), ROOT / "README.md"] for b in blocks_of(page) if b.skip is not None}
    reviewed = {(page, first.split("#")[0].strip()) for page, first in SKIPPED}
    assert set(skipped) == reviewed, f"skip markers {sorted(skipped)} differ from the reviewed list {sorted(reviewed)}"


@pytest.mark.parametrize("page", [p.name for p in pages() if runnable(blocks_of(p))])
def test_page_examples_run(page: str, docs_cache: Path, tmp_path: Path) -> None:
    env = docs_environment(docs_cache, tmp_path, Path(sys.executable).parent)
    run_page(runnable(blocks_of(DOCS / page)), sys.executable, tmp_path, env)


def _checkout_copy(target: Path) -> None:
    """The files a clone has: git's tracked and untracked-but-not-ignored files, or the tree without build output."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True)
    if listed.returncode == 0:
        for name in filter(None, listed.stdout.decode().split("\0")):
            source = ROOT / name
            if not source.exists() and not source.is_symlink():
                continue  # deleted in the work tree, not yet committed
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            if source.is_symlink():
                os.symlink(os.readlink(source), target / name)
            else:
                shutil.copy2(source, target / name)
        return
    shutil.copytree(ROOT, target, symlinks=True, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(".venv", ".git", "__pycache__", "site", "dist"))


def _offline_dependencies(seed: Path) -> Path:
    """This environment's installed packages, tgbhub excluded, as one folder a new venv can see on PYTHONPATH: the
    install lines then resolve every dependency offline, and only tgbhub itself is installed by them."""
    site_packages = next(Path(p) for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()
                         and str(p).startswith(sys.prefix))
    seed.mkdir()
    for entry in site_packages.iterdir():
        if entry.name.lower().startswith(("tgbhub", "__editable__", "_tgbhub")) or entry.suffix == ".pth":
            continue
        os.symlink(entry, seed / entry.name)
    return seed


def test_readme_install_and_quickstart_run_as_written(tmp_path: Path) -> None:
    """A fresh copy of the checkout, nothing but the README: its install lines (venv + editable install, the wheel)
    and its quickstart run as written. Offline: the dependencies come from this test environment (PYTHONPATH), the
    build backend runs without isolation, and pip never opens a socket (PIP_NO_INDEX)."""
    checkout = tmp_path / "tgbhub"
    checkout.mkdir()
    _checkout_copy(checkout)
    tools = tmp_path / "bin"
    tools.mkdir()
    os.symlink(Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}",
               tools / "python3")
    env = docs_environment(tmp_path / "cache", tmp_path, tools)
    env.update(PYTHONPATH=str(_offline_dependencies(tmp_path / "deps")), PIP_NO_INDEX="1",
               PIP_NO_BUILD_ISOLATION="0", PIP_DISABLE_PIP_VERSION_CHECK="1")
    blocks = runnable(blocks_of(checkout / "README.md"))
    assert any("pip install -e" in b.code for b in blocks) and any("tgbhub evaluate" in b.code for b in blocks)
    for block in blocks:  # a Python block runs in the venv the install lines made, as a reader would run it
        python = checkout / ".venv" / "bin" / "python" if block.lang == "python" else tools / "python3"
        run_page([block], python, checkout, env)
    assert (checkout / "submission.parquet").is_file()
