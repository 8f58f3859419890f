"""``pact-tui doc audit`` and ``doc log``: who did what, when and why, in each format, read back
with the module that reads that format; its filters and their counts; bad options refused with
one typed line and nothing written; and the trail's overrides are the document's."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.protocol.audit import (
    DETAIL_FIELDS,
    FIELDS,
    SUBJECT_FIELDS,
    WHY_FIELDS,
    AuditRow,
    AuditTrail,
    overrides,
    read_payload,
)
from engine.workspace import Workspace
from pact_tui.demo import create_demo

from .conftest import cli, ok


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("audit") / "demo.pact"
    asyncio.run(create_demo(path))
    return path


@pytest.fixture
def demo(demo_template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "demo.pact"
    shutil.copy(demo_template, copy)
    return copy


def log_of(path: Path) -> list[dict[str, Any]]:
    async def read() -> list[dict[str, Any]]:
        async with await Workspace.open(path, watch=False, read_only=True) as ws:
            return await ws.document_events("memo")

    return asyncio.run(read())


def test_csv_holds_every_event_with_when_who_and_why(demo: Path) -> None:
    log = log_of(demo)
    rows = list(
        csv.DictReader(io.StringIO(ok("doc", "audit", demo, "memo", "--format", "csv").out))
    )
    assert [int(r["sequence"]) for r in rows] == [e["sequenceNumber"] for e in log]
    assert list(rows[0]) == list(FIELDS)
    trust = [r for r in rows if r["type"] == "agent.trust-changed"]
    assert trust and all(r["override"] == "true" and r["actor"] == "human ann" for r in trust)
    assert {r["subject"] for r in trust} == {"intern", "editor"}  # by name, learned from joins
    assert "new on the team" in {r["why"] for r in trust}
    assert all(r["time"].endswith("Z") and r["time"][:4].isdigit() for r in rows)


def test_json_counts_what_it_searched_and_kept(demo: Path) -> None:
    log = log_of(demo)
    trail = json.loads(ok("doc", "audit", demo, "memo", "--format", "json").out)
    assert (trail["document"], trail["searched"], trail["kept"]) == ("memo", len(log), len(log))
    assert trail["fields"] == list(FIELDS)
    assert trail["overrides"] == sum(e["override"] for e in trail["events"]) >= 2
    wanted = [e for e in log if "proposal" in e["eventType"] and e["actorDisplay"] == "legal"]
    kept = json.loads(
        ok("doc", "audit", demo, "memo", "--type", "proposal", "--agent", "legal", "--json").out
    )
    assert (kept["searched"], kept["kept"]) == (len(log), len(wanted))
    assert [e["sequence"] for e in kept["events"]] == [e["sequenceNumber"] for e in wanted]
    assert kept["filter"] == "--type proposal --agent legal"
    since = json.loads(ok("doc", "audit", demo, "memo", "--since", "20", "--json").out)
    assert [e["sequence"] for e in since["events"]] == list(range(20, len(log)))
    moment = log[10]["epochMs"]
    later = json.loads(
        ok("doc", "audit", demo, "memo", "--since", _iso(moment), "--format", "json").out
    )
    assert [e["sequence"] for e in later["events"]] == [
        e["sequenceNumber"] for e in log if e["epochMs"] >= moment - moment % 1000
    ]


def _iso(epoch_ms: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(epoch_ms // 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S")


def test_markdown_is_a_table_with_overrides_marked(demo: Path) -> None:
    text = ok("doc", "audit", demo, "memo").out
    assert text.startswith("# Audit of document memo\n")
    table = [line for line in text.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert len(table) == len(log_of(demo))
    marked = [line for line in table if line.endswith("| ⚑ override |")]
    assert marked and all("human ann" in line for line in marked)
    assert "events searched" in text.splitlines()[-1]


@pytest.mark.parametrize(
    ("option", "named"),
    [
        (["--type", "nope"], "--type 'nope'"),
        (["--since", "yesterday"], "--since"),
        (["--since", "2026-13-45"], "--since"),
        (["--agent", "nobody"], "--agent 'nobody'"),
        (["--format", "xml"], "--format 'xml'"),
    ],
)
def test_bad_input_is_one_typed_line_and_nothing_written(
    demo: Path, option: list[str], named: str
) -> None:
    ran = cli("doc", "audit", demo, "memo", *option)
    assert (ran.code, ran.out) == (1, "")
    [line] = ran.err.splitlines()
    assert line.startswith(f"pact-tui: request.invalid: {named}"), line
    missing = cli("doc", "audit", demo, "nodoc")
    assert (missing.code, missing.out) == (1, "")
    assert missing.err.startswith("pact-tui: document.not_found: ")


def test_doc_log_shows_time_and_reason_and_takes_a_type(demo: Path) -> None:
    lines = ok("doc", "log", demo, "memo", "--type", "trust-changed").out.splitlines()
    assert len(lines) == 2
    assert all("pact.agent.trust-changed" in line and "⚑ override" in line for line in lines)
    assert any("why: new on the team" in line for line in lines)
    rows = json.loads(ok("doc", "log", demo, "memo", "--type", "agent.joined", "--json").out)
    assert [r["type"] for r in rows] == ["pact.agent.joined"] * 4
    assert all(r["time"].endswith("Z") for r in rows)
    refused = cli("doc", "log", demo, "memo", "--type", "nope")
    assert refused.code == 1 and refused.err.startswith("pact-tui: request.invalid: --type")


def test_the_trails_overrides_are_the_documents(demo: Path) -> None:
    """``overrides`` states over an envelope the rule the fold applies: event by event, the
    trail marks exactly those that add to ``Document.overrides``."""
    from engine.protocol.document import Document

    doc, trail = Document(), AuditTrail()
    for event in log_of(demo):
        before = len(doc.overrides)
        doc.apply(event)
        row = trail.row(event)
        assert row.override == (len(doc.overrides) > before), event["eventType"]
        data = json.loads(event["payloadJson"])
        assert row.override == overrides(event["eventType"], event["actorKind"], data)
    assert doc.overrides


def test_text_from_the_document_is_made_visible_in_a_page_of_plain_rows() -> None:
    """The writers look at a page once and escape only when they must: one hostile row among
    plain ones still has every field made visible, and each row stays one line."""
    from engine.protocol.audit import AuditRow
    from engine.visible import visible
    from pact_tui.audit import CsvWriter, MarkdownWriter

    def row(n: int, why: str) -> AuditRow:
        return AuditRow(
            n, 0, "proposal.rejected", "legal", "AiAgent", "sec:a", "p1", "", why, False
        )

    hostile = ["two\nlines", "esc \x1b[2J", "tab\there", "cr\r", "bidi \u202e", "pipe | [x](y)"]
    rows = [row(0, "plain")] + [row(n, why) for n, why in enumerate(hostile, 1)] + [row(9, "ok")]
    text = CsvWriter("memo", "").rows(rows)
    read = list(csv.reader(io.StringIO(text)))
    assert [r[FIELDS.index("why")] for r in read] == [visible(r.why) for r in rows]
    assert text.count("\n") == len(rows)
    markdown = MarkdownWriter("memo", "").rows(rows)
    lines = markdown.splitlines()
    assert len(lines) == len(rows)
    assert "\x1b" not in markdown and "\\u001b" in markdown and "\u202e" not in markdown
    assert "pipe \\| \\[x\\]\\(y\\)" in lines[6]


def test_doc_log_prints_each_event_as_the_trails_row_says(demo: Path) -> None:
    """``doc log`` writes a page of lines at once as it reads them: line for line, what
    ``_event_line`` makes of the trail's row of each event, with and without its options."""
    from pact_tui.tap import _event_line

    log, trail = log_of(demo), AuditTrail()
    expected = [_event_line(trail.row(event)) for event in log]
    assert any("why: " in line for line in expected) and any("⚑" in line for line in expected)
    assert ok("doc", "log", demo, "memo").out.splitlines() == expected
    chosen = ok("doc", "log", demo, "memo", "--since", "5", "--type", "agent", "--limit", "7")
    assert (
        chosen.out.splitlines()
        == [
            line
            for event, line in zip(log, expected, strict=True)
            if event["sequenceNumber"] >= 5 and "agent" in event["eventType"]
        ][:7]
    )
    assert ok("doc", "log", demo, "memo", "--since", "100000").out == "no events\n"


