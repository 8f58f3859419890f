"""A gptme conversation directory, read exactly as gptme 0.35.1 writes it.

``conversation.jsonl`` is the master log; ``views/compacted-NNN.jsonl`` are compacted working
contexts (``views/.current`` names the active one); ``branches/*.jsonl`` are other branches,
including gptme's backups ``main-undo-N`` and ``main-edit-N``; ``events.jsonl`` records every
append, undo and edit; ``tool-outputs/`` holds full tool outputs saved at compaction. Every log
is indexed (:mod:`.index`) and catalogued (:mod:`.catalogue`) in one cache file the caller
names; nothing is written into the conversation directory.

Paths in references are absolute paths of the machine that wrote them. A path that does not
exist here is resolved relative to the conversation directory (``conversation.jsonl``,
``tool-outputs/…``), and the verdict says so.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import sqlite3
from array import array
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from .catalogue import Catalogue, Progress
from .errors import CacheError, LogGone, LogUnreadable, MasterLogError, NotAConversation
from .index import LineIndex, Refresh, Scanned, connect
from .lines import LineProblem, Message, parse_line
from .references import Reference, Stub, find_references

MASTER = "conversation.jsonl"
EVENTS = "events.jsonl"
REWRITES = ("undo", "message_edit")  # gptme's events that rewrite conversation.jsonl
# What a line holding a reference or a stub has in its bytes (neither needs escaping in JSON).
MARKERS = (b"Master context: ", b"[Stale tool output pruned - ")
DIFF_LINES = 20_000  # more lines between the shared start and end: one change, not a diff


@dataclass(frozen=True, slots=True, order=True)
class Location:
    """A line of a log: its name in the directory and its 0-based number."""

    name: str
    line: int

    def __str__(self) -> str:
        return f"{self.name}:{self.line + 1}"


@dataclass(frozen=True, slots=True)
class Found:
    where: Location
    reference: Reference


@dataclass(frozen=True, slots=True)
class Rewrite:
    """An undo or edit gptme recorded in ``events.jsonl``."""

    seq: int | None
    ts: str | None
    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.detail} (events.jsonl seq {self.seq}, {self.ts})"


@dataclass(frozen=True, slots=True)
class Change:
    """How a stretch of the master log differs after a rewrite (0-based, half-open lines)."""

    kind: str  # removed | added | changed | moved
    old: tuple[int, int]
    new: tuple[int, int]
    shift: int = 0  # bytes a moved stretch moved by

    def describe(self) -> str:
        def lines(span: tuple[int, int]) -> str:
            a, b = span
            return f"line {a + 1}" if b - a == 1 else f"lines {a + 1} to {b}"

        if self.kind == "removed":
            return f"{lines(self.old)} removed"
        if self.kind == "added":
            return f"{lines(self.new)} added"
        if self.kind == "changed":
            return f"{lines(self.old)} changed (now {lines(self.new)})"
        return f"{lines(self.new)} moved by {self.shift:+,} bytes"


@dataclass(frozen=True, slots=True)
class Staged:
    """What :meth:`Conversation.stage` read, for :meth:`Conversation.apply`."""

    scans: dict[str, Scanned | None]  # per log (None: removed while it was read)
    events: Scanned | None  # events.jsonl's
    rewrites: list[Rewrite]  # the undo and edit records it gained
    comparison: Comparison | None = None  # a rewritten master's, made from the scan


@dataclass(frozen=True, slots=True)
class Comparison:
    """What a rewrite of the master changed, against this process's last view of it."""

    key: tuple[str, int, str, int, str]  # name, lines and last line's digest, before and after
    changes: list[Change]
    compared: bool  # the catalogue held that version's lines: they could be compared
    first: int  # the catalogue is kept before this line (0: started over)
    unchanged: int | None  # bytes before this offset are as they were (None: unknown)
    store: bool  # made here, not read from the cache: to be kept there for other processes


@dataclass(slots=True)
class _Parsed:
    """The references found in one log's lines, parsed once per line."""

    generation: int = -1
    lines: int = 0
    found: list[Found] = field(default_factory=list)
    stubs: list[tuple[Location, Stub]] = field(default_factory=list)


