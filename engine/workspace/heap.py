"""The one place the workspace touches the process's cyclic garbage collector.

Loading a checkpoint allocates a container per item and none of them is garbage; left on, the
cyclic collector walks the growing heap again and again (it doubled load time), so it is paused
while a checkpoint is read or a stream replayed. What is loaded to be kept (a context or a
document loaded for the life of the workspace) is then frozen: ``gc.freeze`` moves every object
alive in the process, not only the workspace's, out of the collector's sight, so that no full
collection walks it again. Objects frozen are never collected, even once unreachable: that is
the price of loading a large context in half the time, and why only loading for good freezes.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


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
        if enabled:
            gc.enable()
