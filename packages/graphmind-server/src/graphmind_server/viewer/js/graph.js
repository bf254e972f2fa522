// The run's graph: positioned boxes over an SVG edge layer. The agent sits on top, `llm:step`
// below it, one box per tool in a row below that, other kinds (retriever, chain, custom) beside
// the model row. Layout runs only when the set of nodes changes; a state change touches one box.
// A team run (two agents or more) is drawn in lanes, one group per agent (lanes.js).

import { warningCounts } from "./context.js";
import { effectText } from "./effects.js";
import { h } from "./frame.js";
import { laneLayout } from "./lanes.js";
import { store, isBreakpoint } from "./state.js";

const W = 168;
const MIN_W = 124;
const H = 76;
const GAP_X = 20;
const GAP_Y = 54;
const PAD = 20;
const SVG_NS = "http://www.w3.org/2000/svg";

export class GraphView {
  constructor(onSelect) {
    this.onSelect = onSelect;
    this.el = h("div", { class: "graph", role: "group", "aria-label": "Graph" });
    this.canvas = h("div", { class: "graph-canvas" });
    this.svg = document.createElementNS(SVG_NS, "svg");
    this.svg.setAttribute("class", "graph-edges");
    this.svg.setAttribute("aria-hidden", "true");
    this.canvas.append(this.svg);
    this.el.append(this.canvas);
    this.boxes = new Map();
    this.groups = new Map(); // agent -> its lane's element (a team run)
    this.collapsed = new Set(); // agents whose lane shows its header only
    this.layoutKey = "";
    this.width = 0;
    this.model = null;
    // The space for the graph changes when the detail panel opens or the window resizes.
    new ResizeObserver(() => {
      if (this.model && Math.abs((this.el.parentElement?.clientWidth || 0) - this.width) > 40) {
        this.layoutKey = "";
        this.render(this.model, null);
      }
    }).observe(this.el);
  }

  /** Redraw what changed: all boxes after a layout, else only the dirty ones. */
  render(model, dirtyNodes) {
    if (!model) return;
    this.model = model;
    const nodes = [...model.nodes.values()];
    const key = `${nodes.map((n) => n.nodeId).join("\n")}\n@${[...(model.agents?.keys() || [])].join("\n")}`;
    const width = this.el.parentElement?.clientWidth || 800;
    if (key !== this.layoutKey || Math.abs(width - this.width) > 40) {
      this.layoutKey = key;
      this.width = width;
      this.layout(nodes, width);
      for (const n of nodes) this.paint(n);
      if (this.afterLayout) this.afterLayout(); // fit on open (panzoom.js), before the held node is revealed
      this.revealHeld(true);
      return;
    }
    for (const id of dirtyNodes || []) {
      const n = model.nodes.get(id);
      if (n) this.paint(n);
    }
    if (this.groups.size && dirtyNodes?.size) this.paintGroups();
    this.revealHeld(false);
  }

  /** A held node is the one the person must see: scroll the graph (never the page) to it when it
   * becomes held, and again after a layout (a panel opened, the window resized). */
  revealHeld(afterLayout) {
    const held = [...this.boxes.entries()].find(([id]) => this.model.nodes.get(id)?.status === "held");
    const id = held ? held[0] : null;
    if (!id || (!afterLayout && id === this.revealed)) {
      this.revealed = id;
      return;
    }
    this.revealed = id;
    const el = held[1];
    const wrap = this.el.parentElement;
    if (!wrap) return;
    requestAnimationFrame(() => {
      const w = wrap.getBoundingClientRect();
      const r = el.getBoundingClientRect();
      if (r.left < w.left || r.right > w.right) wrap.scrollLeft += r.left - w.left - (w.width - r.width) / 2;
      if (r.top < w.top || r.bottom > w.bottom) wrap.scrollTop += r.top - w.top - (w.height - r.height) / 2;
    });
  }

  /** Repaint every box (selection or breakpoints changed). */
  repaintAll(model) {
    if (!model) return;
    for (const n of model.nodes.values()) this.paint(n);
  }

