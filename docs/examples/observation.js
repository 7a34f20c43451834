// All Fives observation vector (OBS_VERSION 1) in plain JavaScript, from docs/observation.md,
// plus a fetch client of the bot server (`allfives serve`). No dependencies; works in Node 18+
// (CommonJS) and, without the last line, in a browser. docs/frontends.md describes the
// `position` object; tests/test_frontend_js.py checks this file against the Python encoder.
"use strict";

const OBS_VERSION = 1;
const NUM_ACTIONS = 112;
const ARMS = ["west", "east", "north", "south"];

// [name, size] of every piece, in vector order (docs/observation.md, "Layout of the vector")
const PIECES = [
  ["hand", 28], ["played", 28], ["arm_pip", 28], ["arm_open", 4], ["arm_double", 4], ["arm_value", 4],
  ["spinner_pip", 7], ["spinner_sides", 2], ["ends_total", 1], ["lead", 1], ["forced", 1],
  ["move_points", 112], ["tile_counts", 4], ["boneyard", 2], ["missing_pips", 28], ["scores", 4],
  ["target", 1], ["seats", 4], ["partner", 4], ["num_players", 3], ["rules", 3], ["hand_pips", 1],
  ["unseen_pips", 7],
];
const OFFSETS = {};
let OBS_SIZE = 0;
for (const [name, size] of PIECES) {
  OFFSETS[name] = OBS_SIZE;
  OBS_SIZE += size;
} // OBS_SIZE === 281

// Tiles 0..27 in the order 0-0, 0-1, ..., 0-6, 1-1, ..., 6-6.
const TILES = [];
for (let a = 0; a <= 6; a++) for (let b = a; b <= 6; b++) TILES.push([a, b]);

/** Index 0..27 of a tile [a, b] (either order). */
function tileIndex(tile) {
  let [a, b] = tile;
  if (!Number.isInteger(a) || !Number.isInteger(b) || a < 0 || b < 0 || a > 6 || b > 6) {
    throw new RangeError(`not a tile: ${JSON.stringify(tile)}`);
  }
  if (a > b) [a, b] = [b, a];
  let index = 0;
  for (let i = 0; i < a; i++) index += 7 - i;
  return index + (b - a);
}

/** Arm id of an end name: west 0, east 1, north 2, south 3; the lead uses west. */
function endIndex(end) {
  if (end === "lead") return 0;
  const e = ARMS.indexOf(end);
  if (e < 0) throw new RangeError(`not an end: ${JSON.stringify(end)}`);
  return e;
}

/** Action id of placing `tile` on `end`: 4 * tile index + arm id. */
function actionId(tile, end) {
  return 4 * tileIndex(tile) + endIndex(end);
}

/** The rules options with their defaults resolved (docs/rules.md), plus tiles_per_hand. */
function resolveRules(options = {}) {
  const n = options.num_players ?? 2;
  const handSize = options.hand_size ?? "standard";
  let tiles = options.tiles_per_hand;
  if (tiles === undefined) {
    if (handSize === "standard") tiles = { 2: 9, 3: 7, 4: 5 }[n];
    else if (handSize === "five") tiles = 5;
    else if (handSize === "seven_five") tiles = n === 2 ? 7 : 5;
    else tiles = handSize;
  }
  return {
    num_players: n,
    partnerships: options.partnerships ?? n === 4,
    tiles_per_hand: tiles,
    boneyard_reserve: options.boneyard_reserve ?? 0,
    hand_end: options.hand_end ?? "subtract",
    target_score: options.target_score ?? (n === 2 ? 250 : 200),
  };
}

/** Per arm id, the open end {pip, double, value} or null (value defaults to 2*pip for a double, else pip). */
function armEnds(position) {
  const ends = position.ends || {};
  return ARMS.map((name) => {
    const end = ends[name];
    if (end === null || end === undefined) return null;
    const double = Boolean(end.double);
    return { pip: end.pip, double, value: end.value ?? (double ? 2 * end.pip : end.pip) };
  });
}

/** Points of placing `tile` on `end` now (a legal placement): the new total of the ends if a multiple of 5. */
function placementPoints(position, tile, end) {
  const [a, b] = tile;
  let count;
  if ((position.played || []).length === 0) {
    count = a + b; // a lone lead counts its pips once
  } else {
    const arms = armEnds(position);
    const e = endIndex(end);
    const p = arms[e].pip;
    const total = arms.reduce((sum, arm) => sum + (arm ? arm.value : 0), 0);
    count = total - arms[e].value + (a === b ? 2 * p : a === p ? b : a);
  }
  return count % 5 === 0 ? count : 0;
}

