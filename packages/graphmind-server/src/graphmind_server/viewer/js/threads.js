// Threads (docs/viewer.md "Threads"): the runs that are turns of one conversation, read as one
// transcript (GET /api/threads/{thread}): each turn what was asked (the last user message of its
// first model call) and what was answered (its last model call's reply), each linking its run.
// The runs list groups runs by thread or by app (groupRuns).

import { api, errorText } from "./api.js";
import { itemView, transcript } from "./chat.js";
import { h } from "./frame.js";
import { clock, ms } from "./format.js";
import { tagChips } from "./labels.js";
import { shortId, threadText } from "./runlabel.js";

export const threadHref = (thread) => `#/thread/${encodeURIComponent(thread)}`;

export async function showThread(el, thread) {
  document.body.dataset.threadLoaded = "false";
  el.replaceChildren(h("p", { class: "empty" }, "Loading the thread…"));
  const res = await api.thread(thread);
  if (!res.ok) {
    el.replaceChildren(h("p", { class: "empty" }, `Cannot show this thread: ${errorText(res)}`));
    return;
  }
  const runs = res.body.runs || [];
  const apps = [...new Set(runs.map((r) => r.app).filter(Boolean))];
  const first = runs[0]?.startedAt;
  const last = runs[runs.length - 1]?.startedAt;
  const head = h("div", { class: "run-head thread-head" },
    h("div", null,
      h("h1", null, "Thread ", h("span", { class: "thread-id", title: thread }, threadText(thread))),
      h("p", { class: "muted" }, `${runs.length} turn${runs.length === 1 ? "" : "s"} · ${apps.join(", ") || "?"}`,
        first ? ` · ${clock(first)} – ${clock(last)}` : "")),
    h("div", { class: "run-actions" }, h("a", { class: "small", href: `?thread=${encodeURIComponent(thread)}#/` }, "Its runs in the list")));
  const list = h("ol", { class: "thread-turns", "aria-label": "Turns" });
  runs.forEach((r, i) => list.append(turnView(r, i + 1)));
  el.replaceChildren(head, h("div", { class: "thread-body" }, list));
  document.body.dataset.threadLoaded = "true";
}

function turnView(r, n) {
  const dur = r.startedAt && r.endedAt ? r.endedAt - r.startedAt : null;
  const items = transcript(r.turn?.input, r.turn?.output) || [];
  const asked = items.filter((it) => !it.reply);
  const lastUser = [...asked].reverse().find((it) => it.role === "user" && !it.kind);
  const replies = items.filter((it) => it.reply);
  const chat = h("ol", { class: "chat thread-chat" },
    ...(lastUser ? [itemView(lastUser)] : []),
    ...replies.map(itemView));
  if (!lastUser && !replies.length) chat.append(h("li", { class: "muted small" }, "No model call recorded in this turn."));
  return h("li", { class: "thread-turn", dataset: { runId: r.id } },
    h("div", { class: "thread-turn-head" },
      h("a", { href: `#/run/${encodeURIComponent(r.id)}`, class: "thread-turn-link", title: `Open run ${r.id}` },
        `Turn ${n} · ${r.name || r.id}`),
      h("span", { class: "muted small" }, ` · `, h("span", { class: `status status-${r.status}` }, r.status),
        ` · started ${clock(r.startedAt)}${dur === null ? "" : ` · ${ms(dur)}`} · #${shortId(r.id)}`),
      r.labels?.tags?.length ? " " : null, tagChips(r.labels?.tags),
      r.labels?.note ? h("span", { class: "muted small thread-note" }, ` · ${r.labels.note}`) : null),
    chat);
}

/** The runs list's groups: by thread (a thread's runs together, newest thread first; a run with no
 * thread on its own), or by app. `item(run)` makes one run's element. */
export function groupRuns(runs, by, item) {
  if (by !== "thread" && by !== "app") return runs.map(item);
  const groups = new Map();
  for (const r of runs) {
    const key = by === "app" ? r.app || "?" : r.thread ? r.thread : `\u0000${r.id}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(r);
  }
  const out = [];
  for (const [key, members] of groups) {
    if (key.startsWith("\u0000")) {
      out.push(item(members[0]));
      continue;
    }
    const title = by === "app"
      ? h("span", { class: "run-group-name" }, key)
      : h("a", { class: "run-group-name", href: threadHref(key), title: `Read thread ${key} as one transcript` }, `Thread ${threadText(key)}`);
    const apps = by === "thread" ? [...new Set(members.map((r) => r.app).filter(Boolean))].join(", ") : "";
    out.push(h("li", { class: "run-group", dataset: { group: key } },
      h("div", { class: "run-group-head" }, title,
        h("span", { class: "muted small" }, ` ${members.length} run${members.length === 1 ? "" : "s"}${apps ? ` · ${apps}` : ""}`)),
      h("ol", { class: "run-group-list" }, ...members.map(item))));
  }
  return out;
}