  layout(nodes, width) {
    if (this.model?.agents?.size >= 2) {
      this.layoutLanes(nodes, width);
      return;
    }
    for (const el of this.groups.values()) el.remove();
    this.groups.clear();
    const agents = nodes.filter((n) => n.kind === "agent");
    const llms = nodes.filter((n) => n.kind === "llm");
    const tools = nodes.filter((n) => n.kind === "tool");
    const others = nodes.filter((n) => !["agent", "llm", "tool"].includes(n.kind));
    // Rows never wrap (an edge into a wrapped row would cross the row above it): boxes narrow to
    // fit, down to MIN_W, and past that the graph scrolls sideways.
    const rows = [agents, [...llms, ...others], tools].filter((r) => r.length);
    const widest = Math.max(1, ...rows.map((r) => r.length));
    const w = Math.max(MIN_W, Math.min(W, Math.floor((width - 2 * PAD - (widest - 1) * GAP_X) / widest)));
    this.contentWidth = 2 * PAD + widest * w + (widest - 1) * GAP_X; // the canvas is at least the space's width
    const totalW = Math.max(width - 2, this.contentWidth);
    const pos = new Map();
    rows.forEach((row, i) => {
      const rowW = row.length * w + (row.length - 1) * GAP_X;
      const x0 = (totalW - rowW) / 2;
      row.forEach((n, j) => pos.set(n.nodeId, { x: x0 + j * (w + GAP_X), y: PAD + i * (H + GAP_Y) }));
    });
    const totalH = PAD * 2 + rows.length * H + Math.max(0, rows.length - 1) * GAP_Y;
    this.canvas.style.width = `${totalW}px`;
    this.canvas.style.height = `${totalH}px`;
    this.canvas.style.setProperty("--node-w", `${w}px`);
    this.svg.setAttribute("width", String(totalW));
    this.svg.setAttribute("height", String(totalH));

    // Boxes: keep the existing element of a node, drop the ones that went away.
    const keep = new Set(nodes.map((n) => n.nodeId));
    for (const [id, el] of this.boxes) {
      if (!keep.has(id)) {
        el.remove();
        this.boxes.delete(id);
      }
    }
    for (const n of nodes) {
      let el = this.boxes.get(n.nodeId);
      if (!el) {
        el = this.box(n);
        this.boxes.set(n.nodeId, el);
        this.canvas.append(el);
      }
      const p = pos.get(n.nodeId);
      el.style.transform = `translate(${p.x}px, ${p.y}px)`;
    }

    // Edges: agent → model step → tools; agent → other kinds. Without a model node the agent
    // feeds the tools directly.
    const edges = [];
    const top = agents[0];
    const toolParents = llms.length ? llms : top ? [top] : [];
    if (top) for (const n of [...llms, ...others]) edges.push([top, n]);
    for (const p of toolParents) for (const t of tools) edges.push([p, t]);
    this.svg.replaceChildren();
    for (const [a, b] of edges) {
      const pa = pos.get(a.nodeId);
      const pb = pos.get(b.nodeId);
      const x1 = pa.x + w / 2;
      const y1 = pa.y + H;
      const x2 = pb.x + w / 2;
      const y2 = pb.y;
      const my = (y1 + y2) / 2;
      const path = document.createElementNS(SVG_NS, "path");
      path.setAttribute("d", `M${x1},${y1} C${x1},${my} ${x2},${my} ${x2},${y2}`);
      path.setAttribute("class", "edge");
      path.dataset.to = b.nodeId;
      this.svg.append(path);
    }
  }

