"""docs/examples/observation.js builds the same observation vector as the Python encoder.

The JavaScript encoder of docs/frontends.md is run with node on positions from random games (as
the plain data the doc describes) and compared with ``encode(view)``, so the documented spec and
the JavaScript cannot drift apart. Skipped when node is not installed.
"""

import json
import random
import re
import shutil
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

from allfives_env.engine import Game, Rules
from allfives_env.engine.events import event_to_dict, public_event
from allfives_env.engine.position import view_from_history
from allfives_env.engine.tiles import CLOSED, END_NAMES, TILES, mask_tiles
from allfives_env.observation import OBS_SIZE, OFFSETS, PIECES, action_mask, encode

ROOT = Path(__file__).resolve().parent.parent
JS = ROOT / "docs" / "examples" / "observation.js"
DOC = ROOT / "docs" / "frontends.md"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not on PATH")

RULE_SETS = [
    dict(num_players=2),
    dict(num_players=2, hand_size="five", hand_end="winner_takes", target_score=100),
    dict(num_players=3, boneyard_reserve=2),
    dict(num_players=4),
    dict(num_players=4, partnerships=False, hand_size="five", target_score=600),
]


def position_of(view, with_points: bool = True) -> dict:
    """The plain-data position of docs/frontends.md for a ``PlayerView``."""
    first = view.lead < 0
    ends = {}
    for e, name in enumerate(END_NAMES):
        if view.pips[e] != CLOSED:
            ends[name] = {"pip": view.pips[e], "double": bool(view.double_ends >> e & 1), "value": view.values[e]}
    legal = []
    for action, points in zip(view.legal_actions, view.move_points()):
        move = {"tile": list(TILES[action >> 2]), "end": "lead" if first else END_NAMES[action & 3]}
        if with_points:
            move["points"] = points
        legal.append(move)
    return {
        "rules": view.rules.to_dict(),
        "seat": view.seat,
        "hand": [list(TILES[t]) for t in mask_tiles(view.hand)],
        "played": [list(TILES[t]) for t in mask_tiles(view.played)],
        "ends": ends,
        "spinner": None if view.spinner < 0 else {"pip": view.spinner, "covered": view.spinner_covered},
        "forced": view.forced_tile >= 0,
        "tile_counts": list(view.tile_counts),
        "boneyard": view.boneyard_size,
        "drawable": view.drawable,
        "missing_pips": [[p for p in range(7) if m >> p & 1] for m in view.missing_pips],
        "scores": list(view.scores),
        "legal": legal,
    }


def sample_views(count: int, seed: int = 0):
    """Views from random games under several rule sets: mostly the seat to act, some other seats."""
    rng = random.Random(seed)
    views = []
    game_no = 0
    while len(views) < count:
        rules = Rules.make(**RULE_SETS[game_no % len(RULE_SETS)])
        game = Game(rules, rng.randrange(2**31))
        game_no += 1
        while not game.over and len(views) < count:
            if rng.random() < 0.3:
                seat = game.current_player if rng.random() < 0.8 else rng.randrange(rules.num_players)
                views.append(game.view(seat))
            game.step(rng.choice(game.legal_actions()))
    return views


