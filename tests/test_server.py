"""The bot server (``allfives serve``): legal moves for real positions, and a precise 4xx for anything else.

Servers run in threads on ephemeral ports; requests go through ``urllib.request`` (and
``http.client`` where a request must break HTTP itself). A tiny policy is trained and exported to
ONNX once for the module.
"""

import contextlib
import http.client
import io
import itertools
import json
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from allfives_agents import FunctionAgent
from allfives_env.engine import DRAW, Game, Rules
from allfives_env.engine.events import event_to_dict, public_event
from allfives_env.engine.tiles import TILES, mask_tiles
from allfives_env.engine.position import view_from_history
from allfives_env.observation import OBS_VERSION
from allfives.server import ApiError, BotService, make_server, resolve_policy_spec
from allfives.server.httpd import MAX_BODY
from allfives.server.limits import HostCheck, Limits
from allfives.server.schema import openapi, request_schema
from helpers import run_cli

ROOT = Path(__file__).resolve().parent.parent
TRAINED = Rules.make(num_players=2, target_score=60)  # configs/tiny_test.yaml


# -- fixtures and helpers ----------------------------------------------------------------


@pytest.fixture(scope="module")
def policy_files(tmp_path_factory):
    """A tiny trained policy: (SB3 zip, exported ONNX)."""
    from allfives_train.export import export_onnx

    run_dir = tmp_path_factory.mktemp("policy") / "run"
    cmd = [sys.executable, "-m", "allfives.cli.main", "train", "--config", "configs/tiny_test.yaml",
           "--run-dir", str(run_dir), "--no-progress"]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    onnx_path = run_dir / "policy.onnx"
    export_onnx(run_dir / "final.zip", onnx_path)
    return run_dir / "final.zip", onnx_path


@contextlib.contextmanager
def running(policy, **options):
    """A server for ``policy`` (path, spec, ``Agent`` or ``BotService``) on a free port, in a thread."""
    service = policy if isinstance(policy, BotService) else BotService(policy, seed=0)
    options.setdefault("quiet", True)
    server = make_server(service, "127.0.0.1", 0, **options)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture(scope="module")
def onnx_server(policy_files):
    with running(str(policy_files[1])) as server:
        yield server


@pytest.fixture(scope="module")
def expert_server():
    with running("expert") as server:
        yield server


def call(server, path, body=None, method=None, raw=None, headers=None):
    """``(status, decoded JSON body, response headers)`` of one request."""
    data = raw if raw is not None else None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(server.url + path, data=data, method=method, headers=headers or {})
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            text = resp.read()
            return resp.status, json.loads(text) if text else None, resp.headers
    except urllib.error.HTTPError as exc:
        text = exc.read()
        return exc.code, json.loads(text) if text else None, exc.headers


def raw_call(server, method, path, headers, body=b""):
    """A request with exactly these headers (no Content-Length unless given)."""
    host, port = server.server_address[:2]
    conn = http.client.HTTPConnection(host, port, timeout=10)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        for name, value in headers.items():
            conn.putheader(name, value)
        conn.endheaders()
        if body:
            conn.send(body)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


def request_of(game: Game, seat: int, explain: bool = False, rules: bool = True) -> dict:
    """What a frontend sends: the seat's hand and the public history of the hand."""
    req = {
        "seat": seat,
        "hand": [list(TILES[t]) for t in mask_tiles(game.hands[seat])],
        "history": [event_to_dict(public_event(e, seat)) for e in game.events],
        "scores": list(game.hand_logs[-1].scores_before),
        "explain": explain,
    }
    if rules:
        req["rules"] = game.rules.to_dict()
    return req


def positions(rules: Rules, games: int, seed: int, every: int = 1):
    """``(game, seat)`` at decisions of random games (the game is advanced after each yield)."""
    rng = random.Random(seed)
    for g in range(games):
        game = Game(rules, rng.randrange(2**31))
        k = 0
        while not game.over:
            if k % every == 0:
                yield game, game.current_player
            k += 1
            game.step(rng.choice(game.legal_actions()))


def base_request() -> tuple[Game, dict]:
    """A mid-hand 2-player position under the trained rules."""
    game = Game(TRAINED, 3)
    rng = random.Random(1)
    for _ in range(6):
        game.step(rng.choice(game.legal_actions()))
    return game, request_of(game, game.current_player)


def must_draw_request() -> dict:
    """A position whose seat cannot place a tile: its draws are cut from the history."""
    for game, seat in positions(TRAINED, 50, 9):
        events = game.events
        if events and events[-1][0] == DRAW and events[-1][1] == seat:
            k = len(events)
            while events[k - 1][0] == DRAW:
                k -= 1
            drawn = {e[2] for e in events[k:]}
            req = request_of(game, seat)
            req["history"] = req["history"][:k]
            req["hand"] = [list(TILES[t]) for t in mask_tiles(game.hands[seat]) if t not in drawn]
            return req
    raise AssertionError("no forced draw found")


