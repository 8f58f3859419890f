"""The proposal queue at 100,000 proposals, 10,000 of them pending (``python -m bench queue``).

The document is decided by the engine at a small size (100 agents, 500 sections, 1,000
proposals: 900 merged under ``auto``, then 100 pending in ``objection-based`` windows), then
scaled by copying its proposals' checkpoint columns a hundred times under new ids;
``restore_document`` checks the scaled checkpoint as it would any other, so the document is
consistent. Figures, through the ``ProposalQueue`` widget mounted in an app: opening the queue
(its rows for the whole list, then a screenful of lines drawn) and applying each kind of
filter, median of 20 runs, target ≤ 100 ms; the anchor, measured in the same run, is a plain
``sorted`` of the proposals' ids.
"""

from __future__ import annotations

from typing import Any

from bench.bench_protocol import sectioned
from bench.common import fmt, median_seconds, report_limit, sized
from engine.documents import creation_event
from engine.protocol.commands import Actor
from engine.protocol.decide import decide
from engine.protocol.document import Document
from engine.protocol.envelope import CountingIds
from engine.protocol.persist import dump_document, restore_document
from engine.protocol.results import DocumentResult
from pact_tui.types import DocShown

# The last 100 proposals wait, one to a section: at least 100 sections.
AGENTS, SECTIONS = sized(100, 10), sized(500, 100)
SMALL, COPIES = sized(1_000, 200), sized(100, 2)
ROUNDS = sized(20, 2)  # timed runs of each figure
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

    def run(command: dict[str, Any], actor: Actor) -> DocumentResult:
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


FILTERS = (
    ("filter status:pending", "status:pending"),
    ("filter author:a7", "author:a7"),
    ("filter section:sec:section-5", "section:sec:section-5"),
    ("filter needs:me", "needs:me"),
    ("filter status:merged author:a7 words", "status:merged author:a7 section-7"),
)


async def on_screen(doc: Document, repeat: int) -> list[tuple[str, int, float]]:
    """(label, rows, median seconds) of opening the queue and of each filter, through the
    ``ProposalQueue`` widget mounted in an app: its rows made for the whole list
    (``rows_of``, the cursor kept, ``Highlighted`` posted) and a screenful of lines drawn with
    the theme's styles, as the first frame after the key draws them."""
    from textual.app import App, ComposeResult

    from pact_tui.widgets.queue import ProposalQueue

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield ProposalQueue(id="queue")

    figures: list[tuple[str, int, float]] = []
    async with Host().run_test(size=(160, 50)) as pilot:
        queue = pilot.app.query_one(ProposalQueue)
        revision = iter(range(1, 1_000_000))

        def draw() -> None:
            for y in range(queue.size.height):
                queue.render_line(y)

        def open_queue() -> None:  # a new revision: the rows are made again, then drawn
            queue.shown = DocShown("plan", doc, next(revision), 2_000, "ann")
            draw()

        figures.append(("open (every proposal)", 0, median_seconds(open_queue, repeat)))
        figures[-1] = (figures[-1][0], len(queue.rows), figures[-1][2])
        for label, text in FILTERS:

            def clear() -> None:
                queue.queue_filter = ""

            def apply(text: str = text) -> None:
                queue.queue_filter = text
                draw()

            figure = median_seconds(apply, repeat, setup=clear)
            apply()
            figures.append((label, len(queue.rows), figure))
            await pilot.pause()  # let the posted messages go
    return figures


def main() -> None:
    import asyncio

    doc = scaled(small())
    pending = len(doc.by_status.get("Pending", {}))
    anchor = median_seconds(lambda: sorted(doc.proposals), ROUNDS)
    print(
        f"the proposal queue: {len(doc.proposals):,} proposals ({pending:,} pending),"
        f" {AGENTS} agents, {SECTIONS} sections"
    )
    anchor_text = f"anchor: a plain sort of the {len(doc.proposals):,} ids, {fmt(anchor)}"
    for label, found, figure in asyncio.run(on_screen(doc, ROUNDS)):
        report_limit(
            f"queue {label} ({found:,} rows)",
            figure * 1e3,
            TARGET_MS,
            "ms",
            anchor_text=f"{anchor_text}, ratio {figure / anchor:.1f}",
        )


if __name__ == "__main__":
    main()
