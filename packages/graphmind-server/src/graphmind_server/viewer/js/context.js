// Context X-ray: what fills a model call's window (docs/viewer.md, "Context X-ray"). One stacked bar
// of the parts by kind, the tokenizer (or "estimated"), the total against the model's limit, the
// warnings, what changed since the same agent's previous step, and the parts themselves. The hub
// computes the breakdown (GET /api/runs/{id}/nodes/{nodeId}/context); this module only draws it.

import { api, errorText } from "./api.js";
import { h } from "./frame.js";
import { emit } from "./state.js";

const KIND_TEXT = { system: "system", tools: "tool definitions", message: "message", tool_result: "tool result", attachment: "attachment" };
const num = (v) => (typeof v === "number" && Number.isFinite(v) ? Math.round(v).toLocaleString("en-US") : "–");
const pct = (share) => (typeof share === "number" ? `${(share * 100).toFixed(share >= 0.1 ? 0 : 1)} %` : "");
const signed = (v) => `${v >= 0 ? "+" : "−"}${num(Math.abs(v))}`;

/** The colour class of a part: by kind, and a message by its role too. */
export function partClass(p) {
  const kind = String(p.kind || "message").replace(/[^a-z_]/g, "");
  return p.kind === "message" && p.role ? `cx-${kind} cx-role-${String(p.role).replace(/[^a-z_]/g, "")}` : `cx-${kind}`;
}

// ---- loading, one answer per execution and state ---------------------------------------------
/** key -> {sig, promise, body}: a breakdown is asked once per execution per state (held, then its
 * edited ending), never per frame. */
const cache = new Map();
/** exec key -> warnings count, for the graph's badge */
export const warningCounts = new Map();

/** The breakdown of one execution (a Promise of {ok, status, body}); `sig` changes when it may have. */
export function loadContext(runId, nodeId, instanceId, sig = "") {
  const key = `${runId}\u0000${nodeId}\u0000${instanceId}`;
  const hit = cache.get(key);
  if (hit && hit.sig === sig) return hit.promise;
  const promise = api.context(runId, nodeId, instanceId).then((res) => {
    const execKey = `${nodeId}\u0000${instanceId}`;
    if (res.ok && res.body && Array.isArray(res.body.parts)) {
      const n = Array.isArray(res.body.warnings) ? res.body.warnings.length : 0;
      if (warningCounts.get(execKey) !== n) {
        warningCounts.set(execKey, n);
        emit("context", { nodeId });
      }
    }
    return res;
  });
  cache.set(key, { sig, promise });
  if (cache.size > 500) cache.delete(cache.keys().next().value);
  return promise;
}

/** What the execution's breakdown depends on (its state and whether its input was edited). */
export function execContextSig(x) {
  return `${x.status}|${x.edited ? 1 : 0}|${x.endTs ?? ""}`;
}

// ---- drawing ----------------------------------------------------------------------------------
/** "12,345 tokens of 128,000 (9.6 %) · tokenizer o200k_base". */
export function totalLine(b) {
  const limit = typeof b.contextLimit === "number" && b.contextLimit > 0 ? b.contextLimit : null;
  const share = limit ? b.total / limit : null;
  // The hub names how it estimated ("estimated (characters / 4)"); say it, and what it was scaled to.
  const est = typeof b.tokenizer === "string" && b.tokenizer.startsWith("estimated") ? b.tokenizer : "estimated";
  const how = b.estimated
    ? typeof b.scaledTo === "number" ? `${est}, scaled to ${num(b.scaledTo)} reported` : est
    : `tokenizer ${b.tokenizer || "?"}`;
  return h("p", { class: "cx-total" },
    h("strong", { class: "cx-total-n" }, `${num(b.total)} tokens`),
    limit ? h("span", { class: share > 0.8 ? "cx-over" : null }, ` of ${num(limit)} (${pct(share)})`) : h("span", { class: "muted" }, " (limit unknown)"),
    h("span", { class: "muted cx-tokenizer", title: b.estimated ? "No tokenizer for this model installs offline: the count is an estimate" : "Counted with the model's own tokenizer" }, ` · ${how}`));
}

