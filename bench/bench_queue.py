"""The proposal queue at 100,000 proposals, 10,000 of them pending (``python -m bench queue``).

The document is decided by the engine at a small size (100 agents, 500 sections, 1,000
proposals: 900 merged under ``auto``, then 100 pending in ``objection-based`` windows), then
scaled by copying its proposals' checkpoint columns a hundred times under new ids;
``restore_document`` checks the scaled checkpoint as it would any other, so the document is
consistent. Figures: opening the queue (the ids in queue order and the first screenful of rows
made) and applying each kind of filter, median of 20 runs, target ≤ 100 ms; the anchor,
measured in the same run, is the section outline's rows of the same document (a view already
shipped).
"""

from __future__ import annotations

from typing import Any

from bench.bench_protocol import sectioned
from bench.common import fmt, median_seconds, report_limit
from engine.documents import creation_event
from engine.protocol.commands import Actor
from engine.protocol.decide import decide
from engine.protocol.document import Document
from engine.protocol.envelope import CountingIds
from engine.protocol.persist import dump_document, restore_document
from pact_tui.types import DocShown
from pact_tui.widgets.outline import outline_rows
from pact_tui.widgets.queue import QueueFilter, QueueRows, queue_ids

AGENTS, SECTIONS, SMALL, COPIES = 100, 500, 1_000, 100
SCREEN = 50  # rows made to draw the first screenful
TARGET_MS = 100.0


def small() -> Document:
    ids = CountingIds()
    doc = Document()
    doc.apply(
        creation_event(
            name="plan",
            markdown=sectioned(SECTIONS),
            document_id=ids.uuid(),
            event_id=ids.uuid(),
            epoch_ms=0,
            human="ann",
            policy="auto",
            window_s=600,
            strategy="first-wins",
            default_trust="Collaborator",
        )
    )
    now = 1_000

    def run(command: dict[str, Any], actor: Actor) -> dict[str, Any]:
        return decide(doc, command, actor, now, ids).result

    for i in range(AGENTS):
        run({"op": "join", "agentName": f"a{i}"}, Actor.agent(f"a{i}"))
    for n in range(SMALL):
        if n == SMALL - 100:  # from here on, proposals wait out their windows
            run(
                {"op": "policy", "policy": "objection-based", "why": "bench"},
                Actor.human("ann"),
            )
        section = n % SECTIONS if n < SMALL - 100 else n - (SMALL - 100)
        text = f"## Section {section}\n\nText {n}.\n"
        run(
            {"op": "propose", "sectionId": f"sec:section-{section}", "newContent": text},
            Actor.agent(f"a{n % AGENTS}"),
        )
    return doc


def scaled(doc: Document) -> Document:
    """``doc`` with its proposals copied ``COPIES`` times under new ids."""
    data = dump_document(doc)
    table = data["proposals"]
    count = len(table["id"])
    for name in table:
        table[name] = table[name] * COPIES
    table["id"] = [f"{pid}-{copy}" for copy in range(COPIES) for pid in table["id"][:count]]
    table["correlation"] = [f"c-{pid}" for pid in table["id"]]
    for name in ("supersedes", "reverts", "reverted_by", "conflict"):
        assert not any(table[name]), name  # nothing links proposals to each other here
    statuses = dict(zip(table["id"], table["status"], strict=True))
    data["by_status"] = {
        status: [pid for pid, s in statuses.items() if s == status]
        for status in sorted(set(statuses.values()))
    }
    sections = dict(zip(table["id"], table["section"], strict=True))
    by_section: dict[int, list[str]] = {}
    for pid, status in statuses.items():
        if status in ("Pending", "Approved", "Conflict"):
            by_section.setdefault(sections[pid], []).append(pid)
    data["open_by_section"] = [[key, ids] for key, ids in sorted(by_section.items())]
    data["timers"] = []  # the windows' timers name the first copies only
    return restore_document(data)


def main() -> None:
    doc = scaled(small())
    pending = len(doc.by_status.get("Pending", {}))
    shown = DocShown("plan", doc, doc.sequence, 2_000, "ann")
    anchor = median_seconds(lambda: outline_rows(shown), 20)
    print(
        f"the proposal queue: {len(doc.proposals):,} proposals ({pending:,} pending),"
        f" {AGENTS} agents, {SECTIONS} sections"
    )

    def open_queue(text: str) -> QueueRows:
        rows = QueueRows(doc, queue_ids(doc, None, QueueFilter.parse(text)), shown.now_ms)
        for line in range(min(SCREEN, len(rows))):
            rows[line]
        return rows

    anchor_text = f"anchor: the outline's {len(outline_rows(shown))} rows, {fmt(anchor)}"
    for label, text in (
        ("open (every proposal)", ""),
        ("filter status:pending", "status:pending"),
        ("filter author:a7", "author:a7"),
        ("filter section:sec:section-5", "section:sec:section-5"),
        ("filter needs:me", "needs:me"),
        ("filter status:merged author:a7 words", "status:merged author:a7 section-7"),
    ):
        found = len(open_queue(text))
        figure = median_seconds(lambda text=text: open_queue(text), 20)  # type: ignore[misc]
        report_limit(
            f"queue {label} ({found:,} rows)",
            figure * 1e3,
            TARGET_MS,
            "ms",
            anchor_text=f"{anchor_text}, ratio {figure / anchor:.1f}",
        )


if __name__ == "__main__":
    main()
