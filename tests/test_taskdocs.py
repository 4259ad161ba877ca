"""Tasks versioned on their own (tgbhub.tasks.documents, tgbhub.local.task_artifacts): documents pinned to a dataset version,
artifacts rebuilt from the verified dataset and accepted only on the document's digests; the dataset never changes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import tgbhub
from tgbhub import api
from tgbhub.errors import GenerationError, IntegrityError, ManifestError
from tgbhub.hashing import content_digest
from tgbhub.registry import Registry
from tgbhub.tasks.documents import document_path, documents_for, parse_task_document, read_task_document

TASK = "window-forecast"


def test_every_base_temporal_graph_declares_the_window_task_pinned_to_its_digests() -> None:
    registry = Registry()
    names = [n for n in registry.names(derived=False) if registry.lookup(n).graph.get("kind") == "temporal-graph"]
    assert len(names) == 52
    for name in names:
        manifest = registry.lookup(name)
        documents = documents_for(registry.root, manifest)
        assert [d.task_name for d in documents] == [TASK], name
        document = documents[0]
        assert document.dataset == f"{name}@{manifest.version}"
        edges = manifest.graph["edges_file"]
        assert dict(document.dataset_digests) == {edges: manifest.file(edges).digest}
        assert document.task["type"] == "window-link-forecasting" and document.task["horizon"]["value"] == 1
        assert set(document.task["negatives"]["files"]) == set(list(manifest.splits)[1:])
        # the dataset's own manifest is untouched: its tasks do not include the documented one
        assert TASK not in [t.get("name") for t in manifest.tasks]


def test_loaded_datasets_list_the_task_and_keep_their_files_and_version(shared_cache: Path) -> None:
    ds = tgbhub.load_dataset("t-grab/ce-4", cache_dir=shared_cache)
    bundled = api.resolve("t-grab/ce-4")
    assert [t["name"] for t in ds.manifest.tasks] == [*(t["name"] for t in bundled.tasks), TASK]
    assert ds.manifest.task == bundled.task and ds.manifest.files == bundled.files
    assert ds.manifest.version == bundled.version and ds.manifest.task_named(TASK)["version"] == "1.0.0"


def test_rebuilt_artifacts_have_the_documents_digests(shared_cache: Path) -> None:
    ds = tgbhub.load_dataset("t-grab/ce-4", cache_dir=shared_cache)
    artifacts, columns = ds.task_artifacts(TASK)
    for entry in artifacts.files:
        import numpy as np

        values = {c: np.load(p) for c, p in columns[entry.name].items()}
        assert content_digest({c: values[c] for c in entry.columns}) == entry.digest
    assert (shared_cache / "t-grab" / "ce-4" / "tasks" / TASK / "1.0.0" / "COMPLETE").is_file()


def _copied_registry(tmp_path: Path, edit) -> Registry:
    """The bundled ce-4 manifest and its task document, the document changed by ``edit(doc)``."""
    bundled = Registry()
    root = tmp_path / "manifests"
    target = root / "t-grab" / "ce-4" / "1.0.0.json"
    target.parent.mkdir(parents=True)
    shutil.copyfile(bundled.path("t-grab/ce-4", "1.0.0"), target)
    source = document_path(bundled.root, "t-grab/ce-4", TASK, "1.0.0")
    doc = json.loads(source.read_text())
    edit(doc)
    copy = document_path(root, "t-grab/ce-4", TASK, "1.0.0")
    copy.parent.mkdir(parents=True)
    copy.write_text(json.dumps(doc))
    return Registry(root)


def test_an_artifact_with_other_content_is_refused_and_nothing_installed(tmp_path: Path, shared_cache: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    def corrupt(doc):  # a document describing other negatives than the recipe builds
        doc["distribution"][1]["sha256"] = "0" * 64
        doc["digest"][1]["value"] = "0" * 64

    monkeypatch.setattr(api, "_REGISTRY", _copied_registry(tmp_path, corrupt))
    cache = tmp_path / "cache"
    ds = tgbhub.load_dataset("t-grab/ce-4", cache_dir=cache)
    with pytest.raises(IntegrityError, match="window-negatives-test.parquet"):
        ds.window_negatives("test")
    assert not (cache / "t-grab" / "ce-4" / "tasks" / TASK / "1.0.0" / "COMPLETE").exists()


def test_a_document_for_other_dataset_content_is_refused_before_building(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    def repin(doc):
        doc["datasetDigests"]["edges.parquet"] = "f" * 64

    monkeypatch.setattr(api, "_REGISTRY", _copied_registry(tmp_path, repin))
    ds = tgbhub.load_dataset("t-grab/ce-4", cache_dir=tmp_path / "cache")
    with pytest.raises(IntegrityError, match="dataset file edges.parquet") as info:
        ds.window_negatives("val")
    assert "f" * 64 in str(info.value)


def test_an_unknown_task_generator_version_says_which_release(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def newer(doc):
        doc["recipe"]["version"] = "9.0.0"

    monkeypatch.setattr(api, "_REGISTRY", _copied_registry(tmp_path, newer))
    ds = tgbhub.load_dataset("t-grab/ce-4", cache_dir=tmp_path / "cache")
    with pytest.raises(GenerationError, match="tgbhub.window-negatives 9.0.0"):
        ds.get_evaluator(TASK).evaluate({})


def test_the_cached_artifacts_are_used_without_rebuilding(shared_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ds = tgbhub.load_dataset("t-grab/ce-4", cache_dir=shared_cache)
    ds.window_negatives("test")

    def no_build(recipe):
        raise AssertionError("rebuilt although cached")

    import generators.forecast as forecast

    monkeypatch.setattr(forecast, "builder_for", no_build)
    again = tgbhub.load_dataset("t-grab/ce-4", cache_dir=shared_cache)
    assert len(again.window_negatives("test")) == len(ds.window_negatives("test"))


def test_malformed_documents_are_named(tmp_path: Path) -> None:
    good = json.loads(document_path(Registry().root, "t-grab/ce-4", TASK, "1.0.0").read_text())
    assert parse_task_document(good).reference == "t-grab/ce-4/tasks/window-forecast@1.0.0"
    with pytest.raises(ManifestError, match="conformsTo"):
        parse_task_document({**good, "conformsTo": "x"})
    with pytest.raises(ManifestError, match="has no 'datasetDigests'"):
        parse_task_document({k: v for k, v in good.items() if k != "datasetDigests"})
    with pytest.raises(ManifestError, match="pins dataset"):
        parse_task_document({**good, "dataset": "t-grab/ce-64@1.0.0"})
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(ManifestError, match="restore it from git"):
        read_task_document(bad)


@pytest.mark.slow
def test_every_task_document_rebuilds_to_its_digests(shared_cache: Path) -> None:
    """Catalogue-wide: each of the 52 documents' negatives, rebuilt from the verified dataset, installs (the cache
    accepts them only on the document's content digests)."""
    registry = Registry()
    for name in registry.names(derived=False):
        if registry.lookup(name).graph.get("kind") != "temporal-graph":
            continue
        ds = tgbhub.load_dataset(name, cache_dir=shared_cache)
        stats = documents_for(registry.root, registry.lookup(name))[0].artifacts.stats
        for split in ds.manifest.task_named(TASK)["negatives"]["files"]:
            assert len(ds.window_negatives(split)) == stats[split]["queries"], (name, split)


