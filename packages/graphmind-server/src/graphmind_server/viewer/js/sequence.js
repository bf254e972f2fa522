// The sequence view, beside the logical graph: the run's steps in execution order, each tool under
// the model step that asked for it (its parentInstanceId, else the model step it followed), calls
// that overlapped in time side by side, and every row a bar on the run's time axis (a nested
// waterfall of parents and children with their durations). A step with children folds.

import { h, schedule } from "./frame.js";
import { ms } from "./format.js";
import { on, store } from "./state.js";

const MAX_ROWS = 2000;

export class SequenceView {
  constructor(onSelect) {
    this.onSelect = onSelect;
    this.el = h("div", { class: "sequence", role: "tree", "aria-label": "Sequence", hidden: true });
    this.folded = new Set();
    this.note = h("p", { class: "muted small seq-note" });
    on("model", () => this.visible && schedule("sequence", () => this.render()));
    on("selection", () => this.visible && schedule("sequence", () => this.render()));
    this.el.addEventListener("click", (ev) => {
      const fold = ev.target.closest(".seq-fold");
      const row = ev.target.closest(".seq-row");
      if (fold && row) {
        const key = row.dataset.key;
        if (this.folded.has(key)) this.folded.delete(key);
        else this.folded.add(key);
        this.render();
        return;
      }
      const x = row && store.model?.execs.get(row.dataset.key);
      if (x) this.onSelect(x.nodeId, x.key);
    });
  }

  get visible() {
    return !this.el.hidden;
  }

  show(on) {
    this.el.hidden = !on;
    if (on) this.render();
  }

  /** The steps as a tree: roots in start order, each with its children. */
  tree(m) {
    const byInstance = new Map();
    const roots = [];
    let lastModel = null;
    const all = m.order.filter((x) => x.nodeId !== m.agentNode);
    for (const x of all.slice(0, MAX_ROWS)) {
      const item = { x, children: [] };
      byInstance.set(x.instanceId, item);
      let parent = x.parent && byInstance.get(x.parent);
      if (!parent && x.kind === "tool" && lastModel) parent = lastModel; // the step that asked for it
      if (parent && parent !== item) parent.children.push(item);
      else roots.push(item);
      if (x.kind === "llm") lastModel = item;
    }
    return { roots, total: all.length };
  }

  render() {
    const m = store.model;
    if (!m || !this.visible) return;
    const { roots, total } = this.tree(m);
    const t0 = m.t0 ?? 0;
    const span = Math.max(1, (m.tEnd ?? t0) - t0);
    const list = h("ol", { class: "seq-list" });
    const add = (items, depth, into) => {
      for (const group of overlapGroups(items)) {
        const line = group.length > 1 ? h("li", { class: "seq-parallel", "aria-label": `${group.length} calls in parallel` }) : null;
        for (const item of group) {
          const row = this.row(item, depth, t0, span, group.length > 1);
          (line || into).append(row);
          if (item.children.length && !this.folded.has(item.x.key)) {
            const sub = h("ol", { class: "seq-list" });
            add(item.children, depth + 1, sub);
            row.append(sub);
          }
        }
        if (line) into.append(line);
      }
    };
    add(roots, 0, list);
    this.note.textContent = total > MAX_ROWS ? `the first ${MAX_ROWS} of ${total} steps (the timeline has them all)` : "";
    this.el.replaceChildren(this.note, list);
  }

  row(item, depth, t0, span, parallel) {
    const x = item.x;
    const end = x.endTs ?? store.model.tEnd ?? x.startTs;
    const left = ((x.startTs - t0) / span) * 100;
    const width = Math.max(0.5, ((end - x.startTs) / span) * 100);
    const ran = x.durationMs !== null ? ms(x.durationMs - (x.heldMs || 0)) : "…";
    const kids = item.children.length;
    const sel = store.selectedExec === x.key ? " selected" : "";
    return h(parallel ? "div" : "li", { class: `seq-row state-${x.status}${sel}`, role: "treeitem", dataset: { key: x.key, nodeId: x.nodeId, depth: String(depth) },
      "aria-expanded": kids ? String(!this.folded.has(x.key)) : null },
      h("div", { class: "seq-line" },
        kids ? h("button", { type: "button", class: "ghost seq-fold", "aria-label": this.folded.has(x.key) ? "Unfold" : "Fold" },
          this.folded.has(x.key) ? "▸" : "▾") : h("span", { class: "seq-fold-gap" }),
        h("span", { class: "seq-kind" }, x.kind),
        h("span", { class: "seq-name", title: `${x.name}\n${x.nodeId}` }, x.name),
        parallel ? h("span", { class: "chip" }, "parallel") : null,
        kids && this.folded.has(x.key) ? h("span", { class: "muted small" }, `${kids} folded`) : null,
        h("span", { class: "tl-state" }, x.status),
        h("span", { class: "tl-time" }, ran)),
      h("span", { class: "tl-track seq-track" }, h("span", { class: "tl-bar", style: `left:${left}%;width:${Math.min(width, 100 - left)}%` })));
  }
}

/** Consecutive siblings whose times overlap are one group (drawn side by side). */
function overlapGroups(items) {
  const groups = [];
  let cur = [];
  let curEnd = -Infinity;
  for (const item of items) {
    const x = item.x;
    const end = x.endTs ?? Infinity;
    if (cur.length && x.kind === "tool" && cur[0].x.kind === "tool" && x.startTs < curEnd) {
      cur.push(item);
      curEnd = Math.max(curEnd, end);
    } else {
      if (cur.length) groups.push(cur);
      cur = [item];
      curEnd = end;
    }
  }
  if (cur.length) groups.push(cur);
  return groups;
}
