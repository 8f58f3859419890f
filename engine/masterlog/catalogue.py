"""What each indexed line holds: the message's role, time, size and first line, or why it is no
message (blank, malformed), the digest of its bytes, and a full-text search over the contents.

Built after the byte index, incrementally (only lines not catalogued yet) and in batches, so a
caller can run it in the background and show progress; a rewritten log is catalogued again. The
search is SQLite's FTS5 over the contents of the master log, the views and the branches; results
come newest first with a snippet whose matches are marked.

FTS5's ``snippet()`` weighs every window of the text for the best one, which grows faster than the
text: 0.2 s for a message of 200,000 characters, 3 s for 800,000, minutes for the 10 MB an
agent can write. A message longer than ``SNIPPET_CHARS`` is found all the same, and its hit
shows its first line and its length instead (the match is somewhere in it).
"""

from __future__ import annotations

import hashlib
import sqlite3
from array import array
from collections.abc import Iterator
from dataclasses import dataclass

from .errors import CacheError, MasterLogError
from .index import LineIndex
from .lines import PREVIEW_CHARS, LineProblem, parse_line

BATCH = 2_000
SNIPPET_CHARS = 50_000  # longer messages get no snippet (see the module's docstring)
MARK = ("\x02", "\x03")  # around each match in a snippet: never in a message's text

SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    name TEXT NOT NULL,
    line INTEGER NOT NULL,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    kind TEXT NOT NULL,          -- message | blank | malformed
    role TEXT,
    timestamp TEXT,
    first_line TEXT NOT NULL,    -- the message's first line, or the problem, in words
    chars INTEGER NOT NULL,      -- length of the content (0 for a problem line)
    sha TEXT NOT NULL,           -- sha256 of the line's bytes
    PRIMARY KEY (name, line)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS messages_first ON messages (name, first_line);
