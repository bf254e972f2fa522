// The hub's token, when it has one: boot.js traded the one-time code of the viewer link for it and
// keeps it in this tab's sessionStorage. Every REST call sends it as `Authorization: Bearer`, the
// live feed as the WebSocket subprotocol `graphmind.token.<hex>` (a browser's WebSocket cannot
// send headers). Never a cookie: a cookie would also go to every other port of 127.0.0.1.

/** Resolves once boot.js has redeemed the link's code (at once when there was none). */
export function tokenReady() {
  return (window.__graphmindBoot && window.__graphmindBoot.ready) || Promise.resolve();
}

export function token() {
  try {
    const kept = sessionStorage.getItem("graphmind.token");
    if (kept) return kept;
  } catch {
    /* storage refused (a privacy mode): boot.js kept it in memory */
  }
  return window.__graphmindToken || null;
}

/** Headers for a REST call: the token, if there is one. */
export function authHeaders() {
  const t = token();
  return t ? { authorization: `Bearer ${t}` } : {};
}

/** Subprotocols for the live feed: graphmind.v1, and the token as hex of its UTF-8 bytes. */
export function liveProtocols() {
  const t = token();
  if (!t) return undefined;
  const hex = Array.from(new TextEncoder().encode(t), (b) => b.toString(16).padStart(2, "0")).join("");
  return ["graphmind.v1", `graphmind.token.${hex}`];
}
