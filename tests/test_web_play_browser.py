"""The web page as people play it, in headless Chromium at a phone's size (390x844) and a desktop's
(1280x1000): whole games played by tapping a tile of the hand and then an end on the board; the
layout measured (no sideways scroll, the board at least 90% of a phone's width, the hand and the
scores drawn once, two columns on a desktop); the hand summary between hands; a reload resumes
the game; a takeback; resigning; the review's ratings against the server's own ``POST /analyze``
of the same positions; an uploaded record's review; and axe-core (from npm, vendored by
scripts/vendor_web.mjs) finding no serious or critical accessibility violation.

Skips without Chromium unless ``ALLFIVES_REQUIRE_BROWSER`` is set, like test_web_browser.py.
"""

import json
import math
import random
from pathlib import Path

import pytest

from test_web import call
from test_web_browser import browser, page_state, wait_for  # noqa: F401 (the fixture)
from web_helpers import web_server

ROOT = Path(__file__).resolve().parent.parent
AXE = [ROOT / "allfives" / "web" / "static" / "vendor" / "axe.min.js", ROOT / "node_modules" / "axe-core" / "axe.min.js"]

pytestmark = pytest.mark.slow


def size(driver, width: int, height: int, mobile: bool) -> None:
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})


def by(driver, css: str):
    return driver.find_elements("css selector", css)


def layout_facts(driver) -> dict:
    return driver.execute_script("""
        const box = (id) => { const e = document.getElementById(id); const r = e.getBoundingClientRect();
                              return {left: r.left, right: r.right, top: r.top, width: r.width}; };
        return {scroll: document.documentElement.scrollWidth, inner: window.innerWidth,
                board: box("board").width, table: box("table"), side: box("side"),
                scores: document.querySelectorAll(".score").length, sides: state.sides.length,
                tiles: document.querySelectorAll("[data-tile]").length - document.querySelectorAll("#board [data-tile]").length,
                hand: state.hand.length, log_open: document.getElementById("log-panel").open,
                board_text: document.getElementById("board").textContent};""")


