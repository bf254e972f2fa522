// Tokens, cost and time of a run or a node, as the run list, the header and the detail say them.
// The hub sums a run's usage (docs/api.md, "Tokens and cost"); a cost is the framework's when it
// reported one (LiteLLM), else priced from the hub's table, and says which.

import { ms } from "./format.js";

const n = (v) => (typeof v === "number" ? v.toLocaleString("en-US") : "–");

/** "$1.25", "$0.0042", "$0.000042": two significant digits below a cent, never "$0.0000". */
export function money(usd) {
  if (typeof usd !== "number" || !Number.isFinite(usd)) return "";
  if (usd === 0) return "$0";
  const sign = usd < 0 ? "-" : "";
  const a = Math.abs(usd);
  if (a >= 0.01) return `${sign}$${a.toFixed(2)}`;
  // Digits after the point: enough for two significant ones (0.000042 → 6), at most 8.
  const digits = Math.min(8, Math.max(4, 1 - Math.floor(Math.log10(a))));
  const text = a.toFixed(digits);
  return Number(text) === 0 ? `${sign}< $0.00000001` : `${sign}$${text}`;
}

/** What one model call cost: the reported cost, else ≈ its tokens at the run's rate for its model
 * (else the run's overall rate), from the hub's pricing of the run (docs/api.md "Tokens and cost");
 * null when the hub has no cost for this run. */
export function callCost(u, runUsage, model) {
  if (!u) return null;
  if (typeof u.costUsd === "number") return { usd: u.costUsd, how: "reported" };
  const tokens = (u.inputTokens || 0) + (u.outputTokens || 0);
  if (!(tokens > 0) || !runUsage) return null;
  const row = model && runUsage.models ? runUsage.models[model] : null;
  const rowTokens = row ? (row.inputTokens || 0) + (row.outputTokens || 0) : 0;
  if (row && typeof row.costUsd === "number" && rowTokens > 0) return { usd: (row.costUsd * tokens) / rowTokens, how: "≈" };
  if (typeof runUsage.costUsd === "number" && runUsage.totalTokens > 0) return { usd: (runUsage.costUsd * tokens) / runUsage.totalTokens, how: "≈" };
  return null;
}

/** "$0.0042" or "≈ $0.000042" for a call's cost (see callCost). */
export function costText(c) {
  return c ? `${c.how === "≈" ? "≈ " : ""}${money(c.usd)}` : "";
}

/** "1,200 tok · $0.0012" for the run list; "" for a run without model tokens. */
export function usageShort(u) {
  if (!u || !(u.totalTokens > 0 || typeof u.costUsd === "number")) return "";
  const cost = money(u.costUsd);
  return `${n(u.totalTokens)} tok${cost ? ` · ${cost}` : ""}`;
}

/** The header's line: totals, the split, the cost and where it came from. */
export function usageLong(u) {
  if (!u || !(u.totalTokens > 0 || typeof u.costUsd === "number")) return "";
  const cached = u.cachedTokens ? ` · ${n(u.cachedTokens)} cached` : "";
  const cost = typeof u.costUsd === "number" ? ` · ${money(u.costUsd)} (${u.costSource}${u.unpricedModels ? "; some models have no price" : ""})`
    : u.unpricedModels ? " · cost unknown (no price for this model)" : "";
  return `${n(u.totalTokens)} tokens (${n(u.inputTokens)} in · ${n(u.outputTokens)} out${cached})${cost}`;
}

/** "ran 1.2 s (3.0 s held)": wall time less the time gates were held. */
export function ranText(r, now = Date.now()) {
  if (!r || !r.startedAt) return "";
  const wall = (r.endedAt || now) - r.startedAt;
  const held = Math.min(wall, r.heldMs || 0);
  return held > 0 ? `ran ${ms(wall - held)} of ${ms(wall)} (${ms(held)} held)` : "";
}
