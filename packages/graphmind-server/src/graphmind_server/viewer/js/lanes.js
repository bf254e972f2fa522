// A team run's graph (docs/viewer.md, "Teams of agents"): one lane per agent, side by side in the
// order the agents first ran, each a group box with the agent's model steps (and other calls and
// the handoffs it made) in one row and the tools it called first in the row below. The run's own
// agent node sits above the lanes. A collapsed lane is its header alone. Pure layout: positions
// and edges for graph.js to draw.

const HEAD = 30; // a lane's header (name, status, share, the collapse toggle)
const IP = 12; // padding inside a lane
const LANE_GAP = 44; // between lanes: room for a handoff's arrow
const IN_GAP_Y = 34; // between a lane's two rows
const COLLAPSED_W = 170;

/** The agent a node belongs to in the drawing: its first execution's (a handoff: its source). */
function ownerOf(n) {
  for (const x of n.execs) if (x.agent) return x.agent;
  return n.agents && n.agents.length ? n.agents[0] : "";
}

/** Positions for the lanes layout: { pos: nodeId -> {x, y}, hidden: Set of nodeIds in collapsed
 * lanes, lanes: [{agent, x, y, w, h, collapsed}], edges: [[fromNodeId|lane, toNodeId|lane, cls]],
 * w (box width), totalW, totalH, contentWidth }. */
export function laneLayout(model, nodes, width, dims, collapsed) {
  const { W, MIN_W, H, GAP_X, GAP_Y, PAD } = dims;
  const top = nodes.filter((n) => n.kind === "agent");
  const order = [...model.agents.values()].sort((a, b) => a.index - b.index).map((g) => g.name);
  const byLane = new Map(order.map((a) => [a, { steps: [], tools: [] }]));
  for (const n of nodes) {
    if (n.kind === "agent") continue;
    let owner = ownerOf(n);
    if (!byLane.has(owner)) {
      owner = "";
      if (!byLane.has("")) byLane.set("", { steps: [], tools: [] }); // calls no agent made
    }
    byLane.get(owner)[n.kind === "tool" ? "tools" : "steps"].push(n);
  }
  const names = [...byLane.keys()];
  // Box width: every lane's widest row side by side must fit; never below MIN_W (then it scrolls).
  const cols = names.map((a) => (collapsed.has(a) ? 0 : Math.max(1, byLane.get(a).steps.length, byLane.get(a).tools.length)));
  const fixed = 2 * PAD + (names.length - 1) * LANE_GAP + names.reduce((s, a, i) =>
    s + (collapsed.has(a) ? COLLAPSED_W : 2 * IP + Math.max(0, cols[i] - 1) * GAP_X), 0);
  const totalCols = cols.reduce((s, c) => s + c, 0);
  const w = totalCols ? Math.max(MIN_W, Math.min(W, Math.floor((width - fixed) / totalCols))) : W;
  const laneW = (a, i) => (collapsed.has(a) ? COLLAPSED_W : 2 * IP + cols[i] * w + (cols[i] - 1) * GAP_X);
  const lanesW = names.reduce((s, a, i) => s + laneW(a, i), 0) + (names.length - 1) * LANE_GAP;
  const contentWidth = 2 * PAD + Math.max(lanesW, top.length * w + Math.max(0, top.length - 1) * GAP_X);
  const totalW = Math.max(width - 2, contentWidth);
  const pos = new Map();
  const hidden = new Set();
  const y0 = PAD + (top.length ? H + GAP_Y : 0);
  const topW = top.length * w + Math.max(0, top.length - 1) * GAP_X;
  top.forEach((n, j) => pos.set(n.nodeId, { x: (totalW - topW) / 2 + j * (w + GAP_X), y: PAD }));
  let x = (totalW - lanesW) / 2;
  let bottom = y0;
  const lanes = [];
  names.forEach((a, i) => {
    const { steps, tools } = byLane.get(a);
    const lw = laneW(a, i);
    const rows = [steps, tools].filter((r) => r.length);
    const shut = collapsed.has(a);
    const lh = shut ? HEAD + 6 : HEAD + IP + rows.length * H + Math.max(0, rows.length - 1) * IN_GAP_Y + IP;
    lanes.push({ agent: a, x, y: y0, w: lw, h: lh, collapsed: shut, count: steps.length + tools.length });
    rows.forEach((row, r) => {
      const rowW = row.length * w + (row.length - 1) * GAP_X;
      const rx = x + (lw - rowW) / 2;
      row.forEach((n, j) => {
        pos.set(n.nodeId, { x: rx + j * (w + GAP_X), y: y0 + HEAD + IP + r * (H + IN_GAP_Y) });
        if (shut) hidden.add(n.nodeId);
      });
    });
    bottom = Math.max(bottom, y0 + lh);
    x += lw + LANE_GAP;
  });
  const edges = [];
  const laneOf = new Map(lanes.map((l) => [l.agent, l]));
  // The run's agent node feeds each root lane (an agent no other agent handed work to).
  for (const t of top) for (const l of lanes) if (l.agent && (model.agents.get(l.agent)?.path.length || 1) === 1) edges.push([t.nodeId, { lane: l }, "edge"]);
  for (const a of names) {
    const { steps, tools } = byLane.get(a);
    if (collapsed.has(a)) continue;
    const llms = steps.filter((n) => n.kind === "llm");
    for (const s of llms) for (const t of tools) edges.push([s.nodeId, t.nodeId, "edge"]);
  }
  // Handoffs: an arrow from the handoff's box to the lane of the agent it handed to.
  for (const n of nodes) {
    if (n.kind !== "handoff") continue;
    const to = n.latest?.attrs?.to ?? n.execs.find((x) => x.attrs?.to)?.attrs?.to;
    const lane = laneOf.get(to);
    if (!lane) continue;
    const from = hidden.has(n.nodeId) ? { lane: laneOf.get(ownerOf(n)) } : n.nodeId;
    edges.push([from, { lane }, "edge handoff-edge"]);
  }
  // A delegation (an agent run inside another agent's tool): from that tool to the inner lane.
  for (const g of model.agents.values()) {
    const first = g.execs[0];
    const lane = laneOf.get(g.name);
    if (!first || !first.parent || !lane) continue;
    const parent = model.order.find((x) => x.instanceId === first.parent);
    if (parent && parent.kind !== "handoff" && parent.agent && parent.agent !== g.name && pos.has(parent.nodeId)) {
      edges.push([hidden.has(parent.nodeId) ? { lane: laneOf.get(parent.agent) } : parent.nodeId, { lane }, "edge handoff-edge"]);
    }
  }
  // A node another agent called too (a shared tool) sits in its first caller's lane: a dashed
  // line joins it to each other lane that called it.
  for (const g of model.agents.values()) {
    const lane = laneOf.get(g.name);
    if (!lane) continue;
    for (const id of g.nodes) {
      const n = model.nodes.get(id);
      if (!n || !pos.has(id) || hidden.has(id) || ownerOf(n) === g.name || n.kind === "agent") continue;
      edges.push([id, { lane }, "edge shared-edge"]);
    }
  }
  return { pos, hidden, lanes, edges, w, totalW, totalH: bottom + PAD, contentWidth };
}
