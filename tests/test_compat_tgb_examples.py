"""TGB's own example scripts on tgbhub.compat.tgb: carried byte-identical except their import lines
(tests/compat_tgb_scripts, checked against upstream's sha256), run on a small release in TGB's format against py-tgb
2.3.0 on the same files, with py-tgb blocked on tgbhub's side; and what the scripts lean on: the PyG datasets' tensors,
tgb.utils.utils' helpers, the runner's aliases, an Evaluator whose first call compiles nothing."""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from tests import compat_tgb_harness as harness, tgb_formats as formats

CARRIED = Path(__file__).parent / "compat_tgb_scripts"
#: each carried script: upstream's sha256, and its import lines as upstream wrote them (line number: text)
UPSTREAM_SCRIPTS = {
    "examples/linkproppred/tgbl-wiki/edgebank.py": (
        "949c382c2f0c2fc59494973002e8e5891746d5571026347d522b548ed962e2b9",
        {22: "from tgb.linkproppred.evaluate import Evaluator",
         24: "from tgb.utils.utils import set_random_seed",
         25: "from tgb.linkproppred.dataset import LinkPropPredDataset",
         26: "from tgb.utils.utils import save_results"}),
    "examples/linkproppred/tkgl-smallpedia/edgebank.py": (
        "d49f8782429284ed01203c9aeb184b7f67395fac43beafcbfed42de98dbfa3ad",
        {26: "from tgb.linkproppred.evaluate import Evaluator",
         28: "from tgb.utils.utils import set_random_seed",
         29: "from tgb.linkproppred.dataset import LinkPropPredDataset",
         30: "from tgb.utils.utils import save_results"}),
    "examples/nodeproppred/tgbn-trade/persistant_forecast.py": (
        "60e30cc0eb045b0b6a605f499ce8c71290fdd840164dd007e4d4e8d581f12379",
        {11: "from tgb.nodeproppred.dataset_pyg import PyGNodePropPredDataset",
         13: "from tgb.nodeproppred.evaluate import Evaluator"}),
}
#: upstream's sha256 of every line but the import lines (what the carried copies must keep)
UPSTREAM_BODIES = {
    "examples/linkproppred/tgbl-wiki/edgebank.py": "660f7dd66abd973c9945a27755a184c9ef748d2c61b1b4aacb945f3a22e22ece",
    "examples/linkproppred/tkgl-smallpedia/edgebank.py":
        "967c9adc8c898321708bbd5a558ff7992bdabdd0dd7452fadd6d7a2752abccf4",
    "examples/nodeproppred/tgbn-trade/persistant_forecast.py":
        "5378bebecb944c4d5bc8fa69fded8a1ca391994c0b573cbe4c778ba8f62e062b",
}
UPSTREAM_MODULES = {
    "modules/edgebank_predictor.py": "01a7c704d7a1529dcfd662d104470b950b258c7d565a2d611bd1273253fed2e0",
    "modules/heuristics.py": "4c45345c37c62b7eef3f2fc5c5fbae414e9d73111efdb3df9767e750d380242c",
}
#: script -> (dataset, writer keywords)
RELEASES = {
    "examples/linkproppred/tgbl-wiki/edgebank.py": ("tgbl-wiki", {"n_edges": 400, "seed": 1}),
    "examples/linkproppred/tkgl-smallpedia/edgebank.py": ("tkgl-smallpedia", {"n_edges": 400, "seed": 1}),
    "examples/nodeproppred/tgbn-trade/persistant_forecast.py": ("tgbn-trade", {"n_edges": 2000, "seed": 0}),
}


def _upstream_text(script: str) -> str:
    """The carried script with upstream's import lines put back."""
    lines = harness.read_exact(CARRIED / script).splitlines(keepends=True)
    for number, text in UPSTREAM_SCRIPTS[script][1].items():
        ending = lines[number - 1][len(lines[number - 1].rstrip("\r\n")):]
        lines[number - 1] = text + ending
    return "".join(lines)


