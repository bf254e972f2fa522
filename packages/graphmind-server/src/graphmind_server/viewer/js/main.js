// Wires the page together: the live feed and the REST API fill the store, views redraw from it
// once per animation frame. A run opens from its node summary at once, then its events load in
// pages in the background, folded in chunks so input is never blocked for long.

import { api, errorText } from "./api.js";
import { DebugControls } from "./debug.js";
import { showCompare } from "./compare.js";
import { execContextSig, loadContext } from "./context.js";
import { showBatch } from "./batch.js";
import { DetailView } from "./detail.js";
import { schedule, yieldToBrowser } from "./frame.js";
import { GatesView } from "./gates.js";
import { connectHelp } from "./housekeeping.js";
import { installKeyboard, toggleHelp } from "./keyboard.js";
import { installPanelToggle } from "./layout.js";
import { LiveFeed } from "./live.js";
import { RunModel, modelFromSummary } from "./model.js";
import { RunsView } from "./runs.js";
import { pageOf } from "./pages.js";
import { RunView } from "./runview.js";
import { store, emit, on, setGates, addGate, removeGate, setGateProposals } from "./state.js";
import { showThread } from "./threads.js";
import { LIGHT_EVENTS } from "./values.js";

const PAGE = 2000;
const CHUNK = 500;

const $ = (id) => document.getElementById(id);
const runsView = new RunsView($("runs"), { onFilter: () => schedule("runs", () => runsView.render()) });
const debugControls = new DebugControls($("debug-controls"), { onDebug: (d) => setDebug(d), onPause: (p) => setPause(p) });
const runView = new RunView($("run-view"), {
  onSelectNode: (nodeId) => select(nodeId, null),
  onSelectExec: (nodeId, key) => select(nodeId, key),
  onPause: (runId) => debugControls.pause(runId),
});
const detail = new DetailView($("detail"), {
  onToggleBreakpoint: (nodeId, gate, onOff) => debugControls.toggleBreakpoint(nodeId, gate, onOff),
  onSelectExec: (key) => select(store.selectedNode, key),
  onClose: () => select(null, null),
});
const gatesView = new GatesView($("gates"), { onOpenNode: (runId, nodeId) => go(runId, nodeId) });

// ---- redraws ------------------------------------------------------------------------------
on("runs", () => {
  runsView.filters.runsChanged();
  schedule("runs", () => runsView.render());
  // The open run's "Compare with…" lists the other runs: a run that arrives later joins it, even
  // when the open run itself no longer changes (a finished run's header is not refreshed otherwise).
  schedule("header", () => store.runId && runView.mounted && runView.renderHeader());
  if (store.runs.size && runView.el.querySelector(".connect-help")) runView.unmount("Pick a run on the left.");
  schedule("gates", () => gatesView.render()); // cards name their run
});
on("gates", () => {
  openHeldRun();
  schedule("gates", () => gatesView.render());
  // A background tab says it is waiting for an answer.
  schedule("title", () => (document.title = store.gates.length ? `(${store.gates.length} held) GraphMind` : "GraphMind"));
  schedule("runs", () => runsView.render());
  schedule("header", () => store.runId && runView.mounted && runView.renderHeader());
});
on("debug", () => {
  schedule("debug", () => debugControls.render());
  schedule("graph-all", () => runView.graph.repaintAll(store.model));
  schedule("detail", () => detail.update());
});
on("model", () => schedule("model", renderModel));
on("selection", () => {
  schedule("graph-all", () => runView.graph.repaintAll(store.model));
  schedule("detail", () => detail.render());
  schedule("timeline-mark", () => runView.timeline.markSelected());
  schedule("chart-mark", () => runView.chart.markSelected());
});
// A breakdown arrived with warnings: the node's badge (context.js).
on("context", () => schedule("graph-all", () => store.model && runView.graph.repaintAll(store.model)));

function renderModel() {
  const m = store.model;
  if (!m || !runView.mounted) return;
  const dirty = m.takeDirty();
  runView.chart.reserve(m); // before the graph fits itself to what is left
  runView.graph.render(m, dirty.nodes);
  if (dirty.order || dirty.execs.size) runView.timeline.render();
  detail.update(dirty.execs);
  runView.renderHeader();
  if (!m.summaryOnly) {
    runView.chart.refresh(store.runId, m, dirty.execs);
    xrayModelNodes(m, dirty.nodes);
  }
}

/** Each model node's latest call, once held or ended, is X-rayed in the hub so its graph box can
 * carry the warnings badge (one request per call and state: context.js caches them). */
