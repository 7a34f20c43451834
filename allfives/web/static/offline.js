// The offline page (offline.html): a game of All Fives against the shipped network, run entirely in
// the browser. The rules, the positions and the policy's move come from allfives.js; the network runs
// in onnxruntime-web, loaded from vendor/ with the shipped models (scripts/vendor_web.mjs copies them
// there). Nothing is fetched but these static files.
//
// Address options: ?pace=MS (the bots' pace, default 400; 0 plays them at once).
// The page's state is in <body data-state>: loading, setup, thinking, your-turn, over or error; a
// finished game's allfives-record/1 is `window.allfivesRecord` (`allfives replay` checks it).
import * as ort from "./vendor/ort.wasm.min.mjs";
import { ARMS, Game, TILES, loadPolicy, playersProblem, policyMove } from "./allfives.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const pace = Number(params.get("pace") ?? 400);
const policies = {};
let game = null;
let names = [];
let logged = { hand: 0, event: 0 };
let chosenTile = null;

ort.env.wasm.numThreads = 1; // no cross-origin isolation needed
ort.env.wasm.wasmPaths = new URL("./vendor/", import.meta.url).href;

function setState(state, status) {
  document.body.dataset.state = state;
  $("status").textContent = status;
}

function fail(error) {
  $("error").textContent = `${error && error.message ? error.message : error}`;
  setState("error", "stopped by an error");
}

async function policyFor(players) {
  if (!policies[players]) {
    setState("loading", "loading the network...");
    const response = await fetch(new URL(`./vendor/models/allfives_${players}p.onnx`, import.meta.url));
    if (!response.ok) throw new Error(`the model allfives_${players}p.onnx is missing (${response.status}): run npm ci`);
    policies[players] = await loadPolicy(ort, new Uint8Array(await response.arrayBuffer()));
  }
  return policies[players];
}

const tileName = ([a, b]) => `${a}-${b}`;
const who = (seat) => (seat === 0 ? "you" : names[seat]);

function logLine(text) {
  const li = document.createElement("li");
  li.textContent = text;
  $("log").append(li);
  li.scrollIntoView({ block: "nearest" });
}

/** Write the events and hand results not yet in the log. */
function logNews() {
  for (; logged.hand < game.handLogs.length; logged = { hand: logged.hand + 1, event: 0 }) {
    const hand = game.handLogs[logged.hand];
    if (logged.event === 0) logLine(`hand ${logged.hand + 1}: ${who(hand.starter)} ${hand.starter === 0 ? "lead" : "leads"}`);
    for (; logged.event < hand.events.length; logged.event++) {
      const e = hand.events[logged.event];
      const verb = (you, other) => (e.player === 0 ? you : other);
      if (e.type === "play") {
        const where = e.end === "lead" ? "to lead" : `on ${e.end}`;
        logLine(`${who(e.player)} ${verb("play", "plays")} ${tileName(e.tile)} ${where}${e.points ? ` for ${e.points}` : ""}`);
      } else if (e.type === "draw") logLine(e.player === 0 ? `you draw ${tileName(e.tile)}` : `${who(e.player)} draws a tile`);
      else logLine(`${who(e.player)} ${verb("pass", "passes")} (nothing fits, nothing to draw)`);
    }
    if (!hand.result) return; // the hand goes on
    const r = hand.result;
    const how = r.outcome === "domino" ? `${who(r.went_out)} went out` : r.outcome === "blocked" ? "the hand is blocked" : "the target is reached";
    logLine(`end of hand ${logged.hand + 1}: ${how}; scores ${r.scores_after.join(" - ")}`);
  }
}

function sideName(side) {
  const seats = game.rules.side_of.map((s, seat) => (s === side ? seat : -1)).filter((s) => s >= 0);
  return seats.map(who).join(" and ");
}