def test_doc_log_lines_read_what_a_payload_says_however_it_is_written() -> None:
    """A payload is decoded for ``doc log`` only when its text may name a reason or an
    override; a name written with an escape, a withheld payload, an edit that names no proposal
    and text that is no JSON give the lines the trail's rows give, and a page that holds
    something to make visible is made visible."""
    from pact_tui.tap import _event_line, _event_lines
    from tests.hostile import PAYLOAD, raw_controls

    def envelope(
        n: int, kind: str, payload: str, *, by: str = "legal", as_: str = "AiAgent", on: str = "s"
    ) -> dict[str, Any]:
        return {
            "sequenceNumber": n,
            "epochMs": 1_000 * n,
            "eventType": "pact." + kind,
            "actorDisplay": by,
            "actorKind": as_,
            "sectionId": on,
            "payloadJson": payload,
        }

    plain = [
        envelope(0, "agent.heartbeat", '{"agentId":"a"}'),
        envelope(1, "proposal.rejected", '{"w\\u0068y":"escaped"}', as_="Individual"),
        envelope(2, "proposal.rejected", '{"reason":"said plainly"}'),
        envelope(3, "section.edited", '{"text":"by hand"}', as_="Individual"),
        envelope(4, "agent.removed", '{"withheld":true}'),
        envelope(5, "agent.removed", "not json"),
        envelope(6, "proposal.approved", '{"why":"  "}', as_="Individual"),
    ]
    hostile = [
        envelope(7, "proposal.approved", json.dumps({"why": PAYLOAD}), as_="Individual"),
        envelope(8, "intent.declared", '{"goal":"g"}', by="two\nlines", on=PAYLOAD),
    ]
    for events in (plain, plain + hostile):
        rows = AuditTrail().rows(events)
        assert _event_lines(rows) == "".join(_event_line(row) + "\n" for row in rows)
    lines = _event_lines(AuditTrail().rows(plain)).splitlines()
    assert "why: escaped" in lines[1] and "⚑ override" in lines[1]
    assert "⚑" in lines[3] and "⚑" not in lines[4] and "⚑" in lines[5]
    written = _event_lines(AuditTrail().rows(plain + hostile))
    assert written.count("\n") == len(plain + hostile) and raw_controls(written) == []


