"""Refusals, each with its v0.3 error code (``error-response.json``).

A ``ProtocolError`` is a decision, not a failure: the command is refused and nothing changes.
``code`` is the wire code, ``description`` a sentence naming what was wrong and where, and
``metadata`` machine-readable context. Nothing in a refusal may name a section, a title or content
the actor is not cleared to see: the caller builds messages from what the actor can see.
"""

from __future__ import annotations

from typing import Any


class ProtocolError(Exception):
    """A refused command (or read). Subclasses fix the code; ``code`` may also be given."""

    code = "request.invalid"

    def __init__(self, description: str, *, code: str | None = None, **metadata: Any) -> None:
        super().__init__(description)
        if code is not None:
            self.code = code
        self.description = description
        self.metadata = metadata
        # Events of due work fired before the refusal (``decide`` ticks first): the command
        # changed nothing, but these were due whatever it was, and are appended all the same.
        self.fired: list[dict[str, Any]] = []

    def wire(self) -> dict[str, Any]:
        """The error as one entry of ``{"errors": [...]}``."""
        entry: dict[str, Any] = {"code": self.code, "description": self.description}
        if self.metadata:
            entry["metadata"] = self.metadata
        return entry


class Unauthorized(ProtocolError):
    code = "auth.unauthorized"  # who is acting is not known (a bad or expired invite token)


class Forbidden(ProtocolError):
    code = "auth.forbidden"  # known, but its trust level does not allow the operation


class NotJoined(ProtocolError):
    code = "agent.not_joined"


class AlreadyJoined(ProtocolError):
    code = "agent.already_joined"


class AgentNotFound(ProtocolError):
    code = "agent.not_found"


class SectionNotFound(ProtocolError):
    code = "section.not_found"


class SectionLocked(ProtocolError):
    code = "section.locked"


class ProposalNotFound(ProtocolError):
    code = "proposal.not_found"


class ProposalConflict(ProtocolError):
    code = "proposal.conflict"


class InvalidStatus(ProtocolError):
    code = "proposal.invalid_status"


class SelfApproval(ProtocolError):
    code = "proposal.self_approval"


class DocumentNotFound(ProtocolError):
    code = "document.not_found"


class DocumentExists(ProtocolError):
    code = "document.exists"


class DocumentLocked(ProtocolError):
    code = "document.locked"


class AccessDenied(ProtocolError):
    code = "classification.access_denied"


class InvalidContent(ProtocolError):
    code = "content.invalid"  # proposed Markdown that would break the section structure


class InvalidRequest(ProtocolError):
    code = "request.invalid"  # a request that does not match its schema, or a bad value


class IdempotencyMismatch(ProtocolError):
    code = "request.idempotency_mismatch"  # a key reused for a different request


class NotFound(ProtocolError):
    code = "entity.not_found"  # an intent, constraint, comment, query or invite


class AmbiguousId(ProtocolError):
    code = "request.ambiguous_id"  # a shortened id that more than one id starts or ends with
