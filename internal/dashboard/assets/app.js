// The live view of a cutover: polls api/v1/state every 500 ms and redraws. No libraries,
// nothing fetched from outside this server; the charts are hand-drawn inline SVG.
"use strict";

const SVG = "http://www.w3.org/2000/svg"; // a namespace name, never fetched
const FIXED = { failures: "#cf222e" };
const PALETTE = ["#8250df", "#bf8700", "#57606a", "#bc4c00"];
const others = {};

// colorOf keeps a cluster's color the same on every chart: from blue, to green.
function colorOf(id, s) {
  if (FIXED[id]) return FIXED[id];
  if (id === s.from) return "#0969da";
  if (id === s.to) return "#1a7f37";
  if (!others[id]) others[id] = PALETTE[Object.keys(others).length % PALETTE.length];
  return others[id];
}

function el(name, attrs, text) {
  const e = document.createElementNS(SVG, name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}

function fmt(v) {
  if (v === undefined || v === null) return "–";
  return v >= 100 || Number.isInteger(v) ? String(Math.round(v)) : v.toFixed(1);
}

function seconds(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 120 ? s + " s" : Math.floor(s / 60) + " min " + (s % 60) + " s";
}

// TAIL is the most of a chart's width that the time after the cutover ended may take, so
// that the cutover stays readable however long the page stays up after it (demo --keep).
const TAIL = 0.15;

// timeAxis maps a time (ms) onto a chart's x, from left (start) to right (now). While the
// cutover runs (ended is null or NaN) it is linear: the charts follow now. Once it has
// ended, its window — up to shortly after the end — keeps at least 1 − TAIL of the width
// and the idle time since is compressed into the rest, right of a cut; until the idle tail
// outgrows TAIL of the whole span the axis stays linear, so the cut appears without a jump.
// It returns { end: the right edge's time, x: time → x, cut: null or { t, x } }.
function timeAxis(start, ended, now, left, right) {
  const end = Math.max(now, start + 1000);
  const span = (ta, tb, xa, xb) => t => xa + (xb - xa) * (Math.min(Math.max(t, ta), tb) - ta) / (tb - ta);
  const linear = { end: end, x: span(start, end, left, right), cut: null };
  if (!(ended > start)) return linear;
  // "Shortly after": 5 % of the cutover's length, so it keeps (1 − TAIL) / 1.05 of the width.
  const cut = ended + 0.05 * (ended - start);
  if (end - cut <= TAIL * (end - start)) return linear;
  const xc = left + (1 - TAIL) * (right - left);
  const before = span(start, cut, left, xc), after = span(cut, end, xc, right);
  return { end: end, x: t => (t <= cut ? before(t) : after(t)), cut: { t: cut, x: xc } };
}

// chart draws one line per key of the points' values against time since the recorder
// started (see timeAxis). With a fixed max (percent charts) values hold until the next
// point, so lines are drawn as steps; rates are drawn point to point. The SVG's data
// attributes say what it shows (data-points, data-last, data-cut: the x of the idle cut
// or "") for tests and scripts.
function chart(svg, points, s, fixedMax, unit) {
  const W = 600, H = 200, L = 44, R = 110, T = 10, B = 22;
  svg.replaceChildren();
  svg.dataset.points = String(points.length);
  const lastVals = points.length ? points[points.length - 1].values : {};
  svg.dataset.last = JSON.stringify(lastVals);
  const t0 = Date.parse(s.started);
  const axis = timeAxis(t0, s.ended ? Date.parse(s.ended) : NaN, Date.parse(s.now), L, W - R);
  const x = axis.x, t1 = axis.end;
  svg.dataset.cut = axis.cut ? axis.cut.x.toFixed(1) : "";
  const keys = [];
  let max = fixedMax || 1;
  for (const p of points) for (const k in p.values) {
    if (!keys.includes(k)) keys.push(k);
    if (!fixedMax) max = Math.max(max, p.values[k]);
  }
  if (!fixedMax) max = niceCeil(max);
  const y = v => T + (H - T - B) * (1 - Math.min(Math.max(v, 0), max) / max);
  for (const f of [0, 0.5, 1]) {
    svg.appendChild(el("line", { x1: L, y1: y(max * f), x2: W - R, y2: y(max * f), class: f ? "grid" : "axis" }));
    svg.appendChild(el("text", { x: L - 6, y: y(max * f) + 4, class: "tick" }, fmt(max * f) + (f === 1 ? unit : "")));
  }
  svg.appendChild(el("text", { x: L, y: H - 4, class: "tick start" }, "0 s"));
  // With a cut, the right edge is "now" and the label over the tail says how long it is.
  svg.appendChild(el("text", { x: W - R, y: H - 4, class: "tick" }, axis.cut ? "now" : seconds(t1 - t0)));
  if (axis.cut) {
    // The cut: left of it the cutover at full scale, right of it the idle time since.
    const c = axis.cut;
    const line = el("line", { x1: c.x, y1: T, x2: c.x, y2: H - B, class: "cut" });
    line.appendChild(el("title", {}, "the cutover ended at " + clock(Date.parse(s.ended)) +
      "; right of this line the " + seconds(t1 - c.t) + " since are compressed"));
    svg.appendChild(line);
    svg.appendChild(el("text", { x: c.x - 4, y: H - 4, class: "tick" }, seconds(c.t - t0)));
    svg.appendChild(el("text", { x: (c.x + W - R) / 2, y: T + 10, class: "cut-label" }, "+" + seconds(t1 - c.t)));
  }
  if (points.length === 0) {
    svg.appendChild(el("text", { x: (L + W - R) / 2, y: H / 2, class: "empty" }, "no data yet"));
    return;
  }
  keys.sort((a, b) => (a === "failures") - (b === "failures") || a.localeCompare(b));
  keys.forEach((k, i) => {
    const pts = [];
    let lastY = null;
    for (const p of points) {
      if (!(k in p.values)) continue;
      const px = x(Date.parse(p.t)).toFixed(1), py = y(p.values[k]).toFixed(1);
      if (fixedMax && lastY !== null) pts.push(px + "," + lastY);
      pts.push(px + "," + py);
      lastY = py;
    }
    if (fixedMax && lastY !== null) pts.push(x(t1).toFixed(1) + "," + lastY);
    const color = colorOf(k, s);
    svg.appendChild(el("polyline", { points: pts.join(" "), class: "line", stroke: color, "data-key": k }));
    svg.appendChild(el("text", { x: W - R + 8, y: T + 12 + 16 * i, fill: color, class: "legend" },
      k + " " + fmt(lastVals[k]) + unit));
  });
}

// niceCeil rounds a chart's top up to a multiple of half a power of ten: 103 → 150.
function niceCeil(v) {
  const half = Math.pow(10, Math.floor(Math.log10(v))) / 2;
  return Math.ceil(v / half) * half;
}

function weights(w) { return w ? Object.keys(w).sort().map(k => k + "=" + w[k]).join(" ") : ""; }
function text(id, v) { document.getElementById(id).textContent = v; }
function clock(t) { return new Date(t).toLocaleTimeString([], { hour12: false }); }

function renderStatus(s) {
  const c = s.current;
  let status = c.phase || "waiting for the first event";
  if (c.total > 0 && !c.done) status = (c.rolledBack ? "from step " : "step ") + c.step + "/" + c.total + "  " + status;
  if (c.weights && Object.keys(c.weights).length) status += "  " + weights(c.weights);
  if (c.leftSeconds > 0) status += "  " + seconds(c.leftSeconds * 1000) + " left";
  if (c.message) status += "  — " + c.message;
  if (c.gatesSkipped) status = "GATES SKIPPED (promote --skip-gates): steps passed unmeasured  " + status;
  text("status", status);
  const st = document.getElementById("status");
  st.className = c.rolledBack || c.gatesSkipped ? "failed" : c.done ? "passed" : "";
  document.body.dataset.gatesSkipped = String(!!c.gatesSkipped);
  document.body.dataset.step = String(c.step);
  document.body.dataset.phase = c.phase || "";
  document.body.dataset.done = String(c.done);
}

function renderTimeline(s) {
  document.getElementById("timeline").replaceChildren(...s.timeline.map(st => {
    const li = document.createElement("li");
    li.dataset.outcome = st.outcome;
    li.className = st.outcome.replace(/\s+/g, "-");
    const took = st.ended ? " (" + seconds(Date.parse(st.ended) - Date.parse(st.started)) + ")" : "";
    li.textContent = clock(st.started) + "  " + st.name + "  " + weights(st.weights) + "  " + st.outcome + took;
    return li;
  }));
}

function renderGates(s) {
  const rows = s.gates.map(g => {
    const tr = document.createElement("tr");
    // A pending pass has judged nothing yet: the step holds on until it has.
    const mark = !g.pass ? ["FAIL", "failed"] : g.pending ? ["pending", "paused"] : ["pass", "passed"];
    const cells = [[g.gate, ""], [g.kind, ""], mark,
      [g.detail + (g.err && g.err !== g.detail ? " (" + g.err + ")" : ""), "detail"], [clock(g.at), "time"]];
    for (const [v, cls] of cells) {
      const td = document.createElement("td");
      td.textContent = v;
      if (cls) td.className = cls;
      tr.appendChild(td);
    }
    return tr;
  });
  if (rows.length === 0) {
    const tr = document.createElement("tr");
    tr.innerHTML = '<td colspan="5" class="none">no gate checked yet</td>';
    rows.push(tr);
  }
  document.querySelector("#gates tbody").replaceChildren(...rows);
}

// renderGroups fills the ALB view's table: per target group (by its cluster), the weight
// written last, its health as the targetHealth gate last found it, and its share of the
// requests as the clients last saw it and as CloudWatch last counted it.
function renderGroups(s) {
  const ids = [s.from, s.to];
  for (const h of s.targetHealth || []) if (!ids.includes(h.group)) ids.push(h.group);
  const last = ps => (ps && ps.length ? ps[ps.length - 1].values : {});
  const clients = last(s.series.clientShares), cloudWatch = last(s.series.albShares);
  const pct = v => (v === undefined ? "–" : fmt(v) + " %");
  const rows = ids.map(id => {
    const tr = document.createElement("tr");
    tr.dataset.group = id;
    const h = (s.targetHealth || []).find(x => x.group === id);
    let health = ["not checked yet", "none"];
    if (h) {
      const cls = h.targets > 0 && h.healthy === h.targets ? "passed" : h.healthy === 0 ? "failed" : "held";
      health = [h.healthy + " of " + h.targets + " (" + clock(Date.parse(h.at)) + ")", cls];
      tr.dataset.healthy = String(h.healthy);
      tr.dataset.targets = String(h.targets);
    }
    const w = s.current.weights[id];
    const cells = [[id, ""], [w === undefined ? "–" : String(w), ""], health, [pct(clients[id]), ""], [pct(cloudWatch[id]), ""]];
    for (const [v, cls] of cells) {
      const td = document.createElement("td");
      td.textContent = v;
      if (cls) td.className = cls;
      tr.appendChild(td);
    }
    tr.firstChild.style.color = colorOf(id, s);
    return tr;
  });
  document.querySelector("#target-groups tbody").replaceChildren(...rows);
}

function renderErrors(s) {
  const items = s.errors.slice().reverse().map(e => {
    const li = document.createElement("li");
    li.className = "failed";
    li.textContent = clock(e.t) + "  " + e.message;
    return li;
  });
  if (items.length === 0) {
    const li = document.createElement("li");
    li.className = "none";
    li.textContent = "none";
    items.push(li);
  }
  document.getElementById("errors").replaceChildren(...items);
}

function render(s) {
  text("name", s.cutover + ": " + s.from + " → " + s.to);
  renderStatus(s);
  chart(document.getElementById("chart-weights"), s.series.weights, s, 100, "%");
  // The ALB lever changes no DNS answer: its view shows the request shares per target
  // group (CloudWatch's and the clients') and the groups' health instead.
  const alb = s.lever === "alb";
  document.body.dataset.lever = s.lever || "";
  document.getElementById("fig-dns").hidden = alb;
  for (const id of ["fig-alb", "fig-client-shares", "alb"]) document.getElementById(id).hidden = !alb;
  chart(document.getElementById("chart-dns"), s.series.dnsShares, s, 100, "%");
  if (alb) {
    chart(document.getElementById("chart-alb"), s.series.albShares || [], s, 100, "%");
    chart(document.getElementById("chart-client-shares"), s.series.clientShares || [], s, 100, "%");
    renderGroups(s);
  }
  const perCheck = s.requestsSource === "http-gate";
  chart(document.getElementById("chart-requests"), s.series.requests, s, 0, perCheck ? "" : "/s");
  text("req-title", perCheck ? "Requests per check of gate " + s.requestsGate + ", by cluster that served them"
    : "Requests per second observed by clients, per cluster, and failures");
  renderTimeline(s);
  renderGates(s);
  renderErrors(s);
}

async function poll() {
  try {
    const resp = await fetch("api/v1/state", { cache: "no-store" });
    if (!resp.ok) throw new Error("HTTP " + resp.status);
    render(await resp.json());
    document.body.dataset.connected = "true";
  } catch (e) {
    document.body.dataset.connected = "false";
    text("status", "cannot reach the dashboard server (the cutover may have ended): " + e.message);
  }
  setTimeout(poll, 500);
}
poll();
