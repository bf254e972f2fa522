// The JSON box of a pause card's answers (Inject, Edit input, Retry with…): it starts filled,
// checks the text as it is typed (valid JSON, no "__REDACTED__" left), and sends only a value that
// passes. One box for every answer that carries JSON, so they all validate the same way.

import { h } from "./frame.js";
import { canonicalText, diffLines } from "./diff.js";
import { containsRedacted, REDACTED } from "./format.js";

/** {ok: true, value} for text that may be sent, else {ok: false, error} (one line). */
export function checkAnswer(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `not valid JSON (${err.message})` };
  }
  if (containsRedacted(value)) {
    return { ok: false, error: `still contains "${REDACTED}" (a value the app never recorded); replace it with a real value` };
  }
  return { ok: true, value };
}

/** Pretty JSON for a box (undefined shows as null). */
export function boxText(value) {
  try {
    const text = JSON.stringify(value === undefined ? null : value, null, 2);
    return text === undefined ? "null" : text;
  } catch {
    return "null";
  }
}

/**
 * @param {object} o
 * @param {string} o.id the textarea's id (unique on the page)
 * @param {string} o.kind "inject" | "edit" (the card's data-box-open says which is open)
 * @param {string} o.label the textarea's label
 * @param {string} o.meaning one line under the box: what the value sent does
 * @param {() => any | Promise<any>} o.start the value the box starts with
 * @param {any} [o.original] an edit box compares the text against it ("2 lines changed")
 * @param {boolean} [o.reloadable] offer "reload the code first"
 * @param {(value: any, opts: {reload: boolean}) => void} o.onSend
 * @param {(text: string) => void} o.onMessage the card's message line
 * @param {() => void} [o.onReady] called once the start value is in the box
 */
export function answerBox(o) {
  const textarea = h("textarea", { id: o.id, rows: "6", spellcheck: "false", class: "mono", "aria-describedby": `${o.id}-check` });
  const check = h("p", { id: `${o.id}-check`, class: "small answer-check", "aria-live": "polite" });
  const reload = o.reloadable ? h("input", { type: "checkbox", class: "answer-reload" }) : null;
  const sendBtn = h("button", { type: "button", class: "primary answer-send", onclick: () => trySend() }, "Send");
  const el = h("div", { class: `inject answer-box box-${o.kind}`, hidden: true, dataset: { ready: "false" } },
    h("label", { for: o.id }, o.label), textarea, check,
    reload ? h("label", { class: "small answer-reload-label" }, reload, " Reload the code from its source file first") : null,
    h("p", { class: `muted small ${o.kind === "inject" ? "inject-meaning" : "answer-meaning"}` }, o.meaning),
    h("div", { class: "gate-actions" }, sendBtn,
      h("button", { type: "button", class: "ghost", onclick: () => close() }, "Cancel")));

  const validate = () => {
    const res = checkAnswer(textarea.value);
    check.classList.toggle("bad", !res.ok);
    if (!res.ok) {
      check.textContent = `Cannot send: ${res.error}.`;
    } else if (o.original !== undefined) {
      const lines = diffLines(canonicalText(o.original), canonicalText(res.value));
      const changed = lines.filter((l) => l.op !== " ").length;
      check.textContent = changed ? `Valid JSON · ${changed} line${changed === 1 ? "" : "s"} differ from the input` : "Valid JSON · unchanged from the input";
    } else {
      check.textContent = "Valid JSON";
    }
    // Send stays enabled (a disabled button says nothing when pressed): pressing it with a bad
    // value puts the reason on the card's message line too.
    textarea.setAttribute("aria-invalid", String(!res.ok));
    return res;
  };
  const trySend = () => {
    const res = validate();
    if (!res.ok) {
      o.onMessage(`Not sent: ${res.error}.`);
      return;
    }
    o.onSend(res.value, { reload: reload ? reload.checked : false });
  };
  textarea.addEventListener("input", validate);
  textarea.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) {
      ev.preventDefault();
      trySend();
    }
  });

  let started = false;
  // The card column scrolls (a laptop screen with the node detail open gives it 60 % of the
  // height): bring the box's Send into view, or it opens below the fold.
  const reveal = () => requestAnimationFrame(() => {
    textarea.scrollIntoView({ block: "nearest" });
    sendBtn.scrollIntoView({ block: "nearest" });
  });
  const open = async () => {
    el.hidden = false;
    textarea.focus({ preventScroll: true });
    reveal();
    if (started) return;
    started = true;
    const value = await o.start();
    // The person may have typed while the start value was being looked up.
    if (!textarea.value) textarea.value = boxText(value);
    validate();
    el.dataset.ready = "true";
    reveal();
    if (o.onReady) o.onReady();
  };
  const close = () => {
    el.hidden = true;
    o.onMessage("");
  };
  return { el, open, close, textarea, isOpen: () => !el.hidden };
}
