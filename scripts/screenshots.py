"""The web page's screenshots in docs/img/: a phone (390x844) and a desktop (1280x1000), each at the
start, mid-game (a tile chosen, its ends on the board), between hands and in the review.

    .venv/bin/python scripts/screenshots.py [--out docs/img]

Runs ``allfives serve --ui``'s application in a thread and headless Chromium through Selenium (the
dev extra; Debian's chromium and chromium-driver), plays a 2-player game to 61 against greedy with
random legal moves (seeded), and keeps each PNG in 64 colours (well under 150 KB).
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIZES = {"phone": (390, 844, True), "desktop": (1280, 1000, False)}


def start_server():
    from allfives.server import BotService, make_server
    from allfives.web.routes import web_routes
    from allfives.web.store import GameStore

    server = make_server(BotService("greedy"), "127.0.0.1", 0, extra_routes=web_routes(GameStore(), 24, 5.0), quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--hide-scrollbars",
                 "--force-prefers-reduced-motion"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def wait(driver, condition, what: str, timeout: float = 60.0):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: condition(d), f"waiting for {what}")


def state_of(driver) -> str:
    return driver.find_element("tag name", "body").get_attribute("data-state") or ""


def save(driver, path: Path) -> None:
    from PIL import Image

    raw = path.with_suffix(".raw.png")
    driver.save_screenshot(str(raw))
    Image.open(raw).convert("RGB").quantize(64).save(path, optimize=True)
    raw.unlink()
    print(f"{path}: {path.stat().st_size // 1024} KB")


def shoot(driver, url: str, size: str, out: Path, seed: int) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    width, height, mobile = SIZES[size]
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})
    driver.get(url + "/?pace=0")
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#opponent option"), "the form")
    Select(driver.find_element(By.ID, "opponent")).select_by_value("greedy")
    save(driver, out / f"web-{size}-start.png")
    driver.find_element(By.ID, "more-options").click()
    target = driver.find_element(By.ID, "rule-target_score")
    target.send_keys("61")
    driver.find_element(By.ID, "new-game").click()
    rng = random.Random(seed)
    moves, shots = 0, set()
    while True:
        wait(driver, lambda d: state_of(d) in ("your-turn", "over", "between-hands"), "your turn")
        state = state_of(driver)
        if state == "over":
            break
        if state == "between-hands":
            if "between" not in shots:
                time.sleep(0.3)
                save(driver, out / f"web-{size}-between-hands.png")
                shots.add("between")
            driver.find_element(By.ID, "next-hand").click()
            continue
        tiles = driver.find_elements(By.CSS_SELECTOR, "#hand .tile:not([disabled])")
        tiles[rng.randrange(len(tiles))].click()
        targets = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#targets .end-target"), "the ends")
        if moves >= 3 and "mid" not in shots and len(targets) > 1:
            driver.execute_script("window.scrollTo(0, 0)")
            save(driver, out / f"web-{size}-mid-game.png")
            shots.add("mid")
        targets[rng.randrange(len(targets))].click()
        moves += 1
    driver.find_element(By.ID, "review-button").click()
    wait(driver, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-review") == "rated", "the ratings")
    worst = driver.find_elements(By.CSS_SELECTOR, "#review-moves li.worst .review-move")
    if worst:
        worst[0].click()
        time.sleep(0.5)
    driver.execute_script("window.scrollTo(0, 0)")
    save(driver, out / f"web-{size}-review.png")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    server = start_server()
    driver = browser()
    try:
        for size in SIZES:
            shoot(driver, server.url, size, args.out, args.seed)
    finally:
        driver.quit()
        server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
