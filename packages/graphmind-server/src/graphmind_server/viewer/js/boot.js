// Runs before the rest of the viewer has loaded (it imports nothing): starts the requests the
// first screen needs, so they travel while the other modules download and compile.
//
// A hub with a token: index.html left the one-time code of the link this tab was opened with in
// window.__graphmindCode; trade it for the token (POST /api/viewer/redeem), keep the token in this
// tab's sessionStorage (per origin, so per port; never a cookie: cookies go to every port of
// 127.0.0.1), and send it as a header with every call (js/token.js).

const KEY = "graphmind.token";
const m = location.hash.match(/^#\/run\/([^/]+)/);

function kept() {
  try {
    return sessionStorage.getItem(KEY) || window.__graphmindToken || null;
  } catch {
    return window.__graphmindToken || null; // storage refused (a privacy mode): memory only
  }
}

function keep(token) {
  try {
    sessionStorage.setItem(KEY, token);
  } catch {
    window.__graphmindToken = token;
  }
}

async function redeem(code) {
  try {
    const res = await fetch("/api/viewer/redeem", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code }),
    });
    const body = await res.json().catch(() => ({}));
    if (res.ok && typeof body.token === "string") keep(body.token);
    else window.__graphmindLinkError = body.error || `the hub answered ${res.status}`;
  } catch (err) {
    window.__graphmindLinkError = `the hub did not answer (${err.message})`;
  }
}

const code = window.__graphmindCode;
delete window.__graphmindCode;
const ready = code ? redeem(code) : Promise.resolve();
const get = (path) =>
  ready.then(() => {
    const token = kept();
    return fetch(path, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  }).then(
    async (res) => ({ ok: res.ok, status: res.status, body: await res.json().catch(() => ({ error: `${res.status} without JSON` })) }),
    (err) => ({ ok: false, status: 0, body: { error: `the hub did not answer (${err.message})` } }),
  );

window.__graphmindBoot = {
  ready,
  runs: get("/api/runs?limit=1000"),
  runId: m ? decodeURIComponent(m[1]) : null,
  run: m ? get(`/api/runs/${m[1]}`) : null,
};
