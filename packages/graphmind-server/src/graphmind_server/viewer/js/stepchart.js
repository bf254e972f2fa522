// The run view's per-step chart: input tokens of every model call across the run (the growth of
// the window), one bar per step in the agent's colour, the model's context limit as a line where the
// hub knows it. The hub's GET /api/runs/{id}/context gives the steps; an older hub without it gets
// the reported input tokens from the run's own events. A click (or Enter) on a bar selects that call.

import { api } from "./api.js";
import { h } from "./frame.js";
import { store } from "./state.js";

const SVG_NS = "http://www.w3.org/2000/svg";
const HEIGHT = 52;
const PALETTE = ["#5b8def", "#4cc38a", "#e0a44b", "#b48cf2", "#e07ab8", "#4fc1d6", "#c7c95a", "#ef8a61"];
const num = (v) => Math.round(v).toLocaleString("en-US");
// More model steps than this are not drawn one bar each: the hub's answer for a 1,000,000-event run
// (170,000 steps) was 40 MB and 14-22 s of its CPU, during which it answered nothing else, and as
// many bars would be as many focusable SVG elements in the page.
export const MAX_STEPS = 5000;

function svg(tag, attrs) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  return el;
}

/** The steps from the run's own events: every model call with reported input tokens. */
export function stepsFromModel(m) {
  const out = [];
  if (!m) return out;
  for (const x of m.order) {
    if (x.kind !== "llm" || !x.usage || typeof x.usage.inputTokens !== "number") continue;
    out.push({ nodeId: x.nodeId, instanceId: x.instanceId, agent: x.agent || null, inputTokens: x.usage.inputTokens, estimated: false, contextLimit: null, seq: x.seq });
  }
  return out;
}

export class StepChart {
  constructor(onSelect) {
    this.onSelect = onSelect;
    this.el = h("section", { class: "stepchart", "aria-label": "Input tokens per model step", hidden: true });
    this.steps = [];
    this.askedFor = "";
    this.ask = 0;
    this.width = 0;
    this.reserved = false;
    // The run view narrows when a card or the node detail opens: draw again at the new width.
    new ResizeObserver(() => {
      if (this.steps.length && Math.abs(this.el.clientWidth - this.width) > 1) this.draw();
    }).observe(this.el);
  }

  /** Ask the hub again when the run's model calls changed (called once per model frame with the
   * executions that changed in it: a huge run's frame never walks all of its executions). */
  refresh(runId, m, dirtyExecs) {
    if (m !== this.model) {
      this.model = m;
      this.calls = new Map(); // exec key -> [ended or held, edited] (0/1), for the model calls seen
      this.ended = 0;
      this.edited = 0;
      dirtyExecs = m ? m.execs.keys() : [];
    }
    for (const key of dirtyExecs) {
      const x = m.execs.get(key);
      if (!x || x.kind !== "llm") continue;
      const was = this.calls.get(key) || [0, 0];
      const now = [x.endTs !== null || x.gate ? 1 : 0, x.edited ? 1 : 0];
      this.ended += now[0] - was[0];
      this.edited += now[1] - was[1];
      this.calls.set(key, now);
    }
    const key = `${runId}|${this.calls.size}|${this.ended}|${this.edited}`;
    if (key === this.askedFor) return;
    this.askedFor = key;
    this.tooMany = this.calls.size > MAX_STEPS ? this.calls.size : 0;
    if (this.tooMany) {
      this.ask++; // an answer asked for before is not drawn
      this.steps = [];
      this.draw();
      return;
    }
    if (!this.calls.size) {
      this.steps = [];
      this.draw();
      return;
    }
    const mine = ++this.ask;
    api.contextSteps(runId).then((res) => {
      if (mine !== this.ask || store.runId !== runId) return;
      const steps = res.ok && res.body && Array.isArray(res.body.steps) ? res.body.steps : stepsFromModel(store.model);
      this.steps = steps.filter((s) => typeof s.inputTokens === "number");
      this.draw();
    });
  }

  /** Hold the strip's place as soon as the run has a model node (its summary says so), before the
   * graph fits itself to the space left: the steps arriving later never move the graph. */
  reserve(m) {
    if (this.reserved || !m) return;
    for (const n of m.nodes.values()) {
      if (n.kind === "llm") {
        this.reserved = true;
        this.draw();
        return;
      }
    }
  }

  reset() {
    this.reserved = false;
    this.tooMany = 0;
    this.askedFor = "";
    this.model = null;
    this.steps = [];
    this.draw();
  }

