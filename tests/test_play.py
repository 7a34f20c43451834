"""``allfives play``: a person against the bots, driven by scripted stdin through the real entry point."""

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import A, game_from, run_cli

from allfives_agents import resolve_spec
from allfives_agents.greedy import GreedyAgent
from allfives_env.engine import Game, Rules
from allfives_env.engine.tiles import CLOSED, END_NAMES, TILE_NAMES, TILES
from allfives.play import MoveError, parse_input

ALWAYS_ONE = "1\n" * 600


def play(*args, stdin=""):
    return run_cli("play", "--no-color", *args, stdin=stdin, timeout=60)


def replay(path):
    return run_cli("replay", path, timeout=60)


def test_full_two_player_game_against_random(tmp_path):
    save = tmp_path / "game.json"
    args = ("--players", "2", "--opponent", "random", "--target", "30", "--seed", "11")
    result = play(*args, "--save", str(save), stdin=ALWAYS_ONE)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Traceback" not in out + result.stderr
    assert "your hand:" in out and "open ends:" in out and "tiles in hand:" in out and "boneyard" in out
    assert re.search(r"^  1\) \d-\d (on (west|east|north|south)|lead) \(\+\d+\)$", out, re.M)
    assert re.search(r"^final scores: you -?\d+, player 1 -?\d+$", out, re.M)
    assert re.search(r"^winner: (you|player 1)", out, re.M)
    record = json.loads(save.read_text())
    assert record["format"] == "allfives-record/1" and record["players"] == ["human", "random"]
    assert record["complete"] is True and record["rules"]["target_score"] == 30
    assert replay(save).returncode == 0
    # the same seed and the same answers give the same game
    save2 = tmp_path / "again.json"
    again = play(*args, "--save", str(save2), stdin=ALWAYS_ONE)
    assert again.stdout.split("game record")[0] == out.split("game record")[0]
    assert json.loads(save2.read_text()) == record


def listed_moves(out: str) -> list[str]:
    """The numbered moves of the first "your moves:" list of a play session's output."""
    return re.findall(r"^  (\d+\) .*\(\+\d+\))$", out.split("your moves:")[1].split("your move (")[0], re.M)


def test_hint_lists_every_legal_move_with_points_and_the_bots_choice():
    result = play("--opponent", "expert", "--seed", "3", stdin="hint\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    moves = listed_moves(out)
    hint = out.split("legal moves, points now")[1]
    assert "what expert thinks (score per move)" in hint
    assert moves and all(m in hint for m in moves)
    assert len(re.findall(r"score -?\d+\.\d", hint)) == len(moves)
    assert hint.count("<- bot's choice") == 1


def test_analyze_lists_every_legal_move_with_its_value_and_interval():
    result = play("--opponent", "greedy", "--seed", "3", stdin="analyze\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    moves = listed_moves(out)
    analysis = out.split("playouts by greedy")[1]
    rows = re.findall(r"^\s*(\d-\d (?:lead|on \w+))\s+\d+\s+[-+]\d+\.\d\s+\[[-+]\d+\.\d, [-+]\d+\.\d\]", analysis, re.M)
    assert moves and len(rows) == len(moves), (moves, rows)


def _greedy_first_turn(seed: int):
    """The human's first view in ``play --opponent greedy --seed SEED`` (greedy has no randomness)."""
    game = Game(Rules.make(num_players=2), seed)
    bot = GreedyAgent()
    while game.current_player != 0:
        game.step(bot.act(game.view(game.current_player)))
    return game.view(0)


def _misfit(view):
    """A held tile and an open end it does not fit, as typed input."""
    for t in view.hand_tiles:
        for e in range(4):
            if view.pips[e] != CLOSED and view.pips[e] not in TILES[t] and any(a >> 2 == t for a in view.legal_actions):
                return f"{TILE_NAMES[t]} {END_NAMES[e]}", TILE_NAMES[t], END_NAMES[e]
    return None


def test_bad_inputs_reprompt_with_a_message():
    seed = next(s for s in range(50) if _greedy_first_turn(s).lead >= 0 and _misfit(_greedy_first_turn(s)))
    misfit, tile, end = _misfit(_greedy_first_turn(seed))
    stdin = f"99\n7-7 west\nhello\n{misfit}\n"
    result = play("--opponent", "greedy", "--seed", str(seed), stdin=stdin)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Traceback" not in out + result.stderr
    assert "! there is no move 99" in out
    assert "! 7-7 is not a domino" in out
    assert "! did not understand 'hello'" in out
    assert f"! {tile} does not fit on {end}" in out
    assert out.count("your move (") == 5  # asked again after each bad answer, then EOF
    assert "input closed" in out


def test_eof_mid_game_exits_cleanly_and_saves_a_replayable_record(tmp_path):
    save = tmp_path / "partial.jsonl"
    result = play("--opponent", "random", "--seed", "5", "--save", str(save), stdin="1\n1\n")
    assert result.returncode == 0, result.stderr
    assert "game left unfinished" in result.stdout and "final scores:" in result.stdout
    record = json.loads(save.read_text())
    assert record["complete"] is False and record["winner"] is None
    assert record["players"] == ["human", "random"]
    check = replay(save)
    assert check.returncode == 0, check.stderr


def test_eof_without_save_says_how_to_save():
    result = play("--opponent", "random", "--seed", "5", stdin="")
    assert result.returncode == 0 and "--save FILE" in result.stdout


def test_quit_command_stops_the_game():
    result = play("--opponent", "random", "--seed", "5", stdin="quit\n1\n")
    assert result.returncode == 0 and "(you quit)" in result.stdout
    assert result.stdout.count("your move (") == 1


@pytest.mark.skipif(os.name != "posix", reason="SIGINT delivery")
def test_ctrl_c_at_the_prompt_exits_zero_and_saves(tmp_path):
    save = tmp_path / "interrupted.json"
    cmd = [sys.executable, "-m", "allfives.cli.main", "play", "--no-color", "--seed", "2", "--save", str(save)]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=ctrl_c_as_at_a_terminal)
    read_to_the_prompt(proc)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)  # stdin kept open: the game must end on the signal, not on the end of its input
    out, err = proc.communicate()
    assert proc.returncode == 0, err.decode()
    assert b"Traceback" not in err and b"(interrupted)" in out
    assert replay(save).returncode == 0


