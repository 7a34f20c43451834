"""``allfives replay GAME.jsonl --html OUT.html``: a self-contained page that steps through a game.

The record is first replayed and checked by the engine (``replay_record``); its positions are
rebuilt through the engine (``replay_positions``), and each is drawn by ``allfives_env.picture``
as seen by the seat to move (the final one by the seat that moved last). The page holds every picture inline (no network, no script files):
buttons, a slider and the arrow keys step through them.
"""

from __future__ import annotations

import json
from html import escape

from allfives_env.engine import Game
from allfives_env.engine.record import replay_positions
from allfives_env.picture import svg
from allfives_env.render import event_text


def positions(game: Game) -> list[tuple[object, str]]:
    """Every position of a finished (replayed) ``game``: ``(view, caption)`` before each placement
    (``engine.record.replay_positions``) and, last, after the final one. A caption says whose move
    the picture waits for and, as what comes next, the move made from it (the picture is before it)."""
    out = [(view, f"hand {h + 1}: player {view.seat} to move; next: {event_text(event)}")
           for h, _, view, event in replay_positions(game)]
    final = game.view(out[-1][0].seat if out else 0)
    end = f"final scores {game.scores}" + (f", side {game.winner} wins" if game.winner is not None else "")
    return out + [(final, end)]


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
