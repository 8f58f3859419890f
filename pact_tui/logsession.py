"""One gptme conversation as the master-log screen reads it: the engine's ``Conversation`` and
``Verifier`` behind a lock, with what the screen's lists draw made a screenful at a time.

The screen's workers (opening, verifying, cataloguing for the search, following the directory)
run in threads and take ``lock`` to use the conversation, the slow jobs one batch at a time.
The lists' rows never wait for it: each log's lines are published (``_Published``: the index's
generation, its line ends and a file of its own) when the session opens and whenever an update
has applied what the logs gained, and a row is read from the published lines alone. A published
log is never changed, only replaced whole (one assignment): a reader sees the lines before an
update or after it, never half of one, while the references are verified under the lock.
A row is read from the file when it is first drawn (a pread of its line) and kept in a bounded
cache, so a master log of millions of lines costs only the lines on screen.
"""

from __future__ import annotations

import os
import threading
import time
from array import array
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from textual.cache import LRUCache

from engine.masterlog.catalogue import Hit, Progress
from engine.masterlog.conversation import MASTER, Conversation, Found
from engine.masterlog.errors import BadRange, MasterLogError
from engine.masterlog.index import Refresh
from engine.masterlog.lines import LineProblem, Message, parse_line
from engine.masterlog.references import STUB
from engine.masterlog.verify import Recovery, Status, Verdict, Verifier, recover

ROWS_KEPT = 4_096  # rows kept parsed, over all logs
CATALOGUE_BATCH = 256  # lines catalogued per hold of the lock (about 50 ms at worst)
VERIFY_BATCH = 200  # references verified per hold of the lock (about 20 ms)
HEAD_CHARS = 200  # how much of a message's first line a row keeps