  /** A team run: one lane per agent (lanes.js), handoff arrows between them. */
  layoutLanes(nodes, width) {
    const L = laneLayout(this.model, nodes, width, { W, MIN_W, H, GAP_X, GAP_Y, PAD }, this.collapsed);
    this.contentWidth = L.contentWidth;
    this.canvas.style.width = `${L.totalW}px`;
    this.canvas.style.height = `${L.totalH}px`;
    this.canvas.style.setProperty("--node-w", `${L.w}px`);
    this.svg.setAttribute("width", String(L.totalW));
    this.svg.setAttribute("height", String(L.totalH));
    const lanes = new Set(L.lanes.map((l) => l.agent));
    for (const [a, el] of this.groups) {
      if (!lanes.has(a)) {
        el.remove();
        this.groups.delete(a);
      }
    }
    for (const l of L.lanes) {
      let el = this.groups.get(l.agent);
      if (!el) {
        el = this.group(l.agent);
        this.groups.set(l.agent, el);
        this.canvas.insertBefore(el, this.svg); // under the edges and the boxes
      }
      Object.assign(el.style, { transform: `translate(${l.x}px, ${l.y}px)`, width: `${l.w}px`, height: `${l.h}px` });
      el.classList.toggle("collapsed", l.collapsed);
      el.querySelector(".ag-toggle").setAttribute("aria-expanded", String(!l.collapsed));
      el.querySelector(".ag-toggle").title = `${l.collapsed ? "Expand" : "Collapse"} ${l.agent || "calls of no agent"} (${l.count} nodes)`;
    }
    const keep = new Set(nodes.map((n) => n.nodeId));
    for (const [id, el] of this.boxes) {
      if (!keep.has(id)) {
        el.remove();
        this.boxes.delete(id);
      }
    }
    for (const n of nodes) {
      let el = this.boxes.get(n.nodeId);
      if (!el) {
        el = this.box(n);
        this.boxes.set(n.nodeId, el);
        this.canvas.append(el);
      }
      const p = L.pos.get(n.nodeId);
      el.hidden = L.hidden.has(n.nodeId);
      el.style.transform = `translate(${p.x}px, ${p.y}px)`;
    }
    this.svg.replaceChildren(arrowHead());
    const end = (at, other) => {
      if (typeof at === "string") return { ...L.pos.get(at), w: L.w, h: H };
      return { x: at.lane.x, y: at.lane.y, w: at.lane.w, h: 30, lane: true };
    };
    for (const [a, b, cls] of L.edges) {
      const pa = end(a);
      const pb = end(b);
      if (!pa || !pb || pa.x === undefined || pb.x === undefined) continue;
      let d;
      if (pb.lane && (cls.includes("handoff") || cls.includes("shared"))) { // sideways, into the lane's header
        const right = pb.x >= pa.x + pa.w;
        const x1 = right ? pa.x + pa.w : pa.x;
        const y1 = pa.y + pa.h / 2;
        const x2 = right ? pb.x : pb.x + pb.w;
        const y2 = pb.y + pb.h / 2;
        const mx = (x1 + x2) / 2;
        d = `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`;
      } else {
        const x1 = pa.x + pa.w / 2;
        const y1 = pa.y + pa.h;
        const x2 = pb.x + pb.w / 2;
        const y2 = pb.y;
        const my = (y1 + y2) / 2;
        d = `M${x1},${y1} C${x1},${my} ${x2},${my} ${x2},${y2}`;
      }
      const path = document.createElementNS(SVG_NS, "path");
      path.setAttribute("d", d);
      path.setAttribute("class", cls);
      if (cls.includes("handoff")) path.setAttribute("marker-end", "url(#gm-arrow)");
      if (typeof b === "string") path.dataset.to = b;
      else path.classList.add("edge-live"); // into a lane: its agent ran

      this.svg.append(path);
    }
    this.paintGroups();
  }

  group(agent) {
    const toggle = h("button", { type: "button", class: "ag-toggle", "aria-expanded": "true" }, h("span", { class: "ag-caret", "aria-hidden": "true" }));
    const el = h("div", { class: "agroup", role: "group", "aria-label": `Agent ${agent || "(none)"}`, dataset: { agent } },
      h("div", { class: "agroup-head" }, toggle, h("span", { class: "ag-name" }, agent || "no agent"), h("span", { class: "ag-state" })));
    toggle.addEventListener("click", () => {
      if (this.collapsed.has(agent)) this.collapsed.delete(agent);
      else this.collapsed.add(agent);
      this.layoutKey = "";
      this.render(this.model, null);
    });
    return el;
  }

  /** Each lane's status: the node rule over its executions (agents.js), as a node's is shown. */
  paintGroups() {
    for (const [a, el] of this.groups) {
      const g = this.model?.agents?.get(a);
      const status = g ? g.status : "";
      el.className = `agroup state-${cls(status)}${el.classList.contains("collapsed") ? " collapsed" : ""}`;
      el.querySelector(".ag-state").textContent = g ? `${status} · ${g.execs.length} call${g.execs.length === 1 ? "" : "s"}` : "";
    }
  }

