// The pause card: every held gate, oldest first, with Continue, Retry (where the gate takes it),
// Inject and Abort. Inject sends only valid JSON that no longer holds "__REDACTED__"; the box starts
// with the shape the gate expects back (inject.js), and says what the value becomes.

import { api, errorText } from "./api.js";
import { chatView } from "./chat.js";
import { h } from "./frame.js";
import { injectMeaning, injectStart } from "./inject.js";
import { containsRedacted, gateText, hiddenBy, reasonText, ago, REDACTED } from "./format.js";
import { jsonView } from "./json.js";
import { store, removeGate } from "./state.js";

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
      const run = store.runs.get(g.runId);
      card.querySelector(".gate-run").textContent = run ? ` · ${run.name || run.id}` : "";
    });
  }

  card(g) {
    const value = g.gate === "error" ? null : g.gate === "after" ? g.output : g.input;
    const valueKind = g.gate === "after" ? "output" : "input";
    const msg = h("p", { class: "gate-msg", role: "alert" });
    const card = h("article", { class: `gate-card reason-${g.reason}`, dataset: { gateId: g.gateId },
      "aria-label": `Held gate: ${g.name || g.nodeId}` });
    const title = h("header", { class: "gate-head" },
      h("button", { type: "button", class: "link gate-node", onclick: () => this.onOpenNode(g.runId, g.nodeId),
        title: "Show this node" }, g.name || g.nodeId),
      h("span", { class: "muted" }, ` ${g.kind || ""} · ${gateText(g.gate)}`),
      h("span", { class: "muted gate-run" }));
    const reason = h("p", { class: "gate-reason" }, reasonText(g));
    const body = h("div", { class: "gate-body" });
    if (g.gate === "error" && g.error) {
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
    const send = async (action, v) => {
      setBusy(true);
      msg.textContent = "";
      const res = await api.resolveGate(g.gateId, action, v);
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
    const mk = (action, label, cls) => h("button", { type: "button", class: cls, dataset: { action },
      onclick: () => (action === "inject" ? toggleInject() : send(action)) }, label);
    buttons.append(mk("continue", "Continue", "primary"));
    if (actions.includes("retry")) buttons.append(mk("retry", "Retry", ""));
    if (actions.includes("inject")) buttons.append(mk("inject", "Inject", ""));
    buttons.append(mk("abort", "Abort", "danger"));

    const injectId = `inject-${cssId(g.gateId)}`;
    const textarea = h("textarea", { id: injectId, rows: "5", spellcheck: "false", class: "mono" });
    const injectBox = h("div", { class: "inject", hidden: true },
      h("label", { for: injectId }, "Inject value (JSON)"), textarea,
      h("p", { class: "muted small inject-meaning" }, injectMeaning(g)),
      h("div", { class: "gate-actions" },
        h("button", { type: "button", class: "primary", onclick: () => trySend() }, "Send"),
        h("button", { type: "button", class: "ghost", onclick: () => { injectBox.hidden = true; msg.textContent = ""; } }, "Cancel")));
    textarea.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) trySend();
    });
    let started = false;
    const toggleInject = async () => {
      injectBox.hidden = !injectBox.hidden;
      if (injectBox.hidden) return;
      textarea.focus();
      if (started) return;
      started = true;
      card.dataset.injectReady = "false";
      const start = await injectStart(g);
      // The person may have typed while the node's last output was being looked up.
      if (!textarea.value) textarea.value = prefill(start);
      card.dataset.injectReady = "true";
    };
    const trySend = () => {
      let parsed;
      try {
        parsed = JSON.parse(textarea.value);
      } catch (err) {
        msg.textContent = `Not sent: that is not valid JSON (${err.message}).`;
        return;
      }
      if (containsRedacted(parsed)) {
        msg.textContent = `Not sent: the value still contains "${REDACTED}" (a value the app never recorded); replace it with a real value.`;
        return;
      }
      send("inject", parsed);
    };
    const setBusy = (busy) => {
      for (const b of card.querySelectorAll("button")) b.disabled = busy;
      card.classList.toggle("busy", busy);
    };
    card.append(title, reason, body, buttons, injectBox, msg,
      h("p", { class: "muted small gate-age", dataset: { since: String(g.heldSince ?? "") } }, `held ${ago(g.heldSince)}`));
    card.inject = toggleInject;
    card.send = send;
    return card;
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

function prefill(value) {
  try {
    return JSON.stringify(value === undefined ? null : value, null, 2);
  } catch {
    return "null";
  }
}

function cssId(s) {
  return String(s).replace(/[^a-zA-Z0-9_-]/g, "_");
}
