"""The family repo layout: the card's ``datasets`` configs for negatives and features files."""

from __future__ import annotations

import json

import tgbhub
from tgbhub.hub.layout import dataset_card, extra_configs, lfs_oid, lfs_pointer, lfs_pointer_fields
from tgbhub.manifest import Manifest, parse_manifest
from tgbhub.registry import Registry


def _manifest(name: str) -> Manifest:
    return Registry().resolve(tgbhub.registry.parse_reference(f"{name}@1.0.0"))


def test_negatives_files_become_one_config_with_a_split_per_file() -> None:
    ce4, pdet = _manifest("t-grab/ce-4"), _manifest("t-grab/pdet-2-1")
    assert extra_configs(ce4) == {"ce-4-negatives": {split: f"ce-4/negatives-{split}.parquet"
                                                     for split in ("val", "test", "test_inductive")}}
    card = dataset_card("t-grab", [ce4, pdet], "tgbhub/t-grab").decode()
    front = card.split("---")[1]
    declared = "- config_name: pdet-2-1-negatives\n  data_files:\n  - split: val\n    path: pdet-2-1/negatives-val"
    assert declared in front and front.count("default: true") == 1
    assert "train" not in front.split("pdet-2-1-negatives")[1]  # no training negatives: no such split


def test_a_node_features_file_becomes_a_features_config() -> None:
    document = json.loads(Registry().path("t-grab/ce-4", "1.0.0").read_text())
    edges = next(obj for obj in document["distribution"] if obj["contentUrl"] == "edges.parquet")
    document["distribution"].append({**edges, "@id": "nodes.parquet", "name": "nodes.parquet",
                                     "contentUrl": "nodes.parquet"})
    document["graph"]["node_feat"] = {"file": "nodes.parquet", "column": "node_feat", "dim": 4}
    configs = extra_configs(parse_manifest(document))
    assert configs["ce-4-features"] == {"nodes": "ce-4/nodes.parquet"} and "ce-4-negatives" in configs
    document["graph"]["node_feat"] = {"file": "absent.parquet"}  # a file the manifest does not list: no config
    assert "ce-4-features" not in extra_configs(parse_manifest(document))


def test_pointer_fields_round_trip() -> None:
    pointer = lfs_pointer("ab" * 32, 1234)
    assert lfs_pointer_fields(pointer) == ("ab" * 32, 1234) and lfs_oid(pointer) == "ab" * 32
    assert lfs_pointer_fields(b"not a pointer") is None and lfs_oid(pointer + b"x") is None
