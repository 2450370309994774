// bloomkv web: helpers every page uses. No framework, no build step.
"use strict";

// api fetches an endpoint of the API (relative to the page, so the pages
// work under any prefix) and returns its JSON, or throws the error the
// server sent.
async function api(path, body) {
  const opts = body === undefined ? {} :
    {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)};
  const resp = await fetch(path, opts);
  let data;
  try { data = await resp.json(); } catch (e) { throw new Error(resp.status + " " + resp.statusText); }
  if (!resp.ok) throw new Error(data.error || resp.statusText);
  return data;
}

// el creates an element with attributes and children (strings become text).
function el(tag, attrs, ...children) {
  const svg = ["svg", "rect", "path", "line", "text", "g", "circle", "title"].includes(tag);
  const e = svg ? document.createElementNS("http://www.w3.org/2000/svg", tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.setAttribute("class", v);
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
  return e;
}

// fmtBytes renders a byte count as 1.5 KiB, 3.0 MiB.
function fmtBytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n.toFixed(0) : n.toFixed(n < 10 ? 2 : 1)) + " " + units[i];
}

// fmtRate renders a rate in [0, 1] as a percentage with enough digits.
function fmtRate(r) {
  if (r === 0) return "0%";
  const pct = r * 100;
  if (pct >= 1) return pct.toFixed(2) + "%";
  return pct.toPrecision(3) + "%";
}

function fmtInt(n) { return Number(n).toLocaleString("en-US"); }

// showError puts a message in the page's error line, or clears it.
function showError(err) {
  const e = document.getElementById("error");
  if (e) e.textContent = err ? String(err.message || err) : "";
}

// logChart draws lines on a log-scale y axis into svg. series: [{name,
// label, color, x: [...], y: [...]}]; opts: {xLabel, yLabel, yMin, yMax,
// xMin, xMax, logY, marker: {x, y}}.
function drawChart(svg, series, opts) {
  const W = 720, H = 380, L = 64, R = 16, T = 14, B = 44;
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("class", "chart");
  const logY = opts.logY !== false;
  // A linear axis gets ticks at multiples of a round step (1, 2 or 5 times
  // a power of ten), its top raised to the next one, so that every label
  // is its tick's value, not a rounding of it.
  const yStep = logY ? 0 : niceStep((opts.yMax - opts.yMin) / 5);
  if (!logY) opts = {...opts, yMax: opts.yMin + Math.ceil((opts.yMax - opts.yMin) / yStep - 1e-9) * yStep};
  const fy = v => logY ? Math.log10(Math.max(v, opts.yMin)) : v;
  const y0 = fy(opts.yMin), y1 = fy(opts.yMax);
  const px = x => L + (x - opts.xMin) / (opts.xMax - opts.xMin) * (W - L - R);
  const py = v => T + (y1 - fy(v)) / (y1 - y0) * (H - T - B);
  const grid = el("g", {class: "grid"}), axis = el("g", {class: "axis"});
  // x ticks
  const xStep = opts.xStep || Math.max(1, Math.round((opts.xMax - opts.xMin) / 12));
  for (let x = Math.ceil(opts.xMin / xStep) * xStep; x <= opts.xMax + 1e-9; x += xStep) {
    grid.append(el("line", {x1: px(x), x2: px(x), y1: T, y2: H - B}));
    axis.append(el("text", {x: px(x), y: H - B + 16, "text-anchor": "middle"}, String(+x.toFixed(2))));
  }
  // y ticks
  if (logY) {
    for (let e = Math.ceil(y0); e <= Math.floor(y1); e++) {
      const v = Math.pow(10, e);
      grid.append(el("line", {x1: L, x2: W - R, y1: py(v), y2: py(v)}));
      axis.append(el("text", {x: L - 6, y: py(v) + 4, "text-anchor": "end"}, e === 0 ? "1" : "1e" + e));
    }
  } else {
    const steps = Math.round((opts.yMax - opts.yMin) / yStep);
    for (let i = 0; i <= steps; i++) {
      const v = opts.yMin + yStep * i;
      grid.append(el("line", {x1: L, x2: W - R, y1: py(v), y2: py(v), "data-tick": v}));
      axis.append(el("text", {x: L - 6, y: py(v) + 4, "text-anchor": "end", "data-tick": v},
        opts.yFormat ? opts.yFormat(v, yStep) : v.toFixed(decimalsFor(yStep))));
    }
  }
  axis.append(el("line", {x1: L, x2: W - R, y1: H - B, y2: H - B}));
  axis.append(el("line", {x1: L, x2: L, y1: T, y2: H - B}));
  axis.append(el("text", {x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle"}, opts.xLabel));
  axis.append(el("text", {x: 14, y: (T + H - B) / 2, "text-anchor": "middle", transform: `rotate(-90 14 ${(T + H - B) / 2})`}, opts.yLabel));
  svg.append(grid, axis);
  for (const s of series) {
    let d = "";
    s.y.forEach((v, i) => {
      if (!(v >= opts.yMin * (logY ? 0.999 : 1)) && logY) { return; }
      const x = s.x[i];
      if (x < opts.xMin || x > opts.xMax) return;
      d += (d === "" ? "M" : "L") + px(x).toFixed(1) + "," + py(Math.min(v, opts.yMax)).toFixed(1);
    });
    svg.append(el("path", {class: "line", d, stroke: s.color, "data-series": s.name, "stroke-dasharray": s.dash}));
  }
  if (opts.marker) {
    const m = opts.marker;
    svg.append(el("circle", {cx: px(m.x), cy: py(m.y), r: 5, fill: m.color || "#000", "data-marker": "1"}, el("title", {}, m.title || "")));
  }
}

// niceStep returns the smallest of 1, 2 and 5 times a power of ten that is
// at least x (x > 0).
function niceStep(x) {
  const p = Math.pow(10, Math.floor(Math.log10(x)));
  for (const m of [1, 2, 5, 10]) if (m * p >= x * (1 - 1e-9)) return m * p;
  return 10 * p;
}

// decimalsFor returns the digits after the point that a multiple of step
// needs to be written exactly.
function decimalsFor(step) { return Math.max(0, -Math.floor(Math.log10(step) + 1e-9)); }

// legend fills a legend element for the series.
function legend(node, series) {
  node.replaceChildren(...series.map(s => {
    const e = el("span", {"data-series": s.name}, s.label);
    e.style.setProperty("--c", s.color); // CSSOM, which the page's CSP allows
    return e;
  }));
}

// debounce calls fn at most once per wait ms, after the last call.
function debounce(fn, wait) {
  let t;
  return (...args) => { clearTimeout(t); t = setTimeout(() => fn(...args), wait); };
}