def test_carried_scripts_are_upstreams_but_for_their_import_lines() -> None:
    for script, (digest, originals) in UPSTREAM_SCRIPTS.items():
        carried = harness.read_exact(CARRIED / script)
        upstream = _upstream_text(script)
        assert hashlib.sha256(upstream.encode()).hexdigest() == digest, script  # the restored file is upstream's
        assert harness.body_digest(carried) == UPSTREAM_BODIES[script] == harness.body_digest(upstream)
        changed = [i + 1 for i, (a, b) in enumerate(zip(carried.splitlines(), upstream.splitlines(), strict=True))
                   if a != b]
        assert changed == sorted(originals)
        assert all(carried.splitlines()[i - 1].startswith("from tgbhub.compat.tgb import ") for i in changed)
        assert harness.localize(upstream) == carried  # the rewrite the table's "imports only" column uses
    for module, digest in UPSTREAM_MODULES.items():
        assert hashlib.sha256((CARRIED / module).read_bytes()).hexdigest() == digest, module
    assert "MIT License" in (CARRIED / "LICENSE").read_text()


@pytest.fixture(scope="module")
def upstream_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A TGB tree of the carried files with upstream's import lines (what py-tgb and the runner run)."""
    root = tmp_path_factory.mktemp("tgb-upstream")
    for script in UPSTREAM_SCRIPTS:
        (root / script).parent.mkdir(parents=True, exist_ok=True)
        harness.write_exact(root / script, _upstream_text(script))
    (root / "modules").mkdir()
    for module in UPSTREAM_MODULES:
        (root / module).write_bytes((CARRIED / module).read_bytes())
    return root


def _compare(script: str, sides: tuple[str, ...], upstream_root: Path, work: Path) -> None:
    """Run ``script`` on py-tgb and on ``sides`` concurrently; every side exits 0 and reports py-tgb's metrics."""
    name, size = RELEASES[script]
    release = harness.build(name, work, **size)
    with ThreadPoolExecutor(len(sides) + 1) as pool:
        futures = {side: pool.submit(harness.run, side, upstream_root, script, [], release, work, 300)
                   for side in ("pytgb", *sides)}
        runs = {side: future.result() for side, future in futures.items()}
    for side, run in runs.items():
        assert run.ok, f"{side}: {run.stderr[-2000:]}"
    theirs = runs["pytgb"].metrics
    assert len(theirs) >= 2 and all(0 < value < 1 for value in theirs.values())
    for side in sides:
        assert harness.max_diff(runs[side].metrics, theirs) <= 1e-6, (side, runs[side].metrics, theirs)


