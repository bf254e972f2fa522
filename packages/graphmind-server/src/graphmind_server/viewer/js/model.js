// One run's state, folded from its events. The graph reads the per-node aggregates (few nodes),
// the timeline reads the executions in start order (many), so neither walks the raw events again.
// Statuses follow the one rule the hub runs too (status.js); the run's own status is the hub's.

import { joinAgent, settleAgent } from "./agents.js";
import { STARTS, execution, node as nodeStatus, shown, splitNodeId } from "./status.js";

const execKey = (nodeId, instanceId) => `${nodeId}\u0000${instanceId}`;

// What most executions never get (streamed tokens, failed attempts, gate answers) is one shared,
// frozen value until they do: a million-event run has 500,000 executions in the page.
const NO_TOKENS = Object.freeze({ text: "", reasoning: "", toolArgs: "" });
const NO_CHARS = Object.freeze({ text: 0, reasoning: 0, toolArgs: 0 });
const NONE = Object.freeze([]);

export class RunModel {
  constructor(id) {
    this.id = id;
    /** @type {Map<string, object>} nodeId -> aggregate */
    this.nodes = new Map();
    /** @type {Map<string, object>} exec key -> execution */
    this.execs = new Map();
    /** executions in start order (the timeline's rows) */
    this.order = [];
    this.seen = new Set();
    this.eventCount = 0;
    this.t0 = null;
    this.tEnd = null;
    this.runStatus = null; // the hub's (setRunStatus), never derived from the events here
    this.agentNode = null;
    this.replayOf = null; // run.started's replayOf / forkedAt (issue 31)
    this.forkedAt = null;
    // The run's agents (docs/protocol.md, "Agents"), in the order they first ran: name -> group
    // (its path, its executions, its status by the node rule: agents.js).
    this.agents = new Map();
    // What changed since the last render, so a frame redraws only that.
    this.dirtyNodes = new Set();
    this.dirtyExecs = new Set();
    this.orderChanged = false;
    // A huge run (values.js): a start's input and an end's output stay in the hub, by seq.
    this.light = false;
  }

  /** A node's aggregate; a kind or name an event gives wins, else they come from the id. */
  node(nodeId, kind, name) {
    let n = this.nodes.get(nodeId);
    if (!n) {
      const [k, nm] = splitNodeId(nodeId);
      n = { nodeId, kind: str(kind, k), name: str(name, nm), executions: 0,
        status: "pending", hinted: false, ungated: false, held: 0, latest: null, execs: [] };
      this.nodes.set(nodeId, n);
    } else {
      n.kind = str(kind, n.kind);
      n.name = str(name, n.name);
    }
    return n;
  }

  /** The execution an event is about (created on its first event); `describes`: the event's kind
   * and name count for the node (every event but a token batch). */
  exec(ev, describes = true) {
    const instanceId = str(ev.instanceId, "");
    const key = execKey(ev.nodeId, instanceId);
    const described = describes ? this.node(ev.nodeId, ev.kind, ev.name) : null;
    let x = this.execs.get(key);
    if (!x) {
      const n = described || this.node(ev.nodeId);
      // The node's own id string, not this event's copy: one string per node, not per execution.
      x = { key, nodeId: n.nodeId, instanceId, kind: n.kind, name: n.name,
        index: this.order.length, startTs: ev.ts, endTs: null, state: "running", status: "running", input: undefined,
        output: undefined, error: null, durationMs: null, heldMs: 0, usage: null, injected: false,
        ungated: false, attrs: null, parent: null, tokens: NO_TOKENS,
        hiddenChars: NO_CHARS, deltaCount: 0, redaction: null,
        gate: null, resumes: NONE, seq: ev.seq,
        // Issues 30 and 31: an input edited at a gate (and the original), every failed attempt of
        // a retried call, a value replayed from a recording.
        edited: false, originalInput: undefined, attempts: NONE, replayed: false,
        // docs/effects.md: the call's effect class ({class, source, rule|hint}) and a simulated ending
        effect: null, simulated: false, simulatedFrom: null };
      this.execs.set(key, x);
      this.order.push(x);
      this.orderChanged = true;
      n.execs.push(x);
    }
    return x;
  }

  /** The status rule for one event of execution `x` (status.js; store/status.py keeps the same
   * per node: the latest execution and how many are held). */
  settle(x, ev) {
    const n = this.nodes.get(x.nodeId);
    const before = x.state;
    const after = execution(before, ev);
    x.state = after;
    if (before === "held" && after !== "held") n.held -= 1;
    else if (before !== "held" && after === "held") n.held += 1;
    if (STARTS.has(ev.type)) {
      n.executions += 1;
      n.latest = x;
    } else if (!n.latest) n.latest = x;
    x.status = shown(after, this.runStatus);
    if (x.agent) settleAgent(this, x, before, after, STARTS.has(ev.type));
    this.refreshNode(n);
    this.dirtyExecs.add(x.key);
  }

