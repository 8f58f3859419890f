"""Benchmarks of ``ctx import --gptme`` (issue 28, ``engine/importing``), each figure beside its
anchor measured in the same run: ``python -m bench import``.

The conversation is made here as ``bench.bench_masterlog`` makes its own (the same messages as
gptme writes them), ``BENCH_IMPORT_SIZE`` of master log (default 1 GiB, about 256k messages;
``BENCH_IMPORT_SIZE=64M`` for a quick run), and its active view ``views/compacted-001.jsonl``
is the whole conversation as gptme's autocompact leaves it: every line of the master, with
``REFERENCES`` of them compacted (tool outputs saved to ``tool-outputs/autocompact/`` and cut to
gptme's summary and a reference, long answers to their opening and a reference).

1. Importing it, in a fresh process (its peak memory printed beside): a fresh master-log cache,
   ``Conversation.open``, ``Importing`` (every line of the master and the view read and parsed
   as they are asked for, each reference's original recovered) fed to
   ``Workspace.create_context_streamed`` into a new workspace file (the context and every
   command in one transaction, written a batch at a time), once ÷ indexing it as ``pact-tui
   log index`` does (``Conversation.open`` on a fresh cache, the byte index of every log, then
   ``catalogue_all``: each line's digest and the FTS5 search index), once: ≤ 20.
   The byte index alone is printed beside it.
2. One message appended as gptme appends it on a view (to the master log and the view), until
   it is in the followed context: the import's follower over the master log's watcher
   (``engine.importing.gptme.follow``: watchfiles, the logs' indexes refreshed, the verdicts
   and catalogue updated, the message planned) and ``Workspace.run_many`` appending its event:
   p95 of ``APPENDS`` appends (after ``WARM``) ≤ 250 ms. Anchor: the same appends followed by
   the master log's own watcher alone (``engine.masterlog.watch.follow``), in the same run.
3. The imported context's cold start in the app: a fresh headless process opening the import's
   workspace on its context, from spawning it to the first frame composed with the context's
   tree on screen (``bench.bench_app``'s cold start) ÷ the same for a context of 100,000 items
   (the scaled demo ``bench.bench_app`` opens), in the same run, once each untimed, then the
   median of ``STARTS`` each: ≤ 1.5.
4. The reference items' badges at scale, as the context screen judges them whenever the view
   shown changes: the conversation's session brought up to date (``LogSession.update``, nothing
   changed), then every item of the imported context's view walked and each reference item
   given the worst verdict on its line (``pact_tui.reference_items.judge``), median of 5.
   Anchor: walking the same view's items alone. Printed, without a target (the issue sets
   none).

``BENCH_TINY=1`` (``python -m bench --tiny``): a conversation of 256 KiB and 3 appends, and a
demo of 1,000 items for figure 3's anchor, only to see it run.

Every cache the run makes is in its scratch folder, removed at its end: ``PACT_TUI_CACHE`` is
set there for the run (the app's children read it: a reference item's conversation is indexed
there, not in the user's cache).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

from bench.bench_masterlog import (
    Messages,
    compactable,
    make_conversation,
    parse_size,
    size_text,
)
from bench.common import (
    TINY,
    fmt,
    in_a_fresh_process,
    percentile,
    report_limit,
    report_ratio,
    sized,
)
from engine.importing.gptme import Follower, Importing, follow
from engine.masterlog.conversation import MASTER, Conversation
from engine.masterlog.lines import encode_message, preview_of
from engine.masterlog.references import format_reference, format_tool_summary
from engine.masterlog.verify import Verifier
from engine.masterlog.watch import follow as follow_log
from engine.workspace import Workspace

SIZE = "1G"
REFERENCES = sized(10_000, 5)
APPENDS, WARM = sized(20, 3), sized(3, 1)
DEMO_ITEMS = sized(100_000, 1_000)  # figure 3's anchor: the scaled demo's context
VIEW = "views/compacted-001.jsonl"
NOTICED_WITHIN = 30.0  # seconds an append may take to be followed before the run fails


def write_view(directory: Path, references: int) -> int:
    """The active view: every master line, ``references`` of the compactable ones (spread
    evenly) cut as autocompact cuts them; how many lines it compacted."""
    master_path = str(directory / MASTER)
    saved_dir = directory / "tool-outputs" / "autocompact"
    saved_dir.mkdir(parents=True, exist_ok=True)
    with open(directory / MASTER, "rb") as master:  # line by line: 1 GiB is never held
        cuttable = [n for n, raw in enumerate(master) if compactable(json.loads(raw)) is not None]
    step = max(1, len(cuttable) // max(1, references))
    chosen = set(cuttable[::step][:references])
    (directory / "views").mkdir(exist_ok=True)
    with open(directory / MASTER, "rb") as master, open(directory / VIEW, "wb") as view:
        _write_lines(master, view, chosen, master_path, saved_dir)
    (directory / "views" / ".current").write_text("compacted-001\n")
    return len(chosen)


def _write_lines(
    master: BinaryIO, view: BinaryIO, chosen: set[int], master_path: str, saved_dir: Path
) -> None:
    start = 0
    for n, raw in enumerate(master):
        end = start + len(raw)
        if n in chosen:
            message = json.loads(raw)
            content = message["content"]
            tokens = len(content) // 4
            reference = format_reference(master_path, start, end, tokens, preview_of(content))
            if compactable(message) == "tool-output":
                when = datetime.fromisoformat(message["timestamp"]).strftime("%Y%m%d_%H%M%S")
                digest = hashlib.sha256(content.encode()).hexdigest()[:8]
                saved = saved_dir / f"{when}-{digest}.txt"
                saved.write_text(content, encoding="utf-8")
                command = content.split("\n", 1)[0].strip()
                text = f"{format_tool_summary(tokens, command, str(saved))}\n\n{reference}"
            else:
                text = f"{content[: len(content) // 4]}\n\n{reference}"
            raw = encode_message({**message, "content": text})
        view.write(raw)
        start = end


def append_message(directory: Path, stream: Messages) -> None:
    """The next message, as gptme writes it on a view: to the master log and the view."""
    raw = encode_message(stream.next())
    for name in (MASTER, VIEW):
        with open(directory / name, "ab") as log:
            log.write(raw)


def log_index(directory: Path, cache: Path) -> tuple[float, float]:
    """``pact-tui log index`` on a fresh cache: (the byte index, with the catalogue)."""
    start = time.perf_counter()
    with Conversation.open(directory, cache) as conversation:
        indexed = time.perf_counter() - start
        for _ in conversation.catalogue_all():
            pass
    return indexed, time.perf_counter() - start


async def import_once(directory: Path, cache: Path, workspace: Path) -> tuple[float, int]:
    start = time.perf_counter()
    with Conversation.open(directory, cache) as conversation:
        async with await Workspace.open(workspace, create=True, watch=False) as ws:
            ran = await ws.create_context_streamed("agent", Importing(conversation))
    return time.perf_counter() - start, ran


async def followed_latencies(directory: Path, cache: Path, scratch: Path) -> list[float]:
    """Append → the message in the followed context, ``WARM + APPENDS`` times."""
    stream = Messages(seed=28)
    with Conversation.open(directory, cache) as conversation:
        importing = Importing(conversation)
        async with await Workspace.open(scratch / "follow.pact", create=True, watch=False) as ws:
            await ws.create_context_streamed("agent", importing)
            assert importing.imported is not None
            follower = Follower(conversation, importing.plan, importing.imported)
            taken = asyncio.Event()
            stop = asyncio.Event()

            async def run() -> None:
                async for step in follow(follower, stop, poll=200):
                    if step.commands:
                        await ws.run_many("agent", step.commands)
                    if any(e["event"] == "message" for e in step.events):
                        taken.set()

            return await _timed(directory, stream, run, taken, stop)


async def watched_latencies(directory: Path, cache: Path) -> list[float]:
    """Append → the master log's own watcher has updated: the anchor."""
    stream = Messages(seed=29)
    with Conversation.open(directory, cache) as conversation:
        for _ in conversation.catalogue_all():
            pass
        verifier = Verifier(conversation)
        verifier.update()
        taken = asyncio.Event()
        stop = asyncio.Event()

        async def run() -> None:
            async for update in follow_log(conversation, verifier, stop, poll=200):
                if any(r.new_lines for r in update.refreshes):
                    taken.set()

        return await _timed(directory, stream, run, taken, stop)


