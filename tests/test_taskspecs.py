"""Tasks as plug-ins (tgbhub.tasks.specs): a task from its own folder, with its own artifacts and evaluator, is one
registration line away from being declared, built, loaded offline and graded; so is a transform (tests/test_derive)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tgbhub
from tests.test_derive import TOY as TOY_TRANSFORM
from tgbhub.tasks import specs as taskspecs
from generators import transforms

BASE = "t-grab/pdet-2-16"

TOY_TASK = '''
"""A toy task from outside the package: guess the last timestamp of the test split; its artifact holds the truth."""
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from generators.manifests import file_object
from tgbhub.hashing import DIGEST_ALGORITHM, content_digest
from tgbhub.manifest import TASK_DOCUMENT_FORMAT, TASKS_FOLDER
from tgbhub.tasks.specs import TaskSpec

NAME, TYPE, VERSION = "last-time", "toy-last-time", "1.0.0"
FILE = "last-time.parquet"


def block(manifest, dataset):
    return {"name": NAME, "type": TYPE, "version": VERSION, "report_split": "test", "metrics": ["exact"],
            "document": f"{manifest.name}/{TASKS_FOLDER}/{NAME}@{VERSION}"}


class Artifacts:
    generator, version, seed = "toy.last-time", "1.0.0", 0

    @staticmethod
    def build(manifest, columns, seed, definition):
        t = np.asarray(columns[manifest.graph["edges_file"]]["t"])
        return {FILE: {"t_max": np.array([t.max()], dtype=np.float64)}}

    @staticmethod
    def write(files, folder):
        folder.mkdir(parents=True, exist_ok=True)
        for name, columns in files.items():
            pq.write_table(pa.table(dict(columns)), folder / name)
        return {name: folder / name for name in files}

    @staticmethod
    def document(manifest, columns, files, folder, definition):
        edges = manifest.graph["edges_file"]
        return {"@type": "tgbhub:TaskDocument", "conformsTo": TASK_DOCUMENT_FORMAT,
                "name": f"{manifest.name}/{TASKS_FOLDER}/{NAME}", "version": VERSION, "description": "a toy task",
                "license": manifest.license, "dataset": f"{manifest.name}@{manifest.version}",
                "datasetDigests": {edges: manifest.file(edges).digest},
                "recipe": {"generator": Artifacts.generator, "version": Artifacts.version, "params": {}, "seed": 0},
                "distribution": [file_object(name, folder / name) for name in files],
                "digest": [{"file": name, "algorithm": DIGEST_ALGORITHM, "value": content_digest(cols),
                            "columns": list(cols)} for name, cols in files.items()],
                "task": block(manifest, None)}


class Evaluator:
    def __init__(self, manifest, task, truth):
        self.manifest, self.task, self.truth = manifest, task, truth

    def evaluate(self, submission, split=None, detail=False):
        artifacts, columns = self.truth.task_artifacts(NAME)
        truth = float(np.load(columns[FILE]["t_max"])[0])
        return {"dataset": self.manifest.name, "task": NAME, "digest": artifacts.file(FILE).digest,
                "metrics": {"exact": float(float(submission["t_max"]) == truth)}}


TASK = TaskSpec(name=NAME, type=TYPE, version=VERSION, summary="last-time (toy): the test split's last timestamp",
                applies_to=frozenset({"temporal-graph"}), block=block, artifacts=Artifacts, evaluator=Evaluator)
'''


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "toy_task.py").write_text(TOY_TASK)
    (folder / "toy_late.py").write_text(TOY_TRANSFORM)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setitem(taskspecs.REGISTERED, "last-time", "toy_task")  # one registration line each
    monkeypatch.setitem(transforms.REGISTERED, "late", "toy_late")


def test_a_toy_task_and_a_toy_transform_are_listed_built_loaded_offline_and_graded(
        plugins: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tgbhub.cli import main

    cache = str(tmp_path / "cache")
    variant = f"{BASE}~late-d1-s0"
    assert main(["list", "--transforms", "--json"]) == 0
    assert "late" in {card["name"] for card in json.loads(capsys.readouterr().out)}
    assert main(["list", "--tasks", "--json"]) == 0
    assert [card["name"] for card in json.loads(capsys.readouterr().out)] == ["window-forecast", "last-time"]
    assert main(["--cache-dir", cache, "build", variant, "--tasks", "--json"]) == 0
    built = json.loads(capsys.readouterr().out)
    assert [(row["name"], row["tasks"]) for row in built] == [(variant, ["window-forecast", "last-time"])]
    assert main(["--cache-dir", cache, "info", variant, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert [t["name"] for t in info["tasks_on_request"]] == ["window-forecast", "last-time"]
    assert info["transform"]["kind"] == "late"
    ds = tgbhub.load_dataset(variant, cache_dir=cache, offline=True)  # everything was built: nothing to do now
    assert ds.source == "cache" and [t["name"] for t in ds.manifest.tasks][-1] == "last-time"
    documents = list((tmp_path / "cache" / "t-grab" / "pdet-2-16~late-d1-s0" / "tasks" / "last-time").glob("*.json"))
    assert [d.name for d in documents] == ["1.0.0.document.json"]
    last = float(np.asarray(ds.t).max())
    assert ds.get_evaluator("last-time").evaluate({"t_max": last})["metrics"] == {"exact": 1.0}
    assert ds.get_evaluator("last-time").evaluate({"t_max": last + 1})["metrics"] == {"exact": 0.0}
    base = tgbhub.load_dataset(BASE, cache_dir=cache, offline=True)  # declared for every temporal graph
    assert base.get_evaluator("last-time").evaluate({"t_max": float(np.asarray(base.t).max())})["metrics"] == {
        "exact": 1.0}


def test_a_registration_line_that_names_another_task_is_refused(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "toy_task2.py").write_text(TOY_TASK)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setitem(taskspecs.REGISTERED, "first-time", "toy_task2")
    with pytest.raises(tgbhub.ManifestError, match="defines 'last-time' but is registered as 'first-time'"):
        taskspecs.task_specs()


def test_window_forecasting_is_the_first_registered_task() -> None:
    spec = taskspecs.task_spec("window-forecast")
    assert spec is not None and spec.type == "window-link-forecasting" and spec.artifacts == "tgbhub.window-negatives"
    assert taskspecs.task_spec("no-such-task") is None
