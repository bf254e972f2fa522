// Node detail: the node's executions, and for the chosen one its input and output as collapsible
// JSON, streamed tokens as they arrive, usage, ran and held time, and the breakpoint toggles.

import { labelEditor } from "./labels.js";
import { api } from "./api.js";
import { chatView } from "./chat.js";
import { execContextSig, xraySlot } from "./context.js";
import { effectText, simulatedFromText } from "./effects.js";
import { h } from "./frame.js";
import { hiddenBy, ms, clock, REDACTED } from "./format.js";
import { hiddenChip, jsonView } from "./json.js";
import { attemptsSection, editSection, replayFacts } from "./attempts.js";
import { forkBox, forkedHere, selectorOf } from "./fork.js";
import { saveTestBox } from "./savetest.js";
import { recordedUsage, savedCost, savedUsage } from "./replayinfo.js";
import { observeNote, observeOnly } from "./observe.js";
import { store, isBreakpoint } from "./state.js";
import { callCost, costText } from "./usage.js";
import { playgroundHash } from "./pages.js";
import { loadValues, valuesMissing } from "./values.js";

const LIST_LIMIT = 100;

export class DetailView {
  constructor(el, { onToggleBreakpoint, onSelectExec, onClose }) {
    this.el = el;
    this.onToggleBreakpoint = onToggleBreakpoint;
    this.onSelectExec = onSelectExec;
    this.onClose = onClose;
    this.sig = "";
    this.execSig = "";
    this.showAll = false;
  }

  /** Full redraw of the panel for the selected node. */
  render() {
    const m = store.model;
    const n = m && store.selectedNode ? m.nodes.get(store.selectedNode) : null;
    if (!n) {
      this.el.hidden = true;
      this.el.replaceChildren();
      this.sig = "";
      return;
    }
    this.el.hidden = false;
    const x = this.currentExec(m, n);
    this.sig = this.signature(n, x);
    this.execSig = x ? execSignature(x) : "";
    const head = h("div", { class: "d-head" },
      h("div", null, h("h2", null, n.name), h("span", { class: "muted" }, `${n.kind} · ${n.nodeId}`)),
      h("button", { class: "ghost", type: "button", "aria-label": "Close node detail", onclick: () => this.onClose() }, "×"));
    const status = h("p", { class: `d-status state-${n.status}` },
      h("span", { class: "pill" }, n.ungated ? `${n.status} · ungated` : n.status),
      ` ${n.executions} execution${n.executions === 1 ? "" : "s"}`, nodeCost(n),
      n.agents && n.agents.length ? h("span", { class: "d-agents" }, ` · ${n.agents.length > 1 ? "agents" : "agent"} ${n.agents.join(", ")}`) : null);
    this.el.replaceChildren(head, status, labelEditor(store.runId, n.nodeId), this.breakpoints(n), this.execList(n, x),
      this.execBox = h("div", { class: "d-exec" }));
    this.renderExec(x);
    this.loadProposals(m.id, n.nodeId);
    performance.mark("graphmind:detail");
  }

  /** The answers an assistant proposed at this node's gates, and who decided them (docs/mcp.md). */
  async loadProposals(runId, nodeId) {
    if (!runId) return;
    const res = await api.proposals(runId);
    if (!res.ok || store.model?.id !== runId || store.selectedNode !== nodeId) return;
    const mine = (res.body.proposals || []).filter((p) => p.nodeId === nodeId).reverse();
    this.el.querySelector(".d-proposals")?.remove();
    if (!mine.length) return;
    const who = (p) => (p.decidedBy === "auto" ? "auto (--allow-control=auto)" : p.decidedBy === "viewer" ? "the viewer" : p.decidedBy || "");
    this.el.append(h("section", { class: "d-proposals" }, h("h3", null, "Proposed answers"),
      h("ul", null, ...mine.map((p) => h("li", { dataset: { proposal: p.id } },
        h("strong", null, p.action), ` · ${p.status}${p.decidedBy ? ` by ${who(p)}` : ""} · ${clock(p.decidedAt || p.createdAt)}`,
        p.why ? h("div", { class: "muted small" }, p.why) : null)))));
  }

  /** "Save as test" (savetest.js): its box opens in the fork's slot row, below the buttons. */
  saveTestButton(x) {
    const btn = h("button", { type: "button", class: "d-savetest-button", "aria-expanded": "false",
      title: "Write a pytest file and a cassette that replay this run and check its answer" }, "Save as test");
    btn.addEventListener("click", () => {
      const open = btn.getAttribute("aria-expanded") !== "true";
      btn.setAttribute("aria-expanded", String(open));
      const holder = btn.closest(".d-exec");
      holder.querySelector(".savetest-box")?.remove();
      if (open) holder.querySelector(".d-fork").after(saveTestBox({ runId: store.runId, selector: selectorOf(store.model, x) }));
    });
    return btn;
  }