def _reference_row(names: dict[str, str], event: dict[str, Any]) -> AuditRow:
    """``AuditTrail.row`` as its docstrings state it, field by field, one event at a time."""

    def text(value: object) -> str:
        if isinstance(value, str):
            return value
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int):
            return str(value)
        return json.dumps(value, ensure_ascii=False, default=str)

    event_type, kind = event["eventType"], event.get("actorKind") or ""
    data = read_payload(event.get("payloadJson"))
    withheld = len(data) == 1 and data.get("withheld") is True
    if event_type == "pact.agent.joined" and isinstance(data.get("agentName"), str):
        names[str(data.get("agentId"))] = data["agentName"]
    subject = next((text(data[k]) for k in SUBJECT_FIELDS if data.get(k) is not None), None)
    if subject is None:
        subject = ""
        if event_type.startswith("pact.agent."):
            name = data.get("agentName")
            if name is None and data.get("agentId") is not None:
                name = names.get(str(data["agentId"]), data["agentId"])
            subject = "" if name is None else text(name)
    detail = "; ".join(
        f"{k}: {text(data[k])}"
        for k in DETAIL_FIELDS
        if data.get(k) is not None and data[k] != "" and not isinstance(data[k], dict | list)
    )
    return AuditRow(
        event["sequenceNumber"],
        event["epochMs"],
        event_type.removeprefix("pact."),
        event.get("actorDisplay") or "",
        kind,
        event.get("sectionId"),
        subject,
        detail,
        next((text(data[k]) for k in WHY_FIELDS if data.get(k)), ""),
        not withheld and overrides(event_type, kind, data),
        withheld,
    )


