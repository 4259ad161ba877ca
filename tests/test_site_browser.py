"""The catalogue site as a person sees it: `tgbhub hub serve` over a small local hub (a T-GRAB subset, a ChaosNet
mini, a results repo with a trained model's board), with a cache that also holds a published T-GRAB variant and an
imported TGB-format dataset, opened in headless Chromium (Debian's chromium and chromium-driver, through Selenium).
Each page renders, logs no console error, every link and image on it resolves, a dataset page shows its figures and
the first rows of its files, a board page its chart, the catalogue's filter narrows its list, and a screenshot of
each page is saved into the test's folder (its path recorded as the test's ``screenshot`` property).

scripts/test installs chromium and chromium-driver when they are missing; without them this test fails (it does not
skip): the browser check is part of the acceptance.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.results_repos import commit_to_hub, graded_files
from tgbhub import api, cli, plot

ROOT = Path(__file__).resolve().parent.parent
TGRAB = ("pdet-2-1", "ce-4")
CHAOSNET = "chaosnet/mini-k0.5-rho0.1-n8"
TGB = "tgbl-wiki"  # imported from a small release in TGB's own format (tests/tgb_formats.py)
TRAINED = "dlinear"  # trained for real (one epoch, a few batches) onto CHAOSNET's rollout board


def _browser() -> tuple[str, str]:
    """The paths of chromium and chromedriver, or a failure that says how to install them."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if chromium is None or driver is None:
        pytest.fail("the browser test needs Debian's chromium and chromium-driver (missing: "
                    f"{', '.join(n for n, p in (('chromium', chromium), ('chromedriver', driver)) if p is None)}); "
                    "scripts/test installs them, or run: apt-get install -y chromium chromium-driver")
    return chromium, driver


def _variant() -> str:
    return next(n for n in api.registry().names("t-grab") if n.startswith("t-grab/ce-4~"))


def _import_tgb(work: Path, cache: Path) -> None:
    """Import a small tgbl-wiki release written in TGB's format into ``cache``, checked against its own counts."""
    import numpy as np

    from tests import tgb_formats as formats
    from tgbhub.local.imports import import_tgb

    files = formats.write_tgbl(work / "tgb-files", TGB, n_edges=600, seed=0)
    truth = files.truth
    # TGB's loader shifts item ids past the users', so users and items are distinct nodes
    stats = {"num_nodes": int(len(np.unique(truth["src"])) + len(np.unique(truth["dst"]))),
             "num_edges": int(len(truth["src"])), "edge_feat_dim": int(truth["edge_feat"].shape[1])}
    import_tgb(TGB, formats.zip_dataset(files, work / "tgb-zip"), cache_dir=cache, expected_stats=stats)


def _trained_board(hub: str, cache: Path) -> None:
    """CHAOSNET's rollout board graded by the hub's grader: a model trained for real at tiny size (through the
    trainers, as `tgbhub leaderboard seed --trained` does) beside a heuristic baseline."""
    from tgbhub.results.grader import update
    from tgbhub.results.leaderboards import seed_baselines, seed_trained

    seed_trained(hub, datasets=[CHAOSNET], models=[TRAINED], seeds=[42], epochs=1, limit_batches=2, device="cpu",
                 cache_dir=cache, offline=True)
    seed_baselines(hub, family="chaosnet", datasets=[CHAOSNET], models=["persistence"], cache_dir=cache,
                   offline=True)
    report = update(hub, cache_dir=cache, offline=True)
    assert len(report.graded) == 2 and not report.rejected


