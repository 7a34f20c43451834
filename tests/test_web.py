"""The web page's server side (allfives.web) over HTTP: games played through the JSON API, the
record ``allfives replay`` accepts, sessions (ids, cap, expiry, one request at a time), clear 4xx
errors, the page's files, and ``allfives serve --ui`` from the command line."""

import http.client
import io
import json
import random
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from allfives.server.limits import Limits
from allfives.web.game import WebGame
from allfives.web.store import GameStore
from allfives_env.engine.record import replay_record
from helpers import run_cli
from web_helpers import web_server

ROOT = Path(__file__).resolve().parent.parent


def call(server, method, path, body=None, raw=None, headers=None):
    """``(status, decoded body or text, headers)``."""
    data = raw if raw is not None else None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(server.url + path, data=data, method=method, headers=headers or {})
    if method == "POST" and "Content-Type" not in (headers or {}):
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            status, text, got = resp.status, resp.read(), resp.headers
    except urllib.error.HTTPError as exc:
        status, text, got = exc.code, exc.read(), exc.headers
    if (got.get("Content-Type") or "").startswith("application/json") and text:
        return status, json.loads(text), got
    return status, text, got


def play_out(server, state, rng, hints=0):
    """Random legal moves from the state's list for the person, ``advance`` for the bots, to the end."""
    while not state["over"]:
        game_id = state["id"]
        if state["your_turn"]:
            moves = [m for tile in state["hand"] for m in tile["moves"]]
            assert moves and all(tile["svg"].startswith("<svg") for tile in state["hand"])
            if hints:
                status, hint, _ = call(server, "POST", f"/api/games/{game_id}/hint")
                assert status == 200, hint
                assert hint["move"]["action"] in [m["action"] for m in moves]
                assert sorted(m["action"] for m in hint["analysis"]["moves"]) == sorted(m["action"] for m in moves)
                hints -= 1
            status, state, _ = call(server, "POST", f"/api/games/{game_id}/move", {"action": rng.choice(moves)["action"]})
        else:
            status, state, _ = call(server, "POST", f"/api/games/{game_id}/advance")
        assert status == 200, state
    return state


@pytest.mark.parametrize("rules, bots", [
    ({"num_players": 3, "target_score": 40, "hand_size": "five", "boneyard_reserve": 2}, [None, "fast", "greedy"]),
    ({"num_players": 4, "partnerships": False, "target_score": 40, "hand_end": "winner_takes"}, [None, "expert", "random", "greedy"]),
])
def test_whole_games_through_the_api_give_records_the_engine_replays(rules, bots, tmp_path):
    rng = random.Random(1)
    with web_server() as (server, store):
        status, state, headers = call(server, "POST", "/api/games", {"rules": rules, "bots": bots, "hint": "expert", "seed": 5})
        assert status == 201 and headers["Location"] == f"/api/games/{state['id']}"
        assert len(state["id"]) >= 22 and state["picture"].startswith("<svg")
        assert state["names"][0] == "you" and state["names"][1] == f"player 1 ({bots[1]})"
        status, early, _ = call(server, "GET", f"/api/games/{state['id']}/record")
        assert status == 409 and "when the game is over" in early["error"]  # it would show the hidden tiles
        final = play_out(server, state, rng, hints=2)
        status, text, headers = call(server, "GET", f"/api/games/{state['id']}/record")
        assert len(store) == 1
    assert status == 200 and "attachment" in headers["Content-Disposition"]
    record = json.loads(text)
    game = replay_record(record)
    assert game.over and game.scores == final["scores"] and record["players"][0] == "human"
    assert final["winner"] == final["sides"][game.winner]
    path = tmp_path / "game.jsonl"
    path.write_bytes(text)
    out = run_cli("replay", str(path), "--json", cwd=ROOT, timeout=120)
    assert out.returncode == 0 and json.loads(out.stdout.splitlines()[-1])["valid"] is True
    # the log names each event as the person saw it: a bot's draw shows no tile
    assert all(not re.search(r"player \d \(\w+\) draws \d-\d", line) for line in final["log"])