class Conversation:
    """One conversation directory and its index cache."""

    def __init__(self, directory: Path, cache: Path) -> None:
        self.directory = directory
        self.cache = cache
        self.db = connect(cache)
        self.catalogue = Catalogue(self.db)
        self._indexes: dict[str, LineIndex] = {}
        self._parsed: dict[str, _Parsed] = {}
        self.rewrites: list[Rewrite] = []
        self._events_read: int | None = None
        self.opened: list[Refresh] = []  # what the refresh made when opening found
        self.changes: list[Change] = []  # what the last rewrite of the master changed
        self.rewrite: str | None = None  # that rewrite in words, "undo: lines 50 to 52 removed"
        self.compared = False  # whether it could be compared (its lines were catalogued)
        # After a rewrite of the master compared here: the bytes before this offset are as they
        # were (the lines before the first change), so a reference within them is as it was.
        self.unchanged: int | None = None

    @classmethod
    def open(cls, directory: str | Path, cache: str | Path) -> Conversation:
        path = Path(directory)
        if not path.is_dir():
            what = "no such directory" if not path.exists() else "not a directory"
            raise NotAConversation(f"{what}: a gptme conversation is a directory", path=str(path))
        if not (path / MASTER).is_file():
            raise NotAConversation(
                f"no {MASTER} in the directory: not a gptme conversation", path=str(path)
            )
        conversation = cls(path.resolve(), Path(cache))
        conversation.opened = conversation.refresh()
        return conversation

    def close(self) -> None:
        for index in self._indexes.values():
            index.close()
        self.db.close()

    def __enter__(self) -> Conversation:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- the files ------------------------------------------------------------------------
    @property
    def views(self) -> list[str]:
        return _jsonl(self.directory, "views")

    @property
    def branches(self) -> list[str]:
        return _jsonl(self.directory, "branches")

    @property
    def logs(self) -> list[str]:
        return [MASTER, *self.views, *self.branches]

    @property
    def current_view(self) -> str | None:
        try:
            name = (self.directory / "views" / ".current").read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None
        return f"views/{name}.jsonl" if name else None

    @property
    def master(self) -> LineIndex:
        return self.index(MASTER)

    def index(self, name: str) -> LineIndex:
        index = self._indexes.get(name)
        if index is None:
            index = LineIndex.load(self.db, self.directory / name, name)
            self._indexes[name] = index
        return index

    # -- refreshing -----------------------------------------------------------------------
    def refresh(self) -> list[Refresh]:
        """Index what every log gained; a master rewritten (or an undo or edit recorded in
        ``events.jsonl`` since the last refresh) is indexed again and compared."""
        self.prepare()
        return self.apply(self.stage())

    def prepare(self) -> None:
        """Load the index of every log (from the cache) that :meth:`stage` will read."""
        for name in self.logs:
            self.index(name)
        if (self.directory / EVENTS).is_file():
            self.index(EVENTS)

    def unindexed(self) -> list[str]:
        """The logs :meth:`prepare` loaded that hold no indexed line yet: a view or a branch
        that appeared since (gptme's undo saves the whole master as a new branch)."""
        return [
            name
            for name, index in self._indexes.items()
            if not index.lines and name not in (MASTER, EVENTS) and not name.startswith("external:")
        ]

    def stage(self, only: Collection[str] | None = None, skip: Collection[str] = ()) -> Staged:
        """Read what a refresh needs from the files, using neither the cache nor changing
        anything (the logs :meth:`prepare` loaded): a caller runs this, the slow part when the
        master was rewritten (it is read whole, each line's digest taken), without the lock
        the readers of this conversation take, then :meth:`apply` under it.

        ``only`` the logs named (and not ``events.jsonl``), else every log but those in
        ``skip``: a caller may apply the logs it had indexed before staging those new to it
        (:meth:`unindexed`), so an undo's master is shown before its 1 GiB branch is read."""
        events = self._indexes.get(EVENTS) if only is None else None
        events_scan = None
        new: list[Rewrite] = []
        if events is not None:
            try:
                events_scan = events.scan()
            except LogGone:
                events_scan = None
            else:
                new = _scanned_rewrites(events.path, events_scan)
        recorded = new if self.master.lines > 0 else []
        scans: dict[str, Scanned | None] = {}
        for name, index in list(self._indexes.items()):
            if name == EVENTS or name.startswith("external:"):
                continue
            if (only is not None and name not in only) or name in skip:
                continue
            reason = ""
            if name == MASTER and recorded:
                reason = "gptme recorded " + "; ".join(str(r) for r in recorded)
            try:
                scans[name] = index.scan(
                    rewritten=reason,
                    digests=name == MASTER,
                    needles=() if name == MASTER else MARKERS,  # its references, searched here
                )
            except LogGone:
                if name == MASTER:
                    raise
                scans[name] = None  # a view or branch removed while we looked
        master = scans.get(MASTER)
        comparison = None
        if master is not None and master.reason and master.digests is not None:
            comparison = self._comparison(self.master, master)
        return Staged(scans, events_scan, new, comparison)

    def _comparison(self, index: LineIndex, scanned: Scanned) -> Comparison:
        """What the rewrite :meth:`stage` found changed, against this process's last view of
        the master: read from the cache when another process sharing it compared the same
        rewrite first, else compared with the catalogue's digests when they are of that
        version (trimmed at both ends first). Read with a connection of its own, so it runs
        beside whatever uses :attr:`db`."""
        lines, ends = index.lines, index.ends
        new_lines = scanned.kept + len(scanned.ends)
        key = (index.name, lines, index.tail_sha, new_lines, scanned.tail_sha)
        try:
            reader = sqlite3.connect(self.cache, isolation_level=None, check_same_thread=False)
            try:
                reader.execute("BEGIN")
                stored = reader.execute(
                    "SELECT changes FROM rewrites WHERE name = ? AND old_lines = ?"
                    " AND old_tail = ? AND new_lines = ? AND new_tail = ?",
                    key,
                ).fetchone()
                base = scanned.kept  # the lines before it are as they were, byte for byte
                old = (
                    []
                    if stored
                    else Catalogue.digests_in(reader, index.name, upto=lines, first=base)
                )
                reader.execute("COMMIT")
            finally:
                reader.close()
        except sqlite3.Error as error:
            raise CacheError(f"cannot read the catalogue of {index.name}: {error}") from None
        if stored:
            changes = [
                Change(k, (a1, a2), (b1, b2), d) for k, a1, a2, b1, b2, d in json.loads(stored[0])
            ]
            first = changes[0].old[0] if changes else 0
            return Comparison(key, changes, True, first, None, False)
        if not _made_from(old, ends, base):  # the catalogue is of another version
            return Comparison(key, [], False, 0, None, False)
        assert scanned.digests is not None
        new_ends = ends[:base] + scanned.ends if base else scanned.ends
        changes = compare(old, new_ends, scanned.digests, base + len(old) == lines, base)
        first = changes[0].old[0] if changes else base + min(len(old), len(new_ends) - base)
        unchanged = (new_ends[first - 1] if first else 0) if new_ends else 0
        return Comparison(key, changes, bool(old), first, unchanged, bool(old))

    def apply(self, staged: Staged) -> list[Refresh]:
        """Take what :meth:`stage` read: the indexes, the records of gptme's rewrites, and what
        a rewrite of the master changed."""
        events = self._indexes.get(EVENTS)
        if events is not None and staged.events is not None:
            seen = events.lines
            if events.apply(staged.events).rewritten:
                seen = 0
            if self._events_read is None:  # this process's first look: the history, once
                self.rewrites = _rewrites(events, 0, seen)
            self._events_read = events.lines
            self.rewrites.extend(staged.rewrites)
        refreshes: list[Refresh] = []
        logs = set(self.logs)
        for name, scanned in staged.scans.items():
            if scanned is None or name not in logs:
                continue  # gone from the list next time
            index = self.index(name)
            previous = (index.lines, index.tail_sha, index.ends)  # this process's last view
            try:
                refresh = index.apply(scanned)
            except LogGone:
                if name == MASTER:
                    raise
                continue
            if refresh.rewritten:
                self._parsed.pop(name, None)
                if name == MASTER:
                    self._compare(index, previous, staged.comparison)
                    self.rewrite = describe_rewrite(
                        staged.rewrites, self.changes, self.compared, refresh
                    )
                else:
                    self.catalogue.reset(name)
            refreshes.append(refresh)
        order = {name: n for n, name in enumerate(self.logs)}
        refreshes.sort(key=lambda r: order.get(r.name, len(order)))
        return refreshes

    def _compare(
        self,
        index: LineIndex,
        previous: tuple[int, str, array[int]],
        comparison: Comparison | None = None,
    ) -> None:
        """Take what a rewrite of the master changed (compared now when :meth:`stage` did not,
        or its comparison is not of this index as it was before and is now), keep it in the
        cache for other processes, and cut the catalogue at the first change."""
        lines, tail, ends = previous
        key = (index.name, lines, tail, index.lines, index.tail_sha)
        if comparison is None or comparison.key != key:
            digests = [_digest(raw) for _, raw in index.each(0, index.lines)]
            scanned = Scanned(
                index.generation,
                0,
                index.size,
                "again",
                0,
                index.ends,
                "",
                0,
                index.tail_sha,
                digests,
            )
            before = LineIndex(index.db, index.path, index.name, ends)
            before.tail_sha, before.head_sha = tail, ""
            comparison = self._comparison(before, scanned)
        self.compared, self.changes = comparison.compared, comparison.changes
        self.unchanged = comparison.unchanged
        if comparison.store:
            data = json.dumps([[c.kind, *c.old, *c.new, c.shift] for c in comparison.changes])
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                self.db.execute(
                    "INSERT OR REPLACE INTO rewrites VALUES (?, ?, ?, ?, ?, ?)", (*key, data)
                )
        self.catalogue.reset(index.name, comparison.first)

    def catalogue_all(self) -> Iterator[Progress]:
        """Catalogue every log's lines not catalogued yet (message rows and the search)."""
        for name in self.logs:
            index = self.index(name)
            if self.catalogue.pending(index):
                yield from self.catalogue.build(index)

    # -- reading --------------------------------------------------------------------------
    def message(self, name: str, line: int) -> Message | LineProblem:
        return parse_line(self.index(name).read_line(line))

    def references(self) -> list[Found]:
        """Every reference in every view and branch (parsed once per line)."""
        found: list[Found] = []
        for name in self.views + self.branches:
            found.extend(self._parse(name).found)
        return found

    def references_of(self, name: str) -> tuple[int, list[Found]]:
        """The references in view or branch ``name``, in order, with the generation of its
        index: while that stays the same, the list only grows at its end."""
        return self.index(name).generation, self._parse(name).found

    def stubs(self) -> list[tuple[Location, Stub]]:
        stubs: list[tuple[Location, Stub]] = []
        for name in self.views + self.branches:
            stubs.extend(self._parse(name).stubs)
        return stubs

    def _parse(self, name: str) -> _Parsed:
        index = self.index(name)
        parsed = self._parsed.setdefault(name, _Parsed())
        if parsed.generation != index.generation:
            parsed.generation, parsed.lines = index.generation, 0
            parsed.found.clear()
            parsed.stubs.clear()
        # Only lines that hold a reference's or a stub's words are read as JSON (a branch is a
        # copy of the master: 1 GiB of lines with none).
        for line in index.lines_holding(MARKERS, parsed.lines, index.lines):
            message = parse_line(index.read_line(line))
            if isinstance(message, LineProblem):
                continue
            references, stubs = find_references(message.content)
            where = Location(name, line)
            parsed.found.extend(Found(where, reference) for reference in references)
            parsed.stubs.extend((where, stub) for stub in stubs)
        parsed.lines = index.lines
        return parsed

    # -- paths written by another machine -------------------------------------------------
    def resolve(self, written: str, anchor: str) -> tuple[Path, bool] | None:
        """A path as a reference wrote it, where it is here: itself when it exists, else
        relative to the directory from ``anchor`` on (``conversation.jsonl``,
        ``tool-outputs``); the flag says it was resolved relative. None: neither exists."""
        path = Path(written)
        if path.is_absolute() and _is_file(path):
            return path, False
        local = self.local_path(written, anchor)
        if local is not None and _is_file(local):
            return local, True
        return None

    def local_path(self, written: str, anchor: str) -> Path | None:
        """Where :meth:`resolve` looks for a path in this directory: from ``anchor`` on."""
        parts = PurePath(written).parts
        if anchor not in parts:
            return None
        return self.directory.joinpath(*parts[len(parts) - parts[::-1].index(anchor) - 1 :])

    def index_for(self, path: Path) -> LineIndex:
        """The index of the master log a reference names (this directory's, or another's)."""
        if _same(path, self.directory / MASTER):
            return self.master
        name = f"external:{path}"
        index = self._indexes.get(name)
        if index is None:
            index = LineIndex.load(self.db, path, name)
            self._indexes[name] = index
        index.refresh()
        return index


