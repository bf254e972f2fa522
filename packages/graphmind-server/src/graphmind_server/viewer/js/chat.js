// A model node's input and output as a chat transcript: one item per message (its role, its text,
// the tool calls it asked for with their arguments, the tool results it carries, images as
// placeholders), with the raw JSON one click away. The shapes are every adapter's (docs/viewer.md):
// OpenAI chat and Responses, Anthropic content blocks, LangChain message types, LlamaIndex blocks,
// LiteLLM (OpenAI's), and the core SDK's `{text}` replies.

import { h } from "./frame.js";
import { jsonView } from "./json.js";

const ROLE = { human: "user", ai: "assistant", AIMessageChunk: "assistant", model: "assistant", chatbot: "assistant",
  function: "tool", developer: "system" };

/** Chat items of a model node's input (its messages) and output (the reply), or null when the
 * values do not look like a conversation (the JSON view stays the one shown). */
export function transcript(input, output) {
  const items = [];
  for (const m of messagesOf(input)) items.push(...itemsOf(m));
  const reply = replyOf(output);
  if (reply) for (const it of itemsOf(reply)) items.push({ ...it, reply: true });
  return items.length ? items : null;
}

function messagesOf(input) {
  if (!input || typeof input !== "object") return typeof input === "string" && input ? [{ role: "user", content: input }] : [];
  const out = [];
  if (typeof input.system === "string" && input.system) out.push({ role: "system", content: input.system });
  else if (Array.isArray(input.system)) out.push({ role: "system", content: input.system });
  if (typeof input.instructions === "string" && input.instructions) out.push({ role: "system", content: input.instructions });
  const list = Array.isArray(input.messages) ? input.messages : Array.isArray(input.input) ? input.input
    : typeof input.input === "string" ? [{ role: "user", content: input.input }]
    : typeof input.prompt === "string" ? [{ role: "user", content: input.prompt }]
    : Array.isArray(input.prompts) ? input.prompts.map((p) => ({ role: "user", content: p })) : [];
  for (const m of list) {
    if (Array.isArray(m)) out.push(...m); // LangChain's batches: a list of message lists
    else out.push(m);
  }
  return out;
}

function replyOf(output) {
  if (output === undefined || output === null) return null;
  if (typeof output === "string") return { role: "assistant", content: output };
  if (typeof output !== "object") return null;
  if (output.message && typeof output.message === "object") return output.message; // LlamaIndex ChatResponse
  if ("role" in output || "content" in output || "tool_calls" in output) return { role: "assistant", ...output };
  if (typeof output.text === "string") return { role: "assistant", content: output.text };
  if (Array.isArray(output.output)) return { role: "assistant", content: output.output }; // Responses API
  return null;
}

function roleOf(m) {
  const r = typeof m.role === "string" ? m.role : typeof m.type === "string" ? m.type : "message";
  return ROLE[r] || r;
}

/** One message as chat items: its text bubble first, then its tool calls, then tool results. */
function itemsOf(m) {
  if (typeof m === "string") return [{ role: "user", parts: [{ kind: "text", text: m }] }];
  if (!m || typeof m !== "object") return [];
  const role = roleOf(m);
  const parts = [];
  const calls = [];
  const results = [];
  for (const p of partsOf(m.content ?? m.blocks ?? m.parts)) {
    if (p.kind === "call") calls.push(p);
    else if (p.kind === "result") results.push(p);
    else parts.push(p);
  }
  if (typeof m.thinking === "string" && m.thinking) parts.unshift({ kind: "thinking", text: m.thinking });
  for (const c of Array.isArray(m.tool_calls) ? m.tool_calls : []) calls.push(callOf(c));
  const items = [];
  if (role === "tool") {
    const text = parts.map((p) => p.text || "").join("\n");
    items.push({ role: "tool", kind: "result", id: m.tool_call_id ?? m.tool_use_id ?? null, name: m.name ?? null, text });
  } else if (parts.length || (!calls.length && !results.length)) {
    items.push({ role, parts });
  }
  for (const c of calls) items.push({ role, kind: "call", ...c });
  for (const r of results) items.push({ role: "tool", kind: "result", ...r });
  return items;
}