def test_options_and_the_page_files():
    with web_server() as (server, _):
        status, options, _ = call(server, "GET", "/api/options")
        assert status == 200
        ids = [b["id"] for b in options["bots"]]
        # the menu is the named bots that play every opponent alike (allfives_agents.bots, the one list), then the baselines
        assert ids == ["fast", "strong", "strongest", "expert", "greedy", "random"]
        games = [{"num_players": 2, "partnerships": False}, {"num_players": 3, "partnerships": False}, {"num_players": 4, "partnerships": True}]
        assert next(b for b in options["bots"] if b["id"] == "strong")["games"] == games
        assert next(b for b in options["bots"] if b["id"] == "expert")["games"] is None
        assert [o["name"] for o in options["rules"]][:2] == ["num_players", "partnerships"]
        status, html, headers = call(server, "GET", "/")
        assert status == 200 and headers["Content-Type"].startswith("text/html") and b"/static/app.js" in html
        assert b"http" not in html.replace(b'name="viewport"', b"")  # nothing from the network
        for name, kind in (("app.js", "text/javascript"), ("style.css", "text/css")):
            status, text, headers = call(server, "GET", f"/static/{name}")
            assert status == 200 and headers["Content-Type"].startswith(kind) and text
            assert b"http://" not in text and b"https://" not in text
        status, body, _ = call(server, "GET", "/static/nope.js")
        assert status == 404 and "no such file 'nope.js'" in body["error"]
        status, body, _ = call(server, "GET", "/nope")
        assert status == 404 and "/api/games" in body["error"]
        assert call(server, "GET", "/health")[0] == 200  # the bot API beside the page


BAD_GAMES = [
    ([1], 400, "must be a JSON object"),
    ({"colour": "red"}, 400, "unknown field(s) 'colour'"),
    ({"rules": {"num_players": 5}}, 422, "rules: num_players must be 2, 3 or 4"),
    ({"rules": []}, 422, "rules must be an object"),
    ({"seat": 2}, 422, "seat must be your seat 0..1"),
    ({"bots": ["expert"]}, 422, "bots must be a list of 2 bot ids"),
    ({"bots": [None, "ppo:/etc/passwd"]}, 422, "bots[1]: unknown bot \"ppo:/etc/passwd\""),
    ({"rules": {"num_players": 4, "partnerships": False}, "bots": [None, "strong", None, None]}, 422,
     "seat 1: bot 'strong': bot 'strong' has no setting for 4 players, cut-throat"),
    ({"hint": "nobody"}, 422, "hint: unknown bot"),
    ({"seed": -1}, 422, "seed must be an integer"),
]


@pytest.mark.parametrize("body, status, message", BAD_GAMES, ids=[m for _, _, m in BAD_GAMES])
def test_bad_new_games_are_refused_by_name(body, status, message):
    with web_server() as (server, store):
        got, answer, _ = call(server, "POST", "/api/games", body)
        assert got == status and message in answer["error"], answer
        assert len(store) == 0


def test_bad_moves_and_requests_out_of_turn():
    with web_server() as (server, _):
        _, state, _ = call(server, "POST", "/api/games", {"rules": {"num_players": 2}, "seed": 2, "bots": [None, "greedy"]})
        game = f"/api/games/{state['id']}"
        if not state["your_turn"]:
            status, body, _ = call(server, "POST", f"{game}/move", {"action": 0})
            assert status == 409 and "not yours" in body["error"]
            _, state, _ = call(server, "POST", f"{game}/advance")
        status, body, _ = call(server, "POST", f"{game}/advance")
        assert status == 409 and "it is your turn" in body["error"]
        legal = {m["action"] for t in state["hand"] for m in t["moves"]}
        illegal = next(a for a in range(112) if a not in legal)
        for move, status, message in [({"action": illegal}, 422, "illegal move"), ({"action": "1"}, 422, "action must be an integer"),
                                      ({"move": 1}, 422, 'a move is {"action": N}'), ([1], 422, 'a move is {"action": N}')]:
            got, body, _ = call(server, "POST", f"{game}/move", move)
            assert got == status and message in body["error"], body
        got, body, _ = call(server, "POST", f"{game}/move", raw=b'{"action": 1', headers={"Content-Type": "application/json"})
        assert got == 400 and "malformed JSON" in body["error"]
        got, body, _ = call(server, "POST", f"{game}/move", raw=b'{"action": 1}', headers={"Content-Type": "text/plain"})
        assert got == 415
        assert call(server, "GET", game)[1]["log"] == state["log"]  # nothing happened
        for method, path in (("GET", f"{game}/move"), ("PUT", game), ("POST", "/api/options")):
            got, body, headers = call(server, method, path, {} if method != "GET" else None)
            assert got == 405 and "is not allowed" in body["error"] and "Allow" in headers
        assert call(server, "DELETE", game)[0] == 204
        got, body, _ = call(server, "GET", game)
        assert got == 404 and "no such game" in body["error"]
        assert call(server, "GET", "/api/games/not-a-game")[0] == 404


