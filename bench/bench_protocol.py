"""Benchmarks of the document protocol (issue 11), each figure beside its anchor from this run.

1. One ``propose`` through ``Workspace.run_document`` on a document with 1,000 joined agents and
   500 sections: median ≤ 2 ms. Anchor: a raw ``store.append`` of one event of the same size.
2. propose → merged under ``single`` (propose, then one approval): median ≤ 5 ms, same anchor.
3. Queries at 100k proposals (open on a section, by author, by status): ≤ 5 ms each. Anchor: the
   same filter as a plain scan over every proposal.
4. One ``tick`` that fires 10,000 due auto-merges (objection windows ending together), through
   the workspace (decided and appended in one transaction): ≤ 1 s. Anchor: folding the same
   events into a copy of the document, which any replay must do.
5. Reopening a workspace whose document has 1M events (100 agents working on 500 sections:
   proposals merged by an approval, heartbeats, intents, salience, comments): loading the
   document from its checkpoint and a tail of ``TAIL`` events ÷ a full replay of its stream
   ≤ 0.1. Each in a fresh process; both must arrive at the same state.

``python -m bench protocol`` runs them.
"""

from __future__ import annotations

import asyncio
import copy
import gc
import hashlib
import itertools
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import orjson

import engine.workspace.documents as documents_role
from bench.common import (
    fmt,
    in_a_fresh_process,
    median_seconds,
    percentile,
    report_limit,
    report_ratio,
    sized,
)
from engine.canonical import canonical_json
from engine.documents import DOC_PREFIX, creation_event
from engine.protocol import views
from engine.protocol.commands import Actor
from engine.protocol.decide import Decision, decide
from engine.protocol.document import Document
from engine.protocol.envelope import CountingIds
from engine.protocol.persist import dump_document
from engine.protocol.results import ProposalStatus
from engine.store import NewEvent, SqliteEventStore
from engine.workspace import Workspace, cadence

# More agents than sections: agent i proposes on section i and agent i + 1 approves it.
AGENTS, SECTIONS = sized(1_000, 30), sized(500, 20)
PROPOSALS, PROPOSERS = sized(100_000, 200), sized(100, 10)
DUE = sized(10_000, 20)
REOPEN_EVENTS, TAIL, WORKERS = sized(1_000_000, 2_000), sized(2_500, 100), sized(100, 10)
QUERY_ROUNDS, SCAN_ROUNDS, REOPENS = sized(50, 2), sized(5, 1), sized(3, 1)
NEVER = 10**12


def proposal_of(decision: Decision) -> ProposalStatus:
    """The proposal a proposal command answered with."""
    assert isinstance(decision.result, ProposalStatus), decision.result
    return decision.result


def sectioned(count: int) -> str:
    return "Intro.\n\n" + "".join(
        f"## Section {i}\n\nText of section {i}.\n\n" for i in range(count)
    )


class Clock:
    def __init__(self) -> None:
        self.ns = 1_800_000_000_000_000_000

    def __call__(self) -> int:
        return self.ns

    def advance(self, seconds: float) -> None:
        self.ns += int(seconds * 1e9)


async def _joined(path: Path, clock: Clock, *, policy: str = "single") -> Workspace:
    ws = await Workspace.open(path, create=True, watch=False, clock=clock, ids=CountingIds())
    await ws.create_document("plan", sectioned(SECTIONS), human="ann", policy=policy)
    for i in range(AGENTS):
        await ws.run_document("plan", {"op": "join", "agentName": f"a{i}"}, Actor.agent(f"a{i}"))
    return ws


