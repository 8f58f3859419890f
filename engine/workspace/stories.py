"""An item's story, told from the log."""

from __future__ import annotations

from engine.context.errors import NotFound
from engine.context.timeline import ItemStory, StoryEvent
from engine.store import StoredEvent
from engine.workspace.errors import ReplayDiverged
from engine.workspace.keys import CONTEXT_PREFIX
from engine.workspace.projection import Followed
from engine.workspace.queries import Queries


class ItemStories(Queries):
    """An item's story, with the replay that told it kept for the next ask."""

    # -- an item's story ------------------------------------------------------------------------
    async def item_story(self, name: str, item_id: str, at: str | None = None) -> list[StoryEvent]:
        """What happened to an item, told from the log (born, moved, replaced, staged), up to
        now or to snapshot ``at``, then what is due for it. ``NotFound`` if it is not there.

        The context's stream is replayed from the archive before the item's birth, whatever
        this process loaded, and the replay is kept: asked again after more events, it replays
        only those. One item is followed at a time.
        """
        view = await self.view(name, at)
        node = view.find(item_id)
        if node is None or node.item is None or node.created_at_ns is None:
            raise NotFound(f"context {name!r} has no item {item_id!r} there", item=item_id)
        entry = self.snapshot(name, at) if at is not None else None
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
