// The game review: every placement of a finished game (or of an uploaded allfives-record/1 file),
// the position before it, and each of your moves rated by the server's move analysis (points lost
// against the best move by a sampled playout estimate, with 95% intervals). The ratings are asked
// for one move at a time, so the server's per-client analysis limit is never crossed. Uses app.js's
// $, api, element, showError, moveText and signed.
"use strict";

let review = null;   // {id, seat, names, moves, ratings: {index: rating}}
let current = 0;     // the move shown
let rating = false;  // the ratings are being asked for

// a loss of at least MISTAKE points (by the estimate) is marked; the biggest few are called out
const MISTAKE = 2, MARKED = 3;

async function openReview(id, summary) {
  review = Object.assign({ id, ratings: {} }, summary || await api("GET", `/api/games/${id}/review`));
  delete document.body.dataset.review;
  $("setup").hidden = true;
  $("game").hidden = true;
  $("review").hidden = false;
  $("status").textContent = "game review";
  document.body.dataset.state = "review";
  const list = $("review-moves");
  list.replaceChildren(...review.moves.map((m) => {
    const item = element("li", { "data-index": String(m.index), class: m.yours ? "yours" : "" });
    const button = element("button", { type: "button", class: "review-move" }, moveLine(m));
    button.addEventListener("click", () => showMove(m.index));
    item.append(button, element("span", { class: "mark" }));
    return item;
  }));
  const first = review.moves.findIndex((m) => m.yours);
  await showMove(first < 0 ? 0 : first);
  rateAll();
}

const moveLine = (m) => `h${m.hand}.${m.placement} ${m.name}: ${m.tile[0]}-${m.tile[1]} ${m.end === "lead" ? "lead" : "on " + m.end}` +
  (m.points ? ` +${m.points}` : "");

async function showMove(index) {
  if (!review || index < 0 || index >= review.moves.length) return;
  current = index;
  $("review-where").textContent = `move ${index + 1} of ${review.moves.length}`;
  for (const li of $("review-moves").children) {
    const on = Number(li.dataset.index) === index;
    li.classList.toggle("current", on);
    li.firstChild.setAttribute("aria-current", on ? "true" : "false");
    if (on) li.scrollIntoView({ block: "nearest" });
  }
  try {
    const pos = await api("GET", `/api/games/${review.id}/review/${index}`);
    if (current !== index) return;
    $("review-board").innerHTML = pos.board;
    const m = pos.move;
    $("review-move").textContent = `Hand ${m.hand}, placement ${m.placement}: ${m.name} played ${m.tile[0]}-${m.tile[1]} ` +
      `${m.end === "lead" ? "as the lead" : "on the " + m.end + " end"}` + (m.points ? `, scoring ${m.points}` : "") + ".";
    $("review-hand").textContent = `${m.name === "you" ? "Your" : m.name + "'s"} hand before it: ${pos.hand.map((t) => t.join("-")).join(" ")}`;
    showRating(index);
  } catch (error) {
    showError(error);
  }
}

function showRating(index) {
  const box = $("review-rating");
  const m = review.moves[index];
  const r = review.ratings[index];
  box.replaceChildren();
  if (!m.yours) { box.textContent = "A bot's move (only your moves are rated)."; return; }
  if (m.choices === 1) { box.textContent = "Your only legal move."; return; }
  if (!r) { box.textContent = "Rating…"; return; }
  const a = r.analysis;
  const how = a.exact ? "exact: nothing hidden" : `estimate from ${a.worlds} sampled deals, ${a.policy} playouts`;
  const verdict = r.loss < 0.05 ? "The best move by the analysis." : `Lost ${r.loss.toFixed(1)} points against ${moveText(r.best)}.`;
  box.append(element("p", { class: "verdict" }, verdict),
             element("p", {}, `Yours: ${signed(r.chosen.value)} [${signed(r.chosen.value_low)}, ${signed(r.chosen.value_high)}]; ` +
                              `best: ${signed(r.best.value)} [${signed(r.best.value_low)}, ${signed(r.best.value_high)}] ` +
                              `(points to the hand's end, 95% intervals; ${how}).`));
}

