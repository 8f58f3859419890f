"""The narrow interface of the event store: what everything above the store may rely on.

Nothing here knows about SQLite. A store holds one totally ordered log of events (the global
``seq``), split into streams (a context, a document) that each number their own events
gaplessly (``stream_seq``). Each event carries the hash of its predecessor, so the log is a
tamper-evident chain.

Commands go through :meth:`EventStore.execute`: under the store's write lock, the caller is
shown the events other processes appended since it last looked, decides, and the events it
returns are appended atomically. Two processes can therefore never both accept conflicting
commands.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, NamedTuple, Self

Clock = Callable[[], int]
"""Returns "now" in integer nanoseconds since the epoch (``time.time_ns`` live).

The store reads it once per command, inside the write transaction (the SQLite store: in its
writer thread), for the events that carry no time of their own.
"""


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event a command wants to append; the store assigns its position and hashes.

    ``payload`` must be JSON-native (dicts with string keys, lists, strings, numbers, booleans,
    None). ``time_ns`` defaults to the store's clock at commit; a pure core that decided with a
    given "now" passes it here so replay sees the same time.
    """

    stream: str
    type: str
    payload: Mapping[str, Any] = field(default_factory=dict)
    actor: str = ""
    time_ns: int | None = None


class StoredEvent(NamedTuple):
    """An event as stored: its global position, its place in its stream, and its chain links.

    Immutable, since the change feed hands the same objects to every subscriber. A NamedTuple
    rather than a frozen dataclass: a replay builds a million of these, four times faster.
    """

    seq: int
    stream: str
    stream_seq: int
    type: str
    time_ns: int
    actor: str
    payload: Mapping[str, Any]
    prev_hash: str
    hash: str


Decide = Callable[[Sequence[StoredEvent]], Sequence[NewEvent]]
"""Given the events appended by others since the caller last looked, return the events to append.

Runs synchronously while the store holds its write lock. Raising aborts the command: nothing is
written and the exception reaches the caller of ``execute`` unchanged.
"""


class StreamHead(NamedTuple):
    """Where a stream ends: the global ``seq`` of its last event, and its length."""

    seq: int
    stream_seq: int


class Checkpoint(NamedTuple):
    """A projection's serialized state as of event ``seq``; replay resumes after ``seq``."""

    seq: int
    data: bytes


class ChainProblem(enum.StrEnum):
    SEQ_GAP = "seq_gap"
    PREV_HASH_MISMATCH = "prev_hash_mismatch"
    HASH_MISMATCH = "hash_mismatch"
    STREAM_SEQ_GAP = "stream_seq_gap"


@dataclass(frozen=True, slots=True)
class VerifyResult:
    """The outcome of walking the chain: ``ok``, or the first broken event and what is wrong."""

    checked: int
    broken_seq: int | None = None
    problem: ChainProblem | None = None
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.problem is None

    def __str__(self) -> str:
        if self.ok:
            return f"ok: {self.checked} events, chain intact"
        return f"event {self.broken_seq}: {self.problem}: {self.detail}"


class Closing(ABC):
    """Something to close, usable as ``async with``."""

    @abstractmethod
    async def close(self) -> None: ...

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


class Subscription(AsyncIterator[StoredEvent], Closing):
    """Events appended after a cursor, by any process, in order, each exactly once.

    Iterate with ``async for``; iteration ends when the subscription or its store is closed.
    """

    @property
    @abstractmethod
    def position(self) -> int:
        """The ``seq`` of the last event handed out (the cursor to resume from)."""


