// The JavaScript side of tests/test_js_runtime.py's rules test: plays whole games with the `Game`
// of allfives.js, random legal moves from a seeded generator, and prints one JSON line per game:
// {"record": allfives-record/1, "positions": [the position of the seat to act before each
// placement]}. Input on stdin: {"games": [{"rules": {...}, "seed": N}, ...]}.
import { Game, makeRng } from "../../allfives/web/static/allfives.js";

let input = "";
for await (const chunk of process.stdin) input += chunk;
for (const { rules, seed } of JSON.parse(input).games) {
  const game = new Game(rules, { seed });
  const rng = makeRng(seed ^ 0x5bd1e995);
  const positions = [];
  while (!game.over) {
    positions.push(game.position(game.current));
    const legal = game.legalActions();
    game.step(legal[Math.floor((rng() / 4294967296) * legal.length)]);
  }
  process.stdout.write(JSON.stringify({ record: game.toRecord(), positions }) + "\n");
}
