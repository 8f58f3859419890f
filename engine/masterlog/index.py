"""A persistent, incremental byte index of a JSON-lines log: where every complete line ends.

The index is derived data, kept in a SQLite cache file (WAL) beside nothing of the user's: the
caller says where. Each log is one row in ``files`` and its line ends, as packed 64-bit
integers, in ``chunks`` of :data:`CHUNK` lines, so reopening reads a few blobs and then only the
bytes appended since.

A refresh tells an append from a rewrite: gptme rewrites the whole file on every write, and its
undo and edit remove or change messages. The file counts as appended when it is not shorter
than what was indexed and the first line and the last indexed line hold the same bytes as
before (two reads, whatever the size); otherwise, or when the caller knows better (gptme wrote
an undo or edit record to ``events.jsonl``), it is indexed again from the start and compared
with the lines' digests kept by :mod:`engine.masterlog.catalogue` to say which messages changed.

Several processes may share one cache file (the app and ``log tail`` on one conversation).
What a refresh compares against is this process's own view (the digests of the first and last
line it indexed, kept in memory from the consistent snapshot it loaded), never the record
another process wrote since, so one process's append is never another's rewrite. A save
writes every chunk again unless the record is still the one this process last read or wrote.

Only complete lines are indexed: a last line without its ``\\n`` (gptme still writing) is left
for a later refresh, and reported as ``partial`` bytes.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import struct
import time
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from .errors import BadRange, CacheError, ForeignCache, LogGone, LogUnreadable, MasterLogError

CHUNK = 65_536  # line ends per stored blob
READ_SIZE = 1 << 20  # 1 MiB reads: fast through the find loop, small enough for the CPU cache
COMPARE_SIZE = 1 << 20  # bytes of two files compared at a time (a rewrite's unchanged prefix)

SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    name TEXT PRIMARY KEY,     -- the log's path relative to the conversation directory
    size INTEGER NOT NULL,     -- bytes indexed: the end of the last complete line
    lines INTEGER NOT NULL,
    head_sha TEXT NOT NULL,    -- sha256 of the first line's bytes ("" when none)
    tail_start INTEGER NOT NULL,
    tail_sha TEXT NOT NULL,    -- sha256 of the last indexed line's bytes
    generation INTEGER NOT NULL DEFAULT 0  -- how many times it was found rewritten
);
CREATE TABLE IF NOT EXISTS chunks (
    name TEXT NOT NULL,
    chunk INTEGER NOT NULL,
    ends BLOB NOT NULL,        -- array('Q') of line ends, native byte order
    PRIMARY KEY (name, chunk)
);
"""


# The cache's SQLite application_id ("PTIX"): a file that carries another one is not a cache.
CACHE_APPLICATION_ID = 0x50544958
# Everything a cache holds: its tables and the catalogue's, their indexes, the search table's
# shadow tables. A file with no application_id and nothing else is a cache an earlier version
# wrote (or an empty database).
CACHE_OBJECTS = frozenset(
    {
        "files",
        "sqlite_autoindex_files_1",
        "chunks",
        "sqlite_autoindex_chunks_1",
        "messages",
        "messages_first",
        "rewrites",
        "marks",
        "packed",
        "search",
        *(f"search_{shadow}" for shadow in ("config", "content", "data", "docsize", "idx")),
    }
)
_SQLITE_MAGIC = b"SQLite format 3\x00"


# How long opening the cache waits for another process that is setting it up or writing it.
CACHE_WAIT = 30.0


