"""`playpen view` in a real browser: headless Chromium (Debian's chromium and chromium-driver) driven by
selenium. The list filters, an episode opens, the side-by-side view and a training run's plot render; each
test writes a screenshot for a person to look at (the folder is printed; PLAYPEN_SCREENSHOTS chooses it)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.view.conftest import RUN
from tests.view.test_server import server  # noqa: F401  (the running `playpen view`)

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1400,1000"]


@pytest.fixture(scope="module")
def browser():
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
    if not CHROMIUM or not CHROMEDRIVER:
        pytest.skip("no Chromium here: the browser tests need Debian's chromium and chromium-driver "
                    "(apt-get install chromium chromium-driver)")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("PLAYPEN_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots of the viewer: {folder}")
    return folder


def screenshot(driver, folder: Path, name: str) -> Path:
    """The whole page (the window grown to the page's height, up to 3000 px)."""
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1400, min(max(height + 140, 700), 3000))
    path = folder / f"{name}.png"
    assert driver.save_screenshot(str(path)) and path.stat().st_size > 10_000
    driver.set_window_size(1400, 1000)
    return path


def follow(driver, element) -> None:
    """Click a link or button and wait for the page it leads to (elements found earlier would be the old
    page's)."""
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    element.click()
    WebDriverWait(driver, 30).until(expected_conditions.staleness_of(element))
    WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.readyState") == "complete")


def css(driver, selector: str):
    return driver.find_elements("css selector", selector)


def test_the_list_filters(browser, server, shots):  # noqa: F811
    from selenium.webdriver.support.ui import Select

    browser.get(server)
    assert len(css(browser, "tr.episode-row")) == 62
    Select(css(browser, "#filter-outcome")[0]).select_by_value("aborted")
    Select(css(browser, "#sort")[0]).select_by_value("length")
    follow(browser, css(browser, "#apply")[0])
    outcomes = [row.get_attribute("data-outcome") for row in css(browser, "tr.episode-row")]
    assert outcomes == ["aborted"] * 12 and "outcome=aborted" in browser.current_url
    assert "12 of 62 episodes" in css(browser, "#count")[0].text
    Select(css(browser, "#filter-outcome")[0]).select_by_value("")
    Select(css(browser, "#filter-game")[0]).select_by_value("wordle")
    follow(browser, css(browser, "#apply")[0])
    assert {row.text.split()[0] for row in css(browser, "tr.episode-row")} == {"wordle"}
    browser.get(server + "?sort=reward")
    screenshot(browser, shots, "list")


def test_an_episode_opens_as_a_dialogue(browser, server, shots):  # noqa: F811
    browser.get(server + "?model=human--expert")
    follow(browser, css(browser, "tr.episode-row a")[0])
    heads = [h.text.split("\n")[0] for h in css(browser, ".colhead")]
    assert heads == ["Player 1", "Game master", "Player 2"]
    refused = css(browser, ".event.answer.problem")
    assert refused and refused[0].is_displayed() and "nonsense" in refused[0].text
    assert css(browser, "#scores")[0].is_displayed()
    screenshot(browser, shots, "episode-aborted")
    browser.get(server + "?game=wordle&model=expert")
    follow(browser, css(browser, "tr.episode-row a")[0])
    answers = css(browser, ".event.answer")
    assert answers and "guess:" in answers[-1].text and not css(browser, ".event.problem")
    screenshot(browser, shots, "episode")


def test_the_same_instance_side_by_side(browser, server, shots):  # noqa: F811
    browser.get(server + "?model=human--expert")
    follow(browser, css(browser, "tr.episode-row a")[0])
    follow(browser, css(browser, "a.compare-link")[0])
    sides = css(browser, "section.side")
    assert len(sides) == 2 and all(side.is_displayed() for side in sides)
    left, right = (side.find_element("css selector", "h2").text for side in sides)
    assert left.startswith("human--expert") and right.startswith("expert")
    assert sides[0].location["y"] == sides[1].location["y"]  # next to each other, not one below the other
    screenshot(browser, shots, "side-by-side")


def test_a_training_runs_reward_plot_links_to_a_steps_episodes(browser, server, shots):  # noqa: F811
    browser.get(server)
    follow(browser, css(browser, "a.run-link")[0])
    charts = css(browser, "svg.chart")
    assert len(charts) == 2 and all(c.size["width"] > 300 and c.size["height"] > 150 for c in charts)
    points = css(browser, "svg.reward a.point circle")
    assert len(points) == 3
    heights = [float(p.get_attribute("cy")) for p in points]
    assert heights[0] > heights[1] > heights[2]  # reward 0, 0.5, 1: each point higher on the page
    screenshot(browser, shots, "reward-plot")
    follow(browser, points[1])
    assert "step=1" in browser.current_url and f"{RUN}" in browser.current_url.replace("%2F", "/")
    assert sorted(r.get_attribute("data-outcome") for r in css(browser, "tr.episode-row")) == ["aborted"] * 4 + [
        "success"] * 4
