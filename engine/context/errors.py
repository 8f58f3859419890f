"""Typed errors of the context engine.

Every failure carries a stable ``code``, a human message that names the offending input, and
the structured details a caller (the CLI's ``--json``, the TUI's caret) needs to point at it.
An operation that raises one of these has changed nothing.
"""

from __future__ import annotations

from typing import Any


class ContextError(Exception):
    """Base class: ``code`` is stable and machine-readable, ``message`` is for people."""

    code: str = "CONTEXT_ERROR"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, **self.details}

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class InvalidSelector(ContextError):
    """A selector string that does not parse. ``position`` is the 0-based character index."""

    code = "INVALID_SELECTOR"

    def __init__(self, message: str, *, selector: str, position: int, token: str) -> None:
        super().__init__(
            f"{message} at position {position} (token {token!r}) in selector {selector!r}",
            selector=selector,
            position=position,
            token=token,
        )
        self.reason = message
        self.selector = selector
        self.position = position
        self.token = token


class InvalidCoordinate(ContextError):
    """Coordinates that parse but cannot be used here (a range for a write, a non-integer)."""

    code = "INVALID_COORDINATE"


class NoSuchDepth(ContextError):
    """A write into a history depth that does not exist."""

    code = "NO_SUCH_DEPTH"


class NotFound(ContextError):
    """Nothing at the addressed coordinates (for update or delete)."""

    code = "NOT_FOUND"


class UnknownKey(ContextError):
    code = "UNKNOWN_KEY"


class InvalidComponent(ContextError):
    """A component or message whose fields have the wrong types (``ttl="x"``, text not a str)."""

    code = "INVALID_COMPONENT"


class NotAComponent(ContextError):
    """Something other than a component (``TextContent(...)``, ``ContextComponent(...)``) was
    given to place in the tree."""

    code = "NOT_A_COMPONENT"


class SelectorOrKey(ContextError):
    """A delete names its target by a selector or by a key: exactly one of the two."""

    code = "SELECTOR_OR_KEY"


class InvalidCommand(ContextError):
    """A context command (the JSON form the workspace stores) that is malformed."""

    code = "INVALID_COMMAND"


class InvalidLifecycle(ContextError):
    """``ttl <= 0``, ``cad <= 0``, or a render lifecycle that cannot run."""

    code = "INVALID_LIFECYCLE"


class ReadOnlySelector(ContextError):
    """A time-qualified selector (``@t-1 …``) used for a write, or a write on a snapshot."""

    code = "READ_ONLY"


class InvalidUpdateMode(ContextError):
    code = "INVALID_UPDATE_MODE"


class UnknownSnapshot(ContextError):
    code = "UNKNOWN_SNAPSHOT"


class InvalidExport(ContextError):
    """A ``model_dump`` document that cannot be loaded."""

    code = "INVALID_EXPORT"


class MalformedPackedTurns(InvalidExport):
    """A checkpoint's packed turns found malformed when decoded or indexed, after the context
    was restored from it (its digest matched: a forged checkpoint). Whoever reads the context
    then rebuilds it from its log (``Workspace.unpacking``) rather than failing."""


class InvalidChangelog(ContextError):
    """A changelog's JSON form that cannot be read; ``field`` names where (``entries[2].kind``)."""

    code = "INVALID_CHANGELOG"