async def _propose_and_merge(path: Path) -> tuple[list[float], list[float], list[int]]:
    clock = Clock()
    ws = await _joined(path, clock)
    proposing, merging, sizes = [], [], []
    try:
        for i in range(SECTIONS // 2):
            clock.advance(0.01)
            command = {
                "op": "propose",
                "sectionId": f"sec:section-{i}",
                "newContent": f"## Section {i}\n\nNew text of section {i}.\n",
                "summary": "a revision",
            }
            start = time.perf_counter()
            decision = await ws.run_document("plan", command, Actor.agent(f"a{i}"))
            proposing.append(time.perf_counter() - start)
            sizes.append(len(canonical_json(decision.events[-1])))
        for i in range(SECTIONS // 2, SECTIONS):
            clock.advance(0.01)
            command = {
                "op": "propose",
                "sectionId": f"sec:section-{i}",
                "newContent": f"## Section {i}\n\nMerged text of section {i}.\n",
            }
            start = time.perf_counter()
            decision = await ws.run_document("plan", command, Actor.agent(f"a{i}"))
            approve = {"op": "approve", "proposalId": proposal_of(decision).proposal_id}
            merged = await ws.run_document("plan", approve, Actor.agent(f"a{i + 1}"))
            merging.append(time.perf_counter() - start)
            assert proposal_of(merged).status == "Merged", merged.result
    finally:
        await ws.close()
    return proposing, merging, sizes


async def _appends(path: Path, sizes: list[int]) -> list[float]:
    samples = []
    async with await SqliteEventStore.open(path, create=True, watch=False) as store:
        for size in sizes:
            event = NewEvent("doc:plan", "pact.proposal.created", {"payloadJson": "x" * size})
            start = time.perf_counter()
            await store.append([event])
            samples.append(time.perf_counter() - start)
    return samples


def bench_propose(directory: Path) -> None:
    print(f"1-2. protocol commands through the workspace ({AGENTS:,} agents, {SECTIONS} sections)")
    proposing, merging, sizes = asyncio.run(_propose_and_merge(directory / "propose.pact"))
    anchor = statistics.median(asyncio.run(_appends(directory / "append.pact", sizes)))
    for name, samples, limit in (
        ("one propose", proposing, 2.0),
        ("propose → merged under single (propose + approve)", merging, 5.0),
    ):
        median = statistics.median(samples)
        report_limit(
            f"{name}, median",
            median * 1e3,
            limit,
            "ms",
            anchor_text=f"p95 {fmt(percentile(samples, 0.95))}; raw append of one event of the"
            f" same size {fmt(anchor)}, ratio {median / anchor:.1f}",
        )


def _created(ids: CountingIds, epoch_ms: int) -> dict[str, Any]:
    """The creation of document ``plan``: ``SECTIONS`` sections, policy ``single``."""
    return creation_event(
        name="plan",
        markdown=sectioned(SECTIONS),
        document_id=ids.uuid(),
        event_id=ids.uuid(),
        epoch_ms=epoch_ms,
        human="ann",
        policy="single",
        window_s=60,
        strategy="first-wins",
        default_trust="Collaborator",
    )


def _document_with(proposals: int) -> Document:
    """A document with ``proposals`` proposals by 100 agents over 500 sections: most merged,
    some rejected, the last ones open."""
    ids = CountingIds()
    doc = Document()
    doc.apply(_created(ids, 0))
    now = 1_000
    for i in range(PROPOSERS):
        decide(doc, {"op": "join", "agentName": f"a{i}"}, Actor.agent(f"a{i}"), now, ids)
    # One simulated millisecond per proposal: nobody falls silent long enough to be evicted.
    for n in range(proposals):
        now += 1
        author = f"a{n % PROPOSERS}"
        section = n % SECTIONS
        command = {
            "op": "propose",
            "sectionId": f"sec:section-{section}",
            "newContent": f"## Section {section}\n\nText {n}.\n",
        }
        decision = decide(doc, command, Actor.agent(author), now, ids)
        if n < proposals - SECTIONS:  # settle it, so the next one on its section is no conflict
            vote = "approve" if n % 10 else "reject"
            reviewer = Actor.agent(f"a{(n + 1) % PROPOSERS}")
            voted = {"op": vote, "proposalId": proposal_of(decision).proposal_id}
            decide(doc, voted, reviewer, now, ids)
    return doc


def bench_queries() -> None:
    print(f"3. queries at {PROPOSALS:,} proposals")
    start = time.perf_counter()
    gc.freeze()  # a long-lived heap: the collector would walk it again and again
    doc = _document_with(PROPOSALS)
    print(f"  (built by {PROPOSALS:,} decided proposals in {time.perf_counter() - start:.1f} s)")
    section = doc.by_id["sec:section-7"]
    author = doc.agent_named("a7")
    assert author is not None
    everything = list(doc.proposals.values())
    queries: list[tuple[str, Callable[[], list[Any]], Callable[[], list[Any]]]] = [
        (
            "open proposals on a section",
            lambda: views.proposals(doc, None, section=section, open_only=True),
            lambda: [p for p in everything if p.section == section.key and p.status == "Pending"],
        ),
        (
            "proposals by an author",
            lambda: views.proposals(doc, None, author=author.id),
            lambda: [p for p in everything if p.author == author.id],
        ),
        (
            "pending proposals (by status)",
            lambda: views.proposals(doc, None, status="Pending"),
            lambda: [p for p in everything if p.status == "Pending"],
        ),
    ]
    for name, query, scan in queries:
        found, scanned = query(), scan()
        assert [p.id for p in found] == [p.id for p in scanned], name
        figure, anchor = median_seconds(query, QUERY_ROUNDS), median_seconds(scan, SCAN_ROUNDS)
        report_limit(
            f"{name} ({len(found):,} found)",
            figure * 1e3,
            5.0,
            "ms",
            anchor_text=f"a scan of all {len(everything):,} {fmt(anchor)},"
            f" ratio {figure / anchor:.3f}",
        )


async def _due_merges(path: Path) -> tuple[float, float, int]:
    clock = Clock()
    ws = await Workspace.open(path, create=True, watch=False, clock=clock, ids=CountingIds())
    try:
        await ws.create_document("many", sectioned(DUE), human="ann", policy="objection-based")
        for name in ("author", "reviewer"):
            await ws.run_document("many", {"op": "join", "agentName": name}, Actor.agent(name))
        for i in range(DUE):
            command = {
                "op": "propose",
                "sectionId": f"sec:section-{i}",
                "newContent": f"## Section {i}\n\nRevised {i}.\n",
            }
            await ws.run_document("many", command, Actor.agent("author"))
        for name in ("author", "reviewer"):
            await ws.run_document("many", {"op": "heartbeat"}, Actor.agent(name))
        before = copy.deepcopy(ws.document("many"))
        clock.advance(61)
        start = time.perf_counter()
        decision = await ws.tick_document("many")
        ticking = time.perf_counter() - start
        merged = sum(e["eventType"] == "pact.proposal.auto-merged" for e in decision.events)
        start = time.perf_counter()
        for event in decision.events:
            before.apply(event)
        folding = time.perf_counter() - start
    finally:
        await ws.close()
    return ticking, folding, merged


def bench_tick(directory: Path) -> None:
    print(f"4. one tick firing {DUE:,} due auto-merges")
    ticking, folding, merged = asyncio.run(_due_merges(directory / "due.pact"))
    assert merged == DUE, merged
    report_limit(
        f"tick firing {merged:,} auto-merges (decided and appended)",
        ticking,
        1.0,
        "s",
        anchor_text=f"folding the same events {fmt(folding)}, ratio {ticking / folding:.1f}",
    )


# 5. Reopening a document of 1M events


def _work(doc: Document, ids: CountingIds) -> Iterator[dict[str, Any]]:
    """The document's events: its creation, ``WORKERS`` joins, then rounds of work for ever."""
    first = _created(ids, 1_000)
    doc.apply(first)
    yield first
    now = 2_000
    for i in range(WORKERS):
        yield from decide(
            doc, {"op": "join", "agentName": f"a{i}"}, Actor.agent(f"a{i}"), now, ids
        ).events
    for n in itertools.count():
        now += 10  # everyone keeps busy: nobody is evicted, no window ends
        author, reviewer = Actor.agent(f"a{n % WORKERS}"), Actor.agent(f"a{(n + 1) % WORKERS}")
        section = n % SECTIONS
        where = f"sec:section-{section}"
        text = f"## Section {section}\n\nText {n}.\n"
        proposed = decide(
            doc, {"op": "propose", "sectionId": where, "newContent": text}, author, now, ids
        )
        yield from proposed.events
        commands: list[tuple[Actor, dict[str, Any]]] = [
            (reviewer, {"op": "approve", "proposalId": proposal_of(proposed).proposal_id}),
            (author, {"op": "heartbeat"}),
            (reviewer, {"op": "intent", "sectionId": where, "goal": f"goal {n}"}),
            (author, {"op": "salience", "sectionId": where, "score": n % 11}),
            (reviewer, {"op": "comment", "sectionId": where, "text": f"comment {n}"}),
        ]
        for actor, command in commands:
            yield from decide(doc, command, actor, now, ids).events


async def _append(store: SqliteEventStore, events: list[dict[str, Any]]) -> None:
    """Append decided events as ``Workspace.run_document`` does, many to a transaction."""
    await store.append(
        [
            NewEvent(
                DOC_PREFIX + "plan", e["eventType"], e, e["actorDisplay"], e["epochMs"] * 10**6
            )
            for e in events
        ]
    )


async def build_reopen(path: str, total: str, tail: str) -> None:
    """A workspace whose document ``plan`` has ``total`` events, its checkpoint ``tail`` events
    before the end (saved by the workspace, as on closing)."""
    total_n, tail_n = int(total), int(tail)
    gc.freeze()
    doc, ids = Document(), CountingIds()
    events = _work(doc, ids)
    async with await SqliteEventStore.open(path, create=True, watch=False) as store:
        for until in (total_n - tail_n, total_n):
            while (head := await store.head()) < until:
                await _append(store, list(itertools.islice(events, min(20_000, until - head))))
            if until < total_n:
                with mock.patch.multiple(cadence, CHECKPOINT_ON_CLOSE=NEVER):
                    async with await Workspace.open(path, watch=False, lazy=True) as ws:
                        await ws.load_document("plan")
                        await ws.checkpoint()
    print(json.dumps({"proposals": len(doc.proposals), "intents": len(doc.intents)}))


async def timed_reopen(path: str, mode: str) -> None:
    """How long opening the workspace and loading ``plan`` takes (``mode``: "checkpoint", or
    "replay" with the checkpoint's name changed so none is found), and what it arrives at."""
    # "replay": the checkpoint's name changed, so none is found.
    kind = documents_role.DocumentKind  # where the documents' repository finds the name
    name = "bench:loading-disabled:" if mode == "replay" else kind.checkpoint_prefix
    gc.freeze()
    with mock.patch.object(kind, "checkpoint_prefix", name):
        start = time.perf_counter()
        ws = await Workspace.open(path, watch=False, lazy=True, read_only=True)
        projection = await ws.load_document("plan")
        seconds = time.perf_counter() - start
        try:
            assert ws.checkpoint_problem is None, ws.checkpoint_problem
            state = orjson.dumps(dump_document(projection.doc), option=orjson.OPT_SORT_KEYS)
            print(
                json.dumps(
                    {
                        "seconds": seconds,
                        "events": projection.doc.sequence,
                        "from": projection.checkpointed,
                        "digest": hashlib.sha256(state).hexdigest(),
                        "proposals": len(projection.doc.proposals),
                    }
                )
            )
        finally:
            await ws.close()


ROLES: dict[str, Callable[..., Coroutine[Any, Any, None]]] = {
    "build": build_reopen,
    "open": timed_reopen,
}
ROLE_MODULE = "bench.bench_protocol"


def bench_reopen(directory: Path) -> None:
    print(
        f"5. reopening a document of {REOPEN_EVENTS:,} events:"
        f" checkpoint + {TAIL:,}-event tail vs full replay"
    )
    path = directory / "reopen.pact"
    start = time.perf_counter()
    built = in_a_fresh_process(ROLE_MODULE, "build", path, REOPEN_EVENTS, TAIL)
    print(
        f"  (decided by the engine and appended in {fmt(time.perf_counter() - start)};"
        f" {built['proposals']:,} proposals, {built['intents']:,} intents;"
        f" file {path.stat().st_size / 1e6:.0f} MB)"
    )
    replay = in_a_fresh_process(ROLE_MODULE, "open", path, "replay")
    reopens = [in_a_fresh_process(ROLE_MODULE, "open", path, "checkpoint") for _ in range(REOPENS)]
    assert replay["events"] == REOPEN_EVENTS and replay["from"] == 0, replay
    for run in reopens:  # the same state either way, and really from the checkpoint
        assert (run["events"], run["digest"]) == (replay["events"], replay["digest"]), run
        assert run["from"] == REOPEN_EVENTS - TAIL, run
    report_ratio(
        "reopen with checkpoint vs full replay",
        statistics.median(run["seconds"] for run in reopens),
        replay["seconds"],
        0.1,
        anchor_label="full replay",
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder)
        bench_propose(directory)
        bench_queries()
        bench_tick(directory)
        bench_reopen(directory)


if __name__ == "__main__" and len(sys.argv) > 2 and sys.argv[1] in ROLES:
    asyncio.run(ROLES[sys.argv[1]](*sys.argv[2:]))
