// Two runs side by side (GET /api/compare, docs/api.md): their steps aligned by node and order
// (a step inserted in or removed from one run shows as added or removed, the rest still pair up),
// each pair equal or changed, with the changed fields' diffs and the token, cost and latency deltas.

import { api, errorText } from "./api.js";
import { h } from "./frame.js";
import { ms } from "./format.js";
import { tagChips } from "./labels.js";
import { runFacts } from "./runlabel.js";
import { money } from "./usage.js";

const MARK = { equal: "=", changed: "~", added: "+", removed: "−" };
const MAX_LINES = 400;

export async function showCompare(el, a, b) {
  document.body.dataset.compareLoaded = "false";
  el.replaceChildren(h("p", { class: "empty" }, "Comparing…"));
  const res = await api.compare(a, b);
  if (!res.ok) {
    el.replaceChildren(h("p", { class: "empty" }, `Cannot compare: ${errorText(res)}`));
    return;
  }
  const c = res.body;
  const runLink = (r, side) => h("a", { href: `#/run/${encodeURIComponent(r.id)}`, class: "cmp-run" }, `${side} ${r.name || r.id}`,
    h("span", { class: `status status-${r.status}` }, ` ${r.status}`));
  const d = c.deltas;
  const head = h("div", { class: "run-head cmp-head" },
    h("div", null, h("h1", null, c.same ? "The runs match" : "The runs differ"),
      h("p", { class: "muted" }, runLink(c.a, "A"), " · ", runLink(c.b, "B"), " · ",
        `${c.counts.equal} equal · ${c.counts.changed} changed · ${c.counts.added} added · ${c.counts.removed} removed`),
      h("p", { class: "muted small" }, `B − A: ${delta(d.tokens, (v) => `${v} tokens`)} · ${delta(d.costUsd, money)} · ${delta(d.durationMs, ms)}`),
      // Which run is which (start, app, id, thread, tags) and a person's notes on each.
      ...[["A", c.a], ["B", c.b]].map(([side, r]) => h("p", { class: "muted small cmp-facts" }, `${side}: ${runFacts(r)}`,
        r.labels?.note ? h("span", { class: "cmp-note" }, ` · “${r.labels.note}”`) : null))),
    h("div", { class: "run-actions" }, h("a", { href: `#/compare/${encodeURIComponent(c.b.id)}/${encodeURIComponent(c.a.id)}`, class: "small" }, "Swap A and B")));
  const table = h("ol", { class: "cmp-steps", "aria-label": "Aligned steps" });
  const seen = new Map();
  for (const row of c.steps) {
    seen.set(row.nodeId, (seen.get(row.nodeId) || 0) + 1);
    const li = stepRow(row, seen.get(row.nodeId));
    // A node's labels, once, on its first step (either run's).
    const labels = seen.get(row.nodeId) === 1 ? [c.a.nodeLabels?.[row.nodeId], c.b.nodeLabels?.[row.nodeId]] : [];
    for (const [i, l] of labels.entries()) {
      if (l && (l.note || l.tags?.length)) {
        li.querySelector(".cmp-name").append(h("span", { class: "cmp-label small" }, i ? " B: " : " A: ", tagChips(l.tags), l.note ? ` ${l.note}` : ""));
      }
    }
    table.append(li);
  }
  el.replaceChildren(head, h("div", { class: "cmp-body" }, table));
  document.body.dataset.compareLoaded = "true";
}

function delta(v, fmt) {
  if (typeof v !== "number") return "–";
  return v === 0 ? `±${fmt(0)}` : v > 0 ? `+${fmt(v)}` : `−${fmt(-v)}`;
}

function stepRow(row, nth) {
  const side = (s) => (s ? `${s.status} · ${s.ranMs === null || s.ranMs === undefined ? "–" : ms(s.ranMs)}${s.tokens ? ` · ${s.tokens} tok` : ""}${typeof s.costUsd === "number" ? ` · ${money(s.costUsd)}` : ""}` : "—");
  const dl = row.deltas || {};
  const li = h("li", { class: `cmp-step cmp-${row.status}`, dataset: { nodeId: row.nodeId, status: row.status } },
    h("span", { class: "cmp-mark", "aria-label": row.status }, MARK[row.status]),
    h("span", { class: "cmp-name", title: row.nodeId }, `${row.name} #${nth}`),
    h("span", { class: "cmp-side muted small" }, side(row.a)),
    h("span", { class: "cmp-side muted small" }, side(row.b)),
    h("span", { class: "cmp-delta small" }, row.status === "equal" || row.status === "changed"
      ? [delta(dl.ranMs, ms), typeof dl.tokens === "number" ? delta(dl.tokens, String) : null].filter(Boolean).join(" · ") : row.status));
  if (row.status === "changed") {
    const box = h("div", { class: "cmp-diffs" });
    for (const field of row.changed) box.append(h("h3", null, `${field} differs`), diffView(row.a[field], row.b[field]));
    li.append(box);
  }
  return li;
}

/** A line diff of two values' pretty JSON: removed lines (A) and added lines (B) marked. */
export function diffView(a, b) {
  const la = pretty(a).split("\n").slice(0, MAX_LINES);
  const lb = pretty(b).split("\n").slice(0, MAX_LINES);
  const ops = lcsDiff(la, lb);
  return h("pre", { class: "cmp-diff mono" }, ...ops.map(([op, line]) =>
    h("span", { class: op === "-" ? "diff-del" : op === "+" ? "diff-add" : "diff-same" }, `${op === "=" ? " " : op} ${line}\n`)));
}

function pretty(v) {
  if (v === undefined) return "(none)";
  try {
    return JSON.stringify(v, null, 2);
  } catch {
    return String(v);
  }
}

function lcsDiff(a, b) {
  const n = a.length;
  const m = b.length;
  const t = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) t[i][j] = a[i] === b[j] ? t[i + 1][j + 1] + 1 : Math.max(t[i + 1][j], t[i][j + 1]);
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) { out.push(["=", a[i]]); i++; j++; }
    else if (t[i + 1][j] >= t[i][j + 1]) out.push(["-", a[i++]]);
    else out.push(["+", b[j++]]);
  }
  while (i < n) out.push(["-", a[i++]]);
  while (j < m) out.push(["+", b[j++]]);
  return out;
}
