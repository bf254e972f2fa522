// The playground (#/playground/<run>/<instanceId>): one stored model call as an editable request,
// sent again by the hub through the provider it came from (POST /api/playground, docs/api.md),
// the replies shown beside the recorded one with a diff, tokens and cost. Nothing here touches a
// run: a send is a new call the person asked for, with the hub's own credentials.

import { api, errorText } from "./api.js";
import { diffLines } from "./diff.js";
import { h } from "./frame.js";
import { ms } from "./format.js";
import { money } from "./usage.js";

const MAX_N = 10;

/** The text of a reply as a provider's adapter or the hub described it. */
export function replyText(output) {
  if (output === null || output === undefined) return "";
  if (typeof output === "string") return output;
  if (typeof output.content === "string") return output.content;
  if (typeof output.text === "string") return output.text;
  const parts = Array.isArray(output.content) ? output.content : Array.isArray(output.parts) ? output.parts : null;
  if (parts && parts.every((p) => p && typeof p.text === "string")) return parts.map((p) => p.text).join("");
  return JSON.stringify(output, null, 2);
}

const usageText = (u, cost) => {
  if (!u) return "no usage recorded";
  const inp = u.inputTokens ?? 0;
  const out = u.outputTokens ?? 0;
  return `${inp.toLocaleString("en-US")} in · ${out.toLocaleString("en-US")} out${typeof cost === "number" ? ` · ${money(cost)}` : ""}`;
};

export async function showPlayground(el, runId, instanceId) {
  document.body.dataset.playgroundReady = "false";
  el.replaceChildren(h("p", { class: "empty" }, "Opening the call…"));
  const res = await api.playground(runId, instanceId);
  if (!res.ok) {
    el.replaceChildren(h("p", { class: "empty" }, `Cannot open this call in the playground: ${errorText(res)}`));
    return;
  }
  el.replaceChildren(new Playground(runId, instanceId, res.body).el);
  document.body.dataset.playgroundReady = "true";
}

class Playground {
  constructor(runId, instanceId, d) {
    this.runId = runId;
    this.instanceId = instanceId;
    this.d = d;
    this.provider = d.provider || "openai";
    this.messages = h("div", { class: "pg-messages" });
    for (const m of d.request.messages) this.addMessage(m.role, m.content);
    this.model = h("input", { class: "pg-model", "aria-label": "Model", value: d.request.model, spellcheck: "false" });
    this.params = h("textarea", { class: "pg-params mono", "aria-label": "Parameters (JSON)", rows: "3", spellcheck: "false" },
      JSON.stringify(d.request.params || {}, null, 1));
    this.n = h("input", { class: "pg-n", type: "number", min: "1", max: String(MAX_N), value: "1", "aria-label": "Send N times" });
    this.missing = h("p", { class: "pg-missing", role: "alert" });
    this.sendButton = h("button", { type: "button", class: "primary pg-send", onclick: () => this.send() }, "Send");
    this.msg = h("p", { class: "pg-msg muted small", role: "status" });
    this.replies = h("div", { class: "pg-replies", "aria-label": "New replies" });
    const pick = h("select", { class: "pg-provider", "aria-label": "Provider", onchange: (e) => { this.provider = e.target.value; this.sync(); } },
      ...Object.entries(d.providers).map(([name, p]) => h("option", { value: name, selected: name === this.provider }, p.label)));
    const rec = d.recorded || {};
    const recText = rec.error ? `${rec.error.name || "Error"}: ${rec.error.message || ""}` : replyText(rec.output);
    this.recordedText = recText;
    const head = h("div", { class: "run-head" },
      h("div", null, h("h1", null, "Playground"),
        h("p", { class: "muted" }, "A model call of run ", h("a", { href: `#/run/${encodeURIComponent(this.runId)}` }, this.runId),
          ` (${instanceId}), sent again on its own by the hub. The run is not touched.`)),
      h("div", { class: "run-actions" }, pick));
    const editor = h("section", { class: "pg-editor", "aria-label": "Request" },
      h("h3", null, "Request"),
      h("label", { class: "pg-field" }, h("span", null, "Model"), this.model),
      h("label", { class: "pg-field" }, h("span", null, "Parameters"), this.params),
      d.toolsLeftOut ? h("p", { class: "muted small" }, "The call's tools are not sent: the recording names them without their definitions.") : null,
      this.messages,
      h("button", { type: "button", class: "link small", onclick: () => this.addMessage("user", "") }, "Add a message"),
      h("div", { class: "pg-actions" }, h("label", { class: "small" }, "Send ", this.n, " time(s)"), this.sendButton),
      this.missing, this.msg);
    const recorded = h("section", { class: "pg-card pg-recorded", "aria-label": "Recorded reply" },
      h("h3", null, "Recorded reply"), h("p", { class: "muted small" }, usageText(rec.usage, rec.costUsd)),
      h("pre", { class: "pg-text" }, recText || "(empty)"));
    this.el = h("div", { class: "playground" }, head,
      h("div", { class: "pg-body" }, editor, h("div", { class: "pg-out" }, recorded, this.replies)));
    this.sync();
  }