  draw() {
    const steps = this.steps;
    if (this.tooMany) {
      this.el.hidden = false;
      this.el.replaceChildren(h("div", { class: "sc-caption small muted" },
        `Input tokens per model step: ${num(this.tooMany)} model steps, too many to draw a bar each (the node detail has each call's usage)`));
      return;
    }
    this.el.hidden = !steps.length && !this.reserved;
    if (!steps.length) {
      this.el.replaceChildren(...(this.reserved ? [h("div", { class: "sc-caption small muted" }, "Input tokens per model step: none counted yet")] : []));
      return;
    }
    this.width = this.el.clientWidth;
    const inner = this.el.clientWidth - 32; // the section's side padding
    const width = Math.max(200, inner > 0 ? inner : this.el.parentElement?.clientWidth || 600);
    const plotW = width - 8;
    const max = Math.max(...steps.map((s) => s.inputTokens), 1);
    const limit = Math.max(0, ...steps.map((s) => (typeof s.contextLimit === "number" ? s.contextLimit : 0))) || null;
    // The limit joins the scale only when it is near: against a 128k window a 3k-token run would
    // be flat bars; then the limit is named in the caption instead.
    const top = limit && limit <= max * 2 ? limit * 1.05 : max * 1.12;
    const plotH = HEIGHT - 14;
    const slot = Math.min(plotW / steps.length, 40); // few steps stay together at the left: the growth reads
    const barW = Math.max(2, Math.min(28, slot * 0.7));
    const agents = [...new Set(steps.map((s) => s.agent || ""))];
    const color = (a) => PALETTE[agents.indexOf(a || "") % PALETTE.length];
    const chart = svg("svg", { class: "sc-svg", width, height: HEIGHT, viewBox: `0 0 ${width} ${HEIGHT}`, role: "list" });
    chart.append(svg("line", { x1: 0, x2: width, y1: plotH + 0.5, y2: plotH + 0.5, class: "sc-axis" }));
    steps.forEach((s, i) => {
      const bh = Math.max(1, (s.inputTokens / top) * plotH);
      const x = 4 + i * slot + (slot - barW) / 2;
      const key = `${s.nodeId}\u0000${s.instanceId}`;
      const sel = store.selectedExec === key || (!store.selectedExec && store.selectedNode === s.nodeId);
      const bar = svg("rect", { x: x.toFixed(1), y: (plotH - bh).toFixed(1), width: barW.toFixed(1), height: bh.toFixed(1), rx: 1.5,
        fill: color(s.agent), class: `sc-bar${sel ? " selected" : ""}${s.estimated ? " estimated" : ""}`, tabindex: 0, role: "listitem",
        "data-node-id": s.nodeId, "data-instance-id": s.instanceId,
        "aria-label": `Step ${i + 1}${s.agent ? `, ${s.agent}` : ""}: ${num(s.inputTokens)} input tokens${s.estimated ? " (estimated)" : ""}` });
      const title = svg("title");
      title.textContent = `step ${i + 1}${s.agent ? ` · ${s.agent}` : ""} · ${s.nodeId}\n${num(s.inputTokens)} input tokens${s.estimated ? " (estimated)" : ""}${
        typeof s.contextLimit === "number" ? ` of ${num(s.contextLimit)}` : ""}`;
      bar.append(title);
      const pick = () => this.onSelect(s.nodeId, key);
      bar.addEventListener("click", pick);
      bar.addEventListener("keydown", (ev) => {
        if (ev.key === "Enter" || ev.key === " ") {
          ev.preventDefault();
          pick();
        }
      });
      chart.append(bar);
    });
    if (limit && limit <= top) {
      const y = plotH - (limit / top) * plotH;
      chart.append(svg("line", { x1: 0, x2: width, y1: y.toFixed(1), y2: y.toFixed(1), class: "sc-limit" }));
    }
    const last = steps[steps.length - 1];
    const caption = h("div", { class: "sc-caption small muted" },
      h("span", null, `Input tokens per model step · ${steps.length} step${steps.length === 1 ? "" : "s"} · last ${num(last.inputTokens)} · max ${num(max)}`),
      limit ? h("span", { class: limit <= top ? "sc-limit-text" : "sc-limit-text far" }, ` · limit ${num(limit)}${limit <= top ? " (dashed line)" : ` (${max / limit < 0.001 ? "< 0.1" : ((max / limit) * 100).toFixed(1)} % used at most)`}`) : null,
      agents.length > 1 ? h("span", { class: "sc-agents" }, ...agents.map((a) => h("span", { class: "sc-agent" }, h("i", { style: `background:${color(a)}` }), ` ${a || "(no agent)"}`))) : null);
    this.el.replaceChildren(caption, chart);
  }

  /** Mark the selected call's bar (a selection changes nothing else). */
  markSelected() {
    for (const bar of this.el.querySelectorAll(".sc-bar")) {
      const key = `${bar.dataset.nodeId}\u0000${bar.dataset.instanceId}`;
      bar.classList.toggle("selected", store.selectedExec === key || (!store.selectedExec && store.selectedNode === bar.dataset.nodeId));
    }
  }
}
