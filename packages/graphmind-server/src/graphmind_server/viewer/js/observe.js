// Runs that came in over OTLP (`POST /v1/traces`, clientId "otlp"): recorded from an app's
// OpenTelemetry spans, after the fact, so no gate can hold them (docs/export.md).

import { h } from "./frame.js";
import { store } from "./state.js";

export const OTLP_CLIENT = "otlp";

/** null for a gated run; else {scope, gatedBy}: the instrumentation, the adapter that would gate it. */
export function observeOnly(runId, node) {
  const r = store.runs.get(runId);
  if (!r || r.clientId !== OTLP_CLIENT) return null;
  const run = (r.meta && r.meta.otlp) || {};
  const otel = (node && node.latest && node.latest.attrs && node.latest.attrs.otel) || {};
  return { scope: otel.scope || run.scope || "", gatedBy: otel.gatedBy || run.gatedBy || null };
}

export function observeBadge() {
  return h("span", { class: "badge observe-badge", title: "Came in over OTLP: recorded from OpenTelemetry spans; no gate can hold it" },
    "observe-only · OTLP");
}

/** What node detail shows in place of the breakpoint toggles. */
export function observeNote(info) {
  const why = `Observe-only: this run came in over OTLP${info.scope ? ` (${info.scope})` : ""}, recorded from spans after each call ended, so no gate can hold it.`;
  const fix = info.gatedBy
    ? `Instrument the app with ${info.gatedBy} to hold, inject and retry these calls.`
    : "No GraphMind adapter covers this instrumentation yet; gm.wrap / client.tool in the app adds gates to a call.";
  return h("fieldset", { class: "d-bps observe-note" }, h("legend", null, "Breakpoints"),
    h("p", null, why), h("p", { class: "muted" }, fix));
}
