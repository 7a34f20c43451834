"""The picture of a position (allfives_env.picture): what it draws, SVG and RGB, and the envs' rgb_array."""

import random
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allfives_env.engine import Game, Rules
from allfives_env.engine.tiles import CLOSED, TILES, mask_tiles
from allfives_env.observation import OBS_SIZES, OBS_VERSION
from allfives_env.picture import HEIGHT, TILE_FACE, WIDTH, Circle, Picture, Rect, _line_pieces, rgb, scene, svg, to_svg

VARIANTS = [dict(num_players=2), dict(num_players=3), dict(num_players=4), dict(num_players=4, partnerships=False)]


def random_views(options, seed, every=3):
    rng = random.Random(seed)
    game = Game(Rules.make(**options), seed, max_hands=1)
    i = 0
    while not game.over:
        view = game.view(game.current_player)
        if i % every == 0:
            yield view
        i += 1
        game.step(rng.choice(view.legal_actions))


def tiles_drawn(picture):
    return [s for s in picture.shapes if isinstance(s, Rect) and s.fill == TILE_FACE]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), options=st.sampled_from(VARIANTS))
def test_every_tile_is_drawn_once_with_its_pips_and_nothing_overlaps(seed, options):
    for view in random_views(options, seed):
        picture = scene(view)
        on_table = mask_tiles(view.played)
        assert len(tiles_drawn(picture)) == len(on_table) + len(view.hand_tiles)
        pips = sum(isinstance(s, Circle) for s in picture.shapes)
        assert pips == sum(sum(TILES[t]) for t in on_table + view.hand_tiles)
        if view.lead < 0:
            continue
        pieces = _line_pieces(view)
        assert sorted(p.tile for p in pieces) == sorted(on_table)
        boxes = [(p.x, p.y, p.x + (1 if p.vertical else 2), p.y + (2 if p.vertical else 1)) for p in pieces]
        for i, a in enumerate(boxes):
            for b in boxes[i + 1 :]:
                overlap = min(a[2], b[2]) - max(a[0], b[0]) > 1e-9 and min(a[3], b[3]) - max(a[1], b[1]) > 1e-9
                assert not overlap, (a, b, view.arms)
        # the outermost half of each arm shows the pip its end shows
        arms = view.arms
        by_tile = {p.tile: p for p in pieces}
        for e, outer in ((0, lambda p: p.first), (1, lambda p: p.second), (2, lambda p: p.first), (3, lambda p: p.second)):
            if view.pips[e] != CLOSED and arms[e]:
                assert outer(by_tile[arms[e][-1]]) == view.pips[e]


def test_a_spinner_led_with_all_four_arms():
    """Lead 5-5, then both sides and both ends: the arms lie west, east, north and south of it."""
    from helpers import A, game_from

    game = game_from([["5-5", "5-0", "5-1", "6-6"], ["5-2", "5-3", "4-4", "0-0"]], starter=0, hand_size=4, boneyard_reserve=20)
    for action in (A("5-5", "lead"), A("2-5", "west"), A("0-5", "east"), A("3-5", "north"), A("1-5", "south")):
        game.step(action)
    view = game.view(0)
    pieces = _line_pieces(view)
    where = {TILES[p.tile]: (p.x, p.y, p.vertical) for p in pieces}
    assert where[(5, 5)] == (-0.5, -1.0, True)  # crosswise in the middle
    assert where[(2, 5)] == (-2.5, -0.5, False) and where[(0, 5)] == (0.5, -0.5, False)
    assert where[(3, 5)] == (-0.5, -3.0, True) and where[(1, 5)] == (-0.5, 1.0, True)
    first = {TILES[p.tile]: (p.first, p.second) for p in pieces}
    assert first[(2, 5)] == (2, 5) and first[(0, 5)] == (5, 0)  # inner halves towards the spinner
    assert first[(3, 5)] == (3, 5) and first[(1, 5)] == (5, 1)


