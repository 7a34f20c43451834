"""What the person sees in ``allfives play``: the table, their moves, what the bots did, results.

Drawn with rich; without colour (``--no-color``, or output that is not a terminal) the same text
comes out plain. The words come from ``allfives_env.render`` (layout, events, results), so the
terminal game and ``render_view`` describe a position the same way.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from allfives_env.engine.events import PLAY
from allfives_env.engine.tiles import ACTION_TILE, TILE_NAMES
from allfives_env.render import event_sentence, layout_lines, move_text, result_lines, scores_text

STYLE = {
    "title": "bold",
    "layout": "cyan",
    "hand": "bold",
    "move": "green",
    "points": "bold yellow",
    "event": "",
    "you": "magenta",
    "error": "bold red",
    "result": "bold yellow",
    "note": "dim",
    "win": "bold green",
}

HELP = """\
At your turn type one of:
  a move number            e.g. 1
  a tile and an end        e.g. 5-6 east  (or 5-6 e, 5-6 on east); just 5-6 when it fits one way only
  hint                     every legal move, the points it scores now, and the bot's preference
  analyze                  every legal move's value to the end of the hand, from sampled worlds (greedy playouts)
  help                     this text
  quit                     leave the game (Ctrl-C or end of input leave too)
Points: after each placement the open ends are added up; a multiple of five scores that many.
The first tile of a hand leads (type its number or the tile). Drawing and passing happen by themselves."""


def make_console(color: bool = True, file=None) -> Console:
    """A console for the game: colour only when asked for and writing to a terminal; never wraps lines."""
    return Console(
        file=file,
        color_system="auto" if color else None,
        no_color=not color,
        highlight=False,
        markup=False,
        emoji=False,
        soft_wrap=True,
    )


def seat_names(num_players: int, seat: int) -> list[str]:
    """``you`` for the person's seat, ``player N`` for the others."""
    return ["you" if s == seat else f"player {s}" for s in range(num_players)]


def side_names(rules, seat: int) -> list[str]:
    """A name per side: with partnerships ``your side`` / ``their side``, else the seat names."""
    if not rules.partnerships:
        return seat_names(rules.num_players, seat)
    mine = rules.side_of[seat]
    names = []
    for side in range(rules.num_sides):
        seats = " & ".join("you" if s == seat else str(s) for s in rules.seats_of_side(side))
        names.append(f"your side ({seats})" if side == mine else f"their side (players {seats})")
    return names