def test_a_variant_declares_the_task_on_request_and_builds_it_reproducibly(tmp_path: Path) -> None:
    """A temporal graph without a bundled document (here a distorted variant, float times counted in snapshots)
    declares the task at load; its document and negatives are built on first use, cached, and the same everywhere."""
    name = "t-grab/ce-4~shuffle-s0"
    first = tgbhub.load_dataset(name, cache_dir=tmp_path / "a")
    task = first.manifest.task_named(TASK)
    assert task["builtOnRequest"] and task["horizon"]["value"] == 1 and task["horizon"]["unit"] == "snapshot"
    stored = tmp_path / "a" / "t-grab" / "ce-4~shuffle-s0" / "tasks" / TASK / "1.0.0.document.json"
    assert not stored.exists()  # nothing is built until the task is used
    negatives = first.window_negatives("test")
    document = read_task_document(stored)
    assert document.dataset == f"{name}@1.0.0" and json.loads(stored.read_text())["builtOnRequest"] is True
    second = tgbhub.load_dataset(name, cache_dir=tmp_path / "b")
    second.window_negatives("test")
    again = read_task_document(tmp_path / "b" / "t-grab" / "ce-4~shuffle-s0" / "tasks" / TASK / "1.0.0.document.json")
    assert [f.digest for f in again.artifacts.files] == [f.digest for f in document.artifacts.files]
    assert len(negatives) == document.artifacts.stats["test"]["queries"]
    result = first.get_evaluator(TASK).evaluate({"window": negatives.window, "query": range(len(negatives)),
                                                 "pos_score": [1.0] * len(negatives),
                                                 "neg_score": [0.0] * len(negatives)})
    assert result["metrics"]["auc"] == 1.0 and result["task_document"] == f"{name}/tasks/{TASK}@1.0.0"


def test_a_cached_on_request_document_of_other_content_is_rebuilt(tmp_path: Path) -> None:
    name = "t-grab/ce-4~shuffle-s1"
    ds = tgbhub.load_dataset(name, cache_dir=tmp_path)
    ds.window_negatives("val")
    stored = tmp_path / "t-grab" / "ce-4~shuffle-s1" / "tasks" / TASK / "1.0.0.document.json"
    doc = json.loads(stored.read_text())
    doc["datasetDigests"] = {k: "e" * 64 for k in doc["datasetDigests"]}
    stored.write_text(json.dumps(doc))
    again = tgbhub.load_dataset(name, cache_dir=tmp_path)
    assert len(again.window_negatives("val")) == len(ds.window_negatives("val"))
    assert "e" * 64 not in stored.read_text()


def test_info_says_when_the_task_is_declared_on_request(capsys: pytest.CaptureFixture[str]) -> None:
    from tgbhub.cli import main

    assert main(["info", "t-grab/ce-4~shuffle-s0"]) == 0
    assert "window-forecast (window-link-forecasting): auc, ap on test; declared on request" in capsys.readouterr().out
    assert main(["info", "t-grab/ce-4"]) == 0
    assert "task document t-grab/ce-4/tasks/window-forecast@1.0.0; horizon 1 snapshot" in capsys.readouterr().out
