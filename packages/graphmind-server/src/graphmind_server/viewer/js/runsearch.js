// Search within the open run (GET /api/search?run=…): the hub's full-text index answers, so a
// 1,000,000-event run answers as fast as a small one; a hit opens its execution's detail.

import { api, errorText } from "./api.js";
import { h } from "./frame.js";
import { store } from "./state.js";

export class RunSearch {
  constructor(onPick) {
    this.onPick = onPick;
    this.token = 0;
    this.input = h("input", { type: "search", class: "rs-input", placeholder: "Search this run", "aria-label": "Search this run" });
    this.status = h("span", { class: "muted small rs-status", role: "status" });
    this.list = h("ol", { class: "rs-hits", "aria-label": "Search hits" });
    this.el = h("div", { class: "rs" }, this.input, this.status, this.list);
    this.input.addEventListener("input", () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.search(this.input.value), 150);
    });
    this.input.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") {
        clearTimeout(this.timer);
        this.search(this.input.value);
      }
    });
  }

  reset() {
    this.token++;
    this.input.value = "";
    this.status.textContent = "";
    this.list.replaceChildren();
  }

  async search(q) {
    const token = ++this.token;
    const runId = store.runId;
    if (!q.trim() || !runId) {
      this.status.textContent = "";
      this.list.replaceChildren();
      return;
    }
    performance.mark("graphmind:run-search-start");
    const res = await api.search(q, runId, 200);
    if (token !== this.token) return;
    if (!res.ok) {
      this.status.textContent = errorText(res);
      return;
    }
    const hits = res.body.hits || [];
    this.status.textContent = hits.length ? `${hits.length}${res.body.more ? "+" : ""} hit${hits.length === 1 ? "" : "s"}` : "no hit";
    this.list.replaceChildren(...hits.map((hit) => {
      const name = store.model?.nodes.get(hit.nodeId)?.name || hit.nodeId || "run";
      return h("li", null, h("button", { type: "button", class: "rs-hit", dataset: { nodeId: hit.nodeId || "", seq: String(hit.seq) },
        onclick: () => hit.nodeId && this.onPick(hit.nodeId, `${hit.nodeId}\u0000${hit.instanceId ?? ""}`) },
        h("span", { class: "rs-name" }, name), " ", h("span", { class: "muted small" }, snippet(hit.snippet))));
    }));
    performance.mark("graphmind:run-search");
    document.body.dataset.runSearch = String(this.token);
  }
}

/** The hub marks matches «like this»: shown as <mark>. */
function snippet(text) {
  const frag = document.createDocumentFragment();
  String(text || "").split(/(«[^»]*»)/).forEach((part) => {
    if (part.startsWith("«") && part.endsWith("»")) frag.append(h("mark", null, part.slice(1, -1)));
    else if (part) frag.append(part);
  });
  return frag;
}
