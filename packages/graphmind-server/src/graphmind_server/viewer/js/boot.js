// Runs before the rest of the viewer has loaded (it imports nothing): starts the requests the
// first screen needs, so they travel while the other modules download and compile.

const m = location.hash.match(/^#\/run\/([^/]+)/);
const get = (path) => fetch(path).then(
  async (res) => ({ ok: res.ok, status: res.status, body: await res.json().catch(() => ({ error: `${res.status} without JSON` })) }),
  (err) => ({ ok: false, status: 0, body: { error: `the hub did not answer (${err.message})` } }),
);

window.__graphmindBoot = {
  runs: get("/api/runs?limit=1000"),
  runId: m ? decodeURIComponent(m[1]) : null,
  run: m ? get(`/api/runs/${m[1]}`) : null,
};
