"""An item's story, told from the log."""

from __future__ import annotations

import contextlib

from engine.context.errors import NotFound
from engine.context.story_index import StoryIndex, tell
from engine.context.timeline import ItemStory, StoryEvent
from engine.context.tree import Node
from engine.store import StoredEvent
from engine.workspace import cadence
from engine.workspace.errors import ReplayDiverged
from engine.workspace.keys import CONTEXT_PREFIX
from engine.workspace.projection import ContextProjection, Followed
from engine.workspace.queries import Queries


class ItemStories(Queries):
    """An item's story, with the replay that told it kept for the next ask."""

    # -- an item's story ------------------------------------------------------------------------
    async def item_story(self, name: str, item_id: str, at: str | None = None) -> list[StoryEvent]:
        """What happened to an item, told from the log (born, moved, replaced, staged), up to
        now or to snapshot ``at``, then what is due for it. ``NotFound`` if it is not there.

        Read from the context's story index (``engine.context.story_index``): the events
        that named the item, and the shifts since its birth. An item whose birth the index
        does not hold (recorded before events carried changelogs, or copied by a fork) is
        told by replaying the context's stream from the archive before its birth, whatever
        this process loaded, and the replay is kept: asked again after more events, it
        replays only those. One item is followed at a time.
        """
        view = await self.view(name, at)
        node = view.find(item_id)
        if node is None or node.item is None or node.created_at_ns is None:
            raise NotFound(f"context {name!r} has no item {item_id!r} there", item=item_id)
        entry = self.snapshot(name, at) if at is not None else None
        told = await self._story_read(name, item_id, node, entry.seq if entry else None)
        if told is not None:
            return told
        until = entry.stream_seq if entry is not None else self.applied(name)
        async with self._story_lock:
            followed = self._followed
            if followed is None or (followed.name, followed.story.item_id) != (name, item_id):
                stream = CONTEXT_PREFIX + name
                born = await self.store.first_at(stream, node.created_at_ns) or 1
                before = await self._state_before(name, born - 1)
                followed = self._followed = Followed(name, before, ItemStory(item_id))
            story, context = followed.story, followed.projection.context

            def observe(event: StoredEvent) -> None:
                story.observe(context, op=event.type.removeprefix("context."), seq=event.seq)

            try:
                await self._replay_up_to(name, followed.projection, until, observe)
            except ReplayDiverged as error:
                cached_from = followed.projection.cached_from
                if cached_from is None:
                    raise  # replayed from the stream's start: the log is at fault
                self._followed = None
                self._cache_not_replayed(name, cached_from, error)
                followed = Followed(name, await self._fresh(name), ItemStory(item_id))
                story, context = followed.story, followed.projection.context
                await self._replay_up_to(name, followed.projection, until, observe)
                self._followed = followed
        return followed.story.told(node, until=entry.seq if entry is not None else None)

    def read_story_index(self, name: str) -> None:
        """Decode now the story index a checkpoint saved for the loaded context ``name`` (a
        no-op once read): a reader calls it while idle, so the first story does not wait."""
        index = self._projection(name).stories
        if index is not None:
            with contextlib.suppress(ValueError):  # unreadable: the first story indexes again
                index.events("")

    async def _story_read(
        self, name: str, item_id: str, node: Node, until: int | None
    ) -> list[StoryEvent] | None:
        """The story read from the events the context's story index names (none replayed);
        None where the index cannot tell it (``story_index.tell``)."""
        projection = self._projection(name)
        index = projection.stories
        try:
            seqs = index.events(item_id) if index is not None else None
        except ValueError:  # saved by a checkpoint, and unreadable: indexed again
            seqs = None
        if index is None or seqs is None:
            index = await self._index_stories(name, projection)
            seqs = index.events(item_id)
        named = []
        for seq in seqs:
            if seq < 0 or (until is not None and seq > until):
                continue
            event = (await self.store.read(seq - 1, limit=1))[0]
            result = event.payload.get("result") if isinstance(event.payload, dict) else None
            changes = result.get("changes") if isinstance(result, dict) else None
            if not isinstance(changes, dict):
                return None
            named.append((seq, changes))
        return tell(item_id, node, named, index, until=until)

    async def _index_stories(self, name: str, projection: ContextProjection) -> StoryIndex:
        """Index the changelogs stored in the context's stream up to where ``projection`` is
        (its checkpoint was written before the index was kept); saved with its next one."""
        index, done, stream = StoryIndex(), 0, CONTEXT_PREFIX + name
        while done < projection.stream_seq:
            wanted = projection.stream_seq - done
            batch = await self.store.read_stream(
                stream, done, limit=min(cadence.READ_BATCH, wanted)
            )
            if not batch:
                break
            for event in batch:
                result = event.payload.get("result") if isinstance(event.payload, dict) else None
                changes = result.get("changes") if isinstance(result, dict) else None
                with contextlib.suppress(KeyError, TypeError, ValueError, AttributeError):
                    index.note(event.seq, changes)  # a malformed one names nothing
            done = batch[-1].stream_seq
        if self._contexts.get(name) is projection and done == projection.stream_seq:
            projection.stories, projection.stories_unsaved = index, True
        return index
