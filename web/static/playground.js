// The filter playground: the page keeps the words added and checked, and
// asks the server (POST api/playground) for what the bloom package makes
// of them: every word's bit positions, the bits set, the filter's verdicts
// and the false-positive rate measured as the set grew.
"use strict";

const FRUITS = ["apple", "banana", "cherry", "grape", "lemon", "mango", "orange", "peach", "pear", "plum"];
const MAX_CHECKS = 100; // the server's MaxChecks

const state = {m: 64, k: 3, words: [], checks: [], last: null, resp: null};

const $ = id => document.getElementById(id);

function readControls() {
  state.m = Math.max(1, Math.min(4096, parseInt($("m").value, 10) || 1));
  state.k = Math.max(1, Math.min(16, parseInt($("k").value, 10) || 1));
}

let latest = 0; // the number of the latest request: only its answer is drawn

async function refresh() {
  const seq = ++latest;
  readControls();
  try {
    const resp = await api("api/playground", {m: state.m, k: state.k, words: state.words, checks: state.checks});
    if (seq !== latest) return; // a later request is under way; this answer is stale
    state.resp = resp;
    showError(null);
    render(resp);
  } catch (err) {
    if (seq === latest) showError(err);
  }
}

function render(resp) {
  drawBits(resp);
  drawWords(resp);
  drawChecks(resp);
  drawRates(resp);
  document.body.dataset.ready = String((+document.body.dataset.ready || 0) + 1);
}

function drawBits(resp) {
  const svg = $("bits");
  const m = resp.m, cols = Math.min(32, m), rows = Math.ceil(m / cols);
  const cell = 22, gap = 3, pad = 2, showIdx = m <= 512;
  const rowH = cell + gap + (showIdx ? 10 : 0);
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${pad * 2 + cols * (cell + gap)} ${pad * 2 + rows * rowH}`);
  svg.setAttribute("width", pad * 2 + cols * (cell + gap));
  const on = new Set(resp.bits);
  const setters = new Map(); // bit → words that set it
  for (const w of resp.words) for (const p of w.positions) {
    if (!setters.has(p)) setters.set(p, []);
    if (!setters.get(p).includes(w.word)) setters.get(p).push(w.word);
  }
  for (let i = 0; i < m; i++) {
    const x = pad + (i % cols) * (cell + gap), y = pad + Math.floor(i / cols) * rowH;
    const r = el("rect", {x, y, width: cell, height: cell, rx: 3, class: on.has(i) ? "bit on" : "bit", "data-bit": i},
      el("title", {}, `bit ${i}: ${on.has(i) ? "1, set by " + (setters.get(i) || []).join(", ") : "0"}`));
    svg.append(r);
    if (showIdx) svg.append(el("text", {x: x + cell / 2, y: y + cell + 9, "text-anchor": "middle", class: "idx"}, String(i)));
  }
  $("bits-note").textContent = `${resp.bits.length} of ${m} bits set (${fmtRate(resp.bits.length / m)}). ` +
    `Each word sets k = ${resp.k} bits; bits shared by several words are why a filter can answer "maybe" wrongly.`;
  highlightCheck();
}

// highlightCheck outlines the last checked word's bits: green when set,
// red when clear.
function highlightCheck() {
  const c = state.last && state.resp && state.resp.checks.find(c => c.word === state.last);
  if (!c) return;
  c.positions.forEach((p, i) => {
    const r = document.querySelector(`#bits rect[data-bit="${p}"]`);
    if (r) r.classList.add(c.set[i] ? "probe-set" : "probe-clear");
  });
}

function drawWords(resp) {
  const box = $("words");
  box.replaceChildren(...resp.words.map(w => el("span", {class: "chip", "data-word": w.word, "data-positions": w.positions.join(","),
    onmouseenter: () => hover(w.positions, true), onmouseleave: () => hover(w.positions, false)},
    w.word, el("span", {class: "pos"}, w.positions.join(" ")))));
  if (resp.words.length === 0) box.append(el("span", {class: "muted"}, "none yet: type a word and press Add, or load the fruits"));
}

function hover(positions, on) {
  for (const p of positions) {
    const r = document.querySelector(`#bits rect[data-bit="${p}"]`);
    if (r) r.classList.toggle("hover", on);
  }
}

// verdictOf says what a check means: present (added, all bits set),
// fp (all bits set but never added) or absent (a bit is clear).
function verdictOf(c) { return !c.maybe ? "absent" : c.added ? "present" : "fp"; }

