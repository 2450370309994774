// The calculator: sliders for n, p and an optional fixed k; the server's
// bloom package does the sizing (api/calc) and computes the chart's lines
// (api/chart); this page only draws them.
"use strict";

const COLORS = {classic: "#2f6fdf", fixedK: "#e07b00", blocked: "#1f9d55", bound: "#7b4fc9"};
const $ = id => document.getElementById(id);

function params() {
  const n = Math.max(1, Math.round(Math.pow(10, +$("n-range").value)));
  const p = +Math.pow(10, +$("p-range").value).toPrecision(3);
  const k = $("fixk").checked ? +$("k-range").value : null;
  return {n, p, k};
}

// queryOf is the api/calc query of the sliders' values.
function queryOf({n, p, k}) { return `n=${n}&p=${p}` + (k === null ? "" : `&k=${k}`); }

let chartData = null, chartK = null;
let latest = 0; // the number of the latest update: only its answer is drawn

async function update() {
  const seq = ++latest;
  const {n, p, k} = params();
  $("n-out").textContent = fmtInt(n);
  $("p-out").textContent = String(p);
  $("k-out").textContent = k === null ? "off" : String(k);
  try {
    const q = queryOf({n, p, k});
    const ck = k === null ? 4 : k;
    const [calc, chart] = await Promise.all([api("api/calc?" + q), chartK === ck ? chartData : api("api/chart?k=" + ck)]);
    if (seq !== latest) return; // a later update is under way; an earlier answer must not overwrite it
    chartData = chart; chartK = ck;
    showError(null);
    drawSizes(calc);
    drawRateChart(calc, chart);
    document.body.dataset.query = q;
    document.body.dataset.ready = String((+document.body.dataset.ready || 0) + 1);
  } catch (err) {
    if (seq === latest) showError(err);
  }
}

function row(name, label, f) {
  const cell = (field, text) => el("td", {"data-field": field, "data-value": f[field]}, text);
  return el("tr", {"data-filter": name}, el("td", {}, label), cell("m", fmtInt(f.m)), cell("k", String(f.k)),
    cell("bytes", fmtBytes(f.bytes)), cell("bitsPerKey", f.bitsPerKey.toFixed(2)), cell("fpr", fmtRate(f.fpr)));
}

function drawSizes(c) {
  const rows = [row("classic", "classic, optimal k", c.classic)];
  if (c.fixedK) rows.push(row("fixedK", `classic, k = ${c.fixedK.k}`, c.fixedK));
  rows.push(row("blocked", "blocked (512-bit blocks)", c.blocked));
  document.querySelector("#sizes tbody").replaceChildren(...rows);
  const b = $("bound-note");
  b.dataset.value = c.boundBitsPerKey;
  b.textContent = `Lower bound: log2(1/p) = ${c.boundBitsPerKey.toFixed(2)} bits per item, ${fmtBytes(c.boundBitsPerKey * c.n / 8)} for n = ${fmtInt(c.n)}; ` +
    `the classic filter spends ${(c.classic.bitsPerKey / c.boundBitsPerKey).toFixed(2)}× that.`;
}

function drawRateChart(calc, chart) {
  // The fixed-k line is drawn only while fixed k is on: api/chart always
  // computes one (k = 4 by default), and the page would show a k it says is off.
  const series = chart.lines.filter(l => l.name !== "fixedK" || calc.fixedK).map(l => ({name: l.name, label: l.label, color: COLORS[l.name] || "#000",
    dash: l.name === "bound" ? "5 4" : undefined, x: chart.x, y: l.y}));
  drawChart($("chart"), series, {xMin: 0, xMax: 24, xStep: 2, yMin: 1e-8, yMax: 1,
    xLabel: "bits per element c = m/n", yLabel: "false-positive rate (log scale)",
    marker: {x: Math.min(24, calc.classic.bitsPerKey), y: Math.max(1e-8, calc.p), color: COLORS.classic,
      title: `n = ${calc.n}, p = ${calc.p}: ${calc.classic.bitsPerKey.toFixed(2)} bits per element`}});
  legend($("legend"), series);
}

document.addEventListener("DOMContentLoaded", () => {
  const later = debounce(update, 80);
  for (const id of ["n-range", "p-range", "k-range"]) $(id).addEventListener("input", later);
  $("fixk").addEventListener("change", () => { $("k-range").disabled = !$("fixk").checked; update(); });
  update();
});
