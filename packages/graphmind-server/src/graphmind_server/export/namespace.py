"""The client namespaces: imported runs (`import:<clientId>` in the database, `<clientId>` in a file),
the hub's own clientIds (`otlp`), and live apps (everything else).

The hub stores an event once per (clientId, seq). An imported file that reused a live app's
clientId with higher seqs made the hub drop that app's next events as duplicates (1,002 of them in
the experiment of issue 29). Imported events and runs are stored under `import:` + the file's
clientId instead, and a live app can never use that namespace (ingest renames such a hello's
clientId), so the two never meet. `graphmind record` writes the id without the prefix, so record →
import → record stays byte-equal, and a second import of a file stores nothing new.
"""

from __future__ import annotations

IMPORTED = "import:"
LIVE_ESCAPE = "app:"  # what ingest puts before a live app's clientId that is not its own to take
# The hub's own clientIds (otlp/route.py CLIENT_ID: every run that came in over OTLP, with a hub-wide
# seq). An app whose clientId was `otlp` shared those seqs: the hub took the OTLP spans for its
# duplicates and dropped them, answering "10 accepted" with 0 stored.
HUB_CLIENTS = ("otlp",)


def imported_client(client_id: str) -> str:
    return client_id if client_id.startswith(IMPORTED) else IMPORTED + client_id


def exported_client(client_id: str) -> str:
    return client_id[len(IMPORTED) :] if client_id.startswith(IMPORTED) else client_id


def live_client(client_id: str) -> str:
    """A live app's clientId, kept out of the import namespace and off the hub's own clientIds."""
    taken = client_id.startswith(IMPORTED) or client_id in HUB_CLIENTS
    return LIVE_ESCAPE + client_id if taken else client_id