/** One stacked bar of the parts, in the request's order, coloured by kind; hover names the part. */
export function breakdownBar(b) {
  const parts = b.parts || [];
  const bar = h("div", { class: "cx-bar", role: "img",
    "aria-label": `Context: ${parts.length} parts, ${num(b.total)} tokens; largest ${largest(parts)}` });
  const total = b.total > 0 ? b.total : parts.reduce((s, p) => s + (p.tokens || 0), 0) || 1;
  for (const p of parts) {
    const w = ((p.tokens || 0) / total) * 100;
    if (w <= 0) continue;
    bar.append(h("span", { class: `cx-seg ${partClass(p)}`, style: `width:${w.toFixed(3)}%`, dataset: { partId: String(p.id) },
      title: `${p.label} · ${num(p.tokens)} tokens · ${pct(p.share ?? p.tokens / total)}` }));
  }
  return bar;
}

function largest(parts) {
  const p = parts.reduce((a, c) => (!a || (c.tokens || 0) > (a.tokens || 0) ? c : a), null);
  return p ? `${p.label} (${pct(p.share)})` : "none";
}

/** The legend under the bar: each kind present and its share. */
function legend(b) {
  const byKind = new Map();
  for (const p of b.parts || []) {
    const k = p.kind === "message" && p.role ? `${p.role} messages` : KIND_TEXT[p.kind] || p.kind;
    const cur = byKind.get(k) || { tokens: 0, cls: partClass(p) };
    cur.tokens += p.tokens || 0;
    byKind.set(k, cur);
  }
  const total = b.total > 0 ? b.total : 1;
  const rows = [...byKind].sort((a, c) => c[1].tokens - a[1].tokens);
  // Kinds under 2 % share one "other" entry: the legend stays one line on a card.
  const big = rows.filter(([, v], i) => i < 3 || v.tokens / total >= 0.02);
  const rest = rows.slice(big.length);
  const other = rest.reduce((s, [, v]) => s + v.tokens, 0);
  return h("p", { class: "cx-legend small" },
    ...big.map(([k, v]) => h("span", { class: "cx-key" }, h("i", { class: `cx-swatch ${v.cls}` }), ` ${k} ${pct(v.tokens / total)}`)),
    rest.length ? h("span", { class: "cx-key", title: rest.map(([k, v]) => `${k} ${pct(v.tokens / total)}`).join("\n") }, `other ${pct(other / total)}`) : null);
}

/** The warnings, one line each (the part they name is marked in the list). */
export function warningList(b) {
  const ws = Array.isArray(b.warnings) ? b.warnings : [];
  if (!ws.length) return null;
  return h("ul", { class: "cx-warnings", role: "note", "aria-label": "Context warnings" },
    ...ws.map((w) => h("li", { class: `cx-warning cx-warning-${String(w.code || "").replace(/[^a-z_]/g, "")}` }, `⚠ ${w.message}`)));
}

/** "+2 parts, +1,834 tokens since the previous step: assistant message, tool result get_weather". */
export function diffText(b) {
  const d = b.diff;
  if (!d || !d.previous) return "First model step of this agent: nothing to compare with.";
  const byId = new Map((b.parts || []).map((p) => [p.id, p]));
  const added = (d.added || []).map((id) => byId.get(id)).filter(Boolean);
  const removed = d.removed || [];
  const changed = d.changed || [];
  const bits = [];
  if (added.length) bits.push(`+${added.length} part${added.length === 1 ? "" : "s"}`);
  if (removed.length) bits.push(`−${removed.length} removed`);
  if (changed.length) bits.push(`${changed.length} changed`);
  const delta = typeof d.delta === "number" ? d.delta : added.reduce((s, p) => s + (p.tokens || 0), 0);
  if (!bits.length) return `The same parts as the previous step (${signed(delta)} tokens).`;
  bits.push(`${signed(delta)} tokens`);
  const names = [...added.map((p) => p.label), ...removed.map((r) => `removed ${r.label}`),
    ...changed.map((c) => `${byId.get(c.id)?.label || c.id} ${signed((c.tokensAfter || 0) - (c.tokensBefore || 0))}`)];
  return `${bits.join(", ")} since the previous step${names.length ? `: ${names.join(", ")}` : ""}`;
}

