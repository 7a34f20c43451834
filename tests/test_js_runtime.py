"""allfives/web/static/allfives.js, the JavaScript runtime, against Python, under Node.

- **Parity**: 12,000 positions of 2, 3 and 4 players under several rule sets (from games played by
  random moves and by the shipped policies), sent as the plain data of docs/frontends.md to one node
  process (JSON lines, tests/js/parity.mjs): the observation of ``OBS_VERSION`` (the shipped
  policies') and the action mask must be Python's bit for bit, and the move picked through
  onnxruntime-web with the shipped model of that player count must be the Python ``onnx:`` agent's.
  A few hundred more check each earlier version.
- **Rules**: whole games played in JavaScript (tests/js/play_games.mjs, random moves) must replay in
  the Python engine event for event with the same hand results and scores, and the position the JS
  game gives before each placement must be the one Python builds from its view.
- **Example**: docs/examples/play_onnx.mjs plays a whole game of the 2-player model against itself;
  its record replays in Python, and every move it made is the Python agent's move there.

Node and ``npm ci`` (package.json: onnxruntime-web) are needed; without them the tests skip, unless
``ALLFIVES_REQUIRE_NODE`` is set (``.ci/run`` sets it): then they fail.
"""

import base64
import json
import os
import random
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from allfives_agents.nets.onnx_agent import OnnxAgent
from allfives_env.engine import Game, Rules
from allfives_env.engine.record import replay_positions, replay_record
from allfives_env.engine.tiles import action_id
from allfives_env.engine.events import play_end
from allfives_env.observation import ALL_PIECES, OBS_SIZES, OBS_VERSION, OFFSETS, action_mask, encoder
from test_frontend_js import position_of

ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")
ORT = ROOT / "node_modules" / "onnxruntime-web" / "package.json"
REQUIRE_NODE = os.environ.get("ALLFIVES_REQUIRE_NODE", "") not in ("", "0")
MODELS = {n: ROOT / "models" / f"allfives_{n}p.onnx" for n in (2, 3, 4)}

RULE_SETS = [
    dict(num_players=2),
    dict(num_players=2, hand_size="five", hand_end="winner_takes", target_score=100),
    dict(num_players=2, boneyard_reserve=4, target_score=150),
    dict(num_players=3),
    dict(num_players=3, boneyard_reserve=2, hand_end="winner_takes"),
    dict(num_players=4),
    dict(num_players=4, hand_end="winner_takes", target_score=150),
    dict(num_players=4, partnerships=False, hand_size="five", target_score=600),
]


@pytest.fixture(scope="module")
def node():
    missing = None
    if NODE is None:
        missing = "node is not on PATH (apt-get install nodejs npm)"
    elif not ORT.exists():
        missing = "onnxruntime-web is not installed (npm ci)"
    if missing:
        if REQUIRE_NODE:
            pytest.fail(f"the JavaScript runtime tests need {missing}; ALLFIVES_REQUIRE_NODE is set")
        pytest.skip(missing)
    return NODE


