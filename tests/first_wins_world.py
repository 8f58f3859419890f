"""A quiet first-wins document at scale, as the custodian of issue 24 met it: ``AGENTS`` agents
over ``SECTIONS`` sections proposing ``PROPOSALS`` times under the ``first-wins`` strategy, then
nobody writing for a while.

Under ``single`` with nobody approving, each section's first proposal stays open and every later
one is a conflict, settled at once by first-wins (the later one rejected). Each such conflict
group still gets its escalation timer (600 s after it opened), which fires nothing once the group
is settled: so once the document has been quiet for more than 10 minutes, every one of those
timers is due and none of them has anything to fire. Agents that have been silent more than
5 minutes are due for eviction too.

The events are decided by the engine in memory (``decide``, as the workspace does) and appended
in batches of 20,000 to a new workspace file, as ``bench/bench_protocol.py`` builds its big
document, then the workspace saves the document's checkpoint as on closing. The workspace's
clock afterwards is the caller's business: ``QUIET_NS`` past the last event is "more than 10
quiet minutes".
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

NAME = "plan"
HUMAN = "ann"
START_MS = 1_795_000_000_000  # the document's creation
STEP_MS = 1  # simulated time between two proposals: nobody goes silent while it is built
QUIET_NS = 11 * 60 * 1_000_000_000  # more than 10 quiet minutes after the last event


def _events(agents: int, sections: int, proposals: int) -> Iterator[dict[str, Any]]:
    from engine.documents import creation_event
    from engine.protocol.commands import Actor
    from engine.protocol.decide import decide
    from engine.protocol.document import Document
    from engine.protocol.envelope import CountingIds

    ids, doc = CountingIds(), Document()
    markdown = "Intro.\n\n" + "".join(
        f"## Section {i}\n\nText of section {i}.\n\n" for i in range(sections)
    )
    created = creation_event(
        name=NAME,
        markdown=markdown,
        document_id=ids.uuid(),
        event_id=ids.uuid(),
        epoch_ms=START_MS,
        human=HUMAN,
        policy="single",
        window_s=60,
        strategy="first-wins",
        default_trust="Collaborator",
    )
    doc.apply(created)
    yield created
    now = START_MS
    for i in range(agents):
        now += STEP_MS
        join = {"op": "join", "agentName": f"agent-{i:04d}"}
        yield from decide(doc, join, Actor.agent(f"agent-{i:04d}"), now, ids).events
    for n in range(proposals):
        now += STEP_MS
        section = n % sections
        command = {
            "op": "propose",
            "sectionId": f"sec:section-{section}",
            "newContent": f"## Section {section}\n\nText {n}.\n",
            "summary": f"proposal {n}",
        }
        author = Actor.agent(f"agent-{n % agents:04d}")
        yield from decide(doc, command, author, now, ids).events


async def build(path: Path, *, agents: int, sections: int, proposals: int) -> int:
    """Make the document in a new workspace file at ``path``; the time (ns) of its last
    event."""
    from engine.documents import DOC_PREFIX
    from engine.store import NewEvent, SqliteEventStore
    from engine.workspace import Workspace

    events = _events(agents, sections, proposals)
    last_ms = START_MS
    async with await SqliteEventStore.open(path, create=True, watch=False) as store:
        while batch := list(itertools.islice(events, 20_000)):
            await store.append(
                [
                    NewEvent(
                        DOC_PREFIX + NAME,
                        e["eventType"],
                        e,
                        e["actorDisplay"],
                        e["epochMs"] * 1_000_000,
                    )
                    for e in batch
                ]
            )
            last_ms = batch[-1]["epochMs"]
    end_ns = last_ms * 1_000_000
    async with await Workspace.open(path, watch=False, lazy=True, clock=lambda: end_ns) as ws:
        await ws.load_document(NAME)
        await ws.checkpoint()
    return end_ns