def test_svg_and_rgb_are_the_same_scene():
    view = next(v for v in random_views(dict(num_players=4), seed=8) if bin(v.played).count("1") > 6)
    picture = scene(view)
    root = ET.fromstring(to_svg(picture))
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == f"{ns}svg" and root.get("width") == str(WIDTH)
    assert len(root.findall(f"{ns}circle")) == sum(isinstance(s, Circle) for s in picture.shapes)
    assert len(root.findall(f"{ns}rect")) == sum(isinstance(s, Rect) for s in picture.shapes)
    texts = [t.text for t in root.findall(f"{ns}text")]
    assert any(f"seen by player {view.seat}" in t for t in texts)
    frame = rgb(view)
    assert frame.shape == (HEIGHT, WIDTH, 3) and frame.dtype == np.uint8
    # a tile's face colour is painted where the scene puts a tile
    tile = tiles_drawn(picture)[1]
    x, y = int(tile.x + tile.w * 0.5), int(tile.y + tile.h * 0.3)
    assert tuple(frame[y, x]) == (0xFB, 0xF8, 0xEF)
    assert Picture(view)._repr_svg_() == svg(view)
    assert view._repr_svg_() == svg(view)  # a view shows as its picture in a notebook


def test_views_draw_in_notebooks_without_the_engine_importing_the_picture():
    code = (
        "import sys\n"
        "from allfives_env.engine import Game\n"
        "view = Game(seed=3).view(0)\n"
        "assert 'allfives_env.picture' not in sys.modules and 'numpy' not in sys.modules\n"
        "assert view._repr_svg_().startswith('<svg')\n"
        "assert 'allfives_env.picture' in sys.modules\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_the_envs_render_rgb_array_frames_and_sb3_defaults_work(tmp_path):
    from stable_baselines3.common.env_util import make_vec_env

    import allfives_env

    single = allfives_env.SingleAgentEnv(render_mode="rgb_array")
    assert single.render() is None
    single.reset(seed=1)
    assert single.render().shape == (HEIGHT, WIDTH, 3)
    aec = allfives_env.env(num_players=3, render_mode="rgb_array")
    assert aec.unwrapped.render() is None  # (PettingZoo's order wrapper refuses a render before reset)
    aec.reset(seed=1)
    assert aec.render().shape == (HEIGHT, WIDTH, 3)
    with pytest.raises(ValueError, match="render_mode"):
        allfives_env.SingleAgentEnv(render_mode="svg")
    vec = make_vec_env("AllFives-v0", n_envs=2)  # SB3 asks for render_mode="rgb_array" by default
    assert vec.reset().shape == (2, OBS_SIZES[OBS_VERSION])
    assert [f.shape for f in vec.get_images()] == [(HEIGHT, WIDTH, 3)] * 2
    vec.close()


@pytest.mark.slow
def test_record_video_films_a_game(tmp_path):
    pytest.importorskip("moviepy")
    import gymnasium as gym

    import allfives_env  # noqa: F401 (registers the ids)

    env = gym.wrappers.RecordVideo(gym.make("AllFives-v0", render_mode="rgb_array", target_score=60), str(tmp_path),
                                   episode_trigger=lambda episode: True, disable_logger=True)
    obs, info = env.reset(seed=2)
    done = False
    while not done:
        obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        done = terminated or truncated
    env.close()
    videos = list(tmp_path.glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 1000


def test_replay_writes_a_page_that_steps_through_the_game(tmp_path):
    import json

    from allfives_env.engine import PLAY
    from allfives_env.engine.record import replay_file

    from helpers import run_cli

    records = tmp_path / "games.jsonl"
    assert run_cli("simulate", "--games", "2", "--seed", "4", "--players", "4", "--records", records).returncode == 0
    out = tmp_path / "game.html"
    result = run_cli("replay", records, "--html", out, "--game", "2")
    assert result.returncode == 0, result.stderr
    page = out.read_text()
    _, game = list(replay_file(records))[1]
    placements = sum(e[0] == PLAY for log in game.hand_logs for e in log.events)
    assert page.count("<svg") == placements + 1, "one picture per position, and the end"
    captions = json.loads(page.split("captions = ")[1].split(";\n")[0])
    assert len(captions) == placements + 1 and captions[-1].startswith(f"final scores {game.scores}")
    # a picture is the position before its move: its caption names the seat to move, then the move
    first = game.hand_logs[0]
    assert captions[0] == f"hand 1: player {first.starter} to move; next: player {first.starter} leads " + captions[0].split(" leads ")[1]
    assert "http" not in page.replace("http://www.w3.org/2000/svg", ""), "no network at run time"
    missing = run_cli("replay", records, "--html", tmp_path / "x.html", "--game", "3")
    assert missing.returncode == 2 and "the files hold 2 games" in missing.stderr and not (tmp_path / "x.html").exists()