function partsOf(content) {
  if (content === undefined || content === null) return [];
  if (typeof content === "string") return content ? [{ kind: "text", text: content }] : [];
  if (!Array.isArray(content)) return [{ kind: "text", text: JSON.stringify(content) }];
  const out = [];
  for (const b of content) {
    if (typeof b === "string") {
      out.push(/^\[(image|image_url|input_image|document|audio)\]$/.test(b) ? { kind: "image", text: b } : { kind: "text", text: b });
      continue;
    }
    if (!b || typeof b !== "object") continue;
    const t = b.type || b.block_type;
    if (t === "text" || t === "input_text" || t === "output_text") out.push({ kind: "text", text: String(b.text ?? "") });
    else if (t === "thinking" || t === "reasoning") out.push({ kind: "thinking", text: String(b.thinking ?? b.text ?? "") });
    else if (t === "tool_use" || t === "function_call" || t === "tool_call") out.push({ kind: "call", ...callOf(b) });
    else if (t === "tool_result" || t === "function_call_output") {
      const inner = partsOf(b.content ?? b.output);
      out.push({ kind: "result", id: b.tool_use_id ?? b.call_id ?? null, name: null,
        text: inner.map((p) => p.text || "").join("\n"), error: b.is_error === true });
    } else if (/image|document|audio|file/.test(String(t))) out.push({ kind: "image", text: `[${t}]` });
    else if (t === "message" && b.content) out.push(...partsOf(b.content));
    else out.push({ kind: "text", text: JSON.stringify(b) });
  }
  return out;
}

function callOf(c) {
  if (!c || typeof c !== "object") return { id: null, name: String(c), args: "" };
  const fn = c.function && typeof c.function === "object" ? c.function : c;
  const args = fn.arguments ?? fn.args ?? fn.input ?? fn.tool_kwargs ?? c.input ?? null;
  return { id: c.id ?? c.call_id ?? c.tool_call_id ?? null, name: fn.name ?? c.tool_name ?? "?", args: argsText(args) };
}

function argsText(args) {
  if (args === null || args === undefined) return "";
  if (typeof args === "string") {
    try {
      return JSON.stringify(JSON.parse(args), null, 2);
    } catch {
      return args;
    }
  }
  return JSON.stringify(args, null, 2);
}

/** The transcript as elements, with the raw JSON behind a toggle; null when there is no chat. */
export function chatView(input, output, { hiddenInput, hiddenOutput } = {}) {
  const items = transcript(input, output);
  if (!items) return null;
  const list = h("ol", { class: "chat", "aria-label": "Conversation" });
  for (const it of items) list.append(itemView(it));
  const raw = h("details", { class: "chat-raw" }, h("summary", null, "Raw JSON"),
    h("h3", null, "Input"), jsonView(input, hiddenInput, 1),
    output === undefined ? null : h("h3", null, "Output"), output === undefined ? null : jsonView(output, hiddenOutput, 1));
  return h("div", { class: "chat-wrap" }, list, raw);
}

/** One chat item as a list element (the thread view reuses it: threads.js). */
export function itemView(it) {
  const who = it.kind === "call" ? `${it.role} → tool call` : it.kind === "result" ? "tool result" : it.role;
  const cls = `chat-item role-${String(it.role).replace(/[^a-z0-9_-]/gi, "_")}${it.kind ? ` chat-${it.kind}` : ""}${it.reply ? " chat-reply" : ""}`;
  const head = h("div", { class: "chat-who" }, who, it.reply ? h("span", { class: "chip" }, "reply") : null);
  if (it.kind === "call") {
    return h("li", { class: cls }, head, h("div", { class: "chat-call" }, h("span", { class: "chat-tool" }, it.name),
      it.id ? h("span", { class: "muted small" }, ` ${it.id}`) : null),
    it.args ? h("pre", { class: "chat-args" }, it.args) : null);
  }
  if (it.kind === "result") {
    return h("li", { class: `${cls}${it.error ? " chat-error" : ""}` }, head,
      it.name || it.id ? h("div", { class: "muted small" }, [it.name, it.id].filter(Boolean).join(" · ")) : null,
      h("pre", { class: "chat-text" }, it.text));
  }
  const body = it.parts.length ? it.parts.map((p) => p.kind === "image" ? h("span", { class: "chip chat-image" }, `image ${p.text}`)
    : h("pre", { class: `chat-text${p.kind === "thinking" ? " chat-thinking" : ""}` }, p.text))
    : [h("span", { class: "muted" }, "(empty)")];
  return h("li", { class: cls }, head, ...body);
}
