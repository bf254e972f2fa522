// The one status rule (docs/api.md, "Statuses"), as the hub runs it (store/status.py): the page
// folds the same events for its timeline, so it runs the same rule on them. The run's own status
// is never derived here: it is the hub's (GET /api/runs, `run` frames). tests/fixtures/
// status-golden.json holds the event sequences both are held to (tests/browser/test_status_rule.py
// and packages/graphmind-server/tests/test_status_rule.py). A change here is a change there.

export const STARTS = new Set(["node.started", "run.started"]);
const ABORTED_ERROR = "RunAborted"; // the error an SDK's aborted call ends with: stopped, not failed
const AGENT = { finished: "ok", error: "error", aborted: "aborted" };

/** A run's status after its `run.finished`: the event's status, `finished` if it is not one. */
export const runFinal = (status) => (status === "error" || status === "aborted" ? status : "finished");

/** One execution's status after one of its events (`current`: before it; a new one is `running`). */
export function execution(current, ev) {
  switch (ev.type) {
    case "node.started":
    case "run.started":
      return "running";
    case "exec.paused":
      return "held";
    case "exec.resumed":
      if (current !== "held") return current; // a resume without its pause changes nothing
      return ev.action === "abort" ? "aborted" : "running";
    case "node.finished":
      return ev.injected === true ? "injected" : "ok";
    case "node.error": {
      const named = ev.error && typeof ev.error === "object" ? ev.error.name : undefined;
      return current === "aborted" || named === ABORTED_ERROR ? "aborted" : "error";
    }
    case "run.finished":
      return AGENT[runFinal(ev.status)];
    default:
      return current;
  }
}

/** A node's status: `held` while any execution of it is held, else its latest execution's (the one
 * started last), `pending` with none (only hinted). */
export const node = (held, latest) => (held ? "held" : latest ?? "pending");

/** What a node or an execution shows: in an abandoned run, one still running or held never will
 * end (its app is gone), so it shows `abandoned`; if the app comes back it shows its own again. */
export const shown = (status, runStatus) =>
  runStatus === "abandoned" && (status === "running" || status === "held") ? "abandoned" : status;

/** [kind, name] from a node id, for a node whose events do not say: `tool:search` is
 * [`tool`, `search`]; an id without a colon (or with nothing on one side) is [`custom`, the id]. */
export function splitNodeId(nodeId) {
  const i = nodeId.indexOf(":");
  const kind = i < 0 ? "" : nodeId.slice(0, i);
  const name = i < 0 ? "" : nodeId.slice(i + 1);
  return kind && name ? [kind, name] : ["custom", nodeId];
}