def axe_violations(driver) -> list:
    """The serious and critical violations axe-core finds on the page as it is now."""
    path = next((p for p in AXE if p.exists()), None)
    assert path is not None, "axe-core is missing: npm ci (package.json) puts it in node_modules and static/vendor"
    if not driver.execute_script("return !!window.axe"):
        driver.execute_script(path.read_text())
    result = driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        axe.run(document, {resultTypes: ["violations"]}).then((r) => done(r.violations.map(
          (v) => ({id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3)}))));""")
    return [v for v in result if v["impact"] in ("serious", "critical")]


def start(driver, url: str, players: int, target: int, opponent: str = "greedy") -> None:
    from selenium.webdriver.support.ui import Select

    driver.get(url + "/?pace=0")
    wait_for(driver, lambda d: by(d, "#opponent option"), what="the form")
    Select(driver.find_element("id", "opponent")).select_by_value(opponent)
    driver.find_element("id", "more-options").click()
    Select(driver.find_element("id", "rule-num_players")).select_by_value(str(players))
    target_field = driver.find_element("id", "rule-target_score")
    target_field.clear()
    target_field.send_keys(str(target))
    driver.find_element("id", "new-game").click()
    wait_for(driver, lambda d: "game=" in d.current_url, what="the game in the address")


def tap_a_move(driver, rng) -> None:
    """A random playable tile of the hand, then a random end target on the board."""
    tiles = by(driver, "#hand .tile:not([disabled])")
    assert tiles, "your turn with no playable tile"
    tiles[rng.randrange(len(tiles))].click()
    targets = wait_for(driver, lambda d: by(d, "#targets .end-target"), what="the ends on the board")
    assert not overlapping_targets(driver), "two end buttons overlap: a tap would take the one on top"
    targets[rng.randrange(len(targets))].click()


def overlapping_targets(driver) -> list:
    """The pairs of end buttons on the board whose boxes intersect (none should)."""
    return driver.execute_script("""
        const r = [...document.querySelectorAll('#targets .end-target')].map((b) => b.getBoundingClientRect());
        const pairs = [];
        for (let i = 0; i < r.length; i++) for (let j = i + 1; j < r.length; j++)
          if (r[i].left < r[j].right && r[j].left < r[i].right && r[i].top < r[j].bottom && r[j].top < r[i].bottom) pairs.push([i, j]);
        return pairs;""")


def play_to_the_end(driver, rng, on_turn=None) -> dict:
    """Taps moves until the game is over; ``on_turn(moves)`` runs at each of your turns first."""
    seen = {"moves": 0, "summaries": 0}
    while True:
        wait_for(driver, lambda d: page_state(d) in ("your-turn", "over", "between-hands"), what="your turn")
        state = page_state(driver)
        if state == "over":
            return seen
        if state == "between-hands":
            rows = by(driver, "#summary-sides tr")
            assert len(rows) == 1 + driver.execute_script("return state.sides.length")
            assert driver.find_element("id", "summary").get_attribute("open") is not None
            seen["summaries"] += 1
            driver.find_element("id", "next-hand").click()
            continue
        if on_turn is not None:
            on_turn(seen["moves"])
        if page_state(driver) != "your-turn":
            continue
        tap_a_move(driver, rng)
        seen["moves"] += 1
        assert seen["moves"] < 400


def test_a_phone_game_by_taps_on_the_board(browser, tmp_path):
    driver = browser
    size(driver, 390, 844, True)
    rng = random.Random(7)
    with web_server(analyze_seconds=60.0) as (server, _):
        start(driver, server.url, 2, 61)
        checked = {}

        def on_turn(moves):
            if moves == 1 and "layout" not in checked:
                facts = layout_facts(driver)
                assert facts["scroll"] <= facts["inner"] == 390, facts
                assert facts["board"] >= 0.9 * facts["inner"], facts
                assert facts["tiles"] == facts["hand"], "the hand is drawn once"
                assert facts["scores"] == facts["sides"] and "scores" not in facts["board_text"], "scores shown once"
                assert facts["log_open"] is False, "the log is folded away on a phone"
                checked["layout"] = True
            if moves == 2 and "takeback" not in checked:
                hand = len(by(driver, "#hand .tile"))
                driver.find_element("id", "takeback").click()
                wait_for(driver, lambda d: len(by(d, "#hand .tile")) == hand + 1 and page_state(d) == "your-turn",
                         what="the move taken back")
                checked["takeback"] = True
            if moves == 3 and "reload" not in checked:
                url, scores = driver.current_url, [e.text for e in by(driver, "#scores .score")]
                driver.refresh()
                wait_for(driver, lambda d: page_state(d) == "your-turn", what="the game resumed")
                assert driver.current_url == url and [e.text for e in by(driver, "#scores .score")] == scores
                by(driver, "#hand .tile:not([disabled])")[0].click()
                wait_for(driver, lambda d: by(d, "#targets .end-target"), what="the ends")
                bad = axe_violations(driver)
                assert bad == [], bad
                driver.find_element("tag name", "body").send_keys("\ue00c")  # Esc: choose again
                checked["reload"] = True

        seen = play_to_the_end(driver, rng, on_turn)
        assert set(checked) == {"layout", "takeback", "reload"}
        assert seen["moves"] > 3 and driver.find_element("id", "error").text == ""
        assert "Final scores" in driver.find_element("id", "result").text
        game_id = driver.execute_script("return state.id")
        facts = layout_facts(driver)
        assert facts["scroll"] <= facts["inner"]
        # the review: every move; your moves rated, as the server's /analyze rates the same positions
        driver.find_element("id", "review-button").click()
        wait_for(driver, lambda d: d.find_element("tag name", "body").get_attribute("data-review") == "rated",
                 timeout=90, what="the ratings")
        ratings = driver.execute_script("return review.ratings")
        moves = driver.execute_script("return review.moves")
        mine = [m for m in moves if m["yours"] and m["choices"] > 1]
        assert mine and sorted(int(k) for k in ratings) == [m["index"] for m in mine]
        for m in mine[:6]:
            r = ratings[str(m["index"])]
            _, pos, _ = call(server, "GET", f"/api/games/{game_id}/review/{m['index']}")
            status, analysis, _ = call(server, "POST", "/analyze", dict(pos["position"], worlds=r["analysis"]["worlds"], seed=0))
            assert status == 200 and analysis["moves"] == r["analysis"]["moves"]
            values = {(tuple(x["tile"]), x["end"]): x["value"] for x in analysis["moves"]}
            assert r["loss"] == pytest.approx(max(values.values()) - values[(tuple(m["tile"]), m["end"])], abs=1e-3)
        summary = driver.find_element("id", "review-summary").text
        assert f"{len(mine)} of {len(mine)} of your moves with a choice rated" in summary
        worst = max(ratings.values(), key=lambda r: r["loss"])
        if worst["loss"] >= 2:
            assert "biggest" in by(driver, f'#review-moves li[data-index="{worst["index"]}"] .mark')[0].text
        facts = driver.execute_script("return [document.documentElement.scrollWidth, innerWidth]")
        assert facts[0] <= facts[1]
        bad = axe_violations(driver)
        assert bad == [], bad


def test_a_desktop_game_two_columns_resign_and_an_uploaded_review(browser, tmp_path):
    driver = browser
    size(driver, 1280, 1000, False)
    rng = random.Random(3)
    with web_server(analyze_seconds=60.0) as (server, _):
        driver.get(server.url + "/")
        wait_for(driver, lambda d: by(d, "#opponent option"), what="the form")
        names = [o.text for o in by(driver, "#opponent option")]
        assert "Strong" in names and "Greedy" in names and "strong" not in names  # display names, not ids
        assert driver.find_element("id", "more-options").get_attribute("open") is None
        driver.execute_script('document.body.append(Object.assign(document.createElement("button"), {id: "probe"}))')
        assert "button-name" in [v["id"] for v in axe_violations(driver)]  # the check can fail: a nameless button
        driver.execute_script('document.getElementById("probe").remove()')
        bad = axe_violations(driver)
        assert bad == [], bad
        start(driver, server.url, 4, 61)
        wait_for(driver, lambda d: page_state(d) in ("your-turn", "between-hands"), what="your turn")
        facts = layout_facts(driver)
        assert facts["scroll"] <= facts["inner"] == 1280
        assert facts["side"]["left"] >= facts["table"]["right"] - 1 and abs(facts["side"]["top"] - facts["table"]["top"]) < 80
        assert facts["table"]["width"] > 600 and facts["log_open"] is True
        rules = [e.get_attribute("textContent") for e in by(driver, "#rules-list dd")]
        assert any("going out scores nothing" in r for r in rules)
        if page_state(driver) == "your-turn":  # the hint: the bot's choice, the analysis labelled as an estimate
            driver.find_element("id", "hint-button").click()
            wait_for(driver, lambda d: by(d, "#analysis tr.suggested"), what="the hint")
            assert "would play" in driver.find_element("id", "hint-move").text
            assert "sampled deals" in driver.find_element("id", "hint").text
        seen = play_to_the_end(driver, rng)
        assert seen["moves"] > 0 and driver.find_element("id", "error").text == ""
        status = driver.find_element("id", "status").text
        assert status.startswith("game over: ") and ("&" not in status or " wins" not in status), status
        game_id = driver.execute_script("return state.id")
        _, record, _ = call(server, "GET", f"/api/games/{game_id}/record")
        # resign at once in a new game
        driver.find_element("id", "again").click()
        driver.find_element("id", "new-game").click()
        wait_for(driver, lambda d: page_state(d) in ("your-turn", "between-hands"), what="the new game")
        driver.find_element("id", "resign").click()
        driver.find_element("id", "resign").click()  # the second click confirms
        wait_for(driver, lambda d: page_state(d) == "over", what="the resigned game")
        assert "(you resigned)" in driver.find_element("id", "status").text
        # an uploaded record's review
        path = tmp_path / "game.jsonl"
        path.write_bytes(record)
        driver.find_element("id", "again").click()
        driver.find_element("id", "upload").send_keys(str(path))
        wait_for(driver, lambda d: d.find_element("tag name", "body").get_attribute("data-review") == "rated",
                 timeout=90, what="the uploaded game's ratings")
        moves = by(driver, "#review-moves li")
        assert len(moves) == sum(1 for h in json.loads(record)["hands"] for e in h["events"] if e["type"] == "play")
        where = driver.find_element("id", "review-where").text
        driver.find_element("id", "review-next").click()
        wait_for(driver, lambda d: d.find_element("id", "review-where").text != where, what="the next move")
        bad = axe_violations(driver)
        assert bad == [], bad


def test_end_buttons_close_together_on_a_phone_are_spread_apart(browser):
    """Ends a few pixels apart (an arm bent back beside another on a 390-pixel board) get buttons
    that do not overlap, each still near its end; ends far apart keep their places."""
    driver = browser
    size(driver, 390, 844, True)
    with web_server() as (server, _):
        start(driver, server.url, 2, 61)
        wait_for(driver, lambda d: page_state(d) == "your-turn", what="your turn")
        placed = driver.execute_script("""
            const c = document.getElementById('targets');
            c.replaceChildren();
            for (const [x, y] of [[0.40, 0.50], [0.44, 0.52], [0.42, 0.47], [0.90, 0.10]]) {
              const b = document.createElement('button');
              b.className = 'end-target end'; b.textContent = 'W';
              b.style.left = `${100 * x}%`; b.style.top = `${100 * y}%`;
              c.append(b);
            }
            const before = [...c.children].map((b) => b.getBoundingClientRect());
            spreadTargets(c);
            const after = [...c.children].map((b) => b.getBoundingClientRect());
            const centre = (r) => [r.left + r.width / 2, r.top + r.height / 2];
            return {before: before.map(centre), after: after.map(centre), size: after[0].width};""")
    assert overlapping_targets(driver) == []
    moved = [math.dist(a, b) for a, b in zip(placed["before"], placed["after"])]
    assert max(moved[:3]) <= 2 * placed["size"], moved  # each stays near its end
    assert moved[3] < 0.5, "a button that overlapped none stays where its end is"
