// allfives.js: All Fives in JavaScript, for Node 18+ and the browser (one ES module, no build step,
// no dependencies). It holds
//
// - the observation of docs/observation.md, every version: `encodeObservation(position)` gives the
//   version-4 vector (Float32Array of 1261) that the shipped policies read, `actionMask(position)`
//   the mask of the 112 action ids; `position` is the plain data of docs/frontends.md
//   ("A JavaScript runtime"). The lookahead pieces of versions 2 to 4 are a port of
//   allfives_env/lookahead.py (`facts_of_moves_python`) and the layout rules of
//   allfives_env/engine/layout.py;
// - the policy runner: `loadPolicy(ort, bytes)` opens an exported policy (`allfives export`, the
//   shipped models/allfives_{2,3,4}p.onnx) in onnxruntime-web or onnxruntime-node, checks the
//   graph's input shape against the observation sizes, and `policyMove(policy, position)` picks the
//   move exactly as the Python `onnx:` agent does (the graph's `action`: the argmax of the masked
//   logits; a lone legal move without running the graph);
// - the rules: `Game`, a port of allfives_env/engine/game.py (deals, forced draws, passes, scoring,
//   hand ends, the target), whose `toRecord()` is an allfives-record/1 that `allfives replay` checks.
//
// tests/test_js_runtime.py checks all three against Python: the vectors bit for bit and the
// policy's moves on 10,000+ positions, and the records of whole games played here.

export const OBS_VERSION = 4;
export const NUM_TILES = 28;
export const NUM_ACTIONS = 112;
export const ARMS = ["west", "east", "north", "south"];
/** The pip of an arm that does not exist (no tile shows it). */
const CLOSED = 7;
const ALL_TILES = (1 << NUM_TILES) - 1;

// [name, size] of every piece, in vector order (docs/observation.md, "Layout of the vector")
export const PIECES = [
  ["hand", 28], ["played", 28], ["arm_pip", 28], ["arm_open", 4], ["arm_double", 4], ["arm_value", 4],
  ["spinner_pip", 7], ["spinner_sides", 2], ["ends_total", 1], ["lead", 1], ["forced", 1],
  ["move_points", 112], ["tile_counts", 4], ["boneyard", 2], ["missing_pips", 28], ["scores", 4],
  ["target", 1], ["seats", 4], ["partner", 4], ["num_players", 3], ["rules", 3], ["hand_pips", 1],
  ["unseen_pips", 7],
];
// the pieces version 2 appends
export const LOOKAHEAD_PIECES = [
  ["may_hold", 84], ["reply_threat", 112], ["reply_max", 112], ["reply_none", 112], ["partner_reply", 112],
  ["mobility", 112], ["variety", 112],
];
// the piece version 3 appends
export const FOLLOW_UP_PIECES = [["follow_up", 112]];
// the piece version 4 appends
export const FOLLOW_UP_NET_PIECES = [["follow_up_net", 112]];
export const OFFSETS = {};
/** The size of each version's vector: {1: 281, 2: 1037, 3: 1149, 4: 1261}. */
export const OBS_SIZES = {};
{
  let offset = 0;
  [PIECES, LOOKAHEAD_PIECES, FOLLOW_UP_PIECES, FOLLOW_UP_NET_PIECES].forEach((pieces, i) => {
    for (const [name, size] of pieces) {
      OFFSETS[name] = offset;
      offset += size;
    }
    OBS_SIZES[i + 1] = offset;
  });
}
export const OBS_SIZE = OBS_SIZES[OBS_VERSION];

// ------------------------------------------------------------------ tiles (engine/tiles.py)
/** Tiles 0..27 as [a, b], in the order 0-0, 0-1, ..., 0-6, 1-1, ..., 6-6. */
export const TILES = [];
for (let a = 0; a <= 6; a++) for (let b = a; b <= 6; b++) TILES.push([a, b]);
const TILE_PIPS = TILES.map(([a, b]) => a + b);
const IS_DOUBLE = TILES.map(([a, b]) => a === b);
const TILE_PIP_MASK = TILES.map(([a, b]) => (1 << a) | (1 << b));
/** PIP_TILES[p]: mask of the tiles showing pip p; PIP_TILES[CLOSED] is empty. */
const PIP_TILES = [];
for (let p = 0; p <= 7; p++) PIP_TILES.push(TILES.reduce((m, [a, b], t) => (a === p || b === p ? m | (1 << t) : m), 0));
/** OTHER_HALF[t][p]: the pip tile t leaves exposed when matched against p (CLOSED where it does not show p). */
const OTHER_HALF = TILES.map(([a, b]) => Array.from({ length: 8 }, (_, p) => (p === a ? b : p === b ? a : CLOSED)));
/** TILES_WITH_PIPS[m]: mask of the tiles showing any pip of the 7-bit mask m. */
const TILES_WITH_PIPS = Array.from({ length: 128 }, (_, m) => {
  let mask = 0;
  for (let p = 0; p < 7; p++) if ((m >> p) & 1) mask |= PIP_TILES[p];
  return mask;
});

