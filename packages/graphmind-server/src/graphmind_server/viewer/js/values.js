// A huge run's executions keep no inputs or outputs in the page (RunModel.light): a run of a
// million events holds ~1 GB of them, and collecting a heap that size stalls the timeline's
// scroll. The timeline draws without them; the detail asks the hub for the one execution shown
// (its start and end, by seq) when it is opened.

import { api } from "./api.js";
import { fillValues } from "./model.js";

/** Runs of more events than this open light (the run's summary says how many it has). */
export const LIGHT_EVENTS = 100_000;

const wanted = (x) => `${x.inputSeq ?? ""}|${x.outputSeq ?? ""}`;

/** True when the execution's input/output are in the hub only (or older than its last event). */
export const valuesMissing = (x) => x.lazy === true && x.valuesKey !== wanted(x);

const pending = new Map(); // exec key|seqs -> the promise of its values

/** Fetch the execution's start and end from the hub and fold their values in; resolves true
 * when they are in. */
export function loadValues(runId, x) {
  const key = `${x.key}|${wanted(x)}`;
  let p = pending.get(key);
  if (!p) {
    const seqs = [x.inputSeq, x.outputSeq];
    p = Promise.all(seqs.map((seq) => (typeof seq === "number" ? eventAt(runId, seq, x.instanceId) : null)))
      .then(([start, end]) => {
        if ((x.inputSeq !== undefined && !start) || (x.outputSeq !== undefined && !end)) return false;
        fillValues(x, start, end);
        x.valuesKey = wanted({ inputSeq: seqs[0], outputSeq: seqs[1] });
        return true;
      })
      .finally(() => pending.delete(key));
    pending.set(key, p);
  }
  return p;
}

async function eventAt(runId, seq, instanceId) {
  // The run's events after seq - 1: the one at seq first (a run written by two clients may share
  // a seq: the few after it are looked through for this execution's).
  const res = await api.events(runId, seq - 1, 4);
  if (!res.ok) return null;
  return (res.body.events || []).find((ev) => ev.seq === seq && ev.instanceId === instanceId) || null;
}
