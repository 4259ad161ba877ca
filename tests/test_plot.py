"""tgbhub.plot: every figure kind draws from real data (a T-GRAB dataset, a ChaosNet mini instance, a derived variant,
a TGB import), each with its alt text; the site draws them by default, reuses them on a rebuild and names them on its
pages; a figure never builds data; a missing matplotlib is a warning for the site and an error when figures are
asked for."""

from __future__ import annotations

import argparse
import sys
import warnings
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

import tgbhub
import tgbhub.plot
from tgbhub import cli
from tgbhub.cli import plot as plot_command
from tgbhub.data import TemporalGraphDataset
from tgbhub.errors import MissingExtraError, SourceUnavailableError, UnsupportedTaskError
from tgbhub.site import build_site
from tgbhub.site.figures import STORE, FigureWarning

BASE = "t-grab/pdet-2-1"
VARIANT = "t-grab/pdet-2-16~shuffle-s1"  # a published variant: the site gives it a page
CHAOSNET = "chaosnet/mini-k0.5-rho0.1-n8"
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache holding BASE, VARIANT (and so its parent) and CHAOSNET, built by the real generators."""
    root = tmp_path_factory.mktemp("plot-cache")
    for name in (BASE, VARIANT, CHAOSNET):
        tgbhub.load_dataset(name, cache_dir=root, offline=True)
    return root


def _graph(name: str, cache: Path) -> TemporalGraphDataset:
    return cast(TemporalGraphDataset, tgbhub.load_dataset(name, cache_dir=cache, offline=True))


def _check(drawings: list[tgbhub.plot.Drawn], ds: Any, folder: Path) -> None:
    assert [d.kind for d in drawings] == list(tgbhub.plot.kinds_for(ds.manifest))
    for drawn in drawings:
        assert ds.name in drawn.alt and drawn.alt.endswith(".") and len(drawn.alt) > 60, drawn.alt
        path = tgbhub.plot.save(drawn.figure, folder / f"{drawn.kind}.png")
        assert path.read_bytes()[:8] == PNG and path.stat().st_size > 5_000


def test_every_temporal_graph_figure_draws(cache: Path, tmp_path: Path) -> None:
    ds = _graph(BASE, cache)
    assert tgbhub.plot.kinds_for(ds.manifest) == ("activity", "appearance", "traffic", "degree", "novelty")
    _check(tgbhub.plot.draw_all(ds), ds, tmp_path)
    # the per-kind functions return a Figure and save it where asked
    figure = tgbhub.plot.degree(ds, path=tmp_path / "paper" / "degree.pdf")
    assert figure.axes and (tmp_path / "paper" / "degree.pdf").read_bytes()[:4] == b"%PDF"
    with pytest.raises(UnsupportedTaskError, match="'beside-parent' figure does not apply.*its kinds: activity"):
        tgbhub.plot.beside_parent(ds)
    with pytest.raises(UnsupportedTaskError, match="'spacetime' figure does not apply.*its kinds: activity"):
        tgbhub.plot.spacetime(ds)  # type: ignore[arg-type]


def test_the_novelty_numbers_are_the_sets_train_has_seen(cache: Path) -> None:
    from tgbhub.plot.temporal import novelty_table

    ds = _graph(BASE, cache)
    lo, hi = ds.splits["train"]
    seen_nodes = set(ds.src[lo:hi].tolist()) | set(ds.dst[lo:hi].tolist())
    seen_edges = set(zip(ds.src[lo:hi].tolist(), ds.dst[lo:hi].tolist(), strict=True))
    for row in novelty_table(ds):
        start, stop = ds.splits[row.split]
        pairs = list(zip(ds.src[start:stop].tolist(), ds.dst[start:stop].tolist(), strict=True))
        nodes = {n for pair in pairs for n in pair}
        assert row.nodes == pytest.approx(len(nodes & seen_nodes) / len(nodes))
        assert row.edges == pytest.approx(len(set(pairs) & seen_edges) / len(set(pairs)))
        assert row.events == pytest.approx(sum(p in seen_edges for p in pairs) / len(pairs))


def test_every_trajectory_figure_draws(cache: Path, tmp_path: Path) -> None:
    ds = tgbhub.load_dataset(CHAOSNET, cache_dir=cache, offline=True)
    assert tgbhub.plot.kinds_for(ds.manifest) == ("spacetime", "lyapunov")  # the manifest declares indicators
    drawings = tgbhub.plot.draw_all(ds)
    _check(drawings, ds, tmp_path)
    assert "chaotic" in drawings[1].alt or "regular" in drawings[1].alt or "sticky" in drawings[1].alt


def test_a_derived_variant_draws_beside_its_parent(cache: Path, tmp_path: Path) -> None:
    ds = tgbhub.load_dataset(VARIANT, cache_dir=cache, offline=True)
    assert tgbhub.plot.kinds_for(ds.manifest)[-1] == "beside-parent"
    drawings = tgbhub.plot.draw_all(ds)
    _check(drawings, ds, tmp_path)
    assert "t-grab/pdet-2-16 " in drawings[-1].alt and "shuffle" in drawings[-1].alt
    recorded = ds.manifest.stats["distance_to_parent_test"]  # the distances the variant changed, named on the figure
    assert f"ATD {recorded['atd']:.3g}, ACD {recorded['acd']:.3g}" in drawings[-1].alt


def test_a_tgb_import_draws_on_continuous_time(tmp_path: Path) -> None:
    from tests import tgb_formats as formats
    from tgbhub.local.imports import import_tgb

    files = formats.write_tgbl(tmp_path / "files", "tgbl-wiki", n_edges=600, seed=0)
    zipped = formats.zip_dataset(files, tmp_path / "zips")
    truth = files.truth
    src = np.asarray(truth["src"])
    shifted = np.asarray(truth["dst"]) + int(src.max()) + 1  # JODIE's layout: destinations after the sources
    stats = {"num_nodes": int(len(np.union1d(src, shifted))), "num_edges": int(len(truth["src"])),
             "edge_feat_dim": int(np.asarray(truth["edge_feat"]).shape[1])}
    import_tgb("tgbl-wiki", zipped, cache_dir=tmp_path / "cache", expected_stats=stats)
    ds = tgbhub.load_dataset("tgb/tgbl-wiki", cache_dir=tmp_path / "cache", offline=True)
    drawings = tgbhub.plot.draw_all(ds)
    _check(drawings, ds, tmp_path / "out")
    assert "time bin" in drawings[0].alt  # continuous time: binned, never one bar per timestamp


def test_a_missing_matplotlib_names_the_extra(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ds = _graph(BASE, cache)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # what `import matplotlib` meets when it is not installed
    with pytest.raises(MissingExtraError, match=r"plot\.activity needs matplotlib.*pip install -e '\.\[plot\]'"):
        tgbhub.plot.activity(ds)


# --- the site: figures by default, cached by content digest ----------------------------------------------------


class Images(HTMLParser):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.images: list[dict[str, str | None]] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "img":
            self.images.append(dict(attrs))


def _images(page: Path) -> list[dict[str, str | None]]:
    return Images(page.read_text(encoding="utf-8")).images


def test_the_site_draws_every_figure_by_default_and_reuses_them(cache: Path, tmp_path: Path) -> None:
    first = build_site(tmp_path / "one", family="t-grab", cache_dir=cache)
    assert set(first.figures) == {BASE, "t-grab/pdet-2-16", VARIANT} and not first.figures_skipped
    assert first.figures_drawn == 5 + 5 + 6 and first.figures_reused == 0
    stored = sorted((cache / STORE).rglob("*.png"))
    assert len(stored) == 16
    times = {path: path.stat().st_mtime_ns for path in stored}
    for name, kinds in ((BASE, 5), (VARIANT, 6)):
        page = tmp_path / "one" / "datasets" / f"{name}.html"
        images = _images(page)
        assert len(images) == kinds
        for image in images:
            assert (page.parent / str(image["src"])).read_bytes()[:8] == PNG
            assert name in str(image["alt"]) and len(str(image["alt"])) > 60
    assert "not in the cache" in (tmp_path / "one" / "datasets" / "t-grab" / "ce-4.html").read_text()
    # a rebuild (another folder, as `tgbhub hub serve` does) draws nothing: the cache's figures are copied
    again = build_site(tmp_path / "two", family="t-grab", cache_dir=cache)
    assert (again.figures_drawn, again.figures_reused) == (0, 16)
    assert {path: path.stat().st_mtime_ns for path in stored} == times
    assert ((tmp_path / "two" / "datasets" / "t-grab" / "pdet-2-1.degree.png").read_bytes()
            == (tmp_path / "one" / "datasets" / "t-grab" / "pdet-2-1.degree.png").read_bytes())


def test_a_new_drawing_version_draws_again_and_no_figures_draws_none(cache: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    off = build_site(tmp_path / "off", family="chaosnet", cache_dir=cache, figures=False)
    assert off.figures == () and off.figures_drawn == 0
    assert "built with --no-figures" in (tmp_path / "off" / "datasets" / f"{CHAOSNET}.html").read_text()
    monkeypatch.setattr(tgbhub.plot, "DRAWING_VERSION", tgbhub.plot.DRAWING_VERSION + 1000)
    drawn = build_site(tmp_path / "new", family="chaosnet", cache_dir=cache)
    assert drawn.figures == (CHAOSNET,) and drawn.figures_drawn == 2
    assert [i["src"] for i in _images(tmp_path / "new" / "datasets" / f"{CHAOSNET}.html")] == [
        f"{CHAOSNET.split('/')[1]}.spacetime.png", f"{CHAOSNET.split('/')[1]}.lyapunov.png"]


def test_worker_processes_draw_the_same_figures(tmp_path: Path) -> None:
    for name in (BASE, CHAOSNET):
        tgbhub.load_dataset(name, cache_dir=tmp_path / "cache", offline=True)
    report = build_site(tmp_path / "site", cache_dir=tmp_path / "cache", figure_workers=2)
    assert report.figures == (CHAOSNET, BASE) and report.figures_drawn == 7 and not report.figures_skipped
    serial = build_site(tmp_path / "again", cache_dir=tmp_path / "cache", figure_workers=1)
    assert (serial.figures_drawn, serial.figures_reused) == (0, 7)


def test_the_command_leaves_figures_out_with_no_figures(cache: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    import json

    assert cli.main(["site", "build", str(tmp_path / "s"), "--family", "chaosnet", "--no-figures", "--json",
                     "--cache-dir", str(cache), "--offline"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["figures"] == [] and printed["figures_drawn"] == 0 and not list((tmp_path / "s").rglob("*.png"))


def test_the_site_never_builds_for_a_figure(tmp_path: Path) -> None:
    report = build_site(tmp_path / "site", family="chaosnet", cache_dir=tmp_path / "empty")
    assert report.figures == () and not list((tmp_path / "empty").glob("chaosnet/*/*/COMPLETE"))


def test_without_matplotlib_the_site_warns_once_and_an_explicit_request_fails(
        cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(tgbhub.plot, "DRAWING_VERSION", tgbhub.plot.DRAWING_VERSION + 2000)  # nothing stored yet
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = build_site(tmp_path / "a", family="t-grab", cache_dir=cache)
    assert [str(w.message)[:19] for w in caught if w.category is FigureWarning] == ["no figures drawn: t"]
    assert set(report.figures_skipped) == {BASE, "t-grab/pdet-2-16", VARIANT} and report.figures == ()
    with pytest.raises(MissingExtraError, match=r"pip install -e '\.\[plot\]'"):
        build_site(tmp_path / "b", family="t-grab", cache_dir=cache, require_figures=True)
    # the command: the default build warns on stderr (stdout stays the report); --with-figures fails in one line
    args = ["site", "build", "--family", "chaosnet", "--cache-dir", str(cache), "--offline"]
    assert cli.main([*args, str(tmp_path / "c")]) == 0
    out, err = capsys.readouterr()
    assert "needs matplotlib" not in out and err.count("tgbhub: warning: no figures drawn") == 1, err
    assert cli.main([*args, str(tmp_path / "d"), "--with-figures"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tgbhub: error:") and ".[plot]" in lines[0], lines


# --- the plot command ------------------------------------------------------------------------------------------


def _plot(argv: list[str], cache: Path) -> int:
    """`tgbhub plot ARGV` through the command's own parser and handler, the global options as the app sets them."""
    parser = argparse.ArgumentParser(prog="tgbhub")
    plot_command.register(parser.add_subparsers())
    args = parser.parse_args(["plot", *argv])
    args.cache_dir, args.json = str(cache), getattr(args, "json", False)
    try:
        return int(args.run(args))
    except tgbhub.TgbhubError as exc:
        print(f"tgbhub: error: {exc}", file=sys.stderr)
        return 2


