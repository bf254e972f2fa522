// Batches DOM work into one pass per animation frame: a burst of a thousand events costs one
// render, not a thousand. Callers register named jobs; a job queued twice in a frame runs once.

const jobs = new Map();
let scheduled = false;

function flush() {
  scheduled = false;
  const todo = [...jobs.values()];
  jobs.clear();
  for (const job of todo) {
    try {
      job();
    } catch (err) {
      console.error("[graphmind viewer] render failed:", err);
    }
  }
}

/** Run `fn` once in the next animation frame, however often it is scheduled under `key`. */
export function schedule(key, fn) {
  jobs.set(key, fn);
  if (!scheduled) {
    scheduled = true;
    // rAF does not fire in a hidden tab; the timeout keeps state current for when it comes back.
    if (document.hidden) setTimeout(flush, 100);
    else requestAnimationFrame(flush);
  }
}

/** Yield to the browser so input and paint can run between chunks of a long job. */
export function yieldToBrowser() {
  return new Promise((resolve) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => resolve();
    ch.port2.postMessage(null);
  });
}

/** Create an element: h("div", {class: "x", onclick}, child, "text"). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
      else if (k === "class") el.className = v;
      else if (k === "text") el.textContent = v;
      else if (k === "dataset") Object.assign(el.dataset, v);
      else el.setAttribute(k, v === true ? "" : String(v));
    }
  }
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}
