// The All Fives page: shows what the server sends and sends back action ids. No rule lives here:
// the legal moves, the picture, the scores and the log all come from the server (allfives/web).
"use strict";

const $ = (id) => document.getElementById(id);
let options = null;   // GET /api/options
let state = null;     // the game's state, as the server last sent it
let shown = 0;        // log lines already on the page
let selected = null;  // index in state.hand of the tile chosen, waiting for an end
let busy = false;     // a request is on its way (one at a time per game)

async function api(method, path, body) {
  // every POST says JSON, with a body or without: the server refuses one that does not (a page on
  // another site can send a POST without it, never one with it)
  const init = { method, headers: method === "POST" ? { "Content-Type": "application/json" } : {} };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(path, init);
  const text = await response.text();
  const data = text ? JSON.parse(text) : null;
  if (!response.ok) throw new Error(data && data.error ? data.error : `${response.status} ${response.statusText}`);
  return data;
}

function showError(error) {
  $("error").textContent = error ? String(error.message || error) : "";
}

function element(tag, attributes = {}, text = "") {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text) node.textContent = text;
  return node;
}

// -- setup: the form is built from the server's rules options and bots ----------------------

function ruleInput(option) {
  const id = "rule-" + option.name;
  const label = element("label", { for: id, title: option.help }, option.name.replace(/_/g, " ") + " ");
  let input;
  if (option.type === "boolean") {
    input = element("select", { id });
    input.append(element("option", { value: "" }, "default"), element("option", { value: "true" }, "on"),
                 element("option", { value: "false" }, "off"));
  } else if (option.type === "string") {
    input = element("select", { id });
    for (const choice of option.choices) input.append(element("option", { value: choice }, choice));
    input.value = option.default;
  } else {
    input = element("input", { id, type: "text", inputmode: "numeric", size: "10" });
    if (option.choices.length) {
      const list = element("datalist", { id: id + "-names" });
      for (const choice of option.choices) list.append(element("option", { value: choice }));
      input.setAttribute("list", id + "-names");
      label.append(list);
    }
    input.placeholder = option.default === null ? "default" : String(option.default);
  }
  input.dataset.rule = option.name;
  input.dataset.type = option.type;
  label.append(input, element("small", {}, " " + option.help));
  return label;
}

function readRules() {
  const rules = {};
  for (const input of document.querySelectorAll("[data-rule]")) {
    const value = input.value.trim();
    if (value === "") continue;
    if (input.dataset.type === "boolean") rules[input.dataset.rule] = value === "true";
    else if (/^-?\d+$/.test(value) && input.dataset.type !== "string") rules[input.dataset.rule] = Number(value);
    else rules[input.dataset.rule] = value;
  }
  return rules;
}

function playerCount() {
  const value = Number($("rule-num_players").value.trim() || $("rule-num_players").placeholder);
  return [2, 3, 4].includes(value) ? value : 2;
}

function botSelect(id, label) {
  const select = element("select", { id });
  select.append(element("option", { value: "" }, "default (strong where it plays this game, else expert)"));
  for (const bot of options.bots) select.append(element("option", { value: bot.id }, bot.label));
  const wrap = element("label", {}, label + " ");
  wrap.append(select);
  return wrap;
}

function buildSeats() {
  const n = playerCount();
  const seat = $("seat");
  const was = Number(seat.value || 0);
  seat.replaceChildren(...Array.from({ length: n }, (_, s) => element("option", { value: String(s) }, `seat ${s}`)));
  seat.value = String(Math.min(was, n - 1));
  const bots = $("bots");
  const kept = {};
  for (const select of bots.querySelectorAll("select")) kept[select.id] = select.value;
  bots.replaceChildren();
  for (let s = 0; s < n; s++) {
    if (s === Number(seat.value)) continue;
    const wrap = botSelect("bot-" + s, `seat ${s}`);
    bots.append(wrap);
    const select = wrap.querySelector("select");
    if (kept[select.id] !== undefined) select.value = kept[select.id];
  }
}

