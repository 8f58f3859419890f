"""Context commands: creating and forking contexts, running commands on them, their numbers."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from engine.context import ContextError, ContextResult
from engine.store import NewEvent, StoredEvent
from engine.workspace import cadence
from engine.workspace.checks import check_actor, check_context_name
from engine.workspace.clock import ProtocolClock
from engine.workspace.errors import ContextExists, ContextNotLoaded
from engine.workspace.index import WorkspaceIndex
from engine.workspace.keys import CONTEXT_PREFIX, FORKED
from engine.workspace.past import PastStates
from engine.workspace.projection import ContextProjection, fork_copy
from engine.workspace.types import ContextInfo, ForkOrigin

if TYPE_CHECKING:
    from engine.context.commands import ContextCommand


class ContextCommands(PastStates, ProtocolClock, WorkspaceIndex):
    """The contexts' commands and numbers."""

    # -- contexts ----------------------------------------------------------------------------
    def contexts(self) -> list[ContextInfo]:
        """Every context's numbers, by name: a loaded one's from its projection, another's
        from the index while they are current. Raises ``ContextNotLoaded`` if some context has
        neither (``list_contexts`` loads those)."""
        infos, unknown = [], []
        for name in sorted(self._heads):
            info = self._info(name)
            if info is None:
                unknown.append(name)
            else:
                infos.append(info)
        if unknown:
            raise ContextNotLoaded(
                f"the numbers of context(s) {', '.join(unknown)} are not known without loading"
                " them: use list_contexts()",
                names=unknown,
            )
        return infos

    async def list_contexts(self) -> list[ContextInfo]:
        """Every context's numbers, loading the contexts the index has no current numbers for."""
        while stale := [name for name in sorted(self._heads) if self._info(name) is None]:
            await self.load(*stale)
        return self.contexts()

    def _info(self, name: str) -> ContextInfo | None:
        projection = self._contexts.get(name)
        if projection is not None:
            return projection.info(name)
        summary = self._summaries.get(name)
        if summary is not None and summary[0] == self._heads[name].stream_seq:
            origin = self._origins.get(name)
            return (
                summary[1]
                if origin is None
                else dataclasses.replace(summary[1], forked_from=origin)
            )
        return None

    async def create_context(self, name: str, *, actor: str = "") -> None:
        self._check_writable()
        check_context_name(name)
        check_actor(actor)

        def decide(others: Sequence[StoredEvent]) -> list[NewEvent]:
            for event in others:
                self._apply(event)
            if name in self._heads:
                raise ContextExists(f"context {name!r} already exists", name=name)
            return [NewEvent(CONTEXT_PREFIX + name, "context.created", {"name": name}, actor)]

        stored = await self._execute(decide)
        for event in stored:
            self._apply(event)

    async def create_context_with(
        self,
        name: str,
        commands: Sequence[ContextCommand | Mapping[str, Any]],
        *,
        actor: str = "",
    ) -> list[ContextResult]:
        """Create context ``name`` and run ``commands`` on it, in one transaction: the
        ``context.created`` event and one event per command are appended, or nothing is (an
        import: ``ctx import``). Every command is checked first; a refusal raises its
        ``ContextError`` (``ContextExists`` when the name is taken) with nothing written."""
        from engine.context.commands import parse_command  # see ContextProjection.apply

        for command in commands:
            parse_command(command)  # a malformed command is refused before anything is read
        results: list[ContextResult] = []
        await self.create_context_streamed(name, commands, actor=actor, results=results)
        return results

    async def create_context_streamed(
        self,
        name: str,
        commands: Iterable[ContextCommand | Mapping[str, Any]],
        *,
        actor: str = "",
        batch: int = cadence.IMPORT_BATCH,
        results: list[ContextResult] | None = None,
    ) -> int:
        """What :meth:`create_context_with` does, with ``commands`` taken ``batch`` at a time as
        they are made and written as they go, in the same one transaction (the store's
        ``execute_streamed``): the context and every command's event are appended, or nothing is.
        Neither the commands nor their events are ever held all at once (a conversation of a
        gigabyte: ``ctx import --gptme``); the results are kept only in ``results`` when it is
        given. A refusal, or an error raised while making the commands, raises with nothing
        written. Returns how many commands ran."""
        from engine.context.commands import FORMAT, parse_command  # see ContextProjection.apply

        self._check_writable()
        check_context_name(name)
        check_actor(actor)
        if self._needs_reload:
            await self._reload(set(self._needs_reload))
        stream = CONTEXT_PREFIX + name
        projection: ContextProjection | None = None
        now = 0
        pending: list[dict[str, Any]] = []  # the results of the batch being linked
        count = 0

        def decide(others: Sequence[StoredEvent]) -> list[NewEvent]:
            nonlocal projection, now
            self._deciding = True
            for event in others:
                self._apply(event)
            if name in self._heads:
                raise ContextExists(f"context {name!r} already exists", name=name)
            now = self.now_ns()
            projection = ContextProjection.fresh(now)  # as a replay of the creation makes it
            return [NewEvent(stream, "context.created", {"name": name}, actor, now)]

        def batches() -> Iterator[list[NewEvent]]:
            nonlocal count
            given = iter(commands)
            while chunk := list(itertools.islice(given, batch)):
                assert projection is not None
                events = []
                for command, stored in map(parse_command, chunk):
                    result = projection.apply(command, now)
                    if results is not None:
                        results.append(result)
                    pending.append(result.to_json())
                    payload = {"command": stored, "result": pending[-1], "v": FORMAT}
                    events.append(NewEvent(stream, f"context.{command.op}", payload, actor, now))
                count += len(events)
                yield events

        def linked(events: Sequence[StoredEvent]) -> None:
            assert projection is not None
            if events and events[0].type == "context.created":
                projection.seq, projection.stream_seq = events[0].seq, events[0].stream_seq
                events = events[1:]
            for event, result in zip(events, pending, strict=True):
                projection.committed(event.seq, event.stream_seq, result)
            pending.clear()

        self._deciding = False  # as _execute: a refusal or an error rolls it all back
        await self.store.execute_streamed(decide, batches(), linked)
        assert projection is not None
        self._contexts[name] = projection
        self._applied = projection.seq
        self._note(name, projection.seq, projection.stream_seq)
        # The import is in the log: its checkpoint, so that opening it replays nothing.
        if self._context_streams.checkpoint_due(projection):
            await self._save_caches(self._save_context(name, projection))
        if self._applied - self._index_seq >= cadence.INDEX_EVERY:
            await self._save_caches(self._save_index())
        return count

    async def fork_context(
        self, name: str, new: str, *, at: str | None = None, actor: str = ""
    ) -> ForkOrigin:
        """Create context ``new`` holding a copy of context ``name`` as of snapshot ``at``
        (None: as it is now), and return where it came from.

        Two events in one transaction: the creation, which records the origin (source,
        snapshot, episode, and the source's event the copy reflects), and the copy itself
        (the state in the checkpoints' compact form, and where the source's ids stopped, so
        the fork's new ids never collide with copied ones). The fork has no snapshots of its
        own yet; commands on it never touch the source. Refused with nothing written:
        ``ContextExists``, ``InvalidName``, ``UnknownContext``, ``UnknownSnapshot``,
        ``ReadOnlyWorkspace``."""
        self._check_writable()
        check_context_name(new)
        check_actor(actor)
        if new in self._heads:
            raise ContextExists(f"context {new!r} already exists", name=new)
        await self.load(name)
        await self._unpacked(name)
        copy: tuple[ForkOrigin, dict[str, Any]] | None = None
        if at is not None:
            entry = self.snapshot(name, at)
            if entry.stream_seq == self._projection(name).stream_seq:
                source = self._projection(name)  # the newest event recorded it: now is then
            else:
                source = await self._rebuild(name, entry)
            copy = fork_copy(name, at, source)  # now: a later rebuild may replay it on

        def decide(others: Sequence[StoredEvent]) -> list[NewEvent]:
            nonlocal copy
            for event in others:
                self._apply(event)
            if new in self._heads:
                raise ContextExists(f"context {new!r} already exists", name=new)
            if copy is None:
                copy = fork_copy(name, None, self._projection(name))
            stream = CONTEXT_PREFIX + new
            created = {"name": new, "forked_from": copy[0].to_json()}
            return [
                NewEvent(stream, "context.created", created, actor),
                NewEvent(stream, FORKED, copy[1], actor),
            ]

        stored = await self._execute(decide)
        for event in stored:
            self._apply(event)
        assert copy is not None
        return copy[0]

    async def run(
        self, name: str, command: ContextCommand | Mapping[str, Any], *, actor: str = ""
    ) -> ContextResult:
        """Validate and apply one context command (a model from ``engine.context.commands``,
        or its JSON form), and append it as one event.

        A refused command raises a ``ContextError`` and leaves the workspace as it was.
        """
        [result] = await self.run_many(name, [command], actor=actor)
        return result

    async def run_many(
        self,
        name: str,
        commands: Sequence[ContextCommand | Mapping[str, Any]],
        *,
        actor: str = "",
    ) -> list[ContextResult]:
        """Several commands in one transaction, one event each: all are appended, or none.

        Every command is checked before anything else happens; the first refusal raises its
        ``ContextError`` and the workspace is then as it was.
        """
        from engine.context.commands import FORMAT, parse_command  # see ContextProjection.apply

        # Each runs as it is stored and replayed (through JSON: string keys, lists, no NaN), so
        # the live projection never differs from a replay of the log.
        self._check_writable()
        check_actor(actor)
        parsed = [parse_command(command) for command in commands]
        if self._needs_reload:
            await self._reload(set(self._needs_reload))
        await self.load(name)
        await self._unpacked(name)
        results: list[ContextResult] = []
        recorded: list[dict[str, Any]] = []  # their JSON forms, as the events store them
        projection: ContextProjection | None = None
        stream = CONTEXT_PREFIX + name

        def decide(others: Sequence[StoredEvent]) -> list[NewEvent]:
            nonlocal projection
            self._deciding = True
            for event in others:
                self._apply(event)
            now = self.now_ns()  # after the others: a step they hold dates this too
            projection = self._projection(name)
            events = []
            for command, stored in parsed:
                result = projection.apply(command, now)
                results.append(result)
                recorded.append(result.to_json())
                payload = {"command": stored, "result": recorded[-1], "v": FORMAT}
                events.append(NewEvent(stream, f"context.{command.op}", payload, actor, now))
            return events

        try:
            stored = await self._execute(decide, touched=lambda: [name] if results else [])
        except ContextError:
            if results:  # refused after others in the batch were applied: undo them
                await self._reload([name])
            raise
        assert projection is not None
        first = projection.stream_seq
        for event, result in zip(stored, recorded, strict=True):
            projection.committed(event.seq, event.stream_seq, result)
        self._applied = stored[-1].seq
        self._note(name, stored[-1].seq, stored[-1].stream_seq)
        # The command is in the log: saving caches after it may fail, but must not say it did.
        mark = self._context_streams.archive_due(projection, first)
        if mark is not None:
            await self._save_caches(self._archive(name, projection, mark))
        if self._context_streams.checkpoint_due(projection):
            await self._save_caches(self._save_context(name, projection))
        if self._applied - self._index_seq >= cadence.INDEX_EVERY:
            await self._save_caches(self._save_index())
        return results

    # -- convenience commands (their JSON forms; ``run`` checks them) --------------------------
    async def insert(self, name: str, selector: str, component: dict[str, Any]) -> ContextResult:
        return await self.run(name, {"op": "insert", "selector": selector, "component": component})

    async def add_message(self, name: str, role: str, text: str) -> ContextResult:
        return await self.run(name, {"op": "message", "role": role, "text": text})

    async def advance(self, name: str) -> ContextResult:
        return await self.run(name, {"op": "advance"})

    async def seal(self, name: str, trigger: str = "checkpoint") -> ContextResult:
        return await self.run(name, {"op": "seal", "trigger": trigger})