async def _timed(
    directory: Path,
    stream: Messages,
    run: object,
    taken: asyncio.Event,
    stop: asyncio.Event,
) -> list[float]:
    assert callable(run)
    task = asyncio.create_task(run())
    try:
        await asyncio.sleep(0.5)  # the watcher in place (warm-up rounds are not counted anyway)
        samples = []
        for _ in range(WARM + APPENDS):
            taken.clear()
            start = time.perf_counter()
            append_message(directory, stream)
            await asyncio.wait_for(taken.wait(), NOTICED_WITHIN)
            samples.append(time.perf_counter() - start)
        return samples[WARM:]
    finally:
        stop.set()
        await task


def main() -> None:
    size = 256 << 10 if TINY else parse_size(os.environ.get("BENCH_IMPORT_SIZE", SIZE))
    print(f"Import (engine/importing): a gptme conversation of {size_text(size)}")
    with tempfile.TemporaryDirectory(prefix="bench-import-") as folder, scratch_cache(folder):
        scratch = Path(folder)
        start = time.perf_counter()
        made = make_conversation(scratch / "conversation", size, 1)  # its view: replaced below
        directory = made.directory
        compacted = write_view(directory, REFERENCES)
        print(
            f"  (made in {fmt(time.perf_counter() - start)}: {made.lines:,} messages, the view"
            f" with {compacted:,} compacted)"
        )
        print("1. importing it ÷ indexing it as `log index` does")
        indexed, catalogued = log_index(directory, scratch / "index.sqlite")
        child = in_a_fresh_process(
            "bench.bench_import",
            "import",
            directory,
            scratch / "import.sqlite",
            scratch / "import.pact",
        )
        took, commands = child["seconds"], child["commands"]
        written = size_text((scratch / "import.pact").stat().st_size)
        print(
            f"  ({commands:,} commands; the byte index alone {fmt(indexed)}, ratio"
            f" {took / indexed:.1f}; the workspace file {written}; the import's process peaked"
            f" at {size_text(child['peak_rss'])} of memory (ru_maxrss), the master log"
            f" {size_text(size)})"
        )
        report_ratio(
            "ctx import --gptme, fresh cache and workspace",
            took,
            catalogued,
            20,
            anchor_label="log index (byte index + catalogue)",
        )
        print("2. one message appended (master and view) → in the followed context")
        anchor = asyncio.run(watched_latencies(directory, scratch / "watch.sqlite"))
        samples = asyncio.run(followed_latencies(directory, scratch / "follow.sqlite", scratch))
        figure = percentile(samples, 0.95)
        floor = percentile(anchor, 0.95)
        report_limit(
            f"append → followed context, p95 of {APPENDS}",
            figure * 1e3,
            250,
            "ms",
            anchor_text=f"median {fmt(statistics.median(samples))}; the master log's watcher"
            f" alone p95 {fmt(floor)}, ratio {figure / floor:.2f}",
        )
        print("3. the imported context's cold start in the app ÷ a 100k-item context's")
        bench_cold_start(scratch / "import.pact", scratch, made.lines)
        print("4. the reference items' badges, judged as the context screen judges them")
        bench_badges(scratch / "import.pact", directory, scratch / "badges.sqlite")


