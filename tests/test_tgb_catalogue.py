"""tgbhub.tgb.catalogue against py-tgb 2.3.0's own dicts, file-naming rules and generation scripts, and the TGB
papers' published numbers."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from tgbhub.errors import DatasetNotFoundError
from generators.tgb import catalogue
from generators.tgb.catalogue import CATALOGUE, CITATION_DGB, CITATION_TGB, CITATION_TGB2, check_stats, entry

info = pytest.importorskip("tgb.utils.info")  # py-tgb 2.3.0, a [test] dependency
TGB_DIR = Path(info.__file__).resolve().parents[1]
LINK_SOURCE = (TGB_DIR / "linkproppred" / "dataset.py").read_text()
NODE_SOURCE = (TGB_DIR / "nodeproppred" / "dataset.py").read_text()
NAMES = sorted(info.DATA_URL_DICT)


def test_the_catalogue_names_exactly_py_tgbs_datasets() -> None:
    assert sorted(CATALOGUE) == NAMES
    assert len(CATALOGUE) == 22


@pytest.mark.parametrize("name", NAMES)
def test_url_version_metric_and_strategy_equal_py_tgbs(name: str) -> None:
    item = entry(name)
    assert item.url == info.DATA_URL_DICT[name]
    assert item.url.endswith("/" + item.zip_name)
    assert item.tgb_version == info.DATA_VERSION_DICT[name]
    assert item.eval_metric == info.DATA_EVAL_METRIC_DICT[name]
    assert item.ns_strategy == info.DATA_NS_STRATEGY_DICT.get(name)  # tgbn: absent there, None here
    assert item.num_classes == info.DATA_NUM_CLASSES.get(name)


def _static_edgelist_names() -> set[str]:
    """The datasets py-tgb gives a static edge file: the names in the ``if`` right above ``meta_dict["staticfile"]``."""
    match = re.search(r"if (.+):\n\s*self\.meta_dict\[\"staticfile\"\]", LINK_SOURCE)
    assert match, "py-tgb's static-file rule moved; re-read tgb/linkproppred/dataset.py"
    return set(re.findall(r'"([a-z]+-[a-z]+)"', match.group(1)))


def _expected_files(name: str) -> dict[str, str]:
    """The file names py-tgb 2.3.0's loaders look for, by the rules of their __init__ and _version_check."""
    version = info.DATA_VERSION_DICT[name]
    v = f"_v{version}" if version > 1 else ""
    if name.startswith("tgbn-"):
        return {"edgelist": f"{name}_edgelist{v}.csv", "node_labels": f"{name}_node_labels{v}.csv"}
    files = {"edgelist": f"{name}_edgelist{v}.csv", "val_ns": f"{name}_val_ns{v}.pkl",
             "test_ns": f"{name}_test_ns{v}.pkl"}
    if name == "tgbl-flight":
        files["node_feat"] = f"airport_node_feat{v}.csv"
    if name in _static_edgelist_names():
        files["static_edgelist"] = f"{name}_static_edgelist.csv"
    if "thg" in name:
        files["nodetype"] = f"{name}_nodetype.csv"
    return files


def test_the_naming_rules_reproduced_here_are_py_tgbs() -> None:
    for fragment in ('"_edgelist.csv"', '"_val_ns.pkl"', '"_test_ns.pkl"', '"airport_node_feat.csv"',
                     '"_edgelist_v" + str(int(version)) + ".csv"', '"_val_ns_v" + str(int(version)) + ".pkl"',
                     '"_test_ns_v" + str(int(version)) + ".pkl"', '"airport_node_feat_v" + str(int(version)) + ".csv"',
                     'if (version > 1):', '"_static_edgelist.csv"', 'if "thg" in name:', '"_nodetype.csv"'):
        assert fragment in LINK_SOURCE, fragment
    for fragment in ('"_edgelist.csv"', '"_node_labels.csv"', '"_node_labels_v" + str(int(version)) + ".csv"'):
        assert fragment in NODE_SOURCE, fragment
    assert _static_edgelist_names() == {"tkgl-wikidata", "tkgl-smallpedia"}