function xrayModelNodes(m, nodeIds) {
  for (const id of nodeIds) {
    const n = m.nodes.get(id);
    const x = n && n.kind === "llm" ? n.latest : null;
    if (x && (x.endTs !== null || x.gate) && (x.input !== undefined || x.lazy)) loadContext(m.id, x.nodeId, x.instanceId, execContextSig(x));
  }
}

function setDebug(d) {
  if (!d || typeof d !== "object") return;
  if (typeof d.version === "number" && d.version < (store.debug.version ?? 0)) return; // stale
  store.debug = { breakpoints: [], mode: "run", pauseOnError: "on", pauseOnHandoff: "off", ...d };
  emit("debug");
}

/** The hub's armed Pause (hello, the `pause` frame, the answer to a click). */
function setPause(p) {
  if (!p || typeof p !== "object") return;
  store.pause = { any: p.any === true, runs: Array.isArray(p.runs) ? p.runs : [] };
  schedule("debug", () => debugControls.render());
  schedule("header", () => store.runId && runView.mounted && runView.renderHeader());
}

// ---- the live feed --------------------------------------------------------------------------
let helloSeen;
const helloPromise = new Promise((resolve) => (helloSeen = resolve));
let loadBuffer = null; // live events of the run being loaded, applied once its pages are in
const liveTouched = new Set();

const feed = new LiveFeed(onFrame, (state, detailText) => {
  store.conn = { state, detail: detailText || "" };
  const el = $("conn");
  el.textContent = state === "live" ? "live" : state === "connecting" ? "connecting…" : `offline, retrying${detailText ? `: ${detailText}` : ""}`;
  el.className = `conn conn-${state}`;
}, () => refreshRuns());

/** The hub cannot store events (disk full, its file gone): "not storing: <reason>" until it can. */
function setStoring(storing, reason) {
  const el = $("storing");
  el.hidden = storing !== false;
  el.textContent = storing === false ? `not storing: ${reason || "the database cannot be written"}` : "";
}

function onFrame(f) {
  switch (f.type) {
    case "storing":
      setStoring(f.storing, f.reason);
      break;
    case "hello":
      setStoring(f.storing, f.reason);
      setDebug(f.debug);
      setPause(f.pause);
      setGates(Array.isArray(f.gates) ? f.gates : []);
      helloSeen();
      break;
    case "event":
      if (f.runId === store.runId && f.event) {
        if (loadBuffer) loadBuffer.push(f.event);
        else if (store.model && store.model.apply(f.event)) emit("model");
      }
      break;
    case "run":
      if (f.run && f.run.id) {
        keepLabels(f.run, store.runs.get(f.run.id));
        store.runs.set(f.run.id, f.run);
        liveTouched.add(f.run.id);
        emit("runs");
        if (f.run.meta?.replayOf === store.runId && store.runId) {
          schedule("header", () => runView.mounted && runView.renderHeader()); // "replayed by" gains a link
        }
        if (f.run.id === store.runId) {
          schedule("header", () => runView.mounted && runView.renderHeader());
          if (store.model) {
            store.model.setRunStatus(f.run.status); // an abandoned run's open nodes show it
            emit("model");
          }
        }
      }
      break;
    case "run.deleted":
      store.runs.delete(f.runId);
      emit("runs");
      if (f.runId === store.runId) closeRun("This run was deleted.");
      break;
    case "gate.held":
      if (f.gate) {
        addGate(f.gate);
        debugControls.msg.textContent = "";
      }
      break;
    case "gate.released":
      removeGate(f.gateId);
      break;
    case "gate.proposals":
      setGateProposals(f.gateId, f.proposals);
      break;
    case "debug":
      setDebug(f.debug);
      break;
    case "pause":
      setPause(f.pause);
      break;
    default:
      break;
  }
}

/** A boot.js request, once: later calls go to the hub again. */
function takeBoot(key, runId) {
  const boot = window.__graphmindBoot;
  if (!boot || !boot[key] || (runId !== undefined && boot.runId !== runId)) return null;
  const p = boot[key];
  boot[key] = null;
  return p;
}

