"""The hub's control state: debug state, held gates, code holds, the attach wait, frames from the hub."""
