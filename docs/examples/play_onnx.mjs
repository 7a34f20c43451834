// A whole game of All Fives in Node, every seat played by a shipped policy through onnxruntime-web
// (its wasm backend runs in Node; no Python, no server). The rules, the observation and the move
// choice come from allfives/web/static/allfives.js.
//
//   npm ci                                          # once: onnxruntime-web from package-lock.json
//   node docs/examples/play_onnx.mjs                # models/allfives_2p.onnx against itself, seed 1
//   node docs/examples/play_onnx.mjs --model models/allfives_4p.onnx --seed 7 --record game.json
//
// It prints each hand's result and the final scores; --record FILE writes the game as an
// allfives-record/1 file, which `allfives replay FILE` checks move by move against the Python engine.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as ort from "onnxruntime-web";
import { Game, loadPolicy, playersProblem, policyMove } from "../../allfives/web/static/allfives.js";

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const modelPath = option("--model", fileURLToPath(new URL("../../models/allfives_2p.onnx", import.meta.url)));
const seed = Number(option("--seed", "1"));
const recordPath = option("--record", null);

ort.env.wasm.numThreads = 1;
const policy = await loadPolicy(ort, readFileSync(modelPath));
// the rules the policy was trained on (the file's metadata), else the 2-player defaults
const game = new Game(policy.rules ?? {}, { seed });
const problem = playersProblem(policy, game.rules);
if (problem) throw new Error(problem);
console.log(`${modelPath}: observation version ${policy.obsVersion} (${policy.obsSize} values), ` +
  `${game.rules.num_players} players, target ${game.rules.target_score}`);

let hands = 0;
while (!game.over) {
  const action = await policyMove(policy, game.position(game.current));
  game.step(action);
  for (; hands < game.handLogs.length && game.handLogs[hands].result; hands++) {
    const r = game.handLogs[hands].result;
    const how = r.outcome === "domino" ? `player ${r.went_out} went out` : r.outcome === "blocked" ? "blocked" : "target reached";
    console.log(`hand ${hands + 1}: ${how}; scores ${r.scores_after.join("-")}`);
  }
}
console.log(`final scores ${game.scores.join("-")}; side ${game.winner} wins after ${game.handLogs.length} hands`);
if (recordPath) {
  const name = modelPath.split(/[\\/]/).pop();
  writeFileSync(recordPath, JSON.stringify(game.toRecord(new Array(game.rules.num_players).fill(`onnx:${name}`))) + "\n");
  console.log(`record written to ${recordPath}`);
}
