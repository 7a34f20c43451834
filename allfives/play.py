"""A person plays All Fives against the bots: reading moves, hints, and the game loop.

``PlaySession`` runs one game in which one seat is a person and the others are agents. Everything
the person types comes through an ``ask(prompt) -> str`` function (``line_reader`` builds one on a
terminal or on any text stream, so a script can play), and everything shown goes through a
``tui.Screen``. Bots act on their own ``PlayerView`` only; the hints come from a separate agent
instance, so asking for them never changes what the bots do.
"""

from __future__ import annotations

import copy
import math
import random
import re
import sys
from typing import Callable

from allfives_env.engine.events import public_event
from allfives_env.engine.tiles import ACTION_END, ACTION_TILE, CLOSED, END_INDEX, END_NAMES, TILE_INDEX, TILE_NAMES

COMMANDS = ("hint", "analyze", "help", "quit")
_ALIASES = {"h": "hint", "a": "analyze", "analyse": "analyze", "?": "help", "q": "quit", "exit": "quit"}
#: worlds the ``analyze`` command samples (greedy playouts: about a second)
ANALYZE_WORLDS = 300
_END_ALIASES = {"w": "west", "e": "east", "n": "north", "s": "south", "left": "west", "right": "east"}
_TILE = re.compile(r"^(\d+)[-|:/](\d+)$")


class MoveError(ValueError):
    """Input that is not a legal move or a command; the message says what was wrong."""


def line_reader(console, stream=None) -> Callable[[str], str]:
    """``ask(prompt) -> line`` reading from ``stream`` (default stdin); raises ``EOFError`` when it is closed.

    On a terminal it uses ``console.input`` (line editing); on a pipe or file it reads a line and
    echoes it after the prompt, so a scripted game reads like a typed one.
    """
    stream = sys.stdin if stream is None else stream
    interactive = stream is sys.stdin and stream.isatty()

    def ask(prompt: str) -> str:
        if interactive:
            return console.input(prompt)
        console.print(prompt, end="")
        line = stream.readline()
        if not line:
            console.print()
            raise EOFError
        console.print(line.rstrip("\r\n"))
        return line

    return ask


def parse_input(text: str, view) -> int | str:
    """What the person typed: a legal action id, or a command from ``COMMANDS``.

    Accepts a move number (``1``), a tile and an end (``5-6 east``, ``5-6 e``, ``5-6 on east``,
    ``5-6@east``), or a tile alone when it fits only one way. Raises ``MoveError`` saying what was
    wrong otherwise.
    """
    legal = view.legal_actions
    n = len(legal)
    words = re.sub(r"\s*([-|:/])\s*", r"\1", text.strip().lower().replace("@", " ")).split()
    if not words:
        raise MoveError(f"type a move number (1-{n}), a move like '5-6 east', or hint, help, quit")
    if len(words) == 1 and (words[0] in COMMANDS or words[0] in _ALIASES):
        return _ALIASES.get(words[0], words[0])
    if len(words) == 1 and words[0].isdigit():
        k = int(words[0])
        if not 1 <= k <= n:
            raise MoveError(f"there is no move {k}: choose a move number from 1 to {n}")
        return legal[k - 1]
    match = _TILE.match(words[0])
    if not match:
        raise MoveError(
            f"did not understand {text.strip()!r}: type a move number (1-{n}), a move like '5-6 east', or hint, help, quit"
        )
    a, b = int(match.group(1)), int(match.group(2))
    if not (0 <= a <= 6 and 0 <= b <= 6):
        raise MoveError(f"{a}-{b} is not a domino: pips run from 0 to 6")
    tile = TILE_INDEX[(min(a, b), max(a, b))]
    rest = [w for w in words[1:] if w != "on"]
    if len(rest) > 1:
        raise MoveError(f"did not understand {text.strip()!r}: write a move as a tile and an end, e.g. '5-6 east'")
    return _tile_move(tile, rest[0] if rest else None, view)


def _tile_move(tile: int, end_word: str | None, view) -> int:
    """The legal action placing ``tile`` on the named end (or its only placement)."""
    name = TILE_NAMES[tile]
    legal = view.legal_actions
    if not view.hand >> tile & 1:
        raise MoveError(f"you do not hold {name}")
    if view.forced_tile >= 0 and tile != view.forced_tile:
        raise MoveError(f"you drew {TILE_NAMES[view.forced_tile]} and must place it now")
    fits = [a for a in legal if ACTION_TILE[a] == tile]
    if not fits:
        raise MoveError(f"{name} does not fit any open end ({_open_ends(view)})")
    leading = view.lead < 0
    if end_word is None:
        if len(fits) == 1:
            return fits[0]
        options = " or ".join(END_NAMES[ACTION_END[a]] for a in fits)
        raise MoveError(f"{name} fits on {options}: say which end, e.g. '{name} {END_NAMES[ACTION_END[fits[-1]]]}'")
    end_word = _END_ALIASES.get(end_word, end_word)
    if leading:
        if end_word in ("lead", "west"):
            return fits[0]
        raise MoveError(f"{name} leads the hand (there are no ends yet): type '{name}' or its move number")
    if end_word == "lead":
        raise MoveError("the hand has been led already: name an end (west, east, north or south)")
    if end_word not in END_INDEX:
        raise MoveError(f"unknown end {end_word!r}: the ends are west, east, north and south")
    end = END_INDEX[end_word]
    for a in fits:
        if ACTION_END[a] == end:
            return a
    where = " or ".join(END_NAMES[ACTION_END[a]] for a in fits)
    if view.pips[end] == CLOSED:
        raise MoveError(f"there is no open {end_word} end yet ({_open_ends(view)}); {name} fits on {where}")
    raise MoveError(f"{name} does not fit on {end_word} (it shows {view.pips[end]}); {name} fits on {where}")