def describe_rewrite(
    recorded: list[Rewrite], changes: list[Change], compared: bool, refresh: Refresh
) -> str:
    """A rewrite of the master in words, as the screen's banner and ``log tail`` say it:
    ``undo: lines 50 to 52 removed`` (gptme's record, then what changed)."""
    kinds = {r.kind for r in recorded}
    what = "undo" if kinds == {"undo"} else "edit" if kinds == {"message_edit"} else ""
    what = what or ("undo and edit" if kinds else "rewritten without a record in events.jsonl")
    if not compared:
        said = (
            f"{refresh.previous_lines:,} lines before, {refresh.lines:,} now (not compared: its"
            " lines were not catalogued)"
        )
    elif changes:
        said = "; ".join(change.describe() for change in changes)
    else:
        said = "no line changed"
    return f"{what}: {said}"


def parse_event(raw: bytes) -> Rewrite | None:
    """An undo or edit record of ``events.jsonl``; None for any other line."""
    try:
        record = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or record.get("type") not in REWRITES:
        return None
    payload = record.get("payload") if isinstance(record.get("payload"), dict) else {}
    assert isinstance(payload, dict)
    seq, ts = record.get("seq"), record.get("ts")
    if record["type"] == "undo":
        detail = f"an undo of {payload.get('n', '?')} message(s)"
    else:
        messages = payload.get("messages")
        count = len(messages) if isinstance(messages, list) else "?"
        detail = f"an edit (the log rewritten as {count} messages)"
    return Rewrite(
        seq if isinstance(seq, int) else None,
        ts if isinstance(ts, str) else None,
        str(record["type"]),
        detail,
    )