  /** Cheap per-frame update: only the streamed text when nothing else changed. */
  update(dirty) {
    const m = store.model;
    const n = m && store.selectedNode ? m.nodes.get(store.selectedNode) : null;
    if (!n) {
      if (!this.el.hidden) this.render();
      return;
    }
    const x = this.currentExec(m, n);
    if (this.signature(n, x) !== this.sig) {
      this.render();
      return;
    }
    if (x && dirty && dirty.has(x.key)) {
      if (execSignature(x) !== this.execSig) {
        this.execSig = execSignature(x);
        this.renderExec(x);
      } else {
        this.updateTokens(x);
      }
    }
  }

  currentExec(m, n) {
    const x = store.selectedExec ? m.execs.get(store.selectedExec) : null;
    return x && x.nodeId === n.nodeId ? x : n.latest || n.execs[n.execs.length - 1] || null;
  }

  signature(n, x) {
    return [n.nodeId, n.executions, n.status, n.ungated, x ? x.key : "", store.runs.get(store.runId)?.clientId,
      JSON.stringify(store.debug.breakpoints.filter((b) => b.nodeId === n.nodeId)), this.showAll].join("|");
  }

  breakpoints(n) {
    const observed = observeOnly(store.runId, n);
    if (observed) return observeNote(observed);
    const box = h("fieldset", { class: "d-bps" }, h("legend", null, "Breakpoints"));
    for (const [gate, label] of [["before", "Break before"], ["after", "Break after"], ["error", "Break on error"]]) {
      const input = h("input", { type: "checkbox", checked: isBreakpoint(n.nodeId, gate) });
      input.addEventListener("change", () => this.onToggleBreakpoint(n.nodeId, gate, input.checked));
      box.append(h("label", null, input, ` ${label}`));
    }
    return box;
  }

  execList(n, current) {
    const wrap = h("div", { class: "d-execs" });
    if (!n.execs.length) {
      wrap.append(h("p", { class: "muted" }, n.hinted ? "Offered to the model; has not run yet." : "No executions loaded yet."));
      return wrap;
    }
    const list = h("ol", { class: "d-exec-list", "aria-label": "Executions" });
    const all = n.execs;
    const shown = this.showAll ? all : all.slice(-LIST_LIMIT);
    const offset = all.length - shown.length;
    for (let i = shown.length - 1; i >= 0; i--) {
      const x = shown[i];
      const ran = x.durationMs !== null ? ms(x.durationMs - (x.heldMs || 0)) : "running";
      const li = h("li", null, h("button", { type: "button", class: `d-exec-item state-${x.status}${x === current ? " selected" : ""}`,
        "aria-current": x === current ? "true" : null, onclick: () => this.onSelectExec(x.key) },
        h("span", { class: "tl-state" }, x.status), ` #${offset + i + 1} · ${clock(x.startTs)} · ${ran}`,
        // A node several agents called (a shared tool): which agent made each call.
        n.agents && n.agents.length > 1 && x.agent ? h("span", { class: "d-exec-agent" }, ` · by ${x.agent}`) : "",
        forkedHere(store.model, x) ? " · forked" : x.simulated ? " · simulated" : x.replayed ? " · replayed" : "", x.edited ? " · edited" : "", x.attempts.length ? ` · ${x.attempts.length + 1} attempts` : ""));
      list.append(li);
    }
    wrap.append(list);
    if (all.length > shown.length) {
      wrap.append(h("button", { type: "button", class: "link", onclick: () => { this.showAll = true; this.render(); } },
        `Show all ${all.length}`));
    }
    return wrap;
  }

