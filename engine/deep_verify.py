"""``pact-tui verify --deep``: every projection rebuilt from the log's events and compared with
what every checkpoint says.

``verify`` proves that the chain is intact: each event's hash matches its fields and links to
the one before. It does not read checkpoints, which the workspace reads instead of replaying.
The chain vouches for a checkpoint's place (the hash of the event it was taken at), not for its
content: a checkpoint whose content was edited and its digest fixed would be shown as fact.
Nor does it replay anything: an event the chain vouches for may still be one the workspace
cannot replay (a document event whose ``payloadJson`` is not JSON, or whose ``eventType`` or
``sequenceNumber`` is wrong), and a checkpoint taken after it hides it.
Here each context's stream and each document's stream is replayed from its first event, with
the workspace's own replay (``ContextProjection.replay``, ``replay_document_event``), whatever
the checkpoints say; the first event that cannot be replayed is named and fails the
verification. Wherever a checkpoint claims to hold the state after some event, the rebuilt
projection is compared with it:

- a context's checkpoint and each of its archives: the context, its id counter, its place in
  the log, and its snapshot index (archives keep none);
- the index: where each context's stream ends as of the index's event (a context it leaves
  out would be hidden), and each context's numbers where it gives them;
- the version-2 ``workspace`` checkpoint: every context it holds;
- a document's checkpoint and each of its archives: the document, rebuilt from its stream to
  the checkpoint's event, is compared part by part with what the checkpoint holds;
- each piece of a document's audit trail (``engine/workspace/trail.py``): its rows and names
  against those a trail made from the stream's first event gives.

A checkpoint the workspace would not use (the log does not vouch for it, it is malformed, or
its state is not at the place it claims) is reported as ignored: it is not shown as fact. One
the workspace would use whose content is not the log's differs, and the verification fails;
so does a context or a document whose stream cannot be replayed. Nothing is written here: the
next save of a checkpoint replaces it. ``record_pass`` keeps when a verification passed
(``DEEP_VERIFIED``), for whoever can write the file.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

import orjson

from engine.canonical import canonical_json
from engine.context import Context, ContextError
from engine.context.compact import dump_turn, recent_past
from engine.documents import DOC_CHECKPOINT, DOC_PREFIX, DocumentProjection
from engine.protocol.audit import AuditRow, AuditTrail
from engine.store import Checkpoint, EventStore, StoredEvent, StoreError, VerifyResult
from engine.workspace import (
    ARCHIVE_PREFIX,
    CACHE_ERRORS,
    CONTEXT_CHECKPOINT,
    CONTEXT_PREFIX,
    DEEP_VERIFIED,
    DOC_ARCHIVE_PREFIX,
    INDEX_CHECKPOINT,
    LEGACY_CHECKPOINT,
    LEGACY_VERSION,
    ContextProjection,
    DeepVerification,
    cadence,
    check_stream_start,
    context_checkpoint_projection,
    decode_checkpoint,
    encode_checkpoint,
    parse_index,
    replay_document_event,
    restored_projection,
)
from engine.workspace.keys import PIECE_PREFIX
from engine.workspace.trail import TRAIL_PREFIX, TrailPiece, decode_piece, piece_range

Verdict = Literal["matches", "differs", "ignored", "unchecked"]
_WORST: tuple[Verdict, ...] = ("differs", "unchecked", "ignored", "matches")
# What a context's state is compared on ("archived" says when it was last archived: the log
# does not know, and nothing is shown from it); a checkpoint's newest snapshots ("recent") are
# compared too, each whole (``_recent_digest``), as many as it holds.
_COMPARED = ("context", "next_id", "seq", "stream_seq", "snapshots")


@dataclass(frozen=True, slots=True)
class CheckpointFinding:
    """What became of one stored checkpoint: it ``matches`` the log, ``differs`` from it, is
    ``ignored`` (the workspace would not use it), or is ``unchecked`` (its context's or its
    document's stream could not be replayed as far as it claims)."""

    name: str
    seq: int
    verdict: Verdict
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "seq": self.seq, "verdict": self.verdict, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class StreamReplay:
    """One context or document rebuilt from its stream: how many events, and the error that
    stopped it (naming the first event that could not be replayed)."""

    name: str
    events: int
    error: ContextError | StoreError | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "events": self.events,
            "error": None if self.error is None else self.error.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class DeepVerifyResult:
    chain: VerifyResult
    contexts: tuple[StreamReplay, ...]
    documents: tuple[StreamReplay, ...]
    checkpoints: tuple[CheckpointFinding, ...]

    @property
    def ok(self) -> bool:
        return (
            self.chain.ok
            and all(replay.error is None for replay in (*self.contexts, *self.documents))
            and all(finding.verdict != "differs" for finding in self.checkpoints)
        )

    def count(self, verdict: Verdict) -> int:
        return sum(finding.verdict == verdict for finding in self.checkpoints)


# A projection rebuilt from its stream: a context's or a document's.
P = TypeVar("P", ContextProjection, DocumentProjection)
# A check of a rebuilt projection at a claim's place: None if it agrees, else the verdict
# ("differs" or "ignored") and why.
Check = Callable[[P], tuple[Verdict, str] | None]


@dataclass(slots=True)
class _Claim(Generic[P]):
    """What checkpoint ``checkpoint`` says about a context or a document after event
    ``stream_seq`` of its stream."""

    checkpoint: str
    stream_seq: int
    check: Check[P]


@dataclass(slots=True)
class _Audit:
    findings: dict[str, list[tuple[Verdict, str]]] = field(default_factory=dict)
    claims: dict[str, list[_Claim[ContextProjection]]] = field(default_factory=dict)
    document_claims: dict[str, list[_Claim[DocumentProjection]]] = field(default_factory=dict)
    # The pieces of each document's audit trail (engine/workspace/trail.py) read, by document.
    trail_claims: dict[str, list[tuple[str, TrailPiece]]] = field(default_factory=dict)
    # Each piece of a context checkpoint's turns (engine/workspace/pieces.py), by checkpoint.
    piece_of: dict[str, str] = field(default_factory=dict)

    def found(self, checkpoint: str, verdict: Verdict, detail: str = "") -> None:
        self.findings.setdefault(checkpoint, []).append((verdict, detail))

    def claim(
        self, checkpoint: str, context: str, stream_seq: int, check: Check[ContextProjection]
    ) -> None:
        self.findings.setdefault(checkpoint, [])
        self.claims.setdefault(context, []).append(_Claim(checkpoint, stream_seq, check))

    def document_claim(
        self, checkpoint: str, document: str, stream_seq: int, check: Check[DocumentProjection]
    ) -> None:
        self.findings.setdefault(checkpoint, [])
        claim = _Claim(checkpoint, stream_seq, check)
        self.document_claims.setdefault(document, []).append(claim)


async def verify_deep(store: EventStore) -> DeepVerifyResult:
    """Walk the chain, rebuild every context and every document from its stream, and judge
    every checkpoint."""
    chain = await store.verify()
    audit = _Audit()
    recorded = {
        name: seq for name, seq in (await store.checkpoints()).items() if name != DEEP_VERIFIED
    }
    lengths = await store.streams()
    contexts = sorted(s[len(CONTEXT_PREFIX) :] for s in lengths if s.startswith(CONTEXT_PREFIX))
    documents = sorted(s[len(DOC_PREFIX) :] for s in lengths if s.startswith(DOC_PREFIX))
    for name in recorded:
        if not name.startswith(PIECE_PREFIX):  # judged with the checkpoint that lists it
            await _read_claims(store, audit, name, set(contexts))
    replays = [await _replay(store, audit, context) for context in contexts]
    document_replays = [await _replay_document(store, audit, name) for name in documents]
    for document, pieces in sorted(audit.trail_claims.items()):
        await _judge_trail(store, audit, document, pieces)
    for context in sorted(audit.claims.keys() - set(contexts)):
        for claim in audit.claims[context]:
            audit.found(claim.checkpoint, "differs", f"no context {context!r} in the log")
    for document in sorted(audit.document_claims.keys() - set(documents)):
        for about in audit.document_claims[document]:
            audit.found(about.checkpoint, "differs", f"no document {document!r} in the log")
    findings = []
    for name, seq in recorded.items():
        if name.startswith(PIECE_PREFIX):
            _judge_piece(audit, name)
        verdicts = audit.findings.get(name) or [("matches", "")]
        worst = min(verdicts, key=lambda found: _WORST.index(found[0]))[0]
        details = [detail for verdict, detail in verdicts if verdict == worst and detail]
        findings.append(CheckpointFinding(name, seq, worst, "; ".join(details)))
    return DeepVerifyResult(chain, tuple(replays), tuple(document_replays), tuple(findings))


async def record_pass(
    store: EventStore, result: DeepVerifyResult, time_ns: int
) -> DeepVerification:
    """Keep, beside the checkpoints, that ``result`` (a verification that passed) was reached at
    ``time_ns``: the row ``DEEP_VERIFIED``, saved at the last event the chain walk checked, so
    that the log vouches for it as for a checkpoint. ``ValueError`` for one that failed."""
    if not result.ok:
        raise ValueError("a deep verification that failed is not recorded as passed")
    record = DeepVerification(time_ns, result.chain.checked)
    await store.save_checkpoint(DEEP_VERIFIED, record.seq, encode_checkpoint(record.dump()))
    return record


async def _read_claims(store: EventStore, audit: _Audit, name: str, contexts: set[str]) -> None:
    """Read checkpoint ``name`` as the workspace would, and note what it claims."""
    try:
        checkpoint = await store.load_checkpoint(name)
        if checkpoint is None:  # deleted since it was listed
            return
        if name == INDEX_CHECKPOINT:
            entries = parse_index(decode_checkpoint(checkpoint.data))
            await _index_claims(store, audit, checkpoint.seq, entries, contexts)
        elif name == LEGACY_CHECKPOINT:
            data = decode_checkpoint(checkpoint.data)
            if not isinstance(data, dict) or data.get("version") != LEGACY_VERSION:
                raise ValueError("not a version-2 checkpoint")
            for context, state in data["contexts"].items():
                projection = ContextProjection.restore(state)
                _state_claim(audit, name, context, projection, with_snapshots=True)
        elif name.startswith(CONTEXT_CHECKPOINT):
            context = name[len(CONTEXT_CHECKPOINT) :]
            projection = context_checkpoint_projection(context, checkpoint, store)
            if projection.pieces is not None:
                audit.piece_of.update(dict.fromkeys(projection.pieces.names, name))
                await projection.pieces.read_all()
            _state_claim(audit, name, context, projection, with_snapshots=True)
        elif name.startswith(TRAIL_PREFIX):
            document, _, place = name[len(TRAIL_PREFIX) :].rpartition(":")
            found = piece_range(document, name)
            if found is None:
                raise ValueError(f"{name!r} names no range of a stream: {place!r}")
            piece = decode_piece(checkpoint.data, *found)
            audit.findings.setdefault(name, [])
            audit.trail_claims.setdefault(document, []).append((name, piece))
        elif name.startswith(DOC_CHECKPOINT):
            _document_claim(audit, name, checkpoint, name[len(DOC_CHECKPOINT) :])
        elif name.startswith(DOC_ARCHIVE_PREFIX):
            document, _, at = name[len(DOC_ARCHIVE_PREFIX) :].rpartition(":")
            if not at.isdigit():
                raise ValueError(f"{name!r} names no place in a stream")
            _document_claim(audit, name, checkpoint, document)
        elif name.startswith(ARCHIVE_PREFIX):
            context, _, mark = name[len(ARCHIVE_PREFIX) :].rpartition(":")
            if not mark.isdigit():
                raise ValueError(f"{name!r} names no place in a stream")
            projection = restored_projection(checkpoint)
            _state_claim(audit, name, context, projection, with_snapshots=False)
        else:
            audit.found(name, "ignored", "not a checkpoint this version of pact-tui reads")
    except CACHE_ERRORS as error:
        audit.found(name, "ignored", f"the workspace would not use it: {error}")


def _judge_piece(audit: _Audit, name: str) -> None:
    """A piece of a context checkpoint's turns is what that checkpoint is found to be."""
    listed_by = audit.piece_of.get(name)
    if listed_by is None:
        audit.found(name, "ignored", "no context's checkpoint lists it")
        return
    for verdict, detail in audit.findings.get(listed_by) or [("matches", "")]:
        audit.found(name, verdict, f"a piece of {listed_by!r}" + (f": {detail}" if detail else ""))


async def _judge_trail(
    store: EventStore, audit: _Audit, document: str, pieces: list[tuple[str, TrailPiece]]
) -> None:
    """Each piece of ``document``'s audit trail against the rows a trail made from the log's
    first event gives for its events, and the agents' names it had learned by their end."""
    trail, stream = AuditTrail(), DOC_PREFIX + document
    rows: list[AuditRow] = []
    names_at: dict[int, dict[str, str]] = {}
    for upto in sorted({piece.upto for _name, piece in pieces}):
        events = await store.read_stream(stream, len(rows), limit=upto - len(rows))
        rows.extend(trail.rows([event.payload for event in events]))
        if len(rows) < upto:
            break
        names_at[upto] = dict(trail.names)
    for name, piece in pieces:
        if piece.upto not in names_at:
            audit.found(
                name, "differs", f"the log of document {document!r} ends at event {len(rows)}"
            )
        elif rows[piece.after : piece.upto] != list(piece.rows) or names_at[piece.upto] != (
            piece.names
        ):
            audit.found(
                name,
                "differs",
                f"its rows of events {piece.after + 1}-{piece.upto} of document {document!r}"
                " are not those the log's events make",
            )


def _document_claim(audit: _Audit, name: str, checkpoint: Checkpoint, document: str) -> None:
    """A document's checkpoint (or archive): its state after an event of the document's
    stream, to be judged against the document rebuilt from the stream's first event to
    there."""
    from engine.protocol.persist import dump_document

    saved = DocumentProjection.restore(document, checkpoint.seq, decode_checkpoint(checkpoint.data))
    expected = {key: _digest(value) for key, value in dump_document(saved.doc).items()}
    seq, stream_seq, stream = saved.seq, saved.stream_seq, DOC_PREFIX + document

    def check(rebuilt: DocumentProjection) -> tuple[Verdict, str] | None:
        if rebuilt.seq != seq:
            return "ignored", (
                f"its state is after event {stream_seq} of {stream!r}, which it says is the"
                f" log's event {seq}, but the log's is event {rebuilt.seq}"
            )
        found = dump_document(rebuilt.doc)
        differing = [key for key in expected if expected[key] != _digest(found.get(key))]
        if not differing:
            return None
        return "differs", (
            f"its state of document {document!r} after event {stream_seq} of its stream"
            f" (event {seq}) is not the log's: they differ in {', '.join(differing)}"
        )

    audit.document_claim(name, document, stream_seq, check)


def _state_claim(
    audit: _Audit,
    checkpoint: str,
    context: str,
    saved: ContextProjection,
    *,
    with_snapshots: bool,
) -> None:
    """The checkpoint holds ``saved`` as context ``context``'s state after its event."""
    expected = _digests(saved, with_snapshots=with_snapshots)
    # Its recent snapshots, as many as it holds (older checkpoints hold none).
    recent = len(saved.context.history.snapshots) if with_snapshots else 0
    if recent:
        expected["recent"] = _recent_digest(saved.context, recent)
    numbers = saved.info(context)
    stream = CONTEXT_PREFIX + context
    seq, stream_seq = saved.seq, saved.stream_seq

    def check(rebuilt: ContextProjection) -> tuple[Verdict, str] | None:
        if rebuilt.seq != seq:
            return "ignored", (
                f"its state is after event {stream_seq} of {stream!r}, which it says is the"
                f" log's event {seq}, but the log's is event {rebuilt.seq}"
            )
        found = _digests(rebuilt, with_snapshots=with_snapshots)
        if recent:
            found["recent"] = _recent_digest(rebuilt.context, recent)
        differing = [key for key in (*_COMPARED, "recent") if expected.get(key) != found.get(key)]
        if not differing:
            return None
        log = rebuilt.info(context)
        said = f"its state of context {context!r} after event {stream_seq} of its stream (event"
        said += f" {seq}) is not the log's: they differ in {', '.join(differing)}"
        if (numbers.items, numbers.episode) != (log.items, log.episode):
            said += (
                f" ({numbers.items} items at episode {numbers.episode} in it, {log.items} at"
                f" episode {log.episode} in the log's)"
            )
        return "differs", said

    audit.claim(checkpoint, context, stream_seq, check)


async def _index_claims(
    store: EventStore,
    audit: _Audit,
    at_seq: int,
    entries: dict[str, list[Any]],
    contexts: set[str],
) -> None:
    """The index says, as of event ``at_seq``: which contexts exist and where each one's
    stream ends; and some contexts' numbers as of a place in their stream."""
    for context in sorted(contexts - entries.keys()):
        [first] = await store.read_stream(CONTEXT_PREFIX + context, 0, limit=1)
        if first.seq <= at_seq:
            audit.found(
                INDEX_CHECKPOINT,
                "differs",
                f"it leaves out context {context!r}, in the log since event {first.seq}",
            )
    for context, (seq, stream_seq, summary) in sorted(entries.items()):
        stream = CONTEXT_PREFIX + context
        here = await store.read_stream(stream, stream_seq - 1, limit=2)
        places = [(event.stream_seq, event.seq) for event in here]
        end_then = places[:1] == [(stream_seq, seq)] and (len(places) == 1 or places[1][1] > at_seq)
        if context in contexts and not end_then:
            audit.found(
                INDEX_CHECKPOINT,
                "differs",
                f"it says context {context!r} ended at event {stream_seq} of its stream (event"
                f" {seq}) as of event {at_seq}; the log's events there: {places or 'none'}",
            )
        if summary is not None:
            audit.claim(INDEX_CHECKPOINT, context, summary[0], _numbers_check(context, summary))
        elif context not in contexts:
            audit.claim(INDEX_CHECKPOINT, context, stream_seq, lambda _rebuilt: None)


def _numbers_check(context: str, summary: list[int]) -> Check[ContextProjection]:
    at, *numbers = summary

    def check(rebuilt: ContextProjection) -> tuple[Verdict, str] | None:
        info = rebuilt.info(context)
        log = [info.episode, info.items, info.depth, info.snapshots]
        if log == numbers:
            return None
        return "differs", (
            f"its numbers of context {context!r} after event {at} of its stream (episode,"
            f" items, depth, snapshots) are {numbers}; the log's are {log}"
        )

    return check


async def _stream(store: EventStore, stream: str) -> AsyncIterator[StoredEvent]:
    """Every event of ``stream`` from its first, read ``cadence.READ_BATCH`` at a time."""
    after = 0
    while True:
        events = await store.read_stream(stream, after, limit=cadence.READ_BATCH)
        for event in events:
            yield event
        if len(events) < cadence.READ_BATCH:
            return
        after = events[-1].stream_seq


async def _replay(store: EventStore, audit: _Audit, context: str) -> StreamReplay:
    """Rebuild ``context`` from the first event of its stream, judging each claim about it at
    its place."""
    claims = sorted(audit.claims.get(context, []), key=lambda claim: claim.stream_seq)
    stream = CONTEXT_PREFIX + context
    projection: ContextProjection | None = None
    replayed, error = 0, None
    try:
        async for event in _stream(store, stream):
            if projection is None:
                check_stream_start(event)
                projection = ContextProjection.fresh(event.time_ns)
            projection.replay(event)
            replayed += 1
            while claims and claims[0].stream_seq <= projection.stream_seq:
                _judge(audit, claims.pop(0), projection)
    except (ContextError, StoreError) as stopped:
        error = stopped
    _unreached(audit, claims, f"context {context!r}", replayed, error)
    return StreamReplay(context, replayed, error)


async def _replay_document(store: EventStore, audit: _Audit, document: str) -> StreamReplay:
    """Rebuild ``document`` from the first event of its stream as the workspace folds it,
    judging each claim about it at its place."""
    claims = sorted(audit.document_claims.get(document, []), key=lambda claim: claim.stream_seq)
    stream = DOC_PREFIX + document
    projection = DocumentProjection()
    error = None
    try:
        async for event in _stream(store, stream):
            replay_document_event(projection, event)
            while claims and claims[0].stream_seq <= projection.stream_seq:
                _judge(audit, claims.pop(0), projection)
    except (ContextError, StoreError) as stopped:
        error = stopped
    _unreached(audit, claims, f"document {document!r}", projection.stream_seq, error)
    return StreamReplay(document, projection.stream_seq, error)


def _unreached(
    audit: _Audit,
    claims: list[_Claim[P]],
    what: str,
    replayed: int,
    error: ContextError | StoreError | None,
) -> None:
    """Claims past where the stream's replay ended: past its end they differ; past an event
    that could not be replayed they are unchecked."""
    why = (
        f"its stream has {replayed} events"
        if error is None
        else f"its stream could not be replayed past event {replayed} ({error})"
    )
    verdict: Verdict = "differs" if error is None else "unchecked"
    for claim in claims:
        audit.found(
            claim.checkpoint,
            verdict,
            f"it claims {what} after event {claim.stream_seq} of its stream; {why}",
        )


def _judge(audit: _Audit, claim: _Claim[P], projection: P) -> None:
    judged = claim.check(projection)
    if judged is None:
        audit.found(claim.checkpoint, "matches")
    else:
        audit.found(claim.checkpoint, *judged)


def _digests(projection: ContextProjection, *, with_snapshots: bool) -> dict[str, str]:
    """The compared parts of a projection's state, each as a digest of its JSON with sorted
    keys (orjson's: canonical JSON took half the time of a deep verification at 100,000 items;
    canonical JSON for what orjson refuses, integers past 64 bits)."""
    state = projection.dump(with_snapshots=with_snapshots)
    return {key: _digest(state[key]) for key in _COMPARED if key in state}


def _recent_digest(context: Context, count: int) -> str:
    """A digest of the context's newest ``count`` snapshots, each whole (``recent_past``), a
    turn shared by several of them digested once."""
    turns: dict[int, str] = {}

    def turn(value: Any) -> str:
        key = id(value)  # every turn stays alive for the call: an id names one turn
        digest = turns.get(key)
        if digest is None:
            digest = turns[key] = _digest(dump_turn(value))
        return digest

    return _digest(recent_past(context, count, turn))


def _digest(value: Any) -> str:
    try:
        data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        data = canonical_json(value).encode()
    return hashlib.sha256(data).hexdigest()