def test_tgbs_edgebank_prints_pytgbs_metrics_with_its_import_lines_changed(upstream_root: Path,
                                                                          tmp_path: Path) -> None:
    _compare("examples/linkproppred/tgbl-wiki/edgebank.py", ("imports",), upstream_root, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("script", list(RELEASES))
def test_tgbs_scripts_print_pytgbs_metrics_with_imports_changed_and_through_the_runner(
        script: str, upstream_root: Path, tmp_path: Path) -> None:
    _compare(script, ("imports", "runner"), upstream_root, tmp_path)


# --- the PyG datasets, against py-tgb's on the same files -------------------------------------------------------------

@pytest.fixture(scope="module")
def wiki_release(tmp_path_factory: pytest.TempPathFactory) -> harness.Release:
    return harness.build("tgbl-wiki", tmp_path_factory.mktemp("pyg-wiki"), n_edges=400, seed=1)


def _pytgb_root(release: harness.Release) -> str:
    root, meta = formats.pytgb_root(release.pytgb_path / "tgb" / "datasets" / formats.dir_name(release.name),
                                    release.name)
    assert meta is None
    return root


def test_pyg_link_dataset_has_pytgbs_tensors(wiki_release: harness.Release) -> None:
    torch = pytest.importorskip("torch")
    from tgb.linkproppred.dataset_pyg import PyGLinkPropPredDataset as Theirs

    from tgbhub.compat.tgb import PyGLinkPropPredDataset

    theirs = Theirs(name="tgbl-wiki", root=_pytgb_root(wiki_release), download=False)
    ours = PyGLinkPropPredDataset(name="tgbl-wiki", root="ignored", cache_dir=wiki_release.cache)
    assert type(ours).__mro__[1] is type(theirs).__mro__[1]  # torch_geometric's Dataset
    for attribute in ("src", "dst", "ts", "edge_feat", "edge_label", "train_mask", "val_mask", "test_mask"):
        mine, reference = getattr(ours, attribute), getattr(theirs, attribute)
        assert mine.dtype == reference.dtype and torch.equal(mine, reference), attribute
    assert ours.edge_type is theirs.edge_type is None and ours.node_feat is theirs.node_feat is None
    mine, reference = ours.get_TemporalData(), theirs.get_TemporalData()
    assert sorted(mine.keys()) == sorted(reference.keys())
    for key in reference.keys():
        assert mine[key].dtype == reference[key].dtype and torch.equal(mine[key], reference[key]), key
    assert (len(ours), ours.num_nodes, ours.num_edges, ours.eval_metric) == \
        (len(theirs), theirs.num_nodes, theirs.num_edges, theirs.eval_metric)
    assert ours.get(3).src == theirs.get(3).src and repr(ours) == repr(theirs)
    ours.load_val_ns()
    theirs.load_val_ns()
    mask = theirs.val_mask.numpy()
    args = (theirs.src.numpy()[mask][:50], theirs.dst.numpy()[mask][:50], theirs.ts.numpy()[mask][:50])
    assert ours.negative_sampler.query_batch(*args, split_mode="val") == \
        [list(row) for row in theirs.negative_sampler.query_batch(*args, split_mode="val")]


def test_pyg_node_dataset_hands_out_pytgbs_tensors_and_label_stream(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from tgb.nodeproppred.dataset_pyg import PyGNodePropPredDataset as Theirs

    from tgbhub.compat.tgb import PyGNodePropPredDataset

    release = harness.build("tgbn-trade", tmp_path, n_edges=2000, seed=0)
    theirs = Theirs(name="tgbn-trade", root=_pytgb_root(release), download=False)
    ours = PyGNodePropPredDataset(name="tgbn-trade", root="ignored", cache_dir=release.cache)
    assert ours.num_classes == theirs.num_classes and ours.eval_metric == theirs.eval_metric
    for attribute in ("src", "dst", "ts", "edge_feat", "edge_label", "train_mask", "val_mask", "test_mask"):
        mine, reference = getattr(ours, attribute), getattr(theirs, attribute)
        assert mine.dtype == reference.dtype and torch.equal(mine, reference), attribute
    assert type(ours.get_label_time()) is type(theirs.get_label_time())
    for t in theirs.ts.unique()[::3]:
        mine, reference = ours.get_node_label(t), theirs.get_node_label(t)
        assert (mine is None) == (reference is None)
        if reference is not None:
            order = torch.argsort(reference[1])  # py-tgb keeps the label file's order, ours node-id order
            for got, want in zip(mine, (reference[0], reference[1][order], reference[2][order]), strict=True):
                assert got.dtype == want.dtype and torch.equal(got, want)
        assert ours.get_label_time() == theirs.get_label_time()
    ours.reset_label_time()
    assert ours.dataset.label_ts_idx == 0


# --- tgb.utils.utils ----------------------------------------------------------------------------------------------

def test_utils_behave_as_pytgbs(tmp_path: Path) -> None:
    import tgb.utils.utils as theirs

    from tgbhub.compat.tgb import save_results, set_random_seed, split_by_time

    draws = []
    for seed_with in (theirs.set_random_seed, set_random_seed):
        seed_with(5)
        draws.append((random.random(), np.random.rand(), __import__("torch").rand(1).item()))
    assert draws[0] == draws[1]
    for save_with, name in ((theirs.save_results, "theirs.json"), (save_results, "ours.json")):
        for run in range(3):
            save_with({"run": run, "mrr": 0.5 + run}, str(tmp_path / name))
    assert json.loads((tmp_path / "ours.json").read_text()) == json.loads((tmp_path / "theirs.json").read_text())
    quads = np.random.default_rng(0).integers(0, 5, (200, 4))
    for mine, reference in zip(split_by_time(quads), theirs.split_by_time(quads), strict=True):
        assert np.array_equal(mine, reference)


def test_get_args_is_pytgbs_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    import tgb.utils.utils as theirs

    from tgbhub.compat.tgb import get_args

    monkeypatch.setattr(sys, "argv", ["script.py", "--num_epoch", "1", "-d", "tgbl-uci"])
    assert get_args() == theirs.get_args()
    monkeypatch.setattr(sys, "argv", ["script.py", "--no-such-flag"])
    with pytest.raises(SystemExit) as exited:
        get_args()
    assert exited.value.code == 0  # py-tgb prints the help and exits 0


# --- the runner ---------------------------------------------------------------------------------------------------

def test_runner_serves_tgb_names_for_the_process_only(tmp_path: Path) -> None:
    from tgbhub.compat.tgb.runner import TgbAliasFinder, run_script

    script = tmp_path / "probe.py"
    script.write_text("import sys\n"
                      "import tgb.linkproppred.evaluate\n"
                      "from tgb.nodeproppred.dataset import NodePropPredDataset\n"
                      "from tgb.utils.utils import save_results\n"
                      "import tgbhub.compat.tgb as compat\n"
                      "assert tgb.linkproppred.evaluate.Evaluator is compat.Evaluator\n"
                      "assert NodePropPredDataset is compat.NodePropPredDataset\n"
                      "save_results({'argv': sys.argv[1:]}, 'out.json')\n"
                      "try:\n"
                      "    import tgb.utils.pre_process\n"
                      "except ModuleNotFoundError as refused:\n"
                      "    print('refused:', refused)\n")
    before = [name for name in sys.modules if name == "tgb" or name.startswith("tgb.")]
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        run_script(script, ["--seed", "3"])
    finally:
        os.chdir(cwd)
    assert json.loads((tmp_path / "out.json").read_text()) == {"argv": ["--seed", "3"]}
    assert not any(isinstance(finder, TgbAliasFinder) for finder in sys.meta_path)
    assert [name for name in sys.modules if name == "tgb" or name.startswith("tgb.")] == before
    done = subprocess.run([sys.executable, "-m", "tgbhub.compat.tgb", "run", str(script)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "refused: tgbhub.compat.tgb does not serve py-tgb's module tgb.utils.pre_process" in done.stdout
    missing = subprocess.run([sys.executable, "-m", "tgbhub.compat.tgb", "run", str(tmp_path / "nope.py")],
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode != 0 and "is not a file" in missing.stderr


# --- the Evaluator's first call -----------------------------------------------------------------------------------

FIRST_CALL = """\
import time
import numpy as np
import tgbhub.evaluate.metrics as metrics
from tgbhub.compat.tgb import Evaluator

evaluator = Evaluator(name="tgbl-wiki")
rng = np.random.default_rng(0)
request = {"y_pred_pos": rng.random(200), "y_pred_neg": rng.random((200, 100)), "eval_metric": ["mrr"]}
times = []
for _ in range(6):
    started = time.perf_counter()
    result = evaluator.eval(request)
    times.append(time.perf_counter() - started)
print(len(metrics._rank_kernel.signatures), type(result["mrr"]).__name__, *times)
"""


def test_the_evaluators_first_call_compiles_nothing_and_costs_what_later_ones_do() -> None:
    done = subprocess.run([sys.executable, "-c", FIRST_CALL], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    compiled, kind, first, *later = done.stdout.split()
    assert (compiled, kind) == ("0", "float32")  # no lazy numba dispatch: nothing to load or compile
    assert float(first) <= max(10 * float(np.median([float(t) for t in later])), 0.05)  # loosely: no 0.7 s
