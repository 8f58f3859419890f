"""What a running server heard from each key, for the app open on the same workspace file.

The log dates an agent by its writes and heartbeats (a read heartbeats once a minute at most, so
reads stay reads); it does not record every request, nor custodians' at all. So each server
process keeps, beside the workspace, one small JSON file of its own, ``.NAME.serving-PID.json``:
for each key hash, its label (the agent's name, or the label given at ``pact-tui key create
--label``) and when it last made a request. The server writes it at most once a second, only when
it changed, whole (a temporary file renamed over it), and removes it when it stops. The app
reads every such file beside the workspace and keeps, for each key, the latest request (again
only when a file changed: :class:`ActivityReader`). A file it cannot read or parse is passed
over: it is a hint, never a record. A workspace in
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
    return ActivityReader(workspace).read()


Rows = list[tuple[str, str, int]]  # (key hash, label, last request ms) of one server's file


class ActivityReader:
    """:func:`read_activity` again and again (the app's agents view, once a clock tick): the
    folder is listed again only when its mtime changed (a server's file written, renamed over
    or removed changes it), and a file is read and parsed again only when its mtime, size or
    inode changed; the others' rows are kept from their last read (blocking: run it in a
    thread, one read at a time)."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.reads = 0  # files read and parsed, for the tests
        self._listed: int | None = None  # the folder's mtime when it was last listed
        self._names: list[Path] = []
        self._files: dict[Path, tuple[tuple[int, int, int], Rows]] = {}

    def read(self) -> dict[str, KeyActivity]:
        folder = self.workspace.parent
        try:
            listed = os.stat(folder).st_mtime_ns
            if listed != self._listed:
                prefix = _prefix(self.workspace)
                self._names = [
                    p
                    for p in folder.iterdir()
                    if p.name.startswith(prefix) and p.name.endswith(SUFFIX)
                ]
                self._listed = listed
        except OSError:
            self._listed, self._names, self._files = None, [], {}
            return {}
        files: dict[Path, tuple[tuple[int, int, int], Rows]] = {}
        for path in self._names:
            try:
                stat = os.stat(path)
            except OSError:
                continue  # removed since the folder was listed
            stamp = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
            kept = self._files.get(path)
            if kept is not None and kept[0] == stamp:
                files[path] = kept
                continue
            rows = self._parse(path)
            if rows is not None:
                files[path] = (stamp, rows)
        self._files = files
        found: dict[str, KeyActivity] = {}
        for _, rows in files.values():
            for hashed, label, at in rows:
                known = found.get(hashed)
                if known is None or at > known.last_request_ms:
                    found[hashed] = KeyActivity(label, at)
        return found

    def _parse(self, path: Path) -> Rows | None:
        self.reads += 1
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return [
                (str(hashed), str(row["label"]), int(row["lastRequestMs"]))
                for hashed, row in data.items()
            ]
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None  # being replaced, or not ours: a hint, passed over (read again next)
