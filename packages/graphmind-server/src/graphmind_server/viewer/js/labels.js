// A person's note and tags on a run or on one of its nodes (PUT /api/runs/{id}/labels and
// …/nodes/{nodeId}/labels, docs/viewer.md "Labels"): set on the run card and in node detail,
// found again by the runs search (notes) and the tag filter. The editor is kept per run and node,
// so the header's once-a-second redraw never loses what is being typed.

import { api, errorText } from "./api.js";
import { h } from "./frame.js";
import { emit, store } from "./state.js";

const editors = new Map();

/** Tags as chips: each one a link to the runs it is on (the list's tag filter). */
export function tagChips(tags) {
  if (!Array.isArray(tags) || !tags.length) return null;
  return h("span", { class: "tag-chips" }, ...tags.map((t) => h("a", { class: "chip tag-chip", href: tagHref(t),
    title: `Runs tagged ${t}` }, `#${t}`)));
}

function tagHref(tag) {
  const p = new URLSearchParams(location.search);
  p.set("tag", tag);
  return `${location.pathname}?${p}#/`;
}

/** The label of a run (nodeId null) or of one of its nodes, as the store has it. */
export function labelOf(runId, nodeId) {
  const r = store.runs.get(runId);
  const l = nodeId ? r?.nodeLabels?.[nodeId] : r?.labels;
  return { note: l?.note || "", tags: Array.isArray(l?.tags) ? l.tags : [] };
}

/** The editor: a "Note and tags" disclosure, its summary the label as it stands. */
export function labelEditor(runId, nodeId = null) {
  const key = `${runId}\u0000${nodeId || ""}`;
  let ed = editors.get(key);
  if (!ed) {
    ed = makeEditor(runId, nodeId);
    editors.set(key, ed);
    if (editors.size > 50) editors.delete(editors.keys().next().value);
  }
  ed.sync();
  return ed.el;
}

function makeEditor(runId, nodeId) {
  const what = nodeId ? "this node" : "this run";
  const note = h("textarea", { class: "label-note", rows: 2, placeholder: `A note on ${what}`, "aria-label": `Note on ${what}` });
  const tags = h("input", { type: "text", class: "label-tags", placeholder: "tags, comma separated", "aria-label": `Tags on ${what}` });
  const msg = h("span", { class: "muted small label-msg", role: "status" });
  const summary = h("summary", { class: "small label-summary" });
  const save = async () => {
    const body = { note: note.value, tags: tags.value.split(",").map((t) => t.trim()).filter(Boolean) };
    msg.textContent = "saving…";
    const res = await api.putLabels(runId, nodeId, body);
    if (!res.ok) {
      msg.textContent = errorText(res);
      return;
    }
    const r = store.runs.get(runId);
    if (r) {
      if (nodeId) r.nodeLabels = { ...(r.nodeLabels || {}), [nodeId]: res.body.labels };
      else r.labels = res.body.labels;
    }
    msg.textContent = "saved";
    el.open = false;
    ed.sync(true);
    emit("runs");
  };
  const el = h("details", { class: "labels", dataset: { nodeId: nodeId || "" } }, summary,
    h("div", { class: "label-form" }, note, tags,
      h("div", { class: "label-row" }, h("button", { type: "button", class: "primary small label-save", onclick: save }, "Save"), msg)));
  for (const input of [note, tags]) {
    input.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey || input === tags)) {
        ev.preventDefault();
        save();
      }
    });
  }
  const ed = {
    el,
    shown: "",
    /** Show the stored label; the fields follow it unless the editor is open (being typed in). */
    sync(force = false) {
      const l = labelOf(runId, nodeId);
      const text = JSON.stringify(l);
      if (text === this.shown && !force) return;
      this.shown = text;
      summary.replaceChildren(l.note || l.tags.length
        ? h("span", null, "Note and tags: ", tagChips(l.tags), l.note ? h("span", { class: "label-note-text" }, ` ${l.note}`) : null)
        : `Add a note or tags to ${what}`);
      if (!el.open || force) {
        note.value = l.note;
        tags.value = l.tags.join(", ");
      }
    },
  };
  return ed;
}
