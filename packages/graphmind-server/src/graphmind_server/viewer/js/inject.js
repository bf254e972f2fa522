// What the Inject and Edit boxes start with, and what the card says the value becomes. The Inject
// box holds the shape the gate expects back: the node's output, never its input (an input sent
// unchanged at a before gate would become the tool's return value). At an after gate that is the
// output just produced; at a before or error gate, the app's `injectSkeleton` when it sent one
// (the last output, else the output schema's skeleton), else this node's last output in the run,
// else null. The Edit box starts with the call's input.

import { api } from "./api.js";
import { store } from "./state.js";

const PAGE = 2000;
const MAX_PAGES = 25; // a run of 50,000 events; past that the box starts at null

/** The value the Inject box starts with for a held gate (a Promise). */
export async function injectStart(g) {
  if (g.gate === "after") return g.output === undefined ? null : g.output;
  // The app's own start (issue 30): the last output, else a skeleton of the tool's output schema.
  if (g.injectSkeleton !== undefined && g.injectSkeleton !== null) return g.injectSkeleton;
  const loaded = store.runId === g.runId && store.model && !store.loading && !store.model.summaryOnly;
  const last = loaded ? lastOutputInModel(store.model, g) : await lastOutputFromHub(g);
  if (last !== null && last !== undefined) return last;
  // A model step's first call has no earlier reply: start from the one reply shape every adapter
  // reads (docs/protocol.md, "Injecting a model reply"), not from null.
  return g.kind === "llm" ? replySkeleton() : null;
}

/** The reply shape, empty: the text to fill in, and tool calls `{"name", "arguments"}` to add. */
export function replySkeleton() {
  return { content: "", tool_calls: [] };
}

function lastOutputInModel(model, g) {
  const node = model.nodes.get(g.nodeId);
  if (!node) return null;
  for (let i = node.execs.length - 1; i >= 0; i--) {
    const x = node.execs[i];
    if (x.instanceId !== g.instanceId && x.output !== undefined) return x.output;
  }
  return null;
}

async function lastOutputFromHub(g) {
  let found = null;
  let after = 0;
  for (let page = 0; page < MAX_PAGES; page++) {
    const res = await api.events(g.runId, after, PAGE);
    if (!res.ok) return found;
    const events = res.body.events || [];
    for (const ev of events) {
      if (ev.type === "node.finished" && ev.nodeId === g.nodeId && ev.instanceId !== g.instanceId && ev.output !== undefined) {
        found = ev.output;
      }
    }
    if (res.body.next === null || res.body.next === undefined || !events.length) return found;
    after = res.body.next;
  }
  return found;
}

/** One line under the Inject box: what the value sent becomes. */
export function injectMeaning(g) {
  const what = g.kind === "llm" ? "the model's reply" : g.kind === "tool" ? "the tool's return value" : "the call's result";
  const shape = g.kind === "llm" ? ' A reply: {"content": "text", "tool_calls": [{"name": "tool", "arguments": {}}]}, or a plain string.' : "";
  if (g.gate === "before") return `Sent as ${what}: the call is skipped and never runs.${shape}`;
  if (g.gate === "after") return `Replaces ${what}: the app gets this instead of what the call returned.`;
  if (g.gate === "error") return `Returned as ${what} instead of the error: the app never sees the exception.${shape}`;
  return `Becomes ${what}.`;
}

/** The input of the held call (a Promise): the gate's own, else its node.started's. */
export async function inputStart(g) {
  if (g.input !== undefined) return g.input;
  const x = store.runId === g.runId && store.model ? store.model.execs.get(`${g.nodeId}\u0000${g.instanceId}`) : null;
  if (x && x.input !== undefined) return x.input;
  let after = 0;
  for (let page = 0; page < MAX_PAGES; page++) {
    const res = await api.events(g.runId, after, PAGE);
    if (!res.ok) return null;
    const events = res.body.events || [];
    const found = events.find((ev) => ev.type === "node.started" && ev.nodeId === g.nodeId && ev.instanceId === g.instanceId);
    if (found) return found.input === undefined ? null : found.input;
    if (res.body.next === null || res.body.next === undefined || !events.length) return null;
    after = res.body.next;
  }
  return null;
}
