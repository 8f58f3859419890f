"""The values the workspace hands out: contexts' numbers, snapshots, forks' origins, the
changelogs of steps, batches of the change feed, and the record of a deep verification."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, overload

from engine.context.changelog import Changelog, summary_of
from engine.store import StoredEvent

PrintMode = Literal["tree", "provider", "json"]


@dataclass(frozen=True, slots=True)
class ForkOrigin:
    """Where a forked context came from: context ``source`` as of its ``snapshot`` (None: as
    it was when forked), which was episode ``episode``, after event ``seq`` of the log (number
    ``stream_seq`` of the source's stream)."""

    source: str
    snapshot: str | None
    episode: int
    seq: int
    stream_seq: int

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "snapshot": self.snapshot,
            "episode": self.episode,
            "seq": self.seq,
            "stream_seq": self.stream_seq,
        }

    @classmethod
    def from_json(cls, data: Any) -> ForkOrigin:
        """Raises ``ValueError`` when ``data`` is not a fork's origin."""
        if not isinstance(data, dict) or set(data) != {
            "source",
            "snapshot",
            "episode",
            "seq",
            "stream_seq",
        }:
            raise ValueError(f"not a fork's origin: {data!r}")
        source, snapshot = data["source"], data["snapshot"]
        numbers = (data["episode"], data["seq"], data["stream_seq"])
        if not isinstance(source, str) or not (snapshot is None or isinstance(snapshot, str)):
            raise ValueError(f"not a fork's origin: {data!r}")
        if not all(type(n) is int and n >= 0 for n in numbers):
            raise ValueError(f"not a fork's origin: {data!r}")
        return cls(source, snapshot, *numbers)

    def describe(self) -> str:
        """``agent at snapshot n40 (episode 3)`` or ``agent as of event 57 (episode 3)``."""
        if self.snapshot is not None:
            return f"{self.source} at snapshot {self.snapshot} (episode {self.episode})"
        return f"{self.source} as of event {self.seq} (episode {self.episode})"


@dataclass(frozen=True, slots=True)
class DeepVerification:
    """``verify --deep`` passed at ``time_ns``, over the log's first ``seq`` events and the
    checkpoints stored then. Kept as the row ``DEEP_VERIFIED`` beside the checkpoints, saved at
    event ``seq``, so the log vouches for it as for a checkpoint (docs/workspace.md)."""

    time_ns: int
    seq: int

    def dump(self) -> dict[str, Any]:
        return {"version": 1, "timeNs": self.time_ns, "seq": self.seq}

    @classmethod
    def load(cls, seq: int, data: Any) -> DeepVerification:
        """The record saved at event ``seq``; ``ValueError`` if it is not one."""
        if not isinstance(data, dict) or data.get("version") != 1 or data.get("seq") != seq:
            raise ValueError(f"not a record of a deep verification at event {seq}")
        time_ns = data.get("timeNs")
        if type(time_ns) is not int or time_ns < 0:
            raise ValueError(f"a deep verification at time {time_ns!r}")
        return cls(time_ns, seq)


@dataclass(frozen=True, slots=True)
class ContextInfo:
    name: str
    episode: int
    items: int
    depth: int
    snapshots: int
    forked_from: ForkOrigin | None = None
    """Where it was forked from (``Workspace.fork_context``); None for a context created empty."""


@dataclass(frozen=True, slots=True)
class SnapshotEntry:
    """One snapshot of a context, as the workspace indexes it (``seq``: the event recording it)."""

    id: str
    index: int
    episode: int
    trigger: str
    created_at_ns: int
    seq: int
    stream_seq: int

    def dump(self) -> list[Any]:
        return [self.id, self.episode, self.trigger, self.created_at_ns, self.seq, self.stream_seq]

    @classmethod
    def load(cls, index: int, row: list[Any]) -> SnapshotEntry:
        id_, episode, trigger, created_at_ns, seq, stream_seq = row
        return cls(id_, index, episode, trigger, created_at_ns, seq, stream_seq)


