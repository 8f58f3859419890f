"""Documents (``engine/documents.py``, ``engine.protocol``) and classification frameworks."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from engine.canonical import check_fit
from engine.documents import (
    DOC_CHECKPOINT,
    DOC_PREFIX,
    FRAMEWORKS,
    DocumentInfo,
    DocumentProjection,
)
from engine.heap import collector_paused
from engine.store import Checkpoint, NewEvent, StoredEvent, StoreError
from engine.workspace import cadence
from engine.workspace.checkpoints import decode_checkpoint, encode_checkpoint
from engine.workspace.checks import check_actor, check_text
from engine.workspace.clock import ProtocolClock
from engine.workspace.errors import (
    CheckpointMismatch,
    ContextNotLoaded,
    DocumentReadAgain,
    UnreplayableEvent,
    WorkspaceError,
)
from engine.workspace.keys import DOC_ARCHIVE_PREFIX
from engine.workspace.projection import replay_document_event, unreplayable_document_event
from engine.workspace.repository import Saved, StreamRepository

if TYPE_CHECKING:
    from engine.keys import CustodianKey
    from engine.protocol.audit import AuditRow
    from engine.protocol.commands import Actor, Command
    from engine.protocol.decide import Decision
    from engine.protocol.document import Document
    from engine.protocol.envelope import Ids
    from engine.workspace.trail import TrailPiece


class DocumentsAndFrameworks(ProtocolClock):
    """Loading documents, their commands, their past and their logs; frameworks."""

    # The protocol's modules (pydantic, markdown-it) load with the first document, not on open.
    async def document_names(self) -> list[str]:
        """Every document in the workspace, by name."""
        streams = await self.store.stream_names(DOC_PREFIX)
        return [stream[len(DOC_PREFIX) :] for stream in streams]

    async def list_documents(self) -> list[DocumentInfo]:
        """Every document's numbers (loading each)."""
        return [(await self.load_document(name)).info(name) for name in await self.document_names()]

    async def load_document(self, name: str) -> DocumentProjection:
        """Load a document (if not loaded yet, or if a command may have left it ahead of the
        log) from its stream; ``DocumentNotFound`` if none."""
        projection = self._documents.get(name)
        if projection is not None and name not in self._documents_behind:
            return projection
        async with self._load_lock:
            projection = self._documents.get(name)
            if projection is not None and name not in self._documents_behind:
                return projection
            self._doc_pending[name] = []
            try:
                projection = await self._read_document(name)
                for event in self._doc_pending[name]:
                    if event.seq > projection.seq:
                        replay_document_event(projection, event)
            finally:
                del self._doc_pending[name]
            self._documents[name] = projection
            self._documents_behind.discard(name)
            return projection

    async def check_document(self, name: str) -> None:
        """Raise what ``load_document`` would (``DocumentNotFound``; an event its log cannot
        replay), for a reader of the events that needs no state of the document: its
        checkpoint, when it holds the whole stream, vouches for every event (it was made by
        replaying them), so the document is only loaded when it does not (a checkpoint
        missing, unsound, or with events after it)."""
        if name in self._documents or not await self._document_streams.covered(name):
            await self.load_document(name)

    def _read_again_later(self, name: str) -> None:
        """Document ``name`` may be ahead of the log (a command deciding on it was cancelled
        before it knew whether its transaction committed): read it again from the log in the
        background, the last state decided shown meanwhile. Cancelled by ``close``; a read
        that fails leaves it for the next ``load_document``, which says why."""
        self._documents_behind.add(name)
        if name in self._rereads:
            return

        async def read_again() -> None:
            from engine.protocol.errors import ProtocolError

            try:
                await self.load_document(name)
            except (ProtocolError, WorkspaceError, StoreError):
                pass  # still behind: the next load_document reads it again, and raises this
            finally:
                self._rereads.pop(name, None)

        loop = asyncio.get_running_loop()
        self._rereads[name] = loop.create_task(read_again(), name=f"read-again-{name}")

    async def _read_document(self, name: str) -> DocumentProjection:
        """Document ``name`` from its checkpoint and the events of its stream after it, or, if
        there is no usable checkpoint, from the whole stream (``checkpoint_problem`` says why
        one was not used)."""
        with collector_paused(freeze=True):
            return await self._document_streams.get(name)

    @functools.cached_property
    def _document_streams(self) -> StreamRepository[DocumentProjection]:
        """The documents' repository: checkpoints, catching up, archives (``repository.py``)."""
        return StreamRepository(self.store, DocumentKind(self), self._note_cache_problem)

    async def document_at(self, name: str, count: int) -> Document:
        """Document ``name`` as it was after the first ``count`` events of its stream: a new
        projection (the live one is not touched), to be read, never changed. It starts from
        the latest cache at or before event ``count`` that matches the log (the document's
        checkpoint, else an archive of it, see ``_save_document``), else from the creation,
        and folds the events up to ``count``. Past the end, the document as it is now.
        ``DocumentNotFound`` if there is no such document; ``ValueError`` if ``count`` is below
        1 (the creation)."""
        from engine.protocol.errors import DocumentNotFound

        if count < 1:
            raise ValueError(f"event {count} of document {name!r}: the first is 1, its creation")
        with collector_paused():
            projection = await self._document_streams.before(name, count) or DocumentProjection()
            await self._document_streams.replay_up_to(name, projection, count)
        if projection.stream_seq == 0:
            raise DocumentNotFound(f"no document named {name!r} in {self.path}", document=name)
        return projection.doc

    async def document_past(self, name: str, count: int) -> tuple[Document, bool]:
        """Document ``name`` after its first ``count`` events, the quickest way there, for the
        document screen to show at once: the rewind's own (``document_stepped``) when it holds
        ``count`` or a short way past what it holds, else a fold from the nearest cache
        (``document_at``), which is about half the time of building the rewind there. The
        second value says which (True: stepped); after a fold, ``document_stepped`` of the
        same count builds the rewind, so that the steps that follow are steps. Errors as
        ``document_at``'s."""
        rewind = self._rewinds.get(name)
        if rewind is not None and rewind.first <= count <= rewind.last + cadence.READ_BATCH:
            return await self.document_stepped(name, count), True
        return await self.document_at(name, count), False

    async def document_stepped(self, name: str, count: int) -> Document:
        """Document ``name`` after its first ``count`` events, for stepping through its past
        (the document screen's ``[`` ``]`` and ``:N``): the workspace's rewind of it
        (``engine.protocol.rewind``) steps back or forth to ``count`` event by event, reading
        the events it lacks from the log. Going before the earliest event it holds a record
        of, it starts again from the latest cache at or before ``count`` (``document_at``'s),
        replayed onward; likewise going forward past an archive. Past the end, the document
        as it is now. The document returned is the rewind's own and changes with the next
        call: read it, never change it, and read it again after another call.
        ``DocumentNotFound`` if there is no such document; ``ValueError`` if ``count`` is
        below 1 (the creation)."""
        from engine.protocol.errors import DocumentNotFound
        from engine.protocol.rewind import Rewind

        if count < 1:
            raise ValueError(f"event {count} of document {name!r}: the first is 1, its creation")
        async with self._rebuild_locks.setdefault(DOC_PREFIX + name, asyncio.Lock()):
            with collector_paused():
                rewind = self._rewinds.get(name)
                if rewind is not None and count > rewind.last:
                    # An archive past what it holds is a shorter way there than its replay.
                    places = await self._document_streams.archive_places(name)
                    if any(rewind.last < place <= count for place in places):
                        rewind = None
                if rewind is None or count < rewind.first:
                    self._rewinds.pop(name, None)
                    streams = self._document_streams
                    projection = await streams.before(name, count) or DocumentProjection()
                    await streams.replay_up_to(name, projection, max(1, projection.stream_seq))
                    if projection.stream_seq == 0:
                        raise DocumentNotFound(
                            f"no document named {name!r} in {self.path}", document=name
                        )
                    rewind = self._rewinds[name] = Rewind(projection.doc)
                if not rewind.go(count):
                    rewind.go(rewind.last)
                    stream = DOC_PREFIX + name
                    while rewind.count < count:
                        wanted = min(count - rewind.count, cadence.READ_BATCH)
                        events = await self.store.read_stream(stream, rewind.count, limit=wanted)
                        for done, event in enumerate(events, 1):
                            try:
                                with unreplayable_document_event(event):
                                    rewind.forward(event.payload)
                            except UnreplayableEvent:
                                # Half applied: the rewind no longer holds a state of the log.
                                self._rewinds.pop(name, None)
                                raise
                            if done % cadence.REPLAY_YIELD_EVERY == 0:
                                await asyncio.sleep(0)
                        if len(events) < wanted:
                            break
                return rewind.doc

    async def prepare_past(self, name: str) -> None:
        """Build the rewind of loaded document ``name`` at its present (``document_stepped``
        of its live count), for the document screen to call while nothing else is asked of
        it: the first step back is then one step of the rewind, not a fold. A step asked for
        meanwhile waits for it (or, where it does not reach yet, is a fold: see
        ``document_past``); either way it is the log's state. Errors as ``document_stepped``'s,
        and ``ContextNotLoaded`` if the document is not loaded."""
        await self.document_stepped(name, self.document(name).sequence)

    async def _save_document(
        self, name: str, projection: DocumentProjection, *, archive: bool = False
    ) -> None:
        """Save the document's checkpoint; with ``archive``, the same state is also kept as
        ``archive:doc:<name>:<n>`` (n: its events), where ``document_at`` starts a fold of
        the past from (the checkpoint itself is replaced as the document moves on)."""
        if name in self._documents_behind:
            return  # it may hold a command the log does not
        stream_seq = projection.stream_seq  # what the checkpoint reflects
        data = await self._document_streams.save(name, projection)
        if archive:
            await self._document_streams.archive(name, projection, stream_seq, data)
        await self._save_trail(name, projection.seq, stream_seq)

    # -- the audit trail, kept in pieces (engine/workspace/trail.py) -------------------------
    async def audit_rows(
        self,
        name: str,
        after: int = 0,
        until: int | None = None,
        size: int = cadence.READ_BATCH,
    ) -> AsyncIterator[Sequence[AuditRow]]:
        """The audit trail's rows (``AuditTrail.rows``) of document ``name``'s events with
        ``after <= sequenceNumber`` (``< until``, if given), oldest first, a page at a time:
        those the stored pieces of its trail hold, then those made from the log's events after
        them (``document_pages``), exactly the rows a trail made from the first event would
        make, ``size`` at a time. A piece that cannot be used is noted (``checkpoint_problem``)
        and the log read from its place. ``DocumentNotFound`` if there is no such document."""
        from engine.protocol.audit import AuditTrail
        from engine.workspace.trail import rows_between

        trail = AuditTrail()
        covered = 0
        async for piece in self._trail_pieces(name, until):
            trail.names = dict(piece.names)
            covered = piece.upto
            rows = rows_between(piece, after, until)
            for start in range(0, len(rows), size):
                yield rows[start : start + size]
        if until is not None and covered >= until:
            return
        place = covered  # the stream's place of the last event read
        async for page in self.document_pages(name, covered, size, until):
            rows = trail.rows(page)
            if place + len(rows) > after:
                yield rows[max(0, after - place) :]
            place += len(rows)

    async def _trail_pieces(self, name: str, until: int | None) -> AsyncIterator[TrailPiece]:
        """The stored pieces of document ``name``'s trail that follow one another from its
        first event, up to the first that holds event ``until``; the first that cannot be
        used ends them, noted."""
        from engine.workspace.trail import chain_of

        for after, upto, key in chain_of(name, await self.store.checkpoints()):
            piece = await self._trail_piece(name, after, upto, key)
            if piece is None:
                return
            yield piece
            if until is not None and upto >= until:
                return

    async def _trail_piece(
        self, name: str, after: int, upto: int, key: str, *, rows: bool = True
    ) -> TrailPiece | None:
        """The piece of document ``name``'s trail stored as ``key`` (without ``rows``: its
        names alone, its rows left unread); None, noted, if it cannot be used."""
        from engine.workspace.trail import TrailPiece, decode_piece, piece_names

        try:
            checkpoint = await self.store.load_checkpoint(key)
            if checkpoint is None:
                return None  # replaced meanwhile: the log from here
            if not rows:
                return TrailPiece(after, upto, piece_names(checkpoint.data, after, upto), ())
            return decode_piece(checkpoint.data, after, upto)
        except (StoreError, ValueError) as error:
            self._note_cache_problem(
                f"a piece of the audit trail of document {name!r} could not be used"
                f" ({error}); read its events from the log"
            )
            return None

    async def _save_trail(self, name: str, seq: int, stream_seq: int) -> None:
        """Keep the rows of document ``name``'s events up to ``stream_seq`` (event ``seq``)
        not yet in a piece of its trail, as a new piece; with ``MERGE_AT`` pieces, all of them
        as one. A cache: a failure is noted, not raised (the log is read instead)."""
        from engine.protocol.audit import AuditTrail
        from engine.workspace.trail import (
            MERGE_AT,
            TrailPiece,
            chain_of,
            encode_piece,
            piece_name,
            piece_range,
        )

        try:
            stored = list(await self.store.checkpoints())
            chain = chain_of(name, stored)
            covered = chain[-1][1] if chain else 0
            if covered >= stream_seq:
                return
            merging = len(chain) + 1 >= MERGE_AT
            kept: list[TrailPiece] = []
            for after, upto, key in chain if merging else chain[-1:]:  # the last: its names
                piece = await self._trail_piece(name, after, upto, key, rows=merging)
                if piece is None:  # noted: kept again from the first event, replacing them all
                    kept, covered, merging = [], 0, True
                    break
                kept.append(piece)
            trail = AuditTrail()
            trail.names = dict(kept[-1].names) if kept else {}
            rows: list[AuditRow] = []
            async for page in self.document_pages(name, covered, until=stream_seq):
                rows.extend(trail.rows(page))
            if covered + len(rows) != stream_seq:
                return  # the log ends before the checkpoint's event: nothing is kept
            replacing: list[str] = []
            start = covered
            if merging:
                rows = [row for piece in kept for row in piece.rows] + rows
                # Every piece of its trail, those off the chain too (a gap's, a race's).
                replacing = [key for key in stored if piece_range(name, key) is not None]
                start = 0
            data = encode_piece(TrailPiece(start, stream_seq, trail.names, rows))
            await self.store.save_checkpoint(
                piece_name(name, start, stream_seq), seq, data, replacing=replacing
            )
        except (StoreError, ValueError, TypeError) as error:
            self._note_cache_problem(
                f"the audit trail of document {name!r} could not be kept ({error})"
            )

    def document(self, name: str) -> Document:
        """The live projection of a loaded document. Read it; change it only through commands."""
        projection = self._documents.get(name)
        if projection is None:
            raise ContextNotLoaded(
                f"document {name!r} is not loaded: await workspace.load_document({name!r})",
                name=name,
            )
        return projection.doc

    def _new_ids(self) -> Ids:
        if self._ids is None:
            from engine.protocol.envelope import RandomIds

            self._ids = RandomIds()
        return self._ids

    async def create_document(
        self,
        name: str,
        markdown: str,
        *,
        human: str,
        policy: str = "single",
        window_s: int = 60,
        strategy: str = "first-wins",
        default_trust: str = "Collaborator",
    ) -> DocumentInfo:
        """Make document ``name`` from Markdown, as human custodian ``human``."""
        from engine.documents import check_document_name, creation_event
        from engine.protocol.errors import DocumentExists

        self._check_writable()
        check_document_name(name)
        check_actor(human)
        check_text("the document's Markdown", markdown)
        ids = self._new_ids()
        now_ns = self.now_ns()
        event = creation_event(
            name=name,
            markdown=markdown,
            document_id=ids.uuid(),
            event_id=ids.uuid(),
            epoch_ms=now_ns // 1_000_000,
            human=human,
            policy=policy,
            window_s=window_s,
            strategy=strategy,
            default_trust=default_trust,
        )
        stream = DOC_PREFIX + name

        def decide(others: Sequence[StoredEvent]) -> list[NewEvent]:
            for other in others:
                self._apply(other)
            if name in self._documents or any(e.stream == stream for e in others):
                raise DocumentExists(f"document {name!r} already exists", document=name)
            return [NewEvent(stream, "pact.document.snapshot", event, human, now_ns)]

        # Whether another process made it first: its stream already has events.
        if await self.store.read_stream(stream, 0, limit=1):
            raise DocumentExists(f"document {name!r} already exists", document=name)
        stored = await self._execute(decide)
        for other in stored:
            self._apply(other)
        projection = await self.load_document(name)
        if projection.doc.id != event["entityId"]:
            raise DocumentExists(f"document {name!r} already exists", document=name)
        return projection.info(name)

    async def run_document(
        self, name: str, command: Command | Mapping[str, Any], actor: Actor
    ) -> Decision:
        """Decide one protocol command on document ``name`` as ``actor`` and append its events
        (after the due work ``tick`` fires) in one transaction. A refusal raises its
        ``ProtocolError`` after appending only the due work, if any."""
        from engine.protocol.commands import parse_command
        from engine.protocol.decide import authorise

        # Who may do this comes first: before the workspace, the command's fields, the document
        # or its framework are looked at (an agent would otherwise learn of those first).
        authorise(command.get("op") if isinstance(command, Mapping) else command.op, actor)
        self._check_writable()
        check_actor(actor.name)
        parsed = parse_command(dict(command) if isinstance(command, Mapping) else command)
        check_fit(parsed.model_dump(mode="json"), "the command")
        parsed = await self._with_framework(name, parsed)
        return await self._decide_document(
            name, lambda doc, now, ids: _decide(doc, parsed, actor, now, ids)
        )

    async def tick_document(self, name: str) -> Decision:
        """Fire what is due on document ``name`` now (idempotent: nothing twice)."""
        from engine.protocol.decide import tick

        self._check_writable()
        return await self._decide_document(name, tick)

    async def _decide_document(
        self, name: str, decide_with: Callable[[Document, int, Ids], Decision]
    ) -> Decision:
        while True:
            decided = await self._decide_document_once(name, decide_with)
            if decided is not None:
                return decided

    async def _decide_document_once(
        self, name: str, decide_with: Callable[[Document, int, Ids], Decision]
    ) -> Decision | None:
        """One try; None if the document was read again meanwhile (another command on it
        failed or was cancelled while this one waited for the write lock): try again."""
        from engine.protocol.errors import ProtocolError

        projection = await self.load_document(name)
        stream = DOC_PREFIX + name
        ids = self._new_ids()
        outcome: list[Decision | ProtocolError] = []
        began = False  # whether decide() has begun to change the projection

        def decide(others: Sequence[StoredEvent]) -> list[NewEvent]:
            nonlocal began
            self._deciding = True
            for other in others:  # committed whatever this command becomes: the store says so
                self._apply(other)
            if self._documents.get(name) is not projection or name in self._documents_behind:
                raise DocumentReadAgain(name)
            began = True
            now_ns = self.now_ns()  # after the others: a step they hold is due now
            try:
                decision = decide_with(projection.doc, now_ns // 1_000_000, ids)
                events = decision.events
                outcome.append(decision)
            except ProtocolError as refused:
                if not refused.fired:
                    raise
                events = refused.fired
                outcome.append(refused)
            return [NewEvent(stream, e["eventType"], e, e["actorDisplay"], now_ns) for e in events]

        try:
            stored = await self.store.execute(decide)
        except ProtocolError:
            raise  # refused before anything was applied
        except DocumentReadAgain:
            return None
        except asyncio.CancelledError:
            # Whether it committed is not known here, and a shutdown may be under way: the
            # document is read again from the log in the background, never dropped (a screen
            # showing it reads it every second).
            if began:
                self._read_again_later(name)
            raise
        except Exception:
            # What decide() applied is not in the log: read the document again from it now,
            # so that what is shown is the log's when the error is said.
            if began:
                self._documents_behind.add(name)
                with contextlib.suppress(ProtocolError, WorkspaceError, StoreError):
                    await self.load_document(name)
            raise
        except BaseException:
            if began:
                self._documents_behind.add(name)
            raise
        if stored:
            projection.seq, projection.stream_seq = stored[-1].seq, stored[-1].stream_seq
            self._applied = max(self._applied, stored[-1].seq)
            if self._document_streams.checkpoint_due(projection):
                await self._save_caches(self._save_document(name, projection, archive=True))
        result = outcome[-1]
        if isinstance(result, ProtocolError):
            raise result
        return result

    async def _with_framework(self, name: str, command: Command) -> Command:
        """A classify or clearance on a document with no framework yet names the workspace's
        framework that holds its level, for the document to adopt."""
        from engine.protocol.commands import Classify, Clearance
        from engine.protocol.errors import InvalidRequest

        if not isinstance(command, Classify | Clearance) or command.levels:
            return command
        projection = await self.load_document(name)
        if projection.doc.framework is not None:
            return command
        frameworks = await self.frameworks()
        holding = [
            (fw, levels)
            for fw, levels in frameworks.items()
            if command.level in levels and command.framework in (None, fw)
        ]
        if len(holding) != 1:
            known = "; ".join(f"{fw}: {', '.join(lv)}" for fw, lv in frameworks.items())
            raise InvalidRequest(
                f"{'no' if not holding else 'more than one'} framework has level"
                f" {command.level!r} (frameworks: {known or 'none yet'});"
                " create one with `tap framework create`, or name it",
                code="classification.unknown_level",
            )
        framework, levels = holding[0]
        return command.model_copy(update={"framework": framework, "levels": tuple(levels)})

    async def frameworks(self) -> dict[str, list[str]]:
        """The workspace's classification frameworks: name → levels, lowest first."""
        from engine.documents import frameworks_from

        return frameworks_from(await self.store.read_stream(FRAMEWORKS))

    async def create_framework(self, name: str, levels: list[str], *, human: str) -> None:
        from engine.documents import check_levels
        from engine.protocol.errors import InvalidRequest

        self._check_writable()
        check_actor(human)
        check_levels(name, levels)

        def decide(others: Sequence[StoredEvent]) -> list[NewEvent]:
            for other in others:
                self._apply(other)
            return [
                NewEvent(FRAMEWORKS, "framework.created", {"name": name, "levels": levels}, human)
            ]

        if name in await self.frameworks():
            raise InvalidRequest(f"framework {name!r} already exists", code="framework.exists")
        stored = await self._execute(decide)
        for event in stored:
            self._apply(event)

    # -- API keys of ``pact-tui serve`` (engine/keys.py) ---------------------------------------
    async def custodian_keys(self) -> dict[str, CustodianKey]:
        """The custodians' API keys, by hash (revoked ones included), read from the log now:
        a key revoked by any process is revoked here as soon as that commit is read."""
        from engine.keys import KEYS, keys_from

        return keys_from(await self.store.read_stream(KEYS))

    async def create_custodian_key(self, *, human: str, label: str | None = None) -> str:
        """Make an API key that acts as human ``human``; returns the key, shown this once (the
        log keeps its hash)."""
        from engine.keys import CREATED, KEYS, created_payload, key_hash

        self._check_writable()
        check_actor(human)
        if label is not None:
            check_text("the key's label", label)
        key = self._new_ids().token()
        payload = created_payload(key_hash(key), human, label)

        def decide(others: Sequence[StoredEvent]) -> list[NewEvent]:
            for other in others:
                self._apply(other)
            return [NewEvent(KEYS, CREATED, payload, human, self.now_ns())]

        for event in await self._execute(decide):
            self._apply(event)
        return key

    async def revoke_custodian_key(self, hashed: str, *, human: str, why: str | None) -> None:
        """Revoke the custodian key of hash ``hashed`` (one ``custodian_keys`` holds)."""
        from engine.keys import KEYS, REVOKED, revoked_payload

        self._check_writable()
        check_actor(human)
        payload = revoked_payload(hashed, human, why)

        def decide(others: Sequence[StoredEvent]) -> list[NewEvent]:
            for other in others:
                self._apply(other)
            return [NewEvent(KEYS, REVOKED, payload, human, self.now_ns())]

        for event in await self._execute(decide):
            self._apply(event)

    async def document_events(
        self, name: str, after: int = 0, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """The v0.3 envelopes of a document with ``sequenceNumber >= after``, oldest first."""
        await self.load_document(name)
        events = await self.store.read_stream(DOC_PREFIX + name, after, limit=limit)
        return [dict(event.payload) for event in events]

    async def document_pages(
        self, name: str, after: int = 0, size: int = cadence.READ_BATCH, until: int | None = None
    ) -> AsyncIterator[list[Mapping[str, Any]]]:
        """The v0.3 envelopes of a document with ``after <= sequenceNumber`` (``< until``, if
        given), oldest first, ``size`` at a time: a log of any length read in pages of the
        store's, the document itself not loaded (an audit of a document no process has open
        replays nothing). Read them, never change them. ``DocumentNotFound`` if there is no
        such document."""
        from engine.protocol.errors import DocumentNotFound

        stream = DOC_PREFIX + name

        def read(after: int) -> asyncio.Task[list[tuple[int, Any]]] | None:
            if until is not None and after >= until:
                return None
            wanted = size if until is None else min(size, until - after)
            return asyncio.create_task(self.store.read_stream_payloads(stream, after, wanted))

        reading = read(after)
        try:
            first = True
            while reading is not None:
                wanted = size if until is None else min(size, until - after)
                events = await reading
                reading = None
                if first and not events and not await self.store.read_stream(stream, 0, limit=1):
                    known = ", ".join(await self.document_names()) or "none yet"
                    raise DocumentNotFound(
                        f"no document named {name!r} in {self.path} (documents: {known})",
                        document=name,
                    )
                first = False
                if len(events) == wanted:
                    # The next page is read (by the store's thread) while this one is used.
                    after = events[-1][0]
                    reading = read(after)
                    await asyncio.sleep(0)  # its query on its way before this page is used
                if events:
                    yield [payload for _, payload in events]
        finally:
            if reading is not None:  # left before the end: the page read ahead is not wanted
                reading.cancel()
                reading.add_done_callback(_retrieved)


def _retrieved(task: asyncio.Task[Any]) -> None:
    """Take a task's outcome, so that an unwanted read that failed is not reported."""
    if not task.cancelled():
        task.exception()


def _decide(doc: Document, command: Command, actor: Actor, now_ms: int, ids: Ids) -> Decision:
    from engine.protocol.decide import decide

    return decide(doc, command, actor, now_ms, ids)


class DocumentKind:
    """How a document's stream differs from other streams (see ``StreamKind``)."""

    noun = "document"
    stream_prefix = DOC_PREFIX
    checkpoint_prefix = DOC_CHECKPOINT
    archive_prefix = DOC_ARCHIVE_PREFIX
    mismatched: tuple[type[Exception], ...] = (CheckpointMismatch, UnreplayableEvent)
    diverged: tuple[type[Exception], ...] = ()

    def __init__(self, workspace: DocumentsAndFrameworks) -> None:
        self._workspace = workspace

    def restore(self, name: str, checkpoint: Checkpoint) -> DocumentProjection:
        return DocumentProjection.restore(name, checkpoint.seq, decode_checkpoint(checkpoint.data))

    def restore_archive(self, name: str, checkpoint: Checkpoint) -> DocumentProjection:
        return self.restore(name, checkpoint)  # an archive is a checkpoint kept

    def begin(self, name: str, first: StoredEvent) -> DocumentProjection:
        return DocumentProjection()

    def apply(self, projection: DocumentProjection, event: StoredEvent) -> None:
        replay_document_event(projection, event)

    def is_anchor(self, projection: DocumentProjection, event: StoredEvent) -> bool:
        said = event.payload.get("id")
        return event.seq == projection.seq and said == projection.doc.last_event_id

    def checkpoint_weight(self, projection: DocumentProjection) -> int:
        # A checkpoint's cost grows with the document: one every so many events, more apart
        # as it grows, keeps its share of each command's time bounded.
        return len(projection.doc.proposals) + len(projection.doc.agents)

    def archive_weight(self, projection: DocumentProjection) -> int:
        return 0  # archived with each checkpoint saved while running

    def checkpoint_data(self, name: str, projection: DocumentProjection) -> Saved:
        return Saved(self.archive_data(name, projection))

    async def ready(self, projection: DocumentProjection) -> None:
        pass  # a document's checkpoint is read whole

    def archive_data(self, name: str, projection: DocumentProjection) -> bytes:
        with collector_paused():
            return encode_checkpoint(projection.dump(name))

    def saved(self, projection: DocumentProjection, saved: Saved) -> None:
        pass  # a document keeps nothing unsaved besides its events

    async def missing(self, name: str) -> Exception:
        from engine.protocol.errors import DocumentNotFound

        known = ", ".join(await self._workspace.document_names()) or "none yet"
        return DocumentNotFound(
            f"no document named {name!r} in {self._workspace.path} (documents: {known})",
            document=name,
        )
