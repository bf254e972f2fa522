// What tells two runs apart where the page names one (the runs list, the pause card, "Compare
// with…"): same-named runs differ by their start time, app, id and the meta the app gave them
// (`gm.run("refund", meta={"ticket": "T-12"})`). The keys GraphMind itself keeps in a run's meta
// (the command line, replay links, OTLP facts) are left out: they are shown elsewhere.

import { clock } from "./format.js";

/** A thread id, short enough for a line: the start and the end of a long one. */
export function threadText(thread) {
  const s = String(thread ?? "");
  return s.length > 24 ? `${s.slice(0, 12)}…${s.slice(-8)}` : s;
}

const OWN_META = new Set(["argv", "cwd", "executable", "replayOf", "forkedAt", "otlp"]);
const META_CHARS = 60;

/** The first 8 characters of a run id (after an `otlp-` prefix): enough to tell runs apart. */
export function shortId(id) {
  const s = String(id || "");
  return s.startsWith("otlp-") ? `otlp-${s.slice(5, 13)}` : s.slice(0, 8);
}

/** `ticket=T-12 · user=ana`: the app's own run meta, one line, cut at 60 characters. */
export function metaText(meta) {
  if (!meta || typeof meta !== "object" || Array.isArray(meta)) return "";
  const parts = [];
  for (const [k, v] of Object.entries(meta)) {
    if (OWN_META.has(k) || v === null || v === undefined) continue;
    const text = typeof v === "string" ? v : JSON.stringify(v);
    parts.push(`${k}=${text}`);
  }
  const line = parts.join(" · ");
  return line.length > META_CHARS ? `${line.slice(0, META_CHARS - 1)}…` : line;
}

/** `started 07:06:40 · refund-app · #1f3a9c2e · thread conv-1 · #bug · ticket=T-12` (what is known of it). */
export function runFacts(r, { app = true } = {}) {
  const parts = [];
  if (r.startedAt) parts.push(`started ${clock(r.startedAt)}`);
  if (app && r.app) parts.push(r.app);
  parts.push(`#${shortId(r.id)}`);
  // The conversation it is a turn of, and a person's tags (threads.js, labels.js).
  if (r.thread) parts.push(`thread ${threadText(r.thread)}`);
  const tags = Array.isArray(r.labels?.tags) ? r.labels.tags : [];
  if (tags.length) parts.push(tags.map((t) => `#${t}`).join(" "));
  const meta = metaText(r.meta);
  if (meta) parts.push(meta);
  return parts.join(" · ");
}

/** One line for a run in a list of choices (a `<select>`): name, status, and its facts. */
export function runChoice(r) {
  return `${r.name || r.id} · ${r.status} · ${runFacts(r)}`;
}
