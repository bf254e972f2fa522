// Tokens, cost and time of a run or a node, as the run list, the header and the detail say them.
// The hub sums a run's usage (docs/api.md, "Tokens and cost"); a cost is the framework's when it
// reported one (LiteLLM), else priced from the hub's table, and says which.

import { ms } from "./format.js";

const n = (v) => (typeof v === "number" ? v.toLocaleString("en-US") : "–");

export function money(usd) {
  if (typeof usd !== "number") return "";
  if (usd === 0) return "$0";
  return usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
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
