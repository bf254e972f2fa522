// The runs list: newest first, live, filterable by app and status, with a badge on runs that
// have a gate held right now.

import { h } from "./frame.js";
import { ms, ago } from "./format.js";
import { store } from "./state.js";

const STATUSES = ["running", "finished", "error", "aborted", "abandoned"];
const MAX_SHOWN = 500;

export class RunsView {
  constructor(el, { onFilter }) {
    this.el = el;
    this.app = h("select", { id: "filter-app", "aria-label": "Filter by app" }, h("option", { value: "" }, "all apps"));
    this.status = h("select", { id: "filter-status", "aria-label": "Filter by status" }, h("option", { value: "" }, "any status"),
      ...STATUSES.map((s) => h("option", { value: s }, s)));
    for (const sel of [this.app, this.status]) {
      sel.addEventListener("change", () => {
        store.filters = { app: this.app.value, status: this.status.value };
        onFilter();
      });
    }
    this.list = h("ol", { class: "run-list", "aria-label": "Runs" });
    this.count = h("p", { class: "muted small run-count" });
    el.append(h("div", { class: "filters" }, this.app, this.status), this.list, this.count);
  }

  render() {
    const apps = [...new Set([...store.runs.values()].map((r) => r.app).filter(Boolean))].sort();
    const have = [...this.app.options].map((o) => o.value).slice(1);
    if (apps.join("\n") !== have.join("\n")) {
      const cur = this.app.value;
      this.app.replaceChildren(h("option", { value: "" }, "all apps"), ...apps.map((a) => h("option", { value: a }, a)));
      this.app.value = apps.includes(cur) ? cur : "";
    }
    const { app, status } = store.filters;
    const heldBy = new Map();
    for (const g of store.gates) heldBy.set(g.runId, (heldBy.get(g.runId) || 0) + 1);
    const runs = [...store.runs.values()]
      .filter((r) => (!app || r.app === app) && (!status || r.status === status))
      .sort((a, b) => (b.startedAt ?? 0) - (a.startedAt ?? 0));
    const now = Date.now();
    const items = runs.slice(0, MAX_SHOWN).map((r) => {
      const held = heldBy.get(r.id) || 0; // the gates list is whole (hello + held/released)
      const dur = r.endedAt ? r.endedAt - r.startedAt : now - r.startedAt;
      const cur = r.id === store.runId;
      return h("li", null, h("a", { href: `#/run/${encodeURIComponent(r.id)}`, class: `run-item${cur ? " selected" : ""}`,
        "aria-current": cur ? "page" : null, dataset: { runId: r.id } },
        h("span", { class: "run-name" }, r.name || r.id),
        held ? h("span", { class: "badge held-badge", title: "gates held right now" }, `${held} held`) : null,
        h("span", { class: "run-meta" },
          h("span", { class: `status status-${r.status}` }, r.status), ` · ${r.app || "?"} · ${ms(dur)} · ${ago(r.startedAt, now)}`)));
    });
    this.list.replaceChildren(...items);
    this.count.textContent = runs.length
      ? `${runs.length} run${runs.length === 1 ? "" : "s"}${runs.length > MAX_SHOWN ? ` (newest ${MAX_SHOWN} shown)` : ""}`
      : store.runs.size ? "No run matches these filters." : "No runs yet. Start an instrumented app.";
  }
}
