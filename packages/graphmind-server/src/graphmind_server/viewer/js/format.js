// Words and numbers as the page shows them.

export const REDACTED = "__REDACTED__";

export function ms(v) {
  if (v === null || v === undefined || Number.isNaN(v)) return "–";
  if (v === 0) return "0 ms";
  if (v < 1) return `${v.toFixed(2)} ms`;
  if (v < 1000) return `${Math.round(v)} ms`;
  if (v < 60000) return `${(v / 1000).toFixed(v < 10000 ? 2 : 1)} s`;
  const s = Math.round(v / 1000); // whole seconds first: 119.7 s is "2 min 0 s", not "1 min 60 s"
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** `ms` for a narrow column (the timeline's): a minute and more in at most 6 characters. */
export function msShort(v) {
  if (!(v >= 59999.5)) return ms(v);
  const s = Math.round(v / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  const m = Math.round(s / 60);
  return m < 6000 ? `${Math.floor(m / 60)}h ${m % 60}m` : `${Math.round(m / 60)}h`;
}

// One formatter, made once: toLocaleTimeString builds a new one per call (0.2 ms each, which a
// node detail listing 100 executions paid on every click).
const CLOCK = new Intl.DateTimeFormat([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });

export function clock(ts) {
  if (!ts) return "–";
  return CLOCK.format(new Date(ts));
}

export function ago(ts, now = Date.now()) {
  if (!ts) return "";
  const s = Math.max(0, Math.round((now - ts) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return new Date(ts).toLocaleDateString();
}

// Why events of a run were not recorded (the run's `dropped.reasons`, docs/api.md).
const DROPPED_WHY = {
  hub_stalled: "the hub took no events for a while and the app's buffer was full",
  detached: "the app's replay buffer was full while no debugger was attached",
  overflow: "the app's buffer overflowed while its event loop could not wait for the hub",
};

/** "1,234 events were not recorded: <why>" for a run's `dropped` ({count, reasons}). */
export function droppedText(dropped) {
  const n = dropped.count;
  const reasons = Object.entries(dropped.reasons || {}).filter(([, c]) => c > 0).sort((a, b) => b[1] - a[1]);
  const why = reasons.map(([reason, c]) => {
    const text = DROPPED_WHY[reason] || reason.replaceAll("_", " ");
    return reasons.length > 1 ? `${text} (${c.toLocaleString("en-US")})` : text;
  });
  return `${n.toLocaleString("en-US")} ${n === 1 ? "event was" : "events were"} not recorded: ${why.join("; ") || "unknown reason"}`;
}

/** The pause card's reason in words. */
export function reasonText(gate) {
  switch (gate.reason) {
    case "breakpoint":
      return gate.source === "code" ? "Breakpoint (set in code)" : "Breakpoint";
    case "condition":
      return `Condition: ${typeof gate.why === "string" && gate.why ? gate.why : "condition"}`;
    case "step":
      return "Step";
    case "error": {
      const msg = gate.error && (gate.error.message || gate.error.name);
      return `Error: ${msg || "the call raised"}`;
    }
    case "loop": {
      const n = (gate.loop && gate.loop.repeats) || 3;
      return `Loop: ${n}× ${gate.name || gate.nodeId} with identical arguments`;
    }
    case "pause":
      return "Paused";
    case "handoff": // Pause on handoff (docs/protocol.md, "Agents"): edit what is handed over, or answer as the target
      return `Handoff: ${String(gate.name || gate.nodeId || "").replace("->", " → ")} (edit what is handed over, or inject to answer as the target)`;
    case "effect": {
      const c = gate.effect && gate.effect.class ? gate.effect.class : "write";
      return `Safe mode: a ${c} call, held before it runs`;
    }
    case "divergence": {
      const why = gate.replay && typeof gate.replay.why === "string" && gate.replay.why ? `: ${gate.replay.why}` : "";
      return `Divergence from the recording${why}`;
    }
    default:
      return gate.reason ? String(gate.reason) : "Held";
  }
}

export function gateText(gate) {
  return gate === "before" ? "before the call" : gate === "after" ? "after the call" : gate === "error" ? "on error" : gate;
}

/** Which GRAPHMIND_HIDE_* switch hid a value: names both when either could have. */
export function hiddenBy(kind, which) {
  const tool = kind === "tool";
  if (which === "input") return tool ? "GRAPHMIND_HIDE_INPUTS or GRAPHMIND_HIDE_TOOL_ARGS" : "GRAPHMIND_HIDE_INPUTS";
  if (which === "toolArgs") return "GRAPHMIND_HIDE_INPUTS or GRAPHMIND_HIDE_TOOL_ARGS";
  return tool ? "GRAPHMIND_HIDE_OUTPUTS or GRAPHMIND_HIDE_TOOL_RESULTS" : "GRAPHMIND_HIDE_OUTPUTS";
}

export function containsRedacted(value) {
  if (value === REDACTED) return true;
  if (Array.isArray(value)) return value.some(containsRedacted);
  if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === REDACTED || containsRedacted(v)) return true;
    }
  }
  return false;
}

export const STATUS_TEXT = {
  pending: "pending",
  running: "running",
  held: "held",
  ok: "ok",
  error: "error",
  injected: "injected",
  aborted: "aborted",
  finished: "finished",
  abandoned: "abandoned",
};
