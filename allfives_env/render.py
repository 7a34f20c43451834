"""A readable text picture of a position, from one seat's view (used by ``render`` and the terminal game),
and events and moves in words. The environments' render modes are in ``allfives_env.render_modes``.
"""

from __future__ import annotations

from allfives_env.engine.events import DRAW, HIDDEN, LEAD, PASS, PLAY
from allfives_env.engine.tiles import ACTION_END, ACTION_TILE, CLOSED, END_NAMES, OTHER_HALF, TILE_NAMES, TILES


def _chain(start_pip: int, arm: list[int]) -> list[str]:
    """Tiles of an arm from the centre outwards, each written inner half first."""
    out = []
    pip = start_pip
    for t in arm:
        a, b = TILES[t]
        if a == b:
            out.append(f"[{a}:{a}]")
            continue
        outer = OTHER_HALF[t][pip]
        out.append(f"[{pip}|{outer}]")
        pip = outer
    return out


def layout_lines(view) -> list[str]:
    """The layout: the west-east line with the lead in the middle, then the north and south arms."""
    if view.lead < 0:
        return ["layout: empty (the first tile leads)"]
    lead_a, lead_b = TILES[view.lead]
    arms = view.arms
    west = _chain(lead_a, arms[0])
    east = _chain(lead_b, arms[1])
    lead = f"[{lead_a}:{lead_b}]" if lead_a == lead_b else f"[{lead_a}|{lead_b}]"
    west_text = " ".join(reversed([_flip(s) for s in west]))
    line = " ".join(x for x in (west_text, f"<{lead}>", " ".join(east)) if x)
    lines = [f"line:  {line}"]
    spinner = view.spinner
    for e in (2, 3):
        if view.pips[e] == CLOSED:
            continue
        tiles = " ".join(_chain(spinner, arms[e])) or "(empty)"
        lines.append(f"{END_NAMES[e]}: from spinner {spinner}-{spinner}: {tiles}")
    if spinner >= 0 and view.pips[2] == CLOSED:
        lines.append(f"spinner {spinner}-{spinner}: {view.spinner_covered} of 2 sides covered")
    ends = []
    for e in range(4):
        if view.pips[e] == CLOSED:
            continue
        empty = e >= 2 and not arms[e]
        counts = view.values[e] != view.pips[e] or empty
        ends.append(f"{END_NAMES[e]} {view.pips[e]}" + (f" ({'empty, ' if empty else ''}counts {view.values[e]})" if counts else ""))
    lines.append(f"open ends: {', '.join(ends)}; total {view.count}")
    return lines


def _flip(text: str) -> str:
    """A west-arm tile written outer half first, so the line reads left to right."""
    if "|" in text:
        a, b = text[1:-1].split("|")
        return f"[{b}|{a}]"
    return text


def event_text(event: tuple) -> str:
    """One event in words."""
    kind, player = event[0], event[1]
    if kind == PLAY:
        where = "leads" if event[3] == LEAD else f"plays on {END_NAMES[event[3]]}"
        pts = f" scoring {event[4]}" if event[4] else ""
        return f"player {player} {where} {TILE_NAMES[event[2]]}{pts}"
    if kind == DRAW:
        return f"player {player} draws" + ("" if event[2] == HIDDEN else f" {TILE_NAMES[event[2]]}")
    if kind == PASS:
        return f"player {player} passes"
    return str(event)


