"""Injected sources of ids and time.

The engine never reads the wall clock or draws random ids on its own: a ``Context`` is given an
``IdFactory`` and a ``Clock``. Tests and the step control pass deterministic ones, so replaying
the same operations produces byte-identical exports.
"""

from __future__ import annotations

import time
import uuid
from typing import Protocol


class IdFactory(Protocol):
    def __call__(self) -> str: ...


class Clock(Protocol):
    def now_ns(self) -> int: ...


class RandomIds:
    """64-bit random hex ids: short enough to read in a tree, unique enough for a workspace."""

    def __call__(self) -> str:
        return uuid.uuid4().hex[:16]


class SequentialIds:
    """``n1, n2, …``: deterministic ids for tests, demos and replays."""

    def __init__(self, prefix: str = "n", start: int = 1) -> None:
        self.prefix = prefix
        self.next = start

    def __call__(self) -> str:
        value = self.next
        self.next += 1
        return f"{self.prefix}{value}"


class SystemClock:
    def now_ns(self) -> int:
        return time.time_ns()


class FixedClock:
    """Reads whatever ``now`` was last set to: replay sets it to each event's recorded time."""

    def __init__(self, now: int = 0) -> None:
        self.now = now

    def now_ns(self) -> int:
        return self.now


class SteppingClock:
    """A simulated clock: every reading advances it by ``step`` nanoseconds."""

    def __init__(self, start: int = 0, step: int = 1) -> None:
        self._now = start
        self.step = step

    def now_ns(self) -> int:
        self._now += self.step
        return self._now
