"""A readable text picture of a position, from one seat's view (used by ``render`` and the terminal game)."""

from __future__ import annotations

from allfives_env.engine.events import DRAW, HIDDEN, LEAD, PASS, PLAY
from allfives_env.engine.tiles import CLOSED, END_NAMES, OTHER_HALF, TILE_NAMES, TILES


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
    ends = [f"{END_NAMES[e]} {view.pips[e]}" + (f" (counts {view.values[e]})" if view.values[e] != view.pips[e] else "")
            for e in range(4) if view.pips[e] != CLOSED]
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