@dataclass(frozen=True, slots=True)
class LineRow:
    """One line of a log as a list draws it."""

    line: int  # 0-based
    start: int
    end: int
    role: str | None  # None: a blank or malformed line
    time: str  # HH:MM:SS as written, or ""
    chars: int
    head: str  # the first line (cut), or the problem in words
    stub: bool = False  # a Phase 0 stub: a stale tool output pruned, with no byte range

    @property
    def key(self) -> str:
        return str(self.line)


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One log of the directory: the master, a view or a branch."""

    name: str
    lines: int
    counts: tuple[tuple[str, int], ...]  # references by status, ok first
    current: bool = False  # the view gptme's ``.current`` names

    @property
    def key(self) -> str:
        return self.name

    @property
    def problems(self) -> int:
        return sum(n for status, n in self.counts if status != Status.OK.value)


@dataclass(frozen=True, slots=True)
class _Published:
    """One log's lines as the last update left them, read without the session's lock.

    ``ends`` is the index's array of line ends, shared, not copied: while the index keeps its
    generation it only appends to it (past ``lines``, which this does not read), and a rewrite
    gives the index a new array. ``file`` is this log's own (the index closes its descriptor
    when it applies a refresh); it is closed when no reader holds it any more."""

    generation: int
    ends: array[int]
    lines: int
    file: BinaryIO | None  # None: the log could not be opened (gone): its rows say so

    def bounds(self, line: int) -> tuple[int, int]:
        if not 0 <= line < self.lines:
            raise BadRange(f"line {line + 1} is not in the index ({self.lines} lines)")
        return (self.ends[line - 1] if line else 0), self.ends[line]

    def message(self, line: int) -> Message | LineProblem:
        start, end = self.bounds(line)
        if self.file is None:
            raise FileNotFoundError("the log is gone")
        return parse_line(os.pread(self.file.fileno(), end - start, start))

    @property
    def size(self) -> int:
        return self.ends[self.lines - 1] if self.lines else 0


class LogSession:
    """The conversation the screen shows, safe to use from its workers and its lists."""

    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation
        self.verifier = Verifier(conversation)
        self.lock = threading.RLock()
        self.verified = False  # the first verification of every reference is done
        self._rows: LRUCache[tuple[str, int, int], LineRow] = LRUCache(ROWS_KEPT)
        self._rows_lock = threading.Lock()  # the cache's own: held for a look-up, no longer
        self._by_line: dict[tuple[str, int], list[Verdict]] = {}
        self._problems: list[Verdict] = []
        self._published: dict[str, _Published] = {}
        with self.lock:
            self._publish()

    def _publish(self) -> list[_Published]:
        """Publish every log's lines as its index has them now (under the lock, after the
        indexes changed): one new dictionary, swapped in whole. Returns the logs it replaced:
        a caller holds them until it lets go of the lock, for closing the last descriptor of a
        file gptme renamed over frees its pages (a 1 GiB master: a quarter of a second)."""
        published = dict(self._published)
        replaced: list[_Published] = []
        file: BinaryIO | None
        for name in self.conversation.logs:
            index = self.conversation.index(name)
            before = published.get(name)
            same = before is not None and before.file is not None and before.ends is index.ends
            if same and before is not None and before.lines == index.lines:
                continue
            if same and before is not None:  # appended to: the same file, more of its lines
                file = before.file
            else:  # opened, or rewritten: the file indexed now
                try:
                    file = open(index.path, "rb", buffering=0)  # noqa: SIM115
                except OSError:
                    file = None
            if before is not None and not same:
                replaced.append(before)
            published[name] = _Published(index.generation, index.ends, index.lines, file)
        self._published = published
        return replaced

    def _lines_of(self, name: str) -> _Published:
        """Log ``name``'s published lines (published now, under the lock, if it is new)."""
        published = self._published.get(name)
        if published is None:
            with self.lock:
                self.conversation.index(name)
                self._publish()
                published = self._published.get(name)
            if published is None:
                raise MasterLogError(f"no log named {name!r} in this conversation")
        return published

    @classmethod
    def open(cls, directory: str | Path, cache: str | Path) -> LogSession:
        return cls(Conversation.open(directory, cache))

    def close(self) -> None:
        with self.lock:
            self.conversation.close()
            published, self._published = self._published, {}
            for log in published.values():
                if log.file is not None:
                    log.file.close()

    @property
    def directory(self) -> Path:
        return self.conversation.directory

    # -- the logs ---------------------------------------------------------------------------
    def entries(self) -> tuple[LogEntry, ...]:
        with self.lock:
            conversation = self.conversation
            current = conversation.current_view
            entries = []
            for name in conversation.logs:
                counts = self.verifier.counts(name)
                ordered = sorted(counts.items(), key=lambda kv: (kv[0] != Status.OK.value, kv[0]))
                lines = conversation.index(name).lines
                entries.append(LogEntry(name, lines, tuple(ordered), name == current))
            return tuple(entries)

    def rewrite(self) -> str | None:
        """The last rewrite of the master in words ("undo: lines 50 to 52 removed")."""
        with self.lock:
            return self.conversation.rewrite

    def lines(self, name: str) -> int:
        """The lines of log ``name`` (as published: without waiting for the lock)."""
        return self._lines_of(name).lines

    def row(self, name: str, line: int) -> LineRow:
        """Line ``line`` of log ``name`` as a list draws it (read once, then kept), from the
        published lines: never waiting for the lock a verification holds."""
        published = self._lines_of(name)
        key = (name, published.generation, line)
        with self._rows_lock:
            row = self._rows.get(key)
        if row is not None:
            return row
        try:
            start, end = published.bounds(line)
            row = make_row(line, start, end, published.message(line))
        except (MasterLogError, OSError, ValueError) as error:
            # The log changed under the list (gptme rewrote or removed it) and the update
            # that says so is on its way: a row that says so, not kept.
            return LineRow(line, 0, 0, None, "", 0, f"unreadable: {error}")
        with self._rows_lock:
            self._rows[key] = row  # the least recently drawn row goes past ROWS_KEPT
        return row

    def message(self, name: str, line: int) -> Message | LineProblem:
        """Line ``line`` of log ``name`` whole, from the published lines."""
        return self._lines_of(name).message(line)

    def is_master(self, path: str) -> bool:
        """Whether ``path`` (as a verdict names the master log it read) is this directory's."""
        return Path(path) == self.conversation.directory / MASTER

    def master_size(self) -> int:
        """The bytes of complete lines indexed in the master (as published)."""
        return self._lines_of(MASTER).size

    def master_line_at(self, offset: int) -> int | None:
        """The 0-based line of the master holding byte ``offset`` (as published), or None
        past its indexed bytes."""
        master = self._lines_of(MASTER)
        if offset < 0 or offset >= master.size:
            return None
        return bisect_right(master.ends, offset, 0, master.lines)

    # -- references -------------------------------------------------------------------------
    def verify(self) -> list[Verdict]:
        """Verify every reference (once, on opening; updates verify what changed)."""
        changed: list[Verdict] = []
        with self.lock:
            parts = self.verifier.updating(batch=VERIFY_BATCH)
        while True:
            with self.lock:
                part = next(parts, None)
                if part is None:
                    self.verified = True
                    self._index_verdicts()
                    return changed
            changed.extend(part)
            _let_others_in()

    def verdicts_on(self, name: str, line: int) -> list[Verdict]:
        """The references in line ``line`` of ``name``, in the order they appear in it."""
        return self._by_line.get((name, line), [])

    def problems(self) -> list[Verdict]:
        """Every reference that is not ok, in the order of the logs and their lines."""
        return self._problems

    def recover(self, verdict: Verdict) -> Recovery:
        with self.lock:
            return recover(self.conversation, Found(verdict.where, verdict.reference))

    def _index_verdicts(self) -> None:
        by_line: dict[tuple[str, int], list[Verdict]] = {}
        ordered = self.verifier.ordered()
        for verdict in ordered:
            by_line.setdefault((verdict.where.name, verdict.where.line), []).append(verdict)
        self._by_line = by_line
        self._problems = [v for v in ordered if not v.ok]

    # -- following and searching ------------------------------------------------------------
    def update(self, touched: set[Path] | None = None) -> list[Refresh]:
        """Index what the logs gained and verify what may have changed; the search catalogue
        is brought up to date by :meth:`catalogue`, a batch at a time. Only one update runs at
        a time (the app's feed worker is exclusive): the files are read outside the lock."""
        refreshes = self.reindex()
        with self.lock:
            parts = self.verifier.updating(refreshes, touched, batch=VERIFY_BATCH)
        self._drain(parts)
        with self.lock:
            self._index_verdicts()
        return refreshes

    def reindex(self) -> list[Refresh]:
        """Index what the logs gained, the files read without the lock (a rewritten master is
        compared with the file indexed: 1 GiB read twice), the rows published as soon as the
        logs indexed before are; then the logs new to the index (gptme's undo saves the whole
        master as a new branch: 1 GiB to read and search for references) the same way."""
        with self.lock:
            self.conversation.prepare()
            new = self.conversation.unindexed()
        staged = self.conversation.stage(skip=new)
        with self.lock:
            refreshes = self.conversation.apply(staged)
            replaced = self._publish()  # the rows as they are now, before the new logs are read
        del replaced, staged  # the files indexed before closed here, outside the lock
        if new:
            staged = self.conversation.stage(only=new)
            with self.lock:
                refreshes += self.conversation.apply(staged)
                self._publish()
        return refreshes

    def _drain(self, parts: Iterator[list[Verdict]]) -> None:
        """Verify a batch per hold of the lock (after a rewrite every reference is verified
        again: about a second for 10,000)."""
        while True:
            with self.lock:
                if next(parts, None) is None:
                    return
            _let_others_in()

    def catalogue(self) -> Iterator[Progress]:
        """Catalogue every line not catalogued yet (for the search), one batch per hold of the
        lock, with progress after each; a log indexed again meanwhile is started over."""
        while True:
            with self.lock:
                conversation = self.conversation
                indexes = (conversation.index(name) for name in conversation.logs)
                todo = next((i for i in indexes if conversation.catalogue.pending(i)), None)
                if todo is None:
                    return
                generation = todo.generation
                batches = conversation.catalogue.build(todo, batch=CATALOGUE_BATCH)
            while True:
                with self.lock:
                    if todo.generation != generation:
                        break
                    progress = next(batches, None)
                if progress is None:
                    break
                yield progress

    def search(self, query: str, limit: int = 200) -> list[Hit]:
        with self.lock:
            return self.conversation.catalogue.search(query, limit=limit)

    def matches(self, query: str) -> int:
        """How many lines match (a search lists at most its limit)."""
        with self.lock:
            return self.conversation.catalogue.matches(query)

    def catalogued(self) -> tuple[int, int]:
        """(lines catalogued, lines) over every log."""
        with self.lock:
            catalogue, done, total = self.conversation.catalogue, 0, 0
            for name in self.conversation.logs:
                index = self.conversation.index(name)
                total += index.lines
                done += index.lines - catalogue.pending(index)
            return done, total


def _let_others_in() -> None:
    """Between two holds of the lock: a thread waiting for it gets it (a lock is not fair:
    released and taken again at once, it starved the lists for seconds)."""
    time.sleep(0)


def make_row(line: int, start: int, end: int, message: Message | LineProblem) -> LineRow:
    if isinstance(message, LineProblem):
        return LineRow(line, start, end, None, "", 0, f"{message.kind}: {message.reason}")
    stamp = message.timestamp or ""
    time = stamp[11:19] if len(stamp) >= 19 and stamp[10] in "T " else ""
    return LineRow(
        line,
        start,
        end,
        message.role,
        time,
        len(message.content),
        message.first_line[:HEAD_CHARS],
        stub=STUB.fullmatch(message.first_line) is not None,
    )
