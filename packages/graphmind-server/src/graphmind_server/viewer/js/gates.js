// The pause card: every held gate, oldest first, with Continue, Retry (where the gate takes it),
// Inject, Edit input (before gates) or Retry with… (after and error gates), Reload code and retry
// (gated callables), Use recorded (a replay divergence) and Abort. A JSON answer is sent only when
// it is valid and no longer holds "__REDACTED__" (answerbox.js); the boxes start with the shape the
// gate expects back (inject.js). A gate held again after a refused answer says why, and a retried
// call shows its attempt number.

import { api, errorText } from "./api.js";
import { chatView } from "./chat.js";
import { xraySlot, xrayView } from "./context.js";
import { h } from "./frame.js";
import { answerBox } from "./answerbox.js";
import { divergenceBody } from "./divergence.js";
import { effectLines } from "./effects.js";
import { injectMeaning, injectStart, inputStart } from "./inject.js";
import { gateText, hiddenBy, reasonText, ago } from "./format.js";
import { jsonView } from "./json.js";
import { proposalList } from "./proposals.js";
import { runFacts } from "./runlabel.js";
import { expectedBox } from "./savetest.js";
import { store, removeGate } from "./state.js";
import { surgeryView } from "./surgery.js";

export class GatesView {
  constructor(el, { onOpenNode }) {
    this.el = el;
    this.onOpenNode = onOpenNode;
    /** gateId -> card element, kept across renders so an open inject box survives */
    this.cards = new Map();
    this.el.append(h("h2", { class: "gates-title" }, "Held"));
    this.list = h("div", { class: "gate-list" });
    this.el.append(this.list);
  }

  render() {
    const gates = store.gates;
    this.el.hidden = gates.length === 0;
    this.el.querySelector(".gates-title").textContent = gates.length === 1 ? "1 gate held" : `${gates.length} gates held`;
    const keep = new Set(gates.map((g) => g.gateId));
    for (const [id, card] of this.cards) {
      if (!keep.has(id)) {
        card.remove();
        this.cards.delete(id);
      }
    }
    gates.forEach((g, i) => {
      let card = this.cards.get(g.gateId);
      if (!card) {
        card = this.card(g);
        this.cards.set(g.gateId, card);
      }
      if (this.list.children[i] !== card) this.list.insertBefore(card, this.list.children[i] || null);
      // The run may have reached the runs list after the card was made.
      const run = store.runs.get(g.runId) || { id: g.runId };
      card.querySelector(".gate-run-name").textContent = run.name || run.id || "";
      card.querySelector(".gate-run-facts").textContent = runFacts(run);
      // A gate of another run than the one on screen: one click shows its graph.
      card.querySelector(".gate-open-run").hidden = !g.runId || g.runId === store.runId;
      card.proposals.show(g.proposals); // an assistant's proposed answers (proposals.js)
    });
  }

