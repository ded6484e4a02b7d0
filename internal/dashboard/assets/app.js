// The live view: polls /api/v1/state and redraws. No libraries, nothing fetched from
// outside this server.
"use strict";

const COLORS = { failures: "#cf222e" };
const PALETTE = ["#0969da", "#1a7f37", "#8250df", "#bf8700", "#57606a"];
let clusterColors = {};

function colorOf(id, state) {
  if (COLORS[id]) return COLORS[id];
  if (id === state.from) return "#0969da";
  if (id === state.to) return "#1a7f37";
  if (!clusterColors[id]) clusterColors[id] = PALETTE[Object.keys(clusterColors).length % PALETTE.length];
  return clusterColors[id];
}

const SVG = "http://www.w3.org/2000/svg";
function el(name, attrs, text) {
  const e = document.createElementNS(SVG, name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}

// chart draws one line per key of the points' values; x is time since the recorder
// started, y from 0 to max (or the largest value).
function chart(svg, points, state, fixedMax) {
  const W = 600, H = 200, L = 40, R = 90, T = 8, B = 22;
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  svg.dataset.points = String(points.length);
  const t0 = Date.parse(state.started), t1 = Math.max(Date.parse(state.now), t0 + 1000);
  const keys = [];
  let max = fixedMax || 1;
  for (const p of points) for (const k in p.values) {
    if (!keys.includes(k)) keys.push(k);
    if (!fixedMax) max = Math.max(max, p.values[k]);
  }
  const x = t => L + (W - L - R) * (t - t0) / (t1 - t0);
  const y = v => T + (H - T - B) * (1 - v / max);
  svg.appendChild(el("line", { x1: L, y1: y(0), x2: W - R, y2: y(0), class: "axis" }));
  svg.appendChild(el("line", { x1: L, y1: y(max), x2: W - R, y2: y(max), class: "axis" }));
  svg.appendChild(el("text", { x: 2, y: y(max) + 4 }, fmt(max)));
  svg.appendChild(el("text", { x: 2, y: y(0) + 4 }, "0"));
  svg.appendChild(el("text", { x: W - R - 30, y: H - 4 }, Math.round((t1 - t0) / 1000) + " s"));
  keys.sort().forEach((k, i) => {
    const pts = [];
    let last = null;
    for (const p of points) {
      if (!(k in p.values)) continue;
      const px = x(Date.parse(p.t)), py = y(p.values[k]);
      // Weights hold until the next write: draw steps, not slopes.
      if (fixedMax && last !== null) pts.push(px.toFixed(1) + "," + last);
      pts.push(px.toFixed(1) + "," + py.toFixed(1));
      last = py.toFixed(1);
    }
    if (fixedMax && last !== null) pts.push(x(t1).toFixed(1) + "," + last);
    const color = colorOf(k, state);
    svg.appendChild(el("polyline", { points: pts.join(" "), class: "line", stroke: color, "data-key": k }));
    const lastVal = points.length ? points[points.length - 1].values[k] : undefined;
    svg.appendChild(el("text", { x: W - R + 6, y: T + 14 + 16 * i, fill: color, class: "legend" },
      k + (lastVal === undefined ? "" : " " + fmt(lastVal))));
  });
}

function fmt(v) { return v >= 100 || Number.isInteger(v) ? String(Math.round(v)) : v.toFixed(1); }
function weights(w) { return w ? Object.keys(w).sort().map(k => k + "=" + w[k]).join(" ") : ""; }
function text(id, s) { document.getElementById(id).textContent = s; }

function render(s) {
  text("name", s.cutover + ": " + s.from + " → " + s.to);
  const c = s.current;
  let status = c.phase || "waiting";
  if (c.total > 0 && c.phase !== "done") status = "step " + c.step + "/" + c.total + "  " + status;
  if (c.weights) status += "  " + weights(c.weights);
  if (c.leftSeconds > 0) status += "  " + Math.ceil(c.leftSeconds) + " s left";
  if (c.message) status += "  — " + c.message;
  text("status", status);
  document.body.dataset.step = String(c.step);
  document.body.dataset.phase = c.phase || "";
  chart(document.getElementById("chart-weights"), s.series.weights, s, 100);
  chart(document.getElementById("chart-dns"), s.series.dnsShares, s, 100);
  chart(document.getElementById("chart-requests"), s.series.requests, s, 0);
  text("req-source", s.requestsSource ? "— " + s.requestsSource : "");

  const tl = document.getElementById("timeline");
  tl.replaceChildren(...s.timeline.map(st => {
    const li = document.createElement("li");
    li.className = st.outcome;
    const secs = st.ended ? Math.round((Date.parse(st.ended) - Date.parse(st.started)) / 1000) + " s" : "";
    li.textContent = st.name + "  " + weights(st.weights) + "  " + st.outcome + (secs ? " (" + secs + ")" : "");
    return li;
  }));
  const gates = document.querySelector("#gates tbody");
  gates.replaceChildren(...s.gates.map(g => {
    const tr = document.createElement("tr");
    for (const [v, cls] of [[g.gate, ""], [g.kind, ""], [g.pass ? "pass" : "FAIL", g.pass ? "passed" : "fail"], [g.detail + (g.err ? " (" + g.err + ")" : ""), "detail"]]) {
      const td = document.createElement("td");
      td.textContent = v;
      if (cls) td.className = cls;
      tr.appendChild(td);
    }
    return tr;
  }));
  const errs = document.getElementById("errors");
  if (s.errors.length === 0) {
    errs.innerHTML = '<li class="none">none</li>';
  } else {
    errs.replaceChildren(...s.errors.slice().reverse().map(e => {
      const li = document.createElement("li");
      li.className = "failed";
      li.textContent = new Date(e.t).toLocaleTimeString() + "  " + e.message;
      return li;
    }));
  }
}

async function poll() {
  try {
    const resp = await fetch("api/v1/state", { cache: "no-store" });
    if (resp.ok) render(await resp.json());
  } catch (e) {
    text("status", "the cutover's dashboard server is gone (" + e + ")");
  }
  setTimeout(poll, 500);
}
poll();
