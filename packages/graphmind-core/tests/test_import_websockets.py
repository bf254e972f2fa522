"""websockets loads with `graphmind.adapter` (an adapter's first call, which often makes the client,
does not pay its import: docs/performance.md) and with the first client, never with `import
graphmind` alone (issue 37), nor in a process that starts with the kill switch on."""

from __future__ import annotations

import os
import subprocess
import sys

from graphmind.testing import FakeHub

CHECK = "import sys, graphmind.adapter; print('websockets.sync.client' in sys.modules)"


def run(code: str, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMIND")}
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**clean, **env},
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_websockets_is_imported_with_the_adapter_module_and_the_first_client_not_with_graphmind() -> None:
    assert run(CHECK) == "True"
    assert run("import sys, graphmind; print('websockets' in sys.modules)") == "False"
    code = "import sys, graphmind as gm; c = gm.Client(app='t'); print('websockets.sync.client' in sys.modules); c.dispose()"
    assert run(code) == "True"


def test_a_process_that_starts_disabled_never_loads_websockets() -> None:
    assert run(CHECK, GRAPHMIND_DISABLED="1") == "False"
    code = "import sys, graphmind as gm; gm.wrap(lambda: 1, name='t')(); print('websockets' in sys.modules)"
    assert run(code, GRAPHMIND_DISABLED="1") == "False"


def test_a_client_enabled_by_option_in_such_a_process_still_attaches() -> None:
    with FakeHub() as hub:
        code = f"import graphmind; c = graphmind.Client(enabled=True, url={hub.url!r}); print(c.ready(10)); c.dispose()"
        # GRAPHMIND_DISABLED=1 beats the option; production without GRAPHMIND=1 does not.
        assert run(code, GRAPHMIND_ENV="production") == "True"
