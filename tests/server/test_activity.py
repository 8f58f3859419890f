"""``pact_tui.server.activity.ActivityReader``: the agents view looks at the servers' files
once a clock tick, and reads a file again only when it changed."""

from __future__ import annotations

import os
from pathlib import Path

from pact_tui.server.activity import (
    ActivityReader,
    KeyActivity,
    activity_file,
    remove_activity,
    write_activity,
)


def test_a_file_unchanged_is_not_read_again_and_a_changed_one_is(tmp_path: Path) -> None:
    workspace = tmp_path / "w.pact"
    write_activity(workspace, 11, {"h1": KeyActivity("alice", 1_000)})
    write_activity(workspace, 22, {"h2": KeyActivity("bob", 2_000)})
    reader = ActivityReader(workspace)
    assert reader.read() == {"h1": KeyActivity("alice", 1_000), "h2": KeyActivity("bob", 2_000)}
    assert reader.reads == 2
    for _ in range(3):  # ticks with nothing new: nothing read
        assert reader.read()["h1"] == KeyActivity("alice", 1_000)
    assert reader.reads == 2
    write_activity(workspace, 11, {"h1": KeyActivity("alice", 5_000)})  # server 11 heard more
    assert reader.read() == {"h1": KeyActivity("alice", 5_000), "h2": KeyActivity("bob", 2_000)}
    assert reader.reads == 3  # that file alone
    write_activity(workspace, 33, {"h2": KeyActivity("bob", 9_000)})  # a new server
    assert reader.read()["h2"] == KeyActivity("bob", 9_000)
    assert reader.reads == 4
    remove_activity(workspace, 33)  # it stopped
    assert reader.read()["h2"] == KeyActivity("bob", 2_000)
    assert reader.reads == 4


def test_a_file_changed_in_place_is_read_again_and_a_bad_one_passed_over(tmp_path: Path) -> None:
    workspace = tmp_path / "w.pact"
    write_activity(workspace, 11, {"h1": KeyActivity("alice", 1_000)})
    reader = ActivityReader(workspace)
    assert reader.read() == {"h1": KeyActivity("alice", 1_000)}
    path = activity_file(workspace, 11)
    stat = os.stat(path)
    path.write_text('{"h1": {"label": "alice", "lastRequestMs": 70000}}', encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the same mtime: the size tells
    assert reader.read() == {"h1": KeyActivity("alice", 70_000)}
    path.write_text("{not json", encoding="utf-8")
    assert reader.read() == {}  # a hint, never a record
    assert reader.read() == {} and reader.reads == 4  # tried again while it stays unreadable
