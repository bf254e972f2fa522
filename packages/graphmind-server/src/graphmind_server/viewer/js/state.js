// The page's shared state and a tiny publish/subscribe. Views subscribe to a topic and redraw in
// the next animation frame; nothing else holds state.

export const store = {
  /** @type {Map<string, object>} runId -> Run (docs/api.md) */
  runs: new Map(),
  /** held gates, oldest first */
  gates: [],
  debug: { breakpoints: [], mode: "run", pauseOnError: "on", pauseOnHandoff: "off", version: 0 },
  /** the Pause armed in the hub and not yet taken by a gate: in any run, and per run */
  pause: { any: false, runs: [] },
  conn: { state: "connecting", detail: "" },
  runId: null,
  /** @type {import("./model.js").RunModel | null} */
  model: null,
  loading: false,
  selectedNode: null,
  selectedExec: null,
  filters: { app: "", status: "" },
};

const subs = new Map();

export function on(topic, fn) {
  if (!subs.has(topic)) subs.set(topic, []);
  subs.get(topic).push(fn);
}

export function emit(topic, arg) {
  for (const fn of subs.get(topic) || []) {
    try {
      fn(arg);
    } catch (err) {
      console.error(`[graphmind viewer] ${topic} handler failed:`, err);
    }
  }
}

export function setGates(gates) {
  store.gates = [...gates].sort((a, b) => (a.heldSince ?? 0) - (b.heldSince ?? 0));
  emit("gates");
}

export function addGate(gate) {
  if (store.gates.some((g) => g.gateId === gate.gateId)) return;
  setGates([...store.gates, gate]);
}

/** The answers an assistant proposed for a held gate changed (a `gate.proposals` frame). */
export function setGateProposals(gateId, proposals) {
  const gate = store.gates.find((g) => g.gateId === gateId);
  if (!gate) return;
  gate.proposals = Array.isArray(proposals) ? proposals : [];
  emit("gates");
}

export function removeGate(gateId) {
  const before = store.gates.length;
  store.gates = store.gates.filter((g) => g.gateId !== gateId);
  if (store.gates.length !== before) emit("gates");
}

export function isBreakpoint(nodeId, gate) {
  return store.debug.breakpoints.some((b) => b.nodeId === nodeId && b.gate === gate);
}
