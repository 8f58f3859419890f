"""Protocol time: the clock a workspace dates its events by and fires its windows at.

It is the injected clock (the wall clock, live) plus how far the custodians of a **stepped**
workspace moved it ahead. Both are events of the workspace's ``clock`` stream, so every process
that opens the file reads the same time and it survives a restart:

- ``clock.stepped`` (once, first): the workspace's time may be stepped ahead, for good;
- ``clock.advanced`` ``{"byMs": n}``: protocol time moved ``n`` ms ahead.

A workspace without ``clock.stepped`` follows the wall clock, and stepping it is refused
(``ClockNotStepped``): stepping a workspace people share would end their objection windows and
locks early and evict agents still working. Time only moves forward, so events stay in time
order whichever process writes them (see docs/protocol.md, "Time on the custodian's screen").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.protocol.errors import InvalidRequest, ProtocolError
from engine.store import StoredEvent

CLOCK_STREAM = "clock"
STEPPED = "clock.stepped"
ADVANCED = "clock.advanced"
MAX_STEP_S = 86_400  # one step: at most a day


class ClockNotStepped(ProtocolError):
    code = "clock.not_stepped"  # this workspace follows the wall clock


@dataclass(slots=True)
class ProtocolTime:
    """The ``clock`` stream folded: whether time may be stepped, and how far ahead it is."""

    stepped: bool = False
    ahead_ms: int = 0
    seq: int = 0  # the global seq of the last clock event taken in

    def apply(self, event: StoredEvent) -> None:
        """Take in one event of the ``clock`` stream (one already taken in is skipped)."""
        if event.seq <= self.seq:
            return
        self.seq = event.seq
        if event.type == STEPPED:
            self.stepped = True
        elif event.type == ADVANCED:
            self.ahead_ms += int(event.payload["byMs"])


def advance_payload(time: ProtocolTime, seconds: object) -> dict[str, Any]:
    """The ``clock.advanced`` payload for a step of ``seconds``; ``ClockNotStepped`` on a
    wall-clock workspace, ``InvalidRequest`` for a step that is not 1 s to a day."""
    if not time.stepped:
        raise ClockNotStepped(
            "protocol time follows the wall clock in this workspace: only a workspace made"
            " stepped (the demo, or --step-time) can be stepped ahead"
        )
    if type(seconds) is not int or not 1 <= seconds <= MAX_STEP_S:
        raise InvalidRequest(
            f"a step of {seconds!r} s: give whole seconds from 1 to {MAX_STEP_S}",
            code="clock.invalid_step",
        )
    return {"byMs": seconds * 1000}
