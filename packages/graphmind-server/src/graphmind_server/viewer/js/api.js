// The hub's REST API (docs/api.md). Every call resolves to {ok, status, body}; it never throws,
// so a caller can show the hub's one-line error instead of a stack trace.

import { authHeaders, tokenReady } from "./token.js";

async function call(method, path, body) {
  await tokenReady();
  const init = { method, headers: authHeaders() };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (err) {
    return { ok: false, status: 0, body: { error: `the hub did not answer (${err.message}); is graphmind serve running?` } };
  }
  let parsed = null;
  try {
    parsed = await res.json();
  } catch {
    parsed = { error: `the hub answered ${res.status} without JSON` };
  }
  return { ok: res.ok, status: res.status, body: parsed };
}

/** A one-line message for a failed call. */
export function errorText(result) {
  const msg = result.body && typeof result.body.error === "string" ? result.body.error : "request failed";
  return result.status ? `${result.status}: ${msg}` : msg;
}

export const api = {
  health: () => call("GET", "/api/health"),
  runs: ({ limit = 200, status, app } = {}) => {
    const q = new URLSearchParams({ limit: String(limit) });
    if (status) q.set("status", status);
    if (app) q.set("app", app);
    return call("GET", `/api/runs?${q}`);
  },
  run: (id) => call("GET", `/api/runs/${encodeURIComponent(id)}`),
  events: (id, after = 0, limit = 5000) =>
    call("GET", `/api/runs/${encodeURIComponent(id)}/events?after=${after}&limit=${limit}`),
  gates: () => call("GET", "/api/gates"),
  debug: () => call("GET", "/api/debug"),
  /** `extra`: {value} with inject; {input} and/or {reload: true} with continue or retry (issue 30). */
  resolveGate: (gateId, action, extra = {}) => {
    const body = { action };
    if (action === "inject") body.value = extra.value;
    if (extra.input !== undefined) body.input = extra.input;
    if (extra.reload) body.reload = true;
    return call("POST", `/api/gates/${encodeURIComponent(gateId)}`, body);
  },
  putDebug: (patch) => call("PUT", "/api/debug", patch),
  pause: (runId) => call("POST", "/api/pause", runId ? { runId } : {}),
  abortRun: (id) => call("POST", `/api/runs/${encodeURIComponent(id)}/abort`, {}),
  deleteRun: (id) => call("DELETE", `/api/runs/${encodeURIComponent(id)}`),
};
