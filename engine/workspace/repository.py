"""One repository for an event-sourced stream of any kind (a context's, a document's).

What every kind of stream does alike lives here: restore a projection from its checkpoint and
catch it up with the events of its stream after it (checking that the checkpoint's own last
event is still the log's), fall back to the whole stream when a cache cannot be used (saying why
in ``checkpoint_problem``), save a checkpoint, keep an archive, and find the latest cache at or
before a place in the stream, to rebuild the past from. What differs between kinds (how a
checkpoint is decoded, how an event is applied, what an empty stream means) is the kind's
``StreamKind``, a small adapter. The shape is eventsourcing's ``Repository`` (a snapshot store
beside the event store, ``get`` at a version) with our checkpoints and archives as the snapshots.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Callable, Collection, Mapping
from typing import Generic, NamedTuple, Protocol, TypeVar

from engine.store import Checkpoint, EventStore, InvalidCheckpoint, StoredEvent
from engine.workspace import cadence
from engine.workspace.errors import CACHE_ERRORS, CheckpointMismatch


class Positioned(Protocol):
    """A projection of one stream: the last event it reflects, globally and in its stream."""

    seq: int
    stream_seq: int
    checkpointed: int  # the stream_seq of its last checkpoint (saved, or loaded)
    archived: int  # the stream_seq of its last archive
    cached_from: str | None  # the cache it was restored from, to name it


P = TypeVar("P", bound=Positioned)


class Saved(NamedTuple):
    """A checkpoint's bytes as a kind makes them: its own, and the parts saved before it as
    checkpoints of their own (a context's turns in pieces), each named, none of them a
    checkpoint another stream's could be."""

    data: bytes
    parts: Mapping[str, bytes | memoryview] = {}
    parts_prefix: str | None = None  # what its parts' names start with (None: it has none)
    stored: Collection[str] = ()  # parts read from the store and found sound: not saved again


class StreamKind(Protocol[P]):
    """What one kind of stream does its own way; the repository does the rest."""

    noun: str  # "context", "document": how messages name one
    stream_prefix: str  # its stream is ``stream_prefix + name``
    archive_prefix: str  # its archives are ``archive_prefix + name + ":" + place``
    # Errors catching up after a checkpoint that say it does not match the log, and those that
    # say its state is not the log's at its place (the events after it do not replay onto it).
    mismatched: tuple[type[Exception], ...]
    diverged: tuple[type[Exception], ...]

    @property
    def checkpoint_prefix(self) -> str:
        """Its checkpoint is ``checkpoint_prefix + name``."""

    def restore(self, name: str, checkpoint: Checkpoint) -> P:
        """The projection its checkpoint holds; raises one of ``CACHE_ERRORS`` if malformed."""

    def restore_archive(self, name: str, checkpoint: Checkpoint) -> P:
        """The projection one of its archives holds; raises one of ``CACHE_ERRORS`` likewise."""

    def begin(self, name: str, first: StoredEvent) -> P:
        """The projection before the stream's first event (which is applied next)."""

    def apply(self, projection: P, event: StoredEvent) -> None: ...

    def is_anchor(self, projection: P, event: StoredEvent) -> bool:
        """Whether ``event`` (at the projection's place in its stream) is the one it reflects."""

    def checkpoint_weight(self, projection: P) -> int:
        """Events between its checkpoints at the least, for what it holds (0: no more than
        its ``Intervals`` say)."""

    def archive_weight(self, projection: P) -> int:
        """Events between its archives at the least, for what it holds, likewise."""

    def checkpoint_data(self, name: str, projection: P) -> Saved: ...

    async def ready(self, projection: P) -> None:
        """After the projection is restored from a cache: what it reads later as it is
        drawn, read now if it could not be then (a context's turns in pieces, on a store
        that cannot read in the calling thread)."""

    def archive_data(self, name: str, projection: P) -> bytes: ...

    def saved(self, projection: P, saved: Saved) -> None:
        """After its checkpoint (``saved``) is saved: what the projection kept unsaved besides
        its events (a context's story index) is saved now."""

    async def missing(self, name: str) -> Exception:
        """The error for a stream that has no events: no such context or document."""


class StreamRepository(Generic[P]):
    """The projections of every stream of one kind, from the store's events and caches."""

    def __init__(
        self, store: EventStore, kind: StreamKind[P], note_problem: Callable[[str], None]
    ) -> None:
        self.store = store
        self.kind = kind
        self._note_problem = note_problem  # a cache that could not be used: why

    def stream(self, name: str) -> str:
        return self.kind.stream_prefix + name

    def archive_key(self, name: str, place: int) -> str:
        return f"{self.kind.archive_prefix}{name}:{place}"

    # -- the cadence ---------------------------------------------------------------------------
    @property
    def intervals(self) -> cadence.Intervals:
        """How often this kind's caches are written (``cadence.INTERVALS``, read each time)."""
        return cadence.INTERVALS[self.kind.noun]

    def checkpoint_due(self, projection: P) -> bool:
        """Whether a checkpoint is due while running, after the command that brought the
        projection where it is."""
        every = max(self.intervals.checkpoint_every, self.kind.checkpoint_weight(projection))
        return projection.stream_seq - projection.checkpointed >= every

    def archive_due(self, projection: P, first: int) -> int | None:
        """The mark an archive is due for after a command that took the projection from event
        ``first`` of its stream to where it is (None: none is). Archives are named by marks
        every ``archive_every`` events, but one is only written once the stream has moved on
        by its weight since the last (a big context archived every thousand events would fill
        the disk with copies of itself)."""
        every = self.intervals.archive_every
        if every is None:
            return None  # archived with each checkpoint saved while running
        mark = projection.stream_seq - projection.stream_seq % every
        spacing = max(every, self.kind.archive_weight(projection))
        if mark > first and projection.stream_seq - projection.archived >= spacing:
            return mark
        return None

    # -- the present ---------------------------------------------------------------------------
    async def get(self, name: str, restored: P | None = None) -> P:
        """Stream ``name``'s projection: from ``restored``, else its checkpoint, caught up with
        the events after it; from the whole stream if neither can be used (``checkpoint_problem``
        says why)."""
        noun = self.kind.noun
        projection = restored
        if projection is None:
            try:
                projection = await self.restore(name)
            except CACHE_ERRORS as error:
                self._note_problem(
                    f"the checkpoint of {noun} {name!r} could not be used ({error});"
                    " replayed its stream"
                )
        if projection is not None:
            try:
                return await self.catch_up(name, projection)
            except self.kind.mismatched as error:
                self._note_problem(
                    f"the checkpoint of {noun} {name!r} does not match the log ({error});"
                    " replayed its stream"
                )
            except self.kind.diverged as error:
                # The log's events after it do not replay onto it: a state that is not the
                # log's at its place. Replaying from the start says whether the log is at fault.
                self._note_problem(
                    f"the checkpoint of {noun} {name!r} is not the log's state at its place"
                    f" (after it, {error}); replayed its stream"
                )
        return await self.catch_up(name, None)

    async def covered(self, name: str) -> bool:
        """Whether stream ``name``'s checkpoint holds the whole stream: the store finds it
        sound (its digest, and its event the log's: ``load_checkpoint``) and no event of the
        stream came after it. Made by replaying the stream that far, it vouches that every
        event replays, as ``get`` trusts it to; nothing of it is decoded."""
        try:
            checkpoint = await self.store.load_checkpoint(self.kind.checkpoint_prefix + name)
        except CACHE_ERRORS:
            return False
        if checkpoint is None:
            return False
        return self.stream(name) not in await self.store.stream_heads(checkpoint.seq)

    async def restore(self, name: str) -> P | None:
        """The projection stream ``name``'s checkpoint holds (None: it has none)."""
        checkpoint = await self.store.load_checkpoint(self.kind.checkpoint_prefix + name)
        if checkpoint is None:
            return None
        projection = self.kind.restore(name, checkpoint)
        await self.kind.ready(projection)
        projection.checkpointed = projection.stream_seq
        return projection

    async def catch_up(self, name: str, projection: P | None) -> P:
        """Apply the events of the stream after ``projection`` (all, if None). From a
        checkpoint, its own last event is read first: it must be the log's."""
        stream = self.stream(name)
        after = 0 if projection is None else projection.stream_seq - 1
        anchored = projection is None
        while True:
            events = await self.store.read_stream(stream, after, limit=cadence.READ_BATCH)
            for event in events:
                if not anchored:
                    anchored = True
                    assert projection is not None
                    if not self.kind.is_anchor(projection, event):
                        raise CheckpointMismatch(
                            f"event {projection.stream_seq} of its stream is {event.seq},"
                            f" not {projection.seq}"
                        )
                    continue
                if projection is None:
                    projection = self.kind.begin(name, event)
                self.kind.apply(projection, event)
            if len(events) < cadence.READ_BATCH:
                break
            after = events[-1].stream_seq
        if not anchored:
            raise CheckpointMismatch(f"its stream has no event {after + 1}")
        if projection is None:
            raise await self.kind.missing(name)
        return projection

    async def save(self, name: str, projection: P) -> bytes:
        """Save the projection as stream ``name``'s checkpoint; its bytes."""
        stream_seq = projection.stream_seq  # what the data below reflects
        saved = self.kind.checkpoint_data(name, projection)
        replacing = await self._save_parts(saved, projection.seq)
        await self.store.save_checkpoint(
            self.kind.checkpoint_prefix + name, projection.seq, saved.data, replacing=replacing
        )
        projection.checkpointed = max(projection.checkpointed, stream_seq)
        self.kind.saved(projection, saved)
        return saved.data

    async def _save_parts(self, saved: Saved, seq: int) -> list[str]:
        """Save the checkpoint's parts (one already stored and read sound is kept as it is);
        the parts of the stream's checkpoints it does not use, to forget as it is published
        (not those saved after ``seq``: another process's, for a later checkpoint)."""
        if saved.parts_prefix is None:
            return []
        stored = await self.store.checkpoints()
        for part, data in saved.parts.items():
            if part not in stored or part not in saved.stored:
                await self.store.save_checkpoint(part, seq, bytes(data))  # a view, copied now
        return [
            part
            for part, at in stored.items()
            if part.startswith(saved.parts_prefix) and part not in saved.parts and at <= seq
        ]

    async def archive(
        self, name: str, projection: P, place: int, data: bytes | None = None
    ) -> None:
        """Keep the projection as the archive for ``place`` of stream ``name`` (``data``: its
        archive's bytes, if made already). Where this kind's ``Intervals`` give an archive
        budget, the archives ``archives_pruned`` names go in the transaction that writes it
        (a workspace that kept every archive is thinned so at its next archive)."""
        projection.archived = projection.stream_seq
        if data is None:
            data = self.kind.archive_data(name, projection)
        replacing: list[str] = []
        budget = self.intervals.archive_budget
        if budget is not None:
            data = compressed(data)
            sizes = await self.store.checkpoint_sizes()
            prefix = self.kind.archive_prefix + name + ":"
            archives = {
                int(key[len(prefix) :]): size
                for key, size in sizes.items()
                if key.startswith(prefix) and key[len(prefix) :].isdigit()
            }
            archives[place] = len(data)
            limit = budget * sizes.get(self.kind.checkpoint_prefix + name, len(data))
            pruned = archives_pruned(archives, place, limit, self.intervals.archive_growth)
            replacing = [self.archive_key(name, dropped) for dropped in pruned]
        await self.store.save_checkpoint(
            self.archive_key(name, place), projection.seq, data, replacing=replacing
        )

    # -- the past ------------------------------------------------------------------------------
    async def archive_places(self, name: str) -> list[int]:
        """Where stream ``name``'s archives are (events of its stream), oldest first."""
        prefix = self.kind.archive_prefix + name + ":"
        return sorted(
            int(key[len(prefix) :])
            for key in await self.store.checkpoints()
            if key.startswith(prefix) and key[len(prefix) :].isdigit()
        )

    async def before(self, name: str, stream_seq: int, *, checkpoint: bool = True) -> P | None:
        """A fresh projection of stream ``name`` from its latest cache at or before event
        ``stream_seq`` that is the log's at its place: its checkpoint (with ``checkpoint``;
        often close behind), else an archive; None if there is none. A cache that cannot be
        used is passed over for the one before (``checkpoint_problem`` says why)."""
        cached = await self.store.checkpoints()
        prefix = self.kind.archive_prefix + name + ":"
        archives = sorted(
            (int(key[len(prefix) :]), key)
            for key in cached
            if key.startswith(prefix) and key[len(prefix) :].isdigit()
        )
        candidates = [key for place, key in reversed(archives) if place <= stream_seq]
        own = self.kind.checkpoint_prefix + name
        if checkpoint and own in cached:
            candidates.insert(0, own)  # the latest, when it is not past stream_seq
        if candidates and candidates[0] == own:
            # The checkpoint is saved at the log's seq of its stream's last event: when that
            # is past the stream's event ``stream_seq``, so is the checkpoint, and it is
            # passed over before it is read and decoded (the whole of it, for nothing).
            at = await self.store.read_stream(self.stream(name), stream_seq - 1, limit=1)
            if at and cached[own] > at[0].seq:
                candidates.pop(0)
        for key in candidates:
            label = (
                f"the checkpoint of {self.kind.noun} {name!r}" if key == own else f"archive {key!r}"
            )
            try:
                found = await self.store.load_checkpoint(key)
                if found is None:
                    continue
                # Decoded and built in a thread: the app draws meanwhile (the projection is
                # new, its bytes read already; nothing else is touched).
                restore = self.kind.restore if key == own else self.kind.restore_archive
                projection = await asyncio.to_thread(restore, name, found)
                await self.kind.ready(projection)
                if projection.stream_seq > stream_seq:
                    continue  # a batch of commands may have carried it past its place
                await self.check_anchor(name, projection)
                projection.cached_from = label
                return projection
            except (*CACHE_ERRORS, CheckpointMismatch) as error:
                self._note_problem(
                    f"{label} could not be used ({error}); replayed from an earlier state"
                )
        return None

    async def first(self, name: str) -> P:
        """The projection before the stream's first event (its creation, replayed next)."""
        events = await self.store.read_stream(self.stream(name), 0, limit=1)
        if not events:
            raise await self.kind.missing(name)
        return self.kind.begin(name, events[0])

    async def check_anchor(self, name: str, projection: P) -> None:
        """Raise ``CheckpointMismatch`` unless the log's event at the projection's place in its
        stream is the one it says it reflects."""
        stream = self.stream(name)
        events = await self.store.read_stream(stream, projection.stream_seq - 1, limit=1)
        if not events or not self.kind.is_anchor(projection, events[0]):
            found = f"event {events[0].seq}" if events else "no such event"
            raise CheckpointMismatch(
                f"its state is after event {projection.stream_seq} of {stream!r}, the log's"
                f" event {projection.seq}, but the log has {found} there"
            )

    async def replay_up_to(
        self,
        name: str,
        projection: P,
        stream_seq: int,
        observe: Callable[[StoredEvent], None] | None = None,
    ) -> None:
        """Replay the stream onto ``projection`` up to event ``stream_seq`` (or its end),
        calling ``observe`` after each event; a long replay gives the event loop a turn now and
        then, so the app draws meanwhile."""
        stream = self.stream(name)
        while projection.stream_seq < stream_seq:
            wanted = min(stream_seq - projection.stream_seq, cadence.READ_BATCH)
            events = await self.store.read_stream(stream, projection.stream_seq, limit=wanted)
            for count, event in enumerate(events, 1):
                self.kind.apply(projection, event)
                if observe is not None:
                    observe(event)
                if count % cadence.REPLAY_YIELD_EVERY == 0:
                    await asyncio.sleep(0)
            if len(events) < wanted:
                return


def archives_pruned(
    archives: dict[int, int], newest: int, limit: float, growth: int | None = 2
) -> list[int]:
    """The places of the archives to forget, of ``archives`` (place in the stream: bytes),
    ``newest`` the one being written: with a ``growth``, of each span of places
    [growth**k, growth**(k+1)) the latest is kept (so the archives kept are spaced
    exponentially, the further back the further apart; None: all are), then the oldest of
    those go until the bytes kept are at most ``limit`` (``newest`` is always kept). Oldest
    first."""

    def span(place: int, growth: int) -> int:
        k, bound = 0, max(2, growth)
        while place >= bound:
            k, bound = k + 1, bound * max(2, growth)
        return k

    if growth is None:
        kept = sorted(set(archives) | {newest})
    else:
        latest: dict[int, int] = {}
        for place in sorted(archives):
            latest[span(place, growth)] = place
        kept = sorted(set(latest.values()) | {newest})
    while len(kept) > 1 and sum(archives[place] for place in kept) > limit:
        kept.remove(next(place for place in kept if place != newest))
    return sorted(set(archives) - set(kept))


def compressed(data: bytes) -> bytes:
    """A cache's bytes kept compressed, as an archive kept within a budget is stored (zlib's
    fastest level: a document's JSON shrinks about 14 times, 22 MB in 50 ms), marked with a
    leading ``Z`` (no checkpoint's own bytes start so: JSON, or ``J`` and JSON)."""
    return b"Z" + zlib.compress(data, 1)


def decompressed(data: bytes) -> bytes:
    """``data`` as it was before ``compressed`` (as it is, if it was not);
    ``InvalidCheckpoint`` if its compressed bytes do not decompress."""
    if data[:1] != b"Z":
        return data
    try:
        return zlib.decompress(data[1:])
    except zlib.error as error:
        raise InvalidCheckpoint(f"its compressed bytes do not decompress ({error})") from None