def connect(path: Path) -> sqlite3.Connection:
    """The cache database (created if missing), in WAL mode so readers never wait for it. An
    SQLite database of another application raises :class:`ForeignCache`, written nothing.

    Processes share the cache (two ``log tail`` on one conversation): one that finds another
    setting it up waits, ``CACHE_WAIT`` seconds at most. SQLite's busy handler does not cover
    every case (turning on WAL, a schema another connection just changed answer "database is
    locked" at once), so the setup, which changes nothing the second time, is tried again."""
    _refuse_unless_cache(path)
    deadline = time.monotonic() + CACHE_WAIT
    while True:
        try:
            return _set_up(path)
        except sqlite3.OperationalError as error:
            if "locked" in str(error) and time.monotonic() < deadline:
                time.sleep(0.05)
                continue
            problem: Exception = error
        except (sqlite3.Error, OSError) as error:
            problem = error
        raise CacheError(
            f"cannot open the index cache: {problem} (it is derived data: delete the file to"
            " rebuild it)",
            path=str(path),
        ) from None


def _set_up(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=CACHE_WAIT, check_same_thread=False, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(SCHEMA)
        if db.execute("PRAGMA application_id").fetchone()[0] != CACHE_APPLICATION_ID:
            db.execute(f"PRAGMA application_id = {CACHE_APPLICATION_ID}")
    except BaseException:
        db.close()
        raise
    return db


def _refuse_unless_cache(path: Path) -> None:
    """Raise :class:`ForeignCache` when ``path`` is an SQLite database that is not a cache
    (another application's), looking without writing. A missing or empty file is a cache to
    make; a file that is no SQLite database is left to :func:`connect`, which writes nothing
    to it either."""
    try:
        with path.open("rb") as file:
            header = file.read(100)
    except OSError:
        return
    if len(header) < 100 or not header.startswith(_SQLITE_MAGIC):
        return
    (application_id,) = struct.unpack_from(">i", header, 68)
    if application_id == CACHE_APPLICATION_ID:
        return
    if application_id != 0:
        what = f"application_id {application_id:#x}, a cache has {CACHE_APPLICATION_ID:#x}"
    else:
        others = sorted(_schema_objects(path) - CACHE_OBJECTS)
        if not others:
            return
        shown = ", ".join(others[:5]) + (", …" if len(others) > 5 else "")
        what = f"it holds {shown}, which a cache does not"
    raise ForeignCache(
        f"not an index cache: an SQLite database of another application ({what}); it is "
        "left untouched: name another --cache file",
        path=str(path),
    )


def _schema_objects(path: Path) -> set[str]:
    """The names in the schema of the database at ``path``, read without writing to it or
    beside it (the file alone, unless its write-ahead log holds commits)."""
    wal = path.with_name(path.name + "-wal")
    holds_commits = wal.exists() and wal.stat().st_size > 0
    uri = path.absolute().as_uri() + ("?mode=ro" if holds_commits else "?mode=ro&immutable=1")
    try:
        connection = sqlite3.connect(uri, uri=True)
        try:
            return {name for (name,) in connection.execute("SELECT name FROM sqlite_master")}
        finally:
            connection.close()
    except sqlite3.Error as error:
        raise CacheError(
            f"cannot open the index cache: {error} (it is left untouched)", path=str(path)
        ) from None


@dataclass(frozen=True, slots=True)
class Refresh:
    """What one refresh found."""

    name: str
    new_lines: int  # complete lines indexed by this refresh
    lines: int  # complete lines now
    size: int  # bytes indexed now
    partial: int  # bytes of an unfinished last line, not indexed yet
    rewritten: bool = False  # the file was not an append of what was indexed: indexed again
    previous_lines: int = 0
    previous_size: int = 0
    bytes_read: int = 0
    reason: str = ""  # why it counts as rewritten


@dataclass(frozen=True, slots=True)
class Scanned:
    """What :meth:`LineIndex.scan` read, for :meth:`LineIndex.apply`."""

    generation: int  # of the index it was scanned for
    lines: int  # the index's lines when it was scanned
    size: int  # the file's size
    reason: str  # why it counts as rewritten ("" for an append)
    start: int  # where the scan began
    ends: array[int]  # ends of the lines found from ``start`` on
    head_sha: str
    tail_start: int
    tail_sha: str
    digests: list[str] | None = None  # each line's sha256, for a rewrite when asked
    marked: list[int] | None = None  # the new lines holding one of the needles asked for
    # A rewrite: the index's first lines found byte for byte as they were in the file indexed
    # (kept as they are; ``ends``, ``digests`` and ``marked`` are of the lines after them).
    kept: int = 0
    pinned: _Pinned | None = field(default=None, compare=False)  # the file scanned, kept open


class _Pinned:
    """A descriptor of the file a scan read, for the index that takes the scan to read that
    file (and to compare a rewrite with) until its next scan is applied; closed if nobody
    takes it."""

    def __init__(self, fd: int) -> None:
        self.fd: int | None = os.dup(fd)

    def take(self) -> int:
        fd, self.fd = self.fd, None
        assert fd is not None
        return fd

    def __del__(self) -> None:
        if self.fd is not None:
            os.close(self.fd)


@dataclass(slots=True)
class LineIndex:
    """The line ends of one log, loaded from the cache and kept current by :meth:`refresh`."""

    db: sqlite3.Connection
    path: Path
    name: str
    ends: array[int] = field(default_factory=lambda: array("Q"))
    partial: int = 0
    generation: int = 0
    # This process's view of the file (never re-read from the cache, which another process
    # may have written since): the digests of the first and the last indexed line.
    head_sha: str = ""
    tail_start: int = 0
    tail_sha: str = ""
    # The lines from ``marked[0]`` on that hold the needles the last scan looked for.
    marked: tuple[int, list[int]] | None = None
    _fd: int | None = None  # kept open between refreshes: reads see the file that was indexed
    _pinned: bool = False  # ``_fd`` is the file the last applied scan read (not opened later)

    @classmethod
    def load(cls, db: sqlite3.Connection, path: Path, name: str) -> LineIndex:
        """The index as the cache holds it, read in one transaction (another process may be
        writing it)."""
        index = cls(db, path, name)
        try:
            with db:
                db.execute("BEGIN")
                row = db.execute(
                    "SELECT lines, generation, head_sha, tail_start, tail_sha FROM files"
                    " WHERE name = ?",
                    (name,),
                ).fetchone()
                if row is not None:
                    for (blob,) in db.execute(
                        "SELECT ends FROM chunks WHERE name = ? ORDER BY chunk", (name,)
                    ):
                        index.ends.frombytes(blob)
        except sqlite3.Error as error:
            raise CacheError(f"cannot read the index of {name}: {error}") from None
        if row is not None:
            if len(index.ends) != row[0]:  # a cache written halfway: start again
                index.ends = array("Q")
                db.execute("DELETE FROM files WHERE name = ?", (name,))
                db.execute("DELETE FROM chunks WHERE name = ?", (name,))
            else:
                index.head_sha, index.tail_start, index.tail_sha = row[2], row[3], row[4]
            index.generation = row[1]
        return index

    # -- reading --------------------------------------------------------------------------
    @property
    def lines(self) -> int:
        return len(self.ends)

    @property
    def size(self) -> int:
        return self.ends[-1] if self.ends else 0

    def bounds(self, line: int) -> tuple[int, int]:
        """``[start, end)`` of a line (0-based)."""
        if not 0 <= line < len(self.ends):
            raise BadRange(f"line {line + 1} is not in the index ({len(self.ends)} lines)")
        return (self.ends[line - 1] if line else 0), self.ends[line]

    def line_at(self, offset: int) -> int | None:
        """The 0-based line holding byte ``offset``, or None past the indexed bytes."""
        if offset < 0 or offset >= self.size:
            return None
        return bisect_right(self.ends, offset)

    def read(self, start: int, end: int) -> bytes:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY)
        return os.pread(self._fd, end - start, start)

    def read_line(self, line: int) -> bytes:
        return self.read(*self.bounds(line))

    def each(self, first: int, last: int) -> Iterator[tuple[int, bytes]]:
        """Lines ``first`` to ``last - 1``, numbered, read in batches of about READ_SIZE."""
        line = first
        while line < last:
            start = self.bounds(line)[0]
            upto = max(line + 1, bisect_right(self.ends, start + READ_SIZE, line, last))
            data = self.read(start, self.ends[upto - 1])
            for n in range(line, upto):
                a, b = self.bounds(n)
                yield n, data[a - start : b - start]
            line = upto

    def lines_holding(self, needles: tuple[bytes, ...], first: int, last: int) -> list[int]:
        """The lines from ``first`` to ``last - 1`` whose bytes hold one of ``needles``, in
        order: those the last scan found (it looked outside any lock), the rest searched now."""
        marked = self.marked
        if marked is not None and marked[0] <= last:
            gap = _holding_in(self.read, self.ends, first, min(last, marked[0]), needles)
            return gap + [line for line in marked[1] if max(first, marked[0]) <= line < last]
        return _holding_in(self.read, self.ends, first, last, needles)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._pinned = False

    # -- refreshing -----------------------------------------------------------------------
    def refresh(self, *, rewritten: str = "") -> Refresh:
        """Index what was appended since the last refresh, or everything again when the file
        was rewritten (``rewritten``: a reason the caller already knows, e.g. gptme's undo)."""
        return self.apply(self.scan(rewritten=rewritten))

    def scan(
        self, *, rewritten: str = "", digests: bool = False, needles: tuple[bytes, ...] = ()
    ) -> Scanned:
        """Read what a refresh needs from the file and change nothing: the ends of the lines
        appended, or of every line when it was rewritten (with each line's digest too, when
        ``digests``, for :func:`engine.masterlog.conversation.compare`). The slow part of a
        refresh (a rewritten log is read whole) is here, so a caller may run it without the
        lock its readers take, and :meth:`apply` the result under it."""
        try:
            with open(self.path, "rb", buffering=0) as file:
                fd = file.fileno()
                size = os.fstat(fd).st_size
                reason = rewritten or self._changed(fd, size)
                same = self._unchanged_lines(fd, size) if reason else self.lines
                start = self.ends[same - 1] if same else 0
                new: array[int] = array("Q")
                file.seek(start)
                _scan(file, start, new)
                kept = self.ends if same == self.lines else self.ends[:same]  # before the new

                def end(line: int) -> int:  # of a line of the index as it will be
                    return kept[line] if line < len(kept) else new[line - len(kept)]

                count = len(kept) + len(new)
                head = tail = ""
                tail_start = 0
                if count:
                    head = _sha(os.pread(fd, end(0), 0))
                    tail_start = end(count - 2) if count > 1 else 0
                    tail = _sha(os.pread(fd, end(count - 1) - tail_start, tail_start))
                lines = _digests(fd, new, start) if reason and digests else None
                marked = _holding(fd, new, start, len(kept), needles) if needles else None
                pinned = _Pinned(fd)
        except FileNotFoundError:
            raise LogGone(f"{self.name} is gone", path=str(self.path)) from None
        except PermissionError:
            raise LogUnreadable(
                f"permission denied: this user may not read {self.name}", path=str(self.path)
            ) from None
        except OSError as error:
            raise MasterLogError(f"cannot read {self.name}: {error}", path=str(self.path)) from None
        return Scanned(
            self.generation,
            self.lines,
            size,
            reason,
            start,
            new,
            head,
            tail_start,
            tail,
            lines,
            marked,
            same if reason else 0,
            pinned,
        )

    def _unchanged_lines(self, fd: int, size: int) -> int:
        """How many of the indexed lines a rewritten file still holds byte for byte where they
        were: the file indexed (kept open since its scan) compared with the file now, a block
        at a time, up to the first byte that differs (an undo rewrites a tail: the prefix is
        read, not indexed, digested and compared line by line again). 0 when the file indexed
        is not at hand to compare with, or the file was rewritten in place."""
        if not (self._pinned and self._fd is not None and self.ends):
            return 0
        was, now = os.fstat(self._fd), os.fstat(fd)
        if (was.st_dev, was.st_ino) == (now.st_dev, now.st_ino) or was.st_size < self.size:
            return 0  # the same file changed in place: what it held is gone
        same = _common_prefix(self._fd, fd, min(self.size, size))
        return bisect_right(self.ends, same)

    def apply(self, scanned: Scanned) -> Refresh:
        """Take what :meth:`scan` read as this index (and save it to the cache)."""
        if (scanned.generation, scanned.lines) != (self.generation, self.lines):
            return self.refresh(rewritten=scanned.reason)  # refreshed since: read it again
        self.close()  # reads from here on are of the file as it was scanned
        if scanned.pinned is not None and scanned.pinned.fd is not None:
            self._fd, self._pinned = scanned.pinned.take(), True
        before_lines, before_size = self.lines, self.size
        reason = scanned.reason
        if reason:
            self.ends = self.ends[: scanned.kept] + scanned.ends
            self.generation += 1
        else:
            self.ends.extend(scanned.ends)
        appended = len(scanned.ends)
        # which lines hold the needles: known from the first line the scan read (else asked)
        self.marked = None if scanned.marked is None else (scanned.lines, scanned.marked)
        if reason and scanned.marked is not None:
            self.marked = (scanned.kept, scanned.marked)
        self.partial = scanned.size - self.size
        if appended or reason:
            self._save(first_line=0 if reason else before_lines, scanned=scanned)
        return Refresh(
            name=self.name,
            new_lines=appended,
            lines=self.lines,
            size=self.size,
            partial=self.partial,
            rewritten=bool(reason),
            previous_lines=before_lines,
            previous_size=before_size,
            bytes_read=scanned.size - scanned.start,
            reason=reason,
        )

    def _changed(self, fd: int, size: int) -> str:
        """Why the file is not an append of what was indexed ("" when it is)."""
        if not self.ends:
            return ""
        if size < self.size:
            return f"it is shorter than what was indexed ({size:,} < {self.size:,} bytes)"
        if _sha(os.pread(fd, self.ends[0], 0)) != self.head_sha:
            return "its first line changed"
        if _sha(os.pread(fd, self.size - self.tail_start, self.tail_start)) != self.tail_sha:
            return "its last indexed line changed"
        return ""

    def _save(self, first_line: int, scanned: Scanned) -> None:
        """Write the chunks from the one holding ``first_line`` on, and the file's record; all
        of them when the record is not the one this process last read or wrote (another
        process wrote its own view since: chunks of two views must not be mixed)."""
        ends, name = self.ends, self.name
        before = (self.generation, self.tail_sha) if first_line else None
        head, tail_start, tail = scanned.head_sha, scanned.tail_start, scanned.tail_sha
        try:
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                if before is not None:
                    row = self.db.execute(
                        "SELECT generation, tail_sha, lines FROM files WHERE name = ?", (name,)
                    ).fetchone()
                    if row is None or (row[0], row[1], row[2]) != (*before, first_line):
                        first_line = 0
                if first_line == 0:
                    self.db.execute("DELETE FROM chunks WHERE name = ?", (name,))
                for chunk in range(first_line // CHUNK, (len(ends) + CHUNK - 1) // CHUNK):
                    blob = ends[chunk * CHUNK : (chunk + 1) * CHUNK].tobytes()
                    self.db.execute(
                        "INSERT OR REPLACE INTO chunks (name, chunk, ends) VALUES (?, ?, ?)",
                        (name, chunk, blob),
                    )
                self.db.execute(
                    "INSERT OR REPLACE INTO files"
                    " (name, size, lines, head_sha, tail_start, tail_sha, generation)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (name, self.size, len(ends), head, tail_start, tail, self.generation),
                )
        except sqlite3.Error as error:
            raise CacheError(f"cannot write the index of {name}: {error}") from None
        self.head_sha, self.tail_start, self.tail_sha = head, tail_start, tail


def _scan(file: BinaryIO, base: int, ends: array[int]) -> int:
    """Append the ends of the complete lines from ``base`` on; how many there were."""
    read = file.read
    append = ends.append
    before = len(ends)
    while chunk := read(READ_SIZE):
        find = chunk.find
        i = find(b"\n")
        while i >= 0:
            append(base + i + 1)
            i = find(b"\n", i + 1)
        base += len(chunk)
    return len(ends) - before


def _holding(
    fd: int, new: array[int], start: int, before: int, needles: tuple[bytes, ...]
) -> list[int]:
    """The lines among ``new`` (the first starting at byte ``start``, numbered from
    ``before``) whose bytes hold a needle."""

    def read(a: int, b: int) -> bytes:
        return os.pread(fd, b - a, a)

    return [before + line for line in _holding_in(read, new, 0, len(new), needles, start)]


def _holding_in(
    read: Callable[[int, int], bytes],
    ends: array[int],
    first: int,
    last: int,
    needles: tuple[bytes, ...],
    base: int = 0,
) -> list[int]:
    """The lines ``first`` to ``last - 1`` (of line ends ``ends``, the first line starting at
    byte ``base``) whose bytes hold a needle, searched a block of about READ_SIZE at a time (a
    test of each line costs more)."""
    found: list[int] = []
    line = first
    while line < last:
        start = ends[line - 1] if line else base
        upto = max(line + 1, bisect_right(ends, start + READ_SIZE, line, last))
        data = read(start, ends[upto - 1])
        hits: set[int] = set()
        for needle in needles:
            at = data.find(needle)
            while at >= 0:
                hit = bisect_right(ends, start + at, line, upto)
                hits.add(hit)
                at = data.find(needle, ends[hit] - start)  # on from the next line
        found.extend(sorted(hits))
        line = upto
    return found


def _common_prefix(a: int, b: int, size: int) -> int:
    """How many of the first ``size`` bytes files ``a`` and ``b`` hold alike, read a block of
    :data:`COMPARE_SIZE` at a time into two buffers kept for the whole comparison (a new
    buffer per read costs more than the read: 8 MiB reads were ten times slower)."""
    one, two = bytearray(COMPARE_SIZE), bytearray(COMPARE_SIZE)
    at = 0
    while at < size:
        step = min(COMPARE_SIZE, size - at)
        if step < COMPARE_SIZE:
            one, two = bytearray(step), bytearray(step)
        got = min(os.preadv(a, [one], at), os.preadv(b, [two], at))
        if got < step:  # cut short while we read: compare what both gave
            return at + _alike(memoryview(one)[:got], memoryview(two)[:got])
        if one != two:
            return at + _alike(memoryview(one), memoryview(two))
        at += step
    return size


def _alike(first: memoryview, second: memoryview) -> int:
    """How many bytes two buffers of one length hold alike at their start: the halves that
    differ, halved again."""
    one, two = bytes(first), bytes(second)
    low, high = 0, len(one)
    if one == two:
        return high
    while high - low > 1:
        middle = (low + high) // 2
        if one[low:middle] != two[low:middle]:
            high = middle
        else:
            low = middle
    return low


def _digests(fd: int, ends: array[int], start: int = 0) -> list[str]:
    """The sha256 of each line (the first starting at byte ``start``), read in batches of
    about READ_SIZE."""
    found: list[str] = []
    line, count = 0, len(ends)
    while line < count:
        upto = max(line + 1, bisect_right(ends, start + READ_SIZE, line, count))
        data = memoryview(os.pread(fd, ends[upto - 1] - start, start))
        a = 0
        for n in range(line, upto):
            b = ends[n] - start
            found.append(hashlib.sha256(data[a:b]).hexdigest())
            a = b
        start, line = ends[upto - 1], upto
    return found


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
