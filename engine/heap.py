"""The one place the project touches the process's cyclic garbage collector: while loading,
and while a process starts.

Loading a checkpoint allocates a container per item and none of them is garbage; left on, the
cyclic collector walks the growing heap again and again (it doubled load time), so it is paused
while a checkpoint is read or a stream replayed. What is loaded to be kept (a context or a
document loaded for the life of the workspace) is then frozen: ``gc.freeze`` moves every object
alive in the process, not only the workspace's, out of the collector's sight, so that no full
collection walks it again. Objects frozen are never collected, even once unreachable: that is
the price of loading a large context in half the time, and why only loading for good freezes.

With the loaded heap frozen, the collector's own measure of the long-lived heap (what its full
collections walk) is small, so its rule "a full collection once the survivors since the last
one are a quarter of it" fired every 70,000 net allocations: about ten full collections in a
short session at 100,000 items, each walking every container made since the freeze (the
selector's matches, layouts, Textual's render caches: 100-450 ms each on a loaded machine).
So a freeze also sets the collector's thresholds, here and only here (``THRESHOLDS``): young
collections as before, a full one 100 times less often (the young generations still reclaim
the cycles that die young, which is nearly all of them).

A process's start is the same case: the app's imports (a thousand modules, every class and
function of them kept for the process's life), opening its workspace and its first screen make
containers and almost no garbage, and the collector walked that growing heap again and again
(about 40 ms of the app's cold start at 100,000 items). The entry point
(``pact_tui/launch.py``) pauses the collector first (``pause_start``); the command, or the app
once its first frame is drawn, ends the pause (``end_start``), freezing what the start made.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

THRESHOLDS = (700, 10, 1000)  # gc.set_threshold's: CPython's (700, 10, 10), full ones rarer
_starting = False  # whether the collector is paused for the process's start (``pause_start``)


@contextlib.contextmanager
def collector_paused(*, freeze: bool = False) -> Iterator[None]:
    """The cyclic collector off for the block (as it was before, after it); with ``freeze``,
    the whole process's heap is frozen at the end of the block (``gc.freeze``): for loading
    what lives as long as the workspace."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            _freeze()
        if enabled:
            gc.enable()


def pause_start() -> None:
    """Pause the collector for the process's start, until ``end_start`` (a no-op if it is off
    already): the first thing an entry point does, before its imports."""
    global _starting
    if gc.isenabled():
        gc.disable()
        _starting = True


def end_start() -> None:
    """End the pause ``pause_start`` began (a no-op without one): what the start made lives as
    long as the process, so it is frozen, then the collector is on, at ``THRESHOLDS``."""
    global _starting
    if _starting:
        _starting = False
        _freeze()
        gc.enable()


def _freeze() -> None:
    """Every object alive now out of the collector's sight, and its full collections rarer
    (``THRESHOLDS``): what a load for good, or a start, made lives as long as the process."""
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