function drawChecks(resp) {
  const list = $("checks");
  const fps = resp.checks.filter(c => verdictOf(c) === "fp").length;
  list.replaceChildren(...resp.checks.slice().reverse().map(c => {
    const v = verdictOf(c);
    const text = v === "absent" ? "definitely absent" : v === "present" ? "maybe present (it was added)" : "false positive: all bits set by other words";
    return el("li", {"data-word": c.word, "data-verdict": v}, el("span", {class: "dot " + v}), el("b", {}, c.word), " — " + text,
      el("span", {class: "muted mono"}, "  bits " + c.positions.map((p, i) => p + (c.set[i] ? "✓" : "✗")).join(" ")));
  }));
  if (resp.checks.length) list.prepend(el("li", {class: "muted"}, `${resp.checks.length} checked, ${fps} false positive${fps === 1 ? "" : "s"} among words never added`));

  const v = $("verdict");
  const c = state.last && resp.checks.find(c => c.word === state.last);
  if (!c) { v.hidden = true; return; }
  const verdict = verdictOf(c);
  v.hidden = false;
  v.className = "verdict " + (verdict === "absent" ? "absent" : verdict === "fp" ? "fp" : "present");
  v.dataset.verdict = c.maybe ? "present" : "absent";
  v.dataset.word = c.word;
  v.dataset.positions = c.positions.join(",");
  const clear = c.positions.filter((p, i) => !c.set[i]);
  v.textContent = c.maybe
    ? `“${c.word}”: maybe present — all ${c.positions.length} of its bits are 1` + (c.added ? "" : ", yet it was never added: a false positive")
    : `“${c.word}”: definitely absent — bit${clear.length > 1 ? "s" : ""} ${clear.join(", ")} ${clear.length > 1 ? "are" : "is"} 0`;
}

function drawRates(resp) {
  const n = resp.words.length, last = resp.series[n - 1];
  const formula = last ? last.formula : 0;
  const rows = [
    ["words n", fmtInt(n), "n"],
    ["bits set", `${resp.bits.length} / ${resp.m}`, "bits"],
    ["formula (1 − e^(−kn/m))^k", fmtRate(formula), "formula"],
    ["estimate from the bits set (X/m)^k", fmtRate(resp.estimatedFPR), "estimated"],
    ["measured on never-added words", `${fmtRate(resp.falsePositives / resp.probes)} (${fmtInt(resp.falsePositives)} of ${fmtInt(resp.probes)})`, "measured"],
  ];
  const t = $("rates");
  t.replaceChildren(el("tr", {}, el("th", {}, ""), el("th", {}, "value")),
    ...rows.map(([k, v, id]) => el("tr", {"data-rate": id}, el("td", {}, k), el("td", {class: "mono"}, v))));
  const series = [
    {name: "measured", label: "measured", color: "#d64545", x: resp.series.map(p => p.n), y: resp.series.map(p => p.measured)},
    {name: "formula", label: "formula", color: "#2f6fdf", dash: "6 4", x: resp.series.map(p => p.n), y: resp.series.map(p => p.formula)},
  ];
  const yMax = Math.max(0.05, ...resp.series.map(p => Math.max(p.measured, p.formula))) * 1.1;
  drawChart($("fpr-chart"), series, {xMin: 0, xMax: Math.max(n, 10), yMin: 0, yMax: Math.min(1, yMax), logY: false,
    xLabel: "words added n", yLabel: "false-positive rate", yFormat: (v, step) => (v * 100).toFixed(decimalsFor(step * 100)) + "%"});
  legend($("fpr-legend"), series);
}

function addWord(w) {
  w = w.trim();
  if (!w) return false;
  if (!state.words.includes(w)) state.words.push(w);
  return true;
}

function checkWord(w) {
  w = w.trim();
  if (!w) return false;
  state.checks = state.checks.filter(c => c !== w);
  state.checks.push(w);
  if (state.checks.length > MAX_CHECKS) state.checks.shift();
  state.last = w;
  return true;
}

function link(numberInput, range) {
  numberInput.addEventListener("change", () => { range.value = numberInput.value; refresh(); });
  range.addEventListener("input", () => { numberInput.value = range.value; debouncedRefresh(); });
}

const debouncedRefresh = debounce(refresh, 120);

document.addEventListener("DOMContentLoaded", () => {
  link($("m"), $("m-range"));
  link($("k"), $("k-range"));
  $("add").addEventListener("click", () => { if (addWord($("word").value)) { $("word").value = ""; refresh(); } });
  $("check").addEventListener("click", () => { if (checkWord($("word").value)) refresh(); });
  $("word").addEventListener("keydown", e => { if (e.key === "Enter") $(e.shiftKey ? "check" : "add").click(); });
  $("fruits").addEventListener("click", () => { FRUITS.forEach(addWord); refresh(); });
  $("clear").addEventListener("click", () => { state.words = []; state.checks = []; state.last = null; refresh(); });
  $("mk-note").textContent = "m up to 4096, k up to 16; Enter adds, Shift+Enter checks.";
  refresh();
});
