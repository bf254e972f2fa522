// Collapse the runs list (a laptop screen needs the width for the graph and the docked card).
// The choice is kept for this tab (sessionStorage), like the token: per origin, never a cookie.

const KEY = "graphmind.runsHidden";

export function installPanelToggle(button) {
  const set = (hidden) => {
    document.body.dataset.runsHidden = String(hidden);
    button.setAttribute("aria-pressed", String(!hidden));
    button.title = hidden ? "Show the runs list" : "Hide the runs list";
    try {
      sessionStorage.setItem(KEY, hidden ? "1" : "");
    } catch {
      /* storage refused: the toggle still works for this page */
    }
  };
  let kept = false;
  try {
    kept = sessionStorage.getItem(KEY) === "1";
  } catch {
    kept = false;
  }
  set(kept);
  button.addEventListener("click", () => set(document.body.dataset.runsHidden !== "true"));
}