def event_sentence(event: tuple, names) -> str:
    """One event as a sentence naming seats by ``names`` (the name ``you`` takes the plain verb).

    ``player 1 plays 5-6 on east (+10)``, ``you lead 4-6 (+10)``, ``player 2 draws a tile``
    (a hidden draw), ``you draw 3-4``, ``player 3 passes``.
    """
    kind, player = event[0], event[1]
    who = names[player]
    you = who == "you"
    if kind == PLAY:
        pts = f" (+{event[4]})" if event[4] else ""
        if event[3] == LEAD:
            return f"{who} {'lead' if you else 'leads'} {TILE_NAMES[event[2]]}{pts}"
        return f"{who} {'play' if you else 'plays'} {TILE_NAMES[event[2]]} on {END_NAMES[event[3]]}{pts}"
    if kind == DRAW:
        tile = "a tile" if event[2] == HIDDEN else TILE_NAMES[event[2]]
        return f"{who} {'draw' if you else 'draws'} {tile}"
    if kind == PASS:
        return f"{who} {'pass' if you else 'passes'} (nothing fits, nothing left to draw)"
    return str(event)


def move_text(action: int, points: int, lead: bool = False) -> str:
    """A legal move in words: ``5-6 on east (+10)``, or ``5-6 lead (+10)`` for the first tile of a hand."""
    tile, end = ACTION_TILE[action], ACTION_END[action]
    where = "lead" if lead else f"on {END_NAMES[end]}"
    return f"{TILE_NAMES[tile]} {where} (+{points})"


def scores_text(scores, side_names) -> str:
    """Scores per side, e.g. ``you 45, player 1 120`` (``side_names`` one per side)."""
    return ", ".join(f"{name} {score}" for name, score in zip(side_names, scores))


def result_lines(result: dict, hand_number: int, seat_names, side_names) -> list[str]:
    """A finished hand's result (a ``HandLog.result``) in words: how it ended, pips, penalties, bonus, scores.

    ``hand_number`` counts from 1; ``seat_names`` names each seat, ``side_names`` each side.
    """
    outcome = result["outcome"]
    if outcome == "domino":
        how = f"domino: {seat_names[result['went_out']]} went out"
    elif outcome == "blocked":
        how = "blocked: nobody could place a tile or draw"
    else:
        how = "a side reached the target; the hand stops here and nobody is charged"
    lines = [f"hand {hand_number} over, {how}"]
    if outcome != "target":
        pips = ", ".join(f"{name} {p}" for name, p in zip(seat_names, result["pips"]))
        lines.append(f"pips left in hand: {pips}")
        if any(result["penalties"]):
            pen = ", ".join(f"{name} -{p}" for name, p in zip(seat_names, result["penalties"]) if p)
            lines.append(f"penalties (pips rounded to five): {pen}")
        if any(result["bonus"]):
            bonus = ", ".join(f"{name} {b:+d}" for name, b in zip(side_names, result["bonus"]) if b)
            lines.append(f"bonus (opponents' pips rounded to five): {bonus}")
    lines.append(f"scores: {scores_text(result['scores_after'], side_names)}")
    return lines


def render_view(view, recent: int = 6) -> str:
    """The whole picture: scores, layout, tile counts, boneyard, the viewer's hand and recent events."""
    rules = view.rules
    n = rules.num_players
    if rules.partnerships:
        sides = [f"side {s} (seats {s} & {s + 2}): {view.scores[s]}" for s in range(2)]
    else:
        sides = [f"player {s}: {view.scores[s]}" for s in range(n)]
    to_act = "game over" if view.current_player < 0 else f"player {view.current_player} to move"
    lines = [
        f"All Fives, hand {view.hand_index + 1}, {to_act}; viewing as player {view.seat}",
        f"scores: {'  '.join(sides)}  (target {rules.target_score})",
    ]
    lines += layout_lines(view)
    counts = ", ".join(f"player {s}: {view.tile_counts[s]}" for s in range(n))
    lines.append(f"tiles in hand: {counts}; boneyard {view.boneyard_size} ({view.drawable} drawable)")
    hand = " ".join(TILE_NAMES[t] for t in view.hand_tiles)
    lines.append(f"player {view.seat}'s hand: {hand or '(empty)'}")
    history = view.history
    if history:
        lines.append("recent: " + "; ".join(event_text(e) for e in history[-recent:]))
    return "\n".join(lines)
