// Housekeeping from the page: delete a run, export it (the `graphmind record` format or OTLP
// JSON), compare it with another run, and the empty state that says how to connect an app.

import { api, errorText } from "./api.js";
import { h } from "./frame.js";
import { runChoice } from "./runlabel.js";
import { store } from "./state.js";

/** How to connect an app to this hub: the GRAPHMIND_URL line for its port, and the token rule. */
export function connectHelp() {
  const url = `ws://${location.hostname === "localhost" ? "127.0.0.1" : location.hostname}:${location.port || "80"}/ingest`;
  return h("div", { class: "connect-help" },
    h("p", null, "No runs yet. Start an app with GraphMind on and pointed at this hub:"),
    h("pre", { class: "mono connect-line" }, `GRAPHMIND=1 GRAPHMIND_URL=${url} python your_app.py`),
    h("p", { class: "small" }, "With a token (graphmind serve --token auto), apps of your user find it on their own; " +
      "never put a token on a command line (docs/security.md)."));
}

/** The header's tools for the open run: Compare with…, Export, Delete. */
export function runTools(runId, { onCompare, msg }) {
  const others = [...store.runs.values()].filter((r) => r.id !== runId).sort((a, b) => (b.startedAt ?? 0) - (a.startedAt ?? 0));
  const pick = h("select", { class: "compare-pick", "aria-label": "Compare with run" }, h("option", { value: "" }, "Compare with…"),
    ...others.slice(0, 200).map((r) => h("option", { value: r.id }, runChoice(r))));
  pick.addEventListener("change", () => pick.value && onCompare(runId, pick.value));
  const exportAs = (format) => async () => {
    const res = await api.exportRun(runId, format);
    if (!res.ok) {
      msg.textContent = `Export failed: ${errorText(res)}`;
      return;
    }
    const a = h("a", { href: URL.createObjectURL(res.body), download: `graphmind-${runId}.${format === "otlp" ? "otlp.json" : "jsonl"}` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    msg.textContent = format === "otlp" ? "Exported as OTLP JSON." : "Exported in the graphmind record format (graphmind import reads it).";
  };
  let armed = null;
  const del = h("button", { type: "button", class: "danger", title: "Delete this run from the hub's database" }, "Delete");
  del.addEventListener("click", async () => {
    if (!armed) { // a second click within 4 s confirms: no dialog to miss
      del.textContent = "Confirm delete";
      armed = setTimeout(() => { armed = null; del.textContent = "Delete"; }, 4000);
      return;
    }
    clearTimeout(armed);
    armed = null;
    const res = await api.deleteRun(runId);
    msg.textContent = res.ok ? "" : `Delete failed: ${errorText(res)}`;
  });
  return h("div", { class: "run-tools" }, pick,
    h("button", { type: "button", title: "Download this run as JSONL (graphmind record format)", onclick: exportAs("jsonl") }, "Export"),
    h("button", { type: "button", title: "Download this run as OTLP JSON (OpenInference attributes)", onclick: exportAs("otlp") }, "OTLP"),
    del);
}
