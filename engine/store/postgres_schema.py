"""The workspace's tables in a PostgreSQL database, and the URL that names one.

The tables mean what the SQLite file's mean (:mod:`engine.store.schema`), at the same schema
version: a version number names one meaning on both. PostgreSQL has no ``PRAGMA
application_id`` or ``user_version``: the one row of ``pact_workspace`` holds both, and is also
the row every command locks (``SELECT ... FOR UPDATE``), which orders commands from every
process on every machine. ``MIGRATIONS[n]`` takes the tables from version ``n - 1`` to ``n``;
the first version on PostgreSQL is 2, made whole in one step.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from engine.store.schema import APPLICATION_ID, SCHEMA_VERSION

URL_SCHEMES = ("postgresql", "postgres")

# The row of the workspace: its identity, its schema version, and the lock of every command.
LOCK_WORKSPACE = "SELECT schema_version FROM pact_workspace WHERE id = 1 FOR UPDATE"
# Commits are announced on this channel (the new head as the payload), on commit only.
CHANNEL = "pact_events"

MIGRATIONS: dict[int, tuple[str, ...]] = {
    2: (
        f"""
        CREATE TABLE pact_workspace (
            id              INTEGER PRIMARY KEY CHECK (id = 1),
            application_id  BIGINT  NOT NULL,
            schema_version  INTEGER NOT NULL
        );
        INSERT INTO pact_workspace (id, application_id, schema_version)
            VALUES (1, {APPLICATION_ID}, 0)
        """,
        # COLLATE "C": streams and names sort by code point, as Python and SQLite sort them
        # (stream_names() reads a range of the index between a prefix and the next string).
        # payload is TEXT, not JSONB: the canonical JSON is hashed, and must read back as is.
        """
        CREATE TABLE events (
            seq         BIGINT  PRIMARY KEY,
            stream      TEXT    COLLATE "C" NOT NULL,
            stream_seq  BIGINT  NOT NULL,
            type        TEXT    NOT NULL,
            time_ns     BIGINT  NOT NULL,
            actor       TEXT    NOT NULL,
            payload     TEXT    NOT NULL,
            prev_hash   TEXT    NOT NULL,
            hash        TEXT    NOT NULL,
            UNIQUE (stream, stream_seq)
        )
        """,
        """
        CREATE TABLE checkpoints (
            name        TEXT    COLLATE "C" PRIMARY KEY,
            seq         BIGINT  NOT NULL,
            generation  TEXT    NOT NULL,
            size        BIGINT  NOT NULL,
            sha256      TEXT    NOT NULL,
            saved_ns    BIGINT  NOT NULL,
            event_hash  TEXT
        )
        """,
        # id plays SQLite's rowid: a later piece has a larger one, which orders generations.
        """
        CREATE TABLE checkpoint_chunks (
            id          BIGSERIAL PRIMARY KEY,
            name        TEXT    COLLATE "C" NOT NULL,
            generation  TEXT    NOT NULL,
            chunk       INTEGER NOT NULL,
            data        BYTEA   NOT NULL,
            UNIQUE (name, generation, chunk)
        )
        """,
    ),
}

FIRST_VERSION = min(MIGRATIONS)
assert max(MIGRATIONS) == SCHEMA_VERSION, "a schema step on SQLite needs its PostgreSQL twin"


def is_url(where: object) -> bool:
    """Whether ``where`` names a PostgreSQL database rather than a file."""
    return isinstance(where, str) and urlsplit(where).scheme in URL_SCHEMES and "://" in where


def shown_url(url: str) -> str:
    """``url`` without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = netloc[0].split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc[1]}"))