  addMessage(role, content) {
    const json = typeof content !== "string";
    const roleSel = h("select", { "aria-label": "Role" }, ...["system", "user", "assistant", "tool"].map((r) => h("option", { value: r, selected: r === role }, r)));
    if (![...roleSel.options].some((o) => o.value === role)) roleSel.append(h("option", { value: role, selected: true }, role));
    const text = h("textarea", { class: `pg-content${json ? " mono" : ""}`, "aria-label": `${role} message`, rows: "3", dataset: { json: json ? "1" : "" } },
      json ? JSON.stringify(content, null, 1) : content);
    const row = h("div", { class: "pg-message" }, h("div", { class: "pg-message-head" }, roleSel,
      h("button", { type: "button", class: "link small", onclick: () => row.remove() }, "remove")), text);
    this.messages.append(row);
  }

  sync() {
    const p = this.d.providers[this.provider];
    const missing = p ? p.missing : "pick a provider";
    this.missing.textContent = missing || "";
    this.missing.hidden = !missing;
    this.sendButton.disabled = !!missing;
    this.sendButton.title = missing || "Send this request through the hub";
  }

  request() {
    let params;
    try {
      params = JSON.parse(this.params.value || "{}");
    } catch (err) {
      throw new Error(`the parameters are not JSON (${err.message})`);
    }
    const messages = [...this.messages.querySelectorAll(".pg-message")].map((row) => {
      const area = row.querySelector("textarea");
      let content = area.value;
      if (area.dataset.json) {
        try {
          content = JSON.parse(area.value);
        } catch {
          throw new Error("a message's content is not JSON; fix it or write it as plain text");
        }
      }
      return { role: row.querySelector("select").value, content };
    });
    return { model: this.model.value.trim(), messages, params };
  }

  async send() {
    let request;
    try {
      request = this.request();
    } catch (err) {
      this.msg.textContent = err.message;
      return;
    }
    const n = Math.max(1, Math.min(MAX_N, Number(this.n.value) || 1));
    this.sendButton.disabled = true;
    this.msg.textContent = `Sending ${n === 1 ? "once" : `${n} times`}…`;
    const res = await api.playgroundSend({ runId: this.runId, instanceId: this.instanceId, provider: this.provider, request, n });
    this.sync();
    if (!res.ok) {
      this.msg.textContent = errorText(res);
      return;
    }
    const replies = res.body.replies;
    const texts = replies.filter((r) => !r.error).map((r) => r.text);
    const distinct = new Set(texts).size;
    this.msg.textContent = `${replies.length} ${replies.length === 1 ? "reply" : "replies"} from ${res.body.model}${replies.length > 1 ? ` · ${distinct} distinct` : ""}`;
    this.replies.replaceChildren(...replies.map((r, i) => this.replyCard(r, i, replies.length)));
  }

  replyCard(r, i, count) {
    const title = count > 1 ? `New reply ${i + 1} of ${count}` : "New reply";
    if (r.error) return h("section", { class: "pg-card pg-new pg-error" }, h("h3", null, title), h("p", null, r.error));
    const diff = diffLines(this.recordedText, r.text);
    const same = diff.every((l) => l.op === " ");
    return h("section", { class: "pg-card pg-new", "aria-label": title },
      h("h3", null, title), h("p", { class: "muted small" }, `${usageText(r.usage, r.costUsd)} · ${ms(r.ms)}`),
      h("pre", { class: "pg-text" }, r.text || "(empty)"),
      h("details", { class: "pg-diff", open: i === 0 ? true : null }, h("summary", { class: "small" }, same ? "Same as the recorded reply" : "Diff with the recorded reply"),
        h("pre", { class: "cmp-diff mono" }, ...diff.map((l) => h("span", { class: l.op === "-" ? "diff-del" : l.op === "+" ? "diff-add" : "diff-same" }, `${l.op} ${l.text}\n`)))));
  }
}