/** The observation vector (Float32Array of OBS_SIZE) of `position` (docs/frontends.md). */
function encodeObservation(position) {
  const o = new Float32Array(OBS_SIZE);
  const rules = resolveRules(position.rules || {});
  const n = rules.num_players;
  const seat = position.seat;
  const clip1 = (x) => Math.min(x, 1);

  const inHand = new Array(28).fill(false);
  const onTable = new Array(28).fill(false);
  let handPips = 0;
  for (const t of position.hand) {
    const i = tileIndex(t);
    inHand[i] = true;
    o[OFFSETS.hand + i] = 1;
    handPips += t[0] + t[1];
  }
  const played = position.played || [];
  for (const t of played) {
    const i = tileIndex(t);
    onTable[i] = true;
    o[OFFSETS.played + i] = 1;
  }

  // the layout: arms, spinner, total of the ends
  const arms = armEnds(position);
  let count = 0;
  arms.forEach((arm, e) => {
    if (!arm) return;
    o[OFFSETS.arm_pip + 7 * e + arm.pip] = 1;
    o[OFFSETS.arm_open + e] = 1;
    if (arm.double) o[OFFSETS.arm_double + e] = 1;
    o[OFFSETS.arm_value + e] = arm.value / 12;
    count += arm.value;
  });
  const spinner = position.spinner;
  if (spinner) {
    o[OFFSETS.spinner_pip + spinner.pip] = 1;
    if (spinner.covered >= 1) o[OFFSETS.spinner_sides] = 1;
    if (spinner.covered >= 2) o[OFFSETS.spinner_sides + 1] = 1;
  }
  if (played.length === 1) count = played[0][0] + played[0][1]; // a lone lead counts its pips once
  o[OFFSETS.ends_total] = clip1(count / 60);
  if (played.length === 0) o[OFFSETS.lead] = 1;
  if (position.forced) o[OFFSETS.forced] = 1;

  // legal moves and what they score now
  for (const move of position.legal || []) {
    const points = move.points ?? placementPoints(position, move.tile, move.end);
    if (points) o[OFFSETS.move_points + actionId(move.tile, move.end)] = clip1(points / 30);
  }

  // seats, relative to the viewer: r = 0 is the viewer, r = 2 the partner
  for (let r = 0; r < n; r++) {
    const s = (seat + r) % n;
    o[OFFSETS.tile_counts + r] = clip1(position.tile_counts[s] / 14);
    for (const pip of (position.missing_pips || [])[s] || []) o[OFFSETS.missing_pips + 7 * r + pip] = 1;
    const side = rules.partnerships ? s % 2 : s;
    o[OFFSETS.scores + r] = Math.max(-1, Math.min(1, position.scores[side] / rules.target_score));
    o[OFFSETS.seats + r] = 1;
  }
  o[OFFSETS.boneyard] = position.boneyard / 28;
  o[OFFSETS.boneyard + 1] = position.drawable / 28;

  // the rules
  o[OFFSETS.target] = clip1(rules.target_score / 500);
  if (rules.partnerships) o[OFFSETS.partner + 2] = 1;
  o[OFFSETS.num_players + n - 2] = 1;
  if (rules.hand_end === "winner_takes") o[OFFSETS.rules] = 1;
  o[OFFSETS.rules + 1] = rules.boneyard_reserve / 28;
  o[OFFSETS.rules + 2] = clip1(rules.tiles_per_hand / 14);

  // pips
  o[OFFSETS.hand_pips] = clip1(handPips / 100);
  for (let pip = 0; pip <= 6; pip++) {
    let unseen = 0;
    TILES.forEach(([a, b], i) => {
      if ((a === pip || b === pip) && !inHand[i] && !onTable[i]) unseen++;
    });
    o[OFFSETS.unseen_pips + pip] = unseen / 7;
  }
  return o;
}

/** The action mask (Float32Array of 112, 1 = legal) of `position`, as the ONNX graph takes it. */
function actionMask(position) {
  const mask = new Float32Array(NUM_ACTIONS);
  for (const move of position.legal || []) mask[actionId(move.tile, move.end)] = 1;
  return mask;
}

/** Ask a bot server for a move: `request` is the body of POST /move (docs/frontends.md). */
async function requestMove(baseUrl, request) {
  const response = await fetch(`${baseUrl.replace(/\/$/, "")}/move`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(request),
  });
  const body = await response.json();
  if (!response.ok) throw new Error(`bot server ${response.status}: ${body.error}`);
  return body; // {action, tile, end, points, obs_version[, legal]}
}

module.exports = {
  OBS_VERSION, OBS_SIZE, OFFSETS, PIECES, NUM_ACTIONS, TILES,
  tileIndex, endIndex, actionId, resolveRules, placementPoints, encodeObservation, actionMask, requestMove,
};