  renderExec(x) {
    const box = this.execBox;
    if (!box) return;
    box.replaceChildren();
    this.shownKey = x ? x.key : null;
    if (!x) return;
    // A huge run's execution: its input and output come from the hub, then it is drawn again.
    const missing = valuesMissing(x);
    if (missing) {
      loadValues(store.runId, x).then((ok) => {
        if (this.shownKey !== x.key) return;
        if (ok && !valuesMissing(x)) {
          this.renderExec(x);
          performance.mark("graphmind:detail-values");
        } else if (!ok) {
          const note = this.execBox && this.execBox.querySelector(".d-values-loading");
          if (note) note.textContent = "Could not read its input and output from the hub (pruned or deleted?).";
        }
      });
    }
    const ran = x.durationMs !== null ? x.durationMs - (x.heldMs || 0) : null;
    const facts = h("dl", { class: "facts" },
      h("dt", null, "Status"), h("dd", { class: `state-${x.status} d-status-text` }, x.status + valueSource(store.model, x)),
      h("dt", null, "Started"), h("dd", null, clock(x.startTs)),
      h("dt", null, "Ran"), h("dd", { class: "d-ran" }, ran === null ? (x.gate ? "–" : "still running") : ms(ran)),
      h("dt", null, "Held"), h("dd", { class: "d-held" }, x.gate && x.gate.since
        ? `held at the ${x.gate.gate} gate since ${clock(x.gate.since)}` : ms(x.heldMs || 0)),
      h("dt", null, "Instance"), h("dd", { class: "mono" }, x.instanceId));
    if (x.usage) {
      const u = x.usage;
      facts.append(h("dt", null, "Tokens"), h("dd", { class: "d-usage" },
        `${u.inputTokens ?? "–"} in · ${u.outputTokens ?? "–"} out · ${u.totalTokens ?? "–"} total`));
      const cost = callCost(u, store.runs.get(store.runId)?.usage, x.attrs?.model);
      if (cost) {
        facts.append(h("dt", null, "Cost"), h("dd", { class: "d-cost",
          title: cost.how === "≈" ? "This call's tokens at the run's rate for its model (the hub's price table, docs/api.md)" : "Reported by the framework" }, costText(cost)));
      }
    }
    if (x.attrs && x.attrs.model) facts.append(h("dt", null, "Model"), h("dd", null, String(x.attrs.model)));
    if (x.effect) facts.append(h("dt", null, "Effect"), h("dd", { class: `d-effect effect-${x.effect.class}` }, effectText(x.effect)));
    if (x.cutShort) facts.append(h("dt", null, "Stream"), h("dd", null, "cut short by the app"));
    if (x.cancelled) facts.append(h("dt", null, "Ended"), h("dd", { class: "d-cancelled" }, "cancelled by the app"));
    const m = store.model;
    facts.append(...replayFacts(x, savedUsage(m, x), (tokens) => savedCost(m, tokens)));
    if (x.replayed && !savedUsage(m, x) && m && m.replayOf && store.runs.has(m.replayOf) && x.kind === "llm") {
      // What the recorded call used: shown once the recorded run's events are in.
      recordedUsage(m.replayOf).then(() => this.shownKey === x.key && savedUsage(store.model, x) && this.renderExec(x));
    }
    box.append(facts);
    // What filled the window of this model call, and what changed since the agent's last step:
    // right under the facts, so it is in view when the node opens.
    if (x.kind === "llm" && (x.input !== undefined || x.lazy) && !observeOnly(store.runId)) box.append(xraySlot(store.runId, x.nodeId, x.instanceId, execContextSig(x)));
    // An OTLP run's calls ended in another process before the spans arrived: nothing can replay them.
    const forkable = x.kind !== "agent" && x.endTs !== null && !x.gate && !observeOnly(store.runId);
    if (forkable) {
      const slot = h("div", { class: "d-fork" });
      const btn = h("button", { type: "button", class: "d-fork-button", "aria-expanded": "false",
        title: "Replay this run up to here, give this call another output or input, run live from it (f)" }, "Fork from here");
      btn.addEventListener("click", () => {
        const open = btn.getAttribute("aria-expanded") !== "true";
        btn.setAttribute("aria-expanded", String(open));
        slot.replaceChildren(...(open ? [forkBox({ runId: store.runId, run: store.runs.get(store.runId), model: store.model, x })] : []));
        if (open) slot.querySelector("textarea").focus();
      });
      box.append(h("div", { class: "gate-actions" }, btn, this.saveTestButton(x)), slot);
    }
    if (x.kind === "llm" && x.endTs !== null) {
      // The stored request sent again on its own by the hub (playground.js); the run is not touched.
      const pg = h("div", { class: "gate-actions" }, h("a", { class: "button pg-open", href: playgroundHash(store.runId, x.instanceId),
        title: "Edit this call's request and send it again through its provider, with the hub's credentials" }, "Open in playground"));
      box.append(pg);
      // Without the provider's key in the hub's environment, the button says which variable to set.
      api.playground(store.runId, x.instanceId).then((res) => {
        if (this.shownKey === x.key && res.ok && res.body.missing) pg.append(h("span", { class: "pg-open-missing muted small" }, res.body.missing));
      });
    }
    if (x.resumes.length) {
      box.append(h("p", { class: "muted" }, "Gates: ", x.resumes.map((r) => r.by === "cancelled" ? `${r.gate} → cancelled by the app` : `${r.gate} → ${r.action} (${r.by || "hub"})`).join(", ")));
    }
    if (x.redaction && x.redaction.failed) box.append(h("p", null, h("span", { class: "chip hidden-chip" }, "hidden: the app could not read this value safely")));
    if (missing) {
      box.append(h("p", { class: "muted d-values-loading" }, "Loading its input and output…"));
      return;
    }
    // A model node reads as the conversation (chat.js); its raw JSON is one click away there.
    const chat = x.kind === "llm" ? chatView(x.input, x.output, { hiddenInput: hiddenBy(x.kind, "input"), hiddenOutput: hiddenBy(x.kind, "output") }) : null;
    if (chat) box.append(h("h3", null, "Conversation"), chat);
    else box.append(h("h3", null, x.edited ? "Input (edited)" : "Input"), jsonView(x.input, hiddenBy(x.kind, "input"), 1));
    const edited = editSection(x);
    if (edited) box.append(edited);
    box.append(this.tokenBox = h("div", { class: "d-tokens" }));
    this.updateTokens(x);
    if (x.error) {
      // (Element.append writes a null child as the text "null": only append what exists.)
      box.append(h("h3", null, "Error"), h("pre", { class: "d-error" }, `${x.error.name || "Error"}: ${x.error.message || ""}`));
      if (x.error.stack) box.append(h("details", null, h("summary", null, "Stack"), h("pre", { class: "d-stack" }, x.error.stack)));
    }
    const attempts = attemptsSection(x);
    if (attempts) box.append(attempts);
    if (!chat && (x.output !== undefined || x.status === "ok" || x.status === "injected")) {
      box.append(h("h3", null, "Output"), jsonView(x.output, hiddenBy(x.kind, "output"), 1));
    }
  }