  box(n) {
    const el = h("button", { class: "gnode", type: "button", dataset: { nodeId: n.nodeId } },
      h("span", { class: "g-name" }),
      h("span", { class: "g-meta" }, h("span", { class: "g-kind" }), " · ", h("span", { class: "g-count" })),
      h("span", { class: "g-state" }),
      h("span", { class: "g-bp", "aria-hidden": "true" }),
      h("span", { class: "g-warn", hidden: true }));
    el.addEventListener("click", () => this.onSelect(n.nodeId));
    return el;
  }

  paint(n) {
    const el = this.boxes.get(n.nodeId);
    if (!el) return;
    const state = n.status;
    const effect = n.latest?.effect?.class;
    el.className = `gnode kind-${cls(n.kind)} state-${cls(state)}${n.ungated ? " ungated" : ""}${
      n.latest?.simulated ? " simulated" : ""}${effect ? ` effect-${cls(effect)}` : ""}${store.selectedNode === n.nodeId ? " selected" : ""}`;
    el.querySelector(".g-name").textContent = n.name;
    el.querySelector(".g-kind").textContent = effect && effect !== "read" ? `${n.kind} · ${effect}` : n.kind;
    el.querySelector(".g-count").textContent = `×${n.executions}`;
    // The latest execution's value came from a recording, or its input was edited (issues 30, 31).
    const fork = typeof this.model?.forkedAt === "string" ? this.model.forkedAt : "";
    const forked = fork.startsWith(`${n.nodeId}#`) && Number(fork.slice(n.nodeId.length + 1)) <= n.execs.length;
    const mark = forked ? " · forked" : n.latest?.simulated ? " · simulated" : n.latest?.replayed ? " · replayed" : n.latest?.edited ? " · edited" : "";
    el.querySelector(".g-state").textContent = (n.ungated ? `${state} · ungated` : state) + mark;
    // The Context X-ray's warnings on the latest call (context.js; drawn in a corner, no reflow).
    const warns = n.latest ? warningCounts.get(n.latest.key) || 0 : 0;
    const warn = el.querySelector(".g-warn");
    warn.hidden = !warns;
    warn.textContent = warns ? `⚠${warns > 1 ? warns : ""}` : "";
    warn.title = warns ? `${warns} context warning${warns === 1 ? "" : "s"}: open the node for its X-ray` : "";
    const bps = ["before", "after", "error"].filter((g) => isBreakpoint(n.nodeId, g));
    el.querySelector(".g-bp").textContent = bps.length ? "●" : "";
    const fx = effectText(n.latest?.effect); // the class and where it came from (effects.js)
    el.title = `${n.name}\n${n.nodeId}${fx ? `\neffect: ${fx}` : ""}${bps.length ? `\nbreakpoint: ${bps.join(", ")}` : ""}`; // full names on hover
    el.setAttribute("aria-label", `${n.name}, ${n.kind}, ${n.executions} executions, ${state}${
      n.ungated ? ", ungated" : ""}${bps.length ? `, breakpoint ${bps.join(" and ")}` : ""}${warns ? `, ${warns} context warning${warns === 1 ? "" : "s"}` : ""}`);
    el.setAttribute("aria-pressed", store.selectedNode === n.nodeId ? "true" : "false");
    // Edges into a node that never ran stay grey like the node.
    for (const p of this.svg.querySelectorAll(`path[data-to="${CSS.escape(n.nodeId)}"]`)) {
      p.classList.toggle("edge-live", n.executions > 0);
    }
  }
}

/** The arrow head of a handoff's edge. */
function arrowHead() {
  const defs = document.createElementNS(SVG_NS, "defs");
  const marker = document.createElementNS(SVG_NS, "marker");
  for (const [k, v] of Object.entries({ id: "gm-arrow", viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" })) marker.setAttribute(k, v);
  const tip = document.createElementNS(SVG_NS, "path");
  tip.setAttribute("d", "M0,0 L10,5 L0,10 z");
  tip.setAttribute("class", "handoff-tip");
  marker.append(tip);
  defs.append(marker);
  return defs;
}

function cls(s) {
  return String(s || "").replace(/[^a-z0-9_-]/gi, "_");
}
