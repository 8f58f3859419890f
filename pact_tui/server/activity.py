"""What a running server heard from each key, for the app open on the same workspace file.

The log dates an agent by its writes and heartbeats (a read heartbeats once a minute at most, so
reads stay reads); it does not record every request, nor custodians' at all. So each server
process keeps, beside the workspace, one small JSON file of its own, ``.NAME.serving-PID.json``:
for each key hash, its label (the agent's name, or the label given at ``pact-tui key create
--label``) and when it last made a request. The server writes it at most once a second, only when
it changed, whole (a temporary file renamed over it), and removes it when it stops. The app
reads every such file beside the workspace and keeps, for each key, the latest request. A file
it cannot read or parse is passed over: it is a hint, never a record. A workspace in
PostgreSQL has no folder to share: there is none.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

SUFFIX = ".json"


@dataclass(frozen=True, slots=True)
class KeyActivity:
    """A key's label and its last request (ms since the epoch), as a server heard it."""

    label: str
    last_request_ms: int


def _prefix(workspace: Path) -> str:
    return f".{workspace.name}.serving-"


def activity_file(workspace: Path, pid: int) -> Path:
    return workspace.with_name(f"{_prefix(workspace)}{pid}{SUFFIX}")


def write_activity(workspace: Path, pid: int, seen: Mapping[str, KeyActivity]) -> None:
    """Write process ``pid``'s file whole (blocking: run it in a thread)."""
    data = {
        hashed: {"label": activity.label, "lastRequestMs": activity.last_request_ms}
        for hashed, activity in seen.items()
    }
    target = activity_file(workspace, pid)
    handle, temporary = tempfile.mkstemp(prefix=target.name, dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            json.dump(data, file)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def remove_activity(workspace: Path, pid: int) -> None:
    with contextlib.suppress(OSError):
        activity_file(workspace, pid).unlink()


def read_activity(workspace: Path) -> dict[str, KeyActivity]:
    """Every server's file beside ``workspace`` merged: each key's latest request (blocking)."""
    found: dict[str, KeyActivity] = {}
    prefix = _prefix(workspace)
    try:
        names = [p for p in workspace.parent.iterdir() if p.name.startswith(prefix)]
    except OSError:
        return found
    for path in names:
        if not path.name.endswith(SUFFIX):
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            rows = [
                (str(hashed), str(row["label"]), int(row["lastRequestMs"]))
                for hashed, row in data.items()
            ]
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            continue  # being replaced, or not ours: a hint, passed over
        for hashed, label, at in rows:
            known = found.get(hashed)
            if known is None or at > known.last_request_ms:
                found[hashed] = KeyActivity(label, at)
    return found