def compare(
    old: list[tuple[str, int]],
    new: array[int],
    digests: list[str],
    whole: bool = True,
    base: int = 0,
) -> list[Change]:
    """Which lines changed between the lines before, ``(digest, start)`` each, and the lines
    now (their ends and digests): difflib's opcodes, and by how many bytes each unchanged
    stretch moved.

    The lines both share at the start and (when ``old`` is the whole log, ``whole``) at the
    end are found first, and only what lies between is given to difflib: an undo removes a
    tail, an edit changes a line, so that is a few lines, where difflib over every line of a
    large log (and worse, of a log of repeated lines) took minutes. More than
    :data:`DIFF_LINES` lines between, on either side, are one change rather than a diff.
    ``base``: ``old`` and ``digests`` are of the lines from ``base`` on (those before it are
    known to be unchanged); ``new`` holds every line's end."""
    head, limit = 0, min(len(old), len(digests))
    while head < limit and old[head][0] == digests[head]:
        head += 1
    tail = 0
    if whole:
        while tail < limit - head and old[len(old) - 1 - tail][0] == digests[-1 - tail]:
            tail += 1
    a2, b2 = len(old) - tail, len(digests) - tail
    opcodes: list[tuple[str, int, int, int, int]]
    if max(a2 - head, b2 - head) > DIFF_LINES:
        opcodes = [("replace", head, a2, head, b2)]
    else:
        matcher = difflib.SequenceMatcher(
            None, [d for d, _ in old[head:a2]], digests[head:b2], False
        )
        opcodes = [
            (tag, a + head, b + head, c + head, d + head)
            for tag, a, b, c, d in matcher.get_opcodes()
        ]
    if tail:
        opcodes.append(("equal", a2, len(old), b2, len(digests)))
    if base:
        opcodes = [(tag, a + base, b + base, c + base, d + base) for tag, a, b, c, d in opcodes]
    return _changes(old, new, opcodes, base)


