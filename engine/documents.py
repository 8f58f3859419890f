"""Documents in the workspace file: each one a stream of v0.3 events, beside the contexts.

A document named ``plan`` is the stream ``doc:plan``; each stored event's payload is the v0.3
envelope (``event.json``) and its ``sequenceNumber`` is its place in the stream less one, so the
stream's own gapless numbering and the protocol's agree. The store hash-chains and verifies
these events like every other. Classification frameworks are workspace-wide: the stream
``frameworks`` holds one ``framework.created`` event per framework.

``DocumentProjection`` is a loaded document: the protocol's ``Document`` and where in the log it
stands. The workspace (``engine.workspace``) reads, writes and follows them, and keeps each one's
checkpoint (``workspace:doc:<name>``, see ``DocumentProjection.dump``): the document's state
(``engine.protocol.persist``) and the event it reflects, so a reopening reads the checkpoint and
folds only the events after it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.store import StoredEvent

if TYPE_CHECKING:
    from engine.protocol.document import Document

DOC_PREFIX = "doc:"
DOC_CHECKPOINT = "workspace:doc:"  # + a document's name: its state, and the event it reflects
DOC_CHECKPOINT_VERSION = 1
FRAMEWORKS = "frameworks"
DOC_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
LEVEL = re.compile(r"^[^\x00-\x1f\x7f,]{1,64}$")


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    name: str
    id: str
    version: int
    sections: int
    agents: int
    open_proposals: int
    events: int


class DocumentProjection:
    """A document folded from its stream, and the last event of it applied."""

    def __init__(self) -> None:
        # The protocol's modules (pydantic, markdown-it) load with the first document.
        from engine.protocol.document import Document

        self.doc: Document = Document()
        self.seq = 0  # global seq of the last applied event
        self.stream_seq = 0
        self.checkpointed = 0  # the stream_seq of its last checkpoint (saved, or loaded)
        self.archived = 0  # the stream_seq of its last archive
        self.cached_from: str | None = None  # the cache it was restored from, to name it

    def replay(self, event: StoredEvent) -> None:
        self.doc.apply(event.payload)
        self.seq, self.stream_seq = event.seq, event.stream_seq

    def dump(self, name: str) -> dict[str, Any]:
        """The checkpoint of document ``name``: its state and the event it reflects."""
        from engine.protocol.persist import dump_document

        return {
            "version": DOC_CHECKPOINT_VERSION,
            "name": name,
            "seq": self.seq,
            "streamSeq": self.stream_seq,
            "lastEventId": self.doc.last_event_id,
            "document": dump_document(self.doc),
        }

    @classmethod
    def restore(cls, name: str, seq: int, data: Any) -> DocumentProjection:
        """The projection a checkpoint of document ``name`` saved at global ``seq`` holds.
        ``CheckpointError`` (a ``ValueError``) names what is wrong with one that is malformed,
        of another document or version, or not at its recorded event."""
        from engine.protocol.persist import CheckpointError, restore_document

        if type(data) is not dict:
            raise CheckpointError(f"a {type(data).__name__}, not a document's checkpoint")
        found = (data.get("version"), data.get("name"))
        if found != (DOC_CHECKPOINT_VERSION, name):
            raise CheckpointError(f"version {found[0]!r} of document {found[1]!r}")
        stream_seq = data.get("streamSeq")
        if data.get("seq") != seq or type(stream_seq) is not int or stream_seq < 1:
            raise CheckpointError(
                f"it says event {data.get('seq')!r} (number {stream_seq!r} of its stream);"
                f" it was saved at event {seq}"
            )
        projection = cls()
        projection.doc = restore_document(data.get("document"))
        # The n-th event of the stream has sequenceNumber n - 1.
        if projection.doc.sequence != stream_seq or projection.doc.last_event_id != data.get(
            "lastEventId"
        ):
            raise CheckpointError(
                f"its document has {projection.doc.sequence} events, ending at"
                f" {projection.doc.last_event_id!r}; it says {stream_seq}, ending at"
                f" {data.get('lastEventId')!r}"
            )
        projection.seq = seq
        projection.stream_seq = projection.checkpointed = stream_seq
        return projection

    def info(self, name: str) -> DocumentInfo:
        doc = self.doc
        return DocumentInfo(
            name,
            doc.id,
            doc.version,
            len(doc.sections),
            len(doc.active),
            sum(len(v) for v in doc.open_by_section.values()),
            doc.sequence,
        )


def check_document_name(name: object) -> str:
    from engine.protocol.errors import InvalidRequest

    if not isinstance(name, str) or not DOC_NAME.match(name):
        raise InvalidRequest(
            f"invalid document name {name!r}: 1-64 letters, digits, '_', '.', '-',"
            " starting with a letter or digit",
            code="document.invalid_name",
        )
    return name


def creation_event(
    *,
    name: str,
    markdown: str,
    document_id: str,
    event_id: str,
    epoch_ms: int,
    human: str,
    policy: str,
    window_s: int,
    strategy: str,
    default_trust: str,
) -> dict[str, Any]:
    """The first event of a document: a ``pact.document.snapshot`` of its sections."""
    from engine.protocol.envelope import envelope
    from engine.protocol.errors import InvalidRequest
    from engine.protocol.model import POLICIES, STRATEGIES, TRUST_LEVELS
    from engine.protocol.sections import parse_sections, section_content

    if policy not in POLICIES:
        raise InvalidRequest(f"no policy {policy!r} (policies: {', '.join(POLICIES)})")
    if strategy not in STRATEGIES:
        raise InvalidRequest(f"no strategy {strategy!r} (strategies: {', '.join(STRATEGIES)})")
    if default_trust not in TRUST_LEVELS:
        raise InvalidRequest(f"no trust level {default_trust!r}")
    if not 1 <= window_s <= 86_400:
        raise InvalidRequest(f"window {window_s} s is outside 1 to 86400")
    markdown = markdown.replace("\r\n", "\n")
    if markdown and not markdown.endswith("\n"):
        markdown += "\n"
    rows = [
        {"title": s.title, "level": s.level, "content": section_content(markdown, s)}
        for s in parse_sections(markdown)
    ]
    return envelope(
        event_id=event_id,
        epoch_ms=epoch_ms,
        actor_id=f"human:{human}",
        actor_display=human,
        actor_kind="Individual",
        event_type="pact.document.snapshot",
        document_id=document_id,
        sequence=0,
        section_id=None,
        data={
            "name": name,
            "policy": policy,
            "windowSeconds": window_s,
            "strategy": strategy,
            "defaultTrust": default_trust,
            "sections": rows,
        },
    )


def check_levels(name: str, levels: list[str]) -> None:
    from engine.protocol.errors import InvalidRequest

    if not DOC_NAME.match(name):
        raise InvalidRequest(f"invalid framework name {name!r}")
    if not levels or len(set(levels)) != len(levels):
        raise InvalidRequest("a framework needs one or more distinct levels, lowest first")
    for level in levels:
        if not LEVEL.match(level):
            raise InvalidRequest(f"invalid level {level!r}")


def frameworks_from(events: list[StoredEvent]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for event in events:
        payload: Mapping[str, Any] = event.payload
        if event.type == "framework.created":
            found[str(payload["name"])] = list(payload["levels"])
    return found
