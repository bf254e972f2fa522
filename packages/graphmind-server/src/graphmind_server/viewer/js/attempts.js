// The node detail's record of gate answers that changed a call (issues 30 and 31): every failed
// attempt of a retried call with its own input, error and duration; the original input against
// the edited one; the mark on a value replayed from a recording and what replaying it saved.

import { h } from "./frame.js";
import { jsonDiff } from "./diff.js";
import { hiddenBy, ms } from "./format.js";
import { jsonView } from "./json.js";
import { money } from "./usage.js";

/** "Input edited in the debugger": the original and the edited input as a diff. */
export function editSection(x) {
  if (!x.edited) return null;
  return h("section", { class: "d-edited" },
    h("h3", null, "Input edited in the debugger"),
    x.originalInput === undefined
      ? h("p", { class: "muted small" }, "The app did not send the original input.")
      : jsonDiff(x.originalInput, x.input, ["original", "edited"]));
}

/** Every attempt of a retried call, oldest first, the one shown above last. */
export function attemptsSection(x) {
  if (!x.attempts.length) return null;
  const list = h("ol", { class: "d-attempts", "aria-label": "Attempts" });
  for (const a of x.attempts) {
    const err = a.error ? `${a.error.name || "Error"}: ${a.error.message || ""}` : "no error recorded";
    list.append(h("li", { class: "d-attempt", dataset: { attempt: String(a.attempt) } },
      h("div", null, h("strong", null, `Attempt ${a.attempt}`), h("span", { class: "muted" }, ` · ${ms(a.durationMs)}`)),
      h("pre", { class: "d-error" }, err),
      a.input === undefined ? null : h("details", { class: "d-attempt-input" }, h("summary", null, "Input"),
        jsonView(a.input, hiddenBy(x.kind, "input"), 1))));
  }
  const last = Math.max(x.attempts.length, ...x.attempts.map((a) => a.attempt)) + 1;
  list.append(h("li", { class: "d-attempt d-attempt-last", dataset: { attempt: String(last) } },
    h("strong", null, `Attempt ${last}`), h("span", { class: "muted" }, ` · ${x.status} (shown above)`)));
  return h("section", { class: "d-attempts-box" }, h("h3", null, `Attempts (${last})`), list);
}

/** What a replayed value saved: the model call (its tokens, and cost when known) or the tool run.
 * `u`: the usage it saved (its own, else its recorded call's; replayinfo.js). */
export function savedText(x, u = x.usage, estimate = null) {
  const reported = costOf(x, u);
  if (x.kind === "llm") {
    const tokens = u && typeof u.totalTokens === "number" ? u.totalTokens
      : u ? (u.inputTokens || 0) + (u.outputTokens || 0) : null;
    const parts = [tokens !== null ? `${tokens.toLocaleString("en-US")} tokens` : "tokens not recorded"];
    if (reported !== null) parts.push(money(reported));
    else if (estimate !== null) parts.push(`≈ ${money(estimate)} at the recorded run's rate`);
    return `saved a model call: ${parts.join(", ")}`;
  }
  return x.kind === "tool" ? "saved a tool run" : "saved a call";
}

/** A cost the events state (the app's or the hub's usage), else null. */
export function costOf(x, usage = x.usage) {
  const u = usage || {};
  for (const v of [u.costUsd, u.cost, x.attrs && x.attrs.costUsd]) {
    if (typeof v === "number" && Number.isFinite(v)) return v;
  }
  return null;
}

/** The "replayed" fact of the detail's facts list ([dt, dd]) or []. */
export function replayFacts(x, usage, costOfTokens = () => null) {
  if (!x.replayed) return [];
  const tokens = usage ? usage.totalTokens ?? (usage.inputTokens || 0) + (usage.outputTokens || 0) : 0;
  return [h("dt", null, "Replayed"), h("dd", { class: "d-replayed" },
    h("span", { class: "chip replayed-chip" }, "from the recording"), ` ${savedText(x, usage, costOfTokens(tokens))}`)];
}
