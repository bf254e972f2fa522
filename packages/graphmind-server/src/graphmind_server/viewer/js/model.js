// One run's state, folded from its events. The graph reads the per-node aggregates (few nodes),
// the timeline reads the executions in start order (many), so neither walks the raw events again.

const execKey = (nodeId, instanceId) => `${nodeId}\u0000${instanceId}`;

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
    this.runStatus = null;
    // What changed since the last render, so a frame redraws only that.
    this.dirtyNodes = new Set();
    this.dirtyExecs = new Set();
    this.orderChanged = false;
  }

  node(nodeId, kind, name) {
    let n = this.nodes.get(nodeId);
    if (!n) {
      n = { nodeId, kind: kind || nodeId.split(":")[0], name: name || nodeId, executions: 0,
        status: "pending", hinted: false, ungated: false, held: 0, latest: null, execs: [] };
      this.nodes.set(nodeId, n);
    } else {
      if (kind && !n.kind) n.kind = kind;
      if (name && n.name === nodeId) n.name = name;
    }
    return n;
  }

  exec(ev) {
    const key = execKey(ev.nodeId, ev.instanceId);
    let x = this.execs.get(key);
    if (!x) {
      const n = this.node(ev.nodeId, ev.kind, ev.name);
      x = { key, nodeId: ev.nodeId, instanceId: ev.instanceId, kind: n.kind, name: n.name,
        index: this.order.length, startTs: ev.ts, endTs: null, status: "running", input: undefined,
        output: undefined, error: null, durationMs: null, heldMs: 0, usage: null, injected: false,
        ungated: false, attrs: null, parent: null, tokens: { text: "", reasoning: "", toolArgs: "" },
        hiddenChars: { text: 0, reasoning: 0, toolArgs: 0 }, deltaCount: 0, redaction: null,
        gate: null, resumes: [], seq: ev.seq };
      this.execs.set(key, x);
      this.order.push(x);
      this.orderChanged = true;
      n.executions += 1;
      n.execs.push(x);
      n.latest = x;
    }
    return x;
  }

  refreshNode(nodeId) {
    const n = this.nodes.get(nodeId);
    if (!n) return;
    n.status = n.held > 0 ? "held" : n.latest ? n.latest.status : "pending";
    this.dirtyNodes.add(nodeId);
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
    switch (ev.type) {
      case "run.started": {
        const x = this.exec({ ...ev, kind: "agent", instanceId: ev.instanceId || ev.runId,
          nodeId: ev.nodeId || `agent:${ev.name}` });
        x.input = ev.meta ?? null;
        x.attrs = { app: ev.app, implicit: ev.implicit };
        this.agentKey = x.key;
        this.runStatus = "running";
        this.refreshNode(x.nodeId);
        this.dirtyExecs.add(x.key);
        break;
      }
      case "run.finished": {
        this.runStatus = ev.status;
        const x = this.agentKey ? this.execs.get(this.agentKey) : null;
        if (x) {
          x.status = ev.status === "finished" ? "ok" : ev.status === "aborted" ? "aborted" : "error";
          x.endTs = ev.ts;
          x.durationMs = ev.durationMs ?? null;
          if (ev.error) x.error = ev.error;
          this.refreshNode(x.nodeId);
          this.dirtyExecs.add(x.key);
        }
        break;
      }
      case "node.started": {
        const x = this.exec(ev);
        x.startTs = ev.ts;
        x.input = ev.input;
        x.attrs = ev.attrs ?? null;
        x.parent = ev.parentInstanceId ?? null;
        if (ev.ungated) {
          x.ungated = true;
          this.node(ev.nodeId).ungated = true;
        }
        if (ev.redaction) x.redaction = mergeRedaction(x.redaction, ev.redaction);
        this.refreshNode(ev.nodeId);
        this.dirtyExecs.add(x.key);
        break;
      }
      case "node.token": {
        const x = this.exec(ev);
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
        if (ev.type === "node.error") {
          x.error = ev.error ?? { name: "Error", message: "" };
          x.status = "error";
        } else {
          x.output = ev.output;
          x.injected = ev.injected === true;
          x.usage = ev.usage ?? null;
          x.cutShort = ev.cutShort === true;
          x.status = x.injected ? "injected" : "ok";
        }
        if (ev.ungated) x.ungated = true;
        if (ev.redaction) x.redaction = mergeRedaction(x.redaction, ev.redaction);
        this.refreshNode(ev.nodeId);
        this.dirtyExecs.add(x.key);
        break;
      }
      case "graph.hint": {
        for (const h of Array.isArray(ev.nodes) ? ev.nodes : []) {
          if (!h || typeof h.nodeId !== "string") continue;
          const n = this.node(h.nodeId, h.kind, h.name);
          n.hinted = true;
          if (h.ungated) n.ungated = true;
          this.dirtyNodes.add(h.nodeId);
        }
        break;
      }
      case "exec.paused": {
        const x = this.exec(ev);
        if (!x.gate) this.node(ev.nodeId).held += 1;
        x.gate = { gateId: ev.gateId, gate: ev.gate, reason: ev.reason, since: ev.ts };
        x.status = "held";
        this.refreshNode(ev.nodeId);
        this.dirtyExecs.add(x.key);
        break;
      }
      case "exec.resumed": {
        const x = this.exec(ev);
        if (x.gate) this.node(ev.nodeId).held = Math.max(0, this.node(ev.nodeId).held - 1);
        x.resumes.push({ gate: ev.gate, action: ev.action, heldMs: ev.heldMs, by: ev.by });
        x.gate = null;
        if (x.status === "held") x.status = ev.action === "abort" ? "aborted" : "running";
        this.refreshNode(ev.nodeId);
        this.dirtyExecs.add(x.key);
        break;
      }
      default:
        break; // a newer event type: stored and counted, not drawn
    }
    return true;
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

function mergeRedaction(a, b) {
  if (!a) return { ...b };
  return { ...a, ...b, keys: [...new Set([...(a.keys || []), ...(b.keys || [])])] };
}

/** Node aggregates from GET /api/runs/{id}: drawn while the events are still loading. */
export function modelFromSummary(id, summary) {
  const m = new RunModel(id);
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
