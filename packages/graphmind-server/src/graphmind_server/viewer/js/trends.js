// The trends page (#/trends): cost, tokens, latency (p50/p95) and error rate over days or hours,
// per app, model or tool (GET /api/trends, docs/api.md; the sums are the hub's SQL, the page only draws).

import { api, errorText } from "./api.js";
import { chart, PALETTE } from "./chart.js";
import { h } from "./frame.js";
import { ms } from "./format.js";
import { money } from "./usage.js";

const RANGES = [["1", "Last 24 hours"], ["7", "Last 7 days"], ["30", "Last 30 days"], ["90", "Last 90 days"]];
const GROUPS = [["model", "Model"], ["app", "App"], ["tool", "Tool"]];
const DAY = 86_400_000;
const num = (v) => (typeof v === "number" ? v.toLocaleString("en-US") : "–");
const pct = (v) => (typeof v === "number" ? `${(v * 100).toFixed(v > 0 && v < 0.01 ? 2 : 1)}%` : "–");
const tokens = (v) => (v >= 1e6 ? `${(v / 1e6).toFixed(1)}M` : v >= 1e3 ? `${(v / 1e3).toFixed(v >= 1e4 ? 0 : 1)}k` : String(Math.round(v)));

const state = { days: "30", group: "model", app: "" };
let asked = 0; // the latest request: an answer to an earlier one (a control changed again meanwhile) is dropped

export async function showTrends(el) {
  const mine = ++asked;
  document.body.dataset.trendsDrawn = "false";
  const t0 = performance.now();
  const until = Date.now() + 60_000;
  const q = new URLSearchParams({ since: String(until - Number(state.days) * DAY), until: String(until), group: state.group,
    tz: String(-new Date().getTimezoneOffset()) });
  if (state.app) q.set("app", state.app);
  if (!el.querySelector(".trends")) el.replaceChildren(h("p", { class: "empty" }, "Loading trends…"));
  const res = await api.trends(q);
  // Two quick changes (group by tool, then by app) ask twice; the answers can arrive in either
  // order, and the one drawn last must be the one asked last.
  if (mine !== asked || !location.hash.startsWith("#/trends")) return;
  if (!res.ok) {
    el.replaceChildren(h("p", { class: "empty" }, `Cannot load trends: ${errorText(res)}`));
    return;
  }
  el.replaceChildren(page(res.body, () => showTrends(el)));
  requestAnimationFrame(() => {
    if (mine !== asked) return;
    document.body.dataset.trendsDrawn = "true";
    document.body.dataset.trendsMs = String(Math.round(performance.now() - t0));
    performance.mark("graphmind:trends");
  });
}

function select(options, value, label, onchange) {
  return h("select", { "aria-label": label, onchange: (e) => onchange(e.target.value) },
    ...options.map(([v, text]) => h("option", { value: v, selected: v === value }, text)));
}

function page(t, redraw) {
  const b = t.buckets;
  const ts = b.map((x) => x.t);
  const tfmt = (v) => new Date(v).toLocaleString([], t.bucket === "hour" ? { hour: "2-digit", minute: "2-digit" } : { month: "short", day: "numeric" });
  const set = (k) => (v) => { state[k] = v; redraw(); };
  const runs = b.reduce((s, x) => s + x.runs, 0);
  const errors = b.reduce((s, x) => s + x.errors, 0);
  const cost = b.reduce((s, x) => s + x.costUsd, 0);
  const tok = b.reduce((s, x) => s + x.inputTokens + x.outputTokens, 0);
  const head = h("div", { class: "run-head" },
    h("div", null, h("h1", null, "Trends"),
      h("p", { class: "muted" }, `${num(runs)} runs · ${money(cost) || "$0"}${t.unpricedModels ? " (some models have no price)" : ""} · ${tokens(tok)} tokens · ${pct(runs ? errors / runs : null)} errors · per ${t.bucket}`)),
    h("div", { class: "run-actions tr-controls" },
      select(RANGES, state.days, "Range", set("days")),
      select(GROUPS, state.group, "Group by", set("group")),
      select([["", "All apps"], ...t.apps.map((a) => [a, a])], state.app, "App", set("app"))));
  const legend = h("p", { class: "tr-legend small" }, ...t.series.map((s, i) =>
    h("span", { class: "tr-key" }, h("span", { class: "tr-swatch", style: `background:${PALETTE[i % PALETTE.length]}` }), s.key)));
  const panel = (title, svg, extra) => h("section", { class: "tr-panel" }, h("h3", null, title), svg, extra || null);
  const charts = h("div", { class: "tr-charts" },
    panel(`Cost per ${t.bucket}, by ${t.group}`, chart(ts, t.series.map((s) => ({ name: s.key, values: s.costUsd })), money, tfmt), legend),
    panel(`Tokens per ${t.bucket}`, chart(ts, [{ name: "tokens", values: b.map((x) => x.inputTokens + x.outputTokens), bars: true }], tokens, tfmt)),
    panel("Run latency p50 / p95", chart(ts, [{ name: "p50", values: b.map((x) => x.p50Ms) }, { name: "p95", values: b.map((x) => x.p95Ms), color: "#f2b84b" }], ms, tfmt),
      h("p", { class: "tr-legend small" }, h("span", { class: "tr-key" }, h("span", { class: "tr-swatch", style: `background:${PALETTE[0]}` }), "p50"),
        h("span", { class: "tr-key" }, h("span", { class: "tr-swatch", style: "background:#f2b84b" }), "p95"))),
    panel("Runs in error", chart(ts, [{ name: "error rate", values: b.map((x) => x.errorRate), bars: true, color: "#ef6461" }], pct, tfmt)));
  const what = t.group === "app" ? "runs" : "calls";
  const table = h("table", { class: "tr-table", "aria-label": `By ${t.group}` },
    h("thead", null, h("tr", null, ...[t.group, what, "errors", "p50", "p95", "tokens in", "tokens out", "cost"].map((c, i) => h("th", { class: i ? "num" : null }, c)))),
    h("tbody", null, ...t.groups.map((g) => h("tr", { dataset: { key: g.key } },
      h("td", { class: "tr-name", title: g.key }, g.key), h("td", { class: "num" }, num(g.count)),
      h("td", { class: "num" }, `${num(g.errors)} (${pct(g.errorRate)})`), h("td", { class: "num" }, ms(g.p50Ms)), h("td", { class: "num" }, ms(g.p95Ms)),
      h("td", { class: "num" }, num(g.inputTokens)), h("td", { class: "num" }, num(g.outputTokens)),
      h("td", { class: "num tr-cost", dataset: { usd: String(g.costUsd) } }, money(g.costUsd) || "$0")))));
  const empty = !b.length ? h("p", { class: "empty" }, "No runs in this range.") : null;
  return h("div", { class: "trends" }, head, h("div", { class: "tr-body" }, empty, charts, h("h3", null, `By ${t.group}`), table));
}
