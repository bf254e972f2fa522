// The hub's REST API (docs/api.md). Every call resolves to {ok, status, body}; it never throws,
// so a caller can show the hub's one-line error instead of a stack trace.

import { authHeaders, tokenReady } from "./token.js";

async function call(method, path, body, headers = {}) {
  await tokenReady();
  const init = { method, headers: { ...authHeaders(), ...headers } };
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
  runs: ({ limit = 200, ...filters } = {}) => {
    const q = new URLSearchParams({ limit: String(limit) });
    for (const [k, v] of Object.entries(filters)) if (v) q.set(k, String(v));
    return call("GET", `/api/runs?${q}`);
  },
  search: (q, runId, limit = 100) => {
    const p = new URLSearchParams({ q, limit: String(limit) });
    if (runId) p.set("run", runId);
    return call("GET", `/api/search?${p}`);
  },
  compare: (a, b) => call("GET", `/api/compare?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`),
  /** "Save as test": the cassette and pytest file `graphmind test new` writes (docs/api.md). */
  saveTest: (runId, body) => call("POST", `/api/runs/${encodeURIComponent(runId)}/tests`, body),
  batch: (id) => call("GET", `/api/replays/batches/${encodeURIComponent(id)}`),
  /** The export as text (a download the page saves): the token travels as a header, never in a URL. */
  exportRun: async (id, format) => {
    await tokenReady();
    try {
      const res = await fetch(`/api/runs/${encodeURIComponent(id)}/export?format=${format}`, { headers: authHeaders() });
      if (!res.ok) {
        const body = await res.json().catch(() => ({ error: `the hub answered ${res.status}` }));
        return { ok: false, status: res.status, body };
      }
      return { ok: true, status: res.status, body: await res.blob() };
    } catch (err) {
      return { ok: false, status: 0, body: { error: `the hub did not answer (${err.message})` } };
    }
  },
  run: (id) => call("GET", `/api/runs/${encodeURIComponent(id)}`),
  events: (id, after = 0, limit = 5000) =>
    call("GET", `/api/runs/${encodeURIComponent(id)}/events?after=${after}&limit=${limit}`),
  gates: () => call("GET", "/api/gates"),
  effects: (id) => call("GET", `/api/runs/${encodeURIComponent(id)}/effects`),
  debug: () => call("GET", "/api/debug"),
  /** `extra`: {value} with inject; {input} and/or {reload: true} with continue or retry (issue 30). */
  resolveGate: (gateId, action, extra = {}) => {
    const body = { action };
    if (action === "inject") body.value = extra.value;
    if (extra.input !== undefined) body.input = extra.input;
    if (extra.reload) body.reload = true;
    // simulate (an effect hold): an optional value, and "from now on" (docs/effects.md)
    if (action === "simulate" && extra.value !== undefined) body.value = extra.value;
    if (extra.remember) body.remember = true;
    // The hub records which door answered (the effects ledger says "by the viewer").
    return call("POST", `/api/gates/${encodeURIComponent(gateId)}`, body, { "x-graphmind-via": "viewer" });
  },
  proposals: (runId) => call("GET", `/api/proposals?runId=${encodeURIComponent(runId)}&limit=200`),
  /** Accept (sent through the gate-answer path) or reject an assistant's proposed answer. */
  decideProposal: (id, verb) =>
    call("POST", `/api/proposals/${encodeURIComponent(id)}/${verb}`, {}, { "x-graphmind-via": "viewer" }),
  putDebug: (patch) => call("PUT", "/api/debug", patch),
  pause: (runId) => call("POST", "/api/pause", runId ? { runId } : {}),
  unpause: (runId) => call("DELETE", "/api/pause", runId ? { runId } : {}),
  abortRun: (id) => call("POST", `/api/runs/${encodeURIComponent(id)}/abort`, {}),
  deleteRun: (id) => call("DELETE", `/api/runs/${encodeURIComponent(id)}`),
};
