// The executions of a run in start order, virtualised: only the rows in view (plus a margin) exist
// in the DOM, so a run with 10,000 executions scrolls like one with ten.

import { h, schedule } from "./frame.js";
import { ms } from "./format.js";
import { store } from "./state.js";
import { callCost, costText } from "./usage.js";

const ROW = 26;
const OVERSCAN = 12;

export class TimelineView {
  constructor(onSelect) {
    this.onSelect = onSelect;
    this.model = null;
    this.el = h("section", { class: "timeline", "aria-label": "Timeline" });
    // A team run's timeline can show one agent's executions (docs/viewer.md, "Teams of agents").
    this.agentFilter = h("select", { class: "tl-agent", "aria-label": "Show the executions of", hidden: true });
    this.agentFilter.addEventListener("change", () => {
      this.agent = this.agentFilter.value || null;
      this.scroller.scrollTop = 0;
      this.render();
    });
    this.agent = null;
    this.head = h("div", { class: "tl-head" }, h("span", null, "Timeline"), this.agentFilter, h("span", { class: "tl-count" }));
    this.scroller = h("div", { class: "tl-scroll", tabindex: "0", role: "list", "aria-label": "Executions" });
    this.spacer = h("div", { class: "tl-spacer" });
    this.scroller.append(this.spacer);
    this.el.append(this.head, this.scroller);
    this.follow = true;
    this.scroller.addEventListener("scroll", () => {
      const s = this.scroller;
      this.follow = s.scrollTop + s.clientHeight >= s.scrollHeight - ROW * 2;
      schedule("timeline", () => this.render());
    }, { passive: true });
    this.scroller.addEventListener("click", (ev) => {
      const row = ev.target.closest(".tl-row");
      if (!row || !this.model) return;
      const x = (this.shown || this.model.order)[Number(row.dataset.index)];
      if (x) this.onSelect(x.nodeId, x.key);
    });
  }

  setModel(model) {
    this.model = model;
    this.agent = null;
    this.agentKey = "";
    this.follow = false;
    this.scroller.scrollTop = 0;
    this.render();
  }

  /** The agent picker: shown for a run of two agents or more, its options the run's agents. */
  syncAgents(m) {
    const names = m && m.agents ? [...m.agents.keys()] : [];
    const key = names.join("\n");
    if (key === this.agentKey) return;
    this.agentKey = key;
    this.agentFilter.hidden = names.length < 2;
    this.agentFilter.replaceChildren(h("option", { value: "" }, "All agents"),
      ...names.map((a) => h("option", { value: a, selected: a === this.agent }, a)));
  }

  /** The rows shown: every execution, or the chosen agent's. One agent's are kept and only the
   * executions added since are looked at: a filter of a 500,000-execution run in every frame of a
   * scroll took longer than the frame. */
  rows() {
    const m = this.model;
    if (!m) return [];
    if (!this.agent) return m.order;
    const c = this.agentRows;
    if (!c || c.model !== m || c.agent !== this.agent || c.seen > m.order.length) {
      this.agentRows = { model: m, agent: this.agent, seen: 0, rows: [] };
    }
    const cache = this.agentRows;
    for (let i = cache.seen; i < m.order.length; i++) if (m.order[i].agent === this.agent) cache.rows.push(m.order[i]);
    cache.seen = m.order.length;
    return cache.rows;
  }