def _changes(
    old: list[tuple[str, int]],
    new: array[int],
    opcodes: list[tuple[str, int, int, int, int]],
    base: int = 0,
) -> list[Change]:
    changes: list[Change] = []
    for tag, a1, a2, b1, b2 in opcodes:
        if a1 == a2 and b1 == b2:
            continue
        if tag == "equal":
            shift = (new[b1 - 1] if b1 else 0) - old[a1 - base][1]
            if shift:
                changes.append(Change("moved", (a1, a2), (b1, b2), shift))
            continue
        if tag == "replace" and a1 == a2:
            tag = "insert"
        elif tag == "replace" and b1 == b2:
            tag = "delete"
        kind = {"delete": "removed", "insert": "added", "replace": "changed"}[tag]
        changes.append(Change(kind, (a1, a2), (b1, b2)))
    return changes


def _scanned_rewrites(path: Path, scanned: Scanned) -> list[Rewrite]:
    """The undo and edit records among the lines a scan of ``events.jsonl`` found."""
    if not scanned.ends:
        return []
    try:
        with open(path, "rb") as file:
            file.seek(scanned.start)
            data = file.read(scanned.ends[-1] - scanned.start)
    except OSError:
        return []
    found = []
    for raw in data.splitlines():
        if b'"undo"' in raw or b'"message_edit"' in raw:
            record = parse_event(raw)
            if record is not None:
                found.append(record)
    return found


