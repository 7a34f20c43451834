"""The web page played in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``) driven by Selenium clicks whole games, 2 players and 4 in partnerships, and
the scores on the page must equal the engine's replay of the record the page downloads.

Without Chromium the tests skip, unless ``ALLFIVES_REQUIRE_BROWSER`` is set (``.ci/run`` sets it
and installs the browser): then they fail. ``ALLFIVES_SCREENSHOT=PATH`` also keeps the screenshot
there, in 64 colours (scripts/screenshots.py takes the docs' pictures).
"""

import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from allfives_env.engine.record import replay_file
from web_helpers import web_server

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
REQUIRE_BROWSER = os.environ.get("ALLFIVES_REQUIRE_BROWSER", "") not in ("", "0")

pytestmark = pytest.mark.slow


def _missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (the dev extra)"
    for path in (CHROMIUM, CHROMEDRIVER):
        if not shutil.which(path):
            return f"{path} is missing (apt-get install chromium chromium-driver)"
    return None


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    missing = _missing()
    if missing:
        if REQUIRE_BROWSER:
            pytest.fail(f"the browser tests need Chromium: {missing}; ALLFIVES_REQUIRE_BROWSER is set")
        pytest.skip(missing)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    downloads = tmp_path_factory.mktemp("downloads")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1200,1000"):
        options.add_argument(flag)
    options.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                              "download.prompt_for_download": False})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
    driver.downloads = downloads
    try:
        yield driver
    finally:
        driver.quit()


def wait_for(driver, condition, timeout=60.0, what="the page"):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.02).until(lambda d: condition(d), f"waiting for {what}")


def page_state(driver) -> str:
    return driver.find_element("tag name", "body").get_attribute("data-state") or ""


def set_field(driver, element_id: str, value: str) -> None:
    field = driver.find_element("id", element_id)
    field.clear()
    field.send_keys(value)


def play_by_clicks(driver, url: str, players: int, target: int, seed: int, screenshot: Path | None) -> dict:
    """One whole game through the page: random legal moves by clicks (every third by the keyboard),
    one hint; returns what the page shows at the end and how many moves were made."""
    from selenium.webdriver.common.by import By

    rng = random.Random(seed)
    from selenium.webdriver.support.ui import Select

    driver.get(url + "/?pace=0")
    wait_for(driver, lambda d: d.find_elements(By.ID, "rule-num_players"), what="the rules form")
    driver.find_element(By.ID, "more-options").click()  # the rules are behind the disclosure
    Select(driver.find_element(By.ID, "rule-num_players")).select_by_value(str(players))
    set_field(driver, "rule-target_score", str(target))
    wait_for(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#bots select")) == players - 1, what="the seats")
    driver.find_element(By.ID, "new-game").click()
    moves = hints = 0
    while True:
        wait_for(driver, lambda d: page_state(d) in ("your-turn", "over", "between-hands"), what="your turn or the end")
        if page_state(driver) == "over":
            break
        if page_state(driver) == "between-hands":  # the hand's summary waits for a click
            driver.find_element(By.ID, "next-hand").click()
            continue
        if hints == 0 and moves == 2:  # a few moves in, so the picture shows a layout
            driver.find_element(By.ID, "hint-button").click()
            wait_for(driver, lambda d: d.find_elements(By.ID, "hint-move"), what="the hint")
            assert "would play" in driver.find_element(By.ID, "hint-move").text
            assert driver.find_elements(By.CSS_SELECTOR, "#analysis tr.suggested")
            wait_for(driver, lambda d: page_state(d) == "your-turn", what="your turn after the hint")
            if screenshot is not None:
                driver.execute_script("window.scrollTo(0, 0)")
                driver.save_screenshot(str(screenshot))
            hints += 1
        tiles = driver.find_elements(By.CSS_SELECTOR, "#hand .tile:not([disabled])")
        assert tiles, "your turn with no playable tile: the server lists only decisions with a legal move"
        pick = rng.randrange(len(tiles))
        by_keyboard = moves % 3 == 2
        if by_keyboard:
            driver.find_element(By.TAG_NAME, "body").send_keys(str(pick + 1))
        else:
            tiles[pick].click()
        ends = driver.find_elements(By.CSS_SELECTOR, "#targets .end")  # the ends on the board
        if ends:
            k = rng.randrange(len(ends))
            if by_keyboard:
                driver.find_element(By.TAG_NAME, "body").send_keys(str(k + 1))
            else:
                ends[k].click()
        moves += 1
        assert moves < 500
    scores = [int(e.text) for e in driver.find_elements(By.CSS_SELECTOR, "#scores .score")]
    log = [e.get_attribute("textContent") for e in driver.find_elements(By.CSS_SELECTOR, "#log li")]  # a closed <details> too
    for old in driver.downloads.glob("*"):
        old.unlink()
    driver.find_element(By.ID, "download").click()
    # Chromium writes NAME.crdownload and renames it NAME.jsonl when complete
    record = wait_for(driver, lambda d: next((p for p in d.downloads.glob("*.jsonl")), None), what="the record download")
    return {"scores": scores, "log": log, "result": driver.find_element(By.ID, "result").text, "record": record,
            "moves": moves, "error": driver.find_element(By.ID, "error").text}


@pytest.mark.parametrize("players, target", [(2, 61), (4, 61)], ids=["2 players", "4 players in partnerships"])
def test_whole_games_by_clicks_score_as_the_engine(browser, tmp_path, players, target):
    screenshot = tmp_path / "web.png"
    with web_server() as (server, store):
        shown = play_by_clicks(browser, server.url, players, target, seed=players, screenshot=screenshot)
    assert shown["error"] == ""
    assert shown["moves"] > 3
    assert screenshot.stat().st_size > 10_000  # kept: the page with a hint, mid-game
    if os.environ.get("ALLFIVES_SCREENSHOT") and players == 2:
        from PIL import Image  # 64 colours: a third of the size, the same to the eye

        Image.open(screenshot).convert("RGB").quantize(64).save(os.environ["ALLFIVES_SCREENSHOT"], optimize=True)
    [(name, game)] = list(replay_file(shown["record"]))  # the engine checks every event again
    assert game.over and shown["scores"] == game.scores
    assert len(shown["scores"]) == (2 if players == 4 else players)
    assert max(game.scores) >= target and "Final scores" in shown["result"]
    record = json.loads(Path(shown["record"]).read_text())
    assert record["format"] == "allfives-record/1" and record["players"][0] == "human"
    # the forced draws and passes the engine carried out, each shown in the page's log
    events = [e for hand in record["hands"] for e in hand["events"]]
    assert sum(bool(re.search(r" draws? (a tile|\d-\d)$", line)) for line in shown["log"]) == sum(e["type"] == "draw" for e in events)
    assert sum(bool(re.search(r" pass(es)? \(nothing fits", line)) for line in shown["log"]) == sum(e["type"] == "pass" for e in events)
    out = subprocess.run([sys.executable, "-m", "allfives", "replay", str(shown["record"]), "--json"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"valid": True, "games": 1, "hands": len(game.hand_logs)}
