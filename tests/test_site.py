"""`tgbhub site build`: the catalogue as static HTML. Every page parses, every internal link resolves, every value is
escaped, and the pages say what the manifests say (file hashes, lineage, how to import)."""

from __future__ import annotations

import io
import json
import sys
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path

import pytest

from tgbhub import api, cli
from tgbhub.errors import MissingExtraError, RecordError
from tgbhub.manifest import parse_manifest, plain
from tgbhub.site import build_site, render_dataset
from tgbhub.site.builder import TEMPLATE_FILES
from tests.results_repos import REJECTION, graded_files, parquet, write_folder

#: elements with no end tag in HTML
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
SMALL = "t-grab/pdet-2-1"  # the smallest T-GRAB dataset: built into the site's cache so its page gets a figure


class Page(HTMLParser):
    """One page read by Python's own parser: its text, link targets and image sources, and tag-balance problems."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text: list[str] = []
        self.links: list[str] = []
        self.images: list[str] = []
        self.alts: list[str] = []
        self.problems: list[str] = []
        self._open: list[str] = []
        self.feed(text)
        self.close()
        if self._open:
            self.problems.append(f"unclosed {self._open}")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "a" and found.get("href"):
            self.links.append(str(found["href"]))
        if tag == "img":
            self.images.append(str(found.get("src")))
            self.alts.append(str(found.get("alt")))
        if tag not in VOID:
            self._open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self._open or self._open[-1] != tag:
            self.problems.append(f"</{tag}> closes {self._open[-1:] or 'nothing'}")
        else:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    @property
    def content(self) -> str:
        return "".join(self.text)


def read(path: Path) -> Page:
    return Page(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The T-GRAB site, built by the command (figures are drawn by default), over a cache holding only SMALL."""
    cache = tmp_path_factory.mktemp("site-cache")
    api.load_dataset(SMALL, cache_dir=cache, offline=True)
    out = tmp_path_factory.mktemp("site") / "out"
    code = cli.main(["site", "build", str(out), "--family", "t-grab", "--cache-dir", str(cache),
                     "--offline", "--quiet"])
    assert code == 0
    return out


def test_templates_ship_inside_the_package() -> None:
    folder = resources.files("tgbhub.site") / "templates"
    assert all((folder / name).is_file() for name in TEMPLATE_FILES)


def test_index_lists_every_base_dataset_of_the_family(site: Path) -> None:
    index = read(site / "index.html")
    listed = {href.removeprefix("datasets/").removesuffix(".html") for href in index.links
              if href.startswith("datasets/t-grab/") and "~" not in href}
    assert listed == set(api.registry().names("t-grab", derived=False))
    assert len(listed) == 52
    assert "#family-t-grab" in index.links
    # the published variants are listed too, each linking to its page
    assert sum("~" in href for href in index.links) == len(api.registry().names("t-grab")) - 52


def test_a_dataset_page_shows_its_files_hashes_and_a_load_snippet(site: Path) -> None:
    manifest = api.resolve("t-grab/ce-64")
    page = read(site / "datasets/t-grab/ce-64.html")
    for entry in manifest.files:
        assert entry.sha256 in page.content and entry.name in page.content
    assert f'tgbhub.load_dataset("t-grab/ce-64@{manifest.version}")' in page.content
    assert manifest.recipe is not None and manifest.recipe.generator in page.content
    assert manifest.raw["citeAs"] in page.content
    for task in manifest.tasks:
        assert all(f"{c['name']}" in page.content for c in task["submission"]["columns"])
    assert "Leaderboard: no submissions yet" in page.content
    assert "not in the cache" in page.content  # its figure: only datasets the cache holds get one
    # a base dataset lists its published variants, each a page
    assert any("~" in href for href in page.links)


def test_a_cached_dataset_gets_its_figures(site: Path) -> None:
    page = read(site / "datasets/t-grab/pdet-2-1.html")
    kinds = ("activity", "appearance", "traffic", "degree", "novelty")
    assert page.images == [f"pdet-2-1.{kind}.png" for kind in kinds]
    assert len(page.alts) == len(kinds)
    assert all(a.startswith(("Events", "Temporal", "Degree", "Node")) and SMALL in a for a in page.alts)
    for image in page.images:
        assert (site / "datasets/t-grab" / image).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_variant_page_links_its_parent(site: Path) -> None:
    variant = next(n for n in api.registry().names("t-grab") if n.startswith("t-grab/ce-64~"))
    page = read(site / f"datasets/{variant}.html")
    assert "ce-64.html" in page.links
    assert api.registry().derived(variant, api.registry().versions(variant)[-1]).manifest_sha256 in page.content


def test_every_page_parses_and_every_internal_link_resolves(site: Path) -> None:
    pages = sorted(site.rglob("*.html"))
    boards = sum(len(api.with_task_documents(api.resolve(name)).tasks)
                 for name in api.registry().names("t-grab", derived=False))
    assert len(pages) == len(api.registry().names("t-grab")) + 1 + boards
    for path in pages:
        page = read(path)
        assert not page.problems, (path, page.problems[:3])
        for target in (*page.links, *page.images):
            if target.startswith(("http://", "https://", "#")):
                continue
            assert (path.parent / target.partition("#")[0]).resolve().is_file(), (path, target)


