"""A big context's turns kept in pieces beside its checkpoint, read when first needed.

A context of a gigabyte of messages (an imported agent's conversation) had a checkpoint of a
gigabyte, read and hashed whole before the first paint, which draws a few dozen turns. Its
checkpoint now keeps the records of the turns a reader draws first (``compact.DRAWN_FIRST`` at
each end of the history) and, once the turns between take ``PIECE_BYTES`` or more, keeps those
in pieces: each a checkpoint of its own, ``workspace:turns:<context>:<sha256>``, named by its
digest, which the checkpoint lists with each piece's length (``compact.in_pieces`` lays them
out). A piece holds whole turns, so a checkpoint saved again reuses every piece whose turns did
not change: saving a context that grew by a few turns writes its last piece and its checkpoint.

Opening reads the checkpoint alone; a turn in a piece reads that piece when it is first decoded
(``StoredPieces.piece``: on a store that can read in the calling thread, ``reads_blocking``),
and a reader that has drawn the context reads every piece as it awaits (``read_all``, from
``Workspace.unpacking``) before decoding the rest. A store that cannot read in the calling
thread (PostgreSQL's) has every piece read as the context is restored. Each piece read is
checked against the length and digest the checkpoint lists (the store checks its own digest
too): a piece missing or not matching is ``MalformedPackedTurns``, and the context is rebuilt
from its log as for any packed turn found malformed.

Saving writes the pieces first, then the checkpoint, which forgets in the same transaction the
context's pieces it does not list (those at or before its event: a piece another process wrote
for a later checkpoint stays). Two processes saving the same context's checkpoint at the same
moment can leave the later one listing a piece the other forgot; its reader then rebuilds the
context from the log, and the next save writes the piece again.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Collection
from typing import Any, NamedTuple

from engine.context.compact import DRAWN_FIRST, in_pieces
from engine.context.errors import MalformedPackedTurns
from engine.store import Checkpoint, EventStore, InvalidCheckpoint, StoreError
from engine.workspace.keys import PIECE_PREFIX

# A piece ends at the first turn's end at or past this many bytes of records.
PIECE_BYTES = 4 << 20


def pieces_prefix(context: str) -> str:
    """What the names of context ``context``'s pieces start with."""
    return f"{PIECE_PREFIX}{context}:"


class Laid(NamedTuple):
    """A context checkpoint's records as saved: those kept in the checkpoint, and its pieces
    by name."""

    kept: bytes
    pieces: dict[str, bytes | memoryview]


def lay_out(context: str, data: dict[str, Any], packed: bytes) -> Laid:
    """``dump_packed``'s records of context ``context`` (``data``: its projection's data,
    given the ``pieces`` entry of its compact form listing them, digests included) laid out in
    pieces, if they are big enough to have any; its story index then in a piece too (listed
    as ``stories``: its digest and length)."""
    kept, pieces = in_pieces(data["context"], packed, DRAWN_FIRST, PIECE_BYTES)
    if not pieces:
        return Laid(kept, {})
    digests = [hashlib.sha256(piece).hexdigest() for piece in pieces]
    data["context"]["pieces"]["digests"] = digests
    stories = data.get("stories")
    if isinstance(stories, str):
        piece = stories.encode()
        digest = hashlib.sha256(piece).hexdigest()
        data["stories"] = {"digest": digest, "length": len(piece)}
        pieces.append(memoryview(piece))
        digests = [*digests, digest]
    prefix = pieces_prefix(context)
    return Laid(
        kept, {prefix + digest: piece for digest, piece in zip(digests, pieces, strict=True)}
    )


