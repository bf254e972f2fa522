"""The ASGI app: the control API, the cockpit routes, the live feed, the static viewer."""
