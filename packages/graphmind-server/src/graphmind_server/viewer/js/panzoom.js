// The graph's toolbar: Graph / Sequence, and pan and zoom for the graph (buttons, Ctrl+wheel, drag
// the background; `0` fits). The zoom is CSS `zoom` on the canvas, so the scroll area follows it.

import { h } from "./frame.js";

// A graph fitted on its own never goes below this: past it the names are unreadable, so it scrolls.
const AUTO_FIT_MIN = 0.6;

export function viewSwitch(graph, sequence) {
  let zoom = 1;
  // Fit on open: a run's graph is fitted to its space (never above 100 %) each time it is laid out
  // (nodes added, a panel opened), until the person zooms by hand; Fit fits again and resumes it.
  let autoFit = true;
  const setZoom = (z) => {
    zoom = Math.min(2, Math.max(0.3, z));
    graph.canvas.style.zoom = String(zoom);
    level.textContent = `${Math.round(zoom * 100)}%`;
  };
  const fit = (floor = 0.3) => {
    const wrap = graph.el.parentElement;
    if (!wrap || !wrap.clientHeight) return;
    // The boxes' width, not the canvas's: the canvas spans the whole space even for one box.
    const w = graph.contentWidth || parseFloat(graph.canvas.style.width) || 1;
    const hh = parseFloat(graph.canvas.style.height) || 1;
    const bar = wrap.querySelector(".view-switch")?.offsetHeight ?? 40;
    setZoom(Math.max(floor, Math.min(1, (wrap.clientWidth - 8) / w, (wrap.clientHeight - bar - 4) / hh)));
  };
  const byHand = (z) => {
    autoFit = false;
    setZoom(z);
  };
  graph.afterLayout = () => autoFit && fit(AUTO_FIT_MIN);
  graph.resetFit = () => {
    autoFit = true;
  };
  const level = h("span", { class: "muted small zoom-level" }, "100%");
  const graphBtn = h("button", { type: "button", class: "toggle", "aria-pressed": "true" }, "Graph");
  const seqBtn = h("button", { type: "button", class: "toggle", "aria-pressed": "false" }, "Sequence");
  const zoomBox = h("span", { class: "zoom" },
    h("button", { type: "button", "aria-label": "Zoom out", onclick: () => byHand(zoom / 1.25) }, "−"), level,
    h("button", { type: "button", "aria-label": "Zoom in", onclick: () => byHand(zoom * 1.25) }, "+"),
    h("button", { type: "button", "aria-label": "Fit the graph", onclick: () => {
      autoFit = true;
      fit();
    } }, "Fit"));
  const show = (seq) => {
    graph.el.hidden = seq;
    sequence.show(seq);
    zoomBox.hidden = seq;
    graphBtn.setAttribute("aria-pressed", String(!seq));
    seqBtn.setAttribute("aria-pressed", String(seq));
  };
  graphBtn.addEventListener("click", () => show(false));
  seqBtn.addEventListener("click", () => show(true));
  graph.el.addEventListener("wheel", (ev) => {
    if (!ev.ctrlKey) return;
    ev.preventDefault();
    byHand(zoom * (ev.deltaY < 0 ? 1.1 : 1 / 1.1));
  }, { passive: false });
  // Drag the background to pan (a node is a button: a press on it stays a click).
  let drag = null;
  graph.el.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0 || ev.target.closest(".gnode, .ag-toggle")) return;
    const wrap = graph.el.parentElement;
    drag = { x: ev.clientX, y: ev.clientY, left: wrap.scrollLeft, top: wrap.scrollTop };
    graph.el.setPointerCapture(ev.pointerId);
    graph.el.classList.add("panning");
  });
  graph.el.addEventListener("pointermove", (ev) => {
    if (!drag) return;
    const wrap = graph.el.parentElement;
    wrap.scrollLeft = drag.left - (ev.clientX - drag.x);
    wrap.scrollTop = drag.top - (ev.clientY - drag.y);
  });
  const end = () => {
    drag = null;
    graph.el.classList.remove("panning");
  };
  graph.el.addEventListener("pointerup", end);
  graph.el.addEventListener("pointercancel", end);
  return h("div", { class: "view-switch", role: "toolbar", "aria-label": "Graph view" }, graphBtn, seqBtn, zoomBox);
}