def test_the_plot_command_draws_files_from_the_cache_only(cache: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert _plot([VARIANT, "--out", str(tmp_path / "all")], cache) == 0
    written = sorted(p.name for p in (tmp_path / "all").iterdir())
    assert written == sorted(f"pdet-2-16~shuffle-s1.{k}.png" for k in tgbhub.plot.kinds_for(
        tgbhub.load_dataset(VARIANT, cache_dir=cache, offline=True).manifest))
    assert _plot([BASE, "--kind", "degree", "--format", "svg", "--out", str(tmp_path / "one")], cache) == 0
    assert [p.name for p in (tmp_path / "one").iterdir()] == ["pdet-2-1.degree.svg"]
    capsys.readouterr()
    # not in the cache: an error naming `tgbhub get`, and nothing built
    assert _plot(["t-grab/ce-4", "--out", str(tmp_path / "x")], cache) == 2
    assert "tgbhub get t-grab/ce-4" in capsys.readouterr().err
    assert not (cache / "t-grab" / "ce-4").exists()
    assert _plot(["t-grab/pdet-2-1~shuffle-s3", "--out", str(tmp_path / "x")], cache) == 2
    assert "tgbhub get t-grab/pdet-2-1~shuffle-s3" in capsys.readouterr().err
    assert not (cache / "t-grab" / "pdet-2-1~shuffle-s3").exists()


def test_the_cache_only_loader_refuses_a_missing_dataset(tmp_path: Path) -> None:
    from tgbhub.site.figures import load_from_cache

    with pytest.raises(SourceUnavailableError, match=r"tgbhub get t-grab/ce-4@1\.0\.0"):
        load_from_cache(tgbhub.resolve("t-grab/ce-4"), tmp_path)
    assert not list(tmp_path.rglob("COMPLETE"))


# --- scale: a 10M-row graph is drawn on its memory-mapped columns -------------------------------------------------


@pytest.mark.slow
def test_ten_million_rows_draw_within_a_gibibyte_above_the_columns(tmp_path: Path) -> None:
    from scripts.bench_site import measure_large

    result = measure_large(10_000_000, tmp_path)
    assert result["peak_bytes"] < 2**30, result


def test_a_million_rows_draw_within_a_tenth_of_the_budget(tmp_path: Path) -> None:
    """The default suite's check of the same scaling: 1M rows, numpy's peak allocation under 128 MiB (the 10M-row
    test and scripts/bench_site.py measure the full size)."""
    from scripts.bench_site import measure_large

    result = measure_large(1_000_000, tmp_path)
    assert result["peak_bytes"] < 128 * 2**20, result
