"""API keys of ``pact-tui serve``: the custodians' keys, kept in the workspace's ``keys`` stream.

An agent's key is minted when it joins over HTTP and lives in its document's log (the
``keyHash`` of its ``pact.agent.joined``): it dies with the registration (leave, eviction,
removal). A custodian's key is made on the command line (``pact-tui key create WS --human
NAME``) and acts as that human on every document of the workspace, until revoked.

Either way the key is random (the workspace's injected ``Ids``), shown once, and the log keeps
only its SHA-256, as it does an invite's token. A key's id is its hash's first 12 digits. Every
process reads the stream (``Workspace.custodian_keys``), so a revocation holds in every process
as soon as it is committed. Pure: no I/O; the workspace reads and appends the events.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

KEYS = "keys"
CREATED = "key.created"
REVOKED = "key.revoked"
KEY_ID_DIGITS = 12
PREFIX_MIN = 6


class StoredKeyEvent(Protocol):
    @property
    def type(self) -> str: ...

    @property
    def payload(self) -> Mapping[str, Any]: ...

    @property
    def time_ns(self) -> int: ...


@dataclass(frozen=True, slots=True)
class CustodianKey:
    """A custodian's key as the log keeps it: never the key itself."""

    key_hash: str
    human: str
    label: str | None
    created_ms: int
    revoked_by: str | None = None
    revoked_ms: int | None = None
    why: str | None = None

    @property
    def key_id(self) -> str:
        return self.key_hash[:KEY_ID_DIGITS]

    @property
    def active(self) -> bool:
        return self.revoked_by is None


def key_hash(key: str) -> str:
    """The SHA-256 (hex) of a key, as the log keeps it."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def keys_from(events: Iterable[StoredKeyEvent]) -> dict[str, CustodianKey]:
    """The custodian keys the ``keys`` stream holds, by hash, in the order they were made."""
    found: dict[str, CustodianKey] = {}
    for event in events:
        data = event.payload
        if event.type == CREATED:
            hashed = str(data["keyHash"])
            found[hashed] = CustodianKey(
                key_hash=hashed,
                human=str(data["human"]),
                label=data.get("label"),
                created_ms=event.time_ns // 1_000_000,
            )
        elif event.type == REVOKED and str(data["keyHash"]) in found:
            hashed = str(data["keyHash"])
            found[hashed] = replace(
                found[hashed],
                revoked_by=str(data["by"]),
                revoked_ms=event.time_ns // 1_000_000,
                why=data.get("why"),
            )
    return found


def created_payload(hashed: str, human: str, label: str | None) -> dict[str, Any]:
    return {"keyHash": hashed, "human": human, "label": label}


def revoked_payload(hashed: str, by: str, why: str | None) -> dict[str, Any]:
    return {"keyHash": hashed, "by": by, "why": why}
