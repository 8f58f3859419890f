"""The one time-travel component: the context screen (through its snapshots) and the document
screen (through its events) step through the past with the same keys, the same actions and the
same palette commands; each screen says only what a position is.

A position is an ``int`` (a snapshot's index; a count of events) or ``None``: live. The screen
keeps it in its ``position`` var and validates it there (past the newest is live, before the
first is the first), so the actions here only say which way to go.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from textual.app import SystemCommand
from textual.binding import BindingType

from ..keymap import bind
from .mode import ModeScreen


class TimeTravel(ModeScreen):
    """A screen that shows its past: ``[`` ``]`` ``{`` ``}`` and ``d`` (the keys in force).

    The screen puts ``TIME_BINDINGS`` where its footer should show them, in its ``BINDINGS``
    (a base class's bindings would come first in the footer, before the screen's own)."""

    TIME_BINDINGS: ClassVar[list[BindingType]] = [
        bind("earlier", "earlier", "◀", tooltip="one step back (a snapshot, an event)"),
        bind("later", "later", "▶", tooltip="one step forward (past the newest: live)"),
        bind("first", "first", "First", show=False, tooltip="the first (snapshot, event)"),
        bind("live", "live", "Live", tooltip="return to live"),
        bind("diff", "diff", "Diff", tooltip="mark this point as the diff's base, or clear it"),
    ]
    FIRST: ClassVar[int] = 0
    """The first position there is (the oldest snapshot; a document after its creation)."""
    UNIT: ClassVar[str] = "snapshot"
    """What one step goes through, as the palette names it."""

    position: int | None
    """Declared by the screen as a ``var``: the position shown, None at live."""

    def newest_past(self) -> int:
        """The newest position before live (``[`` at live goes there)."""
        raise NotImplementedError

    def travel(self, position: int | None) -> None:
        """Show ``position`` (None: live)."""
        self.position = position

    def action_earlier(self) -> None:
        """One step back; from live, to the newest position before it."""
        position = self.position
        self.travel(position - 1 if position is not None else self.newest_past())

    def action_later(self) -> None:
        """One step forward; past the newest is live."""
        if self.position is not None:
            self.travel(self.position + 1)

    def action_first(self) -> None:
        self.travel(self.FIRST)

    def action_live(self) -> None:
        self.travel(None)

    def action_diff(self) -> None:
        """Mark the point shown as the diff's base, or clear the diff."""
        raise NotImplementedError

    def time_commands(self) -> Iterator[SystemCommand]:
        """The palette's commands of time travel, the same on each screen."""
        unit = self.UNIT
        yield SystemCommand("Return to live", "leave the past", self.action_live)
        yield SystemCommand(
            "Diff: mark or clear the base", f"compare two {unit}s", self.action_diff
        )
        yield SystemCommand(f"First {unit}", f"jump to the oldest {unit}", self.action_first)
