"""The workspace file's schema and its migrations, versioned by ``PRAGMA user_version``.

``MIGRATIONS[n]`` are the statements that take a file from version ``n - 1`` to ``n``; the store
runs all pending steps in one transaction. A new version appends a step; steps already released
are never edited, since files in the wild were built by them.
"""

from __future__ import annotations

# "PACT" in ASCII: lets us tell our workspace from any other SQLite file.
APPLICATION_ID = 0x50414354

# The event hash recorded, at the upgrade to version 2, for a checkpoint past the log's end:
# no event ever has it, so that checkpoint is never used.
NOT_IN_LOG_AT_UPGRADE = "none: its event was not in the log at the upgrade"

MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """
        CREATE TABLE events (
            seq         INTEGER PRIMARY KEY,    -- global position, 1, 2, 3... without gaps
            stream      TEXT    NOT NULL,
            stream_seq  INTEGER NOT NULL,       -- position within the stream, without gaps
            type        TEXT    NOT NULL,
            time_ns     INTEGER NOT NULL,
            actor       TEXT    NOT NULL,
            payload     TEXT    NOT NULL,       -- canonical JSON
            prev_hash   TEXT    NOT NULL,
            hash        TEXT    NOT NULL,
            UNIQUE (stream, stream_seq)
        )
        """,
        # A checkpoint is written as chunks under a fresh generation, each chunk in its own short
        # transaction, then published by pointing the checkpoint row at that generation: saving
        # a large projection never holds the write lock for long.
        """
        CREATE TABLE checkpoints (
            name        TEXT    PRIMARY KEY,
            seq         INTEGER NOT NULL,       -- the projection's state as of this event
            generation  TEXT    NOT NULL,
            size        INTEGER NOT NULL,
            sha256      TEXT    NOT NULL,
            saved_ns    INTEGER NOT NULL
        )
        """,
        """
        CREATE TABLE checkpoint_chunks (
            name        TEXT    NOT NULL,
            generation  TEXT    NOT NULL,
            chunk       INTEGER NOT NULL,
            data        BLOB    NOT NULL,
            UNIQUE (name, generation, chunk)
        )
        """,
    ),
    2: (
        # The hash of the event a checkpoint was taken at: the log vouches for a checkpoint only
        # while its event is still there, with that hash (a log that lost its tail and grew
        # again has other events at those places). A checkpoint written before this step is
        # vouched for by the log as it stands at the upgrade; one past its end then, never.
        "ALTER TABLE checkpoints ADD COLUMN event_hash TEXT",
        f"""
        UPDATE checkpoints SET event_hash = COALESCE(
            (SELECT hash FROM events WHERE events.seq = checkpoints.seq),
            CASE WHEN seq = 0 THEN '{"0" * 64}' ELSE '{NOT_IN_LOG_AT_UPGRADE}' END
        )
        """,
    ),
}

SCHEMA_VERSION = max(MIGRATIONS)
