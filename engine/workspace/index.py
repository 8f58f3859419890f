"""The workspace index (``workspace:index``): which contexts exist, where each one's stream ends,
and each one's numbers; and the version-2 checkpoint it replaced, read once to migrate."""

from __future__ import annotations

import contextlib
from typing import Any

from engine.store import InvalidCheckpoint, StreamHead
from engine.workspace import cadence
from engine.workspace.checkpoints import (
    decode_checkpoint,
    encode_checkpoint,
    merge_index,
    parse_index,
    parse_origins,
)
from engine.workspace.errors import CACHE_ERRORS
from engine.workspace.keys import (
    CHECKPOINT_VERSION,
    INDEX_CHECKPOINT,
    LEGACY_CHECKPOINT,
    LEGACY_VERSION,
)
from engine.workspace.projection import ContextProjection
from engine.workspace.state import WorkspaceState
from engine.workspace.types import ContextInfo


class WorkspaceIndex(WorkspaceState):
    """Reading and saving the index."""

    async def _read_index(self) -> tuple[int, dict[str, ContextProjection]]:
        """Take in the stored index; returns the seq it reflects, and the contexts a version-2
        checkpoint restored if there was no index yet."""
        try:
            checkpoint = await self.store.load_checkpoint(INDEX_CHECKPOINT)
            if checkpoint is None:
                return await self._read_legacy()
            index = decode_checkpoint(checkpoint.data)
            entries = parse_index(index)
            self._origins.update(parse_origins(index))
            if checkpoint.seq > self.store.cursor and checkpoint.seq > await self.store.head():
                raise InvalidCheckpoint(f"the index is at event {checkpoint.seq}, past the log")
        except CACHE_ERRORS as error:
            # A cache: without it, the contexts are found in the log (their checkpoints remain).
            self.checkpoint_problem = (
                f"the workspace index could not be used ({error}); read the log instead"
            )
            return 0, {}
        for name, (seq, stream_seq, summary) in entries.items():
            self._heads[name] = StreamHead(seq, stream_seq)
            if summary is not None:
                at, *numbers = summary
                self._summaries[name] = (at, ContextInfo(name, *numbers))
        self._index_seq, self._index_basis = checkpoint.seq, entries
        return checkpoint.seq, {}

    async def _read_legacy(self) -> tuple[int, dict[str, ContextProjection]]:
        """A version-2 checkpoint holds every context as of its seq: read once, to migrate."""
        try:
            checkpoint = await self.store.load_checkpoint(LEGACY_CHECKPOINT)
            if checkpoint is None:
                return 0, {}
            data = decode_checkpoint(checkpoint.data)
            if not isinstance(data, dict) or data.get("version") != LEGACY_VERSION:
                raise InvalidCheckpoint("not a version-2 checkpoint")
            restored = {
                name: ContextProjection.restore(state) for name, state in data["contexts"].items()
            }
        except CACHE_ERRORS as error:
            problem = f"the checkpoint could not be used ({error}); replayed the log"
            self.checkpoint_problem = problem
            self._legacy = True  # replaced all the same, once the index is saved
            return 0, {}
        self._legacy = True
        for name, projection in restored.items():
            self._heads[name] = StreamHead(projection.seq, projection.stream_seq)
        return checkpoint.seq, restored

    async def _save_index(self) -> None:
        """Save what this process knows of every context, if the stored index may not know it,
        merged with the stored one: for each context, the later end and the later numbers."""
        entries = self._index_entries()
        if entries == self._index_basis and self._applied - self._index_seq < cadence.INDEX_EVERY:
            # Nothing new about the contexts, and the log has not moved on far since (a
            # workspace of documents moves it without touching any context: saved all the
            # same, opening reads the streams' ends after it rather than over the whole log).
            return
        seq = self._applied
        merged = {name: [*entry] for name, entry in entries.items()}
        with contextlib.suppress(*CACHE_ERRORS):  # a stored index that cannot be read is replaced
            stored = await self.store.load_checkpoint(INDEX_CHECKPOINT)
            if stored is not None:
                index = decode_checkpoint(stored.data)
                theirs = parse_index(index)
                for name, origin in parse_origins(index).items():
                    self._origins.setdefault(name, origin)
                seq = max(seq, stored.seq)
                merge_index(merged, theirs)
                for name, (_, _, summary) in theirs.items():
                    if summary is not None and name not in self._contexts:
                        known = self._summaries.get(name)
                        if known is None or summary[0] > known[0]:
                            self._summaries[name] = (summary[0], ContextInfo(name, *summary[1:]))
        for name, projection in self._contexts.items():
            if projection.forked_from is not None:
                self._origins[name] = projection.forked_from
        origins = {name: origin.to_json() for name, origin in sorted(self._origins.items())}
        index = {"version": CHECKPOINT_VERSION, "contexts": merged, "origins": origins}
        await self.store.save_checkpoint(INDEX_CHECKPOINT, seq, encode_checkpoint(index))
        self._index_seq, self._index_basis = max(self._index_seq, seq), entries

    def _index_entries(self) -> dict[str, list[Any]]:
        """Each context: ``[seq, stream_seq, summary]``, where its stream ends as known here and
        its numbers as ``[stream_seq, episode, items, depth, snapshots]`` (or None)."""
        entries: dict[str, list[Any]] = {}
        for name, head in sorted(self._heads.items()):
            projection = self._contexts.get(name)
            if projection is not None and name not in self._needs_reload:
                at, info = projection.stream_seq, projection.info(name)
            elif name in self._summaries:
                at, info = self._summaries[name]
            else:
                entries[name] = [head.seq, head.stream_seq, None]
                continue
            summary = [at, info.episode, info.items, info.depth, info.snapshots]
            entries[name] = [head.seq, head.stream_seq, summary]
        return entries
