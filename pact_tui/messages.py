"""Messages the app sends its screens."""

from __future__ import annotations

from textual.message import Message

from engine.workspace import Change


class WorkspaceChanged(Message):
    """Events were applied to the workspace's projections (by any process, this one included)."""

    def __init__(self, change: Change) -> None:
        super().__init__()
        self.change = change