@pytest.mark.parametrize("name", NAMES)
def test_file_names_are_what_py_tgbs_loader_looks_for(name: str) -> None:
    assert dict(entry(name).files) == _expected_files(name)


def _generation_script(name: str) -> Path:
    found = [*TGB_DIR.glob(f"datasets/**/{name}_neg_generator.py"),
             *TGB_DIR.glob(f"datasets/**/{name.replace('-', '_')}_ns_gen.py")]
    assert len(found) == 1, (name, found)
    return found[0]


@pytest.mark.parametrize("name", [n for n in NAMES if not n.startswith("tgbn-")])
def test_q_and_seed_equal_py_tgbs_generation_scripts(name: str) -> None:
    text = _generation_script(name).read_text()
    q = int(re.search(r"^\s*num_neg_e_per_pos\s*=\s*(-?\d+)", text, re.M).group(1))
    seed = int(re.search(r"^\s*rnd_seed\s*=\s*(\d+)", text, re.M).group(1))
    item = entry(name)
    assert item.q == (None if q == -1 else q)  # -1: every destination (1-vs-all)
    assert item.one_vs_all == (q == -1)
    assert item.ns_seed == seed == 42


def test_node_datasets_have_no_negatives() -> None:
    for item in (e for e in CATALOGUE.values() if e.family == "tgbn"):
        assert (item.task, item.q, item.ns_seed, item.ns_strategy) == ("node", None, None, None)
        assert "val_ns" not in item.files and item.label_period in {"year", "week"}


def test_spec_numbers() -> None:
    wiki = entry("tgbl-wiki")
    assert (wiki.stats["num_nodes"], wiki.stats["num_edges"], wiki.q) == (9_227, 157_474, 12_000)
    small = entry("tkgl-smallpedia")
    assert (small.stats["num_nodes"], small.stats["num_relations"], small.time_unit) == (47_433, 283, "year")
    assert dict(small.stats["split_edges"]) == {"train": 387_757, "val": 81_033, "test": 81_586}
    assert entry("thgl-myket").q == 20 and entry("thgl-myket").stats["num_node_types"] == 2
    assert {n: entry(n).num_classes for n in ("tgbn-trade", "tgbn-genre", "tgbn-reddit", "tgbn-token")} == {
        "tgbn-trade": 255, "tgbn-genre": 513, "tgbn-reddit": 698, "tgbn-token": 1001}
    assert dict(entry("tkgl-yago").split) == {"val": 0.1, "test": 0.1}
    assert all(dict(e.split) == {"val": 0.15, "test": 0.15} for e in CATALOGUE.values() if e.name != "tkgl-yago")
    assert entry("tgbl-enron").stats == {"num_nodes": 184, "num_edges": 125_235}
    assert entry("tkgl-wikidata").q == 1000 and entry("tkgl-icews").q is None


def test_published_splits_add_up_to_the_totals() -> None:
    """Table 11 against Table 1: catches a mistyped number (the paper itself prints myket's test count as 804,4915)."""
    checked = 0
    for item in CATALOGUE.values():
        for split, total in (("split_edges", "num_edges"), ("split_timestamps", "num_timestamps")):
            if split in item.stats:
                assert sum(item.stats[split].values()) == item.stats[total], (item.name, split)
                checked += 1
    assert checked == 16


def test_every_note_explains_a_published_number_or_says_it_is_unknown() -> None:
    for item in CATALOGUE.values():
        for stat, note in item.stats_note.items():
            assert stat in item.stats or stat in item.profile or note.startswith("unknown"), (item.name, stat)
        assert item.stats_source
        assert set(item.profile) <= set(catalogue.PROFILE_DECIMALS)
    assert not entry("tkgl-yago").stats and "num_edges" in entry("tkgl-yago").stats_note
    assert "num_timestamps" not in entry("tgbl-lastfm").stats and "num_timestamps" in entry("tgbl-lastfm").stats_note
    assert "inverse" in entry("tkgl-icews").stats_note["num_edges"]


