"""The scoring in words for the web page: the rules in effect, one line each, and each finished
hand's summary (pips, penalties or bonus, scores) from the engine's ``HandLog.result``.

The lines say what the engine does (docs/specification.md); they decide nothing.
"""

from __future__ import annotations

from allfives_env.engine import Rules


def rules_lines(rules: Rules) -> list[dict]:
    """``[{"name", "text"}]``: every rules option in effect with one line on what it means."""
    n = rules.num_players
    if rules.partnerships:
        players = "4 players in two partnerships: seats 0 & 2 against seats 1 & 3, partners share one score"
    else:
        players = f"{n} players, each for themselves"
    reserve = rules.boneyard_reserve
    if rules.hand_end == "subtract":
        end = ("subtract: when a hand ends, everyone loses the pips left in their own hand, rounded to the "
               "nearest five; going out scores nothing for who went out (they have no pips to lose)")
    else:
        end = ("winner_takes: who goes out scores the opponents' pips, rounded to the nearest five; in a blocked "
               "hand the side with the fewest pips scores the others' rounded pips less its own")
    return [
        {"name": "num_players", "text": players},
        {"name": "partnerships", "text": "on: partners score together" if rules.partnerships else "off: every seat scores alone"},
        {"name": "hand_size", "text": f"{rules.hand_size}: {rules.tiles_per_hand} tiles dealt to each player"},
        {"name": "boneyard_reserve", "text": f"{reserve}: the last {reserve} tiles of the boneyard are never drawn"
                                             if reserve else "0: every boneyard tile can be drawn"},
        {"name": "hand_end", "text": end},
        {"name": "target_score", "text": f"{rules.target_score}: the first side to reach it wins, even in the middle of a hand"},
        {"name": "scoring", "text": "after each placement, if the open ends add up to a multiple of five, the player "
                                    "scores that total (a double at an end counts both halves)"},
    ]


def hand_summaries(game, names: list[str], sides: list[str]) -> list[dict]:
    """Each finished hand of ``game``: how it ended, every seat's pips and penalty, each side's
    bonus and the scores before and after."""
    out = []
    for h, log in enumerate(game.hand_logs):
        result = log.result
        if result is None:
            continue
        if result["outcome"] == "domino":
            how = f"{names[result['went_out']]} went out"
        elif result["outcome"] == "blocked":
            how = "blocked: nobody could place a tile or draw"
        else:
            how = "a side reached the target; nobody is charged for this hand"
        out.append({
            "hand": h + 1,
            "outcome": result["outcome"],
            "how": how,
            "seats": [{"name": names[s], "pips": result["pips"][s], "penalty": result["penalties"][s]}
                      for s in range(len(names))],
            "sides": [side_line(game, log, k, sides[k]) for k in range(len(sides))],
        })
    return out


def side_line(game, log, side: int, name: str) -> dict:
    """One side's scores over a finished hand: at its start, scored in play, penalties, bonus, after."""
    result = log.result
    penalties = sum(p for s, p in enumerate(result["penalties"]) if game.rules.side_of[s] == side)
    after, bonus, before = result["scores_after"][side], result["bonus"][side], log.scores_before[side]
    return {"name": name, "before": before, "in_play": after - bonus + penalties - before, "penalties": penalties,
            "bonus": bonus, "after": after}
