// A replayed run's line in the run header (issue 31): the run it replays (a link), where it was
// forked, how many of its nodes were replayed and what that saved; and on a recorded run, the
// runs that replayed it (links back).

import { api } from "./api.js";
import { h } from "./frame.js";
import { emit, store } from "./state.js";
import { money } from "./usage.js";

const PAGE = 2000;
const MAX_PAGES = 50;
/** recorded run id -> Map("<nodeId>#<occurrence>" -> usage) once loaded, or a Promise of it */
const recorded = new Map();

/** The usage each call of a recorded run reported, by `<nodeId>#<occurrence>` (a Promise). A
 * replayed call returns the recorded output without calling the model, so its own ending has no
 * usage: what it saved is what the recorded call used. */
export function recordedUsage(runId) {
  if (!recorded.has(runId)) {
    recorded.set(runId, (async () => {
      const seen = new Map(); // nodeId -> occurrences so far
      const byInstance = new Map(); // "<nodeId>\u0000<instanceId>" -> key
      const usage = new Map();
      let after = 0;
      for (let page = 0; page < MAX_PAGES; page++) {
        const res = await api.events(runId, after, PAGE);
        if (!res.ok) break;
        const events = res.body.events || [];
        for (const ev of events) {
          const ik = `${ev.nodeId}\u0000${ev.instanceId}`;
          if (ev.type === "node.started" && !byInstance.has(ik)) {
            const n = (seen.get(ev.nodeId) || 0) + 1;
            seen.set(ev.nodeId, n);
            byInstance.set(ik, `${ev.nodeId}#${n}`);
          } else if (ev.type === "node.finished" && ev.usage && byInstance.has(ik)) {
            usage.set(byInstance.get(ik), ev.usage);
          }
        }
        if (res.body.next === null || res.body.next === undefined || !events.length) break;
        after = res.body.next;
      }
      recorded.set(runId, usage);
      return usage;
    })());
  }
  const v = recorded.get(runId);
  return v instanceof Map ? Promise.resolve(v) : v;
}

/** What `tokens` of the recorded run cost, at that run's own rate (the hub's priced or reported
 * cost over its tokens, docs/api.md "Tokens and cost"), or null when the hub has no cost for it. */
export function savedCost(model, tokens) {
  const u = model && model.replayOf ? store.runs.get(model.replayOf)?.usage : null;
  if (!u || typeof u.costUsd !== "number" || !(u.totalTokens > 0) || !(tokens > 0)) return null;
  return (u.costUsd * tokens) / u.totalTokens;
}

/** The usage a replayed execution saved: its own, else its recorded call's (null until loaded). */
export function savedUsage(model, x) {
  if (x.usage) return x.usage;
  const source = model && model.replayOf;
  const usage = source ? recorded.get(source) : null;
  if (!(usage instanceof Map)) return null;
  const n = model.nodes.get(x.nodeId);
  return usage.get(`${x.nodeId}#${n ? n.execs.indexOf(x) + 1 : 1}`) || null;
}

const runLink = (id) => {
  const r = store.runs.get(id);
  return h("a", { href: `#/run/${encodeURIComponent(id)}`, class: "replay-link", dataset: { runId: id } }, r?.name ? `${r.name} (${id})` : id);
};

/** The run a run replays: its run.started's replayOf (in the model) or the hub's run row. */
export function replayOf(run, model) {
  const v = (model && model.replayOf) || (run && (run.replayOf || (run.meta && run.meta.replayOf)));
  return typeof v === "string" && v ? v : null;
}

/** Element for the run header, or null when the run has no replay links. */
export function replayLine(runId, run, model) {
  const parent = replayOf(run, model);
  const children = [...store.runs.values()].filter((r) => r.id !== runId && replayOf(r, null) === runId);
  if (!parent && !children.length) return null;
  const line = h("p", { class: "replay-line small" });
  if (parent) {
    line.append(h("span", { class: "chip replayed-chip" }, "replay"), " of ", runLink(parent));
    const forked = (model && model.forkedAt) ?? run?.forkedAt;
    if (forked !== undefined && forked !== null) line.append(`, forked at ${typeof forked === "string" ? forked : JSON.stringify(forked)}`);
    if (model && !model.summaryOnly) {
      // Only a recorded run this hub has (a cassette file's run may never have been here).
      if (store.runs.has(parent) && !(recorded.get(parent) instanceof Map)) {
        recordedUsage(parent).then(() => store.model === model && emit("model")); // the header again, with the totals
      }
      let replayed = 0;
      let tokens = 0;
      for (const x of model.order) {
        if (!x.replayed) continue;
        replayed += 1;
        const u = x.kind === "llm" ? savedUsage(model, x) : null;
        if (u) tokens += u.totalTokens ?? (u.inputTokens || 0) + (u.outputTokens || 0);
      }
      const cost = savedCost(model, tokens);
      line.append(h("span", { class: "muted replay-saved" },
        ` · ${replayed} of ${model.order.filter((x) => x.kind !== "agent").length} calls replayed, saved ${tokens.toLocaleString("en-US")} model tokens${cost === null ? "" : ` (≈ ${money(cost)})`}`));
    }
  }
  if (children.length) {
    if (parent) line.append(" · ");
    line.append("replayed by ");
    children.forEach((r, i) => line.append(...(i ? [", "] : []), runLink(r.id)));
  }
  return line;
}
