// Context surgery at a held model call's before gate: per part drop, truncate (keep the first / last
// N tokens) or pin, "trim to fit N tokens" (drops the largest unpinned tool results first), the new
// total before anything is sent, and "Send edited". The hub applies the ops (POST …/context/edit,
// the same counting as the X-ray) and answers the edited input; Send edited hands that input to the
// gate's ordinary edit answer ({"action": "continue", "input": …}), the path the JSON Edit box uses,
// so the node records `edited` and the diff and the adapter's one conversion builds the request.

import { api, errorText } from "./api.js";
import { diffText, xrayView } from "./context.js";
import { containsRedacted } from "./format.js";
import { h } from "./frame.js";
import { inputStart } from "./inject.js";

const num = (v) => Math.round(v).toLocaleString("en-US");
// Which parts "trim to fit" gives up, in order: tool results, then attachments, then older messages.
const TRIM_ORDER = { tool_result: 0, attachment: 1, message: 2 };

/**
 * @param {object} g the held gate (a model call's before gate, editable)
 * @param {object} original the call's breakdown as the GET route answered it
 * @param {object} o {send(input), say(text)}
 * @returns {{el: HTMLElement}}
 */
export function surgeryView(g, original, o) {
  /** path -> {path, op: "drop"} | {path, op: "truncate", keepFirst, keepLast} */
  const ops = new Map();
  const pins = new Set();
  let edited = null; // the edit route's last answer {input, breakdown}
  let ask = 0;
  const status = h("p", { class: "cx-edit-status small", "aria-live": "polite" });
  const sendBtn = h("button", { type: "button", class: "primary cx-send", disabled: true, onclick: () => sendEdited() }, "Send edited");
  const undoBtn = h("button", { type: "button", class: "ghost cx-undo", disabled: true, onclick: () => { ops.clear(); pins.clear(); changed(); } }, "Undo all");
  const limit = typeof original.contextLimit === "number" && original.contextLimit > 0 ? original.contextLimit : null;
  const fitInput = h("input", { type: "number", min: "1", step: "100", class: "cx-fit-n", "aria-label": "Tokens to fit in",
    value: String(Math.max(1, Math.round(limit ? Math.min(limit * 0.8, original.total * 0.5) : original.total * 0.5))) });
  const fitBtn = h("button", { type: "button", class: "cx-fit", onclick: () => trimToFit(Number(fitInput.value)) }, "Trim to fit");

  const view = xrayView(original, { title: "Context", extra: (p) => controls(p), marked: new Set() });
  const el = h("div", { class: "cx-surgery" }, view.el, status,
    h("div", { class: "cx-edit-bar" }, fitBtn, fitInput, h("span", { class: "small muted" }, "tokens"), undoBtn, sendBtn));

  function controls(p) {
    const op = ops.get(p.path);
    const box = h("span", { class: "cx-ops" });
    if (!p.path || p.kind === "tools") return box; // tool definitions are not one message to cut
    const drop = h("button", { type: "button", dataset: { op: "drop" }, class: `cx-op${op?.op === "drop" ? " on" : ""}`, "aria-pressed": String(op?.op === "drop"),
      title: `Drop ${p.label} from the request`, "aria-label": `Drop ${p.label}`, onclick: () => {
        if (op?.op === "drop") ops.delete(p.path);
        else { ops.set(p.path, { path: p.path, op: "drop" }); pins.delete(p.path); }
        changed({ id: p.id, op: "drop" });
      } }, "drop");
    const trim = h("button", { type: "button", dataset: { op: "truncate" }, class: `cx-op${op?.op === "truncate" ? " on" : ""}`, "aria-pressed": String(op?.op === "truncate"),
      title: `Keep only the first and last tokens of ${p.label}`, "aria-label": `Truncate ${p.label}`, onclick: () => {
        if (op?.op === "truncate") ops.delete(p.path);
        else {
          const keep = Math.max(1, Math.min(200, Math.floor((p.tokens || 2) / 4)));
          ops.set(p.path, { path: p.path, op: "truncate", keepFirst: keep, keepLast: keep });
          pins.delete(p.path);
        }
        changed({ id: p.id, op: "truncate" });
      } }, "truncate");
    const pin = h("button", { type: "button", dataset: { op: "pin" }, class: `cx-op${pins.has(p.path) ? " on" : ""}`, "aria-pressed": String(pins.has(p.path)),
      title: `Pin ${p.label}: "trim to fit" keeps it`, "aria-label": `Pin ${p.label}`, onclick: () => {
        if (pins.has(p.path)) pins.delete(p.path);
        else { pins.add(p.path); ops.delete(p.path); }
        changed({ id: p.id, op: "pin" });
      } }, "pin");
    // Only a part that holds one text can be truncated (the hub cuts that text by tokens).
    box.append(...(p.textPath ? [drop, trim, pin] : [drop, pin]));
    if (op?.op === "truncate") {
      const n = (key, label) => {
        const input = h("input", { type: "number", min: "0", step: "10", value: String(op[key]), class: "cx-keep", "aria-label": `${label} tokens of ${p.label}` });
        input.addEventListener("change", () => { op[key] = Math.max(0, Math.floor(Number(input.value) || 0)); changed(); });
        return input;
      };
      box.append(h("span", { class: "cx-keep-row small" }, "keep first ", n("keepFirst", "Keep first"), " last ", n("keepLast", "Keep last")));
    }
    return box;
  }

  /** Drop the largest unpinned tool results first (then attachments, then older messages) until
   * the estimate from the original counts fits; the edit route then gives the exact total. */
  function trimToFit(target) {
    if (!(target > 0)) {
      o.say("Trim to fit: give a number of tokens above 0.");
      return;
    }
    const parts = original.parts || [];
    const lastMessage = [...parts].reverse().find((p) => p.kind === "message");
    let total = parts.reduce((s, p) => s + (ops.get(p.path)?.op === "drop" ? 0 : p.tokens || 0), 0);
    const candidates = parts.filter((p) => p.path && p.kind in TRIM_ORDER && !pins.has(p.path) && !ops.has(p.path)
      && p !== lastMessage && !(p.kind === "message" && p.role === "system"))
      .sort((a, b) => TRIM_ORDER[a.kind] - TRIM_ORDER[b.kind] || (b.tokens || 0) - (a.tokens || 0));
    for (const p of candidates) {
      if (total <= target) break;
      ops.set(p.path, { path: p.path, op: "drop" });
      total -= p.tokens || 0;
    }
    if (total > target) o.say(`Trim to fit: the pinned and kept parts alone are about ${num(total)} tokens, above ${num(target)}.`);
    changed();
  }

  async function changed(focus) {
    const mine = ++ask;
    const list = [...ops.values()];
    undoBtn.disabled = !list.length && !pins.size;
    view.redraw();
    // The rows were drawn again: keep the keyboard on the button just pressed.
    if (focus) el.querySelector(`.cx-part[data-part-id="${CSS.escape(String(focus.id))}"] .cx-op[data-op="${focus.op}"]`)?.focus();
    if (!list.length) {
      edited = null;
      sendBtn.disabled = true;
      status.textContent = pins.size ? `${pins.size} pinned · nothing changed yet` : "";
      return;
    }
    sendBtn.disabled = true;
    status.textContent = "Counting the edited request…";
    const input = g.input !== undefined ? g.input : await inputStart(g);
    const res = await api.contextEdit(g.runId, g.nodeId, g.instanceId, input, list);
    if (mine !== ask) return; // a later change is being counted
    if (!res.ok || !res.body || !res.body.breakdown) {
      edited = null;
      status.textContent = `Cannot edit: ${errorText(res)}`;
      return;
    }
    edited = res.body;
    const b = edited.breakdown;
    const delta = b.total - original.total;
    const drops = list.filter((x) => x.op === "drop").length;
    const cuts = list.length - drops;
    status.textContent = `New total ${num(b.total)} tokens (${delta <= 0 ? "−" : "+"}${num(Math.abs(delta))})`
      + `${limit ? ` · ${((b.total / limit) * 100).toFixed(1)} % of ${num(limit)}` : ""} · ${drops} dropped, ${cuts} truncated${pins.size ? `, ${pins.size} pinned` : ""}`;
    status.dataset.total = String(b.total);
    sendBtn.disabled = false;
  }

  function sendEdited() {
    if (!edited) return;
    if (containsRedacted(edited.input)) {
      o.say('Not sent: the edited input still contains "__REDACTED__" (a value the app never recorded); use Edit input to replace it.');
      return;
    }
    o.send(edited.input);
  }

  return { el, diff: diffText(original) };
}
