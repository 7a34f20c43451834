"""``allfives replay GAME.jsonl --html OUT.html``: a self-contained page that steps through a game.

The record is first replayed and checked by the engine (``replay_record``); the positions are
then rebuilt by playing the same deals and the recorded placements through a fresh ``Game``, and
each position is drawn by ``allfives_env.picture`` as seen by the seat to move (the last one by
the seat that moved last). The page holds every picture inline (no network, no script files):
buttons, a slider and the arrow keys step through them.
"""

from __future__ import annotations

import json
from html import escape

from allfives_env.engine import PLAY, Deal, Game
from allfives_env.engine.events import play_end
from allfives_env.engine.tiles import action_id
from allfives_env.picture import svg
from allfives_env.render import event_text


def positions(game: Game) -> list[tuple[object, str]]:
    """Every position of a finished (replayed) ``game``: ``(view, caption)`` before each placement
    and after the last one."""
    deals = [Deal(tuple(map(tuple, log.deal)), tuple(log.boneyard), log.starter) for log in game.hand_logs]
    again = Game(game.rules, game.seed, deals=deals, scores=list(game.initial_scores), max_hands=len(deals))
    out = []
    for h, log in enumerate(game.hand_logs):
        first = True
        for event in log.events:
            if event[0] != PLAY:
                continue  # draws and passes are carried out by the engine inside the step before
            seat = again.current_player
            out.append((again.view(seat), f"hand {h + 1}: {event_text(event)}"))
            again.step(action_id(event[2], play_end(event[3], first)))
            first = False
    last_seat = out[-1][0].seat if out else 0
    end = f"final scores {again.scores}" + (f", side {again.winner} wins" if again.winner is not None else "")
    out.append((again.view(last_seat), end))
    return out


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ background: #123d22; color: #fff; font-family: sans-serif; margin: 16px; }}
.frame {{ display: none; }} .frame.on {{ display: block; }}
#bar {{ margin: 8px 0; display: flex; gap: 8px; align-items: center; }}
#caption {{ margin-left: 12px; }}
</style></head><body>
<h1>{title}</h1>
<div id="bar"><button id="prev">&larr; previous</button><button id="next">next &rarr;</button>
<input id="slider" type="range" min="0" max="{last}" value="0"><span id="count"></span><span id="caption"></span></div>
{frames}
<script>
const frames = document.querySelectorAll(".frame"), captions = {captions};
let at = 0;
function show(i) {{
  at = Math.max(0, Math.min(frames.length - 1, i));
  frames.forEach((f, k) => f.classList.toggle("on", k === at));
  document.getElementById("slider").value = at;
  document.getElementById("count").textContent = (at + 1) + " / " + frames.length;
  document.getElementById("caption").textContent = captions[at];
}}
document.getElementById("prev").onclick = () => show(at - 1);
document.getElementById("next").onclick = () => show(at + 1);
document.getElementById("slider").oninput = (e) => show(Number(e.target.value));
document.addEventListener("keydown", (e) => {{ if (e.key === "ArrowLeft") show(at - 1); if (e.key === "ArrowRight") show(at + 1); }});
show(0);
</script></body></html>
"""


def replay_page(game: Game, title: str) -> str:
    """The HTML page of ``game`` (see the module docstring)."""
    frames = positions(game)
    body = "\n".join(f'<div class="frame" id="f{i}">{svg(view)}</div>' for i, (view, _) in enumerate(frames))
    return PAGE.format(title=escape(title), last=len(frames) - 1, frames=body,
                       captions=json.dumps([caption for _, caption in frames]).replace("</", "<\\/"))
