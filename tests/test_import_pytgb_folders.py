"""`tgbhub import tgb ... --from` py-tgb's own folders: one dataset's folder as py-tgb's download leaves it (the zip
under py-tgb's name, the files it extracted, its processed caches), and the whole ``datasets/`` root in one command
(generators/tgb/release.py's PytgbLayout, generators/tgb/importer.py, tgbhub/local/imports.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests import tgb_formats as formats
from tgbhub.cli import main
from tgbhub.errors import FetchError, GenerationError, InvalidNameError
from tgbhub.local.imports import import_every, import_tgb

WIKI, TRADE = "tgbl-wiki", "tgbn-trade"


def _data_files(cache: Path, name: str) -> dict[str, bytes]:
    """The bytes of every data file an import installed (not its manifest, lock or completion marker)."""
    entry = cache / "tgb" / name
    return {str(p.relative_to(entry)): p.read_bytes() for p in sorted(entry.rglob("*.parquet*")) if p.is_file()}


@pytest.fixture(scope="module")
def releases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict[str, int]]]:
    """Two small releases in TGB's formats: each dataset's zip (upstream's name) and the statistics it measures."""
    folder = tmp_path_factory.mktemp("releases")
    wiki = formats.write_tgbl(folder / "files" / WIKI, WIKI, n_edges=300, seed=0)
    trade = formats.write_tgbn(folder / "files" / TRADE, TRADE, n_edges=400, seed=0, n_nations=30, n_years=4)
    return {files.name: (formats.zip_dataset(files, folder / "zips"),
                         {"num_edges": len(files.files["edgelist"].read_text().splitlines()) - 1})
            for files in (wiki, trade)}


def _pytgb_folder(root: Path, zipped: Path, name: str, *, keep_zip: bool = True, extract: bool = True) -> Path:
    """``root/<name with _>/`` as py-tgb's ``download()`` leaves it: the zip saved as ``<name>.zip``, extracted
    beside it; plus a processed cache of py-tgb's (``ml_<name>.pkl``), which the import must not read."""
    folder = formats.unzip_like_pytgb(zipped, root, name) if extract else root / formats.dir_name(name)
    folder.mkdir(parents=True, exist_ok=True)
    if keep_zip:
        shutil.copy(zipped, folder / f"{name}.zip")
    (folder / f"ml_{name}.pkl").write_bytes(b"not TGB's release: py-tgb's processed cache")
    return folder


def _stats_file(tmp_path: Path, stats: dict[str, object]) -> str:
    path = tmp_path / "stats.json"
    path.write_text(json.dumps(stats))
    return str(path)


def test_a_pytgb_dataset_folder_imports_the_same_bytes_as_the_zip(releases, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The zip under py-tgb's name, or only the extracted files, or both (the zip is read): the installed files are
    byte for byte those of importing the release zip; extracted files record the sha256 of their sha256sum listing."""
    zipped, stats = releases[WIKI]
    given = _stats_file(tmp_path, stats)
    import_tgb(WIKI, zipped, cache_dir=tmp_path / "from-zip", expected_stats=stats)
    expected = _data_files(tmp_path / "from-zip", WIKI)
    assert "2.1.0/edges.parquet" in expected and "2.1.0/negatives-test.parquet" in expected
    folder = _pytgb_folder(tmp_path / "datasets", zipped, WIKI)
    zip_only = _pytgb_folder(tmp_path / "zip-only", zipped, WIKI, extract=False)
    for case, source in (("both", folder), ("zip-only", zip_only)):
        cache = tmp_path / case
        assert main(["--cache-dir", str(cache), "import", "tgb", WIKI, "--from", str(source), "--expected-stats",
                     given, "--json"]) == 0
        card = json.loads(capsys.readouterr().out)
        assert card["imported_from"] == f"{WIKI}.zip", case  # py-tgb's name for the zip it downloaded
        assert _data_files(cache, WIKI) == expected, case
    (folder / f"{WIKI}.zip").unlink()
    for case, source in (("extracted", folder), ("root", tmp_path / "datasets")):  # the folder, or py-tgb's root
        cache = tmp_path / case
        assert main(["--cache-dir", str(cache), "import", f"tgb/{WIKI}", "--from", str(source), "--expected-stats",
                     given, "--json"]) == 0
        card = json.loads(capsys.readouterr().out)
        assert card["imported_from"] == "tgbl-wiki-v2.zip (extracted)", case
        assert _data_files(cache, WIKI) == expected, case
    members = sorted(p.name for p in folder.glob(f"{WIKI}_*"))
    listing = subprocess.run(["sha256sum", *members], cwd=folder, check=True, capture_output=True).stdout
    digest = subprocess.run(["sha256sum"], input=listing, check=True, capture_output=True).stdout.split()[0]
    assert card["zip_sha256"] == digest.decode()


def test_a_datasets_root_imports_every_dataset_in_one_command(releases, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """`tgbhub import tgb --from ROOT`: one line per dataset (tgbl-wiki as its zip, tgbn-trade as extracted files),
    a summary; py-tgb's folders of scripts (shipped in its package) are not datasets."""
    root = tmp_path / "datasets"
    _pytgb_folder(root, releases[WIKI][0], WIKI, extract=False)
    _pytgb_folder(root, releases[TRADE][0], TRADE, keep_zip=False)
    scripts = root / "tgbl_enron"
    scripts.mkdir()
    (scripts / "tgbl-enron_neg_generator.py").write_text("# py-tgb's script, no release\n")
    given = _stats_file(tmp_path, {WIKI: releases[WIKI][1], f"tgb/{TRADE}": releases[TRADE][1]})
    cache = tmp_path / "cache"
    assert main(["--cache-dir", str(cache), "import", "tgb", "--from", str(root), "--expected-stats", given]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines == [f"tgb/{WIKI}@2.1.0: imported from {root / 'tgbl_wiki'}: {WIKI}.zip",
                     f"tgb/{TRADE}@1.1.0: imported from {root / 'tgbn_trade'}: tgbn-trade.zip (extracted)",
                     f"2 of 2 dataset(s) in {root} imported"]
    assert _data_files(cache, WIKI) and _data_files(cache, TRADE)


def test_what_is_not_a_release_is_refused_naming_the_folder_and_what_was_expected(
        releases, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    zipped, stats = releases[WIKI]
    root = tmp_path / "datasets"
    caches = root / "tgbl_wiki"
    caches.mkdir(parents=True)
    for cache in (f"ml_{WIKI}.pkl", f"ml_{WIKI}_edge.pkl"):
        (caches / cache).write_bytes(b"py-tgb's processed cache")
    with pytest.raises(FetchError, match=r"only py-tgb's processed caches \(ml_tgbl-wiki.pkl, ml_tgbl-wiki_edge.pkl\)"
                       r".*Download https://\S+/tgbl-wiki-v2.zip into .*tgbl_wiki"):
        import_tgb(WIKI, caches, cache_dir=tmp_path / "cache", expected_stats=stats)
    (caches / "tgbl-wiki_edgelist_v2.csv").write_text("user_id,item_id\n")
    with pytest.raises(FetchError, match="holds tgbl-wiki_edgelist_v2.csv but not tgbl-wiki_val_ns_v2.pkl, "
                                         "tgbl-wiki_test_ns_v2.pkl"):
        import_tgb(WIKI, root, cache_dir=tmp_path / "cache", expected_stats=stats)
    extracted = formats.unzip_like_pytgb(zipped, tmp_path / "truncated", WIKI)
    (extracted / f"{WIKI}.zip").write_bytes(zipped.read_bytes()[:-100])  # an interrupted download, kept
    with pytest.raises(GenerationError, match="not a readable zip .* move tgbl-wiki.zip out of .*tgbl_wiki"):
        import_tgb(WIKI, extracted, cache_dir=tmp_path / "cache", expected_stats=stats)
    given = _stats_file(tmp_path, {WIKI: stats})
    assert main(["--cache-dir", str(tmp_path / "cache"), "import", "tgb", "--from", str(root),
                 "--expected-stats", given]) == 1  # found, refused: one line, nothing installed
    out = capsys.readouterr().out
    assert f"tgb/{WIKI}: refused, nothing installed: {caches}" in out and "0 of 1 dataset(s)" in out
    assert not formats.installed(tmp_path / "cache" / "tgb")
    empty = tmp_path / "empty"
    (empty / "tgbl_enron").mkdir(parents=True)  # a folder of py-tgb's scripts holds no dataset
    assert main(["--cache-dir", str(tmp_path / "cache"), "import", "tgb", "--from", str(empty)]) == 2
    err = capsys.readouterr().err
    assert str(empty) in err and "it holds none: expected py-tgb's datasets/ folder" in err
    assert "tgbl-wiki.zip" in err and "tgbl-wiki_edgelist_v2.csv" in err
    with pytest.raises(InvalidNameError, match=r"`tgbhub import tgb --from DATASETS_FOLDER`"):
        import_every("tgb", None)
    with pytest.raises(InvalidNameError, match="names tgbn-trade, which .* does not hold"):
        import_every("tgb", root, cache_dir=tmp_path / "cache", expected_stats={TRADE: {"num_edges": 1}})
