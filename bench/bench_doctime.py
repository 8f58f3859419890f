"""Benchmark of a document's past (issue 12, time travel), beside its anchor from this run.

A document of ``EVENTS`` events (the workload of ``bench_protocol``'s reopen figure: 100 agents
proposing, approving, heartbeating, declaring intents, setting salience, commenting), with the
archives the workspace keeps while commands run (one beside each checkpoint it saves, as far
apart as ``_decide_document`` spaces them). ``Workspace.document_at`` at points in the newer
half of the history ÷ the same fold from the stream's start (no cache found) ≤ 0.25, median of
the points, each in a fresh process; both must arrive at the same state. The archives kept
(thinned as each is written, ``repository.archives_pruned``) ÷ the checkpoint, in bytes, ≤ 2.
Stepping as the document screen does (the rewind built at the present once the document is
drawn, ``Workspace.prepare_past``; then ``[`` and ``:N``), and ``pact-tui doc show`` of the
document in a process of its own ≤ 1 s, beside ``pact-tui --help``.

``python -m bench doctime`` runs it; ``python -m bench --tiny doctime`` at 12,000 events (CI's
smoke run: the figure means nothing there).
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any
from unittest import mock

import orjson

import engine.workspace.documents as documents_role
from bench.bench_protocol import _append, _work
from bench.common import RESULTS, TINY, fmt, in_a_fresh_process, report_ratio, sized
from engine.documents import DOC_CHECKPOINT
from engine.protocol.document import Document
from engine.protocol.envelope import CountingIds
from engine.protocol.persist import dump_document
from engine.store import SqliteEventStore
from engine.workspace import Workspace, cadence

EVENTS = sized(200_000, 12_000)
# In the newer half, between archives (tiny: one past each of the archives at 5,000 and 10,000).
POINTS = (6_001, 11_999) if TINY else (110_001, 137_777, 163_333, 199_999)
SHOW_RUNS = sized(3, 1)  # `pact-tui doc show` and `--help`, each
NEVER = 10**12
ROLE_MODULE = "bench.bench_doctime"


async def build(path: str, total: str) -> None:
    """The document ``plan`` of ``total`` events, archived where the workspace would have."""
    total_n = int(total)
    gc.freeze()
    doc, ids = Document(), CountingIds()
    events = _work(doc, ids)
    archived, archives = 0, []
    async with await SqliteEventStore.open(path, create=True, watch=False) as store:
        while (head := await store.head()) < total_n:
            every = cadence.INTERVALS["document"].checkpoint_every
            spacing = max(every, len(doc.proposals) + len(doc.agents))
            batch = min(spacing - (head - archived), total_n - head)
            await _append(store, list(itertools.islice(events, batch)))
            if await store.head() - archived >= spacing:
                with mock.patch.multiple(cadence, CHECKPOINT_ON_CLOSE=NEVER):
                    async with await Workspace.open(path, watch=False, lazy=True) as ws:
                        projection = await ws.load_document("plan")
                        await ws._save_document("plan", projection, archive=True)
                archived = await store.head()
                archives.append(archived)
        sizes = await store.checkpoint_sizes()
    prefix = documents_role.DocumentKind.archive_prefix + "plan:"
    kept = {int(k[len(prefix) :]): v for k, v in sizes.items() if k.startswith(prefix)}
    checkpoint = sizes[DOC_CHECKPOINT + "plan"]
    print(json.dumps({"archives": archives, "kept": kept, "checkpoint": checkpoint}))


async def timed_past(path: str, at: str, mode: str) -> None:
    """How long ``document_at("plan", at)`` takes in a fresh process (``mode``: "cached", or
    "replay" with the caches' names changed so none is found), and what it arrives at."""
    none = "bench:none:" if mode == "replay" else None  # the caches' names, or as they are
    kind = documents_role.DocumentKind  # where the documents' repository finds the names
    patches: dict[str, Any] = {
        "checkpoint_prefix": none or kind.checkpoint_prefix,
        "archive_prefix": none or kind.archive_prefix,
    }
    gc.freeze()
    with mock.patch.multiple(kind, **patches):
        async with await Workspace.open(path, watch=False, lazy=True, read_only=True) as ws:
            start = time.perf_counter()
            doc = await ws.document_at("plan", int(at))
            seconds = time.perf_counter() - start
            assert ws.checkpoint_problem is None, ws.checkpoint_problem
    state = orjson.dumps(dump_document(doc), option=orjson.OPT_SORT_KEYS)
    digest = hashlib.sha256(state).hexdigest()
    print(json.dumps({"seconds": seconds, "events": doc.sequence, "digest": digest}))


async def timed_steps(path: str, total: str) -> None:
    """The document screen's time travel in a fresh process, as the screen reads it
    (``Workspace.document_past``, then ``document_stepped`` where that was a fold): entering
    the past one event before the end (shown from a fold of the nearest cache, then the
    rewind built there, timed apart), steps back from there, then ``:N`` to each of
    ``POINTS`` in turn (each shown, then its rewind built); beside each jump,
    ``document_at`` of the same point. Each arrival is checked against ``document_at``'s
    state."""
    total_n = int(total)
    gc.freeze()
    async with await Workspace.open(path, watch=False, lazy=True, read_only=True) as ws:

        async def shown(at: int) -> tuple[Document, float, float]:
            """The document at ``at`` as the screen shows it: seconds until shown, then
            seconds building the rewind there (0 if it was a step)."""
            start = time.perf_counter()
            doc, stepped = await ws.document_past("plan", at)
            seconds = time.perf_counter() - start
            start = time.perf_counter()
            if not stepped:
                await ws.document_stepped("plan", at)
            return doc, seconds, (time.perf_counter() - start) if not stepped else 0.0

        # As the screen does once the document is drawn: the rewind built at the present.
        await ws.load_document("plan")
        start = time.perf_counter()
        await ws.prepare_past("plan")
        prepared = time.perf_counter() - start
        _, entering, built = await shown(total_n - 1)
        assert built == 0.0  # a step of the rewind prepared
        steps = []
        for n in range(total_n - 2, total_n - 12, -1):
            start = time.perf_counter()
            doc = await ws.document_stepped("plan", n)
            steps.append(time.perf_counter() - start)
        stepped = _digest(doc)
        assert stepped == _digest(await ws.document_at("plan", total_n - 11))
        jumps, builds, anchors = [], [], []
        for at in POINTS:
            doc, seconds, building = await shown(at)
            jumps.append(seconds)
            builds.append(building)
            digest = _digest(doc)
            start = time.perf_counter()
            fresh = await ws.document_at("plan", at)
            anchors.append(time.perf_counter() - start)
            assert digest == _digest(fresh), at
            assert digest == _digest(await ws.document_stepped("plan", at)), at
    print(
        json.dumps(
            {
                "entering": entering,
                "prepared": prepared,
                "steps": steps,
                "jumps": jumps,
                "builds": builds,
                "anchors": anchors,
            }
        )
    )


def _digest(doc: Document) -> str:
    state = orjson.dumps(dump_document(doc), option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(state).hexdigest()


ROLES: dict[str, Callable[..., Coroutine[Any, Any, None]]] = {
    "build": build,
    "past": timed_past,
    "steps": timed_steps,
}


def bench_past(directory: Path) -> None:
    print(f"1. the document at an event of its past, {EVENTS:,} events: nearest cache vs replay")
    path = directory / "past.pact"
    start = time.perf_counter()
    built = in_a_fresh_process(ROLE_MODULE, "build", path, EVENTS)
    print(
        f"  (built in {fmt(time.perf_counter() - start)}; archives at"
        f" {', '.join(f'{a:,}' for a in built['archives'])})"
    )
    kept = {int(place): size for place, size in built["kept"].items()}
    places = ", ".join(f"{p:,} ({size / 1e6:.1f} MB)" for p, size in sorted(kept.items()))
    print(f"  archives kept: {places}, load {_load()}")
    report_ratio(
        "all of the document's archives ÷ its checkpoint, bytes",
        sum(kept.values()),
        built["checkpoint"],
        2.0,
        unit=lambda b: f"{b / 1e6:.1f} MB",
        anchor_label="the checkpoint",
    )
    cached, replayed = [], []
    for at in POINTS:
        replay = in_a_fresh_process(ROLE_MODULE, "past", path, at, "replay")
        fast = in_a_fresh_process(ROLE_MODULE, "past", path, at, "cached")
        assert (fast["events"], fast["digest"]) == (replay["events"], replay["digest"]), at
        assert fast["events"] == at, fast
        print(f"  event {at:,}: {fmt(fast['seconds'])} (replay {fmt(replay['seconds'])})")
        cached.append(fast["seconds"])
        replayed.append(replay["seconds"])
    report_ratio(
        "document_at from the nearest cache vs from the start",
        statistics.median(cached),
        statistics.median(replayed),
        0.25,
        anchor_label="replay from the start",
    )


def bench_steps(path: Path) -> None:
    """Figures 2 and 3: a step back (``[``) and ``:N`` through ``document_stepped``."""
    print(f"2. stepping through the past of {EVENTS:,} events (document_stepped), load {_load()}")
    found = in_a_fresh_process(ROLE_MODULE, "steps", path, EVENTS)
    step = statistics.median(found["steps"])
    anchor = statistics.median(found["anchors"])
    print(
        f"  the rewind built at the present once the document is drawn"
        f" (Workspace.prepare_past, in the background): {fmt(found['prepared'])}"
    )
    print(f"  entering the past (event {EVENTS - 1:,}) after it: {fmt(found['entering'])}")
    print(f"  10 steps back: {', '.join(fmt(s) for s in found['steps'])}")
    jumps = zip(POINTS, found["jumps"], found["builds"], found["anchors"], strict=True)
    for at, jump, built, fresh in jumps:
        print(
            f"  :N to event {at:,}: shown in {fmt(jump)}, its rewind built in {fmt(built)}"
            f" (document_at {fmt(fresh)})"
        )
    _absolute("one step back, median of 10", step, 0.1, anchor, "document_at, median")
    _absolute("`:N` to each point, the slowest", max(found["jumps"]), 1.0, anchor, "document_at")
    _absolute("entering the past (the first `[`)", found["entering"], 0.1, anchor, "document_at")


def bench_show(path: Path) -> None:
    """Figure 4: ``pact-tui doc show`` of the document, a process of its own, wall clock."""
    print(f"3. `pact-tui doc show` of the {EVENTS:,}-event document, load {_load()}")

    def run(*arguments: str) -> float:
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "pact_tui", *arguments],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - start
        assert done.returncode == 0, f"pact-tui {' '.join(arguments)}: {done.stderr.strip()}"
        return seconds

    shows = [run("doc", "show", str(path), "plan") for _ in range(SHOW_RUNS)]
    helps = [run("--help") for _ in range(SHOW_RUNS)]
    print(f"  doc show: {', '.join(map(fmt, shows))}; --help: {', '.join(map(fmt, helps))}")
    _absolute(
        f"`doc show`, median of {SHOW_RUNS}",
        statistics.median(shows),
        1.0,
        statistics.median(helps),
        "pact-tui --help, median",
    )


def _absolute(name: str, figure: float, limit: float, anchor: float, label: str) -> None:
    ok = figure <= limit
    print(
        f"  {name}: {fmt(figure)}  (÷ {label} {fmt(anchor)} = {figure / anchor:.3f})"
        f"  (target ≤ {fmt(limit)})  {'PASS' if ok else 'FAIL'}"
    )
    RESULTS.append((name, ok))


def _load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        bench_past(Path(folder))
        bench_steps(Path(folder) / "past.pact")
        bench_show(Path(folder) / "past.pact")


if __name__ == "__main__" and len(sys.argv) > 2 and sys.argv[1] in ROLES:
    asyncio.run(ROLES[sys.argv[1]](*sys.argv[2:]))
