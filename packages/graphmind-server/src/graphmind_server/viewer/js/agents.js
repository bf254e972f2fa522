// The agents of a team run (docs/protocol.md, "Agents"): each `node.started` names its agent and
// the chain of agents it ran in (`agent`, `agentPath`). A group's status is the node rule's over its
// executions (status.js `node`: held while any is held, else the latest one's), as the hub's run
// payload says it (store/agents.py). Tokens, cost and time per agent are folded here from the same
// executions, so the header stays live while the run runs.

import { callCost } from "./usage.js";
import { node as nodeStatus, shown } from "./status.js";

/** The execution `x` (its node.started `ev`) ran in agent `ev.agent`: record it on its group. */
export function joinAgent(m, x, ev) {
  const name = ev.agent;
  let g = m.agents.get(name);
  if (!g) {
    const path = Array.isArray(ev.agentPath) && ev.agentPath.length ? ev.agentPath.map(String) : [name];
    g = { name, path, index: m.agents.size, execs: [], held: 0, latest: null, status: "running", nodes: new Set() };
    m.agents.set(name, g);
  }
  x.agent = g.name; // the group's string, shared by its executions
  x.agentPath = g.path;
  g.execs.push(x);
  g.nodes.add(x.nodeId);
  const n = m.nodes.get(x.nodeId);
  if (n) {
    if (!n.agents) n.agents = [];
    if (!n.agents.includes(name)) n.agents.push(name); // a shared tool: every agent that called it
  }
}

/** One status change of an execution of a group (the node rule, status.js). */
export function settleAgent(m, x, before, after, started) {
  const g = m.agents.get(x.agent);
  if (!g) return;
  if (before === "held" && after !== "held") g.held -= 1;
  else if (before !== "held" && after === "held") g.held += 1;
  if (started || !g.latest) g.latest = x;
  g.status = shown(nodeStatus(g.held > 0, g.latest ? g.latest.state : null), m.runStatus);
}

/** Per agent: model steps, tokens, cost (reported, or ≈ at the run's rate: usage.js `callCost`)
 * and time from its first call's start to its last call's end. */
export function agentTotals(m, runUsage) {
  const out = [];
  for (const g of m.agents.values()) {
    let tokens = 0;
    let cost = null;
    let estimated = false;
    let start = null;
    let end = null;
    for (const x of g.execs) {
      const u = x.usage;
      if (u) {
        tokens += (u.inputTokens || 0) + (u.outputTokens || 0);
        const c = callCost(u, runUsage, x.attrs && typeof x.attrs.model === "string" ? x.attrs.model : null);
        if (c) {
          cost = (cost || 0) + c.usd;
          estimated = estimated || c.how === "≈";
        }
      }
      if (typeof x.startTs === "number" && (start === null || x.startTs < start)) start = x.startTs;
      const e = typeof x.endTs === "number" ? x.endTs : null;
      if (e !== null && (end === null || e > end)) end = e;
    }
    out.push({ name: g.name, path: g.path, status: g.status, tokens, cost, estimated,
      durationMs: start !== null && end !== null ? end - start : null,
      steps: g.execs.filter((x) => x.kind === "llm").length });
  }
  return out;
}
