// A line diff of two JSON values (original vs edited input, recorded vs actual input), drawn as
// "-" and "+" lines with the unchanged lines around each change. Both values are printed with
// their keys sorted, so a key order the app happened to use is never shown as a change.

import { h } from "./frame.js";

const CONTEXT = 3; // unchanged lines kept around a change
const MAX_CELLS = 2_000_000; // past this the middle is shown as removed then added (no LCS)

/** Pretty JSON with sorted keys (the form both sides are compared in). */
export function canonicalText(value) {
  const sort = (v) => {
    if (Array.isArray(v)) return v.map(sort);
    if (v && typeof v === "object") {
      const out = {};
      for (const k of Object.keys(v).sort()) out[k] = sort(v[k]);
      return out;
    }
    return v;
  };
  const text = JSON.stringify(sort(value === undefined ? null : value), null, 2);
  return text === undefined ? "null" : text;
}

/** [{op: " " | "-" | "+", text}] turning `a` into `b`, line by line. */
export function diffLines(a, b) {
  const x = a.split("\n");
  const y = b.split("\n");
  let pre = 0;
  while (pre < x.length && pre < y.length && x[pre] === y[pre]) pre++;
  let suf = 0;
  while (suf < x.length - pre && suf < y.length - pre && x[x.length - 1 - suf] === y[y.length - 1 - suf]) suf++;
  const xs = x.slice(pre, x.length - suf);
  const ys = y.slice(pre, y.length - suf);
  const out = x.slice(0, pre).map((text) => ({ op: " ", text }));
  if (xs.length * ys.length > MAX_CELLS) {
    for (const text of xs) out.push({ op: "-", text });
    for (const text of ys) out.push({ op: "+", text });
  } else {
    // Longest common subsequence of the changed middle, from the end so the walk goes forward.
    const n = xs.length;
    const m = ys.length;
    const w = m + 1;
    const lcs = new Uint32Array((n + 1) * w);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * w + j] = xs[i] === ys[j] ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && xs[i] === ys[j]) {
        out.push({ op: " ", text: xs[i++] });
        j++;
      } else if (i < n && (j === m || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1])) {
        out.push({ op: "-", text: xs[i++] }); // a removed line before the line that replaces it
      } else {
        out.push({ op: "+", text: ys[j++] });
      }
    }
  }
  for (const text of x.slice(x.length - suf)) out.push({ op: " ", text });
  return out;
}

/**
 * The diff of two JSON values as an element: `labels` name the two sides (["original", "edited"]).
 * data-removed / data-added count the changed lines (tests and the summary line read them).
 */
export function jsonDiff(before, after, labels = ["before", "after"]) {
  const lines = diffLines(canonicalText(before), canonicalText(after));
  const removed = lines.filter((l) => l.op === "-").length;
  const added = lines.filter((l) => l.op === "+").length;
  const box = h("div", { class: "jdiff", dataset: { removed: String(removed), added: String(added) } });
  box.append(h("p", { class: "jd-legend small" },
    h("span", { class: "jd-del" }, `− ${labels[0]}`), " ", h("span", { class: "jd-add" }, `+ ${labels[1]}`),
    h("span", { class: "muted" }, removed || added ? ` · ${removed} removed, ${added} added` : " · identical")));
  const pre = h("pre", { class: "jd-lines mono" });
  const keep = lines.map((l, i) => l.op !== " " || near(lines, i));
  for (let i = 0; i < lines.length; i++) {
    if (!keep[i]) {
      let k = i;
      while (k < lines.length && !keep[k]) k++;
      pre.append(h("span", { class: "jd-skip" }, `… ${k - i} unchanged line${k - i === 1 ? "" : "s"}\n`));
      i = k - 1;
      continue;
    }
    const l = lines[i];
    const cls = l.op === "-" ? "jd-del" : l.op === "+" ? "jd-add" : "jd-same";
    pre.append(h("span", { class: cls }, `${l.op} ${l.text}\n`));
  }
  box.append(pre);
  return box;
}

function near(lines, i) {
  for (let k = Math.max(0, i - CONTEXT); k <= Math.min(lines.length - 1, i + CONTEXT); k++) {
    if (lines[k].op !== " ") return true;
  }
  return false;
}