function markMistakes() {
  const rated = Object.values(review.ratings).filter((r) => r.loss >= MISTAKE).sort((a, b) => b.loss - a.loss);
  const worst = new Set(rated.slice(0, MARKED).map((r) => r.index));
  for (const li of $("review-moves").children) {
    const r = review.ratings[Number(li.dataset.index)];
    const mark = li.querySelector(".mark");
    li.classList.toggle("mistake", !!r && r.loss >= MISTAKE);
    li.classList.toggle("worst", worst.has(Number(li.dataset.index)));
    mark.textContent = !r ? "" : r.loss < 0.05 ? " ✓ best" : ` −${r.loss.toFixed(1)}` + (worst.has(r.index) ? " (a biggest mistake)" : "");
  }
}

function summarize(done, total) {
  const ratings = Object.values(review.ratings);
  const lost = ratings.reduce((sum, r) => sum + r.loss, 0);
  const best = ratings.filter((r) => r.loss < 0.05).length;
  const mistakes = ratings.filter((r) => r.loss >= MISTAKE).length;
  const worst = ratings.reduce((w, r) => (!w || r.loss > w.loss ? r : w), null);
  let line = `${done} of ${total} of your moves with a choice rated: ${best} best, ${mistakes} mistake${mistakes === 1 ? "" : "s"}, ` +
    `about ${lost.toFixed(1)} points lost in all`;
  if (worst && worst.loss >= MISTAKE) line += `; the biggest at move ${worst.index + 1} (−${worst.loss.toFixed(1)})`;
  $("review-summary").textContent = line + (done < total ? "…" : ".");
}

async function rateAll() {
  if (rating) return;
  rating = true;
  const mine = review.moves.filter((m) => m.yours && m.choices > 1);
  let done = 0;
  summarize(0, mine.length);
  try {
    for (const m of mine) {
      const id = review.id;
      let r = null;
      for (let attempt = 0; attempt < 20 && !r; attempt++) {
        try {
          r = await api("POST", `/api/games/${id}/review/${m.index}/rate`);
        } catch (error) {
          if (error.status !== 429 && error.status !== 503 && error.status !== 409) throw error;
          await new Promise((resolve) => setTimeout(resolve, 1000));  // the analysis queue is busy: wait
        }
      }
      if (!review || review.id !== id) return;
      if (!r) throw new Error("the server's analysis stayed busy; reopen the review to try again");
      review.ratings[m.index] = r;
      done += 1;
      summarize(done, mine.length);
      markMistakes();
      if (current === m.index) showRating(m.index);
    }
    document.body.dataset.review = "rated";
  } catch (error) {
    showError(error);
  } finally {
    rating = false;
  }
}

function reviewKey(event) {
  if (!review) return;
  const step = { ArrowLeft: -1, ArrowRight: 1, Home: -current, End: review.moves.length - 1 - current }[event.key];
  if (step === undefined || (event.target && event.target.tagName === "INPUT")) return;
  event.preventDefault();
  showMove(current + step);
}

async function uploadRecord(file) {
  showError(null);
  const text = await file.text();
  let record;
  try {
    record = JSON.parse(text);
  } catch (e) {
    const line = text.split("\n").find((l) => l.trim());  // JSON Lines: the first game
    try { record = JSON.parse(line || ""); } catch (e2) { showError("that file is not JSON: an allfives-record/1 file is one JSON object per line"); return; }
  }
  try {
    const held = await api("POST", "/api/reviews", { record });
    await openReview(held.id, held);
  } catch (error) {
    showError(error);
  }
}

$("review-button").addEventListener("click", () => state && openReview(state.id).catch(showError));
$("review-prev").addEventListener("click", () => showMove(current - 1));
$("review-next").addEventListener("click", () => showMove(current + 1));
$("review-first").addEventListener("click", () => showMove(0));
$("review-last").addEventListener("click", () => review && showMove(review.moves.length - 1));
$("review-close").addEventListener("click", () => {
  review = null;
  if (state) { $("review").hidden = true; $("game").hidden = false; render(); } else showSetup();
});
$("upload").addEventListener("change", (event) => { if (event.target.files[0]) uploadRecord(event.target.files[0]); });
