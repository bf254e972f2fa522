// "Fork from here" (issue 31): on a node of a stored run, give that call a different output (or
// input), and get the one-line `graphmind replay` command that re-runs the app from the
// recording, replaying every step before this one and running live from it. The command ends
// with the app's own command line when the run recorded it (run meta argv and cwd).

import { h } from "./frame.js";
import { checkAnswer, boxText } from "./answerbox.js";

/** POSIX shell quoting: bare when safe, else single quotes. */
export function shq(s) {
  const t = String(s);
  if (t && /^[A-Za-z0-9_@%+=:,./-]+$/.test(t)) return t;
  return `'${t.replaceAll("'", "'\\''")}'`;
}

/** `<nodeId>#<occurrence>`: the node and which of its executions (1-based, start order). */
export function selectorOf(model, x) {
  const n = model.nodes.get(x.nodeId);
  const i = n ? n.execs.indexOf(x) : -1;
  return `${x.nodeId}#${i < 0 ? 1 : i + 1}`;
}

/** "output" or "input" when `x` is the call a fork replay forked at (its run's `forkedAt`), else null. */
export function forkedHere(model, x) {
  if (!model || !x || typeof model.forkedAt !== "string" || model.forkedAt !== selectorOf(model, x)) return null;
  return x.injected ? "output" : "input";
}

/** The app's command line from the run's meta, or null when the run did not record it. */
export function appCommand(meta) {
  const argv = meta && Array.isArray(meta.argv) && meta.argv.length ? meta.argv.map(String) : null;
  if (!argv) return null;
  // sys.argv has the script, not the interpreter: the run's own interpreter (meta.executable,
  // sys.executable) runs it, so a venv's python is used; an older app that did not record it: python.
  const exe = typeof meta.executable === "string" && meta.executable ? [meta.executable]
    : /\.py$/.test(argv[0]) ? ["python"] : [];
  return [...exe, ...argv].map(shq).join(" ");
}

/** The whole command, one line. */
export function forkCommand({ runId, selector, which, value, meta }) {
  const cmd = appCommand(meta);
  const cwd = meta && typeof meta.cwd === "string" && meta.cwd ? `cd ${shq(meta.cwd)} && ` : "";
  const flag = which === "input" ? "--input" : "--output";
  return `${cmd ? cwd : ""}graphmind replay ${shq(runId)} --fork ${shq(selector)} ${flag} ${shq(JSON.stringify(value))} -- ${cmd || "python your_app.py"}`;
}

/** The fork box for execution `x` of the open run (an element). */
export function forkBox({ runId, run, model, x }) {
  const selector = selectorOf(model, x);
  const meta = (run && run.meta) || {};
  const id = `fork-${selector.replace(/[^a-zA-Z0-9_-]/g, "_")}`;
  const textarea = h("textarea", { id, rows: "5", spellcheck: "false", class: "mono" });
  const check = h("p", { class: "small answer-check", "aria-live": "polite" });
  const cmd = h("pre", { class: "fork-cmd mono", "aria-label": "Command to run" });
  const copyMsg = h("span", { class: "muted small", role: "status" });
  let which = "output";
  const radio = (value, label) => {
    const input = h("input", { type: "radio", name: `${id}-which`, value, checked: value === which });
    input.addEventListener("change", () => {
      which = value;
      textarea.value = boxText(value === "input" ? x.input : x.output);
      textarea.labels[0].textContent = value === "input" ? "Its new input (JSON): this call runs live with it" : "Its new output (JSON): the app gets this instead";
      update();
    });
    return h("label", null, input, ` ${label}`);
  };
  const update = () => {
    const res = checkAnswer(textarea.value);
    check.classList.toggle("bad", !res.ok);
    check.textContent = res.ok ? "" : `Cannot fork: ${res.error}.`;
    cmd.textContent = res.ok ? forkCommand({ runId, selector, which, value: res.value, meta }) : "";
    copy.disabled = !res.ok;
  };
  const copy = h("button", { type: "button", onclick: async () => {
    try {
      await navigator.clipboard.writeText(cmd.textContent);
      copyMsg.textContent = " copied";
    } catch {
      const range = document.createRange();
      range.selectNodeContents(cmd);
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      copyMsg.textContent = " selected: press Ctrl+C";
    }
  } }, "Copy command");
  textarea.value = boxText(x.output);
  textarea.addEventListener("input", update);
  const note = appCommand(meta) ? null : h("p", { class: "muted small" },
    "This run did not record its command line (GRAPHMIND_HIDE_INPUTS, or an older app): put yours after --.");
  const box = h("section", { class: "fork", "aria-label": "Fork from here" },
    h("h3", null, `Fork from ${selector}`),
    h("p", { class: "muted small" }, "Every step before this one is replayed from this run (no model or tool calls); this one gets the value below, and the rest runs live."),
    h("div", { class: "fork-which" }, radio("output", "Change its output"), x.kind === "agent" ? null : radio("input", "Change its input")),
    h("label", { for: id, class: "small muted" }, "Its new output (JSON): the app gets this instead"), textarea, check,
    h("div", { class: "small muted" }, "Run this where the app runs:"), cmd, note,
    h("div", { class: "gate-actions" }, copy, copyMsg));
  update();
  return box;
}