class Screen:
    """Prints the parts of the game to a rich ``Console`` for the person at ``seat``."""

    def __init__(self, console: Console, rules, seat: int) -> None:
        self.console = console
        self.rules = rules
        self.seat = seat
        self.names = seat_names(rules.num_players, seat)
        self.sides = side_names(rules, seat)

    def line(self, text: str = "", style: str = "") -> None:
        """One line of text in a style of ``STYLE``."""
        self.console.print(Text(text, style=STYLE.get(style, style)))

    def intro(self, seed: int, players: list[str]) -> None:
        """Rules, seed, who sits where."""
        r = self.rules
        mode = "partnerships" if r.partnerships else "every player for themselves"
        self.line(
            f"All Fives: {r.num_players} players ({mode}), first to {r.target_score}, hand end {r.hand_end}, seed {seed}",
            "title",
        )
        for s, spec in enumerate(players):
            if s == self.seat:
                self.line(f"  you are player {s}", "you")
            else:
                role = "your partner" if r.partnerships and r.side_of[s] == r.side_of[self.seat] else "opponent"
                self.line(f"  player {s}: {spec} ({role})")
        self.line("type a move number or a move like 5-6 east; hint, help or quit", "note")

    def hand_start(self, number: int, starter: int) -> None:
        """The line that opens a hand."""
        self.line()
        self.line(f"== hand {number}: {self.names[starter]} to lead ==", "title")

    def event(self, event: tuple) -> None:
        """One event (as the person may see it)."""
        style = "you" if event[1] == self.seat else "event"
        text = Text("  " + event_sentence(event, self.names), style=STYLE[style])
        if event[0] == PLAY and event[4]:
            text.stylize(STYLE["points"], text.plain.rfind("(+"))
        self.console.print(text)

    def hand_result(self, result: dict, number: int) -> None:
        """A finished hand: how it ended, pips, penalties, bonus, scores."""
        for i, text in enumerate(result_lines(result, number, self.names, self.sides)):
            self.line(("" if i == 0 else "  ") + text, "result" if i == 0 else "")

    def position(self, view) -> None:
        """The table at the person's turn: scores, layout, open ends, tiles, hand and numbered moves."""
        self.line()
        self.line(f"-- hand {view.hand_index + 1}, your turn --", "title")
        self.line(f"scores: {scores_text(view.scores, self.sides)} (first to {self.rules.target_score})")
        for text in layout_lines(view):
            self.line(text, "layout")
        counts = ", ".join(f"{name} {k}" for name, k in zip(self.names, view.tile_counts))
        self.line(f"tiles in hand: {counts}; boneyard {view.boneyard_size} ({view.drawable} can be drawn)")
        legal_tiles = {ACTION_TILE[a] for a in view.legal_actions}
        hand = Text("your hand: ", style=STYLE["hand"])
        for i, t in enumerate(view.hand_tiles):
            hand.append(("" if i == 0 else " ") + TILE_NAMES[t], style=STYLE["move"] if t in legal_tiles else "")
        self.console.print(hand)
        if view.forced_tile >= 0:
            self.line(f"you drew {TILE_NAMES[view.forced_tile]}, which fits: you must place it (choose the end)", "note")
        self.line("your moves:")
        for i, text in enumerate(self._moves(view)):
            self.move_line(i + 1, text)

    def _moves(self, view) -> list[str]:
        leading = view.lead < 0
        return [move_text(a, p, leading) for a, p in zip(view.legal_actions, view.move_points())]

    def move_line(self, number: int, text: str, extra: str = "", mark: bool = False) -> None:
        """``  1) 5-6 on east (+10)`` with the points highlighted, and an optional note after it."""
        line = Text(f"  {number}) ")
        line.append(text, style=STYLE["move"])
        if not text.endswith("(+0)"):
            line.stylize(STYLE["points"], len(line.plain) - len(text) + text.rfind("(+"))
        if extra:
            line.append("  " + extra)
        if mark:
            line.append("  <- bot's choice", style=STYLE["points"])
        self.console.print(line)

    def hint(self, view, bot: str | None, choice: int | None, label: str | None, values: list[str] | None) -> None:
        """Every legal move with its points now, the hint bot's choice marked, and its scores when it has them."""
        title = "legal moves, points now"
        if bot:
            title += f", and what {bot} thinks" + (f" ({label} per move)" if label else "")
        self.line(title + ":", "title")
        for i, (action, text) in enumerate(zip(view.legal_actions, self._moves(view))):
            extra = f"{label} {values[i]}" if values else ""
            self.move_line(i + 1, text, extra, mark=action == choice)

    def help(self, view) -> None:
        """How to answer the prompt."""
        for text in HELP.splitlines():
            self.line(text, "note")

    def error(self, message: str) -> None:
        """Why the input was not accepted (the prompt follows again)."""
        self.line(f"! {message}", "error")

    def note(self, message: str) -> None:
        """A remark outside the game itself."""
        self.line(message, "note")

    def final(self, game, stopped: str) -> None:
        """Final scores and the winner (or why the game stopped early)."""
        self.line()
        if stopped != "finished":
            why = {"quit": "you quit", "eof": "input closed", "interrupted": "interrupted"}[stopped]
            self.line(f"game left unfinished in hand {game.hand_index + 1} ({why})", "title")
        self.line(f"final scores: {scores_text(game.scores, self.sides)}", "title")
        if game.winner is None:
            self.line("no winner")
            return
        name = self.sides[game.winner]
        if game.rules.side_of[self.seat] == game.winner:
            self.line(f"winner: {name} - well played!", "win")
        else:
            self.line(f"winner: {name}", "result")
