// Debug controls: step mode, pause-on-error, Pause, and the breakpoint set. They change the hub's
// debug state (PUT /api/debug), so every attached app sees them; the page redraws from the
// `debug` frame the hub sends back, never from its own guess.

import { api, errorText } from "./api.js";
import { h } from "./frame.js";
import { store } from "./state.js";

const KINDS = ["tool", "llm", "chain", "retriever", "agent", "handoff", "custom"];

export class DebugControls {
  constructor(el, { onDebug, onPause }) {
    this.el = el;
    this.onDebug = onDebug;
    this.onPause = onPause;
    this.step = h("button", { type: "button", class: "toggle", "aria-pressed": "false",
      title: "Hold at every before and after gate (s)", onclick: () => this.setMode(store.debug.mode === "step" ? "run" : "step") },
    "Step mode");
    this.poe = h("select", { id: "pause-on-error" });
    for (const [v, label] of [["on", "every node"], ["off", "off"], ...KINDS.map((k) => [k, `${k} only`])]) {
      this.poe.append(h("option", { value: v }, label));
    }
    this.poe.addEventListener("change", () => this.put({ pauseOnError: this.poe.value }));
    // Every handoff's before gate holds (docs/protocol.md, "Agents"): change what is handed over.
    // A checkbox, not a button: "Pause" names one button only (scripts and screen readers).
    this.poh = h("input", { type: "checkbox", id: "pause-on-handoff" });
    this.poh.addEventListener("change", () => this.put({ pauseOnHandoff: this.poh.checked ? "on" : "off" }));
    // Safe mode (docs/effects.md): every attached app holds or simulates its write calls, an app
    // started later too; the hub keeps it across restarts. It can turn safety on, never off: an
    // app's own GRAPHMIND_SAFE still applies under "off".
    this.safe = h("select", { id: "safe-mode", title: "Safe mode: what every attached app does with a write call" });
    for (const [v, label] of [["off", "off"], ["hold", "hold writes"], ["simulate", "simulate writes"]]) {
      this.safe.append(h("option", { value: v }, label));
    }
    this.safe.addEventListener("change", () => this.put({ safe: this.safe.value }));
    this.safeLabel = h("label", { class: "safe-label", for: "safe-mode" }, "Safe mode");
    this.pauseBtn = h("button", { type: "button", class: "toggle", "aria-pressed": "false",
      onclick: () => this.pause() }, "Pause");
    this.bpInfo = h("span", { class: "bp-info" });
    // "Clear" beside "N breakpoints" (its name says the rest): at 1280 px the whole bar stays one row.
    this.clearBtn = h("button", { type: "button", class: "ghost", "aria-label": "Clear breakpoints", title: "Clear breakpoints",
      onclick: () => this.put({ breakpoints: [] }) }, "Clear");
    this.msg = h("span", { class: "debug-msg", role: "status" });
    el.append(this.pauseBtn, this.step,
      h("label", { class: "poe", for: "pause-on-error" }, "Pause on error"), this.poe,
      h("label", { class: "poh", title: "Hold every handoff between agents at its before gate" }, this.poh, " Pause on handoff"),
      this.safeLabel, this.safe,
      this.bpInfo, this.clearBtn, this.msg);
  }

  render() {
    // Pause is a toggle: armed until a gate takes it (in any app, one attaching later included)
    // or a second click takes it back; the hub says which (its `pause` frame).
    const armed = store.pause.any;
    this.pauseBtn.textContent = armed ? "Pause: armed" : "Pause";
    this.pauseBtn.setAttribute("aria-pressed", armed ? "true" : "false");
    this.pauseBtn.classList.toggle("on", armed);
    this.pauseBtn.title = armed
      ? "Armed: the next gate reached in any run holds, also in an app started later. Click to disarm (p)"
      : "Hold the next gate reached, in any run (p)";
    const d = store.debug;
    this.step.setAttribute("aria-pressed", d.mode === "step" ? "true" : "false");
    this.step.classList.toggle("on", d.mode === "step");
    const v = String(d.pauseOnError ?? "on");
    if (![...this.poe.options].some((o) => o.value === v)) this.poe.append(h("option", { value: v }, `${v} only`));
    this.poe.value = v;
    this.poh.checked = d.pauseOnHandoff === "on";
    const safe = ["off", "hold", "simulate"].includes(d.safe) ? d.safe : "off";
    this.safe.value = safe;
    this.safe.classList.toggle("on", safe !== "off");
    this.safeLabel.classList.toggle("on", safe !== "off");
    const n = d.breakpoints.length;
    this.bpInfo.textContent = n ? `${n} breakpoint${n === 1 ? "" : "s"}` : "";
    this.clearBtn.hidden = n === 0;
  }

  async put(patch) {
    this.msg.textContent = "";
    const res = await api.putDebug(patch);
    if (!res.ok) {
      this.msg.textContent = errorText(res);
      return false;
    }
    // The hub answers with the new state; the `debug` frame carries it too.
    if (res.body && Array.isArray(res.body.breakpoints)) this.onDebug(res.body);
    if (res.body && Array.isArray(res.body.pending) && res.body.pending.length) {
      this.msg.textContent = `not yet confirmed by ${res.body.pending.length} app(s)`;
    }
    return true;
  }

  setMode(mode) {
    return this.put({ mode });
  }

  toggleBreakpoint(nodeId, gate, on) {
    const rest = store.debug.breakpoints.filter((b) => !(b.nodeId === nodeId && b.gate === gate));
    return this.put({ breakpoints: on ? [...rest, { nodeId, gate }] : rest });
  }

  /** Arms Pause (in any run, or in `runId`), or takes it back when it is armed. */
  async pause(runId) {
    this.msg.textContent = "";
    const armed = runId ? store.pause.runs.includes(runId) : store.pause.any;
    const res = await (armed ? api.unpause(runId) : api.pause(runId));
    if (!res.ok) {
      this.msg.textContent = errorText(res);
      return;
    }
    if (res.body?.pause) this.onPause(res.body.pause);
    const where = runId ? "in this run" : "in any run";
    this.msg.textContent = armed ? "Pause disarmed: gates run on" : `armed: the next gate reached ${where} holds`;
  }
}