@contextlib.contextmanager
def scratch_cache(folder: str) -> Iterator[None]:
    """``PACT_TUI_CACHE`` in ``folder`` for the run, for this process and the children it
    starts: the app opening the imported context writes its conversation's reference index
    there, not into the user's cache (``$XDG_CACHE_HOME/pact-tui``)."""
    before = os.environ.get("PACT_TUI_CACHE")
    os.environ["PACT_TUI_CACHE"] = str(Path(folder) / "cache")
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PACT_TUI_CACHE", None)
        else:
            os.environ["PACT_TUI_CACHE"] = before


def bench_cold_start(workspace: Path, scratch: Path, messages: int) -> None:
    """Figure 3: the imported context's cold start ÷ a 100,000-item context's."""
    from bench.bench_app import STARTS, build, cold_start

    large = build(scratch, DEMO_ITEMS)
    imported, demo = ["pact", str(workspace), "agent"], ["pact", str(large)]
    compiled = {"PYTHONDONTWRITEBYTECODE": ""}  # as bench_app's: both from compiled bytecode
    cold_start(demo, env=compiled)  # the file cache warmed for both
    cold_start(imported, env=compiled)
    anchor = statistics.median(cold_start(demo) for _ in range(STARTS))
    figure = statistics.median(cold_start(imported) for _ in range(STARTS))
    report_ratio(
        f"cold start of the imported context ({messages:,} messages) to its first paint"
        f" ÷ a {DEMO_ITEMS:,}-item context's",
        figure,
        anchor,
        1.5,
        anchor_label=f"{DEMO_ITEMS:,}-item context",
    )


