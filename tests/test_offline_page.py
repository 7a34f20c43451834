"""The offline page (allfives/web/static/offline.html) plays the network bot with no Python behind it.

The static folder (the page, allfives.js, and vendor/: onnxruntime-web and the shipped models that
``npm ci`` copies there) is served by ``python -m http.server`` in a subprocess, a plain file server
that answers nothing else; headless Chromium plays whole games by clicks against the ``fast`` bot
(the shipped network alone), which runs in the browser. The record the page keeps must replay in
the Python engine with the scores the page shows, and every move of the bots must be the one the
Python ``onnx:`` agent picks in that position.

Needs Chromium (as tests/test_web_browser.py: skipped without it unless ``ALLFIVES_REQUIRE_BROWSER``)
and the vendor folder (skipped without it unless ``ALLFIVES_REQUIRE_NODE``).
"""

import os
import random
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from allfives_agents.nets.onnx_agent import OnnxAgent
from allfives_env.engine.events import play_end
from allfives_env.engine.record import replay_positions, replay_record
from allfives_env.engine.tiles import action_id
from test_web_browser import browser, page_state, wait_for  # noqa: F401 (browser: the fixture)

ROOT = Path(__file__).resolve().parent.parent
STATIC = ROOT / "allfives" / "web" / "static"
VENDOR = ["ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm",
          *(f"models/allfives_{n}p.onnx" for n in (2, 3, 4))]
REQUIRE_NODE = os.environ.get("ALLFIVES_REQUIRE_NODE", "") not in ("", "0")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def static_site(tmp_path_factory):
    """The URL of a copy of the static folder served by ``python -m http.server``, and its log."""
    missing = [name for name in VENDOR if not (STATIC / "vendor" / name).is_file()]
    if missing:
        message = f"allfives/web/static/vendor/ lacks {', '.join(missing)} (npm ci copies them)"
        if REQUIRE_NODE:
            pytest.fail(message + "; ALLFIVES_REQUIRE_NODE is set")
        pytest.skip(message)
    for n in (2, 3, 4):
        shipped = (ROOT / "models" / f"allfives_{n}p.onnx").read_bytes()
        assert (STATIC / "vendor" / "models" / f"allfives_{n}p.onnx").read_bytes() == shipped, \
            f"allfives/web/static/vendor/models/allfives_{n}p.onnx is not the shipped model: npm run vendor"
    site = tmp_path_factory.mktemp("site")
    shutil.copytree(STATIC, site, dirs_exist_ok=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = site.parent / "http.log"
    with open(log, "w") as out:
        server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(site)],
                                  stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(url + "/offline.html", timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield url, log
    finally:
        server.terminate()
        server.wait(10)


def play_offline(driver, url: str, players: int, target: int, seed: int, rng: random.Random) -> dict:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    driver.get(url + "/offline.html?pace=0")
    wait_for(driver, lambda d: page_state(d) in ("setup", "error"), what="the page to load the network")
    assert page_state(driver) == "setup", driver.find_element(By.ID, "error").text
    Select(driver.find_element(By.ID, "players")).select_by_value(str(players))
    for field, value in (("target", target), ("seed", seed)):
        element = driver.find_element(By.ID, field)
        element.clear()
        element.send_keys(str(value))
    driver.find_element(By.ID, "start").click()
    moves = 0
    while True:
        wait_for(driver, lambda d: page_state(d) in ("your-turn", "over", "error"), what="your turn or the end")
        state = page_state(driver)
        assert state != "error", driver.find_element(By.ID, "error").text
        if state == "over":
            break
        tiles = driver.find_elements(By.CSS_SELECTOR, "#hand .tile:not([disabled])")
        assert tiles, "your turn with no playable tile"
        rng.choice(tiles).click()
        ends = driver.find_elements(By.CSS_SELECTOR, "#ends .end")
        if ends:
            rng.choice(ends).click()
        moves += 1
        assert moves < 500
    return {
        "record": driver.execute_script("return window.allfivesRecord"),
        "scores": [int(e.text) for e in driver.find_elements(By.CSS_SELECTOR, "#scores .score")],
        "result": driver.find_element(By.ID, "result").text,
        "log": [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#log li")],
        "resources": driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)"),
        "moves": moves,
    }


@pytest.mark.parametrize("players, target", [(2, 100), (4, 80)], ids=["2 players", "4 players in partnerships"])
def test_the_page_plays_the_network_bot_from_static_files(browser, static_site, players, target):  # noqa: F811
    url, log = static_site
    shown = play_offline(browser, url, players, target, seed=players, rng=random.Random(players))
    game = replay_record(shown["record"])  # the engine checks every event, hand result and score
    assert game.complete and max(game.scores) >= target
    assert shown["scores"] == game.scores and "Final scores" in shown["result"]
    assert shown["moves"] > 3 and len(game.hand_logs) >= 1
    assert sum(" draws a tile" in line or line.startswith("you draw ") for line in shown["log"]) == sum(
        e["type"] == "draw" for h in shown["record"]["hands"] for e in h["events"])
    # every bot move is the shipped network's, as the Python agent plays it
    agent = OnnxAgent(ROOT / "models" / f"allfives_{players}p.onnx")
    bot_moves = 0
    for _, placement, view, event in replay_positions(game):
        if view.seat != 0:
            assert action_id(event[2], play_end(event[3], placement == 0)) == agent.act(view)
            bot_moves += 1
    assert bot_moves > 10
    # nothing came from anywhere but the static server: the page, its scripts, onnxruntime-web, the model
    assert shown["resources"] and all(r.startswith(url + "/") for r in shown["resources"]), shown["resources"]
    requested = {line.split('"GET ')[1].split(" ")[0] for line in log.read_text().splitlines() if '"GET ' in line}
    assert f"/vendor/models/allfives_{players}p.onnx" in requested and "/vendor/ort-wasm-simd-threaded.wasm" in requested
    assert not any(path.startswith(("/api", "/move")) for path in requested)