# -- answers -----------------------------------------------------------------------------


def test_health_names_the_policy_and_its_rules(onnx_server, expert_server):
    status, body, _ = call(onnx_server, "/health")
    assert status == 200
    assert body["status"] == "ok" and body["obs_version"] == OBS_VERSION and body["policy"].startswith("onnx:")
    assert body["rules"] == TRAINED.to_dict()
    status, body, _ = call(expert_server, "/health")
    assert status == 200 and body["policy"] == "expert" and body["rules"] is None


def test_onnx_policy_answers_legal_moves_in_real_2p_games(onnx_server, policy_files):
    from allfives_agents.nets.onnx_agent import OnnxAgent

    direct = OnnxAgent(str(policy_files[1]))
    n = 0
    for i, (game, seat) in enumerate(positions(TRAINED, 4, 11)):
        explain = i % 2 == 0
        status, body, _ = call(onnx_server, "/move", request_of(game, seat, explain=explain, rules=i % 3 != 0))
        assert status == 200, body
        legal = game.legal_actions()
        assert body["action"] in legal and body["obs_version"] == OBS_VERSION  # the tiny config trains the default
        assert body["action"] == direct.act(game.view(seat))  # the rebuilt view decides like the real one
        view = game.view(seat)
        assert body["tile"] == list(TILES[body["action"] >> 2]) and body["points"] == view.points_of(body["action"])
        assert body["end"] == ("lead" if not game.events else ["west", "east", "north", "south"][body["action"] & 3])
        if explain:
            moves = body["legal"]
            assert [m["action"] for m in moves] == legal
            assert [m["points"] for m in moves] == view.move_points()
            probs = np.array([m["prob"] for m in moves])
            assert abs(probs.sum() - 1.0) < 1e-9 and (probs >= 0).all()
            assert moves[int(probs.argmax())]["action"] == body["action"]
        n += 1
    assert n > 20


def test_zip_policy_gives_the_onnx_probabilities(policy_files):
    zip_service = BotService(str(policy_files[0]))
    onnx_service = BotService(str(policy_files[1]))
    assert zip_service.name.startswith("ppo:") and zip_service.policy_rules == TRAINED
    for game, seat in positions(TRAINED, 1, 5, every=3):
        req = request_of(game, seat, explain=True)
        a, b = zip_service.move(req), onnx_service.move(req)
        np.testing.assert_allclose([m["prob"] for m in a["legal"]], [m["prob"] for m in b["legal"]], atol=1e-4)


@pytest.mark.parametrize("options", [dict(num_players=4), dict(num_players=4, partnerships=False, hand_size="five")])
def test_heuristic_spec_answers_4p_games(expert_server, options):
    rules = Rules.make(**options)
    n = 0
    for i, (game, seat) in enumerate(itertools.islice(positions(rules, 2, 21, every=2), 40)):
        status, body, _ = call(expert_server, "/move", request_of(game, seat, explain=i % 2 == 0))
        assert status == 200, body
        assert body["action"] in game.legal_actions()
        assert ("legal" in body) == (i % 2 == 0)
        assert all(m["prob"] is None for m in body.get("legal", []))
        n += 1
    assert n > 10


def test_search_agent_works_on_rebuilt_positions():
    rules = Rules.make(num_players=3, boneyard_reserve=2)
    with running("ismcts:iters=8,rollout=greedy") as server:
        for game, seat in positions(rules, 1, 8, every=4):
            status, body, _ = call(server, "/move", request_of(game, seat))
            assert status == 200 and body["action"] in game.legal_actions(), body


def test_requests_in_parallel_all_get_answers(onnx_server):
    reqs = [request_of(g, s) for g, s in positions(TRAINED, 2, 13, every=2)][:24]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda r: call(onnx_server, "/move", r), reqs))
    assert all(status == 200 for status, _, _ in results)


