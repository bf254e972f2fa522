// "Save as test" (docs/viewer.md): a run becomes a pytest regression test, the same two files
// `graphmind test new` writes (a cassette and a test that replays the run through the app's own
// command), through POST /api/runs/{id}/tests. On a node: assert the run's final answer (default)
// or this node's output; equal to the recorded value, or to / containing / matching another.
// On a held gate: "this is wrong, expected X" writes the failing test first; the gate stays held.

import { api, errorText } from "./api.js";
import { h } from "./frame.js";

/** The request body: `expect` is JSON for "equals", text for "contains" / "matches". */
export function testBody({ node, check, text, dir }) {
  const body = { dir: dir || "tests" };
  if (node) body.node = node;
  if (check === "recorded") return { ok: true, body };
  if (check === "equals") {
    try {
      body.expect = JSON.parse(text);
    } catch {
      body.expect = text; // a plain text answer: compared as a string
    }
  } else {
    body[check] = text;
  }
  return { ok: true, body };
}

function written(res) {
  const b = res.body;
  return `Wrote ${b.test} and ${b.cassette}; it asserts ${b.node}. Run it: pytest ${b.test}`;
}

/** The box under a node's "Save as test" button. */
export function saveTestBox({ runId, selector }) {
  const id = `savetest-${selector.replace(/[^a-zA-Z0-9_-]/g, "_")}`;
  const which = h("select", { id: `${id}-which`, class: "savetest-which" },
    h("option", { value: "" }, "the run's final answer"),
    h("option", { value: selector }, `this node's output (${selector})`));
  const check = h("select", { id: `${id}-check`, class: "savetest-check" },
    h("option", { value: "recorded" }, "equals the recorded value"),
    h("option", { value: "equals" }, "equals…"),
    h("option", { value: "contains" }, "contains…"),
    h("option", { value: "matches" }, "matches the regex…"));
  const text = h("input", { id: `${id}-text`, class: "savetest-text mono", type: "text", hidden: true, "aria-label": "Expected value" });
  const dir = h("input", { id: `${id}-dir`, class: "savetest-dir mono", type: "text", value: "tests", "aria-label": "Folder, inside the app's directory" });
  const msg = h("p", { class: "small savetest-msg", role: "status", "aria-live": "polite" });
  check.addEventListener("change", () => { text.hidden = check.value === "recorded"; });
  const save = h("button", { type: "button", class: "primary savetest-save", onclick: async () => {
    const { body } = testBody({ node: which.value, check: check.value, text: text.value, dir: dir.value });
    save.disabled = true;
    msg.textContent = "Writing…";
    const res = await api.saveTest(runId, body);
    save.disabled = false;
    msg.classList.toggle("bad", !res.ok);
    msg.textContent = res.ok ? written(res) : `Not written: ${errorText(res)}`;
  } }, "Write the test");
  return h("div", { class: "savetest-box" },
    h("label", { for: which.id }, "Assert "), which, " ", check, " ", text,
    h("p", { class: "small" }, h("label", { for: dir.id }, "in the folder "), dir, " (inside the app's directory)"),
    h("div", { class: "gate-actions" }, save), msg);
}

/** The held gate's "Wrong? Expected…": writes the failing test (--expect X); the gate stays held. */
export function expectedBox(g) {
  const input = h("input", { type: "text", class: "expected-text mono", "aria-label": "The answer you expected" });
  const msg = h("span", { class: "small expected-msg", role: "status", "aria-live": "polite" });
  const btn = h("button", { type: "button", class: "expected-save", onclick: async () => {
    if (!input.value.trim()) {
      msg.textContent = " Type the answer you expected first.";
      return;
    }
    btn.disabled = true;
    const res = await api.saveTest(g.runId, { expect: input.value, dir: "tests" });
    btn.disabled = false;
    msg.classList.toggle("bad", !res.ok);
    msg.textContent = res.ok ? ` ${written(res)} It fails until the run answers that; the gate is still held.` : ` Not written: ${errorText(res)}`;
  } }, "Save failing test");
  return h("details", { class: "expected-box small" },
    h("summary", null, "This is wrong: expected…"),
    h("p", { class: "muted small" }, "Writes a test that replays this run and expects this final answer; then answer the gate as you choose."),
    input, " ", btn, msg);
}