async function refreshRuns() {
  const res = await (takeBoot("runs") || api.runs({ limit: 1000 }));
  if (!res.ok) return;
  for (const r of res.body.runs || []) {
    if (!liveTouched.has(r.id) || !store.runs.has(r.id)) store.runs.set(r.id, r);
  }
  emit("runs");
  if (!store.runs.size && !store.runId && !/^#\/(run|compare|batch|thread)\//.test(location.hash) && !pageOf(location.hash)) runView.el.replaceChildren(connectHelp());
}

// ---- opening a run --------------------------------------------------------------------------
let loadToken = 0;

async function openRun(runId) {
  const token = ++loadToken;
  store.runId = runId;
  store.model = null;
  store.loading = true;
  document.body.dataset.runLoaded = "false";
  document.body.dataset.graphDrawn = "false";
  loadBuffer = [];
  runView.mount();
  runView.msg.textContent = "";
  runView.renderHeader();
  emit("runs");
  const summary = await (takeBoot("run", runId) || api.run(runId));
  if (token !== loadToken) return;
  if (!summary.ok) {
    closeRun(summary.status === 404 ? `No run ${runId} on this hub (deleted?).` : errorText(summary));
    return;
  }
  store.runs.set(runId, { ...(store.runs.get(runId) || {}), ...stripNodes(summary.body) });
  store.model = modelFromSummary(runId, summary.body);
  runView.timeline.setModel(store.model);
  emit("model");
  emit("selection");
  // The graph is drawn from the node summary in the next frame; from here the page is usable
  // while the events load in the background.
  requestAnimationFrame(() => {
    if (token === loadToken) {
      performance.mark("graphmind:graph");
      document.body.dataset.graphDrawn = "true";
    }
  });

  await helloPromise; // so no event falls between the pages and the live feed
  if (token !== loadToken) return;
  const model = new RunModel(runId);
  // A huge run keeps its values in the hub (values.js); tests lower the bar with
  // window.graphmindLightEvents.
  model.light = (summary.body.eventCount ?? 0) > (window.graphmindLightEvents ?? LIGHT_EVENTS);
  model.setRunStatus(store.runs.get(runId)?.status);
  let after = 0;
  for (;;) {
    const page = await api.events(runId, after, PAGE);
    if (token !== loadToken) return;
    if (!page.ok) {
      runView.msg.textContent = `Could not load events: ${errorText(page)}`;
      break;
    }
    const events = page.body.events || [];
    for (let i = 0; i < events.length; i += CHUNK) {
      for (const ev of events.slice(i, i + CHUNK)) model.apply(ev);
      await yieldToBrowser();
      if (token !== loadToken) return;
    }
    if (page.body.next === null || page.body.next === undefined || !events.length) break;
    after = page.body.next;
  }
  for (const ev of loadBuffer) model.apply(ev);
  loadBuffer = null;
  model.setRunStatus(store.runs.get(runId)?.status); // it may have changed while the pages loaded
  store.model = model;
  store.loading = false;
  runView.timeline.setModel(model);
  emit("model");
  emit("selection");
  performance.mark("graphmind:loaded");
  document.body.dataset.runLoaded = "true";
}

/** A run frame from the writer carries no labels (labels.js): the ones the page has stay. */
function keepLabels(run, before) {
  if (!before) return;
  if (!("labels" in run) && before.labels) run.labels = before.labels;
  if (!("nodeLabels" in run) && before.nodeLabels) run.nodeLabels = before.nodeLabels;
}

function stripNodes(run) {
  const { nodes: _nodes, ...rest } = run;
  return rest;
}

function closeRun(text) {
  loadToken++;
  loadBuffer = null;
  store.runId = null;
  store.model = null;
  store.selectedNode = null;
  store.selectedExec = null;
  runView.unmount(text);
  detail.render();
  emit("runs");
}

function select(nodeId, key) {
  store.selectedNode = nodeId;
  store.selectedExec = key;
  // The address follows after the frame: history.replaceState costs tens of ms in a loaded
  // browser, and the detail must show first (a click on a huge run answers in < 100 ms).
  const want = routeHash(store.runId, nodeId);
  requestAnimationFrame(() => setTimeout(() => {
    if (store.runId && store.selectedNode === nodeId && location.hash !== want) history.replaceState(null, "", want);
  }, 0));
  if (key) runView.timeline.reveal(key);
  emit("selection");
}

// ---- routing: #/run/<id>[/node/<nodeId>] ----------------------------------------------------
function routeHash(runId, nodeId) {
  if (!runId) return "#/";
  return `#/run/${encodeURIComponent(runId)}${nodeId ? `/node/${encodeURIComponent(nodeId)}` : ""}`;
}

function go(runId, nodeId) {
  location.hash = routeHash(runId, nodeId);
}

function onRoute() {
  const thread = location.hash.match(/^#\/thread\/(.+)$/);
  if (thread) {
    if (store.runId) closeRun("");
    showThread(runView.el, decodeURIComponent(thread[1]));
    return;
  }
  const page = pageOf(location.hash); // the trends page, the playground (pages.js)
  if (page) {
    if (store.runId) closeRun("");
    page(runView.el);
    return;
  }
  const cmp = location.hash.match(/^#\/compare\/([^/]+)\/([^/]+)$/);
  if (cmp) {
    if (store.runId) closeRun("");
    showCompare(runView.el, decodeURIComponent(cmp[1]), decodeURIComponent(cmp[2]));
    return;
  }
  const batch = location.hash.match(/^#\/batch\/([^/]+)$/);
  if (batch) {
    if (store.runId) closeRun("");
    showBatch(runView.el, decodeURIComponent(batch[1]));
    return;
  }
  const m = location.hash.match(/^#\/run\/([^/]+)(?:\/node\/(.+))?$/);
  if (!m) {
    if (store.runId) closeRun("Pick a run on the left.");
    return;
  }
  const runId = decodeURIComponent(m[1]);
  const nodeId = m[2] ? decodeURIComponent(m[2]) : null;
  if (runId !== store.runId) {
    store.selectedNode = nodeId;
    store.selectedExec = null;
    openRun(runId);
  } else if (nodeId !== store.selectedNode) {
    select(nodeId, null);
  }
}

/** With no run selected, a held gate opens its run (the oldest gate first) so its graph shows
 * while it waits. Once per gate: a person who goes back to the list is not pulled away again. */
const autoOpened = new Set();
function openHeldRun() {
  const fresh = store.gates.filter((g) => !autoOpened.has(g.gateId));
  for (const g of fresh) autoOpened.add(g.gateId);
  if (store.runId || /^#\/run\//.test(location.hash) || pageOf(location.hash)) return;
  const g = fresh.find((x) => typeof x.runId === "string" && x.runId);
  if (g) go(g.runId, null);
}

// ---- keyboard -------------------------------------------------------------------------------
function oldestCard() {
  gatesView.render(); // the card may be queued for the next frame
  return gatesView.oldest();
}

installKeyboard({
  continueOldest: () => oldestCard()?.card?.send("continue"),
  retryOldest: () => {
    const o = oldestCard();
    if (o && o.gate.actions?.includes("retry")) o.card.send("retry");
  },
  injectOldest: () => oldestCard()?.card?.inject(),
  editOldest: () => oldestCard()?.card?.edit(),
  reloadOldest: () => oldestCard()?.card?.reload(),
  recordedOldest: () => oldestCard()?.card?.recorded(),
  fork: () => detail.openFork(),
  step: () => {
    if (store.debug.mode !== "step") debugControls.setMode("step");
    else oldestCard()?.card?.send("continue");
  },
  runMode: () => debugControls.setMode("run"),
  pause: () => debugControls.pause(),
  moveRun: (d) => {
    const links = [...document.querySelectorAll(".run-item")];
    if (!links.length) return;
    const i = links.findIndex((a) => a.dataset.runId === store.runId);
    const next = links[Math.max(0, Math.min(links.length - 1, i < 0 ? 0 : i + d))];
    go(next.dataset.runId, null);
  },
  escape: () => store.selectedNode && select(null, null),
  // A gate held in another run than the one on screen: show that run, the held node selected.
  otherHeld: () => {
    const g = store.gates.find((x) => x.runId && x.runId !== store.runId);
    if (g) go(g.runId, g.nodeId);
  },
}, $("help"));
$("help-button").addEventListener("click", () => toggleHelp($("help")));
installPanelToggle($("runs-toggle"));

// ---- start ----------------------------------------------------------------------------------
window.addEventListener("hashchange", onRoute);
window.addEventListener("resize", () => schedule("model", () => {
  if (store.model) runView.graph.render(store.model, new Set());
  runView.timeline.render();
  runView.chart.draw();
}));
// Running runs' durations tick once a second; nothing else polls.
setInterval(() => {
  if (store.gates.length) gatesView.tick();
  if ([...store.runs.values()].some((r) => r.status === "running")) emit("runs");
  if (store.runId && store.runs.get(store.runId)?.status === "running") {
    schedule("header", () => runView.mounted && runView.renderHeader());
  }
}, 1000);

feed.start();
refreshRuns();
onRoute();
debugControls.render();
window.graphmindViewer = { store }; // for tests and the curious: read-only use