  render() {
    const m = this.model;
    this.syncAgents(m);
    const rows = this.rows();
    this.shown = rows;
    this.head.querySelector(".tl-count").textContent = m && m.summaryOnly ? "loading…" : `${rows.length} executions`;
    if (this.spacerHeight !== rows.length * ROW) { // an unchanged height is not written (no relayout)
      this.spacerHeight = rows.length * ROW;
      this.spacer.style.height = `${this.spacerHeight}px`;
    }
    if (this.follow && rows.length) this.scroller.scrollTop = rows.length * ROW;
    const top = this.scroller.scrollTop;
    const height = this.scroller.clientHeight || 600;
    const first = Math.max(0, Math.floor(top / ROW) - OVERSCAN);
    const last = Math.min(rows.length, Math.ceil((top + height) / ROW) + OVERSCAN);
    const t0 = m && m.t0 !== null ? m.t0 : 0;
    const span = m && m.tEnd !== null ? Math.max(1, m.tEnd - t0) : 1;
    // The ~50 row elements stay and are filled again (in index order): rebuilding them in every
    // frame of a scroll made ~400 elements a frame for the collector, whose pauses then also
    // traced the run's executions.
    const rowEls = this.rowEls || (this.rowEls = []);
    const want = Math.max(0, last - first);
    while (rowEls.length < want) rowEls.push(newRow());
    while (rowEls.length > want) rowEls.pop().remove();
    for (let k = 0; k < want; k++) {
      const el = rowEls[k];
      this.fill(el, rows[first + k], first + k, t0, span);
      if (el.parentNode !== this.scroller) this.scroller.append(el);
    }
  }

  fill(el, x, i, t0, span) {
    const ran = x.durationMs !== null ? x.durationMs - (x.heldMs || 0) : null;
    const left = ((x.startTs - t0) / span) * 100;
    const end = x.endTs ?? this.model.tEnd ?? x.startTs;
    const width = Math.max(0.6, ((end - x.startTs) / span) * 100);
    const sel = store.selectedExec === x.key ? " selected" : "";
    const [state, name, time, cost, track] = el.children;
    set(el, "className", `tl-row state-${x.status}${x.simulated ? " simulated" : ""}${sel}`);
    set(el.dataset, "index", String(i));
    set(el.style, "transform", `translateY(${i * ROW}px)`);
    attr(state, "title", x.simulated ? "simulated: the call did not run (safe mode)" : null);
    set(state, "textContent", x.status);
    attr(name, "title", x.agent ? `${x.nodeId} (agent ${x.agent})` : x.nodeId);
    set(name, "textContent", x.agent && this.model.agents.size > 1 ? `${x.agent} · ${x.name}` : x.name);
    set(time, "textContent", ran === null ? "…" : ms(ran));
    // What a model call cost (usage.js: reported, else ≈ at the run's rate for its model)
    set(cost, "textContent", x.usage ? costText(callCost(x.usage, store.runs.get(store.runId)?.usage, x.attrs?.model)) : "");
    set(track.firstChild.style, "left", `${left}%`);
    set(track.firstChild.style, "width", `${Math.min(width, 100 - left)}%`);
  }

  /** Bring an execution into view (keyboard navigation, a click on the graph). A row already in
   * view is only marked: on a huge run a click must not rebuild and relayout the rows. */
  reveal(key) {
    if (!this.model) return;
    const x = this.model.execs.get(key);
    if (!x) return;
    const at = this.agent ? this.rows().indexOf(x) : x.index;
    if (at < 0) return; // another agent's: not shown while the timeline shows one agent
    const y = at * ROW;
    const s = this.scroller;
    this.follow = false;
    if (y < s.scrollTop || y > s.scrollTop + s.clientHeight - ROW) {
      s.scrollTop = Math.max(0, y - s.clientHeight / 2);
      this.render();
    } else {
      this.markSelected();
    }
  }

  /** The selection changed: move the "selected" mark between the rows that exist. */
  markSelected() {
    const order = this.shown || (this.model ? this.model.order : []);
    for (const el of this.scroller.children) {
      if (el === this.spacer) continue;
      const x = order[Number(el.dataset.index)];
      el.classList.toggle("selected", !!x && x.key === store.selectedExec);
    }
  }
}

function newRow() {
  return h("div", { class: "tl-row", role: "listitem" },
    h("span", { class: "tl-state" }), h("span", { class: "tl-name" }), h("span", { class: "tl-time" }),
    h("span", { class: "tl-cost" }), h("span", { class: "tl-track" }, h("span", { class: "tl-bar" })));
}

/** Write a property only when it changes (an equal write still makes a new text node or style). */
function set(target, key, value) {
  if (target[key] !== value) target[key] = value;
}

function attr(el, name, value) {
  if (value === null) el.removeAttribute(name);
  else if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}
