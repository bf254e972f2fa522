// The run list's search and filters. The page's address holds them (`?q=lisbon&status=error#/…`),
// so a view can be shared and a reload keeps it. App and status filter the list in the page; the
// rest (full text, has error, was held, node kind, tool, model, time range) ask the hub
// (GET /api/runs, docs/api.md), which answers with the matching runs.

import { api, errorText } from "./api.js";
import { h } from "./frame.js";
import { store } from "./state.js";

export const FILTER_KEYS = ["q", "app", "status", "error", "held", "kind", "tool", "model", "agent", "since", "until", "thread", "tag", "group"];
const HUB_KEYS = ["q", "error", "held", "kind", "tool", "model", "agent", "since", "until", "thread", "tag"];
const KINDS = ["llm", "tool", "retriever", "chain", "agent", "handoff", "custom"];

export function filtersFromUrl() {
  const p = new URLSearchParams(location.search);
  const f = {};
  for (const k of FILTER_KEYS) f[k] = p.get(k) || "";
  return f;
}

function writeUrl(f) {
  const p = new URLSearchParams();
  for (const k of FILTER_KEYS) if (f[k]) p.set(k, f[k]);
  const q = p.toString();
  const want = `${location.pathname}${q ? `?${q}` : ""}${location.hash}`;
  if (want !== `${location.pathname}${location.search}${location.hash}`) history.replaceState(null, "", want);
}

const asLocal = (ms) => {
  if (!ms) return "";
  const d = new Date(Number(ms));
  if (Number.isNaN(d.getTime())) return "";
  return new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
};
const fromLocal = (text) => (text ? String(new Date(text).getTime()) : "");

export class FilterBar {
  /** `onChange()`: the list must redraw (store.filters and store.matchIds are current). */
  constructor(onChange) {
    this.onChange = onChange;
    this.token = 0;
    store.filters = filtersFromUrl();
    store.matchIds = null;
    const f = store.filters;
    const field = (key, el, read = () => el.value) => {
      el.addEventListener(el.type === "checkbox" || el.tagName === "SELECT" ? "change" : "input", () => this.set(key, read()));
      return el;
    };
    this.q = field("q", h("input", { type: "search", id: "filter-q", placeholder: "Search runs: names, inputs, outputs, errors",
      "aria-label": "Search runs", value: f.q }));
    this.app = field("app", h("select", { id: "filter-app", "aria-label": "Filter by app" }, h("option", { value: "" }, "all apps")));
    this.status = field("status", h("select", { id: "filter-status", "aria-label": "Filter by status" }, h("option", { value: "" }, "any status"),
      ...["running", "finished", "error", "aborted", "abandoned"].map((s) => h("option", { value: s }, s))));
    this.status.value = f.status;
    this.kind = field("kind", h("select", { id: "filter-kind", "aria-label": "Filter by node kind" }, h("option", { value: "" }, "any kind"),
      ...KINDS.map((k) => h("option", { value: k }, k))));
    this.kind.value = f.kind;
    this.tool = field("tool", h("input", { type: "text", id: "filter-tool", placeholder: "tool", "aria-label": "Filter by tool name", value: f.tool, list: "filter-tools" }));
    this.model = field("model", h("input", { type: "text", id: "filter-model", placeholder: "model", "aria-label": "Filter by model", value: f.model }));
    this.agent = field("agent", h("input", { type: "text", id: "filter-agent", placeholder: "agent", "aria-label": "Filter by agent", value: f.agent }));
    this.thread = field("thread", h("input", { type: "text", id: "filter-thread", placeholder: "thread", "aria-label": "Filter by thread", value: f.thread }));
    this.tag = field("tag", h("input", { type: "text", id: "filter-tag", placeholder: "tag", "aria-label": "Filter by tag", value: f.tag }));
    // Not a filter: how the list is grouped (threads.js), kept in the address like the filters.
    this.group = field("group", h("select", { id: "runs-group", "aria-label": "Group runs" },
      h("option", { value: "" }, "no grouping"), h("option", { value: "thread" }, "group by thread"), h("option", { value: "app" }, "group by app")));
    this.group.value = f.group;
    const check = (key, label) => {
      const box = h("input", { type: "checkbox", id: `filter-${key}`, checked: f[key] === "1" });
      field(key, box, () => (box.checked ? "1" : ""));
      return h("label", { class: "small" }, box, ` ${label}`);
    };
    const time = (key, label) => field(key, h("input", { type: "datetime-local", id: `filter-${key}`, "aria-label": label, value: asLocal(f[key]) }),
      () => fromLocal(document.getElementById(`filter-${key}`).value));
    this.msg = h("p", { class: "muted small filter-msg", role: "status" });
    const more = h("details", { class: "filter-more", open: HUB_KEYS.slice(1).some((k) => f[k]) || null },
      h("summary", { class: "small" }, "More filters"),
      // One column, every control as wide as the runs list and no wider: a two-column grid let the
      // date inputs push it over the run view, whose graph then covered them.
      h("div", { class: "filter-grid" }, this.kind, this.tool, this.model, this.agent, this.thread, this.tag,
        h("div", { class: "filter-checks" }, check("error", "has error"), check("held", "was held")),
        h("label", { class: "small filter-time" }, "started after", time("since", "Started after")),
        h("label", { class: "small filter-time" }, "started before", time("until", "Started before")),
        h("button", { type: "button", class: "link small filter-clear", onclick: () => this.clear() }, "Clear filters")));
    this.el = h("div", { class: "filters" }, this.q, h("div", { class: "filter-row" }, this.app, this.status),
      h("div", { class: "filter-row" }, this.group), more, this.msg,
      h("datalist", { id: "filter-tools" }));
    this.refresh();
  }