_KEYS = st.sampled_from(
    SUBJECT_FIELDS + DETAIL_FIELDS + WHY_FIELDS + ("agentId", "agentName", "withheld", "other")
)
_VALUES = st.one_of(
    st.none(),
    st.just(""),
    st.text(max_size=4),
    st.integers(-1000, 1000),
    st.booleans(),
    st.lists(st.integers(0, 9), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(0, 9), max_size=1),
)
_EVENTS = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "pact.agent.joined",
                "pact.agent.removed",
                "pact.agent.trust-changed",
                "pact.proposal.approved",
                "pact.proposal.rejected",
                "pact.section.edited",
                "pact.human.resolved",
                "pact.comment.added",
                "pact.document.policy-changed",
                "pact.proposal.merged",
                "pact.section.unlocked",
            ]
        ),
        st.sampled_from(["Individual", "AiAgent", "System"]),
        st.one_of(
            st.dictionaries(_KEYS, _VALUES, max_size=6).map(json.dumps),
            st.just("not json"),
        ),
    ),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(_EVENTS)
def test_a_pages_rows_are_each_events_as_the_trail_states_it(events: list[Any]) -> None:
    """A page's rows are made at once, each payload's fields looked up by its keys: whatever
    keys a payload holds, in whatever order, each row is the one the trail's rule gives, the
    names of agents learned from the joins of the pages before."""
    envelopes = [
        {
            "sequenceNumber": n,
            "epochMs": 1_000 * n,
            "eventType": event_type,
            "actorDisplay": "legal",
            "actorKind": kind,
            "sectionId": None,
            "payloadJson": payload,
        }
        for n, (event_type, kind, payload) in enumerate(events)
    ]
    names: dict[str, str] = {}
    expected = [_reference_row(names, e) for e in envelopes]
    trail = AuditTrail()
    half = len(envelopes) // 2
    assert trail.rows(envelopes[:half]) + trail.rows(envelopes[half:]) == expected


