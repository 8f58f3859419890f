"""What each step of a context did, read from its events' recorded results."""

from __future__ import annotations

import asyncio
from typing import Any

from engine.context.changelog import OPS as CONTEXT_OPS
from engine.context.changelog import Changelog
from engine.store import StoredEvent
from engine.workspace import cadence
from engine.workspace.errors import BadRange, ReplayDiverged
from engine.workspace.keys import CONTEXT_PREFIX
from engine.workspace.past import PastStates
from engine.workspace.types import EventChanges, SnapshotEntry, StepChanges, StepKind


class Changelogs(PastStates):
    """The changelogs of steps."""

    # -- what each step did ----------------------------------------------------------------------
    async def changelogs(
        self,
        name: str,
        *,
        episode: int | None = None,
        snapshot: str | None = None,
        between: tuple[str, str | None] | None = None,
    ) -> StepChanges:
        """The changelogs of the events that made one step of a context, read from the
        events' stored results (the context is not rebuilt for them):

        - ``episode=N`` or ``snapshot=ID``: the events after the snapshot before it, up to and
          including the one that recorded it (episode N is ``snapshot_of_episode``'s);
        - ``between=(A, B)``: the events after snapshot A up to and including snapshot B (B
          None: up to now, the live events included);
        - none of them: the live step, the events since the newest snapshot (since the
          context's creation if it has none), or the newest snapshot's step when nothing has
          happened since.

        An event stored before results carried a changelog has it recomputed, by replaying the
        stream from the latest cache before it. Raises ``UnknownSnapshot`` for an unknown
        episode or snapshot, ``BadRange`` for two ways at once or A after B.
        """
        asked = [x for x in (episode, snapshot, between) if x is not None]
        if len(asked) > 1:
            raise BadRange("name the step one way: an episode, a snapshot, or a range")
        await self.load(name)
        projection = self._projection(name)
        entries = projection.snapshots
        kind: StepKind = "snapshot"
        since: SnapshotEntry | None
        until: SnapshotEntry | None
        if between is not None and between[1] is None:
            since, until, kind = self.snapshot(name, between[0]), None, "between"
        elif between is not None:
            older, newer = (self.snapshot(name, ref) for ref in between if ref is not None)
            if older.stream_seq > newer.stream_seq:
                raise BadRange(
                    f"snapshot {older.id} (episode {older.episode}) comes after snapshot"
                    f" {newer.id} (episode {newer.episode}): give the older one first",
                    since=older.id,
                    until=newer.id,
                )
            since, until = older, newer
            kind = "between"
        elif episode is not None or snapshot is not None:
            if episode is not None:
                made = self.snapshot_of_episode(name, episode)
            else:
                assert snapshot is not None
                made = self.snapshot(name, snapshot)
            until, since = made, (entries[made.index - 1] if made.index > 0 else None)
        else:
            newest = entries[-1] if entries else None
            if newest is not None and newest.stream_seq == projection.stream_seq:
                until, since = newest, (entries[-2] if len(entries) > 1 else None)
            else:
                until, since, kind = None, newest, "live"
        first = since.stream_seq if since is not None else 0
        last = until.stream_seq if until is not None else projection.stream_seq
        events = await self._step_events(name, first, last)
        return StepChanges(name, kind, since, until, tuple(events))

    async def _step_events(self, name: str, after: int, last: int) -> list[EventChanges]:
        """The changelogs of events ``after + 1`` .. ``last`` of a context's stream: of each
        event only the changelog its result carries is read (not the texts its command
        carries), and they are decoded in a thread, so a step of many events leaves the
        caller's loop free meanwhile."""
        stream = CONTEXT_PREFIX + name
        parts: list[tuple[int, int, str, Any]] = []
        start = after
        while start < last:
            batch = await self.store.read_stream_part(
                stream, RECORDED, start, limit=min(last - start, cadence.READ_BATCH)
            )
            if not batch:
                break
            parts.extend(batch)
            start = batch[-1][1]
        operations = [part for part in parts if part[2] in OPERATION_EVENTS]
        unrecorded = next((part[1] for part in operations if part[3] is None), None)
        replayed: dict[int, Changelog] = {}
        if unrecorded is not None:  # stored before results carried one: replayed from there
            events = await self._stream_events(stream, unrecorded - 1, last)
            replayed = await self._replayed_changes(name, events, events[0])
        return await asyncio.to_thread(_changes_of, operations, replayed)

    async def _stream_events(self, stream: str, after: int, last: int) -> list[StoredEvent]:
        """Events ``after + 1`` .. ``last`` of ``stream``, whole."""
        events: list[StoredEvent] = []
        while after < last:
            batch = await self.store.read_stream(
                stream, after, limit=min(last - after, cadence.READ_BATCH)
            )
            if not batch:
                break
            events.extend(batch)
            after = batch[-1].stream_seq
        return events

    async def _replayed_changes(
        self, name: str, events: list[StoredEvent], first: StoredEvent
    ) -> dict[int, Changelog]:
        """The changelogs of ``events`` from ``first`` on, by replaying the stream onto the
        latest cache before ``first`` (from its start if a cache does not replay)."""
        projection = await self._state_before(name, first.stream_seq - 1)
        try:
            await self._replay_up_to(name, projection, first.stream_seq - 1)
        except ReplayDiverged as error:
            if projection.cached_from is None:
                raise
            self._cache_not_replayed(name, projection.cached_from, error)
            projection = await self._fresh(name)
            await self._replay_up_to(name, projection, first.stream_seq - 1)
        out: dict[int, Changelog] = {}
        for event in events:
            if event.stream_seq < first.stream_seq:
                continue
            projection.replay(event)
            changes = projection.context.last_changes
            if event.type in OPERATION_EVENTS and changes is not None:
                out[event.stream_seq] = changes
        return out


OPERATION_EVENTS = frozenset(f"context.{op}" for op in CONTEXT_OPS)


RECORDED = ("result", "changes")  # where an event's payload carries its changelog (JSON)


def _changes_of(
    operations: list[tuple[int, int, str, Any]], replayed: dict[int, Changelog]
) -> list[EventChanges]:
    """Each operation's changelog: the one its result carries, else the one replayed."""
    out: list[EventChanges] = []
    for seq, stream_seq, type_, recorded in operations:
        if recorded is not None:
            out.append(EventChanges(seq, stream_seq, type_, Changelog.from_json(recorded)))
        else:
            out.append(EventChanges(seq, stream_seq, type_, replayed[stream_seq], False))
    return out
