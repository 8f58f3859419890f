"""How often the workspace writes its caches, and how much it reads or replays at a time.

Read where they are used as ``cadence.NAME`` (never imported by name), so that a test or a
benchmark that sets one here changes it for every role."""

from __future__ import annotations

CHECKPOINT_EVERY = 5_000  # events of a context since its checkpoint, while running
CHECKPOINT_ON_CLOSE = 200  # a shorter tail is cheaper to replay than to checkpoint
INDEX_EVERY = 100  # events applied since the index was saved, while running
ARCHIVE_EVERY = 1_000  # events of one context between archive marks
READ_BATCH = 10_000  # events read at a time when a context catches up with its stream
REPLAY_YIELD_EVERY = 200  # events a replay for the app applies between giving the loop a turn