class SnapshotEntries(Sequence[SnapshotEntry]):
    """A context's snapshots, oldest first. Those its checkpoint listed are made from their
    rows when first read: a context of 100,000 items lists thousands, and opening it to draw
    the tree made every one (a tenth of restoring it)."""

    __slots__ = ("_entries", "_rows")

    def __init__(self, rows: list[list[Any]] | None = None) -> None:
        """``rows``: ``SnapshotEntry.dump`` output (a ``ValueError`` if they are not rows of
        its shape, checked now, in C)."""
        rows = rows if rows is not None else []
        if not isinstance(rows, list) or set(map(type, rows)) - {list}:
            raise ValueError("the snapshots must be a list of rows")
        if set(map(len, rows)) - {6}:
            raise ValueError("a snapshot's row must have 6 fields")
        self._rows = rows
        self._entries: list[SnapshotEntry | None] = [None] * len(self._rows)

    def __len__(self) -> int:
        return len(self._entries)

    @overload
    def __getitem__(self, index: int) -> SnapshotEntry: ...

    @overload
    def __getitem__(self, index: slice) -> list[SnapshotEntry]: ...

    def __getitem__(self, index: int | slice) -> SnapshotEntry | list[SnapshotEntry]:
        if isinstance(index, slice):
            return [self._entry(i) for i in range(*index.indices(len(self._entries)))]
        if index < 0:
            index += len(self._entries)
        if not 0 <= index < len(self._entries):
            raise IndexError("snapshot index out of range")
        return self._entry(index)

    def __iter__(self) -> Iterator[SnapshotEntry]:
        return map(self._entry, range(len(self._entries)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SnapshotEntries | list):
            return NotImplemented
        return len(self) == len(other) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # equal to a list: unhashable, as it is

    def append(self, entry: SnapshotEntry) -> None:
        self._entries.append(entry)

    def _entry(self, index: int) -> SnapshotEntry:
        entry = self._entries[index]
        if entry is None:
            entry = self._entries[index] = SnapshotEntry.load(index, self._rows[index])
        return entry


@dataclass(frozen=True, slots=True)
class EventChanges:
    """What one event of a context's stream did (``recorded``: read from the event's result;
    otherwise recomputed by replaying it, for an event stored before results carried it)."""

    seq: int
    stream_seq: int
    type: str
    changelog: Changelog
    recorded: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "stream_seq": self.stream_seq,
            "type": self.type,
            "recorded": self.recorded,
            "changes": self.changelog.to_json(),
        }


StepKind = Literal["snapshot", "between", "live"]


@dataclass(frozen=True, slots=True)
class StepChanges:
    """The changelogs of the events that made one step of a context, in order (see
    ``Workspace.changelogs``): the events after ``since`` (None: from the context's creation)
    up to and including ``until`` (None: up to now, the live step)."""

    name: str
    kind: StepKind
    since: SnapshotEntry | None
    until: SnapshotEntry | None
    events: tuple[EventChanges, ...]

    @property
    def changelogs(self) -> tuple[Changelog, ...]:
        return tuple(event.changelog for event in self.events)

    def combined(self) -> Changelog | None:
        """Every event's changelog as one (None when no event happened)."""
        return Changelog.combined(self.changelogs) if self.events else None

    def summary(self) -> str:
        return summary_of(self.changelogs)

    def title(self) -> str:
        """One line saying which step this is: ``snapshot n40 (episode 3): 5 events since
        snapshot n31 (episode 2)``, ``live: 2 events since …``, ``from … to …: 7 events``."""
        count = len(self.events)
        events = "1 event" if count == 1 else f"{count} events"
        since = _snapshot_named(self.since)
        if self.kind == "live":
            return f"live: {events} since {since}"
        if self.kind == "between":
            until = _snapshot_named(self.until) if self.until is not None else "now"
            return f"from {since} to {until}: {events}"
        return f"{_snapshot_named(self.until)}: {events} since {since}"

    def to_json(self) -> dict[str, Any]:
        def entry(snapshot: SnapshotEntry | None) -> dict[str, Any] | None:
            if snapshot is None:
                return None
            return {
                "id": snapshot.id,
                "index": snapshot.index,
                "episode": snapshot.episode,
                "trigger": snapshot.trigger,
                "seq": snapshot.seq,
                "stream_seq": snapshot.stream_seq,
            }

        return {
            "context": self.name,
            "kind": self.kind,
            "since": entry(self.since),
            "until": entry(self.until),
            "title": self.title(),
            "summary": self.summary(),
            "events": [event.to_json() for event in self.events],
        }


@dataclass(frozen=True, slots=True)
class Change:
    """A batch of events the workspace has applied, and which contexts they touched."""

    events: tuple[StoredEvent, ...]
    contexts: frozenset[str]
    documents: frozenset[str] = frozenset()

    @property
    def seq(self) -> int:
        return self.events[-1].seq


def _snapshot_named(entry: SnapshotEntry | None) -> str:
    """``snapshot n40 (episode 3)``, with its trigger unless it is an episode's."""
    if entry is None:
        return "the context's creation"
    if entry.trigger == "episode":
        return f"snapshot {entry.id} (episode {entry.episode})"
    return f"snapshot {entry.id} ({entry.trigger!r}, episode {entry.episode})"
