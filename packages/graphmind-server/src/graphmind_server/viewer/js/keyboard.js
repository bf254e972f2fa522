// Keyboard shortcuts, and the `?` overlay that lists them. Keys are ignored while typing in a
// field, and with Ctrl/Alt/Meta held, so they never eat the browser's own shortcuts.

import { h } from "./frame.js";

/** The one list both the handler and the help overlay read (docs/viewer.md repeats it). */
export const SHORTCUTS = [
  ["c", "Continue the oldest held gate"],
  ["s", "Step: turn step mode on; when it is on, continue the oldest held gate"],
  ["r", "Retry the oldest held gate (after and error gates, loop holds)"],
  ["i", "Inject at the oldest held gate (opens the JSON box; Ctrl+Enter sends)"],
  ["e", "Edit input (before gates) or Retry with… (after and error gates) at the oldest held gate: opens its JSON box"],
  ["R", "Reload code and retry at the oldest held gate (gated callables: gm.tool, gm.wrap, …)"],
  ["u", "Use the recorded output at the oldest held replay divergence"],
  ["f", "Fork from here: the open node's fork box (a stored run)"],
  ["m", "Turn step mode off (back to run mode)"],
  ["p", "Pause: hold the next gate reached in any run (again: disarm)"],
  ["j / k", "Next / previous run in the list"],
  ["g", "Go to the run of a gate held in another run (its held node selected)"],
  ["/", "Search runs (the box at the top of the runs list)"],
  ["Esc", "Close the node detail or this help"],
  ["?", "Show or hide this help"],
];

export function installKeyboard(actions, overlay) {
  overlay.append(h("div", { class: "help-card" },
    h("h2", null, "Keyboard shortcuts"),
    h("dl", { class: "keys" }, ...SHORTCUTS.flatMap(([k, text]) => [h("dt", null, h("kbd", null, k)), h("dd", null, text)])),
    h("button", { type: "button", class: "primary", onclick: () => toggleHelp(overlay, false) }, "Close")));
  overlay.addEventListener("click", (ev) => {
    if (ev.target === overlay) toggleHelp(overlay, false);
  });

  document.addEventListener("keydown", (ev) => {
    if (ev.ctrlKey || ev.altKey || ev.metaKey) return;
    const t = ev.target;
    if (ev.key === "Escape") {
      if (!overlay.hidden) toggleHelp(overlay, false);
      else actions.escape();
      return;
    }
    if (t && (t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName))) return;
    const map = {
      c: actions.continueOldest,
      s: actions.step,
      r: actions.retryOldest,
      i: actions.injectOldest,
      e: actions.editOldest,
      R: actions.reloadOldest,
      u: actions.recordedOldest,
      f: actions.fork,
      m: actions.runMode,
      p: actions.pause,
      g: actions.otherHeld,
      j: () => actions.moveRun(1),
      k: () => actions.moveRun(-1),
      "/": () => document.getElementById("filter-q")?.focus(),
      "?": () => toggleHelp(overlay),
    };
    const fn = map[ev.key];
    if (fn) {
      ev.preventDefault();
      fn();
    }
  });
}

export function toggleHelp(overlay, show) {
  overlay.hidden = show === undefined ? !overlay.hidden : !show;
  if (!overlay.hidden) overlay.querySelector("button").focus();
}