async function setup() {
  options = await api("GET", "/api/options");
  const rules = $("rules");
  for (const option of options.rules) rules.append(ruleInput(option));
  const hint = botSelect("hint-bot-select", "").querySelector("select");
  hint.id = "hint-bot";
  $("hint-bot").replaceWith(hint);
  buildSeats();
  $("rule-num_players").addEventListener("input", buildSeats);
  $("seat").addEventListener("change", buildSeats);
  $("setup-form").addEventListener("submit", (event) => { event.preventDefault(); newGame(); });
  $("again").addEventListener("click", () => { $("game").hidden = true; $("setup").hidden = false; });
  $("hint-button").addEventListener("click", askHint);
  $("resume").addEventListener("click", runBots);
  document.addEventListener("keydown", onKey);
}

// -- the game ---------------------------------------------------------------------------------

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const pace = () => Number(new URLSearchParams(location.search).get("pace") ?? $("pace").value);

async function newGame() {
  showError(null);
  const n = playerCount();
  const seat = Number($("seat").value);
  const bots = Array.from({ length: n }, (_, s) => (s === seat ? null : $("bot-" + s).value || null));
  const body = { rules: readRules(), seat, bots, hint: $("hint-bot").value || null };
  try {
    state = await api("POST", "/api/games", body);
  } catch (error) {
    showError(error);
    return;
  }
  shown = 0;
  selected = null;
  $("log").replaceChildren();
  $("hint").replaceChildren();
  $("setup").hidden = true;
  $("game").hidden = false;
  render();
  await runBots();
}

// the bots' turns, one request (one decision) at a time, so their moves appear one by one; after a
// failed request they stop, and "Continue" starts them again
let running = false;
async function runBots() {
  if (running) return;
  running = true;
  render();
  try {
    while (state && !state.over && !state.your_turn) {
      await sleep(pace());
      await send("POST", `/api/games/${state.id}/advance`);
      if (!busyOk) break;
    }
  } finally {
    running = false;
    render();
  }
}

let busyOk = true;
async function send(method, path, body) {
  busy = true;
  render();
  try {
    state = await api(method, path, body);
    busyOk = true;
    showError(null);
  } catch (error) {
    busyOk = false;
    showError(error);
  } finally {
    busy = false;
    render();
  }
}

async function play(action) {
  if (busy || !state || !state.your_turn) return;
  selected = null;
  $("hint").replaceChildren();
  await send("POST", `/api/games/${state.id}/move`, { action });
  if (busyOk) await runBots();
}

function chooseTile(index) {
  const tile = state.hand[index];
  if (!tile || !tile.moves.length || busy || !state.your_turn) return;
  if (tile.moves.length === 1) {
    play(tile.moves[0].action);  // it fits one end only
    return;
  }
  selected = index;
  render();
}

async function askHint() {
  if (busy || !state || !state.your_turn) return;
  busy = true;
  $("hint").textContent = "thinking…";
  try {
    showHint(await api("POST", `/api/games/${state.id}/hint`));
  } catch (error) {
    $("hint").replaceChildren();
    showError(error);
  } finally {
    busy = false;
    render();
  }
}

const moveText = (m) => `${m.tile[0]}-${m.tile[1]} ${m.end === "lead" ? "lead" : "on " + m.end} (+${m.points})`;
const signed = (x) => (x >= 0 ? "+" : "") + x.toFixed(1);