def run_node(node, script: str, lines: list[str], *args: str, timeout: float = 300) -> list[dict]:
    out = subprocess.run([node, script, *args], input="\n".join(lines) + "\n", capture_output=True, text=True,
                         cwd=ROOT, timeout=timeout, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def sample_positions(count: int, seed: int):
    """``count`` views, a third each of 2, 3 and 4 players, from games under ``RULE_SETS`` (at most
    120 views a game): the seat to act at about half of the decisions, another seat's view at a few.
    Half the games are played by random moves, half by the shipped policy of the player count with
    one move in ten random (positions a policy meets)."""
    rng = random.Random(seed)
    agents = {n: OnnxAgent(MODELS[n]) for n in MODELS}
    quota = {n: count // 3 + (1 if n - 2 < count % 3 else 0) for n in MODELS}
    out = []
    game_no = 0
    while len(out) < count:
        options = RULE_SETS[game_no % len(RULE_SETS)]
        game_no += 1
        n = options["num_players"]
        if quota[n] == 0:
            continue
        rules = Rules.make(**options)
        by_policy = game_no % 2 == 0
        game = Game(rules, rng.randrange(2**31))
        taken = 0
        while not game.over and quota[n] and taken < 120:
            x = rng.random()
            if x < 0.56:
                out.append(game.view(game.current_player if x < 0.5 else rng.randrange(n)))
                quota[n] -= 1
                taken += 1
            view = game.view(game.current_player)
            policy_move = by_policy and rng.random() >= 0.1
            game.step(agents[n].act(view) if policy_move else rng.choice(view.legal_actions))
    return out, agents


def floats(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), np.float32)


def test_observation_mask_and_policy_move_equal_pythons_on_12000_positions(node):
    views, agents = sample_positions(12_000, seed=20260601)
    lines = [json.dumps({"models": {str(n): str(p) for n, p in MODELS.items()}})]
    for i, view in enumerate(views):
        to_act = bool(view.legal_actions)
        # points of the legal moves are left out of every third position: the runtime computes them
        lines.append(json.dumps({"position": position_of(view, with_points=i % 3 != 0),
                                 "model": str(view.rules.num_players) if to_act else None}))
    answers = run_node(node, "tests/js/parity.mjs", lines)
    assert answers[0] == {"ready": True, "obs_versions": {"2": OBS_VERSION, "3": OBS_VERSION, "4": OBS_VERSION}}
    assert len(answers) == len(views) + 1
    covered = np.zeros(OBS_SIZES[OBS_VERSION], bool)
    encode = encoder(OBS_VERSION)
    players = Counter()
    ran_graph = Counter()
    for view, got in zip(views, answers[1:]):
        want = encode(view)
        obs = floats(got["obs"])
        assert obs.shape == (OBS_SIZES[OBS_VERSION],)
        bad = np.flatnonzero(obs != want)
        assert bad.size == 0, f"JS and Python differ at {[(int(i), float(obs[i]), float(want[i])) for i in bad[:5]]}"
        np.testing.assert_array_equal(floats(got["mask"]), action_mask(view).astype(np.float32))
        covered |= want != 0
        n = view.rules.num_players
        players[n] += 1
        if view.legal_actions:
            assert got["action"] == agents[n].act(view), f"move of a {n}-player position"
            ran_graph[n] += len(view.legal_actions) > 1
        else:
            assert "action" not in got
    assert sum(players.values()) == 12_000 and set(players.values()) == {4000}, players
    assert min(ran_graph.values()) >= 2000, ran_graph  # positions where the network chose among several moves
    # the sample exercises every piece of the vector
    for piece in (p for p in ALL_PIECES if OFFSETS[p.name] < OBS_SIZES[OBS_VERSION]):
        assert covered[OFFSETS[piece.name] : OFFSETS[piece.name] + piece.size].any(), piece.name
    assert covered[OFFSETS["forced"]] and covered[OFFSETS["arm_open"] + 2] and covered[OFFSETS["partner_reply"]:].any()


@pytest.mark.parametrize("version", [v for v in OBS_SIZES if v != OBS_VERSION])
def test_the_other_versions_equal_pythons(node, version):
    views, _ = sample_positions(400, seed=5)
    lines = [json.dumps({"models": {}})] + [json.dumps({"position": position_of(v), "version": version}) for v in views]
    answers = run_node(node, "tests/js/parity.mjs", lines)
    assert len(answers) == len(views) + 1
    for view, got in zip(views, answers[1:]):
        np.testing.assert_array_equal(floats(got["obs"]), encoder(version)(view))


def test_a_bad_position_or_model_is_refused_with_a_message(node, tmp_path):
    script = tmp_path / "refuse.mjs"
    runtime = (ROOT / "allfives" / "web" / "static" / "allfives.js").as_uri()
    script.write_text(f"""
import * as ort from "{(ROOT / 'node_modules' / 'onnxruntime-web' / 'dist' / 'ort.node.min.mjs').as_uri()}";
import {{ encodeObservation, loadPolicy, playersProblem, resolveRules }} from "{runtime}";
const errors = [];
for (const bad of [{{seat: 0, hand: [[7, 1]]}}, {{seat: 3, hand: []}}, {{rules: {{num_players: 5}}, seat: 0, hand: []}}]) {{
  try {{ encodeObservation(bad); errors.push(null); }} catch (e) {{ errors.push(e.message); }}
}}
try {{ await loadPolicy(ort, new Uint8Array([8, 7, 18, 1, 65])); errors.push(null); }} catch (e) {{ errors.push(String(e.message ?? e)); }}
const four = await loadPolicy(ort, (await import("node:fs")).readFileSync({json.dumps(str(MODELS[4]))}));
errors.push(playersProblem(four, {{num_players: 2}}), playersProblem(four, resolveRules({{num_players: 4}})));
process.stdout.write(JSON.stringify(errors));
""")
    [errors] = run_node(node, str(script), [])
    assert "not a tile" in errors[0] and "seat must be 0..1" in errors[1] and "num_players must be 2, 3 or 4" in errors[2]
    assert errors[3]  # not an ONNX policy
    assert errors[4] == "the policy was trained for 4 players in partnerships, not 2 players" and errors[5] is None


def check_js_games(games: list[dict]) -> int:
    """Replay each JS game in Python (``replay_record`` checks every event, result and score) and
    compare the JS position before each placement with Python's; the number of positions compared."""
    compared = 0
    for i, game in enumerate(games):
        replayed = replay_record(game["record"], name=f"JS game {i}")
        assert replayed.over and replayed.complete and max(replayed.scores) >= replayed.rules.target_score
        steps = replay_positions(replayed)
        assert len(steps) == len(game["positions"])
        for (_, _, view, _), js_position in zip(steps, game["positions"]):
            assert js_position == position_of(view)
            compared += 1
    return compared


def test_games_played_in_javascript_replay_in_the_python_engine(node):
    games = [{"rules": RULE_SETS[i % len(RULE_SETS)], "seed": 1000 + i} for i in range(24)]
    played = run_node(node, "tests/js/play_games.mjs", [json.dumps({"games": games})])
    assert len(played) == len(games)
    compared = check_js_games(played)
    outcomes = Counter(h["result"]["outcome"] for g in played for h in g["record"]["hands"])
    draws = sum(e["type"] == "draw" for g in played for h in g["record"]["hands"] for e in h["events"])
    passes = sum(e["type"] == "pass" for g in played for h in g["record"]["hands"] for e in h["events"])
    assert compared > 2000 and draws > 100 and passes > 20, (compared, draws, passes)
    assert set(outcomes) == {"domino", "blocked", "target"}, outcomes


def test_the_node_example_plays_a_whole_game_as_the_python_agent_would(node, tmp_path):
    record = tmp_path / "game.json"
    out = subprocess.run([node, "docs/examples/play_onnx.mjs", "--seed", "3", "--record", str(record)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert f"observation version {OBS_VERSION} ({OBS_SIZES[OBS_VERSION]} values), 2 players, target 250" in out.stdout
    game = replay_record(json.loads(record.read_text()))
    assert game.complete and max(game.scores) >= 250
    assert f"final scores {game.scores[0]}-{game.scores[1]}; side {game.winner} wins" in out.stdout
    agent = OnnxAgent(MODELS[2])
    moves = 0
    for _, placement, view, event in replay_positions(game):
        assert action_id(event[2], play_end(event[3], placement == 0)) == agent.act(view)
        moves += 1
    assert moves > 20