@pytest.fixture(scope="module")
def hub_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`tgbhub hub serve` over a hub with t-grab (TGRAB), a ChaosNet mini and a results repo, serving the site built
    with figures, previews and the results' leaderboards, from a cache that also holds a variant and a TGB import."""
    from tgbhub.publish import parse_target, publish

    work = tmp_path_factory.mktemp("browser-hub")
    root, cache = work / "hub", work / "cache"
    publish("t-grab", "1.0.0", parse_target(f"git:{root}"), datasets=[f"t-grab/{s}" for s in TGRAB], cache_dir=cache)
    publish("chaosnet", "1.1.0", parse_target(f"git:{root}"), datasets=[CHAOSNET], cache_dir=cache)
    api.load_dataset(_variant(), cache_dir=cache, offline=True)  # derived from its cached parent
    _import_tgb(work, cache)
    _trained_board(f"git:{root}", cache)
    results = commit_to_hub(root, graded_files("t-grab/pdet-2-1", "ranking", ("recency", "persistence"),
                                               work / "graded", cache))
    site = work / "site"
    assert cli.main(["site", "build", str(site), "--with-figures", "--results", str(results), "--cache-dir",
                     str(cache), "--offline", "--quiet"]) == 0
    process = subprocess.Popen([sys.executable, "-m", "tgbhub.cli", "hub", "serve", str(root), "--port", "0",
                                "--site", str(site), "--state-dir", str(work / "state")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        first = process.stdout.readline()  # type: ignore[union-attr]
        url = re.search(r"at (http://127\.0\.0\.1:\d+)", first)
        assert url, first + process.stderr.read()  # type: ignore[union-attr]
        yield url.group(1)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver_path = _browser()
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    # root in a container: no sandbox; no GPU; /dev/shm may be small
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,1000", "--hide-scrollbars"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    try:
        yield driver
    finally:
        driver.quit()


def _pages() -> dict[str, tuple[str, str]]:
    """``label -> (path under the site, text its <h1> starts with)``."""
    variant = _variant()
    tgb = next(row["name"] for row in api.catalogue_rows("tgb") if row["status"] == "import required"
               and row["name"] != f"tgb/{TGB}")
    return {"catalogue": ("", "tgbhub catalogue"),
            "family": ("families/t-grab.html", "t-grab"),
            "dataset-tgrab": ("datasets/t-grab/pdet-2-1.html", "t-grab/pdet-2-1"),
            "dataset-chaosnet": (f"datasets/{CHAOSNET}.html", CHAOSNET),
            "variant": (f"datasets/{variant}.html", variant),
            "dataset-tgb": (f"datasets/tgb/{TGB}.html", f"tgb/{TGB}"),
            "import-tgb": (f"imports/{tgb}.html", tgb),
            "leaderboards": ("leaderboards/index.html", "tgbhub leaderboards"),
            "leaderboard": ("leaderboards/t-grab/pdet-2-1/ranking.html", "t-grab/pdet-2-1: ranking leaderboard"),
            "leaderboard-trained": (f"leaderboards/{CHAOSNET}/rollout.html", f"{CHAOSNET}: rollout leaderboard")}


def _screenshot(browser: Any, folder: Path, label: str, record_property: Any) -> None:
    """Save the page as ``folder/label.png`` and record its path as the test's ``screenshot`` property."""
    path = folder / f"{label}.png"
    assert browser.save_screenshot(str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    record_property("screenshot", str(path))
    print(f"screenshot: {path}")


@pytest.mark.parametrize("label", list(_pages()))
def test_page_renders_without_console_errors_and_every_link_resolves(label: str, hub_url: str, browser: Any,
                                                                      tmp_path: Path, record_property: Any) -> None:
    from selenium.webdriver.common.by import By

    path, heading = _pages()[label]
    browser.get_log("browser")  # drop what earlier pages logged
    browser.get(f"{hub_url}/" if label == "catalogue" else f"{hub_url}/site/{path}")
    assert browser.current_url == f"{hub_url}/site/{path}"
    assert browser.title and browser.find_element(By.TAG_NAME, "h1").text.startswith(heading)
    severe = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert not severe, severe
    images = browser.find_elements(By.TAG_NAME, "img")
    for image in images:  # drawn, not a broken-image box
        assert browser.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", image)
    targets = {e.get_attribute("href") for e in browser.find_elements(By.CSS_SELECTOR, "a[href]")}
    targets |= {image.get_attribute("src") for image in images}
    local = sorted(t.partition("#")[0] for t in targets if t.startswith(hub_url))
    assert local, "a page with no link back into the site"
    for target in sorted(set(local)):
        answer = requests.get(target, timeout=30)
        assert answer.status_code < 400, (target, answer.status_code)
    # no network here: a link leaving the hub is only checked to be one a browser can follow
    assert all(t.startswith(("https://", "http://")) for t in targets - set(local) if not t.startswith(hub_url))
    if label.startswith("dataset-") or label == "variant":
        # every figure that applies, drawn from the data, with alt text; the first rows of every file
        assert images and all(image.get_attribute("alt") for image in images)
        if label != "dataset-tgb":  # an import's manifest is the cache's, not the catalogue's
            manifest = api.resolve(heading) if label != "variant" else None
            assert manifest is None or len(images) == len(plot.kinds_for(manifest))
        previews = browser.find_elements(By.CSS_SELECTOR, "table.preview")
        assert previews and all(p.is_displayed() for p in previews)
        for table in previews:
            assert len(table.find_elements(By.TAG_NAME, "tr")) > 1  # a header and rows
        example = browser.find_element(By.ID, "example-submission")
        assert example.get_attribute("href").endswith(".example.parquet")
        browser.execute_script("arguments[0].scrollIntoView()", browser.find_element(By.ID, "preview"))
        _screenshot(browser, tmp_path, f"{label}-preview", record_property)
        browser.execute_script("window.scrollTo(0, 0)")
    if label == "leaderboard":
        rows = browser.find_elements(By.CSS_SELECTOR, "#leaderboard tr")
        assert [r.get_attribute("class") for r in rows[1:]] == ["ranked", "ranked", "rejected"]
    if label.startswith("leaderboard-"):  # a chart of the ranked rows, and the trained model's row with its record
        chart = browser.find_element(By.CSS_SELECTOR, "#chart svg")
        assert chart.is_displayed() and chart.size["width"] > 100 and chart.size["height"] > 30
        ranked = browser.find_elements(By.CSS_SELECTOR, "#leaderboard tr.ranked")
        assert len(browser.find_elements(By.CSS_SELECTOR, "#chart svg rect")) == len(ranked) == 2
        trained = next(r for r in ranked if r.find_elements(By.TAG_NAME, "td")[1].text == TRAINED)
        assert "verified" in trained.text
        record = trained.find_element(By.LINK_TEXT, "record").get_attribute("href")
        assert requests.get(record, timeout=30).json()["model"]["name"] == TRAINED
    _screenshot(browser, tmp_path, label, record_property)


def test_the_catalogue_filter_narrows_the_list_as_one_types(hub_url: str, browser: Any, tmp_path: Path,
                                                             record_property: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get_log("browser")
    browser.get(f"{hub_url}/site/")
    families = browser.find_elements(By.CSS_SELECTOR, "#family-table tr.family")
    browser.find_element(By.ID, "search").send_keys("chaos")
    shown = [row for row in families if row.is_displayed()]
    assert len(shown) == 1 < len(families) and shown[0].text.startswith("chaosnet")
    browser.get(f"{hub_url}/site/families/t-grab.html")
    count = browser.find_element(By.ID, "filter-count")
    everything = int(count.text.split()[0])
    browser.find_element(By.ID, "search").send_keys("ce-")
    typed = [row for row in browser.find_elements(By.CSS_SELECTOR, "tr.dataset") if row.is_displayed()]
    assert 0 < len(typed) == int(count.text.split()[0]) < everything
    assert all(row.text.startswith("t-grab/ce-") for row in typed)
    _screenshot(browser, tmp_path, "family-filtered", record_property)
    Select(browser.find_element(By.ID, "filter-task")).select_by_visible_text("window-forecast")
    shown = [row for row in browser.find_elements(By.CSS_SELECTOR, "tr.dataset") if row.is_displayed()]
    assert len(shown) == int(count.text.split()[0]) > 0
    assert all("window-forecast" in row.get_attribute("data-tasks").split() for row in shown)
    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