def _digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def _made_from(old: list[tuple[str, int]], ends: array[int], base: int = 0) -> bool:
    """Whether catalogued lines (digest, start), of the lines from ``base`` on, were made from
    the log whose line ends were ``ends``: each starts where that log's line did."""
    if base + len(old) > len(ends):
        return False
    return all(
        start == (ends[line - 1] if line else 0) for line, (_, start) in enumerate(old, base)
    )


def _rewrites(index: LineIndex, first: int, last: int) -> list[Rewrite]:
    found = []
    for _, raw in index.each(first, last):
        if b'"undo"' in raw or b'"message_edit"' in raw:  # the rest need no JSON parse
            record = parse_event(raw)
            if record is not None:
                found.append(record)
    return found


def _jsonl(directory: Path, folder: str) -> list[str]:
    """The ``.jsonl`` files in ``folder`` (none when there is no such folder). A folder this
    user may not read is an error, not an empty one: its logs' references would go unjudged."""
    try:
        with os.scandir(directory / folder) as entries:
            names = sorted(e.name for e in entries if e.name.endswith(".jsonl") and e.is_file())
    except (FileNotFoundError, NotADirectoryError):
        return []
    except PermissionError:
        raise LogUnreadable(
            f"permission denied: this user may not read the folder {folder}/",
            path=str(directory / folder),
        ) from None
    except OSError as error:
        raise MasterLogError(
            f"cannot read the folder {folder}/: {error.strerror or error}",
            path=str(directory / folder),
        ) from None
    return [f"{folder}/{name}" for name in names]


def _is_file(path: Path) -> bool:
    """Whether a regular file is at ``path``; a folder on the way this user may not search is an
    error (``is_file`` raises it as a bare PermissionError), not a missing file."""
    try:
        return path.is_file()
    except PermissionError:
        raise LogUnreadable(
            f"permission denied: a folder on the way to {path.name} may not be searched by"
            " this user",
            path=str(path),
        ) from None


def read_saved(path: Path) -> bytes:
    """The bytes of a saved tool output; one this user may not read is an error that says so."""
    try:
        return path.read_bytes()
    except PermissionError:
        raise LogUnreadable(
            f"permission denied: this user may not read the saved tool output {path.name}",
            path=str(path),
        ) from None
    except OSError as error:
        raise MasterLogError(
            f"cannot read the saved tool output {path.name}: {error.strerror or error}",
            path=str(path),
        ) from None


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