  /** The `f` key: open the fork box of the shown execution (when it can be forked). */
  openFork() {
    const btn = this.el.querySelector(".d-fork-button");
    if (btn && btn.getAttribute("aria-expanded") !== "true") btn.click();
  }

  updateTokens(x) {
    const box = this.tokenBox;
    if (!box) return;
    const parts = [];
    for (const [slot, label, which] of [["reasoning", "Reasoning", "output"], ["text", "Streamed text", "output"], ["toolArgs", "Tool arguments", "toolArgs"]]) {
      const text = x.tokens[slot];
      const hidden = x.hiddenChars[slot];
      if (!text && !hidden) continue;
      const pre = h("pre", { class: `d-stream stream-${slot}`, "aria-live": x.endTs ? null : "polite" }, text);
      parts.push(h("h3", null, label), pre);
      if (hidden) parts.push(h("p", null, hiddenChip(hiddenBy(x.kind, which)), h("span", { class: "muted" }, ` ${hidden} characters`)));
    }
    if (!parts.length && x.status === "running" && x.kind === "llm") parts.push(h("p", { class: "muted" }, "waiting for tokens…"));
    box.replaceChildren(...parts);
  }
}

function execSignature(x) {
  return [x.status, x.endTs, x.gate ? x.gate.gateId : "", x.resumes.length, x.input === REDACTED, x.usage ? 1 : 0,
    x.attempts.length, x.edited, x.replayed, x.simulated].join("|");
}

/** Where an execution's value came from, after its status: the fork command, the recording, the debugger. */
function valueSource(m, x) {
  const forked = forkedHere(m, x);
  if (forked === "output") return " (forked: its output came from the fork command)";
  if (forked === "input") return " (forked: it ran live with the fork command's input)";
  if (x.simulated) return ` (simulated: ${simulatedFromText(x.simulatedFrom)}; the call did not run)`;
  if (x.replayed) return " (value from the recording)";
  return x.injected ? " (value from the debugger)" : "";
}

/** " · 3 calls cost ≈ $0.00042": what the node's model calls cost, summed (see usage.js callCost). */
function nodeCost(n) {
  const runUsage = store.runs.get(store.runId)?.usage;
  // Summed once per node and state of the run: a model step of a million-event run has 170,000
  // executions, and a click on it must answer in < 100 ms.
  const key = `${n.execs.length}|${store.model?.eventCount}|${JSON.stringify(runUsage ?? null)}`;
  if (n.costKey !== key) {
    n.costKey = key;
    n.cost = sumCost(n, runUsage);
  }
  return n.cost ? h("span", { class: "d-node-cost" }, ` · cost ${costText(n.cost)}`) : null;
}

function sumCost(n, runUsage) {
  let usd = 0;
  let approx = false;
  let any = false;
  for (const x of n.execs) {
    const c = x.usage ? callCost(x.usage, runUsage, x.attrs?.model) : null;
    if (!c) continue;
    any = true;
    usd += c.usd;
    approx = approx || c.how === "≈";
  }
  return any ? { usd, how: approx ? "≈" : "reported" } : null;
}
