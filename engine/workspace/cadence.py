"""How often the workspace writes its caches, and how much it reads or replays at a time.

Read where they are used as ``cadence.NAME`` (never imported by name), so that a test or a
benchmark that sets one here changes it for every role.

``INTERVALS`` declares, for each kind of stream, how often its caches are written while the
workspace runs (as eventsourcing's ``snapshotting_intervals`` does per aggregate class); the
stream's ``StreamRepository`` reads it. A cache's cost grows with what it holds, so a kind may
space its caches further apart as it grows (``StreamKind.checkpoint_weight``/``archive_weight``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Intervals:
    """How often one kind of stream's caches are written while running."""

    checkpoint_every: int  # events of a stream since its checkpoint (at least)
    archive_every: int | None  # events between archive marks; None: one with each checkpoint
    # Archives thinned as one is written (``repository.archives_pruned``): with a growth, the
    # latest of each span [growth**k, growth**(k+1)) of the stream's events is kept (None: every
    # one), and the oldest of those go until all of them take at most ``archive_budget`` times
    # the stream's checkpoint's bytes. None: every archive is kept, as written. Archives kept
    # within a budget are stored compressed (``checkpoints.compress_checkpoint``).
    archive_budget: float | None = None
    archive_growth: int | None = 2


INTERVALS: dict[str, Intervals] = {
    "context": Intervals(checkpoint_every=5_000, archive_every=1_000),
    # Compressed, a document's archives 5,000 events or more apart all fit in the budget at
    # 200,000 events, so ``:N`` anywhere folds from one close behind.
    "document": Intervals(
        checkpoint_every=5_000, archive_every=None, archive_budget=2.0, archive_growth=None
    ),
}

# The newest snapshots a context's checkpoint keeps, as what differs from the state after them
# (a few turns each), so that the recent past is at hand without a replay (``ctx diff -1 now``).
RECENT_SNAPSHOTS = 8
CHECKPOINT_ON_CLOSE = 200  # a shorter tail is cheaper to replay than to checkpoint (every kind)
INDEX_EVERY = 100  # events applied since the index was saved, while running
READ_BATCH = 10_000  # events read at a time when a stream catches up
IMPORT_BATCH = 1_000  # commands an import makes, checks and writes at a time (one transaction)
REPLAY_YIELD_EVERY = 200  # events a replay for the app applies between giving the loop a turn
