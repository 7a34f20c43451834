// The All Fives page: shows what the server sends and sends back action ids. No rule lives here:
// the legal moves, the board and its open ends, the scores, the hand summaries and the log all come
// from the server (allfives/web). review.js steps through a finished game.
"use strict";

const $ = (id) => document.getElementById(id);
let options = null;   // GET /api/options
let state = null;     // the game's state, as the server last sent it
let shown = 0;        // log lines already on the page
let selected = null;  // index in state.hand of the tile chosen, waiting for an end
let busy = false;     // a request is on its way (one at a time per game)
let seenHands = 0;    // finished hands whose summary the player has seen
let summaryOpen = false;

async function api(method, path, body) {
  // every POST says JSON, with a body or without: the server refuses one that does not (a page on
  // another site can send a POST without it, never one with it)
  const init = { method, headers: method === "POST" ? { "Content-Type": "application/json" } : {} };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(path, init);
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
  if (!response.ok) {
    const error = new Error(data && data.error ? data.error : `${response.status} ${response.statusText}`);
    error.status = response.status;
    throw error;
  }
  return data;
}

function showError(error) {
  $("error").textContent = error ? String(error.message || error) : "";
}

function element(tag, attributes = {}, text = "") {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text !== "") node.textContent = text;
  return node;
}

const botName = (id) => (options && options.bots.find((b) => b.id === id) || { name: id }).name;

// -- setup: the form is built from the server's rules options and bots ----------------------

