"""The viewer's static files at `/` (the bundled `viewer/` directory, or GRAPHMIND_VIEWER_DIST)."""

from __future__ import annotations

from pathlib import Path

from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

BUNDLED_VIEWER = Path(__file__).parents[1] / "viewer"  # the package's viewer/ folder
NOT_BUILT = (
    "<!doctype html><title>GraphMind</title><p>The GraphMind viewer is not built: "
    "its files are missing from {dir} (set GRAPHMIND_VIEWER_DIST to a viewer directory).</p>\n"
)


class Viewer:
    def __init__(self, directory: Path | None) -> None:
        self.directory = directory or BUNDLED_VIEWER
        self.files = StaticFiles(directory=self.directory, html=True, check_dir=False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Checked per request: the viewer can be added while the hub runs (development).
        if (self.directory / "index.html").is_file():
            await self.files(scope, receive, send)
            return
        response: Response
        if scope.get("path") in ("/", "/index.html"):
            response = HTMLResponse(NOT_BUILT.format(dir=self.directory))
        else:
            response = JSONResponse({"error": "not found (the viewer is not built)"}, status_code=404)
        await response(scope, receive, send)
