"""The v0.3 event envelope (``event.json``), and the injected sources of ids and secrets.

An event is the envelope as a dict: ``payloadJson`` is a JSON string, as the wire has it. The
fold reads ``payload(event)``. ``sequenceNumber`` is the event's place in its document's stream,
from 0, gapless.
"""

from __future__ import annotations

import json
import secrets
import uuid
from collections.abc import Mapping
from typing import Any, Protocol

from engine.canonical import canonical_json

ENTITY_TYPE = "pact-document"


class Ids(Protocol):
    """Where a decision gets new ids and invite tokens: random live, a sequence in tests."""

    def uuid(self) -> str: ...

    def token(self) -> str: ...


class RandomIds:
    def uuid(self) -> str:
        return str(uuid.uuid4())

    def token(self) -> str:
        return "pact_" + secrets.token_urlsafe(24)


class CountingIds:
    """Deterministic ids for tests and simulations: UUIDs 1, 2, 3, ... of a namespace."""

    def __init__(self, namespace: int = 0) -> None:
        self.next = 1
        self.namespace = namespace

    def uuid(self) -> str:
        value = uuid.UUID(int=(self.namespace << 64) | self.next)
        self.next += 1
        return str(value)

    def token(self) -> str:
        return f"pact_test_{self.uuid()}"


def payload(event: Mapping[str, Any]) -> dict[str, Any]:
    """The event's ``payloadJson``, read: ``ValueError`` if it is not JSON or not an object."""
    data = json.loads(event["payloadJson"])
    if not isinstance(data, dict):
        raise ValueError(f"its payloadJson is a {type(data).__name__}, not a JSON object")
    return data


def envelope(
    *,
    event_id: str,
    epoch_ms: int,
    actor_id: str | None,
    actor_display: str,
    actor_kind: str,
    event_type: str,
    document_id: str,
    sequence: int,
    section_id: str | None,
    data: Mapping[str, Any],
    correlation_id: str | None = None,
    in_response_to: str | None = None,
) -> dict[str, Any]:
    return {
        "id": event_id,
        "epochMs": epoch_ms,
        "actorId": actor_id,
        "actorDisplay": actor_display,
        "actorKind": actor_kind,
        "eventType": event_type,
        "entityType": ENTITY_TYPE,
        "entityId": document_id,
        "correlationId": correlation_id,
        "inResponseTo": in_response_to,
        "sequenceNumber": sequence,
        "sectionId": section_id,
        "payloadJson": canonical_json(data),
    }