def test_families_tasks_and_citations() -> None:
    supplementary = {"tgbl-enron", "tgbl-uci", "tgbl-subreddit", "tgbl-lastfm"}
    for item in CATALOGUE.values():
        assert item.name.startswith(item.family + "-")
        assert item.task == ("node" if item.family == "tgbn" else "link")
        assert item.hub_name == "tgb/" + item.name and item.dir_name == item.name.replace("-", "_")
        expected = CITATION_TGB2 if item.family in {"tkgl", "thgl"} else CITATION_TGB
        assert expected in item.citation
        assert (CITATION_DGB in item.citation) == (item.name in supplementary)
        assert (item.license is not None) == (item.family in {"tkgl", "thgl"} and item.name != "tkgl-yago")


def test_entries_are_read_only() -> None:
    item = entry("tkgl-smallpedia")
    with pytest.raises(AttributeError):
        item.q = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        item.stats["num_nodes"] = 1  # type: ignore[index]
    with pytest.raises(TypeError):
        item.stats["split_edges"]["val"] = 1  # type: ignore[index]
    with pytest.raises(TypeError):
        CATALOGUE["x"] = item  # type: ignore[index]
    assert hash(item) == hash(entry("tkgl-smallpedia"))


def test_check_stats_is_empty_when_everything_matches() -> None:
    small = entry("tkgl-smallpedia")
    measured = {"num_nodes": np.int64(47_433), "num_edges": 550_376, "num_relations": 283,
                "split_edges": {"train": 387_757, "val": 81_033, "test": 81_586}, "rec": 0.7249,
                "mean_edges_per_timestep": np.float64(4403.008), "not_published": 7}
    assert check_stats(small, measured) == []
    assert check_stats(small, {}) == []


def test_check_stats_names_the_stat_and_both_numbers() -> None:
    small = entry("tkgl-smallpedia")
    problems = check_stats(small, {"num_edges": 1_100_752, "num_nodes": 47_433})
    assert len(problems) == 1
    assert "num_edges" in problems[0] and "550,376" in problems[0] and "1,100,752" in problems[0]
    assert "inverse" in problems[0]  # the catalogue's stats note says why py-tgb's count may be double

    (line,) = check_stats(small, {"split_edges": {"train": 387_757, "val": 81_000}})
    assert "split_edges.val" in line and "81,033" in line and "81,000" in line
    (line,) = check_stats(small, {"rec": 0.73})
    assert "rec" in line and "0.72" in line and "0.73" in line
    (line,) = check_stats(entry("tgbl-wiki"), {"num_nodes": 9_227.0})  # a float is not a count
    assert "num_nodes" in line and "9,227" in line
    (line,) = check_stats(small, {"split_timestamps": 125})
    assert "split_timestamps" in line and "mapping" in line


def test_an_unknown_name_suggests_close_ones() -> None:
    with pytest.raises(DatasetNotFoundError) as caught:
        entry("tgbl-wikii")
    assert caught.value.name == "tgbl-wikii" and "tgbl-wiki" in caught.value.suggestions
    with pytest.raises(DatasetNotFoundError) as caught:
        entry("tkgl_smallpedia")
    assert caught.value.suggestions[0] == "tkgl-smallpedia"
    with pytest.raises(LookupError):
        entry("ogbl-collab")
    assert entry("tgb/tgbl-wiki") is entry("tgbl-wiki")


def test_py_tgb_ships_no_checksum_so_the_import_must_hash_what_it_reads() -> None:
    """The catalogue module docstring's claim: nothing in py-tgb's info.py could verify a zip."""
    text = Path(info.__file__).read_text().lower()
    assert not any(word in text for word in ("md5", "sha256", "sha1", "hashlib", "checksum"))
    assert "sha256" in (catalogue.__doc__ or "")


def test_the_catalogue_is_pure_data() -> None:
    tree = ast.parse(Path(catalogue.__file__).read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    third_party = {m for m in imported if m.split(".")[0] not in sys.stdlib_module_names and m != "__future__"}
    assert third_party == {"tgbhub.errors"}
    assert not imported & {"os", "io", "pathlib", "urllib", "requests", "shutil"}
