"""A context folded from its stream (``ContextProjection``), how one stored event of a context or
a document is replayed onto its projection, and the small pieces built from them."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.context import Context, ContextError
from engine.context.clock import FixedClock, SequentialIds
from engine.context.compact import (
    dump_compact,
    dump_packed,
    dump_recent,
    load_compact,
    restore_compact,
    restore_recent,
)
from engine.context.errors import NotFound
from engine.context.story_index import StoryIndex
from engine.context.timeline import ItemStory
from engine.documents import DocumentProjection
from engine.store import StoredEvent
from engine.workspace import cadence
from engine.workspace.errors import CACHE_ERRORS, ReplayDiverged, UnreplayableEvent
from engine.workspace.keys import CONTEXT_PREFIX, FORKED
from engine.workspace.types import ContextInfo, ForkOrigin, SnapshotEntries, SnapshotEntry

if TYPE_CHECKING:
    from engine.context.commands import ContextCommand
    from engine.context.results import ContextResult
    from engine.workspace.pieces import StoredPieces


class ContextProjection:
    """One context folded from its stream: its own id sequence, and a clock replay can set."""

    def __init__(self, context: Context, ids: SequentialIds, clock: FixedClock) -> None:
        self.context = context
        self.ids = ids
        self.clock = clock
        self.seq = 0  # the last event of its stream applied (global seq) ...
        self.stream_seq = 0  # ... and its place in the stream
        self.archived = 0  # the stream_seq of its last archive
        self.checkpointed = 0  # the stream_seq of its last checkpoint (saved, or loaded)
        self.snapshots = SnapshotEntries()
        self.cached_from: str | None = None  # the cache it was restored from, to name it
        self.forked_from: ForkOrigin | None = None
        # The events that named each item (stories are read, not replayed); None: not known
        # (restored from an archive, or from a checkpoint written before it was kept).
        self.stories: StoryIndex | None = StoryIndex()
        self.stories_unsaved = False  # built from the log since the checkpoint was read
        # Restored from its own checkpoint written before turns were packed: saved again on
        # close, packed, so that the next opening decodes only the turns it draws.
        self.unpacked = False
        # Where its checkpoint's turns kept in pieces are read (None: it had none).
        self.pieces: StoredPieces | None = None
        self.pieces_saved: frozenset[str] = frozenset()  # the pieces its last save wrote

    @classmethod
    def fresh(cls, time_ns: int) -> ContextProjection:
        """A new, empty context, created at ``time_ns`` (its ``context.created`` event's time)."""
        ids, clock = SequentialIds(), FixedClock(time_ns)
        return cls(Context(ids=ids, clock=clock), ids, clock)

    @classmethod
    def restore(
        cls,
        data: dict[str, Any],
        packed: bytes | memoryview | None = None,
        pieces: StoredPieces | None = None,
    ) -> ContextProjection:
        """From ``dump()`` output, or ``dump_packed()``'s (``packed``: its turns; ``pieces``:
        where those kept in pieces are read); raises ``ContextError`` (or KeyError,
        TypeError) if malformed."""
        ids, clock = SequentialIds(), FixedClock()
        context = load_compact(data["context"], ids=ids, clock=clock, packed=packed, pieces=pieces)
        projection = cls(context, ids, clock)
        projection.pieces = pieces
        # Loading builds (and discards) a fresh root and turns first, spending ids: continue
        # exactly where the saved context stopped, as a replay from the first event would.
        ids.next = data["next_id"]
        projection.seq, projection.stream_seq = data["seq"], data["stream_seq"]
        projection.archived = data.get("archived", 0)
        rows = data.get("snapshots", [])
        projection.snapshots = SnapshotEntries(rows)
        if data.get("forked_from") is not None:
            projection.forked_from = ForkOrigin.from_json(data["forked_from"])
        stories = data.get("stories")
        if isinstance(stories, dict) and pieces is not None:  # kept in a piece of its own
            projection.stories = StoryIndex(pieces.stories)
        else:
            projection.stories = StoryIndex(stories) if isinstance(stories, str) else None
        if "recent" in data:  # a checkpoint written before it was kept has none
            restore_recent(data["recent"], projection.context)
        return projection

    def info(self, name: str) -> ContextInfo:
        """The numbers ``contexts()`` shows for this context."""
        context = self.context
        return ContextInfo(
            name,
            context.current_episode,
            context.item_count(),
            context.history_depth,
            len(self.snapshots),
            self.forked_from,
        )

    def dump(
        self, *, with_snapshots: bool = True, context: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """The projection as JSON-native data (``context``: the context's form, if made
        already; else ``dump_compact``'s)."""
        data: dict[str, Any] = {
            "context": dump_compact(self.context) if context is None else context,
            "next_id": self.ids.next,
            "seq": self.seq,
            "stream_seq": self.stream_seq,
            "archived": self.archived,
        }
        if with_snapshots:
            data["snapshots"] = [entry.dump() for entry in self.snapshots]
            if self.stories is not None:
                data["stories"] = self.stories.pack()
            data["recent"] = dump_recent(self.context, cadence.RECENT_SNAPSHOTS)
        if self.forked_from is not None:
            data["forked_from"] = self.forked_from.to_json()
        return data

    def dump_packed(self) -> tuple[dict[str, Any], bytes]:
        """``dump()`` with the context's turns packed (``compact.dump_packed``): the data, and
        the turns' bytes that go beside it (``ContextProjection.restore`` takes both)."""
        context, turns = dump_packed(self.context)
        return self.dump(context=context), turns

    def apply(
        self, command: ContextCommand, time_ns: int, version: int | None = None
    ) -> ContextResult:
        """Run a command at ``time_ns``; a refused command changes nothing, ids included.
        ``version``: a replayed event's (it runs by the rules it was written by)."""
        # pydantic (a quarter of the app's start-up) loads with the first command, not on open.
        from engine.context.commands import FORMAT, apply_command

        self.clock.now = time_ns
        next_id = self.ids.next
        try:
            return apply_command(self.context, command, FORMAT if version is None else version)
        except BaseException:
            self.ids.next = next_id
            raise

    def committed(self, seq: int, stream_seq: int, recorded: Mapping[str, Any]) -> None:
        """Note that the last applied command was stored as event ``seq``, which recorded its
        result as ``recorded`` (the result's JSON form)."""
        self.seq, self.stream_seq = seq, stream_seq
        if self.stories is not None:
            self.stories.note(seq, recorded.get("changes"))
        snapshot_id = recorded.get("snapshot")
        if snapshot_id is not None:
            snapshot = self.context.history.get(snapshot_id)
            self.snapshots.append(
                SnapshotEntry(
                    snapshot.id,
                    len(self.snapshots),
                    snapshot.episode,
                    snapshot.trigger,
                    snapshot.created_at_ns,
                    seq,
                    stream_seq,
                )
            )

    def replay(self, event: StoredEvent) -> None:
        """Apply one stored event of this context's stream.

        Raises ``UnreplayableEvent`` if it holds no command this version can read, and
        ``ReplayDiverged`` if its command is refused or gives another result than recorded."""
        if event.type == "context.created":
            self.seq, self.stream_seq = event.seq, event.stream_seq
            return
        if event.type == FORKED:
            self._take_copy(event)
            return
        command = _recorded_command(event)
        recorded = _recorded_result(event)
        try:
            result = self.apply(command, event.time_ns, event.payload.get("v", 1)).to_json()
        except NotFound as refused:
            # Earlier releases stored a delete that matched nothing (now refused): it changed
            # nothing then, as the refusal changes nothing now.
            if event.type != "context.delete" or recorded != {"deleted": []}:
                raise _refused_on_replay(event, refused) from None
            result = recorded
        except ContextError as refused:
            raise _refused_on_replay(event, refused) from None
        if "changes" not in recorded:
            # Recorded before results carried the changelog: the rest must agree.
            result = {key: value for key, value in result.items() if key != "changes"}
        if result != recorded:
            raise ReplayDiverged(
                f"event {event.seq} ({event.type}) replayed to {result}, "
                f"but the log recorded {recorded}",
                seq=event.seq,
            )
        self.committed(event.seq, event.stream_seq, result)

    def _take_copy(self, event: StoredEvent) -> None:
        """A fork's second event: the context becomes the copy it carries, and hands out ids
        from where its source stopped (so none collides with a copied one)."""

        def unreplayable(why: str) -> UnreplayableEvent:
            return UnreplayableEvent(
                f"event {event.seq} ({event.type}) of stream {event.stream!r} cannot be"
                f" replayed: {why}",
                seq=event.seq,
                stream=event.stream,
            )

        if event.stream_seq != 2 or self.stream_seq != 1:
            raise unreplayable("a fork's copy must follow the context's creation")
        payload = event.payload
        try:
            origin = ForkOrigin.from_json(payload["forked_from"])
            next_id = payload["next_id"]
            if type(next_id) is not int or next_id < 1:
                raise ValueError(f"next_id {next_id!r}")
            # Into the context object itself (fresh: only created), not a new one: whoever
            # holds it (an item's story replaying this stream) goes on reading the right one.
            restore_compact(payload["state"], self.context)
        except (*CACHE_ERRORS, TypeError) as error:
            raise unreplayable(f"its copy cannot be read ({error})") from None
        self.ids.next = next_id
        self.forked_from = origin
        self.seq, self.stream_seq = event.seq, event.stream_seq


def _refused_on_replay(event: StoredEvent, refused: ContextError) -> ReplayDiverged:
    return ReplayDiverged(
        f"event {event.seq} ({event.type}) was refused when replayed ({refused}), "
        "but the log recorded it as done",
        seq=event.seq,
    )


def _recorded_command(event: StoredEvent) -> ContextCommand:
    """The command an event of a context's stream recorded, or ``UnreplayableEvent``."""
    from engine.context.commands import parse_recorded  # see ContextProjection.apply

    def unreplayable(why: str) -> UnreplayableEvent:
        return UnreplayableEvent(
            f"event {event.seq} ({event.type}) of stream {event.stream!r} cannot be replayed:"
            f" {why}",
            seq=event.seq,
            stream=event.stream,
        )

    payload = event.payload
    if not isinstance(payload, Mapping) or not isinstance(payload.get("command"), Mapping):
        shown = json.dumps(payload, ensure_ascii=False, default=str)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        raise unreplayable(f"its payload holds no command ({shown})")
    version = payload.get("v", 1)
    if type(version) is not int:
        raise unreplayable(f"its command's form version is {version!r}, not a whole number")
    try:
        return parse_recorded(payload["command"], version)
    except ContextError as error:
        raise unreplayable(f"its command is not one this version can run ({error})") from None


def _recorded_result(event: StoredEvent) -> dict[str, Any]:
    """The result an event of a context's stream recorded for its command (what its replay
    must give), or ``UnreplayableEvent``: without one, a replay would check nothing."""
    result = event.payload.get("result")
    if not isinstance(result, dict):
        shown = json.dumps(result, ensure_ascii=False, default=str)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        raise UnreplayableEvent(
            f"event {event.seq} ({event.type}) of stream {event.stream!r} cannot be replayed:"
            f" its payload records no result for its command (its result: {shown})",
            seq=event.seq,
            stream=event.stream,
        )
    return result


def check_stream_start(event: StoredEvent) -> None:
    """Raise ``UnreplayableEvent`` unless ``event``, the first of its stream in the log, is
    the context's creation."""
    if event.stream_seq != 1:
        raise UnreplayableEvent(
            f"event {event.seq} ({event.type}) is the first of stream {event.stream!r} in the"
            f" log, but it is number {event.stream_seq} of that stream: its start is missing",
            seq=event.seq,
            stream=event.stream,
        )
    if event.type != "context.created":
        raise UnreplayableEvent(
            f"event {event.seq} ({event.type}) begins stream {event.stream!r}, but a context's"
            " stream begins with its creation (context.created)",
            seq=event.seq,
            stream=event.stream,
        )


# What the fold raises for a stored event it cannot take: a payloadJson that is not JSON or
# not an object (ValueError), an unknown eventType or a sequenceNumber out of turn (ValueError),
# a field missing (KeyError) or not of the type its event needs (TypeError, AttributeError, ...).
_FOLD_ERRORS = (KeyError, TypeError, ValueError, IndexError, AttributeError)


def replay_document_event(projection: DocumentProjection, event: StoredEvent) -> None:
    """Fold ``event``, the next of a document's stream, onto ``projection``: the one way the
    workspace and ``verify --deep`` replay a document. ``UnreplayableEvent`` names an event the
    fold cannot take (its stream, its seq, its eventType, and why)."""
    with unreplayable_document_event(event):
        projection.replay(event)


@contextlib.contextmanager
def unreplayable_document_event(event: StoredEvent) -> Iterator[None]:
    """Within it, what the fold raises for ``event`` (a document's) is ``UnreplayableEvent``
    naming the event: its stream, its seq, its eventType, and why."""
    try:
        yield
    except _FOLD_ERRORS as error:
        envelope = event.payload
        said = envelope.get("eventType") if isinstance(envelope, Mapping) else None
        event_type = said if isinstance(said, str) else event.type
        raise UnreplayableEvent(
            f"event {event.seq} ({event_type}) of stream {event.stream!r} cannot be replayed:"
            f" {type(error).__name__}: {error}",
            seq=event.seq,
            stream=event.stream,
            event_type=event_type,
        ) from None


def context_name(stream: str) -> str | None:
    return stream[len(CONTEXT_PREFIX) :] if stream.startswith(CONTEXT_PREFIX) else None


@functools.cache
def empty_numbers() -> ContextInfo:
    return ContextProjection.fresh(0).info("")


def empty_info(name: str) -> ContextInfo:
    """The numbers of a context that has only been created."""
    return dataclasses.replace(empty_numbers(), name=name)


def fork_copy(
    name: str, at: str | None, source: ContextProjection
) -> tuple[ForkOrigin, dict[str, Any]]:
    """The origin of a fork of ``source`` (context ``name``, as of snapshot ``at``) and the
    payload of its copy event."""
    context = source.context
    origin = ForkOrigin(name, at, context.current_episode, source.seq, source.stream_seq)
    payload = {
        "forked_from": origin.to_json(),
        "state": dump_compact(context),
        "next_id": source.ids.next,
    }
    return origin, payload


@dataclass(slots=True)
class Followed:
    """The item whose story is being told: a replay of its context, and what it observed."""

    name: str
    projection: ContextProjection
    story: ItemStory
