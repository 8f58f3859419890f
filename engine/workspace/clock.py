"""Protocol time (``engine/protocol_time.py``): the clock, stepped ahead when the workspace is
made stepped, shared by every process through the ``clock`` stream."""

from __future__ import annotations

from collections.abc import Sequence

from engine.protocol_time import ADVANCED, CLOCK_STREAM, STEPPED, advance_payload
from engine.store import NewEvent, StoredEvent
from engine.workspace.checks import check_actor
from engine.workspace.feed import ChangeFeed


class ProtocolClock(ChangeFeed):
    """Protocol time, and stepping it."""

    def now_ns(self) -> int:
        """Protocol time: the clock, plus how far a stepped workspace was stepped ahead (as
        of the events this process has taken in; a command reads it after the others')."""
        return self._clock() + self._time.ahead_ms * 1_000_000

    @property
    def time_stepped(self) -> bool:
        """Whether this workspace's protocol time may be stepped ahead (``make_stepped``)."""
        return self._time.stepped

    @property
    def time_ahead_ms(self) -> int:
        """How far protocol time was stepped ahead of the clock, in every process."""
        return self._time.ahead_ms

    async def make_stepped(self, *, human: str) -> bool:
        """Let protocol time be stepped ahead in this workspace, for good and for every process
        (``clock.stepped``); False if it already was."""
        check_actor(human)
        self._check_writable()

        def decide(others: Sequence[StoredEvent]) -> list[NewEvent]:
            for other in others:
                self._apply(other)
            if self._time.stepped:
                return []
            return [NewEvent(CLOCK_STREAM, STEPPED, {"by": human}, human, self.now_ns())]

        stored = await self._execute(decide)
        for event in stored:
            self._apply(event)
        return bool(stored)

    async def step_time(self, seconds: int, *, human: str) -> int:
        """Move protocol time ``seconds`` ahead (``clock.advanced``, shared by every process)
        and return how far ahead it now is, in ms. ``ClockNotStepped`` unless the workspace was
        made stepped; ``InvalidRequest`` for a step that is not 1 s to a day. It fires
        nothing: ``tick_document`` does, in whichever process runs it next."""
        check_actor(human)
        self._check_writable()
        advance_payload(self._time, seconds)  # refused before a transaction is opened

        def decide(others: Sequence[StoredEvent]) -> list[NewEvent]:
            for other in others:
                self._apply(other)
            payload = advance_payload(self._time, seconds)
            # Dated at the new time: the step is the first thing that happens there.
            now = self.now_ns() + payload["byMs"] * 1_000_000
            return [NewEvent(CLOCK_STREAM, ADVANCED, {**payload, "by": human}, human, now)]

        stored = await self._execute(decide)
        for event in stored:
            self._apply(event)
        return self._time.ahead_ms
