// A replay divergence on the pause card (issue 31): the call this run makes is not the one the
// recording has at this point. The card shows the recorded input against the actual one as a
// diff, and the recording it came from; the answers (continue live, use the recorded output,
// inject, edit, abort) are the card's own buttons.

import { h } from "./frame.js";
import { jsonDiff } from "./diff.js";
import { hiddenBy } from "./format.js";
import { jsonView } from "./json.js";

/** The card body for a gate held with reason "divergence". */
export function divergenceBody(g) {
  const r = g.replay && typeof g.replay === "object" ? g.replay : {};
  const where = [];
  if (r.source !== undefined && r.source !== null) where.push(`recording ${String(r.source)}`);
  if (typeof r.occurrence === "number") where.push(`occurrence #${r.occurrence} of ${g.nodeId}`);
  const body = h("div", { class: "divergence" });
  if (where.length) body.append(h("p", { class: "muted small divergence-where" }, `Expected from the ${where.join(", ")}`));
  if (g.expected === undefined || g.expected === null) {
    // `expected` null: the recording has no such call (this run went further, or another way).
    body.append(h("p", { class: "small divergence-none" }, "The recording has no input to compare here: this run's input is"),
      jsonView(g.input, hiddenBy(g.kind, "input"), 1));
  } else {
    body.append(jsonDiff(g.expected, g.input, ["recorded input", "this run's input"]));
  }
  return body;
}
