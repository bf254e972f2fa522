// Collapsible JSON, built lazily: a closed branch creates no DOM, so a 5 MB tool result costs
// nothing until someone opens it. "__REDACTED__" shows as a "hidden by …" chip.

import { h } from "./frame.js";
import { REDACTED } from "./format.js";

const MAX_CHILDREN = 200;
const MAX_STRING = 2000;

export function hiddenChip(switches) {
  return h("span", { class: "chip hidden-chip", title: "This value was never recorded: the app replaced it before sending." },
    `hidden by ${switches}`);
}

/**
 * @param value any JSON
 * @param {string} switches the GRAPHMIND_HIDE_* names for a redacted value here
 * @param {number} openDepth levels opened at first
 */
export function jsonView(value, switches, openDepth = 1) {
  const root = h("div", { class: "json" });
  root.append(node(value, switches, openDepth, null));
  return root;
}

function node(value, switches, openDepth, key) {
  const label = key === null ? null : h("span", { class: "j-key" }, `${key}: `);
  if (value === REDACTED) return h("div", { class: "j-row" }, label, hiddenChip(switches));
  if (value === undefined) return h("div", { class: "j-row" }, label, h("span", { class: "j-null" }, "–"));
  if (value === null || typeof value !== "object") return h("div", { class: "j-row" }, label, scalar(value));
  if (value.$graphmind === "truncated") {
    return h("div", { class: "j-row" }, label,
      h("span", { class: "chip" }, `truncated in the app: ${Math.round((value.bytes || 0) / 1024)} KB`),
      h("pre", { class: "j-preview" }, String(value.preview ?? "").slice(0, MAX_STRING * 4)));
  }
  const isArr = Array.isArray(value);
  const entries = isArr ? value.map((v, i) => [i, v]) : Object.entries(value);
  const summary = isArr ? `[${entries.length}]` : `{${entries.length}}`;
  if (entries.length === 0) return h("div", { class: "j-row" }, label, h("span", { class: "j-punct" }, isArr ? "[]" : "{}"));
  const details = h("details", { class: "j-branch" });
  const head = h("summary", null, label, h("span", { class: "j-punct" }, summary), " ", preview(value, isArr));
  details.append(head);
  let built = false;
  const build = () => {
    if (built) return;
    built = true;
    const body = h("div", { class: "j-children" });
    for (const [k, v] of entries.slice(0, MAX_CHILDREN)) body.append(node(v, switches, openDepth - 1, k));
    if (entries.length > MAX_CHILDREN) body.append(h("div", { class: "j-more" }, `… ${entries.length - MAX_CHILDREN} more`));
    details.append(body);
  };
  details.addEventListener("toggle", () => details.open && build());
  if (openDepth > 0) {
    details.open = true;
    build();
  }
  return details;
}

function scalar(v) {
  if (typeof v === "string") {
    const s = v.length > MAX_STRING ? `${v.slice(0, MAX_STRING)}… (${v.length} chars)` : v;
    return h("span", { class: "j-str" }, JSON.stringify(s));
  }
  if (typeof v === "number") return h("span", { class: "j-num" }, String(v));
  if (typeof v === "boolean") return h("span", { class: "j-bool" }, String(v));
  return h("span", { class: "j-null" }, "null");
}

function preview(value, isArr) {
  // Built from the first few keys, never by serialising the value: a branch of a 5 MB tool
  // result must cost nothing until it is opened.
  if (isArr) return h("span", { class: "j-preview-inline" }, "");
  const keys = Object.keys(value);
  const shown = keys.slice(0, 6).join(", ");
  return h("span", { class: "j-preview-inline" }, keys.length > 6 ? `${shown}, …` : shown);
}
