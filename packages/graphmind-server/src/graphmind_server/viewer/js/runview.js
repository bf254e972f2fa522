// The run view: a header with the run's facts, the graph, and the timeline beside it.

import { agentTotals } from "./agents.js";
import { api, errorText } from "./api.js";
import { h } from "./frame.js";
import { ms, clock, droppedText } from "./format.js";
import { GraphView } from "./graph.js";
import { runTools } from "./housekeeping.js";
import { observeBadge, observeOnly } from "./observe.js";
import { replayLine } from "./replayinfo.js";
import { labelEditor } from "./labels.js";
import { metaText, shortId, threadText } from "./runlabel.js";
import { threadHref } from "./threads.js";
import { RunSearch } from "./runsearch.js";
import { SequenceView } from "./sequence.js";
import { StepChart } from "./stepchart.js";
import { EffectsView } from "./effects.js";
import { viewSwitch } from "./panzoom.js";
import { store } from "./state.js";
import { TimelineView } from "./timeline.js";
import { money, ranText, usageLong } from "./usage.js";

export class RunView {
  constructor(el, { onSelectNode, onSelectExec, onPause }) {
    this.el = el;
    this.onPause = onPause;
    this.graph = new GraphView(onSelectNode);
    this.timeline = new TimelineView((nodeId, key) => onSelectExec(nodeId, key));
    this.header = h("div", { class: "run-head" });
    this.msg = h("p", { class: "run-msg", role: "status" });
    this.search = new RunSearch((nodeId, key) => onSelectExec(nodeId, key));
    this.timeline.el.insertBefore(this.search.el, this.timeline.scroller);
    this.sequence = new SequenceView((nodeId, key) => onSelectExec(nodeId, key));
    this.effects = new EffectsView((nodeId, key) => onSelectExec(nodeId, key));
    this.chart = new StepChart((nodeId, key) => onSelectExec(nodeId, key));
    this.views = viewSwitch(this.graph, this.sequence, this.effects);
    this.body = h("div", { class: "run-body" },
      h("div", { class: "graph-wrap" }, this.views, this.graph.el, this.sequence.el, this.effects.el), this.timeline.el);
    this.mounted = false;
  }

  mount() {
    this.search.reset();
    this.chart.reset();
    if (this.graph.resetFit) this.graph.resetFit(); // a newly opened run fits its space again
    if (this.effects.visible) this.effects.refresh(); // the Effects tab stays open: the new run's ledger
    if (this.mounted) return;
    this.mounted = true;
    this.el.replaceChildren(this.header, this.msg, this.chart.el, this.body);
  }

  unmount(text) {
    this.mounted = false;
    this.graph.layoutKey = "";
    this.el.replaceChildren(h("p", { class: "empty" }, text));
  }

  renderHeader() {
    const r = store.runs.get(store.runId) || { id: store.runId, name: store.runId, status: store.model?.runStatus || "…" };
    const m = store.model;
    const dur = r.startedAt ? (r.endedAt || Date.now()) - r.startedAt : null;
    const held = store.gates.filter((g) => g.runId === store.runId).length;
    const observed = observeOnly(store.runId);
    const running = r.status === "running" && !observed;
    this.header.replaceChildren(
      h("div", null,
        h("h1", null, r.name || r.id),
        h("p", { class: "muted" },
          h("span", { class: `status status-${r.status}` }, r.status),
          ` · ${r.app || ""} · started ${clock(r.startedAt)} · ${ms(dur)} · `,
          h("span", { class: "run-id", title: r.id }, `#${shortId(r.id)}`), " · ",
          // The conversation this run is a turn of: its transcript one click away (threads.js).
          r.thread ? h("a", { class: "run-thread", href: threadHref(r.thread), title: `Thread ${r.thread}: read it as one transcript` },
            `thread ${threadText(r.thread)}`) : null, r.thread ? " · " : null,
          metaText(r.meta) ? h("span", { class: "run-meta-text" }, `${metaText(r.meta)} · `) : null,
          h("span", { class: "event-count" }, `${m && !m.summaryOnly ? m.eventCount : r.eventCount ?? "…"} events`),
          ranText(r) ? h("span", { class: "run-ran" }, ` · ${ranText(r)}`) : null,
          held ? h("span", { class: "badge held-badge" }, `${held} held`) : null,
          observed ? observeBadge() : null),
        usageLong(r.usage) ? h("p", { class: "run-usage-line" }, usageLong(r.usage)) : null,
        agentsLine(m, r.usage),
        // Events the app or the hub could not record (issue 38): the run has gaps, and says so.
        r.dropped?.count > 0 ? h("p", { class: "dropped-notice", role: "note" }, droppedText(r.dropped)) : null,
        replayLine(store.runId, r, m),
        store.runId ? labelEditor(store.runId) : null),
      h("div", { class: "run-actions" },
        this.tools(),
        // Named so that "Pause" and "Abort" each match one button: the top bar's and the card's.
        running ? this.holdButton() : null,
        running ? h("button", { type: "button", class: "danger", title: "Abort this run: held gates resolve abort, later gated calls raise RunAborted",
          onclick: () => this.abort() }, "Stop run") : null));
  }

  /** A toggle like the top bar's Pause: armed for this run until a gate of it holds or a second click. */
  holdButton() {
    const armed = store.pause.runs.includes(store.runId);
    return h("button", { type: "button", class: armed ? "toggle on" : "toggle", "aria-pressed": armed ? "true" : "false",
      title: armed ? "Armed: the next gate reached in this run holds. Click to disarm" : "Hold the next gate reached in this run",
      onclick: () => this.onPause(store.runId) }, armed ? "Hold this run: armed" : "Hold this run");
  }

  /** Compare / Export / Delete, rebuilt only when the run or the runs list changes (an open
   * select must survive the once-a-second header refresh). */
  tools() {
    const key = `${store.runId}|${store.runs.size}`;
    if (this.toolsKey !== key) {
      this.toolsKey = key;
      this.toolsEl = runTools(store.runId, { msg: this.msg,
        onCompare: (a, b) => (location.hash = `#/compare/${encodeURIComponent(a)}/${encodeURIComponent(b)}`) });
    }
    return this.toolsEl;
  }

  async abort() {
    const res = await api.abortRun(store.runId);
    this.msg.textContent = res.ok ? "Abort sent: held gates resolve abort, later gated calls raise RunAborted." : errorText(res);
  }
}

/** A team run's header line: per agent, its model steps, tokens, cost and time (agents.js). */
function agentsLine(m, runUsage) {
  if (!m || !m.agents || m.agents.size < 2) return null;
  const parts = agentTotals(m, runUsage).map((a) => h("span", { class: `agent-share state-${a.status}`, dataset: { agent: a.name },
    title: a.path.join(" → ") },
  h("b", null, a.name), ` ${a.steps} step${a.steps === 1 ? "" : "s"} · ${a.tokens.toLocaleString("en-US")} tok`,
  a.cost === null ? "" : ` · ${a.estimated ? "≈ " : ""}${money(a.cost)}`,
  a.durationMs === null ? "" : ` · ${ms(a.durationMs)}`));
  return h("p", { class: "run-agents-line" }, "Agents: ", ...parts.flatMap((p, i) => (i ? [" | ", p] : [p])));
}
