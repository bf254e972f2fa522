// The runs list: newest first, live, searchable and filterable (filters.js), with a badge on runs
// that have a gate held right now, and each run's tokens and cost (usage.js).

import { h } from "./frame.js";
import { FilterBar, passes } from "./filters.js";
import { ms, ago } from "./format.js";
import { connectHelp } from "./housekeeping.js";
import { runFacts } from "./runlabel.js";
import { store } from "./state.js";
import { groupRuns } from "./threads.js";
import { usageShort } from "./usage.js";

const MAX_SHOWN = 500;

export class RunsView {
  constructor(el, { onFilter }) {
    this.el = el;
    this.filters = new FilterBar(onFilter);
    this.list = h("ol", { class: "run-list", "aria-label": "Runs" });
    this.count = h("div", { class: "muted small run-count" });
    el.append(this.filters.el, this.list, this.count);
  }

  render() {
    this.filters.syncOptions();
    const heldBy = new Map();
    for (const g of store.gates) heldBy.set(g.runId, (heldBy.get(g.runId) || 0) + 1);
    const runs = [...store.runs.values()].filter(passes).sort((a, b) => (b.startedAt ?? 0) - (a.startedAt ?? 0));
    const now = Date.now();
    const item = (r) => {
      const held = heldBy.get(r.id) || 0; // the gates list is whole (hello + held/released)
      const dur = r.endedAt ? r.endedAt - r.startedAt : now - r.startedAt;
      const cur = r.id === store.runId;
      const usage = usageShort(r.usage);
      return h("li", null, h("a", { href: `#/run/${encodeURIComponent(r.id)}`, class: `run-item${cur ? " selected" : ""}`,
        "aria-current": cur ? "page" : null, dataset: { runId: r.id } },
        h("span", { class: "run-name", title: r.name || r.id }, r.name || r.id),
        held ? h("span", { class: "badge held-badge", title: "gates held right now" }, `${held} held`) : null,
        h("span", { class: "run-meta" },
          h("span", { class: `status status-${r.status}` }, r.status), ` · ${r.app || "?"} · ${ms(dur)} · ${ago(r.startedAt, now)}`,
          usage ? h("span", { class: "run-usage" }, ` · ${usage}`) : null),
        // Start time, short id and the app's own meta: same-named runs are told apart here.
        h("span", { class: "run-facts" }, runFacts(r, { app: false }))));
    };
    // By thread: a conversation's turns together under a link to its transcript (threads.js).
    const items = groupRuns(runs.slice(0, MAX_SHOWN), store.filters.group, item);
    this.list.replaceChildren(...items);
    this.count.replaceChildren(runs.length
      ? `${runs.length} run${runs.length === 1 ? "" : "s"}${runs.length > MAX_SHOWN ? ` (newest ${MAX_SHOWN} shown)` : ""}`
      : store.runs.size ? "No run matches these filters." : connectHelp());
  }
}