function render() {
  const layout = game.layout;
  $("scores").replaceChildren(...game.scores.map((score, side) => {
    const div = document.createElement("div");
    div.innerHTML = `<span class="name"></span>: <span class="score"></span>`;
    div.querySelector(".name").textContent = sideName(side);
    div.querySelector(".score").textContent = String(score);
    return div;
  }));
  const lines = [];
  if (layout.empty) lines.push("the table is empty: the first tile leads");
  else {
    lines.push(`lead ${tileName(TILES[layout.lead])}${layout.spinner >= 0 ? `; spinner ${layout.spinner}-${layout.spinner}` : ""}`);
    ARMS.forEach((arm, e) => {
      if (layout.pips[e] === 7) return;
      const tiles = layout.arms[e].map((t) => tileName(TILES[t])).join(" ");
      lines.push(`${arm.padEnd(5)} ${tiles.padEnd(30)} end ${layout.pips[e]}, counts ${layout.values[e]}`);
    });
    lines.push(`the ends count ${layout.count}`);
  }
  const counts = game.hands.map((h, s) => `${who(s)} ${popcount(h)}`).join(", ");
  lines.push(`tiles in hand: ${counts}; boneyard ${game.boneyard.length - game.drawPos}`);
  $("layout").innerHTML = "";
  for (const line of lines) {
    const div = document.createElement("div");
    div.textContent = line;
    $("layout").append(div);
  }
  renderHand();
}

function popcount(mask) {
  let c = 0;
  for (; mask; mask &= mask - 1) c++;
  return c;
}

function renderHand() {
  const mine = game.current === 0 ? game.legalActions() : [];
  const buttons = [];
  for (let t = 0; t < 28; t++) {
    if (!((game.hands[0] >> t) & 1)) continue;
    const button = document.createElement("button");
    button.type = "button";
    button.className = "tile" + (t === chosenTile ? " chosen" : "");
    button.textContent = tileName(TILES[t]);
    button.dataset.tile = String(t);
    const actions = mine.filter((a) => a >> 2 === t);
    button.disabled = actions.length === 0;
    button.addEventListener("click", () => chooseTile(t, actions));
    buttons.push(button);
  }
  $("hand").replaceChildren(...buttons);
  if (chosenTile === null) $("ends").replaceChildren();
}

function chooseTile(t, actions) {
  if (actions.length === 1) return play(actions[0]);
  chosenTile = t;
  renderHand();
  $("ends").replaceChildren(...actions.map((a) => {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "end";
    button.textContent = ARMS[a & 3];
    button.addEventListener("click", () => play(a));
    return button;
  }));
}

function play(action) {
  chosenTile = null;
  game.step(action);
  logNews();
  render();
  bots().catch(fail);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Let the network play every seat but yours until it is your turn or the game is over. */
async function bots() {
  const policy = policies[game.rules.num_players];
  while (!game.over && game.current !== 0) {
    setState("thinking", `${who(game.current)} is thinking...`);
    if (pace > 0) await sleep(pace);
    game.step(await policyMove(policy, game.position(game.current)));
    logNews();
    render();
  }
  if (game.over) {
    const players = names.map((_, s) => (s === 0 ? "human" : "fast"));
    window.allfivesRecord = game.toRecord(players);
    const won = game.winner !== null ? `${sideName(game.winner)} ${game.winner === 0 ? "win" : "wins"}` : "no winner";
    $("result").textContent = `Final scores ${game.scores.join(" - ")}: ${won}.`;
    $("again").hidden = false;
    setState("over", "the game is over");
  } else setState("your-turn", "your turn: pick a tile");
}

async function start(event) {
  event.preventDefault();
  $("error").textContent = "";
  const players = Number($("players").value);
  const rules = { num_players: players };
  if ($("target").value) rules.target_score = Number($("target").value);
  const policy = await policyFor(players);
  game = new Game(rules, { seed: Number($("seed").value || 0) });
  const problem = playersProblem(policy, game.rules);
  if (problem) throw new Error(problem);
  names = Array.from({ length: players }, (_, s) => (s === 0 ? "you" : `player ${s} (fast)`));
  logged = { hand: 0, event: 0 };
  $("log").replaceChildren();
  $("result").textContent = "";
  $("again").hidden = true;
  $("setup").hidden = true;
  $("game").hidden = false;
  logNews();
  render();
  await bots();
}

$("setup").addEventListener("submit", (event) => start(event).catch(fail));
$("again").addEventListener("click", () => {
  $("game").hidden = true;
  $("setup").hidden = false;
  setState("setup", "choose a game");
});
try {
  await policyFor(2); // the default game's network, so the first start is quick
  $("setup").hidden = false;
  setState("setup", "choose a game");
} catch (error) {
  fail(error);
}
