"""The ``Workspace``: one class made of the workspace's roles, each in its own module."""

from __future__ import annotations

from engine.workspace.changelogs import Changelogs
from engine.workspace.lifecycle import Lifecycle
from engine.workspace.stories import ItemStories


class Workspace(Lifecycle, ItemStories, Changelogs):
    """Open with ``await Workspace.open(path, create=True)``; close with ``await ws.close()``.

    Its methods come from its roles (``engine/workspace/__init__.py`` says which module holds
    which); the state they share is ``WorkspaceState``'s.
    """
