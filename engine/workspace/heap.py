"""The one place the workspace touches the process's cyclic garbage collector.

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
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

THRESHOLDS = (700, 10, 1000)  # gc.set_threshold's: CPython's (700, 10, 10), full ones rarer


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
            gc.freeze()
            gc.set_threshold(*THRESHOLDS)
        if enabled:
            gc.enable()
