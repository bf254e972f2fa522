// A replayed run's line in the run header (issue 31): the run it replays (a link), where it was
// forked, how many of its nodes were replayed and what that saved; and on a recorded run, the
// runs that replayed it (links back).

import { h } from "./frame.js";
import { store } from "./state.js";

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
      let replayed = 0;
      let tokens = 0;
      for (const x of model.order) {
        if (!x.replayed) continue;
        replayed += 1;
        if (x.kind === "llm" && x.usage) tokens += x.usage.totalTokens ?? (x.usage.inputTokens || 0) + (x.usage.outputTokens || 0);
      }
      line.append(h("span", { class: "muted replay-saved" },
        ` · ${replayed} of ${model.order.filter((x) => x.kind !== "agent").length} calls replayed, saved ${tokens.toLocaleString("en-US")} model tokens`));
    }
  }
  if (children.length) {
    if (parent) line.append(" · ");
    line.append("replayed by ");
    children.forEach((r, i) => line.append(...(i ? [", "] : []), runLink(r.id)));
  }
  return line;
}