  refreshNode(n) {
    n.status = shown(nodeStatus(n.held > 0, n.latest ? n.latest.state : null), this.runStatus);
    this.dirtyNodes.add(n.nodeId);
  }

  /** The run's status as the hub derived it (a Run's `status`): what is shown depends on it. */
  setRunStatus(status) {
    const was = this.runStatus;
    this.runStatus = status ?? null;
    if (this.summaryOnly) {
      // The hub's statuses as shown when the summary was read (the folded model replacing it
      // asks again): a run abandoned since shows it on its open nodes now.
      for (const n of this.nodes.values()) {
        const s = shown(n.status, this.runStatus);
        if (s !== n.status) {
          n.status = s;
          this.dirtyNodes.add(n.nodeId);
        }
      }
      return;
    }
    if (was === this.runStatus || (was !== "abandoned" && status !== "abandoned")) return;
    for (const x of this.order) {
      const s = shown(x.state, this.runStatus);
      if (s !== x.status) {
        x.status = s;
        this.dirtyExecs.add(x.key);
      }
    }
    for (const n of this.nodes.values()) this.refreshNode(n);
    for (const g of this.agents.values()) g.status = shown(nodeStatus(g.held > 0, g.latest ? g.latest.state : null), this.runStatus);
  }

  touchTime(ts) {
    if (typeof ts !== "number") return;
    if (this.t0 === null || ts < this.t0) this.t0 = ts;
    if (this.tEnd === null || ts > this.tEnd) this.tEnd = ts;
  }

  /** Fold one stored event in. Returns false for a duplicate (same seq seen before). */
  apply(ev) {
    if (!ev || typeof ev !== "object") return false;
    if (typeof ev.seq === "number") {
      if (this.seen.has(ev.seq)) return false;
      this.seen.add(ev.seq);
    }
    this.eventCount += 1;
    this.touchTime(ev.ts);
    if (NODE_EVENTS.has(ev.type) && !str(ev.nodeId, "")) return true; // stored, not about a node
    switch (ev.type) {
      case "run.started": {
        if (!str(ev.nodeId, "")) break; // a run without an agent node
        const x = this.exec({ ...ev, kind: ev.kind || "agent", instanceId: str(ev.instanceId, ev.runId) });
        x.input = ev.meta ?? null;
        x.attrs = { app: ev.app, implicit: ev.implicit };
        if (typeof ev.replayOf === "string" && ev.replayOf) this.replayOf = ev.replayOf;
        if (ev.forkedAt !== undefined && ev.forkedAt !== null) this.forkedAt = ev.forkedAt;
        this.agentNode = ev.nodeId;
        this.settle(x, ev);
        break;
      }
      case "run.finished": {
        const n = this.agentNode ? this.nodes.get(this.agentNode) : null;
        const x = n && n.latest;
        if (x) {
          x.endTs = ev.ts;
          x.durationMs = ev.durationMs ?? null;
          if (ev.error) x.error = ev.error;
          this.settle(x, ev);
        }
        break;
      }
      case "node.started": {
        const x = this.exec(ev);
        x.startTs = ev.ts;
        if (this.light && typeof ev.seq === "number") {
          x.lazy = true;
          x.inputSeq = ev.seq;
          x.input = undefined;
        } else x.input = ev.input;
        x.attrs = ev.attrs ?? null;
        x.parent = this.sameParent(ev.parentInstanceId ?? null);
        if (str(ev.agent, "")) joinAgent(this, x, ev);
        if (ev.effect && typeof ev.effect.class === "string") x.effect = ev.effect;
        if (ev.ungated) {
          x.ungated = true;
          this.node(ev.nodeId).ungated = true;
        }
        if (ev.redaction) x.redaction = mergeRedaction(x.redaction, ev.redaction);
        markEditReplay(x, ev);
        this.settle(x, ev);
        break;
      }
      case "node.attempt": {
        // One failed attempt of a retried call, kept with its own input, error and duration.
        const x = this.exec(ev, false);
        if (x.attempts === NONE) x.attempts = [];
        x.attempts.push({ attempt: typeof ev.attempt === "number" ? ev.attempt : x.attempts.length + 1,
          input: ev.input, error: ev.error ?? null, durationMs: ev.durationMs ?? null, ts: ev.ts });
        this.dirtyExecs.add(x.key);
        break;
      }
      case "node.token": {
        const x = this.exec(ev, false);
        if (x.tokens === NO_TOKENS) {
          x.tokens = { ...NO_TOKENS };
          x.hiddenChars = { ...NO_CHARS };
        }
        for (const d of Array.isArray(ev.deltas) ? ev.deltas : []) {
          const slot = d.t === "reasoning" ? "reasoning" : d.t === "tool-args" ? "toolArgs" : "text";
          if (typeof d.v === "string" && d.v) x.tokens[slot] += d.v;
          if (typeof d.chars === "number") x.hiddenChars[slot] += d.chars;
          x.deltaCount += 1;
        }
        if (ev.redaction) x.redaction = mergeRedaction(x.redaction, ev.redaction);
        this.dirtyExecs.add(x.key);
        break;
      }
      case "node.finished":
      case "node.error": {
        const x = this.exec(ev);
        x.endTs = ev.ts;
        x.durationMs = ev.durationMs ?? null;
        x.heldMs = ev.heldMs ?? 0;
        const lazyEnd = this.light && typeof ev.seq === "number";
        if (lazyEnd) {
          x.lazy = true;
          x.outputSeq = ev.seq; // its output, and an edited input, are read from the hub
        }
        if (ev.type === "node.error") {
          x.error = ev.error ?? { name: "Error", message: "" };
          x.cancelled = ev.cancelled === true; // the app gave up on the call (a cancelled task, an interrupt)
        } else {
          if (!lazyEnd) x.output = ev.output;
          x.injected = ev.injected === true;
          x.simulated = ev.simulated === true; // the body did not run (safe mode): never `injected`
          x.simulatedFrom = typeof ev.simulatedFrom === "string" ? ev.simulatedFrom : null;
          x.usage = ev.usage ?? null;
          x.cutShort = ev.cutShort === true;
        }
        if (ev.ungated) x.ungated = true;
        if (ev.redaction) x.redaction = mergeRedaction(x.redaction, ev.redaction);
        markEditReplay(x, ev);
        this.settle(x, ev);
        break;
      }
      case "graph.hint": {
        for (const h of Array.isArray(ev.nodes) ? ev.nodes : []) {
          if (!h || !str(h.nodeId, "")) continue;
          // A hint names a node that may run; it never changes one the run already has.
          const n = this.nodes.get(h.nodeId) || this.node(h.nodeId, h.kind, h.name);
          n.hinted = true;
          if (h.ungated) n.ungated = true;
          this.dirtyNodes.add(h.nodeId);
        }
        break;
      }
      case "exec.paused": {
        const x = this.exec(ev);
        x.gate = { gateId: ev.gateId, gate: ev.gate, reason: ev.reason, since: ev.ts, attempt: ev.attempt };
        this.settle(x, ev);
        break;
      }
      case "exec.resumed": {
        const x = this.exec(ev);
        if (x.resumes === NONE) x.resumes = [];
        x.resumes.push({ gate: ev.gate, action: ev.action, heldMs: ev.heldMs, by: ev.by });
        x.gate = null;
        this.settle(x, ev);
        break;
      }
      default:
        break; // a newer event type: stored and counted, not drawn
    }
    return true;
  }

