// The executions of a run in start order, virtualised: only the rows in view (plus a margin) exist
// in the DOM, so a run with 10,000 executions scrolls like one with ten.

import { h, schedule } from "./frame.js";
import { ms } from "./format.js";
import { store } from "./state.js";

const ROW = 26;
const OVERSCAN = 12;

export class TimelineView {
  constructor(onSelect) {
    this.onSelect = onSelect;
    this.model = null;
    this.el = h("section", { class: "timeline", "aria-label": "Timeline" });
    this.head = h("div", { class: "tl-head" }, h("span", null, "Timeline"), h("span", { class: "tl-count" }));
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
      const x = this.model.order[Number(row.dataset.index)];
      if (x) this.onSelect(x.nodeId, x.key);
    });
  }

  setModel(model) {
    this.model = model;
    this.follow = false;
    this.scroller.scrollTop = 0;
    this.render();
  }

  render() {
    const m = this.model;
    const rows = m ? m.order : [];
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
    const frag = document.createDocumentFragment();
    for (let i = first; i < last; i++) frag.append(this.row(rows[i], i, t0, span));
    // The spacer stays; the rows are replaced wholesale (only ~50 of them exist).
    this.scroller.replaceChildren(this.spacer, frag);
  }

  row(x, i, t0, span) {
    const ran = x.durationMs !== null ? x.durationMs - (x.heldMs || 0) : null;
    const left = ((x.startTs - t0) / span) * 100;
    const end = x.endTs ?? this.model.tEnd ?? x.startTs;
    const width = Math.max(0.6, ((end - x.startTs) / span) * 100);
    const sel = store.selectedExec === x.key ? " selected" : "";
    return h("div", { class: `tl-row state-${x.status}${x.simulated ? " simulated" : ""}${sel}`, role: "listitem", dataset: { index: i },
      style: `transform: translateY(${i * ROW}px)` },
      h("span", { class: "tl-state", title: x.simulated ? "simulated: the call did not run (safe mode)" : null }, x.status),
      h("span", { class: "tl-name", title: x.nodeId }, x.name),
      h("span", { class: "tl-time" }, ran === null ? "…" : ms(ran)),
      h("span", { class: "tl-track" }, h("span", { class: "tl-bar", style: `left:${left}%;width:${Math.min(width, 100 - left)}%` })));
  }

  /** Bring an execution into view (keyboard navigation, a click on the graph). A row already in
   * view is only marked: on a huge run a click must not rebuild and relayout the rows. */
  reveal(key) {
    if (!this.model) return;
    const x = this.model.execs.get(key);
    if (!x) return;
    const y = x.index * ROW;
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
    const order = this.model ? this.model.order : [];
    for (const el of this.scroller.children) {
      if (el === this.spacer) continue;
      const x = order[Number(el.dataset.index)];
      el.classList.toggle("selected", !!x && x.key === store.selectedExec);
    }
  }
}
