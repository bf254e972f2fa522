// Pages that take the run view's place, by address: #/trends and #/playground/<run>/<instanceId>.

import { showPlayground } from "./playground.js";
import { showTrends } from "./trends.js";

/** The page an address names, as a function that draws it into the run view; null for none. */
export function pageOf(hash) {
  if (/^#\/trends\/?$/.test(hash)) return (el) => showTrends(el);
  const m = hash.match(/^#\/playground\/([^/]+)\/([^/]+)$/);
  if (m) return (el) => showPlayground(el, decodeURIComponent(m[1]), decodeURIComponent(m[2]));
  return null;
}

export function playgroundHash(runId, instanceId) {
  return `#/playground/${encodeURIComponent(runId)}/${encodeURIComponent(instanceId)}`;
}