def test_schema_and_openapi(onnx_server):
    jsonschema = pytest.importorskip("jsonschema")
    status, schema, _ = call(onnx_server, "/schema")
    assert status == 200 and schema == json.loads(json.dumps(request_schema()))
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for game, seat in positions(Rules.make(num_players=4), 1, 3, every=3):
        validator.validate(request_of(game, seat, explain=True))
    bad_requests = ({"hand": []}, {"seat": 0, "hand": [], "colour": 1}, {"seat": "0", "hand": []},
                    {"seat": 0, "hand": [[1]]})
    for bad in bad_requests:
        assert not validator.is_valid(bad)
    status, doc, _ = call(onnx_server, "/openapi.json")
    assert status == 200 and doc["openapi"].startswith("3.1") and doc["servers"] == [{"url": onnx_server.url}]
    assert set(doc["paths"]) == {"/health", "/schema", "/openapi.json", "/move", "/analyze"}
    refs = re.findall(r'"\$ref": "#/components/schemas/(\w+)"', json.dumps(doc))
    assert refs and set(refs) <= set(doc["components"]["schemas"])
    for name, definition in doc["components"]["schemas"].items():
        jsonschema.Draft202012Validator.check_schema(definition)
    assert openapi()["paths"] == doc["paths"]


# -- refusals ----------------------------------------------------------------------------


def mutate(fn):
    """A request built from the base position and changed by ``fn(request)``."""
    def build():
        _, req = base_request()
        fn(req)
        return req
    return build


ERRORS = [
    # (name, body builder or raw bytes, status, message fragment)
    ("malformed JSON", b'{"seat": 0,', 400, "malformed JSON"),
    ("not UTF-8", b'{"seat": "\xff"}', 400, "not UTF-8"),
    ("NaN", b'{"seat": NaN, "hand": []}', 400, "NaN is not valid JSON"),
    ("duplicate field", b'{"seat": 0, "seat": 1, "hand": []}', 400, "duplicate field 'seat'"),
    ("deep nesting", b"[" * 50000, 400, "nested too deeply"),
    ("not an object", lambda: [1, 2], 400, "must be a JSON object, got array"),
    ("unknown fields", mutate(lambda r: r.update(colour="red", zzz=1)), 400, "unknown field(s) 'colour', 'zzz'"),
    ("missing field", lambda: {"hand": []}, 422, "missing field(s) 'seat'"),
    ("seat type", mutate(lambda r: r.update(seat="0")), 422, "seat must be an integer"),
    ("seat bool", mutate(lambda r: r.update(seat=True)), 422, "seat must be an integer"),
    ("hand type", mutate(lambda r: r.update(hand={"0-1": 1})), 422, "hand must be an array"),
    ("tile type", mutate(lambda r: r["hand"].__setitem__(1, [1, "2"])), 422, "hand[1] must be a tile"),
    ("history type", mutate(lambda r: r.update(history="none")), 422, "history must be an array"),
    ("event type", mutate(lambda r: r["history"].__setitem__(0, 5)), 422, "history[0] must be an event"),
    ("event field type", mutate(lambda r: r["history"][1].update(end=["east"])), 422,
     "history[1].end must be a string"),
    ("hidden draw type", mutate(lambda r: r["history"].append({"type": "draw", "player": 0, "tile": "?"})), 422,
     "history[6].tile must be a tile"),
    ("huge integer", mutate(lambda r: r.update(scores=[-10**40, 0])), 422, "scores[0]: integer out of range"),
    ("scores type", mutate(lambda r: r.update(scores=[0, "5"])), 422, "scores must be"),
    ("explain type", mutate(lambda r: r.update(explain="yes")), 422, "explain must be true or false"),
    ("rules type", mutate(lambda r: r.update(rules=[2])), 422, "rules must be"),
    ("bad rules", mutate(lambda r: r.update(rules={"num_players": 5})), 422, "rules: num_players must be 2, 3 or 4"),
    ("unknown rule", mutate(lambda r: r.update(rules={"jokers": True})), 422, "unknown rules option(s) 'jokers'"),
    ("tile that does not exist", mutate(lambda r: r["hand"].__setitem__(0, [3, 9])), 422, "not a tile: [3, 9]"),
    ("event tile that does not exist", mutate(lambda r: r["history"][0].update(tile=[7, 7])), 422,
     "history event 1: not a tile"),
    ("hand too small", mutate(lambda r: r["hand"].pop()), 422, "the rules deal 9"),
    ("hand holds a tile another seat played", mutate(lambda r: r["hand"].__setitem__(0,
        next(e["tile"] for e in r["history"] if e["type"] == "play" and e["player"] != r["seat"]))), 422,
     "is in player"),
    ("hand holds a tile the seat played", mutate(lambda r: r["hand"].append(
        next(e["tile"] for e in r["history"] if e["type"] == "play" and e["player"] == r["seat"]))), 422,
     "which the seat already played"),
    ("duplicate tile", mutate(lambda r: r["hand"].append(r["hand"][0])), 422, "appears twice"),
    ("not this seat's turn", mutate(lambda r: r.update(seat=1 - r["seat"])), 422, "turn, not player"),
    ("seat out of range", mutate(lambda r: r.update(seat=2)), 422, "seat: player must be a seat 0..1"),
    ("wrong points", mutate(lambda r: r["history"][1].update(points=r["history"][1]["points"] + 5)), 422,
     "wrong points"),
    ("game already over", mutate(lambda r: r.update(scores=[60, 0])), 422, "already reached the target"),
    ("no legal move", must_draw_request, 422, "no legal placement: it must draw"),
    ("4p game for a 2p policy", mutate(lambda r: r.update(rules={"num_players": 4})), 422,
     "was trained for 2 players (rules"),
]


