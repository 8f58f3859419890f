"""Following a conversation directory while gptme writes to it (watchfiles).

Each batch of file changes refreshes the byte indexes (only new bytes are read), verifies again
only what may have changed (:class:`.verify.Verifier`) and catalogues the new lines, so the
search finds them too.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import watchfiles

from .conversation import Conversation
from .index import Refresh
from .verify import Verdict, Verifier


@dataclass(frozen=True, slots=True)
class Update:
    refreshes: list[Refresh]
    changed: list[Verdict]  # verdicts that changed


def update(
    conversation: Conversation, verifier: Verifier, touched: set[Path] | None = None
) -> Update:
    """One step of following: refresh, verify what may have changed, catalogue new lines."""
    refreshes = conversation.refresh()
    changed = verifier.update(refreshes, touched)
    for _ in conversation.catalogue_all():
        pass
    return Update(refreshes, changed)


async def changes(
    directory: Path, stop: asyncio.Event | None = None, poll: int = 1_000
) -> AsyncIterator[set[Path]]:
    """The paths changed in ``directory``, a batch at a time, until ``stop`` is set; every
    ``poll`` milliseconds without a change, an empty batch: look anyway (a stat and two short
    reads per log), so a write made before the watcher was ready is not missed."""
    async for batch in watchfiles.awatch(
        directory,
        stop_event=stop,
        debounce=50,
        step=20,
        recursive=True,
        rust_timeout=poll,
        yield_on_timeout=True,
    ):
        yield {Path(path) for _, path in batch}


async def follow(
    conversation: Conversation,
    verifier: Verifier,
    stop: asyncio.Event | None = None,
    poll: int = 1_000,
) -> AsyncIterator[Update]:
    """An :class:`Update` after each batch of changes in the directory, until ``stop`` is set."""
    async for touched in changes(conversation.directory, stop, poll):
        result = await asyncio.to_thread(update, conversation, verifier, touched)
        if touched or result.changed or any(r.new_lines or r.rewritten for r in result.refreshes):
            yield result