function showHint(hint) {
  const box = $("hint");
  box.replaceChildren(element("p", { id: "hint-move" }, `${hint.bot} would play ${moveText(hint.move)}`));
  const a = hint.analysis;
  const worlds = a.exact ? "nothing hidden: exact" : `${a.worlds} sampled worlds, ${a.policy} playouts`;
  const table = element("table", { id: "analysis" });
  table.append(element("caption", {}, `move analysis (${worlds})`));
  const head = element("tr");
  for (const title of ["move", "value to the hand's end", "95% interval", "win"]) head.append(element("th", {}, title));
  table.append(head);
  for (const m of a.moves) {
    const row = element("tr", m.action === hint.move.action ? { class: "suggested" } : {});
    row.append(element("td", {}, moveText(m)), element("td", {}, signed(m.value)),
               element("td", {}, `[${signed(m.value_low)}, ${signed(m.value_high)}]`),
               element("td", {}, m.win === null ? "" : `${(100 * m.win).toFixed(0)}%`));
    table.append(row);
  }
  box.append(table);
}

function onKey(event) {
  if (!state || $("game").hidden || event.ctrlKey || event.metaKey || event.altKey) return;
  const key = event.key.toLowerCase();
  if (key === "h") { askHint(); return; }
  if (key === "escape") { selected = null; render(); return; }
  if (selected !== null) {
    const moves = state.hand[selected].moves;
    const byName = { w: "west", e: "east", n: "north", s: "south" };
    const move = /^[1-4]$/.test(key) ? moves[Number(key) - 1] : moves.find((m) => m.end === byName[key]);
    if (move) play(move.action);
    return;
  }
  if (/^[1-9]$/.test(key)) {
    const playable = state.hand.map((t, i) => [t, i]).filter(([t]) => t.moves.length);
    const pick = playable[Number(key) - 1];
    if (pick) chooseTile(pick[1]);
  }
}

// -- drawing what the server sent ------------------------------------------------------------

function render() {
  if (!state) return;
  const scores = $("scores");
  scores.replaceChildren(...state.sides.map((name, side) => {
    const cell = element("span", { class: "side" }, name + ": ");
    cell.append(element("span", { class: "score", "data-side": String(side) }, String(state.scores[side])));
    return cell;
  }));
  scores.append(element("span", { class: "target" }, `target ${state.rules.target_score}`));
  $("picture").innerHTML = state.picture;  // SVG drawn by allfives_env.picture from the server's view

  const canPlay = state.your_turn && !busy;
  const hand = $("hand");
  hand.replaceChildren(...state.hand.map((tile, index) => {
    const button = element("button", { type: "button", class: "tile", "data-tile": `${tile.tile[0]}-${tile.tile[1]}`,
                                       "aria-label": `tile ${tile.tile[0]}-${tile.tile[1]}` });
    button.innerHTML = tile.svg;
    button.disabled = !canPlay || !tile.moves.length;
    if (index === selected) button.classList.add("selected");
    button.addEventListener("click", () => chooseTile(index));
    return button;
  }));
  const ends = $("ends");
  ends.replaceChildren();
  if (selected !== null && canPlay) {
    state.hand[selected].moves.forEach((move, k) => {
      const button = element("button", { type: "button", class: "end", "data-action": String(move.action) },
                             `${k + 1}: ${move.end} (+${move.points})`);
      button.addEventListener("click", () => play(move.action));
      ends.append(button);
    });
  }
  $("hint-button").disabled = !canPlay;

  const log = $("log");
  for (; shown < state.log.length; shown++) log.append(element("li", {}, state.log[shown]));
  log.scrollTop = log.scrollHeight;

  let status;
  if (state.over) status = state.winner === null ? "game over" : `game over: ${state.winner} ${state.winner === "you" ? "win" : "wins"}`;
  else if (state.your_turn) status = "your move";
  else status = `${state.names[state.to_move]} to move`;
  $("status").textContent = status;
  $("result").textContent = state.over
    ? `Final scores: ${state.sides.map((name, side) => `${name} ${state.scores[side]}`).join(", ")}.` : "";
  const download = $("download");
  download.hidden = !state.over;
  $("again").hidden = !state.over;
  $("resume").hidden = state.over || state.your_turn || busy || running;
  if (state.over) download.href = `/api/games/${state.id}/record`;
  document.body.dataset.state = state.over ? "over" : state.your_turn && !busy ? "your-turn" : "waiting";
}

setup().catch(showError);
