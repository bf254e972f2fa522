// Small SVG charts for the trends page: lines (or bars) over time buckets. Drawn at the size of a
// viewBox and scaled to their box by the browser, so nothing overflows whatever the width.

const NS = "http://www.w3.org/2000/svg";
export const PALETTE = ["#5b8def", "#4cc38a", "#f2b84b", "#ef6461", "#b48cf2", "#4bc6d8", "#e88bd0", "#a3b35c"];
const W = 480;
const H = 150;
const PAD = { l: 58, r: 8, t: 8, b: 20 };

function el(tag, attrs, ...children) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) e.setAttribute(k, String(v));
  for (const c of children) e.append(c);
  return e;
}

function text(x, y, s, anchor = "start") {
  const t = el("text", { x, y, "text-anchor": anchor, class: "ch-label" });
  t.textContent = s;
  return t;
}

/** `ts`: bucket starts (ms); `series`: [{name, values (number | null per bucket), color?, bars?}];
 * `fmt`: the y axis's number format; `tfmt`: a bucket's label. */
export function chart(ts, series, fmt, tfmt) {
  const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, class: "ch", role: "img", preserveAspectRatio: "none" });
  const all = series.flatMap((s) => s.values.filter((v) => typeof v === "number"));
  const max = Math.max(0, ...all) || 1;
  const n = Math.max(1, ts.length);
  const iw = W - PAD.l - PAD.r;
  const ih = H - PAD.t - PAD.b;
  const x = (i) => PAD.l + (n === 1 ? iw / 2 : (i * iw) / (n - 1));
  const y = (v) => PAD.t + ih - (v / max) * ih;
  for (const f of [0, 0.5, 1]) {
    svg.append(el("line", { x1: PAD.l, x2: W - PAD.r, y1: y(max * f), y2: y(max * f), class: "ch-grid" }));
    svg.append(text(PAD.l - 4, y(max * f) + 4, fmt(max * f), "end"));
  }
  if (ts.length) {
    const picks = [...new Set([0, Math.floor((ts.length - 1) / 2), ts.length - 1])];
    for (const i of picks) svg.append(text(x(i), H - 4, tfmt(ts[i]), i === 0 ? "start" : i === ts.length - 1 ? "end" : "middle"));
  }
  series.forEach((s, k) => {
    const color = s.color || PALETTE[k % PALETTE.length];
    if (s.bars) {
      const bw = Math.max(1, (iw / n) * 0.7);
      s.values.forEach((v, i) => {
        if (typeof v === "number" && v > 0) svg.append(el("rect", { x: x(i) - bw / 2, y: y(v), width: bw, height: PAD.t + ih - y(v), fill: color, opacity: 0.85 }));
      });
      return;
    }
    let d = "";
    s.values.forEach((v, i) => {
      if (typeof v !== "number") return;
      d += `${d && s.values[i - 1] !== null && typeof s.values[i - 1] === "number" ? "L" : "M"}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
    });
    if (d) svg.append(el("path", { d, fill: "none", stroke: color, "stroke-width": 1.6, "vector-effect": "non-scaling-stroke" }));
    // A point with no number either side is a path with no segment, which draws nothing (one day
    // of data, or a day between gaps): mark it with a dot in the series colour.
    const num = (i) => typeof s.values[i] === "number";
    s.values.forEach((v, i) => {
      if (num(i) && !num(i - 1) && !num(i + 1)) svg.append(el("circle", { cx: x(i).toFixed(1), cy: y(v).toFixed(1), r: 2.5, fill: color, class: "ch-dot" }));
    });
  });
  return svg;
}
