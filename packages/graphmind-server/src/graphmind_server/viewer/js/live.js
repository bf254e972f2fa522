// The live feed (WS /api/live). Reconnects by itself with backoff and asks for every event after
// the last cursor it saw, so a hub restart or a dropped socket loses nothing.

import { liveProtocols, tokenReady } from "./token.js";

const MIN_DELAY_MS = 250;
const MAX_DELAY_MS = 4000;

export class LiveFeed {
  /**
   * @param {(frame: object) => void} onFrame every frame, in order
   * @param {(state: "connecting" | "live" | "offline", detail?: string) => void} onState
   * @param {() => void} onHello called after every hello, the first included (the caller refetches
   *   what the feed does not replay, the runs list: a run created before the socket was up would
   *   otherwise be missing; gates and debug state come whole in hello)
   */
  constructor(onFrame, onState, onHello) {
    this.onFrame = onFrame;
    this.onState = onState;
    this.onHello = onHello;
    this.cursor = null;
    this.delay = MIN_DELAY_MS;
    this.helloCount = 0;
    this.ws = null;
    this.timer = null;
  }

  url() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const q = this.cursor === null ? "" : `?after=${this.cursor}`;
    return `${proto}//${location.host}/api/live${q}`;
  }

  start() {
    tokenReady().then(() => this.connect());
  }

  connect() {
    clearTimeout(this.timer);
    this.onState("connecting");
    let ws;
    try {
      ws = new WebSocket(this.url(), liveProtocols());
    } catch (err) {
      this.retry(String(err));
      return;
    }
    this.ws = ws;
    ws.onmessage = (msg) => {
      let frame;
      try {
        frame = JSON.parse(msg.data);
      } catch {
        return; // a frame we cannot read is ignored, like any client of the hub does
      }
      if (!frame || typeof frame.type !== "string") return;
      if (typeof frame.cursor === "number" && frame.type !== "hello") {
        if (this.cursor === null || frame.cursor > this.cursor) this.cursor = frame.cursor;
      }
      if (frame.type === "hello") {
        this.delay = MIN_DELAY_MS;
        // A first connect starts from now: history comes from the REST API, page by page.
        if (this.cursor === null && typeof frame.cursor === "number") this.cursor = frame.cursor;
        this.onState("live");
        this.helloCount += 1;
        this.onFrame(frame);
        this.onHello(this.helloCount);
        return;
      }
      this.onFrame(frame);
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      const why = ev.code === 4003 || ev.code === 1008 ? "the hub refused this origin (GRAPHMIND_ALLOWED_ORIGINS)" : "";
      this.retry(why);
    };
    ws.onerror = () => {
      /* onclose follows and schedules the retry */
    };
  }

  retry(detail) {
    this.onState("offline", detail);
    this.timer = setTimeout(() => this.connect(), this.delay);
    this.delay = Math.min(this.delay * 2, MAX_DELAY_MS);
  }
}
