"""A document of many agents, built quickly: decided by the engine in memory, appended to a
workspace file in a few transactions and checkpointed, as ``bench/bench_heatmap.py`` builds its
own (a thousand joins through ``Workspace.run_document`` would take a minute)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pact_tui.screenshot import fixed_clock

NAME = "crowd"
HUMAN = "ann"


def agent_name(number: int) -> str:
    return f"agent-{number:04d}"


async def build_crowd(path: Path, agents: int = 1_000, sections: int = 40) -> None:
    """A workspace at ``path`` whose document ``crowd`` has ``agents`` agents named
    ``agent-NNNN`` (each a role, a salience on a few sections, every fifth an intent), dated by
    the tests' fixed clock so that none is evicted when the app opens it."""
    from engine.documents import DOC_PREFIX, creation_event
    from engine.protocol.commands import Actor
    from engine.protocol.decide import decide
    from engine.protocol.document import Document
    from engine.protocol.envelope import CountingIds
    from engine.store import NewEvent, SqliteEventStore
    from engine.workspace import Workspace

    ids, doc = CountingIds(), Document()
    now = fixed_clock()() // 1_000_000
    markdown = "Intro.\n\n" + "".join(
        f"## Part {n} of the plan\n\nText of part {n}.\n\n" for n in range(sections)
    )
    first = creation_event(
        name=NAME,
        markdown=markdown,
        document_id=ids.uuid(),
        event_id=ids.uuid(),
        epoch_ms=now,
        human=HUMAN,
        policy="objection-based",
        window_s=60,
        strategy="first-wins",
        default_trust="Collaborator",
    )
    doc.apply(first)
    events: list[dict[str, Any]] = [first]
    for number in range(agents):
        me = Actor.agent(agent_name(number))
        join = {"op": "join", "agentName": me.name, "role": "reviewer"}
        events += decide(doc, join, me, now, ids).events
        for step in range(3):
            section = f"sec:part-{(number + step * 7) % sections}-of-the-plan"
            salience = {"op": "salience", "sectionId": section, "score": (number + step) % 11}
            events += decide(doc, salience, me, now, ids).events
    async with await SqliteEventStore.open(path, create=True, watch=False) as store:
        for at in range(0, len(events), 5_000):
            await store.append(
                [
                    NewEvent(DOC_PREFIX + NAME, e["eventType"], e, e["actorDisplay"], 0)
                    for e in events[at : at + 5_000]
                ]
            )
    async with await Workspace.open(path, watch=False) as workspace:
        await workspace.load_document(NAME)
        await workspace.checkpoint()
