"""The command line on a workspace the log does not fully vouch for: a checkpoint it could
not use is noted on stderr (the result stands: the log was read instead)."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

from .conftest import cli


def set_checkpoint_seq(path: Path, name: str, seq: int) -> None:
    with closing(sqlite3.connect(path)) as connection:
        connection.execute("UPDATE checkpoints SET seq = ? WHERE name = ?", (seq, name))
        connection.commit()


def test_a_checkpoint_not_used_is_noted_on_stderr(tmp_path: Path) -> None:
    path = tmp_path / "w.pact"
    assert cli("ctx", "create", path, "agent").code == 0
    for number in range(3):
        assert cli("ctx", "user", path, "agent", f"message {number}").code == 0
    expected = cli("ctx", "print", path, "agent")
    assert (expected.code, expected.err) == (0, "")
    set_checkpoint_seq(path, "workspace:index", 9999)

    printed = cli("ctx", "print", path, "agent")
    assert (printed.code, printed.out) == (0, expected.out)
    assert printed.err == (
        "pact-tui: note: the workspace index could not be used (CHECKPOINT_NOT_IN_LOG: checkpoint"
        " 'workspace:index' is at event 9999, past the log's last event 4: the log does not"
        f" vouch for it ({path})); read the log instead\n"
    )

    set_checkpoint_seq(path, "workspace:index", 9999)
    printed = cli("ctx", "print", path, "agent", "--json")
    assert printed.code == 0 and json.loads(printed.out)
    note = json.loads(printed.err)["note"]
    assert note["code"] == "CHECKPOINT_NOT_USED"
    assert "is at event 9999, past the log's last event 4" in note["message"]