def test_cap_expiry_and_one_request_at_a_time():
    now = [0.0]
    store = GameStore(max_games=2, idle_seconds=60, clock=lambda: now[0])
    with web_server(store) as (server, _):
        ids = [call(server, "POST", "/api/games", {"seed": i})[1]["id"] for i in range(2)]
        assert len(set(ids)) == 2
        status, body, _ = call(server, "POST", "/api/games", {})
        assert status == 503 and "limit of 2 live games" in body["error"]
        now[0] = 30.0
        assert call(server, "GET", f"/api/games/{ids[0]}")[0] == 200  # in use: stays
        now[0] = 80.0  # the second has been idle 80 s, the first 50 s
        assert call(server, "POST", "/api/games", {})[0] == 201
        assert call(server, "GET", f"/api/games/{ids[1]}")[0] == 404
        assert call(server, "GET", f"/api/games/{ids[0]}")[0] == 200
        game = store._games[ids[0]]
        with game.lock:  # a request for this game is being answered
            status, body, _ = call(server, "GET", f"/api/games/{ids[0]}")
        assert status == 409 and "one at a time" in body["error"]
        assert call(server, "GET", f"/api/games/{ids[0]}")[0] == 200


def test_concurrent_requests_for_one_game_get_an_answer_or_a_409():
    with web_server() as (server, _):
        _, state, _ = call(server, "POST", "/api/games", {"rules": {"num_players": 4}, "seat": 3, "bots": [None] * 4, "seed": 1})
        if state["your_turn"]:
            move = next(m for t in state["hand"] for m in t["moves"])
            _, state, _ = call(server, "POST", f"/api/games/{state['id']}/move", {"action": move["action"]})
        assert not state["your_turn"]
        results = []
        threads = [threading.Thread(target=lambda: results.append(call(server, "POST", f"/api/games/{state['id']}/advance")[0]))
                   for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert set(results) <= {200, 409} and 200 in results


def test_cli_serves_the_page_and_checks_its_flags():
    proc = subprocess.Popen([sys.executable, "-m", "allfives", "serve", "--ui", "--port", "0", "--ui-games", "3"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        line = proc.stdout.readline()
        assert "serving expert" in line and "the web page at http://127.0.0.1:" in line
        url = re.search(r"http://127\.0\.0\.1:\d+", line).group(0)
        with urllib.request.urlopen(url + "/", timeout=10) as resp:
            assert b"All Fives" in resp.read()
        with urllib.request.urlopen(url + "/api/options", timeout=10) as resp:
            assert json.loads(resp.read())["max_games"] == 3
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and "GET / 200" in err and "stopped" in err
    for args, message in [((), "--policy is required (or --ui"), (("--ui", "--ui-games", "0"), "--ui-games must be at least 1"),
                          (("--policy", "greedy", "--ui-idle", "5"), "--ui-games, --ui-client-games and --ui-idle go with --ui"),
                          (("--ui", "--ui-client-games", "0"), "--ui-client-games must be at least 1"),
                          (("--ui", "--ui-idle", "0"), "--ui-idle must be more than 0")]:
        out = run_cli("serve", *args, cwd=ROOT, timeout=60)
        assert out.returncode == 2 and message in out.stderr, (args, out.stderr)


def test_the_request_log_never_prints_a_game_id():
    stream = io.StringIO()
    with web_server(quiet=False, log=stream) as (server, _):
        status, state, _ = call(server, "POST", "/api/games", {"rules": {"num_players": 2}, "bots": [None, "greedy"], "seed": 1})
        assert status == 201
        call(server, "GET", f"/api/games/{state['id']}")
    text = stream.getvalue()
    assert f"GET /api/games/{state['id'][:4]}... 200" in text and state["id"] not in text


def test_a_post_without_the_json_type_is_refused_so_other_sites_cannot_drive_games():
    # a page on another site can send a "simple" POST (no Content-Type, or text/plain) without a preflight
    with web_server() as (server, store):
        _, state, _ = call(server, "POST", "/api/games", {"seed": 1, "bots": [None, "greedy"]})
        game = f"/api/games/{state['id']}"
        for path, raw in (("/api/games", b"{}"), (f"{game}/advance", None), (f"{game}/hint", None)):
            req = urllib.request.Request(server.url + path, data=raw or b"", method="POST")
            req.add_header("Content-Type", "text/plain")
            try:
                urllib.request.urlopen(req, timeout=30)
                raise AssertionError(f"{path} answered a text/plain POST")
            except urllib.error.HTTPError as exc:
                assert exc.code == 415 and "Content-Type must be application/json" in json.loads(exc.read())["error"]
        assert len(store) == 1


# -- limits per client and in all -------------------------------------------------------------

CHEAP_GAME = {"rules": {"num_players": 2}, "bots": [None, "greedy"], "hint": "greedy"}


def call_from(server, source: str, method: str, path: str, body=None, headers=None):
    """``(status, JSON body, headers)`` of a request sent from the loopback address ``source``
    (another client: Linux routes all of 127.0.0.0/8 to this machine)."""
    conn = http.client.HTTPConnection(*server.server_address[:2], timeout=60, source_address=(source, 0))
    data = None if body is None else json.dumps(body).encode()
    try:
        conn.request(method, path, data, {"Content-Type": "application/json", **(headers or {})} if method == "POST" else {})
    except OSError:
        pytest.skip(f"cannot send from {source} on this system")
    try:
        resp = conn.getresponse()
        text = resp.read()
        return resp.status, json.loads(text) if text else None, resp.headers
    finally:
        conn.close()


def test_a_client_holds_at_most_its_cap_of_games():
    store = GameStore(max_games=10, max_client_games=2)
    with web_server(store) as (server, _):
        ids = [call(server, "POST", "/api/games", dict(CHEAP_GAME, seed=i))[1]["id"] for i in range(2)]
        status, body, _ = call(server, "POST", "/api/games", CHEAP_GAME)
        assert status == 429 and body["error"].startswith("client 127.0.0.1 holds 2 live games, the limit per client (--ui-client-games 2)")
        assert call_from(server, "127.0.0.2", "POST", "/api/games", CHEAP_GAME)[0] == 201  # another client
        assert call(server, "DELETE", f"/api/games/{ids[0]}")[0] == 204
        assert call(server, "POST", "/api/games", CHEAP_GAME)[0] == 201
        assert len(store) == 3


def test_behind_a_proxy_the_forwarded_address_is_the_client():
    store = GameStore(max_games=10, max_client_games=1)
    with web_server(store, behind_proxy="127.0.0.1") as (server, _):
        for forwarded in ("10.0.0.1", "10.0.0.2"):
            status, _, _ = call(server, "POST", "/api/games", CHEAP_GAME, headers={"X-Forwarded-For": forwarded})
            assert status == 201
        status, body, _ = call(server, "POST", "/api/games", CHEAP_GAME, headers={"X-Forwarded-For": "10.0.0.1"})
        assert status == 429 and "client 10.0.0.1 holds 1 live games" in body["error"]


@pytest.fixture
def blocked_hints(monkeypatch):
    """Hints that wait until ``gate`` is set (all set free at the end); ``started`` counts those running."""
    gate, started = threading.Event(), threading.Semaphore(0)

    def hint(self, max_worlds, max_seconds):
        started.release()
        gate.wait(60)
        return {"bot": self.hint_bot.id}

    monkeypatch.setattr(WebGame, "hint", hint)
    yield gate, started
    gate.set()


def wait_until(condition, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def test_hints_over_the_per_client_or_total_bound_get_429_or_503(blocked_hints):
    gate, started = blocked_hints
    limits = Limits(analysis_workers=1, analysis_queue=2, client_analyses=2)
    with web_server(GameStore(max_client_games=10), limits=limits) as (server, _):
        ids = [call(server, "POST", "/api/games", dict(CHEAP_GAME, seed=i))[1]["id"] for i in range(4)]
        analysis = server.app.settings.analysis
        results = []
        threads = [threading.Thread(target=lambda g=g: results.append(call(server, "POST", f"/api/games/{g}/hint")[0]))
                   for g in ids[:2]]
        for t in threads:
            t.start()
        wait_until(lambda: analysis.held == 2)  # one running, one waiting: this client's two
        status, body, headers = call(server, "POST", f"/api/games/{ids[2]}/hint")
        assert status == 429 and headers["Retry-After"] == "1"
        assert "2 analyses running or waiting, the limit per client (--client-analyses)" in body["error"]
        assert call(server, "GET", f"/api/games/{ids[2]}")[0] == 200  # the refused hint gave its game back
        other = threading.Thread(target=lambda: results.append(call_from(server, "127.0.0.2", "POST", f"/api/games/{ids[2]}/hint")[0]))
        other.start()
        wait_until(lambda: analysis.held == 3)  # the queue is full: 1 worker + 2 waiting
        status, body, headers = call_from(server, "127.0.0.3", "POST", f"/api/games/{ids[3]}/hint")
        assert status == 503 and headers["Retry-After"] == "2"
        assert "3 analyses are running or waiting, its limit (--analysis-workers + --analysis-queue)" in body["error"]
        gate.set()
        for t in threads + [other]:
            t.join(60)
        assert results == [200, 200, 200]
        assert analysis.held == 0


def test_health_and_game_state_answer_at_once_while_hints_fill_the_queue(blocked_hints):
    """45 hints at once: more than Starlette's 40 threads, which the hints filled before."""
    gate, started = blocked_hints
    limits = Limits(analysis_workers=1, analysis_queue=64, client_analyses=64)
    with web_server(GameStore(max_client_games=64), limits=limits) as (server, _):
        ids = [call(server, "POST", "/api/games", dict(CHEAP_GAME, seed=i))[1]["id"] for i in range(46)]
        results = []
        threads = [threading.Thread(target=lambda g=g: results.append(call(server, "POST", f"/api/games/{g}/hint")[0]))
                   for g in ids[:45]]
        for t in threads:
            t.start()
        assert started.acquire(timeout=30)
        wait_until(lambda: server.app.settings.analysis.held == 45)
        for path in ("/health", f"/api/games/{ids[45]}", "/api/options"):
            start = time.monotonic()
            assert call(server, "GET", path)[0] == 200
            assert time.monotonic() - start < 5.0, path  # well under a millisecond's work; generous for a loaded machine
        gate.set()
        for t in threads:
            t.join(60)
        assert results == [200] * 45


# -- takeback, resign, the review, uploaded records, the favicon ------------------------------------

def to_your_turn(server, state):
    while not state["your_turn"] and not state["over"]:
        status, state, _ = call(server, "POST", f"/api/games/{state['id']}/advance")
        assert status == 200, state
    return state


def test_takeback_undoes_your_move_and_the_bots_after_it_by_replaying_the_engine():
    with web_server() as (server, store):
        _, state, _ = call(server, "POST", "/api/games", {"rules": {"num_players": 3}, "bots": [None, "greedy", "expert"], "seed": 4})
        game = f"/api/games/{state['id']}"
        assert state["casual"] is True and state["can_takeback"] is False
        status, body, _ = call(server, "POST", f"{game}/takeback")
        assert status == 409 and "no move to take back" in body["error"]
        before = to_your_turn(server, state)
        rng = random.Random(2)
        for _ in range(2):  # two of your moves and the bots' after them
            moves = [m for t in before["hand"] for m in t["moves"]]
            _, after, _ = call(server, "POST", f"{game}/move", {"action": rng.choice(moves)["action"]})
            after = to_your_turn(server, after)
            if after["over"]:
                pytest.skip("the game ended early")
            status, back, _ = call(server, "POST", f"{game}/takeback")
            assert status == 200 and back["your_turn"]
            for key in ("hand", "scores", "log", "board", "players", "hands"):
                assert back[key] == before[key], key
            _, before, _ = call(server, "POST", f"{game}/move", {"action": moves[0]["action"]})
            before = to_your_turn(server, before)
            assert before["can_takeback"] is True
        held = store._games[state["id"]]
        assert [s for s, _ in held.moves].count(0) == 2  # two moves of yours kept, the taken-back ones gone
        # a rated (not casual) game refuses it
        _, rated, _ = call(server, "POST", "/api/games", {"bots": [None, "greedy"], "seed": 1, "casual": False})
        rated = to_your_turn(server, rated)
        move = next(m for t in rated["hand"] for m in t["moves"])
        call(server, "POST", f"/api/games/{rated['id']}/move", {"action": move["action"]})
        status, body, _ = call(server, "POST", f"/api/games/{rated['id']}/takeback")
        assert status == 409 and "casual games" in body["error"]
        status, body, _ = call(server, "POST", "/api/games", {"casual": "yes"})
        assert status == 422 and "casual must be true or false" in body["error"]


def test_resign_the_review_and_an_uploaded_record():
    with web_server(analyze_seconds=60.0) as (server, store):
        _, state, _ = call(server, "POST", "/api/games", {"rules": {"num_players": 2, "target_score": 61}, "bots": [None, "greedy"], "seed": 6})
        game = f"/api/games/{state['id']}"
        status, body, _ = call(server, "GET", f"{game}/review")
        assert status == 409 and "when the game is over" in body["error"]
        final = play_out(server, state, random.Random(3))
        assert final["hands"] and final["hands"][0]["sides"][0]["after"] == final["hands"][0]["sides"][0]["before"] + sum(
            final["hands"][0]["sides"][0][k] for k in ("in_play", "bonus")) - final["hands"][0]["sides"][0]["penalties"]
        status, review, _ = call(server, "GET", f"{game}/review")
        assert status == 200 and review["moves"][0]["end"] == "lead"
        k = next(m["index"] for m in review["moves"] if m["yours"] and m["choices"] > 1)
        _, pos, _ = call(server, "GET", f"{game}/review/{k}")
        status, rating, _ = call(server, "POST", f"{game}/review/{k}/rate")
        assert status == 200 and rating["analysis"]["worlds"] == 24
        # the same numbers as the server's own /analyze of that position
        _, analysis, _ = call(server, "POST", "/analyze", dict(pos["position"], worlds=24, seed=0))
        assert analysis["moves"] == rating["analysis"]["moves"]
        assert rating["loss"] == pytest.approx(analysis["moves"][0]["value"] - rating["chosen"]["value"], abs=1e-3)
        for path, method, code, message in [(f"{game}/review/999", "GET", 404, "no move 999"), (f"{game}/review/x", "GET", 404, "no move 'x'"),
                                            (f"{game}/review/-1/rate", "POST", 404, "no move '-1'"), (f"{game}/resign", "POST", 409, "the game is over"),
                                            (f"{game}/takeback", "POST", 409, "the game is over")]:
            status, body, _ = call(server, method, path)
            assert status == code and message in body["error"], (path, body)
        _, text, _ = call(server, "GET", f"{game}/record")
        record = json.loads(text)
        status, held, headers = call(server, "POST", "/api/reviews", {"record": record})
        assert status == 201 and held["seat"] == 0 and len(held["moves"]) == len(review["moves"])
        assert call(server, "GET", f"/api/games/{held['id']}/review/{k}")[1]["position"] == pos["position"]
        status, body, _ = call(server, "GET", f"/api/games/{held['id']}")
        assert status == 409 and "not a game to play" in body["error"]
        for body, code, message in [([1], 400, "must be a JSON object"), ({"rec": 1}, 400, 'a review is {"record"'),
                                    ({"record": {"format": "nope"}}, 422, "not a valid allfives-record/1 game"),
                                    ({"record": record, "seat": 5}, 422, "seat must be 0..1")]:
            status, answer, _ = call(server, "POST", "/api/reviews", body)
            assert status == code and message in answer["error"], answer
        # resign: the game ends at once, the other side wins, the review is ready
        _, state, _ = call(server, "POST", "/api/games", {"bots": [None, "greedy"], "seed": 2})
        status, over, _ = call(server, "POST", f"/api/games/{state['id']}/resign")
        assert status == 200 and over["over"] and over["resigned"] and over["winner"] == over["sides"][1]
        status, body, _ = call(server, "POST", f"/api/games/{state['id']}/advance")
        assert status == 409 and "the game is over" in body["error"]
        assert call(server, "GET", f"/api/games/{state['id']}/review")[0] == 200
        status, icon, headers = call(server, "GET", "/favicon.ico")
        assert status == 200 and headers["Content-Type"] == "image/svg+xml" and icon.startswith(b"<svg")
        status, _, _ = call(server, "GET", "/static/favicon.svg")
        assert status == 200


def test_the_state_has_the_board_its_ends_the_seats_and_the_rules_in_words():
    with web_server() as (server, _):
        _, state, _ = call(server, "POST", "/api/games", {"rules": {"num_players": 4}, "bots": [None, "greedy", "greedy", "greedy"], "seed": 3})
        state = to_your_turn(server, state)
        assert state["board"].startswith("<svg") and 'role="img"' in state["board"]
        ends = {e["end"] for e in state["ends"]}
        playable = {m["end"] for t in state["hand"] for m in t["moves"]}
        assert playable <= ends and all(0 <= e["x"] <= 1 and 0 <= e["y"] <= 1 for e in state["ends"])
        assert [p["to_move"] for p in state["players"]] == [True, False, False, False]
        assert state["players"][0]["tiles"] == len(state["hand"]) and state["players"][0]["name"] == "you"
        assert [r["name"] for r in state["rules_text"]][:6] == ["num_players", "partnerships", "hand_size", "boneyard_reserve",
                                                                 "hand_end", "target_score"]
        assert "going out scores nothing for who went out" in state["rules_text"][4]["text"]
