"""The catalogue site as a person sees it: `tgbhub hub serve` over a small local hub (a T-GRAB subset, a ChaosNet
mini, a results repo), opened in headless Chromium (Debian's chromium and chromium-driver, through Selenium). Each
page renders, logs no console error, every link and image on it resolves, and a screenshot is saved.

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

from tests.results_repos import commit_to_hub, graded_files
from tgbhub import api, cli, plot

ROOT = Path(__file__).resolve().parent.parent
TGRAB = ("pdet-2-1", "ce-4")
CHAOSNET = "chaosnet/mini-k0.5-rho0.1-n8"


def _browser() -> tuple[str, str]:
    """The paths of chromium and chromedriver, or a failure that says how to install them."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if chromium is None or driver is None:
        pytest.fail("the browser test needs Debian's chromium and chromium-driver (missing: "
                    f"{', '.join(n for n, p in (('chromium', chromium), ('chromedriver', driver)) if p is None)}); "
                    "scripts/test installs them, or run: apt-get install -y chromium chromium-driver")
    return chromium, driver


@pytest.fixture(scope="module")
def hub_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`tgbhub hub serve` over a hub with t-grab (TGRAB), a ChaosNet mini and a results repo, serving the site built
    with figures and the results' leaderboards."""
    from tgbhub.publish import parse_target, publish

    work = tmp_path_factory.mktemp("browser-hub")
    root, cache = work / "hub", work / "cache"
    publish("t-grab", "1.0.0", parse_target(f"git:{root}"), datasets=[f"t-grab/{s}" for s in TGRAB], cache_dir=cache)
    publish("chaosnet", "1.1.0", parse_target(f"git:{root}"), datasets=[CHAOSNET], cache_dir=cache)
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
    variant = next(n for n in api.registry().names("t-grab") if n.startswith("t-grab/ce-4~"))
    tgb = next(row["name"] for row in api.catalogue_rows("tgb") if row["status"] == "import required")
    return {"catalogue": ("", "tgbhub catalogue"),
            "dataset-tgrab": ("datasets/t-grab/pdet-2-1.html", "t-grab/pdet-2-1"),
            "dataset-chaosnet": (f"datasets/{CHAOSNET}.html", CHAOSNET),
            "variant": (f"datasets/{variant}.html", variant),
            "import-tgb": (f"imports/{tgb}.html", tgb),
            "leaderboard": ("leaderboards/t-grab/pdet-2-1/ranking.html", "t-grab/pdet-2-1: ranking leaderboard")}


@pytest.mark.parametrize("label", list(_pages()))
def test_page_renders_without_console_errors_and_every_link_resolves(label: str, hub_url: str, browser: Any,
                                                                      tmp_path: Path) -> None:
    import requests
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
    if label in ("dataset-tgrab", "dataset-chaosnet"):  # every figure that applies, drawn from the data, with alt text
        assert len(images) == len(plot.kinds_for(api.resolve(heading))) > 0
        assert all(image.get_attribute("alt") for image in images)
    if label == "leaderboard":
        rows = browser.find_elements(By.CSS_SELECTOR, "#leaderboard tr")
        assert [r.get_attribute("class") for r in rows[1:]] == ["ranked", "ranked", "rejected"]
    assert browser.save_screenshot(str(tmp_path / f"{label}.png"))
    assert (tmp_path / f"{label}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_catalogue_filters_by_family_and_task(hub_url: str, browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get_log("browser")
    browser.get(f"{hub_url}/site/")
    count = browser.find_element(By.ID, "filter-count")
    everything = int(count.text.split()[0])
    Select(browser.find_element(By.ID, "filter-family")).select_by_visible_text("chaosnet")
    chaosnet = int(count.text.split()[0])
    assert 0 < chaosnet < everything
    assert not browser.find_element(By.CSS_SELECTOR, 'section[data-family="t-grab"]').is_displayed()
    Select(browser.find_element(By.ID, "filter-family")).select_by_visible_text("t-grab")
    Select(browser.find_element(By.ID, "filter-task")).select_by_visible_text("window-forecast")
    shown = [row for row in browser.find_elements(By.CSS_SELECTOR, 'section[data-family="t-grab"] tr.dataset')
             if row.is_displayed()]
    assert len(shown) == int(count.text.split()[0]) > 0
    assert all("window-forecast" in row.get_attribute("data-tasks").split() for row in shown)
    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