def test_four_player_partnership_game_with_a_greedy_partner(tmp_path):
    save = tmp_path / "four.json"
    result = play("--players", "4", "--partner", "greedy", "--opponent", "random", "--seat", "1", "--target", "60",
                  "--seed", "4", "--save", str(save), stdin=ALWAYS_ONE)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "player 3: greedy (your partner)" in out and "player 0: random (opponent)" in out
    assert "your side (you & 3)" in out and "their side (players 0 & 2)" in out
    assert re.search(r"^winner: (your|their) side", out, re.M)
    record = json.loads(save.read_text())
    assert record["players"] == ["random", "human", "random", "greedy"] and record["complete"] is True
    assert replay(save).returncode == 0


def test_unknown_opponent_lists_the_available_agents():
    result = play("--opponent", "nobody", stdin="")
    assert result.returncode == 2
    assert "unknown agent 'nobody'" in result.stderr and "available:" in result.stderr and "expert" in result.stderr
    assert "Traceback" not in result.stderr


def test_missing_policy_file_is_named(tmp_path):
    missing = tmp_path / "nowhere" / "model.zip"
    result = play("--opponent", str(missing), stdin="")
    assert result.returncode == 2 and str(missing) in result.stderr and "Traceback" not in result.stderr


def test_policy_file_opponent_and_its_hint_probabilities(tmp_path):
    from allfives_agents.nets.policy import NumpyPolicy
    from allfives_env.observation import OBS_SIZES, OBS_VERSION

    OBS_SIZE = OBS_SIZES[OBS_VERSION]
    rng = np.random.default_rng(0)
    params = {"w0": rng.normal(size=(16, OBS_SIZE)), "b0": np.zeros(16), "w1": rng.normal(size=(112, 16)), "b1": np.zeros(112)}
    path = tmp_path / "tiny.npz"
    NumpyPolicy("mlp", params, "Tanh", {"obs_version": OBS_VERSION}).save(path)
    result = play("--opponent", str(path), "--seed", "1", "--save", str(tmp_path / "g.json"), stdin="hint\n")
    assert result.returncode == 0, result.stderr
    assert "probability per move" in result.stdout and re.search(r"probability \d+%", result.stdout)
    assert json.loads((tmp_path / "g.json").read_text())["players"] == ["human", f"ppo:{path}"]