  set(key, value) {
    store.filters = { ...store.filters, [key]: value };
    writeUrl(store.filters);
    clearTimeout(this.timer);
    // Typing asks the hub once it pauses; a click asks at once.
    this.timer = setTimeout(() => this.refresh(), ["q", "tool", "model", "agent", "thread", "tag"].includes(key) ? 200 : 0);
    this.onChange();
  }

  clear() {
    for (const el of this.el.querySelectorAll("input, select")) {
      if (el.type === "checkbox") el.checked = false;
      else el.value = "";
    }
    store.filters = Object.fromEntries(FILTER_KEYS.map((k) => [k, ""]));
    writeUrl(store.filters);
    this.refresh();
  }

  /** Ask the hub for the runs the hub-side filters match (none active: every run matches). */
  async refresh() {
    const f = store.filters;
    const token = ++this.token;
    if (!HUB_KEYS.some((k) => f[k])) {
      store.matchIds = null;
      this.msg.textContent = "";
      this.onChange();
      return;
    }
    const params = { limit: 1000 };
    for (const k of HUB_KEYS) if (f[k]) params[k] = f[k];
    const res = await api.runs(params);
    if (token !== this.token) return;
    if (!res.ok) {
      this.msg.textContent = errorText(res);
      return;
    }
    store.matchIds = new Set((res.body.runs || []).map((r) => r.id));
    for (const r of res.body.runs || []) if (!store.runs.has(r.id)) store.runs.set(r.id, r);
    this.msg.textContent = "";
    document.body.dataset.filtersApplied = JSON.stringify(params);
    this.onChange();
  }

  /** New runs arrived: with hub-side filters on, ask again (at most once a second). */
  runsChanged() {
    if (store.matchIds === null || this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = null;
      this.refresh();
    }, 1000);
  }

  syncOptions() {
    const apps = [...new Set([...store.runs.values()].map((r) => r.app).filter(Boolean))].sort();
    const cur = store.filters.app;
    const opts = cur && !apps.includes(cur) ? [...apps, cur] : apps; // an app from a shared link
    const have = [...this.app.options].map((o) => o.value).slice(1);
    if (opts.join("\n") !== have.join("\n")) {
      this.app.replaceChildren(h("option", { value: "" }, "all apps"), ...opts.map((a) => h("option", { value: a }, a)));
      this.app.value = cur;
    }
    const tools = new Set();
    const list = this.el.querySelector("#filter-tools");
    if (store.model) for (const n of store.model.nodes.values()) if (n.kind === "tool") tools.add(n.name);
    const names = [...tools].sort();
    if (names.join("\n") !== [...list.options].map((o) => o.value).join("\n")) {
      list.replaceChildren(...names.map((t) => h("option", { value: t })));
    }
  }
}

/** Does a run pass every filter (the page's and the hub's answer)? */
export function passes(r) {
  const { app, status } = store.filters;
  return (!app || r.app === app) && (!status || r.status === status) && (!store.matchIds || store.matchIds.has(r.id));
}