  /** The parent id, the previous execution's string when it is the same (most calls of a run have
   * one parent: one string kept, not one per execution). */
  sameParent(p) {
    if (p !== this.lastParent) this.lastParent = p;
    return this.lastParent;
  }

  /** Take what changed since the last call (the renderers' work list). */
  takeDirty() {
    const out = { nodes: this.dirtyNodes, execs: this.dirtyExecs, order: this.orderChanged };
    this.dirtyNodes = new Set();
    this.dirtyExecs = new Set();
    this.orderChanged = false;
    return out;
  }
}

// The events about one node execution (a newer type is stored and counted, not drawn).
const NODE_EVENTS = new Set(["node.started", "node.token", "node.finished", "node.error", "node.attempt", "exec.paused", "exec.resumed"]);

/** A light run's execution given its values: its start's input, its end's output and edit marks,
 * as apply() folds them (values.js fetched the two events). */
export function fillValues(x, start, end) {
  if (start) x.input = start.input;
  if (end && end.type === "node.finished") x.output = end.output;
  if (end) markEditReplay(x, end);
}

/** An event's marks for an edited input (with the original) and a replayed value. */
function markEditReplay(x, ev) {
  if (ev.edited === true) {
    x.edited = true;
    if (ev.originalInput !== undefined) x.originalInput = ev.originalInput;
    // At a before gate node.started went out with the original: the end event has the edit.
    if (ev.type !== "node.started" && ev.input !== undefined) x.input = ev.input;
  }
  if (ev.replayed === true) x.replayed = true;
}

/** A non-empty string, else the default (as the hub reads an event's optional strings). */
const str = (value, fallback) => (typeof value === "string" && value ? value : fallback);

function mergeRedaction(a, b) {
  if (!a) return { ...b };
  return { ...a, ...b, keys: [...new Set([...(a.keys || []), ...(b.keys || [])])] };
}

/** Node aggregates from GET /api/runs/{id}: drawn while the events are still loading. */
export function modelFromSummary(id, summary) {
  const m = new RunModel(id);
  m.runStatus = summary.status ?? null;
  for (const s of summary.nodes || []) {
    const n = m.node(s.nodeId, s.kind, s.name);
    n.executions = s.executions || 0;
    n.status = s.status || "pending";
    n.hinted = n.status === "pending";
    n.ungated = s.ungated === true;
  }
  m.summaryOnly = true;
  return m;
}
