"""The ``Workspace``: one class made of the workspace's roles, each in its own module."""

from __future__ import annotations

from engine.heap import collector_paused
from engine.workspace.changelogs import Changelogs
from engine.workspace.lifecycle import Lifecycle
from engine.workspace.stories import ItemStories


class Workspace(Lifecycle, ItemStories, Changelogs):
    """Open with ``await Workspace.open(path, create=True)``; close with ``await ws.close()``.

    Its methods come from its roles (``engine/workspace/__init__.py`` says which module holds
    which); the state they share is ``WorkspaceState``'s.
    """

    def build_indexes(self, name: str) -> None:
        """Build now what opening the loaded context ``name`` left for later (its indexes,
        ``Context.build_indexes``; its story index, ``read_story_index``), then freeze the heap
        (``heap.py``): a reader calls it once the context is on screen, when what the process
        holds (the context, its indexes, the screen showing it) lives as long as the
        workspace, so that no later full collection walks it again (at 100,000 items one
        walked about 500,000 references: 100-250 ms)."""
        with collector_paused(freeze=True):
            self.context(name).build_indexes()
            self.read_story_index(name)
