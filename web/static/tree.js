// The tree: polls api/tree once a second and draws the levels, their tables
// and filter counters, and the flushes and compactions since the last poll;
// the explain box draws api/explain's trace and lights up the tables it
// consulted.
"use strict";

const $ = id => document.getElementById(id);
const POLL_MS = 1000;
const NEW_MS = 4000; // how long a new table stays highlighted

const tree = {
  seq: 0,             // the latest event seen
  seen: new Map(),    // fileNum → when the page first drew it
  first: true,        // the first poll: nothing is new yet
  counters: null,     // the previous poll's flushes and compactions
  trace: new Map(),   // fileNum → the class the last trace gives its table
};

async function poll() {
  try {
    const t = await api("api/tree?after=" + tree.seq);
    showError(null);
    render(t);
  } catch (err) {
    showError(err);
  } finally {
    setTimeout(poll, POLL_MS);
  }
}

function render(t) {
  drawStats(t);
  drawLevels(t);
  drawEvents(t);
  tree.first = false;
  document.body.dataset.polls = String((+document.body.dataset.polls || 0) + 1);
}

function stat(label, value, id) { return el("div", {"data-stat": id}, el("b", {}, value), label); }

function drawStats(t) {
  const tables = t.levels.reduce((a, l) => a + l.tables.length, 0);
  $("stats").replaceChildren(
    stat("writes", fmtInt(t.writes), "writes"), stat("gets", fmtInt(t.gets), "gets"),
    stat("memtable", fmtBytes(t.memtableBytes) + (t.immutableMemtables ? ` + ${t.immutableMemtables} full` : ""), "memtable"),
    stat("flushes", fmtInt(t.flushes), "flushes"),
    stat("compactions", fmtInt(t.compactions) + (t.compactionsInProgress ? ` (${t.compactionsInProgress} running)` : ""), "compactions"),
    stat("tables", fmtInt(tables), "tables"), stat("filter memory", fmtBytes(t.filterMemory), "filterMemory"),
    stat("write amplification", t.writeAmplification.toFixed(2), "wamp"), stat("L0 compacts into", "L" + t.baseLevel, "base"));
}

function drawLevels(t) {
  const now = Date.now();
  const rows = [];
  for (const l of t.levels) {
    if (l.tables.length === 0 && l.level !== 0 && l.tableProbes === 0) continue;
    const boxes = l.tables.map(tb => {
      if (!tree.seen.has(tb.fileNum)) tree.seen.set(tb.fileNum, tree.first ? 0 : now);
      const fresh = now - tree.seen.get(tb.fileNum) < NEW_MS;
      const cls = ["tbl", fresh ? "new" : "", tb.ingested ? "ingested" : "", tree.trace.get(tb.fileNum) || ""].join(" ").trim();
      return el("div", {class: cls, "data-file": tb.fileNum, "data-name": tb.name},
        el("div", {class: "fn"}, tb.name.split("/")[1]),
        el("div", {}, `${fmtBytes(tb.size)} · ${fmtInt(tb.entries)} keys`),
        el("div", {class: "mono"}, `${tb.smallest} … ${tb.largest}`),
        el("div", {}, tb.filter === "none" ? "no filter" : `${tb.bitsPerKey.toFixed(1)} bits/key`),
        tb.ingested ? el("div", {class: "muted"}, "ingested") : null,
        el("title", {}, `${tb.name}: ${tb.ingested ? "ingested, " : ""}${tb.filter}, predicted FPR ${fmtRate(tb.predictedFPR)}`));
    });
    if (boxes.length === 0) boxes.push(el("span", {class: "muted"}, "empty"));
    const target = l.targetSize ? ` of ${fmtBytes(l.targetSize)}` : "";
    rows.push(el("div", {class: "level", "data-level": l.level},
      el("div", {}, el("div", {class: "name"}, "L" + l.level),
        el("div", {class: "meta"}, `${l.tables.length} table${l.tables.length === 1 ? "" : "s"}, ${fmtBytes(l.bytes)}${target}`,
          el("br"), el("span", {title: "how due for compaction: 1 or more is due (see below)"}, `score ${l.score.toFixed(2)}`), el("br"), l.bitsPerKey ? `${l.bitsPerKey.toFixed(1)} bits/key` : "")),
      el("div", {}, el("div", {class: "tables"}, boxes), counters(l))));
  }
  if (t.blobs.length > 0) {
    const size = t.blobs.reduce((a, b) => a + b.size, 0);
    const boxes = t.blobs.map(b => el("div", {class: ["tbl", tree.trace.get(b.fileNum) || ""].join(" ").trim(), "data-file": b.fileNum, "data-name": b.name},
      el("div", {class: "fn"}, b.name), el("div", {}, `${fmtBytes(b.size)} · ${(100 * b.deadShare).toFixed(0)}% dead`),
      el("title", {}, `${b.name}: ${fmtBytes(b.liveBytes)} of its values live`)));
    rows.push(el("div", {class: "level", "data-level": "blob"},
      el("div", {}, el("div", {class: "name"}, "blobs"),
        el("div", {class: "meta"}, `${t.blobs.length} file${t.blobs.length === 1 ? "" : "s"}, ${fmtBytes(size)}`, el("br"), "values the tables hold handles to")),
      el("div", {}, el("div", {class: "tables"}, boxes))));
  }
  $("levels").replaceChildren(...rows);
}