def run_node(script: str, data) -> object:
    out = subprocess.run(
        [NODE, "-e", script, str(JS)], input=json.dumps(data), capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


ENCODE = """
const js = require(process.argv[1]);
let input = "";
process.stdin.on("data", (c) => (input += c));
process.stdin.on("end", () => {
  const positions = JSON.parse(input);
  const out = positions.map((p) => ({obs: Array.from(js.encodeObservation(p)), mask: Array.from(js.actionMask(p))}));
  process.stdout.write(JSON.stringify({size: js.OBS_SIZE, version: js.OBS_VERSION, offsets: js.OFFSETS, out}));
});
"""


def test_js_encoder_matches_python_on_positions_from_random_games():
    views = sample_views(200)
    positions = [position_of(v, with_points=i % 2 == 0) for i, v in enumerate(views)]
    result = run_node(ENCODE, positions)
    assert result["size"] == OBS_SIZE and result["version"] == 1
    assert result["offsets"] == {p.name: OFFSETS[p.name] for p in PIECES}, "the JavaScript builds version 1"
    covered = np.zeros(OBS_SIZE, bool)
    for view, got in zip(views, result["out"]):
        want = encode(view)
        obs = np.asarray(got["obs"], np.float64)
        bad = np.flatnonzero(np.abs(obs - want) > 1e-6)
        assert bad.size == 0, f"JS and Python differ at {[(int(i), obs[i], want[i]) for i in bad[:5]]}"
        np.testing.assert_array_equal(np.asarray(got["mask"]), action_mask(view).astype(float))
        covered |= want != 0
    # the sample exercises every piece of the vector (north/south arms, forced draws, missing pips...)
    for name, size, *_ in PIECES:
        assert covered[OFFSETS[name] : OFFSETS[name] + size].any(), name
    assert covered[OFFSETS["forced"]] and covered[OFFSETS["arm_open"] + 2] and covered[OFFSETS["spinner_sides"] + 1]


def test_js_client_asks_the_bot_server(tmp_path):
    from allfives.server import BotService, make_server

    server = make_server(BotService("greedy"), "127.0.0.1", 0, quiet=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        game = Game(Rules.make(), 5)
        rng = random.Random(2)
        for _ in range(7):
            game.step(rng.choice(game.legal_actions()))
        seat = game.current_player
        request = {
            "seat": seat,
            "hand": [list(TILES[t]) for t in mask_tiles(game.hands[seat])],
            "history": [event_to_dict(public_event(e, seat)) for e in game.events],
            "explain": True,
        }
        script = """
const js = require(process.argv[1]);
let input = "";
process.stdin.on("data", (c) => (input += c));
process.stdin.on("end", async () => {
  const {url, request} = JSON.parse(input);
  const move = await js.requestMove(url, request);
  let error = null;
  try { await js.requestMove(url, {seat: 0}); } catch (e) { error = e.message; }
  process.stdout.write(JSON.stringify({move, error}));
});
"""
        result = run_node(script, {"url": server.url + "/", "request": request})
    finally:
        server.shutdown()
        server.server_close()
    assert result["move"]["action"] in game.legal_actions()
    assert result["error"].startswith("bot server 422") and "hand" in result["error"]


def js_blocks() -> list[str]:
    return re.findall(r"```js\n(.*?)```", DOC.read_text(), flags=re.S)


def test_the_doc_shows_the_js_file_as_it_is():
    shown = [b for b in js_blocks() if "module.exports = {" in b]
    assert shown == [JS.read_text()], "docs/frontends.md must include docs/examples/observation.js unchanged"


def test_the_doc_usage_example_runs_and_encodes_its_position():
    from allfives.server import BotService, make_server

    usage = next(b for b in js_blocks() if 'requestMove("http://127.0.0.1:8000"' in b)
    server = make_server(BotService("greedy"), "127.0.0.1", 0, quiet=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        script = usage.replace("http://127.0.0.1:8000", server.url).replace(
            "console.log(move.tile, move.end)", "console.log(JSON.stringify({obs: Array.from(obs), move}))"
        )
        out = subprocess.run([NODE, "-e", script], cwd=JS.parent, capture_output=True, text=True, timeout=60)
    finally:
        server.shutdown()
        server.server_close()
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    hand = [[0, 3], [1, 4], [2, 6], [0, 5], [3, 3], [4, 6], [1, 1], [2, 2], [6, 6]]
    history = [{"type": "play", "player": 1, "tile": [5, 5], "end": "lead", "points": 10}]
    view = view_from_history(Rules.make(num_players=2), 0, hand, history, [35, 20])
    np.testing.assert_allclose(result["obs"], encode(view), atol=1e-6)
    assert result["move"]["tile"] == [0, 5] and result["move"]["end"] in ("west", "east")