def _open_ends(view) -> str:
    ends = [f"{END_NAMES[e]} {view.pips[e]}" for e in range(4) if view.pips[e] != CLOSED]
    return "open ends: " + ", ".join(ends)


def bot_preference(agent, view) -> tuple[int, str | None, list[str] | None]:
    """``(choice, label, values)``: the move ``agent`` would play, and its per-move scores when it exposes them.

    ``values`` (aligned with ``view.legal_actions``) are the expert's scores, a policy's
    probabilities over the legal moves, or the search's visit counts; ``None`` for other agents.
    Call it on an agent kept for hints: it may use the agent's random state.
    """
    legal = view.legal_actions
    try:
        if hasattr(agent, "scores"):
            scores = agent.scores(view)
            return agent.act(view), "score", [f"{s:.1f}" for s in scores]
        policy = getattr(agent, "policy", None)
        if hasattr(policy, "logits"):  # NumpyPolicy (ppo:) and OnnxPolicy (onnx:)
            logits = policy.logits(policy.encode(view))
            top = max(float(logits[a]) for a in legal)
            weights = [math.exp(float(logits[a]) - top) for a in legal]
            total = sum(weights)
            return agent.act(view), "probability", [f"{100 * w / total:.0f}%" for w in weights]
        if hasattr(agent, "search"):
            root = agent.search(view)
            visits = [root.children[a].visits if a in root.children else 0 for a in legal]
            choice = agent.choose(root, legal)
            return choice, "visits", [str(v) for v in visits]
    except Exception:  # a hint must never end the game; fall back to the bare choice
        pass
    return agent.act(view), None, None


def hint_agent(spec, agents: dict, seed: int, rules=None):
    """A separate agent for hints: a copy of a seated bot with that spec (sharing its loaded policy), else a new one."""
    from allfives_agents import make_agent

    for agent in agents.values():
        if agent.name == str(spec) and hasattr(agent, "policy"):
            twin = copy.copy(agent)
            twin.rng = random.Random(seed)
            return twin
    return make_agent(spec, seed=seed, rules=rules)


class PlaySession:
    """One game with a person at ``seat`` and ``agents`` (seat -> agent) at the other seats.

    ``run()`` plays until the game ends or the person leaves, and returns how it stopped:
    ``finished``, ``quit``, ``eof`` (input closed) or ``interrupted`` (Ctrl-C).
    """

    def __init__(self, game, seat: int, agents: dict, screen, ask: Callable[[str], str], hinter=None) -> None:
        self.game = game
        self.seat = seat
        self.agents = agents
        self.screen = screen
        self.ask = ask
        self.hinter = hinter
        self._hand = 0  # next hand whose news is due
        self._event = 0  # next event of that hand
        self._headed = -1  # last hand whose opening line was shown

    def run(self) -> str:
        """Play on until the game is over or the person quits; return how it stopped."""
        game = self.game
        try:
            while not game.over:
                player = game.current_player
                if player != self.seat:
                    game.step(self.agents[player].act(game.view(player)))
                    continue
                view = game.view(player)
                self.show_news()
                self.screen.position(view)
                action = self.read_move(view)
                if action is None:
                    return "quit"
                game.step(action)
            self.show_news()
            return "finished"
        except EOFError:
            return "eof"
        except KeyboardInterrupt:
            return "interrupted"

    def read_move(self, view) -> int | None:
        """Ask until the person gives a legal move (action id) or quits (``None``)."""
        n = len(view.legal_actions)
        prompt = f"your move ({'1' if n == 1 else f'1-{n}'}, or a move like 5-6 east; hint, help, quit): "
        while True:
            try:
                answer = parse_input(self.ask(prompt), view)
            except MoveError as exc:
                self.screen.error(str(exc))
                continue
            if answer == "quit":
                return None
            if answer == "help":
                self.screen.help(view)
            elif answer == "hint":
                self.show_hint(view)
            elif answer == "analyze":
                self.show_analysis(view)
            else:
                return answer

    def show_hint(self, view) -> None:
        """Every legal move with its points now, and the hint bot's preference."""
        if self.hinter is None:
            choice, label, values = None, None, None
        else:
            choice, label, values = bot_preference(self.hinter, view)
        self.screen.hint(view, getattr(self.hinter, "name", None), choice, label, values)

    def show_analysis(self, view) -> None:
        """The move analysis (``allfives_agents.analysis``): every legal move's value with a 95% interval."""
        from allfives_agents.analysis import analyze, format_analysis

        result = analyze(view, "greedy", ANALYZE_WORLDS, seed=self.game.seed + len(self.game.events), seconds=3.0)
        for line in format_analysis(result).splitlines():
            self.screen.note(line)

    def show_news(self) -> None:
        """Everything that happened since the person last saw the table: events, hand results, new hands."""
        logs = self.game.hand_logs
        while self._hand < len(logs):
            h = self._hand
            log = logs[h]
            if self._headed < h:
                self._headed = h
                self.screen.hand_start(h + 1, log.starter)
            for event in log.events[self._event :]:
                self.screen.event(public_event(event, self.seat))
            self._event = len(log.events)
            if log.result is None:
                return
            self.screen.hand_result(log.result, h + 1)
            self._hand += 1
            self._event = 0