@pytest.mark.parametrize("name, body, status, message", ERRORS, ids=[e[0] for e in ERRORS])
def test_refusals_name_the_problem(onnx_server, name, body, status, message):
    if isinstance(body, bytes):
        got, answer, _ = call(onnx_server, "/move", raw=body)
    else:
        got, answer, _ = call(onnx_server, "/move", body())
    assert got == status, answer
    assert set(answer) == {"error"} and message in answer["error"], answer["error"]
    assert call(onnx_server, "/health")[0] == 200  # still serving


def test_random_corruptions_are_refused_with_4xx_never_crash(policy_files):
    """Requests from real games with random parts replaced: a legal move or a 400/422, nothing else."""
    service = BotService(str(policy_files[1]))
    reqs = [request_of(g, s, explain=True) for g, s in positions(TRAINED, 2, 1, every=3)]
    rng = random.Random(0)
    values = [None, True, 0, 1, -1, 7, 2**40, 1.5, "", "x", "5-6", "lead", "north", [], {}, [0], [0, 0], [7, 7],
              {"type": "pass", "player": 0}, {"type": "draw", "player": 1}]

    def corrupt(node):
        if isinstance(node, (dict, list)) and node and rng.random() < 0.7:
            node = type(node)(node)
            key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
            if rng.random() < 0.1:
                del node[key]
            else:
                node[key] = corrupt(node[key])
            return node
        return rng.choice(values)

    answered = refused = 0
    for _ in range(1500):
        req = rng.choice(reqs)
        for _ in range(rng.randint(1, 3)):
            req = corrupt(req)
        try:
            body = service.move_json(json.dumps(req).encode())
        except ApiError as exc:
            assert exc.status in (400, 422), (exc.message, req)
            refused += 1
        else:
            rules = service.rules_for(req.get("rules"))
            view = view_from_history(rules, req["seat"], req["hand"], req.get("history") or [], req.get("scores"))
            assert body["action"] in view.legal_actions
            answered += 1
    assert answered > 10 and refused > 1000


def test_the_base_request_is_valid(onnx_server):
    _, req = base_request()
    assert call(onnx_server, "/move", req)[0] == 200


def test_paths_and_methods(onnx_server):
    status, body, _ = call(onnx_server, "/nope")
    assert status == 404 and "no such path '/nope'" in body["error"] and "/move" in body["error"]
    assert call(onnx_server, "/nope", {"seat": 0}, method="POST")[0] == 404
    status, body, headers = call(onnx_server, "/move")
    assert status == 405 and "GET is not allowed on /move" in body["error"] and "POST" in headers["Allow"]
    for method, path in (("POST", "/health"), ("DELETE", "/move"), ("PUT", "/schema")):
        status, body, _ = call(onnx_server, path, {}, method=method)
        assert status == 405 and f"{method} is not allowed on {path}" in body["error"]
    status, body = raw_call(onnx_server, "BREW", "/move", {})
    assert status == 501 and "BREW" in body["error"]
    status, body, headers = call(onnx_server, "/health?verbose=1", method="HEAD")
    assert status == 200 and body is None and int(headers["Content-Length"]) > 0
    assert call(onnx_server, "/health")[0] == 200


def test_body_limits(onnx_server):
    _, req = base_request()
    text = json.dumps(req).encode()
    at_limit = text + b" " * (MAX_BODY - len(text))
    assert len(at_limit) == MAX_BODY
    status, body, _ = call(onnx_server, "/move", raw=at_limit)
    assert status == 200, body
    status, body, _ = call(onnx_server, "/move", raw=at_limit + b" ")
    assert status == 413 and f"{MAX_BODY + 1} bytes is over the limit of {MAX_BODY}" in body["error"]
    as_json = {"Content-Type": "application/json"}
    status, body = raw_call(onnx_server, "POST", "/move", {"Content-Length": str(10**9)} | as_json)
    assert status == 413
    status, body = raw_call(onnx_server, "POST", "/move", as_json)
    assert status == 411 and "Content-Length required" in body["error"]
    status, body = raw_call(onnx_server, "POST", "/move", {"Transfer-Encoding": "chunked"} | as_json, b"2\r\n{}\r\n0\r\n\r\n")
    assert status == 411 and "chunked" in body["error"]
    for bad in ("abc", "-1", "1e3", "12 34"):  # refused by the HTTP parser, before the application
        status, body = raw_call(onnx_server, "POST", "/move", {"Content-Length": bad} | as_json)
        assert status == 400 and "Content-Length" in body["error"], bad
    status, body = raw_call(onnx_server, "POST", "/move", {"Content-Length": "0"} | as_json)
    assert status == 400 and "empty body" in body["error"]
    assert call(onnx_server, "/health")[0] == 200


