// Effects (docs/effects.md): a call's effect class on its node and its held card, the run's effects
// ledger as a tab beside Graph and Sequence, and the held card's answers at an effect hold (run it
// for real, simulate, simulate like this from now on). The ledger is the hub's (GET
// /api/runs/{id}/effects, derived in store/effects.py): the page never folds it itself.

import { api, errorText } from "./api.js";
import { h, schedule } from "./frame.js";
import { clock } from "./format.js";
import { on, store } from "./state.js";

const REFRESH_MS = 1000; // a live run's ledger is fetched again at most this often while shown
const RAN = ["ran", "held then ran", "running"];
const BY = { viewer: "the viewer", api: "an API client", mcp: "the MCP server", "safe mode": "safe mode" };
const SIMULATE_WITH = {
  recorded: "the recorded output for this input",
  hub: "the recorded output the hub found",
  schema: "a value built from the tool's output schema",
  stub: "this tool's stub value",
  none: "null (nothing known about its output)",
};

/** "write · name rule (*refund*)": an effect's class and where it came from, or "" for none. */
export function effectText(effect) {
  if (!effect || typeof effect.class !== "string") return "";
  const detail = effect.rule || effect.hint;
  const source = typeof effect.source === "string" ? ` · ${effect.source}${detail ? ` (${detail})` : ""}` : "";
  return `${effect.class}${source}`;
}

export function byText(by) {
  return typeof by === "string" ? BY[by] || by : "—";
}

export function simulatedFromText(from) {
  return SIMULATE_WITH[from] || "a simulated value";
}

/** The effect lines of a held card at an effect hold (or any hold of a call with a class). */
export function effectLines(g) {
  const out = [];
  // Only an effect hold carries the class; at any other hold of a tool it comes from the node's
  // start, when its run is the one loaded.
  const x = store.model && store.model.id === g.runId ? store.model.execs.get(`${g.nodeId}\u0000${g.instanceId ?? ""}`) : null;
  const effect = g.effect && g.effect.class ? g.effect : x && x.effect;
  if (effect && effect.class && effect.class !== "read") {
    out.push(h("p", { class: `gate-effect effect-${cls(effect.class)}` },
      h("span", { class: `chip effect-chip effect-${cls(effect.class)}` }, effect.class),
      ` ${effectText(effect).slice(effect.class.length + 3) || "effect class"}`));
  }
  if (g.reason === "effect" && typeof g.ranBefore === "number" && g.ranBefore > 0) {
    out.push(h("p", { class: "gate-ran-before", role: "alert" },
      g.why || `this call already ran ${g.ranBefore === 1 ? "once" : `${g.ranBefore} times`}: run it again?`));
  }
  if (g.actions && g.actions.includes("simulate")) {
    out.push(h("p", { class: "muted small gate-simulate-with" }, `Simulate returns ${simulatedFromText(g.simulateWith)}.`));
  }
  return out;
}

/** The Effects tab: the run's ledger, fetched from the hub when shown and while the run changes. */
export class EffectsView {
  constructor(onSelect) {
    this.onSelect = onSelect;
    this.el = h("div", { class: "effects", role: "region", "aria-label": "Effects ledger", hidden: true });
    this.runId = null;
    this.last = 0;
    this.timer = null;
    on("model", () => this.visible && this.refreshSoon());
  }

  get visible() {
    return !this.el.hidden;
  }

  show(visible) {
    this.el.hidden = !visible;
    if (visible) this.refresh();
  }

  /** At most one fetch per REFRESH_MS while events arrive; the last change is always fetched. */
  refreshSoon() {
    if (this.timer) return;
    const wait = Math.max(0, this.last + REFRESH_MS - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.refresh();
    }, wait);
  }

  async refresh() {
    const runId = store.runId;
    if (!runId) return;
    this.last = Date.now();
    const res = await api.effects(runId);
    if (runId !== store.runId) return; // another run was opened meanwhile
    schedule("effects", () => this.render(runId, res));
  }

  render(runId, res) {
    if (!res.ok) {
      this.el.replaceChildren(h("p", { class: "muted" }, `Could not load the ledger: ${errorText(res)}`));
      return;
    }
    const { effects, summary } = res.body;
    const audit = auditLines(res.body.proposals);
    const ran = summary.writesRan;
    const verdict = h("p", { class: `effects-verdict ${ran ? "writes-ran" : "no-writes"}` },
      h("strong", null, ran ? `${ran} write${ran === 1 ? "" : "s"} ran` : "0 writes ran"),
      summary.unknownRan ? ` · ${summary.unknownRan} unknown call${summary.unknownRan === 1 ? "" : "s"} ran` : "",
      ` · ${effects.length} write or unknown call${effects.length === 1 ? "" : "s"}`,
      ...Object.entries(summary.outcomes).filter(([k, n]) => n && !RAN.includes(k)).map(([k, n]) => ` · ${n} ${k}`));
    if (!effects.length) {
      this.el.replaceChildren(verdict, h("p", { class: "muted" },
        "No write or unknown tool call in this run. Reads and model calls are never listed (docs/effects.md)."), ...audit);
      return;
    }
    const rows = effects.map((e) => h("tr", { class: `effect-row outcome-${cls(e.outcome)}`, dataset: { instanceId: String(e.instanceId ?? "") } },
      h("td", { class: "num" }, String(e.n)),
      h("td", null, h("button", { type: "button", class: "link", title: `${e.nodeId} · started ${clock(e.ts)}`,
        onclick: () => this.onSelect(e.nodeId, `${e.nodeId}\u0000${e.instanceId ?? ""}`) }, e.name)),
      h("td", null, h("span", { class: `chip effect-chip effect-${cls(e.class)}`, title: effectText(e) }, e.class),
        h("span", { class: "muted small effect-source" }, ` ${e.source || ""}`)),
      h("td", null, h("span", { class: `chip outcome-chip outcome-${cls(e.outcome)}` }, e.outcome),
        e.runs > 1 ? h("span", { class: "muted small" }, ` ×${e.runs}`) : null),
      h("td", { class: "effect-by" }, byText(e.by)),
      h("td", { class: "effect-input" }, h("code", { title: full(e.input) }, compact(e.input)))));
    const table = h("table", { class: "effects-table" },
      h("thead", null, h("tr", null, ...["#", "Call", "Class", "Outcome", "By", "Input"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", null, ...rows));
    this.el.replaceChildren(verdict, h("div", { class: "effects-scroll" }, table), ...audit);
    this.runId = runId;
  }
}

/** The answers an assistant proposed at this run's gates, and who decided them (docs/mcp.md). */
function auditLines(proposals) {
  if (!Array.isArray(proposals) || !proposals.length) return [];
  const who = (p) => (p.status === "accepted" || p.status === "rejected" ? ` by ${p.by === "auto" ? "auto (--allow-control=auto)" : byText(p.by)}` : "");
  return [h("h3", { class: "effects-proposals-title" }, "Proposed answers"),
    h("ul", { class: "effects-proposals" }, ...proposals.map((p) => h("li", { class: `proposal-${cls(p.status)}`, dataset: { proposal: p.proposal } },
      h("code", null, p.nodeId || ""), ` · ${p.action} · `, h("strong", null, `${p.status}${who(p)}`),
      p.why ? h("span", { class: "muted" }, ` — ${p.why}`) : null)))];
}

function compact(value) {
  const text = full(value);
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

function full(value) {
  try {
    return JSON.stringify(value === undefined ? null : value) ?? "null";
  } catch {
    return String(value);
  }
}

function cls(s) {
  return String(s || "").replace(/[^a-z0-9_-]/gi, "_");
}