/** The parts list: label, tokens, share, a one-line preview; `extra(part)` adds controls to a row. */
export function partsList(b, { largestFirst = false, extra = null, marked = new Set() } = {}) {
  const parts = [...(b.parts || [])];
  if (largestFirst) parts.sort((a, c) => (c.tokens || 0) - (a.tokens || 0));
  const warned = new Set((b.warnings || []).flatMap((w) => w.parts || []));
  const list = h("ol", { class: "cx-parts", "aria-label": "Parts of the context" });
  for (const p of parts) {
    const row = h("li", { class: `cx-part${warned.has(p.id) ? " cx-warned" : ""}${marked.has(p.id) ? " cx-marked" : ""}`, dataset: { partId: String(p.id), kind: p.kind || "" } },
      h("i", { class: `cx-swatch ${partClass(p)}` }),
      h("span", { class: "cx-label", title: p.path || "" }, p.label, p.cut ? h("span", { class: "chip cx-cut", title: "The viewer's copy was cut by the preview limit; the count is of the full value the app sent" }, "cut") : null),
      h("span", { class: "cx-num" }, num(p.tokens)),
      h("span", { class: "cx-share muted" }, pct(p.share)),
      h("div", { class: "cx-line2" }, h("span", { class: "cx-preview muted", title: p.preview ? String(p.preview) : null }, p.preview ? String(p.preview) : ""),
        extra ? extra(p) : null));
    list.append(row);
  }
  return list;
}

/**
 * The whole X-ray of one breakdown: the total line, the bar and legend, the warnings, the step
 * diff and the parts (largest first on a toggle). Returns {el, redraw(breakdown)}.
 * @param {object} b the breakdown (the GET route's answer, or the edit route's)
 * @param {object} [o] {extra(part), marked: Set of part ids, title}
 */
export function xrayView(b, o = {}) {
  const el = h("section", { class: "cx", "aria-label": "Context X-ray" });
  let largestFirst = false;
  let current = b;
  const draw = () => {
    const toggle = h("button", { type: "button", class: "link cx-order", "aria-pressed": String(largestFirst),
      onclick: () => { largestFirst = !largestFirst; draw(); el.querySelector(".cx-order")?.focus(); } },
    largestFirst ? "request order" : "largest first");
    // (replaceChildren writes a null child as the text "null": only what exists goes in.)
    el.replaceChildren(...[
      h("div", { class: "cx-head" }, h("span", { class: "cx-title" }, o.title || "Context"), totalLine(current)),
      breakdownBar(current), legend(current), warningList(current),
      current.diff !== undefined ? h("p", { class: "cx-diff small" }, diffText(current)) : null,
      h("div", { class: "cx-parts-head small muted" }, `${(current.parts || []).length} parts · `, toggle),
      h("div", { class: "cx-parts-box" }, partsList(current, { largestFirst, extra: o.extra, marked: o.marked }))].filter(Boolean));
  };
  draw();
  return { el, redraw: (next) => { if (next) current = next; draw(); }, get breakdown() { return current; } };
}

/** A slot that loads the X-ray of one execution and draws it (a fixed-height placeholder until
 * then, so nothing below it jumps). `o.make(breakdown)` draws something else than the plain
 * X-ray (the surgery view); `then(breakdown)` runs once it is drawn. */
export function xraySlot(runId, nodeId, instanceId, sig, o = {}, then = null) {
  const slot = h("div", { class: "cx-slot", "aria-busy": "true" }, h("p", { class: "muted small cx-loading" }, "Counting the context…"));
  loadContext(runId, nodeId, instanceId, sig).then((res) => {
    slot.removeAttribute("aria-busy");
    if (!res.ok || !res.body || !Array.isArray(res.body.parts)) {
      // An older hub has no X-ray route: say nothing rather than an error on every model node.
      if (res.status === 404 || res.status === 405) slot.replaceChildren();
      else slot.replaceChildren(h("p", { class: "muted small" }, `Context X-ray unavailable: ${errorText(res)}`));
      slot.classList.add("cx-none");
      return;
    }
    if (!res.body.parts.length) {
      slot.replaceChildren(); // nothing counted (a hub that keeps no breakdown for this call)
      slot.classList.add("cx-none");
      return;
    }
    const el = o.make ? o.make(res.body) : xrayView(res.body, o).el;
    slot.replaceChildren(el);
    // The breakdown arrives after the card is drawn and pushes what is below it down: an answer box
    // opened meanwhile keeps its Send in view (the card column scrolls; answerbox.js reveals it on open).
    const send = slot.closest(".gate-card")?.querySelector(".answer-box:not([hidden]) .answer-send");
    if (send) requestAnimationFrame(() => send.scrollIntoView({ block: "nearest" }));
    if (then) then(res.body);
  });
  return slot;
}
