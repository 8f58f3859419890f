"""The workspace's state, shared by its roles (see ``engine/workspace/__init__.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.documents import DocumentProjection
from engine.protocol_time import ProtocolTime
from engine.store import EventStore, ReadOnlyWorkspace, StoredEvent, StoreError, StreamHead
from engine.workspace.projection import ContextProjection, Followed
from engine.workspace.types import ContextInfo, ForkOrigin

if TYPE_CHECKING:
    from engine.protocol.envelope import Ids
    from engine.protocol.rewind import Rewind


class WorkspaceState:
    """What every role of the workspace shares: the store, the loaded projections, where each
    stream ends, and the few primitives every command uses."""

    def __init__(
        self,
        store: EventStore,
        path: Path | str,
        clock: Callable[[], int],
        *,
        lazy: bool = False,
        ids: Ids | None = None,
    ) -> None:
        self.store = store
        self._ids = ids  # where document decisions get new ids (random unless given)
        self._documents: dict[str, DocumentProjection] = {}  # the loaded documents
        self._doc_pending: dict[str, list[StoredEvent]] = {}  # events arriving while one loads
        self.path = path
        self._clock = clock
        self._time = ProtocolTime()  # the ``clock`` stream: stepped, and how far ahead
        self._lazy = lazy
        self._contexts: dict[str, ContextProjection] = {}  # the loaded contexts
        self._heads: dict[str, StreamHead] = {}  # every context: where its stream ends
        # The numbers of a context as of a place in its stream (from the index, or known to be
        # those of a new, empty context): current while its stream ends there.
        self._summaries: dict[str, tuple[int, ContextInfo]] = {}
        self._origins: dict[str, ForkOrigin] = {}  # forks: where they came from (see _info)
        self._loading: dict[str, list[StoredEvent]] = {}  # events arriving while one loads
        self._load_lock = asyncio.Lock()
        self._applied = 0  # the global seq the workspace reflects
        self._index_seq = 0  # the seq of the index as last read or saved here
        self._index_basis: dict[str, list[Any]] = {}  # ... and what it said, to save only news
        self._legacy = False  # loaded from a version-2 checkpoint, to be replaced on saving
        self._rebuilt: dict[str, ContextProjection] = {}  # past states being scrubbed through
        self._rebuild_locks: dict[str, asyncio.Lock] = {}
        self._rewinds: dict[str, Rewind] = {}  # documents' pasts being stepped through
        self._followed: Followed | None = None  # the item whose story was last told
        self._story_lock = asyncio.Lock()  # one replay of it at a time
        self._closed = False
        self.checkpoint_problem: str | None = None  # why a checkpoint was not used or saved
        self._deciding = False  # whether the running command's decide() has been called
        # Contexts a cancelled command may have left ahead of the log: reloaded before the next.
        self._needs_reload: set[str] = set()
        # Documents a command that failed or was cancelled after deciding may have left ahead of
        # the log: still shown, never saved, fed nothing, and read again (``load_document``).
        self._documents_behind: set[str] = set()
        self._rereads: dict[str, asyncio.Task[None]] = {}  # those being read again meanwhile

    @property
    def read_only(self) -> bool:
        """Opened read-only: looking only, nothing is written (see ``open``)."""
        return self.store.read_only

    def _check_writable(self) -> None:
        if self.store.read_only:
            raise ReadOnlyWorkspace(
                "the workspace was opened read-only: commands cannot run", path=str(self.path)
            )

    @property
    def head(self) -> int:
        """The last event the workspace reflects (loaded contexts may reflect later ones)."""
        return self._applied

    async def _save_caches(self, saving: Awaitable[None]) -> None:
        """Checkpoints and archives are caches: a failure to save one is noted, not raised."""
        try:
            await saving
        except StoreError as error:
            self.checkpoint_problem = f"a checkpoint could not be saved ({error})"

    def _note_cache_problem(self, problem: str) -> None:
        """A checkpoint or archive could not be used: why (the log was read instead)."""
        self.checkpoint_problem = problem