def test_unexpected_failures_are_500_and_the_server_keeps_serving():
    game, req = base_request()
    legal = game.legal_actions()
    illegal = next(a for a in range(112) if a not in legal)
    log = io.StringIO()
    agents = [
        (FunctionAgent(lambda view: 1 // 0, name="crash"), "internal error: ZeroDivisionError"),
        (FunctionAgent(lambda view: illegal, name="cheat"), f"chose action {illegal}, which is not legal"),
    ]
    for agent, message in agents:
        service = BotService(agent)
        with running(service, quiet=False, log=log) as server:
            status, body, _ = call(server, "/move", req)
            assert status == 500 and message in body["error"], body
            assert call(server, "/health")[0] == 200
            service.agent = FunctionAgent(lambda view: view.legal_actions[0])
            status, body, _ = call(server, "/move", req)
            assert status == 200 and body["action"] == legal[0]
    lines = [line for line in log.getvalue().splitlines() if re.fullmatch(r"(GET|POST) /\S* \d{3} \d+\.\d ms", line)]
    # a request is logged once answered, so two quick requests may log in either order
    assert sorted(" ".join(line.split()[:3]) for line in lines) == sorted(
        ["POST /move 500", "GET /health 200", "POST /move 200"] * 2
    )
    assert "ZeroDivisionError" in log.getvalue()  # the traceback of the unexpected failure


def test_quiet_logs_nothing_and_cors_is_opt_in():
    log = io.StringIO()
    with running("greedy", quiet=True, log=log) as server:
        assert call(server, "/health")[0] == 200
        assert "Access-Control-Allow-Origin" not in call(server, "/health")[2]
    assert log.getvalue() == ""
    with running("greedy", cors="*") as server:
        status, _, headers = call(server, "/move", method="OPTIONS")
        assert status == 204 and headers["Access-Control-Allow-Origin"] == "*"
        assert "POST" in headers["Access-Control-Allow-Methods"]


def test_policy_arguments():
    assert resolve_policy_spec("models/a.onnx") == "onnx:models/a.onnx"
    assert resolve_policy_spec("run/final.zip") == "ppo:run/final.zip"
    assert resolve_policy_spec("snap.NPZ") == "ppo:snap.NPZ"
    assert resolve_policy_spec("ismcts:iters=100") == "ismcts:iters=100"
    assert resolve_policy_spec("onnx:x.onnx") == "onnx:x.onnx"
    with pytest.raises(ValueError, match="policy file not found"):
        BotService("missing/model.onnx")
    with pytest.raises(ValueError, match="unknown agent"):
        BotService("nonsense")


def test_cli_prints_the_url_and_stops_cleanly_on_ctrl_c():
    proc = subprocess.Popen(
        [sys.executable, "-m", "allfives.cli.main", "serve", "--policy", "greedy", "--port", "0"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+", line).group(0)
        with urllib.request.urlopen(url + "/health", timeout=10) as resp:
            assert json.loads(resp.read())["policy"] == "greedy"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "GET /health 200" in err and "stopped" in err
    out = run_cli("serve", "--policy", "nope.onnx", cwd=ROOT, timeout=60)
    assert out.returncode == 2 and "policy file not found: nope.onnx" in out.stderr


# -- move analysis ---------------------------------------------------------------------


def test_analyze_answers_every_legal_move_within_the_caps(expert_server):
    jsonschema = pytest.importorskip("jsonschema")
    game, seat = next(positions(Rules.make(num_players=2), 1, 7, every=4))
    body = request_of(game, seat)
    del body["explain"]
    status, result, _ = call(expert_server, "/analyze", dict(body, worlds=40, playout="expert", seed=3))
    assert status == 200, result
    view = view_from_history(game.rules, seat, body["hand"], body["history"], body["scores"])
    assert sorted(m["action"] for m in result["moves"]) == sorted(view.legal_actions)
    assert all(m["points"] == view.points_of(m["action"]) and m["value_low"] <= m["value"] <= m["value_high"] for m in result["moves"])
    assert result["worlds"] <= 40 and result["policy"] == "expert"
    doc = openapi()
    schemas = doc["components"]["schemas"]
    response = json.loads(json.dumps({"$defs": schemas, **schemas["AnalyzeResponse"]}).replace("#/components/schemas/", "#/$defs/"))
    jsonschema.Draft202012Validator(response).validate(result)
    again = call(expert_server, "/analyze", dict(body, worlds=40, playout="expert", seed=3))[1]
    assert (again["moves"] == result["moves"]) or again["worlds"] != result["worlds"], "same seed, same worlds"
    for change, message in [
        ({"worlds": 10_000}, "worlds must be an integer in 1..200 (this server's cap)"),
        ({"worlds": "lots"}, "worlds must be an integer"),
        ({"playout": "ppo:/etc/passwd"}, "playout must be one of greedy, expert, random"),
        ({"seed": -1}, "seed must be a non-negative integer"),
        ({"belief": "/etc/passwd"}, "belief must be a shipped model's name"),
        ({"belief": 3}, "belief must be a shipped model's name"),
        ({"belief": "allfives_4p"}, "belief: the policy allfives_4p was trained for 4 players"),
        ({"explain": True}, "unknown field(s) 'explain'; a analyze request has"),
        ({"hand": body["hand"] + body["hand"][:1]}, "appears twice"),
    ]:
        status, error, _ = call(expert_server, "/analyze", dict(body, **change))
        assert status in (400, 422) and message in error["error"], (change, error)
    weighed = call(expert_server, "/analyze", dict(body, worlds=40, seed=3, belief="allfives_2p"))[1]
    assert weighed["belief"] == "allfives_2p" and 0 < weighed["effective_worlds"] <= weighed["worlds"]
    jsonschema.Draft202012Validator(response).validate(weighed)
    with running("expert", analyze_worlds=5, analyze_seconds=0.01) as tight:
        status, capped, _ = call(tight, "/analyze", dict(body, worlds=5))
        assert status == 200 and 1 <= capped["worlds"] <= 5
        assert call(tight, "/analyze", dict(body, worlds=6))[0] == 422


def test_a_body_that_is_not_json_by_its_content_type_is_415(expert_server):
    game, seat = next(positions(Rules.make(num_players=2), 1, 3, every=5))
    data = json.dumps(request_of(game, seat)).encode()
    for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
        status, body = raw_call(expert_server, "POST", "/move", {"Content-Type": kind, "Content-Length": str(len(data))}, data)
        assert status == 415 and body["error"] == f"Content-Type must be application/json, got {kind!r}"
    for kind in ("application/json", "application/json; charset=utf-8", "application/vnd.api+json"):
        status, body = raw_call(expert_server, "POST", "/move", {"Content-Length": str(len(data)), "Content-Type": kind}, data)
        assert status == 200, (kind, body)
    # without a Content-Type a POST is what any web page can send another site ("simple" request): refused
    status, body = raw_call(expert_server, "POST", "/move", {"Content-Length": str(len(data))}, data)
    assert status == 415 and "a POST without one is refused" in body["error"]


def test_requests_the_http_parser_refuses_get_json_errors_too(expert_server):
    """A request line or framing that h11 cannot parse never reaches the application: the server's
    protocol answers it, in JSON as well, and closes the connection."""
    host, port = expert_server.server_address[:2]
    for raw in (b"GARBAGE\r\n\r\n", b"POST /move HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"):
        with socket.create_connection((host, port), timeout=10) as sock:
            sock.sendall(raw)
            answer = b""
            while chunk := sock.recv(4096):
                answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400") and b"application/json" in head
        assert json.loads(body)["error"].startswith("malformed HTTP request: ")
    assert call(expert_server, "/health")[0] == 200


def test_a_named_bot_serves_each_game_with_its_setting_and_refuses_another():
    from allfives_agents import make_agent
    from allfives_agents.bots import bot_spec

    service = BotService("fast", seed=0)
    assert service.name == "fast" and service.policy_rules is None
    for rules in (Rules.make(num_players=3), Rules.make(num_players=4)):
        for game, seat in positions(rules, 1, 2, every=5):
            answer = service.move(request_of(game, seat))
            view = game.view(seat)
            assert answer["action"] == make_agent(bot_spec("fast", rules.num_players, rules.partnerships)).act(view)
    game = Game(Rules.make(num_players=4, partnerships=False), seed=1)
    with pytest.raises(ApiError, match="bot 'fast' has no setting for 4 players, cut-throat") as error:
        service.move(request_of(game, game.current_player))
    assert error.value.status == 422


def test_the_request_log_escapes_what_could_forge_a_line_or_colour_a_terminal():
    from allfives.server.asgi import log_text

    log = io.StringIO()
    with running("greedy", quiet=False, log=log) as server:
        for path in ("/nope%0d%0aPOST%20/api/games/forged%20200%201.0%20ms", "/x%1b[31mred%00%C3%A9"):
            status, _, _ = call(server, path)
            assert status == 404
    text = log.getvalue()
    assert "\x1b" not in text and "\x00" not in text and "\r" not in text
    lines = [line for line in text.splitlines() if line.strip()]
    assert not any(line.startswith("POST /api/games/forged") for line in lines), lines
    assert any("/nope\\r\\nPOST /api/games/forged 200 1.0 ms 404" in line for line in lines), lines
    assert any("/x\\x1b[31mred\\x00\\xe9 404" in line for line in lines), lines
    assert log_text("a\\b\n") == "a\\\\b\\n"


# -- limits: slow clients, connection caps, the Host header --------------------------------

#: seconds within which a timed-out connection must be closed (the timeouts below are 1 s; the
#: machine running the tests may be loaded)
CLOSED_WITHIN = 8.0


def connect(server, source: str = "127.0.0.1") -> socket.socket:
    """A raw connection to ``server`` from the loopback address ``source`` (``127.0.0.2`` is another
    client: Linux routes all of 127.0.0.0/8 to this machine)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((source, 0))
    except OSError:
        sock.close()
        pytest.skip(f"cannot send from {source} on this system")
    sock.settimeout(CLOSED_WITHIN + 5)
    sock.connect(server.server_address[:2])
    return sock


def until_closed(sock: socket.socket) -> tuple[bytes, float]:
    """What the server sends until it closes the connection, and after how many seconds."""
    start, data = time.monotonic(), b""
    try:
        while chunk := sock.recv(4096):
            data += chunk
    except ConnectionResetError:
        pass
    return data, time.monotonic() - start


def answer_of(data: bytes) -> tuple[int, dict]:
    """The status and the JSON body of one raw answer."""
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def trickle(sock: socket.socket, data: bytes, every: float = 0.2) -> threading.Thread:
    """Send ``data`` a byte at a time (a slow client) in a thread, until done or refused."""

    def send() -> None:
        for i in range(len(data)):
            try:
                sock.send(data[i:i + 1])
            except OSError:
                return
            time.sleep(every)

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread


def test_headers_that_trickle_in_get_a_408_and_a_silent_connection_is_closed():
    with running("greedy", limits=Limits(header_timeout=1, idle_timeout=60)) as server:
        slow, silent = connect(server), connect(server)
        with slow, silent:
            # a byte every 0.2 s: the headers would take 7 s, and each byte must not restart the clock
            sender = trickle(slow, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            data, seconds = until_closed(slow)
            status, body = answer_of(data)
            assert status == 408 and body["error"] == "the request line and headers did not arrive within 1 s (--header-timeout)"
            assert seconds < CLOSED_WITHIN
            data, seconds = until_closed(silent)  # not a byte sent: closed without an answer
            assert data == b"" and seconds < CLOSED_WITHIN
            sender.join(10)
        assert call(server, "/health")[0] == 200


def test_bodies_that_trickle_in_get_a_408_or_413_in_time():
    head = "POST /move HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n"
    with running("greedy", limits=Limits(body_timeout=1)) as server:
        with connect(server) as short:
            short.sendall(head.format(10).encode() + b'{"se')
            data, seconds = until_closed(short)
            status, body = answer_of(data)
            assert status == 408 and body["error"] == "the body did not arrive within 1 s (--body-timeout)"
            assert b"connection: close" in data.lower() and seconds < CLOSED_WITHIN
        with connect(server) as large:  # over the limit: read (to answer it) for at most the body timeout
            large.sendall(head.format(200_000).encode() + b" " * 1000)
            sender = trickle(large, b" " * 100)
            data, seconds = until_closed(large)
            status, body = answer_of(data)
            assert status == 413 and "200000 bytes is over the limit of 65536" in body["error"]
            assert seconds < CLOSED_WITHIN
            sender.join(30)
        assert call(server, "/health")[0] == 200


def test_a_kept_alive_connection_is_closed_after_the_idle_timeout():
    with running("greedy", limits=Limits(idle_timeout=1)) as server:
        with connect(server) as sock:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            data, seconds = until_closed(sock)
        assert data.startswith(b"HTTP/1.1 200") and b"connection: close" not in data.lower()
        assert seconds < CLOSED_WITHIN


def served(sock: socket.socket) -> bool:
    """Whether a ``GET /health`` on this kept-alive connection gets a 200."""
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    return sock.recv(4096).startswith(b"HTTP/1.1 200")


def test_a_connection_over_its_clients_cap_gets_a_429_as_it_opens():
    with running("greedy", limits=Limits(max_client_connections=2)) as server:
        first, second = connect(server), connect(server)
        assert served(first) and served(second)  # kept alive: both still count
        with connect(server) as third:
            status, body = answer_of(until_closed(third)[0])
        assert status == 429 and body["error"].startswith("client 127.0.0.1 holds 2 open connections, the limit per client")
        with connect(server, "127.0.0.2") as other:  # another client still gets in
            assert served(other)
        first.close()
        second.close()
        deadline = time.monotonic() + CLOSED_WITHIN
        while True:  # the server sees the closes soon after
            with connect(server) as again:
                if served(again):
                    break
            assert time.monotonic() < deadline, "the closed connections were never released"
            time.sleep(0.1)


def test_at_the_total_cap_a_new_connection_replaces_the_longest_waiting_one():
    gate = threading.Event()
    agent = FunctionAgent(lambda view: gate.wait(60) and view.legal_actions[0], name="slow")
    _, req = base_request()
    data = json.dumps(req).encode()
    move = (f"POST /move HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n").encode() + data
    with running(BotService(agent), limits=Limits(max_connections=2)) as server:
        idle = connect(server)
        assert served(idle)  # then waits for its next request
        slow = connect(server, "127.0.0.2")
        slow.sendall(b"GET /health HTTP/1.1\r\n")  # a head that never ends
        with idle, slow:
            busy = connect(server, "127.0.0.3")
            assert served(busy)  # in the place of the longest waiting: the idle one
            assert until_closed(idle)[0] == b""
            other = connect(server, "127.0.0.4")  # in the place of the slow one
            assert until_closed(slow)[0] == b""
            with busy, other:
                busy.sendall(move)
                other.sendall(move)
                deadline = time.monotonic() + 30  # until both have a request being answered (the agent waits for the gate)
                while any(c.waiting_since() is not None for c in list(server.caps.members)):
                    assert time.monotonic() < deadline
                    time.sleep(0.02)
                with connect(server, "127.0.0.5") as refused:
                    status, body = answer_of(until_closed(refused)[0])
                assert status == 503 and "limit of 2 open connections (--max-connections), each with a request being answered" in body["error"]
                gate.set()
                assert busy.recv(4096).startswith(b"HTTP/1.1 200") and other.recv(4096).startswith(b"HTTP/1.1 200")


def host_call(server, host: str, method: str = "GET", path: str = "/health", body: bytes | None = None):
    """``(status, JSON body)`` of a request with this Host header."""
    conn = http.client.HTTPConnection(*server.server_address[:2], timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host)
        if body is not None:
            conn.putheader("Content-Type", "application/json")
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


def test_the_host_header_must_name_this_server():
    _, req = base_request()
    with running("greedy") as server:
        port = server.server_address[1]
        for good in (f"127.0.0.1:{port}", f"localhost:{port}", "LOCALHOST", f"[::1]:{port}", "127.0.0.1"):
            assert host_call(server, good)[0] == 200, good
        status, body = host_call(server, f"attacker.example:{port}")
        assert status == 400 and body["error"].startswith(f"Host 'attacker.example:{port}' is not a name of this server")
        assert "--allowed-hosts" in body["error"] and "DNS rebinding" in body["error"]
        status, body = host_call(server, "attacker.example", "POST", "/move", json.dumps(req).encode())
        assert status == 400 and "not a name of this server" in body["error"]  # nothing reaches the agent
        for bad in ("a b", "x:y", "[::1"):
            status, body = host_call(server, bad)
            assert status == 400 and body["error"].startswith("invalid Host header"), bad
    with running("greedy", allowed_hosts=["bots.example", "*.lan"]) as server:
        assert host_call(server, "bots.example:443")[0] == 200
        assert host_call(server, "box.lan")[0] == 200
        assert host_call(server, "other.example")[0] == 400
    with running("greedy", allowed_hosts="*") as server:
        assert host_call(server, "anything.example")[0] == 200
    everywhere = HostCheck("0.0.0.0")  # bound to every interface: any address, never a stranger's name
    assert everywhere.refusal("192.168.1.9:8000") is None and everywhere.refusal("[fe80::1]") is None
    assert "not a name of this server" in everywhere.refusal("rebind.attacker.example")


def test_the_limit_flags_are_checked_by_name():
    for args, message in [(("--header-timeout", "0"), "--header-timeout must be in (0, 3600] seconds, got 0"),
                          (("--max-client-connections", "0"), "--max-client-connections must be at least 1"),
                          (("--behind-proxy", "proxy.example"), "--behind-proxy: not an IP address or network"),
                          (("--allowed-hosts", "bots.example,a b"), "--allowed-hosts: 'a b': it is not a host name")]:
        out = run_cli("serve", "--policy", "greedy", *args, cwd=ROOT, timeout=60)
        assert out.returncode == 2 and message in out.stderr, (args, out.stderr)