function counters(l) {
  if (l.filterChecks === 0) return el("div", {class: "counters"}, "no lookup has reached this level yet");
  return el("div", {class: "counters", "data-measured": l.measuredFPR, "data-predicted": l.predictedFPR},
    "lookups: ", el("b", {}, fmtInt(l.tableProbes)), " tables considered, filter ", el("b", {}, fmtInt(l.filterNegatives)),
    " absent (reads avoided), ", el("b", {}, fmtInt(l.filterPositives)), " maybe, of which ", el("b", {}, fmtInt(l.falsePositives)),
    " false; FPR measured ", el("b", {}, fmtRate(l.measuredFPR)), ` over ${fmtInt(l.absentChecks)} absent keys, predicted `,
    el("b", {}, fmtRate(l.predictedFPR)), `; blocks read ${fmtInt(l.blocksFromFile)} from files, ${fmtInt(l.blocksFromCache)} from the cache`);
}

function tablesText(ts) { return ts && ts.length ? ts.map(x => `L${x.level}/${String(x.fileNum).padStart(6, "0")}`).join(", ") : "none"; }

function drawEvents(t) {
  const list = $("events");
  for (const e of list.querySelectorAll(".loading")) e.remove(); // the first poll is in
  const items = [];
  if (t.eventsLogged) {
    $("events-note").textContent = "Each flush and compaction as the DB's EventListener reported it, newest first.";
    for (const e of t.events) {
      tree.seq = Math.max(tree.seq, e.seq);
      const what = e.kind === "flush"
        ? `job ${e.job}: memtable → ${tablesText(e.outputs)}`
        : `job ${e.job}: L${e.level} → L${e.outputLevel}${e.trivialMove ? " (moved)" : ""}, ${tablesText(e.inputs)} → ${tablesText(e.outputs)}`;
      items.push(el("li", {class: e.kind, "data-kind": e.kind, "data-seq": e.seq},
        what, el("span", {class: "muted"}, ` ${e.durationMs.toFixed(1)} ms`), e.error ? el("span", {class: "error"}, " " + e.error) : null));
    }
  } else {
    $("events-note").textContent = "Counted from Metrics once a second (mount the handler with an EventLog to list each one's tables).";
    const prev = tree.counters;
    if (prev) {
      const time = new Date().toLocaleTimeString();
      if (t.flushes > prev.flushes) items.push(el("li", {class: "flush", "data-kind": "flush"}, `${t.flushes - prev.flushes} by ${time} (total ${t.flushes})`));
      if (t.compactions > prev.compactions) items.push(el("li", {class: "compaction", "data-kind": "compaction"}, `${t.compactions - prev.compactions} by ${time} (total ${t.compactions})`));
    }
  }
  tree.counters = {flushes: t.flushes, compactions: t.compactions};
  for (const it of items) list.prepend(it);
  while (list.children.length > 200) list.lastChild.remove();
}

// stepResult classifies a trace step for drawing: its CSS class and words.
function stepResult(s) {
  if (s.error) return ["error", "error: " + s.error];
  if (s.kind === "memtable") return s.found ? ["found", s.deleted ? "found a deletion" : "found"] : ["level", "not here"];
  if (s.kind === "blob") return ["found", `value read from the blob file (${fmtBytes(s.bytesRead)})`];
  if (s.kind === "level") return ["level", `no table's key range holds the key (binary search of ${s.tables} table${s.tables === 1 ? "" : "s"}): nothing read`];
  if (!s.inRange) return ["out", `key outside ${s.smallest} … ${s.largest}: not consulted`];
  if (s.filter === "absent") return ["skipped", "filter: absent — skipped without reading the file"];
  const block = s.blocksFromFile ? `data block read from the file (${fmtBytes(s.bytesRead)})` : s.blocksFromCache ? "data block from the block cache" : "no data block read";
  const filter = s.filter === "maybe" ? "filter: maybe" : "no filter";
  if (s.found) return ["found", `${filter} → index (in memory) → ${block} → ${s.deleted ? "found a deletion" : "found"}`];
  if (s.falsePositive) return ["read", `${filter} → index → ${block} → not there: a false positive`];
  return ["read", `${filter} → index → ${block} → no version visible`];
}

let latestExplain = 0; // the number of the latest explain: only its trace is drawn

async function explain() {
  const seq = ++latestExplain;
  const key = $("key").value;
  try {
    const t = await api(`api/explain?key=${encodeURIComponent(key)}${$("hex").checked ? "&hex=1" : ""}`);
    if (seq !== latestExplain) return;
    showError(null);
    tree.trace.clear();
    const steps = t.steps.map(s => {
      const [cls, text] = stepResult(s);
      if (s.kind === "table") tree.trace.set(s.fileNum, {found: "t-found", skipped: "t-absent", read: "t-maybe", out: "t-out"}[cls] || "");
      return el("li", {class: "r-" + cls, "data-place": s.place, "data-result": cls}, el("span", {class: "place"}, s.place), el("span", {}, text));
    });
    $("trace").replaceChildren(...steps);
    const s = $("summary");
    s.textContent = `lookup ${t.key} at seqnum ${t.seqNum}: ${t.summary}` + (t.error ? ` (error: ${t.error})` : "");
    s.dataset.found = String(t.found);
    s.dataset.source = t.source;
    for (const box of document.querySelectorAll(".tbl")) {
      box.classList.remove("t-found", "t-absent", "t-maybe", "t-out");
      const c = tree.trace.get(+box.dataset.file);
      if (c) box.classList.add(c);
    }
  } catch (err) {
    showError(err);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("explain").addEventListener("click", explain);
  $("key").addEventListener("keydown", e => { if (e.key === "Enter") explain(); });
  poll();
});