  card(g) {
    const value = g.gate === "error" ? null : g.gate === "after" ? g.output : g.input;
    const valueKind = g.gate === "after" ? "output" : "input";
    const divergence = g.reason === "divergence";
    const msg = h("p", { class: "gate-msg", role: "alert" });
    const card = h("article", { class: `gate-card reason-${g.reason}`, dataset: { gateId: g.gateId },
      "aria-label": `Held gate: ${g.name || g.nodeId}` });
    const attempt = typeof g.attempt === "number" && g.attempt > 1
      ? h("span", { class: "chip gate-attempt", title: "This call has been tried before: the node detail lists every attempt" }, `attempt ${g.attempt}`)
      : null;
    const title = h("header", { class: "gate-head" },
      h("button", { type: "button", class: "link gate-node", onclick: () => this.onOpenNode(g.runId, g.nodeId),
        title: "Show this node" }, g.name || g.nodeId),
      h("span", { class: "muted" }, ` ${g.kind || ""} · ${gateText(g.gate)}`),
      attempt ? " " : null, attempt,
      h("div", { class: "gate-run muted small" }, "in run ", h("strong", { class: "gate-run-name" }), " ",
        h("span", { class: "gate-run-facts" }), " ",
        h("button", { type: "button", class: "link gate-open-run", hidden: true, onclick: () => this.onOpenNode(g.runId, g.nodeId),
          title: "Open the run this gate is held in: its graph, with this node selected (key g)" }, "Show its run")));
    const reason = h("p", { class: "gate-reason" }, reasonText(g));
    // Held again because the last answer could not be used (issue 30): say why, on the card.
    const refused = typeof g.refused === "string" && g.refused
      ? h("p", { class: "gate-refused", role: "alert" }, h("strong", null, "Your last answer was refused: "), g.refused)
      : null;
    const body = h("div", { class: "gate-body" });
    if (divergence) {
      body.append(divergenceBody(g));
    } else if (g.gate === "error" && g.error) {
      body.append(h("pre", { class: "d-error" }, `${g.error.name || "Error"}: ${g.error.message || ""}`));
    } else {
      // At a model gate the card shows the conversation (chat.js), the raw JSON one click away.
      const chat = g.kind === "llm" ? chatView(g.input, g.gate === "after" ? g.output : undefined,
        { hiddenInput: hiddenBy(g.kind, "input"), hiddenOutput: hiddenBy(g.kind, "output") }) : null;
      body.append(h("div", { class: "muted small" }, chat ? "Conversation" : valueKind === "output" ? "Output" : "Input"),
        chat || jsonView(value, hiddenBy(g.kind, valueKind), 1));
    }
    const actions = Array.isArray(g.actions) ? g.actions : ["continue", "inject", "abort"];
    const buttons = h("div", { class: "gate-actions" });
    const send = async (action, extra) => {
      setBusy(true);
      msg.textContent = "";
      const res = await api.resolveGate(g.gateId, action, extra);
      if (res.ok) {
        removeGate(g.gateId);
        return;
      }
      setBusy(false);
      if (res.status === 404) {
        msg.textContent = "This gate is no longer held (answered elsewhere, or its app went away).";
        setTimeout(() => removeGate(g.gateId), 1500);
      } else {
        msg.textContent = errorText(res);
      }
    };
    const say = (text) => (msg.textContent = text);
    const boxes = [];
    const toggle = (box) => {
      for (const b of boxes) if (b !== box) b.close();
      if (box.isOpen()) box.close();
      else box.open();
    };
    const mk = (action, label, cls, onclick, title) => h("button", { type: "button", class: cls, dataset: { action }, title,
      onclick }, label);

    // Inject: the value the call returns instead.
    const inject = actions.includes("inject") ? answerBox({ id: `inject-${cssId(g.gateId)}`, kind: "inject",
      label: "Inject value (JSON)", meaning: injectMeaning(g), start: () => injectStart(g), onMessage: say,
      onReady: () => (card.dataset.injectReady = "true"), onSend: (v) => send("inject", { value: v }) }) : null;
    // Edit input (a before gate: the real call runs with it) or Retry with… (after and error
    // gates: the body runs again with it). Offered only by an app that says whether it can
    // (`editable`): an older app does not take an edited input.
    const editAction = g.gate === "before" ? "continue" : "retry";
    const editLabel = g.gate === "before" ? "Edit input" : "Retry with…";
    const canEdit = "editable" in g && actions.includes(editAction);
    const edit = canEdit && g.editable === true ? answerBox({ id: `edit-${cssId(g.gateId)}`, kind: "edit",
      label: g.gate === "before" ? "Edited input (JSON)" : "Input for the retry (JSON)",
      meaning: g.gate === "before" ? "The real call runs with this input; the node records the original and the edit."
        : "The call runs again with this input; this attempt's error stays in the node detail.",
      start: () => inputStart(g), original: g.input, reloadable: g.reloadable === true, onMessage: say,
      onReady: () => (card.dataset.editReady = "true"),
      onSend: (v, o) => send(editAction, { input: v, reload: o.reload }) }) : null;
    // Simulate like this from now on (an effect hold): the call does not run, and this tool
    // returns the value in this app from now on (docs/effects.md).
    const simulates = actions.includes("simulate");
    const stub = simulates ? answerBox({ id: `stub-${cssId(g.gateId)}`, kind: "simulate",
      label: "Simulated value (JSON)", meaning: `${g.name || "This tool"} does not run: it returns this value now and on every later call in this app.`,
      start: () => injectStart(g), onMessage: say, onReady: () => (card.dataset.stubReady = "true"),
      onSend: (v) => send("simulate", { value: v, remember: true }) }) : null;
    if (inject) boxes.push(inject);
    if (edit) boxes.push(edit);
    if (stub) boxes.push(stub);

    const effect = g.reason === "effect";
    buttons.append(mk("continue", divergence ? "Continue live" : effect ? "Run it for real" : "Continue", "primary", () => send("continue"),
      divergence ? "Run this call for real, and everything after it" : effect ? "Run the call: its side effect happens" : null));
    if (simulates) {
      buttons.append(mk("simulate", "Simulate", "", () => send("simulate"), "Do not run the call: hand back a simulated value"));
    }
    if (actions.includes("recorded")) {
      buttons.append(mk("recorded", "Use recorded", "", () => send("recorded"), "Return the recorded output anyway and keep replaying"));
    }
    if (actions.includes("retry")) buttons.append(mk("retry", "Retry", "", () => send("retry")));
    if (canEdit) {
      const b = mk(`edit-${editAction}`, editLabel, "", () => edit && toggle(edit),
        g.editable === true ? null : `Not editable: ${g.notEditable || "the app cannot rebuild this call from JSON"}`);
      b.disabled = g.editable !== true;
      buttons.append(b);
    }
    if (g.reloadable === true && actions.includes(editAction)) {
      buttons.append(mk(`reload-${editAction}`, g.gate === "before" ? "Reload code and run" : "Reload code and retry", "",
        () => send(editAction, { reload: true }), "Re-import the function's module from its source file, then run the call with the new code"));
    }
    if (inject) buttons.append(mk("inject", "Inject", "", () => toggle(inject)));
    if (stub) buttons.append(mk("simulate-remember", "Simulate like this from now on…", "", () => toggle(stub),
      "Set the value this tool returns instead of running, for every later call in this app"));
    buttons.append(mk("abort", "Abort", "danger", () => send("abort")));
    const notEditable = canEdit && g.editable !== true
      ? h("p", { class: "muted small gate-not-editable" }, `Input not editable: ${g.notEditable || "the app cannot rebuild this call from JSON"}`)
      : null;
    // Why "Reload code" is missing: the hub refused it (no token), or the app has no code of its own to
    // reload for this tool (a model step has none: no line there).
    // The hub's refusal is on every tool's card of a hub without a token (the default): one folded
    // line, the reason and the way out a click away.
    const notReloadable = (g.reloadRefused || g.kind === "tool") && g.reloadable !== true && g.notReloadable && actions.includes(editAction)
      ? g.reloadRefused
        ? h("details", { class: "muted small gate-not-reloadable" }, h("summary", {}, "Reload code: off on a hub without a token"), h("span", {}, `Reload refused: ${g.notReloadable}`))
        : h("p", { class: "muted small gate-not-reloadable" }, `Reload not offered: ${g.notReloadable}`)
      : null;

    const setBusy = (busy) => {
      for (const b of card.querySelectorAll("button")) b.disabled = busy || b.dataset.locked === "true";
      card.classList.toggle("busy", busy);
    };
    for (const b of buttons.querySelectorAll("button")) if (b.disabled) b.dataset.locked = "true";
    const proposed = proposalList(() => removeGate(g.gateId));
    card.proposals = proposed;
    // A model call's window (context.js), above the conversation so the bar and the step diff are
    // in view without scrolling the card; at a before gate it can be cut before it is sent.
    const xray = g.kind === "llm" && !divergence && g.gate !== "error" && g.instanceId ? this.xray(g, canEdit && g.editable === true && editAction === "continue", send, say) : null;
    card.append(title, reason, ...effectLines(g), ...(refused ? [refused] : []), proposed.el, ...(xray ? [xray] : []), body, buttons, ...(notEditable ? [notEditable] : []),
      ...(notReloadable ? [notReloadable] : []), ...boxes.map((b) => b.el), msg,
      ...(typeof g.runId === "string" && g.runId ? [expectedBox(g)] : []),
      h("p", { class: "muted small gate-age", dataset: { since: String(g.heldSince ?? "") } }, `held ${ago(g.heldSince)}`));
    card.inject = () => inject && toggle(inject);
    card.edit = () => edit && toggle(edit);
    card.reload = () => g.reloadable === true && actions.includes(editAction) && send(editAction, { reload: true });
    card.recorded = () => actions.includes("recorded") && send("recorded");
    card.send = send;
    return card;
  }