def stored_pieces(store: EventStore | None, context: str, data: Any) -> StoredPieces | None:
    """Where context ``context``'s records and story index in pieces are read, for ``data``
    (its projection's data, from a checkpoint); None if it has none. ``InvalidCheckpoint`` if
    they are listed without their digests, or there is no store to read them from."""
    compact = data.get("context") if isinstance(data, dict) else None
    entry = compact.get("pieces") if isinstance(compact, dict) else None
    if entry is None:
        return None
    digests = entry.get("digests") if isinstance(entry, dict) else None
    lengths = entry.get("lengths") if isinstance(entry, dict) else None
    if not (isinstance(digests, list) and isinstance(lengths, list)):
        raise InvalidCheckpoint("its turns' pieces are listed without digests or lengths")
    stories = data.get("stories")
    if isinstance(stories, dict):  # and its story index, after them
        digests = [*digests, stories.get("digest")]
        lengths = [*lengths, stories.get("length")]
    if len(digests) != len(lengths) or not all(
        isinstance(digest, str) and len(digest) == 64 for digest in digests
    ):
        raise InvalidCheckpoint("its pieces' digests are not one SHA-256 each")
    if store is None:
        raise InvalidCheckpoint("its turns are in pieces, and nothing to read them from")
    return StoredPieces(store, context, digests, lengths, stories=isinstance(stories, dict))


class StoredPieces:
    """A context's pieces in the store (``compact.TurnPieces``): each read once, when first
    needed or all at once, and checked against the checkpoint's list."""

    def __init__(
        self,
        store: EventStore,
        context: str,
        digests: list[str],
        lengths: list[Any],
        *,
        stories: bool = False,
    ) -> None:
        self._store = store
        self._stories = stories  # the last piece holds the story index
        self.names = [pieces_prefix(context) + digest for digest in digests]
        self._digests = digests
        self._lengths = lengths
        self._read: dict[int, memoryview] = {}  # the pieces' bytes, while turns need them
        self._sound: set[int] = set()  # the pieces read and found to be those listed

    @property
    def complete(self) -> bool:
        """Whether every piece has been read."""
        return len(self._sound) == len(self.names)

    def stories(self) -> bytes:
        """The story index kept in the last piece, read now if not read yet (let go of
        once it is decoded)."""
        last = len(self.names) - 1
        text = bytes(self.piece(last))
        self._read.pop(last, None)
        return text

    @property
    def held(self) -> int:
        """How many bytes of pieces are held in memory now."""
        return sum(len(view) for view in self._read.values())

    def read_names(self) -> Collection[str]:
        """The pieces read and found to be what the checkpoint lists."""
        return [self.names[index] for index in sorted(self._sound)]

    def release(self) -> None:
        """Let go of the pieces' bytes once every turn is decoded (a gigabyte, for an
        imported conversation's context): one read again is read anew. The story index's
        is kept until it is decoded (it is read when a story is first asked for)."""
        last = len(self.names) - 1
        kept = self._read.get(last) if self._stories else None
        self._read = {} if kept is None else {last: kept}

    def piece(self, index: int) -> memoryview:
        found = self._read.get(index)
        if found is not None:
            return found
        name = self.names[index]
        if not self._store.reads_blocking:
            raise MalformedPackedTurns(f"piece {name!r} of the checkpoint's turns was not read")
        try:
            checkpoint = self._store.load_checkpoint_blocking(name)
        except StoreError as error:
            raise MalformedPackedTurns(f"piece {name!r} cannot be read ({error})") from None
        return self._checked(index, checkpoint, _digest(checkpoint))

    async def read_all(self) -> None:
        """Read every piece not read yet, as the caller awaits (each hashed off the event
        loop): afterwards no turn of the context reads one."""
        for index, name in enumerate(self.names):
            if index in self._sound:
                continue
            try:
                checkpoint = await self._store.load_checkpoint(name)
            except StoreError as error:
                raise MalformedPackedTurns(f"piece {name!r} cannot be read ({error})") from None
            self._checked(index, checkpoint, await asyncio.to_thread(_digest, checkpoint))

    def _checked(self, index: int, checkpoint: Checkpoint | None, digest: str) -> memoryview:
        """Piece ``index`` as read (``digest``: its bytes' SHA-256), if it is the one listed."""
        name = self.names[index]
        if checkpoint is None:
            raise MalformedPackedTurns(f"piece {name!r} of the checkpoint is missing")
        if len(checkpoint.data) != self._lengths[index] or digest != self._digests[index]:
            raise MalformedPackedTurns(f"piece {name!r} is not the piece the checkpoint lists")
        view = memoryview(checkpoint.data)
        self._read[index] = view
        self._sound.add(index)
        return view


def _digest(checkpoint: Checkpoint | None) -> str:
    return "" if checkpoint is None else hashlib.sha256(checkpoint.data).hexdigest()