function popcount(x) {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** The tile indices of a mask, ascending. */
function maskTiles(mask) {
  const out = [];
  for (let t = 0; t < NUM_TILES; t++) if ((mask >> t) & 1) out.push(t);
  return out;
}

function maskPips(mask) {
  let total = 0;
  for (let t = 0; t < NUM_TILES; t++) if ((mask >> t) & 1) total += TILE_PIPS[t];
  return total;
}

function maskPipSet(mask) {
  let pips = 0;
  for (let t = 0; t < NUM_TILES; t++) if ((mask >> t) & 1) pips |= TILE_PIP_MASK[t];
  return pips;
}

/** Index 0..27 of a tile [a, b] (either order). */
export function tileIndex(tile) {
  if (!Array.isArray(tile) || tile.length !== 2) throw new RangeError(`not a tile: ${JSON.stringify(tile)}`);
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
export function endIndex(end) {
  if (end === "lead") return 0;
  const e = ARMS.indexOf(end);
  if (e < 0) throw new RangeError(`not an end: ${JSON.stringify(end)}`);
  return e;
}

/** Action id of placing `tile` ([a, b]) on `end` (a name): 4 * tile index + arm id. */
export function actionId(tile, end) {
  return 4 * tileIndex(tile) + endIndex(end);
}

/** "5-6@east" for an action id. */
export function actionName(action) {
  const [a, b] = TILES[action >> 2];
  return `${a}-${b}@${ARMS[action & 3]}`;
}

// ------------------------------------------------------------------ rules (engine/rules.py)
const STANDARD = { 2: 9, 3: 7, 4: 5 };
const SEVEN_FIVE = { 2: 7, 3: 5, 4: 5 };
const RULE_NAMES = ["num_players", "partnerships", "hand_size", "boneyard_reserve", "hand_end", "target_score"];

/**
 * The rules options (docs/rules.md) checked, with their defaults resolved as `Rules.make` does, plus
 * `tiles_per_hand`, `num_sides`, `side_of` and `boneyard_size`. `tiles_per_hand` may stand for
 * `hand_size`. A RangeError names a bad option.
 */
export function resolveRules(options = {}) {
  if (options === null || typeof options !== "object") throw new RangeError("rules must be an object of rules options");
  for (const key of Object.keys(options)) {
    if (!RULE_NAMES.includes(key) && !["tiles_per_hand", "num_sides", "side_of", "boneyard_size"].includes(key)) {
      throw new RangeError(`unknown rules option ${JSON.stringify(key)}; known: ${RULE_NAMES.join(", ")}`);
    }
  }
  const n = options.num_players ?? 2;
  if (![2, 3, 4].includes(n)) throw new RangeError(`num_players must be 2, 3 or 4, got ${JSON.stringify(n)}`);
  const partnerships = options.partnerships ?? n === 4;
  if (typeof partnerships !== "boolean") throw new RangeError("partnerships must be true or false");
  if (partnerships && n !== 4) throw new RangeError(`partnerships need num_players=4, got num_players=${n}`);
  let handSize = options.hand_size ?? "standard";
  let tiles;
  if (options.hand_size === undefined && options.tiles_per_hand !== undefined) {
    tiles = handSize = options.tiles_per_hand;
  } else if (handSize === "standard") tiles = STANDARD[n];
  else if (handSize === "five") tiles = 5;
  else if (handSize === "seven_five") tiles = SEVEN_FIVE[n];
  else tiles = handSize;
  if (!Number.isInteger(tiles) || tiles < 1 || n * tiles > NUM_TILES) {
    throw new RangeError(`hand_size must be standard, five, seven_five or a number of tiles that fits, got ${JSON.stringify(handSize)}`);
  }
  const boneyardSize = NUM_TILES - n * tiles;
  const reserve = options.boneyard_reserve ?? 0;
  if (!Number.isInteger(reserve) || reserve < 0 || reserve > boneyardSize) {
    throw new RangeError(`boneyard_reserve must be an integer from 0 to the boneyard size (${boneyardSize})`);
  }
  const handEnd = options.hand_end ?? "subtract";
  if (handEnd !== "subtract" && handEnd !== "winner_takes") throw new RangeError("hand_end must be subtract or winner_takes");
  const target = options.target_score ?? (n === 2 ? 250 : 200);
  if (!Number.isInteger(target) || target < 1 || target > 100000) throw new RangeError("target_score must be a positive integer up to 100000");
  return {
    num_players: n,
    partnerships,
    hand_size: handSize,
    boneyard_reserve: reserve,
    hand_end: handEnd,
    target_score: target,
    tiles_per_hand: tiles,
    num_sides: partnerships ? 2 : n,
    side_of: Array.from({ length: n }, (_, s) => (partnerships ? s % 2 : s)),
    boneyard_size: boneyardSize,
  };
}

/** The options of resolved rules, as records and the bot server write them. */
export function rulesOptions(rules) {
  return Object.fromEntries(RULE_NAMES.map((name) => [name, rules[name]]));
}

// ------------------------------------------------------------------ the layout (engine/layout.py)
/** What the ends count if a legal placement of `tile` on `end` is made: the points it scores (0 if none). */
function placementPoints(pips, values, empty, tile, end) {
  let count;
  if (empty) count = TILE_PIPS[tile];
  else {
    const p = pips[end];
    count = values[0] + values[1] + values[2] + values[3] - values[end] + (IS_DOUBLE[tile] ? p + p : OTHER_HALF[tile][p]);
  }
  return count % 5 === 0 ? count : 0;
}

/** Mask of the tiles that fit some end of a started layout showing `pips`. */
function fittingTiles(pips) {
  return PIP_TILES[pips[0]] | PIP_TILES[pips[1]] | PIP_TILES[pips[2]] | PIP_TILES[pips[3]];
}

/** For the tiles of `candidates` that would score on some end of a started layout, the most each would score. */
function scoringReplies(pips, values, candidates) {
  const total = values[0] + values[1] + values[2] + values[3];
  const best = new Map();
  for (let e = 0; e < 4; e++) {
    const p = pips[e];
    if (p === CLOSED) continue;
    const rest = total - values[e];
    let fits = candidates & PIP_TILES[p];
    while (fits) {
      const t = 31 - Math.clz32(fits & -fits);
      fits &= fits - 1;
      const points = rest + (IS_DOUBLE[t] ? p + p : OTHER_HALF[t][p]);
      if (points % 5 === 0 && points > (best.get(t) ?? 0)) best.set(t, points);
    }
  }
  return [...best.values()];
}

/** The most one tile of `hand` scores on the ends of a started layout (lookahead.best_score). */
function bestScore(pips, values, hand) {
  const replies = scoringReplies(pips, values, hand);
  return replies.length ? Math.max(...replies) : 0;
}

/**
 * [tile, end, points] for each tile of `candidates` that fits an end of a started layout: on the
 * first end where it scores the most it can; the most scoring first, ties to the lower tile
 * (layout.tile_replies).
 */
function tileReplies(pips, values, candidates) {
  const out = [];
  let fits = candidates & fittingTiles(pips);
  while (fits) {
    const t = 31 - Math.clz32(fits & -fits);
    fits &= fits - 1;
    let best = -1, bestEnd = -1;
    for (let e = 0; e < 4; e++) {
      const p = pips[e];
      if (p === CLOSED || !((PIP_TILES[p] >> t) & 1)) continue;
      const points = placementPoints(pips, values, false, t, e);
      if (points > best) [best, bestEnd] = [points, e];
    }
    out.push([t, bestEnd, best]);
  }
  return out.sort((x, y) => y[2] - x[2]); // stable: ties keep the lower tile first
}

/** The ends once `tile` is placed on `end` (it fits), only that end changing (layout.end_after_reply): [pips, values]. */
function endAfterReply(pips, values, tile, end) {
  const afterPips = pips.slice();
  const afterValues = values.slice();
  const pe = pips[end];
  afterValues[end] = IS_DOUBLE[tile] ? pe + pe : OTHER_HALF[tile][pe];
  if (!IS_DOUBLE[tile]) afterPips[end] = afterValues[end];
  return [afterPips, afterValues];
}

/**
 * The expected `value(pips, values, allowed, p)` of the ends once the next seat (`next`, or null) has
 * replied: its fitting tiles ranked by the most each scores (tileReplies), the first one held played
 * and no longer among what it may hold; none held leaves the ends (lookahead.after_next_reply).
 */
function afterNextReply(pips, values, next, value) {
  const allowed = next ? next.allowed : 0;
  const p = next ? next.p : 0.0;
  let miss = 1.0;
  let expected = 0.0;
  for (const [t, e] of next ? tileReplies(pips, values, allowed) : []) {
    const [afterPips, afterValues] = endAfterReply(pips, values, t, e);
    expected += value(afterPips, afterValues, allowed & ~(1 << t), p) * p * miss;
    miss *= 1.0 - p;
  }
  return expected + value(pips, values, allowed, p) * miss;
}

/** The expected most `left` scores next turn once the next seat (`next`, or null) has replied (lookahead.follow_up_of). */
function followUp(pips, values, left, next) {
  return afterNextReply(pips, values, next, (pips, values) => bestScore(pips, values, left));
}

/** The arms' pips and values that placing `tile` on `end` would leave (`Layout.ends_after`). */
function endsAfter(lay, tile, end) {
  if (lay.empty) {
    const [a, b] = TILES[tile];
    return [[a, b, CLOSED, CLOSED], a === b ? [a + a, a + a, 0, 0] : [a, b, 0, 0]];
  }
  const pips = lay.pips.slice();
  const values = lay.values.slice();
  if ((lay.spinnerSides >> end) & 1 && lay.spinnerCovered === 1) pips[2] = pips[3] = lay.spinner;
  const p = pips[end];
  if (IS_DOUBLE[tile]) values[end] = p + p;
  else pips[end] = values[end] = OTHER_HALF[tile][p];
  return [pips, values];
}

/** The layout of one hand: arms, open ends, the spinner (a port of `engine.layout.Layout`). */
export class Layout {
  constructor() {
    this.pips = [CLOSED, CLOSED, CLOSED, CLOSED];
    this.values = [0, 0, 0, 0];
    this.spinner = -1;
    this.spinnerSides = 0; // bit e: the end of arm e is an uncovered side of the spinner
    this.spinnerCovered = 0;
    this.numTiles = 0;
    this.played = 0;
    this.openTiles = ALL_TILES;
    this.count = 0;
    this.arms = [[], [], [], []];
    this.lead = -1;
    this.doubleEnds = 0;
  }

  get empty() {
    return this.numTiles === 0;
  }

  fits(tile, end) {
    if (this.numTiles === 0) return end === 0;
    return (PIP_TILES[this.pips[end]] >> tile) & 1 ? true : false;
  }

  /** Action ids placing a tile of the mask `candidates` on an end it fits, ascending. */
  actionsFor(candidates) {
    const out = [];
    if (this.numTiles === 0) {
      for (const t of maskTiles(candidates)) out.push(t << 2);
      return out;
    }
    for (const t of maskTiles(candidates & this.openTiles)) {
      for (let e = 0; e < 4; e++) if ((PIP_TILES[this.pips[e]] >> t) & 1) out.push((t << 2) + e);
    }
    return out;
  }

  openPipsMask() {
    let m = 0;
    for (const p of this.pips) if (p !== CLOSED) m |= 1 << p;
    return m;
  }

  /** Place a tile (assumed legal); return the points it scores (0 if none). */
  place(tile, end) {
    const pips = this.pips;
    const values = this.values;
    this.numTiles += 1;
    this.played |= 1 << tile;
    let count;
    if (this.numTiles === 1) {
      this.lead = tile;
      const [a, b] = TILES[tile];
      pips[0] = a;
      pips[1] = b;
      if (a === b) {
        this.spinner = a;
        this.spinnerSides = 0b11;
        this.doubleEnds = 0b11;
        values[0] = values[1] = a + a;
      } else {
        values[0] = a;
        values[1] = b;
      }
      count = a + b;
    } else {
      this.arms[end].push(tile);
      const bit = 1 << end;
      if (this.spinnerSides & bit) {
        this.spinnerSides ^= bit;
        this.spinnerCovered += 1;
        if (this.spinnerCovered === 2) pips[2] = pips[3] = this.spinner;
      }
      if (IS_DOUBLE[tile]) {
        const p = pips[end];
        values[end] = p + p;
        this.doubleEnds |= bit;
        if (this.spinner < 0) {
          this.spinner = p;
          this.spinnerSides = bit;
          this.spinnerCovered = 1;
        }
      } else {
        this.doubleEnds &= ~bit;
        const q = OTHER_HALF[tile][pips[end]];
        pips[end] = q;
        values[end] = q;
      }
      count = values[0] + values[1] + values[2] + values[3];
    }
    this.count = count;
    this.openTiles = fittingTiles(pips) & ~this.played;
    return count % 5 === 0 ? count : 0;
  }
}

// ------------------------------------------------------------------ positions
/**
 * The facts the encoder reads, from a position in plain data (docs/frontends.md): masks and arrays
 * in the engine's own terms. Throws RangeError for a tile, end or seat that cannot be read.
 */
export function readPosition(position) {
  const rules = resolveRules(position.rules || {});
  const n = rules.num_players;
  const seat = position.seat;
  if (!Number.isInteger(seat) || seat < 0 || seat >= n) throw new RangeError(`seat must be 0..${n - 1}, got ${JSON.stringify(seat)}`);
  let hand = 0;
  for (const t of position.hand) hand |= 1 << tileIndex(t);
  const playedList = position.played || [];
  let played = 0;
  for (const t of playedList) played |= 1 << tileIndex(t);
  const empty = playedList.length === 0;
  const pips = [CLOSED, CLOSED, CLOSED, CLOSED];
  const values = [0, 0, 0, 0];
  let doubleEnds = 0;
  const ends = position.ends || {};
  ARMS.forEach((name, e) => {
    const end = ends[name];
    if (end === null || end === undefined) return;
    if (!Number.isInteger(end.pip) || end.pip < 0 || end.pip > 6) throw new RangeError(`ends.${name}.pip must be a pip 0..6`);
    const double = Boolean(end.double);
    pips[e] = end.pip;
    values[e] = end.value ?? (double ? 2 * end.pip : end.pip);
    if (double) doubleEnds |= 1 << e;
  });
  const spinner = position.spinner ? position.spinner.pip : -1;
  const spinnerCovered = position.spinner ? position.spinner.covered ?? 0 : 0;
  // the west or east end that is still an uncovered side of the spinner: the spinner itself (the
  // only double of its pip) at that end, while fewer than two sides are covered
  let spinnerSides = 0;
  if (spinner >= 0 && spinnerCovered < 2) {
    for (let e = 0; e < 2; e++) if ((doubleEnds >> e) & 1 && pips[e] === spinner) spinnerSides |= 1 << e;
  }
  const count = playedList.length === 1 ? TILE_PIPS[tileIndex(playedList[0])] : values[0] + values[1] + values[2] + values[3];
  const lay = { empty, pips, values, spinner, spinnerSides, spinnerCovered };
  const legal = [];
  const points = [];
  for (const move of position.legal || []) {
    const action = actionId(move.tile, move.end);
    legal.push(action);
    points.push(move.points ?? placementPoints(pips, values, empty, action >> 2, action & 3));
  }
  const missing = Array.from({ length: n }, (_, s) => {
    let m = 0;
    for (const p of (position.missing_pips || [])[s] || []) m |= 1 << p;
    return m;
  });
  return {
    rules, seat, hand, played, lay, doubleEnds, count, legal, points, missing,
    forced: Boolean(position.forced),
    tileCounts: position.tile_counts,
    boneyard: position.boneyard,
    drawable: position.drawable,
    scores: position.scores,
  };
}

/** What the legal move `action` of `position` is, in the bot server's words: {action, tile, end, points}. */
export function describeMove(position, action) {
  const view = readPosition(position);
  const i = view.legal.indexOf(action);
  if (i < 0) throw new RangeError(`action ${action} is not a legal move of the position`);
  return { action, tile: [...TILES[action >> 2]], end: view.lay.empty ? "lead" : ARMS[action & 3], points: view.points[i] };
}

// ------------------------------------------------------------------ the observation
/** The expected best of independent prizes `values`, each present with probability `p` (lookahead.expected_best). */
function expectedBest(values, p) {
  if (p <= 0 || values.length === 0) return 0;
  values = values.slice().sort((x, y) => y - x);
  let miss = 1.0;
  let total = 0.0;
  for (const v of values) {
    if (v <= 0) break;
    total += v * p * miss;
    miss *= 1.0 - p;
  }
  return total;
}

/**
 * The seat's best next move on the ends of a started layout judged one exchange deep: the most, over
 * the tiles of `left` and the ends each fits, of the points it scores minus the expected best scoring
 * reply of a seat holding each tile of `allowed` with probability `p`; holding no tile that fits,
 * 0 minus that reply on the ends as they are (lookahead.net_after).
 */
function netAfter(pips, values, left, allowed, p) {
  let best = null;
  for (let e = 0; e < 4; e++) {
    const pe = pips[e];
    if (pe === CLOSED) continue;
    let fits = left & PIP_TILES[pe];
    while (fits) {
      const t = 31 - Math.clz32(fits & -fits);
      fits &= fits - 1;
      const [afterPips, afterValues] = endAfterReply(pips, values, t, e);
      const v = placementPoints(pips, values, false, t, e) - expectedBest(scoringReplies(afterPips, afterValues, allowed), p);
      if (best === null || v > best) best = v;
    }
  }
  return best === null ? 0.0 - expectedBest(scoringReplies(pips, values, allowed), p) : best;
}

/** followUp one exchange deeper: the expected netAfter once the next seat (`next`, or null) has replied (lookahead.follow_up_net_of). */
function followUpNet(pips, values, left, next) {
  return afterNextReply(pips, values, next, (pips, values, allowed, p) => netAfter(pips, values, left, allowed, p));
}

/** The reply model of `seat` (lookahead.reply_model): the tiles it may hold and the chance of each, or null. */
function replyModel(view, seat, unseen) {
  if (seat === null || seat === view.seat || view.tileCounts[seat] === 0) return null;
  const allowed = unseen & ~TILES_WITH_PIPS[view.missing[seat]];
  const k = popcount(allowed);
  return { allowed, p: k ? Math.min(1.0, view.tileCounts[seat] / k) : 0.0 };
}

function putTiles(o, start, mask) {
  for (let t = 0; t < NUM_TILES; t++) if ((mask >> t) & 1) o[start + t] = 1;
}

/**
 * The observation vector of `position` (docs/frontends.md) in `version` 4 (the default: 1261 values,
 * what the shipped policies read), 3 (1149), 2 (1037) or 1 (281 values): a Float32Array equal to
 * Python's `encoder(version)(view)` (`encode_follow_up_net`, `encode_follow_up`, `encode_lookahead`,
 * `encode`), value for value.
 */
export function encodeObservation(position, version = OBS_VERSION) {
  if (!(version in OBS_SIZES)) throw new RangeError(`unknown observation version ${version}; known: ${Object.keys(OBS_SIZES).join(", ")}`);
  const view = position.lay ? position : readPosition(position);
  const o = new Float32Array(OBS_SIZES[version]);
  const { rules, lay, hand, played } = view;
  const n = rules.num_players;
  const v = view.seat;
  const O = OFFSETS;

  // the rules
  for (let r = 0; r < n; r++) o[O.seats + r] = 1;
  o[O.target] = Math.min(rules.target_score / 500, 1.0);
  if (rules.partnerships) o[O.partner + 2] = 1;
  o[O.num_players + n - 2] = 1;
  if (rules.hand_end === "winner_takes") o[O.rules] = 1;
  o[O.rules + 1] = rules.boneyard_reserve / 28;
  o[O.rules + 2] = Math.min(rules.tiles_per_hand / 14, 1.0);

  // tiles and the layout
  putTiles(o, O.hand, hand);
  putTiles(o, O.played, played);
  for (let e = 0; e < 4; e++) {
    const p = lay.pips[e];
    if (p === CLOSED) continue;
    o[O.arm_pip + 7 * e + p] = 1;
    o[O.arm_open + e] = 1;
    if ((view.doubleEnds >> e) & 1) o[O.arm_double + e] = 1;
    o[O.arm_value + e] = lay.values[e] / 12;
  }
  if (lay.spinner >= 0) {
    o[O.spinner_pip + lay.spinner] = 1;
    if (lay.spinnerCovered >= 1) o[O.spinner_sides] = 1;
    if (lay.spinnerCovered >= 2) o[O.spinner_sides + 1] = 1;
  }
  o[O.ends_total] = view.count < 60 ? view.count / 60 : 1.0;
  if (lay.empty) o[O.lead] = 1;
  if (view.forced) o[O.forced] = 1;
  view.legal.forEach((a, i) => {
    const pts = view.points[i];
    if (pts) o[O.move_points + a] = pts < 30 ? pts / 30 : 1.0;
  });

  // seats, relative to the viewer: r = 0 is the viewer, r = 2 the partner
  for (let r = 0; r < n; r++) {
    const s = (v + r) % n;
    const c = view.tileCounts[s];
    o[O.tile_counts + r] = c < 14 ? c / 14 : 1.0;
    for (let p = 0; p < 7; p++) if ((view.missing[s] >> p) & 1) o[O.missing_pips + 7 * r + p] = 1;
    const x = view.scores[rules.side_of[s]] / rules.target_score;
    o[O.scores + r] = x >= -1.0 && x <= 1.0 ? x : x > 0 ? 1.0 : -1.0;
  }
  o[O.boneyard] = view.boneyard / 28;
  o[O.boneyard + 1] = view.drawable / 28;
  const hp = maskPips(hand);
  o[O.hand_pips] = hp < 100 ? hp / 100 : 1.0;
  const unseen = ALL_TILES & ~(hand | played);
  for (let p = 0; p < 7; p++) o[O.unseen_pips + p] = popcount(PIP_TILES[p] & unseen) / 7;
  if (version === 1) return o;

  // version 2: the lookahead pieces (lookahead.py)
  for (let r = 1; r < n; r++) {
    const s = (v + r) % n;
    putTiles(o, O.may_hold + NUM_TILES * (r - 1), unseen & ~TILES_WITH_PIPS[view.missing[s]]);
  }
  const nextSeat = (v + 1) % n;
  const next = rules.side_of[nextSeat] !== rules.side_of[v] ? replyModel(view, nextSeat, unseen) : null;
  const partner = replyModel(view, rules.partnerships ? (v + 2) % 4 : null, unseen);
  for (const a of view.legal) {
    const t = a >> 2;
    const left = hand & ~(1 << t);
    if (!left) continue; // a move that goes out: every lookahead piece is 0
    const [pips, values] = endsAfter(lay, t, a & 3);
    const fitting = fittingTiles(pips);
    let threat = 0.0, threatMax = 0, noReply = 0.0, partnerBest = 0.0;
    if (next) {
      const replies = scoringReplies(pips, values, next.allowed);
      if (replies.length) {
        threat = expectedBest(replies, next.p);
        threatMax = Math.max(...replies);
      }
      noReply = (1.0 - next.p) ** popcount(next.allowed & fitting);
    }
    if (partner) {
      const replies = scoringReplies(pips, values, partner.allowed);
      if (replies.length) partnerBest = expectedBest(replies, partner.p);
    }
    const facts = [
      [O.reply_threat, threat, 30], [O.reply_max, threatMax, 30], [O.reply_none, noReply, 1],
      [O.partner_reply, partnerBest, 30], [O.mobility, popcount(left & fitting), 9], [O.variety, popcount(maskPipSet(left)), 7],
    ];
    if (version >= 3) facts.push([O.follow_up, followUp(pips, values, left, next), 30]);
    if (version >= 4) facts.push([O.follow_up_net, followUpNet(pips, values, left, next), 30]);
    for (const [offset, value, scale] of facts) {
      const x = value / scale;
      o[offset + a] = x < 1.0 ? x : 1.0;
    }
  }
  return o;
}

/** The action mask of `position`: a Float32Array of 112, 1 for each legal action id (as the ONNX graph takes it). */
export function actionMask(position) {
  const mask = new Float32Array(NUM_ACTIONS);
  const legal = position.lay ? position.legal : (position.legal || []).map((m) => actionId(m.tile, m.end));
  for (const a of legal) mask[a] = 1;
  return mask;
}

// ------------------------------------------------------------------ policies (ONNX)
/** Read a protobuf varint at `pos` of `bytes`: [value, next position] (values past 2**53 lose precision). */
function varint(bytes, pos) {
  let value = 0;
  let scale = 1;
  for (;;) {
    const b = bytes[pos++];
    value += (b & 0x7f) * scale;
    if (b < 0x80) return [value, pos];
    scale *= 128;
  }
}

/** The fields of one protobuf message: [field number, wire type, value (a number or a byte slice)]. */
function* protoFields(bytes, start = 0, end = bytes.length) {
  let pos = start;
  while (pos < end) {
    let key;
    [key, pos] = varint(bytes, pos);
    const field = Math.floor(key / 8);
    const wire = key & 7;
    if (wire === 0) {
      let value;
      [value, pos] = varint(bytes, pos);
      yield [field, wire, value];
    } else if (wire === 2) {
      let length;
      [length, pos] = varint(bytes, pos);
      yield [field, wire, bytes.subarray(pos, pos + length)];
      pos += length;
    } else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else throw new RangeError(`not an ONNX file (protobuf wire type ${wire})`);
  }
}

const utf8 = new TextDecoder();

/**
 * What an ONNX file says of itself, read from its bytes: `metadata` (the `metadata_props` that
 * `allfives export` writes: obs_version, obs_size, rules...) and `inputs` ([{name, shape}], a
 * dimension a number or its symbolic name).
 */
export function readModelInfo(bytes) {
  bytes = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const metadata = {};
  const inputs = [];
  for (const [field, wire, value] of protoFields(bytes)) {
    if (field === 14 && wire === 2) { // ModelProto.metadata_props: StringStringEntryProto
      let key = "", text = "";
      for (const [f, , v] of protoFields(value)) {
        if (f === 1) key = utf8.decode(v);
        else if (f === 2) text = utf8.decode(v);
      }
      metadata[key] = text;
    } else if (field === 7 && wire === 2) { // ModelProto.graph
      for (const [f, w, info] of protoFields(value)) {
        if (f !== 11 || w !== 2) continue; // GraphProto.input: ValueInfoProto
        const input = { name: "", shape: [] };
        for (const [g, , v] of protoFields(info)) {
          if (g === 1) input.name = utf8.decode(v);
          if (g !== 2) continue; // TypeProto
          for (const [h, , tensor] of protoFields(v)) {
            if (h !== 1) continue; // TypeProto.tensor_type
            for (const [i, , shape] of protoFields(tensor)) {
              if (i !== 2) continue; // Tensor.shape: TensorShapeProto
              for (const [j, , dim] of protoFields(shape)) {
                if (j !== 1) continue;
                let d = null;
                for (const [k, , x] of protoFields(dim)) d = k === 1 ? x : k === 2 ? utf8.decode(x) : d;
                input.shape.push(d);
              }
            }
          }
        }
        inputs.push(input);
      }
    }
  }
  return { metadata, inputs };
}

/**
 * Open an exported policy: `ort` is the onnxruntime module (onnxruntime-web or onnxruntime-node),
 * `bytes` the .onnx file (Uint8Array or ArrayBuffer). The observation version is read from the
 * graph's input shape (1261: version 4, 1149: version 3, 1037: version 2, 281: version 1), and must agree with the file's
 * `obs_version`; a graph whose inputs are not `observation` [N, size] and `action_mask` [N, 112]
 * is refused. Returns {ort, session, obsVersion, obsSize, metadata, rules} (`rules`: the resolved
 * rules the policy was trained on, or null).
 */
export async function loadPolicy(ort, bytes, sessionOptions = {}) {
  bytes = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const info = readModelInfo(bytes);
  const session = await ort.InferenceSession.create(bytes, sessionOptions);
  const names = [...session.inputNames].sort();
  if (names.join() !== "action_mask,observation") {
    throw new Error(`the graph's inputs are ${names.join(", ")}; a policy takes observation [N, obs_size] and action_mask [N, ${NUM_ACTIONS}]`);
  }
  // onnxruntime-web and -node 1.2x+ give the shapes as session.inputMetadata; older ones do not,
  // and neither gives the file's metadata (session.handler.metadata is undefined): read the file
  const shapeOf = (name) =>
    (Array.isArray(session.inputMetadata) ? session.inputMetadata.find((m) => m.name === name)?.shape : null) ??
    info.inputs.find((i) => i.name === name)?.shape;
  const obsSize = shapeOf("observation")?.[1];
  const version = Number(Object.keys(OBS_SIZES).find((k) => OBS_SIZES[k] === obsSize));
  if (!version) {
    const built = Object.entries(OBS_SIZES).map(([v, size]) => `${size} (version ${v})`).join(", ");
    throw new Error(`the policy reads observations of ${obsSize} values; this module builds ${built}`);
  }
  if (shapeOf("action_mask")?.[1] !== NUM_ACTIONS) throw new Error(`the policy's action_mask is not [N, ${NUM_ACTIONS}]`);
  const declared = info.metadata.obs_version;
  if (declared !== undefined && Number(declared) !== version) {
    throw new Error(`the policy's metadata says obs_version ${declared}, its input holds ${obsSize} values (version ${version})`);
  }
  const rules = info.metadata.rules && info.metadata.rules !== "null" ? resolveRules(JSON.parse(info.metadata.rules)) : null;
  return { ort, session, obsVersion: version, obsSize, metadata: info.metadata, rules };
}

/** Why `policy` cannot play a game of `rules` (another number of players or partnerships), or null. */
export function playersProblem(policy, rules) {
  const trained = policy.rules;
  const game = rules.side_of ? rules : resolveRules(rules);
  if (!trained || (trained.num_players === game.num_players && trained.partnerships === game.partnerships)) return null;
  const words = (r) => `${r.num_players} players${r.partnerships ? " in partnerships" : ""}`;
  return `the policy was trained for ${words(trained)}, not ${words(game)}`;
}

/**
 * The policy's move in `position` (plain data, the seat to act): an action id, exactly as the
 * Python `onnx:` agent picks it. A lone legal move is played without running the graph; else the
 * graph's `action` output, the legal action with the highest logit, is checked to be legal.
 */
export async function policyMove(policy, position) {
  const view = position.lay ? position : readPosition(position);
  if (view.legal.length === 0) throw new RangeError("the position has no legal move (not the seat's turn)");
  if (view.legal.length === 1) return view.legal[0];
  const { ort, session, obsVersion, obsSize } = policy;
  const out = await session.run({
    observation: new ort.Tensor("float32", encodeObservation(view, obsVersion), [1, obsSize]),
    action_mask: new ort.Tensor("float32", actionMask(view), [1, NUM_ACTIONS]),
  });
  const action = Number(out.action.data[0]); // int64 arrives as a BigInt
  if (!view.legal.includes(action)) throw new Error(`the policy chose action ${action}, which is not legal`);
  return action;
}

// ------------------------------------------------------------------ the game (engine/game.py)
/** A seeded generator of 32-bit integers (mulberry32), for deals made here. */
export function makeRng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

function below(rng, n) {
  return Math.floor((rng() / 4294967296) * n);
}

function roundToFive(pips) {
  return Math.floor((pips + 2) / 5) * 5;
}

/**
 * A whole game of All Fives under `rules` (options as in docs/rules.md), a port of
 * `allfives_env.engine.Game`: the same moves on the same deals give the same events, hand results
 * and scores (`toRecord()` is an allfives-record/1 that `allfives replay` checks). Hand k is dealt
 * from `makeRng(seed + k)` (not Python's generator: the same seed deals differently there), unless
 * `deals` gives it: [{hands: [[tile index, ...] per seat], boneyard: [...], starter}].
 * `current` is the seat to act (-1 once over); `legalActions()`, `step(action)`, `position(seat)`.
 */
export class Game {
  constructor(rules = {}, { seed = 0, deals = null, maxHands = null } = {}) {
    this.rules = rules.side_of ? rules : resolveRules(rules);
    this.seed = seed;
    this.n = this.rules.num_players;
    this.deals = deals ? [...deals] : [];
    this.maxHands = maxHands;
    this.scores = new Array(this.rules.num_sides).fill(0);
    this.handLogs = [];
    this.over = false;
    this.winner = null;
    this.startHand(null);
  }

  startHand(wentOut) {
    const rules = this.rules;
    const k = this.handLogs.length;
    const rng = makeRng((this.seed + Math.imul(k, 0x9e3779b9)) >>> 0);
    let hands, boneyard, starter;
    const deal = this.deals[k];
    if (deal) {
      hands = deal.hands.map((h) => [...h]);
      boneyard = [...deal.boneyard];
      starter = deal.starter ?? wentOut ?? below(rng, this.n);
    } else {
      const tiles = Array.from({ length: NUM_TILES }, (_, t) => t);
      for (let i = tiles.length - 1; i > 0; i--) {
        const j = below(rng, i + 1);
        [tiles[i], tiles[j]] = [tiles[j], tiles[i]];
      }
      const per = rules.tiles_per_hand;
      hands = Array.from({ length: this.n }, (_, s) => tiles.slice(s * per, (s + 1) * per));
      boneyard = tiles.slice(this.n * per);
      starter = wentOut ?? below(rng, this.n);
    }
    this.hands = hands.map((h) => h.reduce((m, t) => m | (1 << t), 0));
    this.boneyard = boneyard;
    this.drawPos = 0;
    this.drawLimit = boneyard.length - rules.boneyard_reserve;
    this.layout = new Layout();
    this.passes = 0;
    this.missing = new Array(this.n).fill(0);
    this.forced = -1;
    this.current = starter;
    this.starter = starter;
    this.events = [];
    this.handLogs.push({ starter, deal: hands, boneyard: [...boneyard], scoresBefore: [...this.scores], events: this.events, result: null });
  }

  /** Action ids the seat to act may choose, ascending (empty once the game is over). */
  legalActions() {
    if (this.over) return [];
    return this.layout.actionsFor(this.forced >= 0 ? 1 << this.forced : this.hands[this.current]);
  }

  /** Play `action` for the seat to act; return the points it scored. */
  step(action) {
    if (this.over) throw new Error("the game is over");
    if (!this.legalActions().includes(action)) throw new RangeError(`illegal action ${action} for player ${this.current}`);
    const p = this.current;
    const t = action >> 2;
    this.hands[p] &= ~(1 << t);
    const layout = this.layout;
    const points = layout.place(t, action & 3);
    this.events.push({ type: "play", player: p, tile: [...TILES[t]], end: layout.numTiles === 1 ? "lead" : ARMS[action & 3], points });
    this.forced = -1;
    this.passes = 0;
    if (points) {
      const side = this.rules.side_of[p];
      this.scores[side] += points;
      if (this.scores[side] >= this.rules.target_score) {
        this.stopHand({ outcome: "target", went_out: null });
        this.finish(side);
        return points;
      }
    }
    if (!this.hands[p]) this.endHand(p);
    else this.advance(p);
    return points;
  }

  advance(p) {
    for (;;) {
      p = (p + 1) % this.n;
      if (this.hands[p] & this.layout.openTiles) {
        this.current = p;
        return;
      }
      if (this.drawOrPass(p)) return;
    }
  }

  /** Seat p, holding nothing that fits, draws until a tile fits (forced) or passes; whether the turn stops here. */
  drawOrPass(p) {
    const openTiles = this.layout.openTiles;
    const openPips = this.layout.openPipsMask();
    let hand = this.hands[p];
    let drewUnplayable = false;
    let fits = false;
    let t = -1;
    while (this.drawPos < this.drawLimit) {
      t = this.boneyard[this.drawPos++];
      hand |= 1 << t;
      this.events.push({ type: "draw", player: p, tile: [...TILES[t]] });
      if (hand & openTiles) {
        fits = true;
        break;
      }
      drewUnplayable = true;
    }
    this.hands[p] = hand;
    this.missing[p] = drewUnplayable ? openPips : this.missing[p] | openPips;
    if (fits) {
      this.forced = t;
      this.current = p;
      return true;
    }
    this.events.push({ type: "pass", player: p });
    this.passes += 1;
    if (this.passes >= this.n) {
      this.endHand(null);
      return true;
    }
    return false;
  }

  handPips(s) {
    return maskPips(this.hands[s]);
  }

  endHand(wentOut) {
    const rules = this.rules;
    const sideOf = rules.side_of;
    const pips = Array.from({ length: this.n }, (_, s) => this.handPips(s));
    const penalties = new Array(this.n).fill(0);
    const bonus = new Array(rules.num_sides).fill(0);
    if (rules.hand_end === "subtract") {
      for (let s = 0; s < this.n; s++) {
        penalties[s] = roundToFive(pips[s]);
        this.scores[sideOf[s]] -= penalties[s];
      }
    } else if (wentOut !== null) {
      const mine = sideOf[wentOut];
      bonus[mine] = roundToFive(pips.reduce((sum, x, s) => (sideOf[s] !== mine ? sum + x : sum), 0));
    } else {
      const sidePips = new Array(rules.num_sides).fill(0);
      pips.forEach((x, s) => (sidePips[sideOf[s]] += x));
      const fewest = Math.min(...sidePips);
      if (sidePips.filter((x) => x === fewest).length === 1) {
        const total = sidePips.reduce((a, b) => a + b, 0);
        bonus[sidePips.indexOf(fewest)] = roundToFive(total - fewest) - roundToFive(fewest);
      }
    }
    bonus.forEach((b, side) => (this.scores[side] += b));
    this.stopHand({ outcome: wentOut === null ? "blocked" : "domino", went_out: wentOut, pips, penalties, bonus });
    const reached = bonus.findIndex((b, side) => b > 0 && this.scores[side] >= rules.target_score);
    if (reached >= 0) this.finish(reached);
    else if (this.maxHands !== null && this.handLogs.length >= this.maxHands) {
      this.over = true;
      this.current = -1;
    } else this.startHand(wentOut);
  }

  stopHand(result) {
    result.pips ??= Array.from({ length: this.n }, (_, s) => this.handPips(s));
    result.penalties ??= new Array(this.n).fill(0);
    result.bonus ??= new Array(this.rules.num_sides).fill(0);
    result.scores_after = [...this.scores];
    this.handLogs[this.handLogs.length - 1].result = result;
  }

  finish(side) {
    this.over = true;
    this.winner = side;
    this.current = -1;
  }

  /**
   * What `seat` sees now, as the plain-data position of docs/frontends.md (the input of
   * `encodeObservation`, `actionMask` and `policyMove`); `legal` is empty unless it is to act.
   */
  position(seat) {
    const layout = this.layout;
    const ends = {};
    for (let e = 0; e < 4; e++) {
      if (layout.pips[e] !== CLOSED) ends[ARMS[e]] = { pip: layout.pips[e], double: Boolean((layout.doubleEnds >> e) & 1), value: layout.values[e] };
    }
    const toAct = seat === this.current;
    const legal = toAct
      ? this.legalActions().map((a) => ({
          tile: [...TILES[a >> 2]],
          end: layout.empty ? "lead" : ARMS[a & 3],
          points: placementPoints(layout.pips, layout.values, layout.empty, a >> 2, a & 3),
        }))
      : [];
    return {
      rules: rulesOptions(this.rules),
      seat,
      hand: maskTiles(this.hands[seat]).map((t) => [...TILES[t]]),
      played: maskTiles(layout.played).map((t) => [...TILES[t]]),
      ends,
      spinner: layout.spinner < 0 ? null : { pip: layout.spinner, covered: layout.spinnerCovered },
      forced: toAct && this.forced >= 0,
      tile_counts: this.hands.map(popcount),
      boneyard: this.boneyard.length - this.drawPos,
      drawable: this.drawLimit - this.drawPos,
      missing_pips: this.missing.map((m) => [0, 1, 2, 3, 4, 5, 6].filter((p) => (m >> p) & 1)),
      scores: [...this.scores],
      legal,
    };
  }

  /** This hand's events as `seat` sees them: other seats' draws without their tile (a bot server's `history`). */
  history(seat) {
    return this.events.map((e) => (e.type === "draw" && e.player !== seat ? { type: "draw", player: e.player, tile: null } : { ...e }));
  }

  /** The game as an allfives-record/1 object (docs/records.md); `players` names the seats. */
  toRecord(players = null) {
    return {
      format: "allfives-record/1",
      rules: rulesOptions(this.rules),
      seed: this.seed,
      players: players ?? new Array(this.n).fill("unknown"),
      hands: this.handLogs.map((h) => ({
        starter: h.starter,
        deal: h.deal.map((hand) => hand.map((t) => [...TILES[t]])),
        boneyard: h.boneyard.map((t) => [...TILES[t]]),
        events: h.events,
        result: h.result,
      })),
      final_scores: [...this.scores],
      winner: this.winner,
      complete: this.winner !== null,
    };
  }
}