def bench_badges(workspace: Path, directory: Path, cache: Path) -> None:
    """Figure 4: judging every reference item's badge ÷ walking the view's items."""
    from engine.context import SnapshotContext
    from pact_tui.logsession import LogSession
    from pact_tui.reference_items import ItemSource, judge

    async def held() -> SnapshotContext:
        async with await Workspace.open(workspace, watch=False) as ws:
            await ws.load("agent")
            async for _left in ws.unpacking("agent"):  # its pieces read while the store is open
                pass
            return ws.context("agent").hold()

    view = asyncio.run(held())
    session = LogSession.open(directory, cache)
    try:
        session.verify()

        def statuses(source: ItemSource) -> list[str]:
            return [v.status.value for v in session.verdicts_on(source.log, source.line)]

        def judged() -> tuple[float, int]:
            start = time.perf_counter()
            session.update()
            badges = judge(view, statuses)
            return time.perf_counter() - start, len(badges)

        def walked() -> float:
            start = time.perf_counter()
            for _ in view.iter_items():
                pass
            return time.perf_counter() - start

        runs = [judged() for _ in range(5)]
        figure = statistics.median(t for t, _ in runs)
        anchor = statistics.median(walked() for _ in range(5))
        start = time.perf_counter()
        session.update()
        update = time.perf_counter() - start
    finally:
        session.close()
    print(
        f"  the badges of {runs[0][1]:,} reference items judged (the session's update, then"
        f" the walk): {fmt(figure)}  ÷  walking the view's items alone {fmt(anchor)}  ="
        f"  {figure / anchor:.1f}  (the update alone {fmt(update)}; no target)"
    )


def import_child(directory: str, cache: str, workspace: str) -> None:
    """``python -m bench.bench_import import DIR CACHE WS``: one import in this fresh process;
    prints its time, its commands and the process's peak resident memory as JSON."""
    took, commands = asyncio.run(import_once(Path(directory), Path(cache), Path(workspace)))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    print(json.dumps({"seconds": took, "commands": commands, "peak_rss": peak}))


if __name__ == "__main__":
    if sys.argv[1:2] == ["import"]:
        import_child(*sys.argv[2:5])
    else:
        main()
