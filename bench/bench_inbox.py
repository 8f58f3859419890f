"""The inbox, roster and events views' rows at scale (``python -m bench.bench_inbox``).

A document of 1,000 agents over 500 sections (each agent sets two saliences and asks one
question, 100 sections flagged, 5,000 events kept), and the time each view takes to make its
rows from the screen's ``DocShown``; the anchor, measured in the same run, is the section
outline's rows (the first view, already shipped) of the same document."""

from __future__ import annotations

from bench.bench_protocol import sectioned
from bench.common import fmt, median_seconds, sized
from engine.documents import creation_event
from engine.protocol.commands import Actor
from engine.protocol.decide import decide
from engine.protocol.document import Document
from engine.protocol.envelope import CountingIds
from pact_tui.types import DocShown
from pact_tui.widgets.agents import agent_rows
from pact_tui.widgets.events import event_row
from pact_tui.widgets.inbox import inbox_rows
from pact_tui.widgets.outline import outline_rows

AGENTS, SECTIONS = sized(1_000, 20), sized(500, 50)  # 50 sections: the questions' spread
FLAGGED, KEPT = sized(100, 5), sized(5_000, 100)
ROUNDS = sized(20, 2)  # timed runs of each view's rows


def build() -> tuple[Document, list[dict[str, object]]]:
    ids = CountingIds()
    doc = Document()
    first = creation_event(
        name="plan",
        markdown=sectioned(SECTIONS),
        document_id=ids.uuid(),
        event_id=ids.uuid(),
        epoch_ms=0,
        human="ann",
        policy="single",
        window_s=60,
        strategy="first-wins",
        default_trust="Collaborator",
    )
    doc.apply(first)
    events: list[dict[str, object]] = [first]
    now = 1_000

    def run(command: dict[str, object], actor: Actor) -> None:
        events.extend(decide(doc, command, actor, now, ids).events)

    for i in range(AGENTS):
        run({"op": "join", "agentName": f"a{i}"}, Actor.agent(f"a{i}"))
    for i in range(AGENTS):
        me = Actor.agent(f"a{i}")
        for s in (i % SECTIONS, (i * 7) % SECTIONS):
            run({"op": "salience", "sectionId": f"sec:section-{s}", "score": i % 11}, me)
        run({"op": "ask-human", "question": f"q{i}", "sectionId": f"sec:section-{i % 50}"}, me)
    for s in range(FLAGGED):
        run(
            {"op": "escalate", "sectionId": f"sec:section-{s}", "reason": "look"}, Actor.agent("a0")
        )
    return doc, events[-KEPT:]


def main() -> None:
    doc, kept = build()
    shown = DocShown("plan", doc, doc.sequence, 1_000, "ann")
    anchor = median_seconds(lambda: outline_rows(shown), ROUNDS)
    print(
        f"rows of a document of {AGENTS:,} agents, {SECTIONS} sections, {doc.sequence:,} events"
        f" (anchor: the outline's {len(outline_rows(shown))} rows, {fmt(anchor)})"
    )
    for name, make in (
        ("inbox", lambda: inbox_rows(doc, None)),
        ("agents", lambda: agent_rows(shown)),
        (f"events ({KEPT:,}), made", lambda: [event_row(shown, e) for e in kept]),
    ):
        rows = make()
        figure = median_seconds(make, ROUNDS)
        print(f"  {name}: {len(rows):,} rows in {fmt(figure)}, ratio {figure / anchor:.2f}")


if __name__ == "__main__":
    main()
