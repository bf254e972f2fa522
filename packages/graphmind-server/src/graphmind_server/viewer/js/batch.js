// A `graphmind replay --each` batch (GET /api/replays/batches/{id}, docs/viewer.md): each recorded
// run and its replay side by side, what the replay came to (same answer, different answer,
// diverged at a node, failed), and a link to the pair's compare view.

import { api, errorText } from "./api.js";
import { h } from "./frame.js";
import { money } from "./usage.js";

export async function showBatch(el, batchId) {
  document.body.dataset.batchLoaded = "false";
  el.replaceChildren(h("p", { class: "empty" }, "Loading the batch…"));
  const res = await api.batch(batchId);
  if (!res.ok) {
    el.replaceChildren(h("p", { class: "empty" }, `Cannot show the batch: ${errorText(res)}`));
    return;
  }
  const b = res.body;
  const t = b.totals;
  const head = h("div", { class: "run-head" },
    h("div", null, h("h1", null, `Replay batch ${b.batch}`),
      h("p", { class: "muted" }, `${b.pairs.length} run${b.pairs.length === 1 ? "" : "s"}: ${t["same answer"]} same answer · ${t["different answer"]} different answer · ${t.diverged} diverged · ${t.failed} failed`),
      h("p", { class: "muted small" }, `Model cost the replay saved: ${money(b.savedUsd)}`)));
  const list = h("ol", { class: "batch-pairs", "aria-label": "Recorded run and its replay" });
  for (const p of b.pairs) {
    const run = p.run ? h("a", { href: `#/run/${encodeURIComponent(p.run)}`, class: "mono" }, p.run.slice(0, 12)) : h("span", null, "?");
    const replay = h("a", { href: `#/run/${encodeURIComponent(p.replay)}`, class: "mono" }, p.replay.slice(0, 12));
    const compare = p.run && p.inHub
      ? h("a", { href: `#/compare/${encodeURIComponent(p.run)}/${encodeURIComponent(p.replay)}`, class: "batch-compare" }, "Compare")
      : h("span", { class: "muted small" }, "recording not in this hub");
    list.append(h("li", { class: `batch-pair batch-${p.result.replace(/ /g, "-")}`, dataset: { run: p.run || "", replay: p.replay } },
      run, " ↔ ", replay, " ", h("span", { class: "batch-result" }, p.label), " ", compare,
      p.why && p.result !== "same answer" ? h("div", { class: "muted small" }, p.why) : null));
  }
  el.replaceChildren(head, list);
  document.body.dataset.batchLoaded = "true";
}
