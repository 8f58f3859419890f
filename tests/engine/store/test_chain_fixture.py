"""A workspace written by an older version of the code still verifies, replays and grows.

fixtures/chain-v1.pact was written before issue 9 replaced the store's orjson and C fast paths
with json and hashlib (see fixtures/README.md): the chain format must not have moved.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from engine.canonical import canonical_json
from engine.context.errors import InvalidCommand
from engine.store.chain import CHAIN_COLUMNS, GENESIS_HASH, ChainRow, event_hash
from engine.workspace import Workspace

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "chain-v1.pact"
EVENTS = 27
LAST_HASH = "3e7ac26c10dad13ad1787b464efc0dd78c1f25448ebc2f2e45979a542509078c"
ODD = 'naïve “quoted” "q" \\back\\ tab\t nl\n nul\x00 del\x7f \u2028 ☃ \U0001f600 \ud800'


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    path = tmp_path / "chain-v1.pact"
    shutil.copyfile(FIXTURE, path)
    return path


def stored_rows(path: Path) -> list[ChainRow]:
    with closing(sqlite3.connect(path)) as connection:
        return connection.execute(f"SELECT {CHAIN_COLUMNS} FROM events ORDER BY seq").fetchall()


def test_every_stored_hash_is_recomputed_by_todays_code(copy: Path) -> None:
    rows = stored_rows(copy)
    assert len(rows) == EVENTS and rows[-1][8] == LAST_HASH  # the fixture is the one we made
    prev_hash = GENESIS_HASH
    for seq, stream, stream_seq, type_, time_ns, actor, payload, stored_prev, stored_hash in rows:
        assert stored_prev == prev_hash
        # The payload column is canonical JSON, as today's encoder writes it.
        assert canonical_json(json.loads(payload)) == payload
        envelope = {
            "seq": seq, "stream": stream, "stream_seq": stream_seq, "type": type_,
            "time_ns": time_ns, "actor": actor, "payload": json.loads(payload),
            "prev_hash": stored_prev,
        }  # fmt: skip
        by_formula = hashlib.sha256(canonical_json(envelope).encode()).hexdigest()
        by_store = event_hash(seq, stream, stream_seq, type_, time_ns, actor, payload, stored_prev)
        assert stored_hash == by_store == by_formula, seq
        prev_hash = stored_hash
    # The fixture does hold text the encoder must escape, where it matters: in hashed fields.
    assert any("\\u00e9" in row[6] and "\\ud800" in row[6] for row in rows)
    assert any('"' in row[5] and "\n" in row[5] and not row[5].isascii() for row in rows)


async def test_it_verifies_replays_and_takes_a_new_command(copy: Path) -> None:
    async with await Workspace.open(copy, watch=False) as workspace:
        result = await workspace.verify()
        assert result.ok and result.checked == EVENTS
        assert [info.name for info in workspace.contexts()] == ["researcher", "writer"]
        researcher = workspace.context("researcher")
        assert list(researcher.provider_messages()) == [
            ("system", f"System: {ODD}"),
            ("user", f"Find papers — {ODD}"),
            ("user", "Préférence: ton formel"),
            ("user", "Mode: recherche"),
            ("assistant", "Here: three surveys.\n\t— résumé"),
            ("assistant", "Préférence: informel ✓"),
            ("user", "Summarise the second one."),
            ("assistant", "The master log keeps early goals."),
            ("assistant", "Alert: sources before 2023 ⚠"),
        ]
        preference = researcher.get_by_key("clé_é")
        assert preference is not None and preference.item is not None
        assert preference.item.tags == ("ütag", 'q"t\\')
        # Content hashes as the code that wrote the fixture computed them (they are not stored
        # in the log, so they were read from that code when the fixture was made).
        assert preference.item.content_hash == (
            "c9cd4002af929b662bee51b88c425f0ec213d8f2525a0dc046ebe6b1e5572390"
        )
        system = researcher.get_by_key("system_prompt")
        assert system is not None and system.item is not None
        assert system.item.content_hash == (
            "fc1304db240da267f7db7a79b86e31b07ab136c967193f0e2b819174c4204305"
        )
        # A structured component with data_/content_ fields, as it was before it was replaced.
        past = await workspace.at_snapshot("researcher", "n34")
        structured = past.get_by_key("structured")
        assert structured is not None and structured.item is not None
        assert structured.item.content["zeta"][4] == 1e-7
        assert structured.item.content_hash == (
            "687f63181230d0cc54487dea28ff020b360472e9dfbaafdf5b5f028484024488"
        )
        assert [text for _, text in workspace.context("writer").provider_messages()] == [
            "You write clear prose.",
            "Draft an outline ✍",
            "Audience: developers",
            "1. Rot 2. Log 3. Refs",
            "Due in 4 episodes",
        ]

        # The old code took a lone surrogate in; today's refuses it at input (what is stored
        # still replays, above). Everything else in ODD is text and is taken.
        with pytest.raises(InvalidCommand, match="lone surrogate"):
            await workspace.run("writer", {"op": "message", "role": "user", "text": ODD})
        text = f"More — {ODD.replace(chr(0xD800), '')}"
        await workspace.run("writer", {"op": "message", "role": "user", "text": text}, actor="tëst")
        result = await workspace.verify()
        assert result.ok and result.checked == EVENTS + 1
        writer = list(workspace.context("writer").provider_messages())
        assert ("user", text) in writer

    rows = stored_rows(copy)
    assert rows[EVENTS - 1][8] == LAST_HASH and rows[EVENTS][7] == LAST_HASH  # linked onto it
    async with await Workspace.open(copy, watch=False) as reopened:  # and it replays
        assert reopened.head == EVENTS + 1
        assert list(reopened.context("writer").provider_messages()) == writer