  /** The X-ray of the held call: with the surgery controls when its input can be edited. */
  xray(g, editable, send, say) {
    // The hub says whether a before gate holds this call now (`held`): only then can it be cut.
    const make = editable ? (b) => (b.held === false ? xrayView(b, { title: "Context" }).el
      : surgeryView(g, b, { send: (input) => send("continue", { input }), say }).el) : null;
    return xraySlot(g.runId, g.nodeId, g.instanceId, `held|${g.gateId}`, { title: "Context", make }, (b) => {
      const n = Array.isArray(b.warnings) ? b.warnings.length : 0;
      const head = this.cards.get(g.gateId)?.querySelector(".gate-head");
      if (n && head) head.append(" ", h("span", { class: "chip cx-badge", title: b.warnings.map((w) => w.message).join("\n") }, `⚠ ${n} context warning${n === 1 ? "" : "s"}`));
    });
  }

  /** Keep "held 12s ago" current (called once a second while gates are held). */
  tick() {
    for (const el of this.el.querySelectorAll(".gate-age")) {
      const since = Number(el.dataset.since);
      if (since) el.textContent = `held ${ago(since)}`;
    }
  }

  /** The oldest held gate not already being answered, and its card (keyboard shortcuts act on
   * it): a second `c` pressed while the first answer is in flight goes to the next gate. */
  oldest() {
    for (const g of store.gates) {
      const card = this.cards.get(g.gateId);
      if (card && !card.classList.contains("busy")) return { gate: g, card };
    }
    return null;
  }
}

function cssId(s) {
  return String(s).replace(/[^a-zA-Z0-9_-]/g, "_");
}