class EventStore(Closing):
    """An append-only, hash-chained event log shared by several processes."""

    read_only: bool = False
    """Opened for reading only: :meth:`execute`, :meth:`append` and the checkpoint writes
    raise ``ReadOnlyWorkspace`` and write nothing."""
    unchanging: bool = False
    """Read as a file no process writes: others' changes are not seen (see the SQLite store)."""

    @property
    @abstractmethod
    def cursor(self) -> int:
        """The last ``seq`` handed to this store's owner through :meth:`execute`.

        The next ``execute`` shows ``decide`` every event after it. It starts at the head as of
        opening; an owner that rebuilt its projection up to some ``seq`` by reading sets it there.
        """

    @cursor.setter
    @abstractmethod
    def cursor(self, seq: int) -> None: ...

    @abstractmethod
    async def execute(self, decide: Decide) -> list[StoredEvent]:
        """Run one command atomically; returns the events it appended.

        ``decide`` receives the events after :attr:`cursor` (appended by other processes, or by
        :meth:`append`) and returns the events to append. The cursor moves past the events
        ``decide`` was shown even if it raises (they are committed, whatever becomes of this
        command), and past the appended events on success.
        """

    async def execute_streamed(
        self,
        decide: Decide,
        more: Iterator[Sequence[NewEvent]],
        stored: Callable[[Sequence[StoredEvent]], None],
    ) -> int:
        """Run one command atomically whose events come in batches: ``decide``'s, then each of
        ``more``'s, all appended in one transaction or none (an import of a whole conversation:
        ``more`` makes each batch as it is asked for, so no more than one is held at once).
        ``stored`` is told each batch as linked, before the commit; an error raised by ``more``
        or ``stored`` rolls everything back. Returns how many events were appended.

        This default gathers every batch and runs :meth:`execute` (a store that can feed one
        transaction piece by piece, as the SQLite store does, overrides it)."""

        def gathered(others: Sequence[StoredEvent]) -> list[NewEvent]:
            events = list(decide(others))
            for batch in more:
                events.extend(batch)
            return events

        appended = await self.execute(gathered)
        stored(appended)
        return len(appended)

    @abstractmethod
    async def append(self, events: Sequence[NewEvent]) -> list[StoredEvent]:
        """Append ``events`` atomically, for writers that keep no projection.

        Skips the catch-up read and leaves :attr:`cursor` where it is.
        """

    @abstractmethod
    async def read(
        self, after_seq: int = 0, limit: int | None = None, stream: str | None = None
    ) -> list[StoredEvent]:
        """Events with ``seq > after_seq`` in order, optionally of one stream, at most ``limit``."""

    @abstractmethod
    async def read_stream(
        self, stream: str, after_stream_seq: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        """Events of ``stream`` with ``stream_seq > after_stream_seq`` in order, at most ``limit``.

        Unlike ``read(after_seq, stream=...)``, the cost does not grow with how much of the
        stream comes before ``after_stream_seq``: for reading the tail of a long stream.
        """

    async def read_stream_payloads(
        self, stream: str, after_stream_seq: int = 0, limit: int | None = None
    ) -> list[tuple[int, Any]]:
        """``(stream_seq, payload)`` of the events ``read_stream`` returns, nothing else: for
        reading a long stream's payloads alone (a document's envelopes, an audit), where the
        chain's columns would only be read to be dropped. A store may read fewer columns."""
        events = await self.read_stream(stream, after_stream_seq, limit)
        return [(event.stream_seq, event.payload) for event in events]

    async def read_stream_part(
        self,
        stream: str,
        path: tuple[str, ...],
        after_stream_seq: int = 0,
        limit: int | None = None,
    ) -> list[tuple[int, int, str, Any]]:
        """``(seq, stream_seq, type, part)`` of the events ``read_stream`` returns, where
        ``part`` is what the payload holds at ``path`` (keys from its top: ``("result",
        "changes")``), None where it holds nothing there (or null, or a key on the way is not
        an object's): for reading one small part of payloads that are large (a step's
        changelogs beside the messages its events carry). A store may read only that part.
        A key holding a double quote is refused (``ValueError``) by every store alike: a
        store's JSON path could not name it."""
        check_part_path(path)
        events = await self.read_stream(stream, after_stream_seq, limit)
        return [(e.seq, e.stream_seq, e.type, part_of(e.payload, path)) for e in events]

    @abstractmethod
    async def first_at(self, stream: str, time_ns: int) -> int | None:
        """The ``stream_seq`` of the first event of ``stream`` recorded at ``time_ns``, if any
        (the event that made something stamped with that time)."""

    async def scan(
        self, after_seq: int = 0, *, stream: str | None = None, batch_size: int = 10_000
    ) -> AsyncIterator[list[StoredEvent]]:
        """Every event after ``after_seq`` in batches, for replays that must not hold them all."""
        while True:
            batch = await self.read(after_seq, limit=batch_size, stream=stream)
            if batch:
                yield batch
            if len(batch) < batch_size:  # a short batch was the end: no empty read to learn it
                return
            after_seq = batch[-1].seq

    @abstractmethod
    async def head(self) -> int:
        """The ``seq`` of the last event in the store, 0 when empty."""

    @abstractmethod
    async def stream_names(self, prefix: str) -> list[str]:
        """The names of the streams that start with ``prefix``, sorted. Costs in proportion to
        the number of such streams, not to their events."""

    @abstractmethod
    async def streams(self) -> dict[str, int]:
        """Every stream with its length (its last ``stream_seq``)."""

    @abstractmethod
    async def stream_heads(self, after_seq: int = 0) -> dict[str, StreamHead]:
        """Every stream with an event after ``after_seq``, and where it ends, as of one moment.

        Costs in proportion to the events after ``after_seq``: with the heads known as of some
        ``seq``, this brings them up to date.
        """

    @abstractmethod
    def subscribe(self, after_seq: int) -> Subscription:
        """Follow the log from ``after_seq``: every later event, from any process."""

    @abstractmethod
    async def save_checkpoint(
        self, name: str, seq: int, data: bytes, *, replacing: Collection[str] = ()
    ) -> None:
        """Keep ``data``, the state of projection ``name`` as of event ``seq``, with the hash
        of event ``seq`` as the log holds it.

        A checkpoint at a lower ``seq`` than one already stored that the log vouches for is
        ignored. Once saved, every earlier save of ``name`` is gone, the pieces of saves that
        never finished included. The checkpoints named in ``replacing`` (others than ``name``)
        are forgotten in the same transaction that publishes it: both happen, or neither.
        """

    @abstractmethod
    async def load_checkpoint(self, name: str) -> Checkpoint | None:
        """Checkpoint ``name``, None if there is none.

        Only a checkpoint the log vouches for is returned: one whose event is still the log's
        event at that place, with the hash it had when the checkpoint was saved. Otherwise
        raises :class:`~engine.store.errors.CheckpointNotInLog` (its event is past the log's
        end, or another event is there now), or
        :class:`~engine.store.errors.CorruptCheckpoint` if its bytes do not match its digest.
        """

    @property
    def reads_blocking(self) -> bool:
        """Whether ``load_checkpoint_blocking`` works on this store."""
        return False

    def load_checkpoint_blocking(self, name: str) -> Checkpoint | None:
        """``load_checkpoint`` read in the calling thread, blocking it until done, for a reader
        that cannot await (a context's turn read when first drawn); only where
        ``reads_blocking`` (others raise ``NotImplementedError``)."""
        raise NotImplementedError(f"{type(self).__name__} reads checkpoints only as it awaits")

    @abstractmethod
    async def checkpoints(self) -> dict[str, int]:
        """Every stored checkpoint's name, with the ``seq`` it is recorded at."""

    @abstractmethod
    async def checkpoint_sizes(self) -> dict[str, int]:
        """Every stored checkpoint's name, with its size in bytes."""

    @abstractmethod
    async def delete_checkpoint(self, name: str) -> None:
        """Forget checkpoint ``name`` (nothing happens if there is none)."""

    @abstractmethod
    async def verify(self) -> VerifyResult:
        """Recompute the whole chain and name the first broken event, if any."""


def check_part_path(path: tuple[str, ...]) -> None:
    """Refuse a path ``read_stream_part`` cannot name in every store: a key holding a double
    quote (SQLite's JSON paths quote keys with it)."""
    if any('"' in key for key in path):
        raise ValueError(f"a key of a JSON path holds a double quote: {path!r}")


def part_of(decoded: Any, path: tuple[str, ...]) -> Any:
    """What a decoded payload holds at ``path`` (keys from its top), None where it holds
    nothing there (or a key on the way is not an object's)."""
    for key in path:
        decoded = decoded.get(key) if isinstance(decoded, dict) else None
    return decoded