def test_tgb_rows_link_to_a_page_saying_how_to_import_them(tmp_path: Path) -> None:
    report = build_site(tmp_path / "tgb", family="tgb", cache_dir=tmp_path / "cache")
    index = read(report.out / "index.html")
    rows = api.catalogue_rows("tgb", cache_dir=tmp_path / "cache")
    assert rows and all(row["status"] == "import required" for row in rows)
    for row in rows:
        href = f"imports/{row['name']}.html"
        assert href in index.links
        page = read(report.out / href)
        assert not page.problems
        assert f"tgbhub import {row['name']}" in page.content


def test_values_from_a_manifest_are_escaped() -> None:
    doc = plain(api.resolve(SMALL).raw)
    doc.update(name="t-grab/<b>&x", description="<script>alert('x')</script> & more")
    html = render_dataset(parse_manifest(doc))
    assert "<script>" not in html and "<b>" not in html
    assert "&lt;script&gt;" in html and "t-grab/&lt;b&gt;&amp;x" in html
    page = Page(html)
    assert not page.problems
    assert "<script>alert('x')</script> & more" in page.content
    assert 'tgbhub.load_dataset("t-grab/<b>&x@1.0.0")' in page.content


def test_a_missing_jinja2_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "jinja2", None)  # what `import jinja2` meets when it is not installed
    with pytest.raises(MissingExtraError, match=r"pip install -e '\.\[site\]'"):
        build_site(tmp_path / "out", family="chaosnet")


def test_the_command_prints_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["site", "build", str(tmp_path / "out"), "--family", "tgb", "--json", "--offline"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["pages"] == len(api.catalogue_rows("tgb")) + 1 and printed["figures"] == []


# --- leaderboard pages from a results repo ----------------------------------------------------------------------

BOARD = ("t-grab/pdet-2-1", "ranking")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """A results repo's files: two baselines graded for real on BOARD (the first flagged) and a rejected row."""
    work = tmp_path_factory.mktemp("graded")
    return graded_files(*BOARD, ("recency", "persistence"), work, work / "cache")


@pytest.fixture(scope="module")
def boards_site(tmp_path_factory: pytest.TempPathFactory, results: dict[str, bytes]) -> Path:
    folder = write_folder(tmp_path_factory.mktemp("results"), results)
    out = tmp_path_factory.mktemp("boards-site") / "out"
    assert cli.main(["site", "build", str(out), "--family", "t-grab", "--results", str(folder), "--offline",
                     "--quiet"]) == 0
    return out


def test_a_leaderboard_page_shows_every_row_and_links_its_records(boards_site: Path,
                                                                  results: dict[str, bytes]) -> None:
    import pyarrow.parquet as pq

    table = pq.read_table(_board_file(results)).to_pylist()
    page = read(boards_site / "leaderboards/t-grab/pdet-2-1/ranking.html")
    assert not page.problems
    text = page.content
    # rows in the table's order: ranked by rank, then the rejected one
    positions = [text.index(row["model"]) for row in table]
    assert positions == sorted(positions)
    assert REJECTION in text and "flagged" in text and "verified" in text
    for row in table:
        if row["record"]:
            href = f"../../../{row['record']}"
            assert href in page.links
            # the record is the grader's own, byte for byte
            assert (boards_site / row["record"]).read_bytes() == results[row["record"]]
            assert f"{row['mean']:.4f}" in text
    assert "../../../datasets/t-grab/pdet-2-1.html" in page.links


def _board_file(results: dict[str, bytes]) -> io.BytesIO:
    return io.BytesIO(results["leaderboards/t-grab/pdet-2-1/ranking.parquet"])


def test_a_dataset_page_links_its_leaderboards_and_an_empty_one_says_so(boards_site: Path) -> None:
    dataset = read(boards_site / "datasets/t-grab/pdet-2-1.html")
    tasks = [str(t["name"]) for t in api.with_task_documents(api.resolve(BOARD[0])).tasks]
    assert "window-forecast" in tasks  # a task of a bundled task document gets its board too
    for task in tasks:
        href = f"../../leaderboards/t-grab/pdet-2-1/{task}.html"
        assert href in dataset.links and (boards_site / "datasets/t-grab" / href).resolve().is_file()
    assert "2 ranked, 1 rejected" in dataset.content and "no submissions yet" in dataset.content
    empty = read(boards_site / "leaderboards/t-grab/pdet-2-1/snapshot-f1.html")
    assert "No submissions yet for t-grab/pdet-2-1 snapshot-f1" in empty.content
    index = read(boards_site / "index.html")
    assert "leaderboards/t-grab/pdet-2-1/ranking.html" in index.links


def test_without_results_every_board_is_empty_and_says_how_to_fill_it(site: Path) -> None:
    page = read(site / "leaderboards/t-grab/pdet-2-1/ranking.html")
    assert "No submissions yet" in page.content and "--results DIR" in page.content
    assert not list(site.glob("records/**/*.json"))


def test_a_board_breaking_the_contract_is_refused(tmp_path: Path, results: dict[str, bytes]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tests.results_repos import SCHEMA

    rows = pq.read_table(_board_file(results)).to_pylist()
    swapped = pa.schema([SCHEMA.field("model"), SCHEMA.field("rank"), *list(SCHEMA)[2:]])  # two columns swapped
    folder = write_folder(tmp_path / "r", {**results, "leaderboards/t-grab/pdet-2-1/ranking.parquet":
                                           parquet(rows, swapped)})
    with pytest.raises(RecordError, match=r"ranking\.parquet breaks the leaderboard contract.*rank int32, model"):
        build_site(tmp_path / "out", family="t-grab", results=folder)
