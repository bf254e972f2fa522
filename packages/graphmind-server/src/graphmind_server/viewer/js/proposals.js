// An answer a coding assistant proposed for a held gate (through `graphmind mcp`, docs/mcp.md):
// shown on the gate's card with the assistant's reason, and Accept / Reject. Accept sends the
// proposed answer through the hub's one gate-answer path; the node keeps the proposal and who
// decided it (node detail, the effects ledger).

import { api, errorText } from "./api.js";
import { h } from "./frame.js";
import { jsonView } from "./json.js";

const WHAT = {
  inject: "inject this value instead of the call's result",
  edit: "run the call with this input",
  retry: "retry the call",
  continue: "let the call proceed",
};

/** The card's proposals block; `onAccepted` removes the card once the gate is answered. */
export function proposalList(onAccepted) {
  const el = h("div", { class: "gate-proposals" });
  const show = (proposals) => {
    el.replaceChildren(...(proposals || []).map((p) => proposalItem(p, onAccepted)));
    el.hidden = !el.children.length;
  };
  return { el, show };
}

function proposalItem(p, onAccepted) {
  const msg = h("span", { class: "gate-proposal-msg", role: "alert" });
  const value = p.answer && ("value" in p.answer ? p.answer.value : p.answer.input);
  const decide = async (verb, buttons) => {
    for (const b of buttons) b.disabled = true;
    msg.textContent = "";
    const res = await api.decideProposal(p.id, verb);
    if (res.ok) {
      if (verb === "accept") onAccepted();
      return;
    }
    for (const b of buttons) b.disabled = false;
    msg.textContent = errorText(res);
  };
  const accept = h("button", { type: "button", class: "primary", dataset: { action: "accept-proposal" },
    title: "Send this answer now, as if you had given it" }, "Accept");
  const reject = h("button", { type: "button", dataset: { action: "reject-proposal" },
    title: "Keep the gate held; the proposal is recorded as rejected" }, "Reject");
  accept.onclick = () => decide("accept", [accept, reject]);
  reject.onclick = () => decide("reject", [accept, reject]);
  return h("section", { class: "gate-proposal", dataset: { proposalId: p.id }, "aria-label": "Proposed answer" },
    h("p", { class: "gate-proposal-head" }, h("strong", null, "Assistant proposes: "), WHAT[p.action] || p.action),
    h("p", { class: "gate-proposal-why" }, p.why || ""),
    value !== undefined && value !== null ? jsonView(value, false, 1) : null,
    h("div", { class: "gate-actions" }, accept, reject, msg));
}