function ruleInput(option) {
  const id = "rule-" + option.name;
  const label = element("label", { for: id }, option.name.replace(/_/g, " ") + " ");
  let input;
  if (option.name === "num_players") {
    input = element("select", { id });
    for (let n = option.minimum; n <= option.maximum; n++) input.append(element("option", { value: String(n) }, String(n)));
    input.value = String(option.default);
  } else if (option.type === "boolean") {
    input = element("select", { id });
    input.append(element("option", { value: "" }, "default"), element("option", { value: "true" }, "on"),
                 element("option", { value: "false" }, "off"));
  } else if (option.type === "string") {
    input = element("select", { id });
    for (const choice of option.choices) input.append(element("option", { value: choice }, choice));
    input.value = option.default;
  } else {
    input = element("input", { id, type: "text", inputmode: "numeric", size: "10", "aria-describedby": id + "-help" });
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
  label.append(input, element("small", { id: id + "-help" }, " " + option.help));
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

const playerCount = () => Number($("rule-num_players").value) || 2;

function botSelect(id, label, first) {
  const select = element("select", { id });
  select.append(element("option", { value: "" }, first));
  for (const bot of options.bots) select.append(element("option", { value: bot.id }, `${bot.name}: ${bot.summary}`));
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
    const wrap = botSelect("bot-" + s, `seat ${s}`, "as chosen above");
    bots.append(wrap);
    const select = wrap.querySelector("select");
    if (kept[select.id] !== undefined) select.value = kept[select.id];
  }
}

function describeOpponent() {
  const bot = options.bots.find((b) => b.id === $("opponent").value);
  $("opponent-help").textContent = bot ? bot.summary + "." : "Strong where it has a setting for the game (2 or 3 players, 4 in partnerships), else Expert.";
}

async function setup() {
  options = await api("GET", "/api/options");
  const rules = $("rules");
  for (const option of options.rules) rules.append(ruleInput(option));
  const opponent = $("opponent");
  opponent.append(element("option", { value: "" }, "Strong (default)"));
  for (const bot of options.bots) opponent.append(element("option", { value: bot.id }, bot.name));
  const hint = botSelect("hint-bot", "", "the default (as the opponents' default)").querySelector("select");
  $("hint-bot").replaceWith(hint);
  buildSeats();
  describeOpponent();
  opponent.addEventListener("change", describeOpponent);
  $("rule-num_players").addEventListener("change", buildSeats);
  $("seat").addEventListener("change", buildSeats);
  $("setup-form").addEventListener("submit", (event) => { event.preventDefault(); newGame(); });
  $("again").addEventListener("click", showSetup);
  $("hint-button").addEventListener("click", askHint);
  $("resume").addEventListener("click", runBots);
  $("takeback").addEventListener("click", takeback);
  $("resign").addEventListener("click", resign);
  $("next-hand").addEventListener("click", closeSummary);
  $("summary").addEventListener("cancel", (event) => { event.preventDefault(); closeSummary(); });
  document.addEventListener("keydown", onKey);
  if (window.matchMedia("(min-width: 900px)").matches) $("log-panel").open = true;
  const id = gameInAddress();
  if (id) await resume(id);
}

// -- the game ---------------------------------------------------------------------------------

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const pace = () => Number(new URLSearchParams(location.search).get("pace") ?? $("pace").value);
const gameInAddress = () => new URLSearchParams(location.search).get("game");

function setAddress(id) {
  const params = new URLSearchParams(location.search);
  if (id) params.set("game", id); else params.delete("game");
  const query = params.toString();
  history.replaceState(null, "", location.pathname + (query ? "?" + query : ""));
}

function showSetup() {
  $("game").hidden = true;
  $("review").hidden = true;
  $("setup").hidden = false;
}

function startShowing(newState, seen) {
  state = newState;
  shown = 0;
  selected = null;
  seenHands = seen;
  $("log").replaceChildren();
  $("rules-list").replaceChildren();
  $("hint").replaceChildren();
  $("result").textContent = "";
  $("setup").hidden = true;
  $("review").hidden = true;
  $("game").hidden = false;
  setAddress(state.id);
  render();
}

async function newGame() {
  showError(null);
  const n = playerCount();
  const seat = Number($("seat").value);
  const opponent = $("opponent").value || null;
  const bots = Array.from({ length: n }, (_, s) => (s === seat ? null : $("bot-" + s).value || opponent));
  const body = { rules: readRules(), seat, bots, hint: $("hint-bot").value || null, casual: $("casual").checked };
  let created;
  try {
    created = await api("POST", "/api/games", body);
  } catch (error) {
    showError(error);
    return;
  }
  startShowing(created, 0);
  await runBots();
}

async function resume(id) {
  try {
    const got = await api("GET", `/api/games/${encodeURIComponent(id)}`);
    startShowing(got, got.hands.length);  // hands finished before the reload were seen
    await runBots();
  } catch (error) {
    setAddress(null);
    showError(error.status === 404 ? "That game is no longer on the server (games expire when idle): start a new one." : error);
  }
}

// the bots' turns, one request (one decision) at a time, so their moves appear one by one; after a
// failed request they stop, and "Continue" starts them again; a finished hand waits for the player
let running = false;
async function runBots() {
  if (running) return;
  running = true;
  render();
  try {
    while (state && !state.over && !state.your_turn && !summaryOpen) {
      await sleep(pace());
      if (summaryOpen) break;
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
    checkHands();
    render();
  }
}

async function play(action) {
  if (busy || !state || !state.your_turn || summaryOpen) return;
  selected = null;
  $("hint").replaceChildren();
  await send("POST", `/api/games/${state.id}/move`, { action });
  if (busyOk) await runBots();
}

async function takeback() {
  if (busy || running || !state || !state.can_takeback) return;
  await send("POST", `/api/games/${state.id}/takeback`);
  if (!busyOk) return;
  selected = null;
  shown = 0;
  seenHands = Math.min(seenHands, state.hands.length);
  $("log").replaceChildren();
  $("hint").replaceChildren();
  render();
  $("status").textContent = "move taken back: your move";
}

let resignArmed = false;
async function resign() {
  if (busy || !state || state.over) return;
  if (!resignArmed) {
    resignArmed = true;
    $("resign").textContent = "Resign? Click again";
    setTimeout(() => { resignArmed = false; $("resign").textContent = "Resign"; }, 4000);
    return;
  }
  resignArmed = false;
  $("resign").textContent = "Resign";
  await send("POST", `/api/games/${state.id}/resign`);
}

function chooseTile(index) {
  const tile = state.hand[index];
  if (!tile || !tile.moves.length || busy || !state.your_turn || summaryOpen) return;
  if (selected === index && tile.moves.length === 1) {
    play(tile.moves[0].action);  // tapped again: it fits one end only
    return;
  }
  selected = index;
  render();
  const first = document.querySelector("#targets .end-target");
  if (first) first.focus();
}

// -- between hands: the summary the server sent, until the player goes on ------------------------

function checkHands() {
  if (!state || state.hands.length <= seenHands) return;
  if (state.over) { seenHands = state.hands.length; return; }  // the result says it
  const hand = state.hands[state.hands.length - 1];
  seenHands = state.hands.length;
  fillSummary(hand);
  summaryOpen = true;
  const dialog = $("summary");
  if (!dialog.open) dialog.showModal();
  $("next-hand").textContent = `Next hand (hand ${hand.hand + 1})`;
  $("next-hand").focus();
}

function fillSummary(hand) {
  $("summary-title").textContent = `Hand ${hand.hand} over`;
  $("summary-how").textContent = hand.how;
  const seats = $("summary-seats");
  seats.replaceChildren(element("caption", {}, "Pips left and penalties"));
  const head = element("tr");
  for (const t of ["player", "pips left", "penalty"]) head.append(element("th", { scope: "col" }, t));
  seats.append(head);
  for (const s of hand.seats) {
    const row = element("tr");
    row.append(element("th", { scope: "row" }, s.name), element("td", {}, String(s.pips)), element("td", {}, s.penalty ? `-${s.penalty}` : "0"));
    seats.append(row);
  }
  const sides = $("summary-sides");
  sides.replaceChildren(element("caption", {}, "Scores"));
  const top = element("tr");
  for (const t of ["side", "start", "in play", "penalties", "bonus", "total"]) top.append(element("th", { scope: "col" }, t));
  sides.append(top);
  for (const s of hand.sides) {
    const row = element("tr");
    row.append(element("th", { scope: "row" }, s.name), element("td", {}, String(s.before)), element("td", {}, `+${s.in_play}`),
               element("td", {}, s.penalties ? `-${s.penalties}` : "0"), element("td", {}, s.bonus ? `+${s.bonus}` : "0"),
               element("td", { class: "after" }, String(s.after)));
    sides.append(row);
  }
}

function closeSummary() {
  const dialog = $("summary");
  if (dialog.open) dialog.close();
  summaryOpen = false;
  render();
  runBots();
}

// -- hints ------------------------------------------------------------------------------------------

async function askHint() {
  if (busy || !state || !state.your_turn) return;
  busy = true;
  $("hint").textContent = "thinking…";
  render();
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
const signed = (x) => (x >= 0 ? "+" : "−") + Math.abs(x).toFixed(1);

function showHint(hint) {
  const box = $("hint");
  box.replaceChildren(element("h2", {}, "Hint"),
                      element("p", { id: "hint-move" }, `The ${botName(hint.bot)} bot would play ${moveText(hint.move)}.`));
  const a = hint.analysis;
  const worlds = a.exact ? "nothing hidden: exact" : `an estimate from ${a.worlds} sampled deals of the hidden tiles, ${a.policy} playouts`;
  box.append(element("p", { class: "help" }, `The analysis below is a separate measure: ${worlds}, with 95% intervals. ` +
                      "It can disagree with the bot, whose search looks further than these playouts."));
  const table = element("table", { id: "analysis" });
  table.append(element("caption", {}, "Move analysis: points to the hand's end"));
  const head = element("tr");
  for (const title of ["move", "value", "95% interval", "win"]) head.append(element("th", { scope: "col" }, title));
  table.append(head);
  a.moves.forEach((m, k) => {
    const marks = [];
    if (m.action === hint.move.action) marks.push("bot's choice");
    if (k === 0) marks.push("best estimate");
    const row = element("tr", m.action === hint.move.action ? { class: "suggested" } : {});
    row.append(element("td", {}, moveText(m) + (marks.length ? ` — ${marks.join(", ")}` : "")), element("td", {}, signed(m.value)),
               element("td", {}, `[${signed(m.value_low)}, ${signed(m.value_high)}]`),
               element("td", {}, m.win === null ? "" : `${(100 * m.win).toFixed(0)}%`));
    table.append(row);
  });
  box.append(table);
}

function onKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (!$("review").hidden) { reviewKey(event); return; }
  if (!state || $("game").hidden || summaryOpen) return;
  const tag = event.target && event.target.tagName;
  if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
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

function renderSeats() {
  $("scores").replaceChildren(...state.sides.map((name, side) => {
    const cell = element("span", { class: "side" }, name + " ");
    cell.append(element("span", { class: "score", "data-side": String(side) }, String(state.scores[side])));
    return cell;
  }), element("span", { class: "target" }, `to ${state.rules.target_score} · hand ${state.hand_number}`));
  $("seats-strip").replaceChildren(...state.players.map((p) => {
    const item = element("li", { class: "seat" + (p.to_move ? " to-move" : "") + (p.seat === state.seat ? " mine" : "") });
    item.append(element("span", { class: "name" }, p.name),
                element("span", { class: "tiles" }, `${p.tiles} tile${p.tiles === 1 ? "" : "s"}`));
    if (p.to_move) item.append(element("span", { class: "turn" }, "to move"));
    return item;
  }), element("li", { class: "seat boneyard" }, `boneyard ${state.boneyard}`));
}

// Ends that lie close together on a small board (a phone, an arm bent back near another) would
// stack their buttons, and a tap would take the one on top: push overlapping buttons apart along the
// axis they overlap least, in pixels, and keep them placed in fractions of the board.
function spreadTargets(container) {
  const buttons = [...container.children];
  const box = container.getBoundingClientRect();
  if (buttons.length < 2 || !box.width || !box.height) return;
  const gap = 4;
  const at = buttons.map((b) => ({ x: parseFloat(b.style.left) / 100 * box.width, y: parseFloat(b.style.top) / 100 * box.height,
                                   w: b.offsetWidth + gap, h: b.offsetHeight + gap }));
  for (let round = 0; round < 30; round++) {
    let moved = false;
    for (let i = 0; i < at.length; i++) {
      for (let j = i + 1; j < at.length; j++) {
        const a = at[i], b = at[j];
        const ox = (a.w + b.w) / 2 - Math.abs(a.x - b.x), oy = (a.h + b.h) / 2 - Math.abs(a.y - b.y);
        if (ox <= 0 || oy <= 0) continue;
        moved = true;
        if (ox < oy) { const s = (a.x <= b.x ? -ox : ox) / 2; a.x += s; b.x -= s; }
        else { const s = (a.y <= b.y ? -oy : oy) / 2; a.y += s; b.y -= s; }
      }
    }
    if (!moved) break;
  }
  buttons.forEach((b, k) => { b.style.left = `${100 * at[k].x / box.width}%`; b.style.top = `${100 * at[k].y / box.height}%`; });
}

let drawnBoard = null;
function renderBoard(canPlay) {
  if (drawnBoard !== state.board) {  // redrawn only when it changed, so the last tile's animation plays once
    $("board").innerHTML = state.board;  // SVG drawn by allfives/web/board.py from the server's view
    drawnBoard = state.board;
    // the end targets are placed in fractions of the wrap: keep the wrap as wide as the picture
    // drawn in it, which a short window's height limit (--board-max-height in style.css) can narrow
    const box = $("board").querySelector("svg")?.viewBox?.baseVal;
    $("board-wrap").style.maxWidth = box && box.height ? `calc(var(--board-max-height) * ${(box.width / box.height).toFixed(4)})` : "";
  }
  const targets = $("targets");
  targets.replaceChildren();
  const tile = selected !== null && canPlay ? state.hand[selected] : null;
  for (const end of state.ends) {
    const move = tile && tile.moves.find((m) => m.end === end.end);
    if (!move) continue;
    const k = tile.moves.indexOf(move);
    const label = `play ${tile.tile[0]}-${tile.tile[1]} ${end.end === "lead" ? "as the lead" : "on the " + end.end + " end"}, ${move.points} points (key ${k + 1})`;
    const button = element("button", { type: "button", class: "end-target end", "data-end": end.end, "data-action": String(move.action),
                                       "aria-label": label, title: label }, move.points ? `+${move.points}` : end.end[0].toUpperCase());
    button.style.left = `${100 * end.x}%`;
    button.style.top = `${100 * end.y}%`;
    button.addEventListener("click", () => play(move.action));
    targets.append(button);
  }
  spreadTargets(targets);
  const last = state.last;
  $("last-move").textContent = last ? `Last: ${state.names[last.seat]} played ${last.tile[0]}-${last.tile[1]}` +
    (last.points ? `, scoring ${last.points}` : "") + `. Open ends count ${state.count}.` : "The layout is empty: the first tile leads.";
}

function render() {
  if (!state) return;
  const canPlay = state.your_turn && !busy && !summaryOpen;
  renderSeats();
  renderBoard(canPlay);
  $("hand").replaceChildren(...state.hand.map((tile, index) => {
    const name = `${tile.tile[0]}-${tile.tile[1]}`;
    const button = element("button", { type: "button", class: "tile", "data-tile": name,
                                       "aria-label": `tile ${name}${tile.moves.length ? "" : ", does not fit"}`,
                                       "aria-pressed": String(index === selected) });
    button.innerHTML = tile.svg;
    button.disabled = !canPlay || !tile.moves.length;
    if (index === selected) button.classList.add("selected");
    button.addEventListener("click", () => chooseTile(index));
    return button;
  }));
  $("prompt").textContent = !canPlay ? "" : selected === null ? "Your move: tap a tile, then where it goes on the board."
    : "Now tap an end on the board (Esc to choose another tile).";
  $("hint-button").disabled = !canPlay;
  $("takeback").disabled = !state.can_takeback || busy || running;
  $("takeback").hidden = !state.casual;
  $("resign").disabled = state.over || busy;

  const log = $("log");
  for (; shown < state.log.length; shown++) log.append(element("li", {}, state.log[shown]));
  log.scrollTop = log.scrollHeight;

  let status;
  if (state.over) {
    const plural = state.winner === "you" || (state.winner || "").includes(" & ");
    status = state.winner === null ? "game over" : `game over: ${state.winner} ${plural ? "win" : "wins"}` + (state.resigned ? " (you resigned)" : "");
  } else if (summaryOpen) status = "hand over";
  else if (state.your_turn) status = "your move";
  else status = `${state.names[state.to_move]} to move`;
  $("status").textContent = status;
  $("result").textContent = state.over
    ? `Final scores: ${state.sides.map((name, side) => `${name} ${state.scores[side]}`).join(", ")}.` : "";
  const download = $("download");
  download.hidden = !state.over;
  $("review-button").hidden = !state.over;
  $("resume").hidden = state.over || state.your_turn || busy || running || summaryOpen;
  if (state.over) download.href = `/api/games/${state.id}/record`;
  const rules = $("rules-list");
  if (!rules.childElementCount) {
    for (const r of state.rules_text) rules.append(element("dt", {}, r.name.replace(/_/g, " ")), element("dd", {}, r.text));
  }
  document.body.dataset.state = state.over ? "over" : summaryOpen ? "between-hands" : state.your_turn && !busy ? "your-turn" : "waiting";
}

setup().catch(showError);