def test_resolve_spec_maps_policy_files():
    assert resolve_spec("models/a.zip") == "ppo:models/a.zip"
    assert resolve_spec("a.npz") == "ppo:a.npz"
    assert resolve_spec("b.onnx") == "onnx:b.onnx"
    assert resolve_spec("ismcts:iters=10") == "ismcts:iters=10"


def test_parse_input_moves_and_messages():
    # 2 players; seat 0 leads 5-5 (spinner), seat 1 plays 5-6 on east: ends west 5 (spinner side), east 6
    game = game_from([["5-5", "0-5", "1-6", "2-3", "4-4"], ["5-6", "0-0", "1-1", "2-2", "3-3"]], starter=0)
    game.step(A("5-5", "lead"))
    game.step(A("5-6", "east"))
    view = game.view(0)
    assert parse_input("0-5", view) == A("0-5", "west")
    assert parse_input("5-0 w", view) == A("0-5", "west")
    assert parse_input("1-6 on east", view) == A("1-6", "east")
    assert parse_input("6-1@east", view) == A("1-6", "east")
    assert parse_input(" 1 ", view) == view.legal_actions[0]
    assert parse_input("HINT", view) == "hint" and parse_input("?", view) == "help" and parse_input("q", view) == "quit"
    for text, message in [
        ("0", "there is no move 0"),
        ("3-3", "you do not hold 3-3"),
        ("2-3", "2-3 does not fit any open end"),
        ("1-6 west", "1-6 does not fit on west (it shows 5)"),
        ("0-5 north", "there is no open north end"),
        ("0-5 up", "unknown end 'up'"),
        ("0-5 lead", "has been led already"),
        ("9-1", "9-1 is not a domino"),
        ("5-6 east now", "did not understand"),
    ]:
        with pytest.raises(MoveError, match=re.escape(message)):
            parse_input(text, view)


def test_parse_input_asks_which_end_and_handles_the_lead():
    lead = game_from([["0-1", "5-6", "1-3"], ["0-2", "2-2", "3-3"]], starter=0, hand_size=3).view(0)
    assert parse_input("5-6", lead) == A("5-6", "lead") and parse_input("5-6 lead", lead) == A("5-6", "lead")
    with pytest.raises(MoveError, match="leads the hand"):
        parse_input("5-6 east", lead)
    spinner = game_from([["0-1", "5-6", "1-3"], ["0-0", "2-2", "3-3"]], starter=1, hand_size=3)
    spinner.step(A("0-0", "lead"))
    with pytest.raises(MoveError, match="0-1 fits on west or east: say which end"):
        parse_input("0-1", spinner.view(0))


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads the threads' signal masks in /proc")
def test_only_the_main_thread_takes_ctrl_c():
    """numpy's BLAS threads block SIGINT (allfives.cli.main): Ctrl-C sent to the process reaches the
    main thread, waiting in the prompt's read, whatever thread the kernel would have picked."""
    cmd = [sys.executable, "-m", "allfives.cli.main", "play", "--no-color", "--seed", "2"]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=ctrl_c_as_at_a_terminal)
    try:
        read_to_the_prompt(proc)
        sigint = 1 << (signal.SIGINT - 1)
        blocked = {int(task.name): int(re.search(r"SigBlk:\s*([0-9a-f]+)", (task / "status").read_text()).group(1), 16)
                   for task in Path(f"/proc/{proc.pid}/task").iterdir()}
        assert not blocked.pop(proc.pid) & sigint
        assert all(mask & sigint for mask in blocked.values()), blocked
    finally:
        proc.kill()
        proc.communicate()


def ctrl_c_as_at_a_terminal() -> None:
    """In the child before it runs: SIGINT at its default and unblocked, as a shell's foreground job
    gets it. A child inherits an ignored SIGINT (and Python then leaves it ignored) or a blocked one
    from the test process, whose earlier tests may have set either."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def read_to_the_prompt(proc) -> None:
    """Read ``proc``'s output until it asks for the first move."""
    seen = b""
    while b"your move (" not in seen:
        chunk = os.read(proc.stdout.fileno(), 4096)
        assert chunk, seen.decode()
        seen += chunk