_LINE_ROWS = st.lists(
    st.builds(
        AuditRow,
        st.integers(0, 10**6),
        st.sampled_from([0, 1_772_357_400_250, 1_772_357_400_999, 10**20]),
        st.sampled_from(["proposal.rejected", "agent.joined"]),
        st.sampled_from(["legal", "ops", ""]),
        st.sampled_from(["AiAgent", "Individual", "System"]),
        st.sampled_from([None, "", "sec:a", "sec:b"]),
        st.just(""),
        st.just(""),
        st.sampled_from(["", "no", "yes"]),
        st.booleans(),
        st.booleans(),
    ),
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(_LINE_ROWS)
def test_a_pages_lines_are_each_rows_line(rows: list[AuditRow]) -> None:
    """``doc log`` makes what follows an event's time once for each combination of what it
    shows and reuses it: whichever of type, actor, kind, section, reason and override rows
    share or differ in, a page's lines are each row's ``_event_line`` (rows with nothing to
    make visible: the page made at once; the test above gives it the rest)."""
    from pact_tui.tap import _event_line, _event_lines

    assert _event_lines(rows) == "".join(_event_line(row) + "\n" for row in rows)


def test_a_markdown_page_is_each_row_written_alone() -> None:
    """The Markdown writer escapes a page at once: row for row, the table's line of each cell
    escaped on its own, a withheld detail written as such, whatever the cells hold (Markdown's
    characters, the separators the writer parts cells by, text that reads "(withheld)")."""
    from engine.visible import visible
    from pact_tui.audit import MarkdownWriter

    def row(n: int, detail: str, why: str, *, withheld: bool = False) -> AuditRow:
        return AuditRow(
            n,
            0,
            "proposal.rejected",
            "le_gal",
            "AiAgent",
            "s#1",
            "p*1",
            detail,
            why,
            n % 2 == 0,
            withheld,
        )

    def line(row: AuditRow) -> str:
        def cell(text: str) -> str:
            return re.sub(r"([\\`*_{}\[\]<>()#+!|~&])", r"\\\1", visible(text))

        cells = [str(row.sequence), row.time, row.who, row.type, row.section or "", row.subject]
        cells = [cell(c) for c in cells]
        cells += ["(withheld)" if row.withheld else cell(row.detail), cell(row.why)]
        cells += ["⚑ override" if row.override else ""]
        return "| " + " | ".join(cells) + " |\n"

    plain = [
        row(0, "summary: a [link](x) | b", "why *not*"),
        row(1, "ignored", "", withheld=True),
        row(2, "(withheld)", "back\\slash & <tag>"),
        row(3, "", "~~gone~~ #1 !"),
    ]
    separators = [row(4, "a\x1fb", "c"), row(5, "d", "e\x1ef"), row(6, "\x1e", "", withheld=True)]
    for rows in (plain, plain + separators, separators):
        assert MarkdownWriter("memo", "").rows(rows) == "".join(map(line, rows))


@pytest.mark.parametrize(
    ("epoch_ms", "written"),
    [
        (1_772_357_400_250, "2026-03-01T09:30:00.250Z"),
        (0, "1970-01-01T00:00:00.000Z"),
        (999, "1970-01-01T00:00:00.999Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
        (10**20, "100000000000000000000"),  # no calendar holds it: its number
    ],
)
def test_a_time_is_written_to_the_millisecond_in_utc(epoch_ms: int, written: str) -> None:
    from engine.protocol.audit import iso_time

    assert iso_time(epoch_ms) == written


def test_the_collector_is_on_after_an_audit_made_or_refused(demo: Path) -> None:
    """``audit_text`` pauses the cyclic collector while it reads and writes; it leaves it on
    after, whether the audit was made or refused."""
    import gc

    from engine.protocol.audit import EventFilter
    from engine.protocol.errors import DocumentNotFound
    from pact_tui.audit import audit_text

    async def run() -> None:
        async with await Workspace.open(demo, watch=False, read_only=True) as ws:
            assert gc.isenabled()
            assert (await audit_text(ws, "memo", EventFilter(), "csv")).startswith("sequence,")
            assert gc.isenabled()
            with pytest.raises(DocumentNotFound):
                await audit_text(ws, "nodoc", EventFilter(), "csv")
            assert gc.isenabled()

    asyncio.run(run())


def keep_trail(path: Path, upto: int | None) -> None:
    """The memo's trail kept in pieces: up to its checkpoint (``upto`` None: a checkpoint
    saved now keeps it all), or one piece of its first ``upto`` events, the log after it."""
    from engine.documents import DOC_PREFIX
    from engine.workspace.trail import TrailPiece, encode_piece, piece_name

    async def keep() -> None:
        async with await Workspace.open(path, watch=False) as ws:
            if upto is None:
                await ws.load_document("memo")
                await ws.checkpoint()
                return
            events = await ws.store.read_stream(DOC_PREFIX + "memo", 0, limit=upto)
            trail = AuditTrail()
            rows = trail.rows([event.payload for event in events])
            piece = TrailPiece(0, upto, trail.names, rows)
            key = piece_name("memo", 0, upto)
            await ws.store.save_checkpoint(key, events[-1].seq, encode_piece(piece))

    asyncio.run(keep())


@pytest.mark.parametrize("upto", [None, 1, 17])
def test_the_trail_kept_in_pieces_prints_what_the_log_prints(demo: Path, upto: int | None) -> None:
    """``doc log`` and ``doc audit`` in every format, byte for byte the same whether the rows
    come from the trail's stored pieces (all of them, or the first events' and the log after)
    or from the log alone, filters and --since included."""
    runs = [
        ("doc", "log", demo, "memo"),
        ("doc", "log", demo, "memo", "--since", "12", "--type", "proposal"),
        ("doc", "log", demo, "memo", "--limit", "5"),
        ("doc", "audit", demo, "memo", "--format", "csv"),
        ("doc", "audit", demo, "memo", "--format", "md", "--agent", "legal"),
        ("doc", "audit", demo, "memo", "--format", "json", "--type", "agent"),
    ]
    from_the_log = [ok(*run).out for run in runs]
    keep_trail(demo, upto)
    with sqlite3.connect(demo) as connection:
        pieces = connection.execute(
            "SELECT name FROM checkpoints WHERE name LIKE 'audit:doc:memo:%'"
        ).fetchall()
    assert len(pieces) == 1
    assert [ok(*run).out for run in runs] == from_the_log
