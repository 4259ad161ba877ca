"""`tgbhub site build`: the catalogue as static HTML. Every page parses, every internal link resolves, every value is
escaped, and the pages say what the manifests say (file hashes, lineage, how to import)."""

from __future__ import annotations

import io
import json
import re
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
def site_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache holding only SMALL."""
    cache = tmp_path_factory.mktemp("site-cache")
    api.load_dataset(SMALL, cache_dir=cache, offline=True)
    return cache


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, site_cache: Path) -> Path:
    """The T-GRAB site, built by the command (figures and previews are on by default), over a cache holding only
    SMALL."""
    cache = site_cache
    out = tmp_path_factory.mktemp("site") / "out"
    code = cli.main(["site", "build", str(out), "--family", "t-grab", "--cache-dir", str(cache),
                     "--offline", "--quiet"])
    assert code == 0
    return out


def test_templates_ship_inside_the_package() -> None:
    folder = resources.files("tgbhub.site") / "templates"
    assert all((folder / name).is_file() for name in TEMPLATE_FILES)


def test_the_family_page_lists_every_base_dataset_and_counts_its_variants(site: Path) -> None:
    index = read(site / "index.html")
    assert "families/t-grab.html" in index.links
    assert not [href for href in index.links if href.startswith("datasets/")]  # the index holds families only
    family = read(site / "families/t-grab.html")
    listed = {href.removeprefix("../datasets/").removesuffix(".html") for href in family.links
              if href.startswith("../datasets/t-grab/") and "#" not in href}
    assert listed == set(api.registry().names("t-grab", derived=False))
    assert len(listed) == 52
    # the published variants are listed on their parent's page, and counted on the family page
    variants = len(api.registry().names("t-grab")) - 52
    assert f"{variants:,} published variants" in family.content
    counted = [href for href in family.links if href.endswith("#variants")]
    assert counted and all((site / "families" / href.partition("#")[0]).resolve().is_file() for href in counted)
    on_parents = sum(sum("~" in href for href in read(site / "families" / href.partition("#")[0]).links)
                     for href in counted)
    assert on_parents == variants


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
    # the index, the family page and the page of every board with submissions, beside the datasets' pages
    assert len(pages) == len(api.registry().names("t-grab")) + 3 + boards
    for path in pages:
        page = read(path)
        assert not page.problems, (path, page.problems[:3])
        for target in (*page.links, *page.images):
            if target.startswith(("http://", "https://", "#")):
                continue
            assert (path.parent / target.partition("#")[0]).resolve().is_file(), (path, target)


def test_tgb_rows_link_to_a_page_saying_how_to_import_them(tmp_path: Path) -> None:
    report = build_site(tmp_path / "tgb", family="tgb", cache_dir=tmp_path / "cache")
    family = read(report.out / "families/tgb.html")
    rows = api.catalogue_rows("tgb", cache_dir=tmp_path / "cache")
    assert rows and all(row["status"] == "import required" for row in rows)
    for row in rows:
        href = f"imports/{row['name']}.html"
        assert f"../{href}" in family.links
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
    assert printed["pages"] == len(api.catalogue_rows("tgb")) + 3 and printed["figures"] == []


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
    assert "leaderboards/index.html" in index.links and "1 boards with submissions" in index.content
    boards = read(boards_site / "leaderboards/index.html")
    assert "../leaderboards/t-grab/pdet-2-1/ranking.html" in boards.links


def test_a_leaderboard_page_charts_its_ranked_rows(boards_site: Path, results: dict[str, bytes]) -> None:
    import pyarrow.parquet as pq

    html = (boards_site / "leaderboards/t-grab/pdet-2-1/ranking.html").read_text(encoding="utf-8")
    ranked = [row for row in pq.read_table(_board_file(results)).to_pylist() if row["status"] == "ranked"]
    chart = html[html.index("<svg"):html.index("</svg>")]
    assert chart.count("<rect") == len(ranked) == 2
    for row in ranked:  # each bar carries its model and value; the longer bar is the larger mean
        assert f"{row['model']}: mrr {row['mean']:.4f}" in chart
    widths = [float(w) for w in re.findall(r'<rect [^>]*width="([0-9.]+)"', chart)]
    assert widths[0] >= widths[1] > 0 and ranked[0]["mean"] >= ranked[1]["mean"]
    assert "higher is better" in html and not Page(html).problems


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


# --- previews, example submissions, the catalogue's weight ------------------------------------------------------


def _tables(html: str, marker: str) -> list[list[list[str]]]:
    """The cells of every ``<table`` whose start tag holds ``marker``: a list of rows, each a list of cell texts."""
    found = []
    for table in re.findall(rf"<table[^>]*{marker}[^>]*>(.*?)</table>", html, flags=re.S):
        rows = re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)
        found.append([[re.sub(r"<small>.*?</small>", "", c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row,
                                                                                  flags=re.S)] for row in rows])
    return found


def test_a_cached_dataset_page_previews_every_file_and_one_query(site: Path, site_cache: Path) -> None:
    import pyarrow.parquet as pq

    from tgbhub import cache as cache_module

    manifest = api.resolve(SMALL)
    folder = cache_module.version_dir(site_cache, manifest)
    html = (site / "datasets/t-grab/pdet-2-1.html").read_text(encoding="utf-8")
    tables = _tables(html, 'class="preview"')
    files = [entry.name for entry in manifest.files]
    assert len(tables) == len(files) + 1  # a table per file, then the query's
    for name, table in zip(files, tables[:-1], strict=True):
        head = pq.read_table(folder / name).slice(0, 20).to_pylist()
        assert table[0] == list(head[0]) and len(table) == 1 + 20
        assert table[1][:3] == [str(head[0][c]) for c in ("t", "src", "dst")]
        assert f"rows 1 to 20 of {pq.read_metadata(folder / name).num_rows:,}" in html
    first = pq.read_table(folder / "negatives-test.parquet").slice(0, 1).to_pylist()[0]
    assert tables[-1][1] == [str(first[c]) for c in ("t", "src", "dst", "count")]
    assert f"negatives: <code>{', '.join(str(n) for n in first['negatives'])}</code>" in html
    for task in api.with_task_documents(manifest).tasks:  # each task as its document declares it
        assert html.count(f"&#34;name&#34;: &#34;{task['name']}&#34;") >= 1
    assert "t-grab/pdet-2-1/tasks/window-forecast@1.0.0" in html


def test_the_example_submission_is_valid_and_graded_as_the_page_says(site: Path, site_cache: Path) -> None:
    manifest = api.resolve(SMALL)
    page = read(site / "datasets/t-grab/pdet-2-1.html")
    task = str(manifest.task["name"])
    href = f"pdet-2-1.{task}.example.parquet"
    assert href in page.links
    graded = api.grade(SMALL, site / "datasets/t-grab" / href, cache_dir=site_cache, offline=True)
    assert graded.result["task"] == task and graded.result["split"] == "test"
    assert f"graded by the reference evaluator: f1 {graded.metrics['f1']:.4f}" in " ".join(page.content.split())
    # kept in the cache by content digest, the file a rebuild copies instead of running the baseline again
    stored = list((site_cache / ".examples").rglob("*.parquet"))
    assert len(stored) == 1 and stored[0].read_bytes() == (site / "datasets/t-grab" / href).read_bytes()


def test_a_dataset_not_in_the_cache_says_how_to_preview_it(site: Path) -> None:
    page = read(site / "datasets/t-grab/ce-64.html")
    assert "No preview: t-grab/ce-64 is not in the cache" in page.content
    assert not list((site / "datasets/t-grab").glob("ce-64*.parquet"))


def test_an_hdf5_file_previews_a_slice_of_one_trajectory(shared_cache: Path) -> None:
    import h5py

    from tgbhub import cache as cache_module
    from tgbhub.site.preview import file_previews

    name = "chaosnet/mini-k0.5-rho0.1-n8"
    manifest = api.load_dataset(name, cache_dir=shared_cache, offline=True).manifest
    folder = cache_module.version_dir(shared_cache, manifest)
    (preview,) = file_previews(manifest.files, folder)
    first = manifest.files[0].columns[0]
    with h5py.File(folder / manifest.files[0].name, "r") as handle:
        expected = handle[first][0, :20, :16]
        arrays = {key for key in handle if isinstance(handle[key], h5py.Dataset)}
    assert len(preview.rows) == 20 and preview.columns[1] == f"{first}[0, :, 0]"
    assert [float(v) for v in preview.rows[3][1:]] == pytest.approx(expected[3].tolist(), rel=1e-5)
    assert {key for key, _ in preview.schema} == arrays and preview.shown.startswith("trajectory 0:")


def test_values_read_from_data_files_are_escaped(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tgbhub.manifest import FileEntry
    from tgbhub.site.builder import render
    from tgbhub.site.preview import file_previews

    evil = "<script>alert('x')</script>"
    pq.write_table(pa.table({"<b>col": [evil, "a&b"]}), tmp_path / "x.parquet")
    entry = FileEntry("x.parquet", "0" * 64, 1, "application/x-parquet", None, ("<b>col",))
    html = render("preview.html", {"preview": {"files": file_previews([entry], tmp_path), "query": None,
                                               "note": "", "example": None}})
    assert "<script>" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in html and "&lt;b&gt;col" in html and "a&amp;b" in html
    assert not Page(html).problems


def test_the_catalogue_index_stays_small_with_the_whole_catalogue(tmp_path: Path) -> None:
    report = build_site(tmp_path / "all", figures=False, previews=False, cache_dir=tmp_path / "cache")
    rows = api.catalogue_rows(cache_dir=tmp_path / "cache")
    html = (report.out / "index.html").read_text(encoding="utf-8")
    assert len(html.encode()) < 40_000 and len(rows) > 150
    index = Page(html)
    families = sorted({row["name"].split("/", 1)[0] for row in rows})
    assert [href for href in index.links if href.startswith("families/")] == [f"families/{f}.html" for f in families]
    assert f"{len(rows):,} datasets and published variants in {len(families)} benchmark families" in index.content
    for family in families:  # every family page lists its own datasets only, and stays small too
        page = report.out / f"families/{family}.html"
        assert page.stat().st_size < 200_000, (family, page.stat().st_size)
        listed = {href for href in read(page).links if href.startswith(("../datasets/", "../imports/"))
                  and "#" not in href}
        assert listed and all(f"/{family}/" in href for href in listed)


def test_a_chart_draws_ranked_rows_with_whiskers_and_escapes_model_names() -> None:
    from tgbhub.site.builder import render
    from tgbhub.site.charts import board_chart

    rows = [{"rank": 1, "model": "<script>x</script>", "metric": "vpt", "mean": 2.0, "std": 0.5},
            {"rank": 2, "model": "b", "metric": "vpt", "mean": -1.0, "std": None},
            {"rank": None, "model": "rejected", "metric": "vpt", "mean": None, "std": None}]
    chart = board_chart(rows, higher_is_better=True)
    assert chart is not None and [bar["model"] for bar in chart["bars"]] == ["<script>x</script>", "b"]
    first, second = chart["bars"]
    assert first["low"] < first["end"] < first["high"] and second["low"] is None
    # bars grow from zero: the positive one to the right of it, the negative one to the left
    assert first["x"] == chart["zero"] and second["x"] + second["w"] == pytest.approx(chart["zero"])
    assert any(tick["label"] == "0" for tick in chart["ticks"])
    html = render("chart.html", {"chart": chart})
    assert "<script>" not in html and "&lt;script&gt;x&lt;/script&gt;" in html and not Page(html).problems
    assert board_chart(rows[2:]) is None  # nothing ranked, nothing drawn