CREATE TABLE IF NOT EXISTS packed (  -- each batch's starts and digests, read back in a few blobs
    name TEXT NOT NULL,
    line INTEGER NOT NULL,       -- the batch's first line
    starts BLOB NOT NULL,        -- array('Q'), native byte order
    shas BLOB NOT NULL,          -- 32 bytes of sha256 per line
    PRIMARY KEY (name, line)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS marks (  -- the search's first rowid of each batch of a log's lines
    name TEXT NOT NULL,
    line INTEGER NOT NULL,
    rowid_from INTEGER NOT NULL,
    PRIMARY KEY (name, line)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rewrites (  -- what a rewrite changed, for every process sharing it
    name TEXT NOT NULL,
    old_lines INTEGER NOT NULL,
    old_tail TEXT NOT NULL,      -- sha256 of the last line indexed before
    new_lines INTEGER NOT NULL,
    new_tail TEXT NOT NULL,
    changes TEXT NOT NULL,       -- JSON: [kind, old from, old to, new from, new to, shift] each
    PRIMARY KEY (name, old_lines, old_tail, new_lines, new_tail)
) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS search USING fts5(
    content, name UNINDEXED, line UNINDEXED, tokenize = 'unicode61'
);
"""


@dataclass(frozen=True, slots=True)
class Row:
    """One catalogued line."""

    name: str
    line: int  # 0-based
    start: int
    end: int
    kind: str
    role: str | None
    timestamp: str | None
    first_line: str
    chars: int
    sha: str


@dataclass(frozen=True, slots=True)
class Hit:
    name: str
    line: int  # 0-based
    start: int
    end: int
    role: str | None
    snippet: str  # matches between MARK[0] and MARK[1]

    @property
    def key(self) -> str:
        return f"{self.name}:{self.line}"


@dataclass(frozen=True, slots=True)
class Progress:
    name: str
    done: int
    total: int


class Catalogue:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        try:
            db.executescript(SCHEMA)
        except sqlite3.Error as error:
            raise CacheError(f"cannot prepare the message catalogue: {error}") from None

    def count(self, name: str) -> int:
        """Lines catalogued: always lines 0 to n - 1 (a build appends in order, a reset removes
        them all), so the last one's number, one seek of the key, not ``count(*)``, which walks
        every row (13 ms at 1 GiB, twice in each ``watch.update``)."""
        row = self.db.execute("SELECT max(line) FROM messages WHERE name = ?", (name,)).fetchone()
        return 0 if row[0] is None else int(row[0]) + 1

    def pending(self, index: LineIndex) -> int:
        return max(0, index.lines - self.count(index.name))

    def reset(self, name: str, first: int = 0) -> None:
        """Forget the lines from ``first`` on (every line: the log was rewritten from its
        start)."""
        with self.db:
            self.db.execute("BEGIN")
            self.db.execute("DELETE FROM messages WHERE name = ? AND line >= ?", (name, first))
            if first == 0:
                self.db.execute("DELETE FROM search WHERE name = ?", (name,))
                self.db.execute("DELETE FROM marks WHERE name = ?", (name,))
                self.db.execute("DELETE FROM packed WHERE name = ?", (name,))
                return
            self._cut_packed(name, first)
            # A log's lines are searched in the order of their rowids: from the mark of the
            # batch holding ``first`` on, not every row of the search (1 s at 1 GiB).
            mark = self.db.execute(
                "SELECT rowid_from FROM marks WHERE name = ? AND line <= ?"
                " ORDER BY line DESC LIMIT 1",
                (name, first),
            ).fetchone()
            self.db.execute(
                "DELETE FROM search WHERE rowid >= ? AND name = ? AND line >= ?",
                (mark[0] if mark else 0, name, first),
            )
            self.db.execute("DELETE FROM marks WHERE name = ? AND line >= ?", (name, first))

    def _cut_packed(self, name: str, first: int) -> None:
        """The packed digests of lines before ``first`` only (within a transaction)."""
        holding = self.db.execute(
            "SELECT line, starts, shas FROM packed WHERE name = ? AND line < ?"
            " ORDER BY line DESC LIMIT 1",
            (name, first),
        ).fetchone()
        self.db.execute("DELETE FROM packed WHERE name = ? AND line >= ?", (name, first))
        if holding is not None:
            line, starts, shas = holding
            keep = first - line
            if len(shas) // 32 > keep:
                self.db.execute(
                    "UPDATE packed SET starts = ?, shas = ? WHERE name = ? AND line = ?",
                    (starts[: keep * 8], shas[: keep * 32], name, line),
                )

    def agrees(self, index: LineIndex, upto: int) -> bool:
        """Whether the catalogued line ``upto - 1`` is that line of ``index`` (same bytes at the
        same place): the catalogue was made from the same file as this process's index. Another
        process sharing the cache may have catalogued another version of the log."""
        if upto == 0:
            return True
        if upto > index.lines:
            return False
        row = self.db.execute(
            'SELECT start, "end", sha FROM messages WHERE name = ? AND line = ?',
            (index.name, upto - 1),
        ).fetchone()
        if row is None:
            return False
        raw = index.read_line(upto - 1)
        return (row[0], row[1]) == index.bounds(upto - 1) and row[2] == _sha(raw)

    def build(self, index: LineIndex, *, batch: int = BATCH) -> Iterator[Progress]:
        """Catalogue the lines not catalogued yet, a batch per transaction, yielding progress.

        Another process may share the cache: a catalogue of another version of the log is
        started over, one ahead of this index is left as it is, and each batch is written only
        if the catalogue still ends where it was read (else it is read again), so no line is
        catalogued twice."""
        total = index.lines
        done = self._start(index)
        while done < total:
            upto = min(total, done + batch)
            rows, texts = [], []
            for line, raw in index.each(done, upto):
                row, content = describe(index.name, line, index.ends[line] - len(raw), raw)
                rows.append(row)
                if content is not None:
                    texts.append((content, index.name, line))
            try:
                with self.db:
                    self.db.execute("BEGIN IMMEDIATE")
                    written = self.count(index.name) == done
                    if written:
                        (rowid,) = self.db.execute(
                            "SELECT coalesce(max(rowid), 0) + 1 FROM search"
                        ).fetchone()
                        self.db.execute(
                            "INSERT OR REPLACE INTO marks VALUES (?, ?, ?)",
                            (index.name, done, rowid),
                        )
                        self.db.execute(
                            "INSERT OR REPLACE INTO packed VALUES (?, ?, ?, ?)",
                            (
                                index.name,
                                done,
                                array("Q", [row.start for row in rows]).tobytes(),
                                b"".join(bytes.fromhex(row.sha) for row in rows),
                            ),
                        )
                        self.db.executemany(
                            "INSERT OR REPLACE INTO messages VALUES (?,?,?,?,?,?,?,?,?,?)",
                            [_values(row) for row in rows],
                        )
                        self.db.executemany(
                            "INSERT INTO search (content, name, line) VALUES (?, ?, ?)", texts
                        )
            except sqlite3.Error as error:
                raise CacheError(f"cannot catalogue {index.name}: {error}") from None
            done = upto if written else self._start(index)
            yield Progress(index.name, min(done, total), total)

    def _start(self, index: LineIndex) -> int:
        """Where this index's cataloguing goes on: the lines catalogued, when they are of this
        version of the log (else none: started over)."""
        done = self.count(index.name)
        if done > index.lines:  # another process is ahead of this index
            return index.lines if self.agrees(index, index.lines) else self._restart(index)
        return done if self.agrees(index, done) else self._restart(index)

    def _restart(self, index: LineIndex) -> int:
        self.reset(index.name)
        return 0

    def digests(self, name: str, upto: int | None = None) -> list[tuple[str, int]]:
        """Each catalogued line's digest and start, in order (lines before ``upto``)."""
        return self.digests_in(self.db, name, upto)

    @staticmethod
    def digests_in(
        db: sqlite3.Connection, name: str, upto: int | None = None, first: int = 0
    ) -> list[tuple[str, int]]:
        """:meth:`digests` read with connection ``db``, of the lines from ``first`` on: from
        the packed blobs (a few reads for a log of a million lines), else, for lines a cache
        of an earlier version catalogued without them, row by row."""
        limit = upto if upto is not None else 1 << 62
        found: list[tuple[str, int]] = []
        for line, starts_blob, shas in db.execute(
            "SELECT line, starts, shas FROM packed WHERE name = ? AND line < ? ORDER BY line",
            (name, limit),
        ):
            starts = array("Q")
            starts.frombytes(starts_blob)
            wanted = first + len(found)  # the next line
            if line + len(starts) <= wanted:
                continue  # before the lines asked for
            if line > wanted:
                break  # a gap: read the rows instead
            count = min(len(starts), limit - line)
            found.extend(
                (shas[i * 32 : i * 32 + 32].hex(), starts[i]) for i in range(wanted - line, count)
            )
        else:
            row = db.execute(
                "SELECT max(line) FROM messages WHERE name = ? AND line < ?", (name, limit)
            ).fetchone()
            if row[0] is None or row[0] + 1 <= first + len(found):
                return found
        cursor = db.execute(
            "SELECT sha, start FROM messages WHERE name = ? AND line >= ? AND line < ?"
            " ORDER BY line",
            (name, first, limit),
        )
        return [(sha, start) for sha, start in cursor]

    def lines_starting(self, name: str, first_line: str) -> list[int]:
        """The catalogued lines (0-based) whose message's first line (cut at 200) is this."""
        cursor = self.db.execute(
            "SELECT line FROM messages WHERE name = ? AND first_line = ? ORDER BY line",
            (name, first_line),
        )
        return [line for (line,) in cursor]

    def problems(self, name: str) -> list[Row]:
        cursor = self.db.execute(
            "SELECT * FROM messages WHERE name = ? AND kind != 'message' ORDER BY line", (name,)
        )
        return [Row(*row) for row in cursor]

    def search(self, query: str, *, limit: int = 50, name: str | None = None) -> list[Hit]:
        """Lines whose content matches ``query`` (FTS5 syntax; a plain phrase is quoted when it
        is not valid FTS5), newest first."""
        if not query.strip():
            return []
        try:
            return self._search(query, limit, name)
        except sqlite3.OperationalError:
            quoted = '"' + query.replace('"', '""') + '"'
            try:
                return self._search(quoted, limit, name)
            except sqlite3.OperationalError as error:
                raise MasterLogError(f"cannot search for {query!r}: {error}") from None

    def matches(self, query: str, *, name: str | None = None) -> int:
        """How many lines match ``query`` (as :meth:`search` reads it), however many it lists."""
        if not query.strip():
            return 0
        where = "search MATCH ?" + (" AND name = ?" if name else "")
        for text in (query, '"' + query.replace('"', '""') + '"'):
            try:
                row = self.db.execute(
                    f"SELECT count(*) FROM search WHERE {where}", [text] + ([name] if name else [])
                ).fetchone()
                return int(row[0])
            except sqlite3.OperationalError as error:
                failed = error
        raise MasterLogError(f"cannot search for {query!r}: {failed}") from None

    def _search(self, query: str, limit: int, name: str | None) -> list[Hit]:
        where = "search MATCH ?" + (" AND search.name = ?" if name else "")
        params: list[object] = [SNIPPET_CHARS, query] + ([name] if name else []) + [limit]
        cursor = self.db.execute(
            'SELECT search.name, search.line, m.start, m."end", m.role, m.first_line, m.chars,'
            f" CASE WHEN m.chars <= ? THEN snippet(search, 0, '{MARK[0]}', '{MARK[1]}', '…', 12)"
            " END FROM search JOIN messages m ON m.name = search.name AND m.line = search.line"
            f" WHERE {where} ORDER BY search.rowid DESC LIMIT ?",
            params,
        )
        return [
            Hit(name, line, start, end, role, snippet or f"{first} … ({chars:,} characters)")
            for name, line, start, end, role, first, chars, snippet in cursor
        ]


def _sha(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def describe(name: str, line: int, start: int, raw: bytes) -> tuple[Row, str | None]:
    """The catalogue's row for one line's bytes, and the message's content (None: no message)."""
    parsed = parse_line(raw)
    sha = _sha(raw)
    end = start + len(raw)
    if isinstance(parsed, LineProblem):
        return Row(name, line, start, end, parsed.kind, None, None, parsed.reason, 0, sha), None
    row = Row(
        name,
        line,
        start,
        end,
        "message",
        parsed.role,
        parsed.timestamp,
        parsed.first_line[:PREVIEW_CHARS],
        len(parsed.content),
        sha,
    )
    return row, parsed.content


def _values(row: Row) -> tuple[object, ...]:
    return (
        row.name,
        row.line,
        row.start,
        row.end,
        row.kind,
        row.role,
        row.timestamp,
        row.first_line,
        row.chars,
        row.sha,
    )
