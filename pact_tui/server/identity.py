"""Who a request is: the agent whose API key it carries, or the custodian whose key it is.

An agent's key is minted when it joins over HTTP; the log keeps its hash on the registration
(``Agent.key_hash``). A custodian's key is made with ``pact-tui key create`` and kept in the
workspace's ``keys`` stream (``engine/keys.py``). Nothing in a body or a query names the actor:
it is the key's, always. The key's hash is what is compared; the key itself is kept nowhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.keys import key_hash
from engine.protocol.commands import Actor
from engine.protocol.errors import Unauthorized

if TYPE_CHECKING:
    from engine.protocol.document import Document
    from engine.protocol.model import Agent
    from engine.workspace import Workspace


@dataclass(frozen=True, slots=True)
class Identity:
    """The actor a key acts as; ``agent_id`` for an agent's key, None for a custodian's.
    ``label`` names the key: an agent's name, or the label given at ``pact-tui key create``
    (its human's name if none was)."""

    actor: Actor
    key_hash: str
    agent_id: str | None
    label: str


def presented_key(x_api_key: str | None, authorization: str | None) -> str | None:
    """The key a request carries: ``X-Api-Key``, else ``Authorization: Bearer KEY``."""
    if x_api_key:
        return x_api_key.strip() or None
    if authorization:
        scheme, _, value = authorization.strip().partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    return None


class Keys:
    """Looks keys up: agents' in the document's projection, custodians' in the log."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        # document name → (how many registrations it had, key hash → agent id)
        self._agents: dict[str, tuple[int, dict[str, str]]] = {}

    def agent_key(self, name: str, doc: Document, hashed: str) -> Agent | None:
        """The registration of document ``name`` whose key has hash ``hashed`` (gone or not)."""
        known = self._agents.get(name)
        if known is None or known[0] != len(doc.agents):  # a key is set once, at the join
            index = {a.key_hash: a.id for a in doc.agents.values() if a.key_hash is not None}
            known = self._agents[name] = (len(doc.agents), index)
        agent_id = known[1].get(hashed)
        return doc.agents.get(agent_id) if agent_id is not None else None

    async def custodian(self, key: str) -> Identity | None:
        """The custodian ``key`` acts as; None if it is no custodian key. A revoked one is
        ``auth.unauthorized`` (read from the log now: revoked in any process, refused here)."""
        hashed = key_hash(key)
        found = (await self.workspace.custodian_keys()).get(hashed)
        if found is None:
            return None
        if not found.active:
            raise Unauthorized("this API key was revoked", reason="revoked")
        return Identity(Actor.human(found.human), hashed, None, found.label or found.human)

    async def identify(self, key: str | None, name: str | None, doc: Document | None) -> Identity:
        """Who ``key`` is on document ``name`` (None: a route of no document)."""
        if key is None:
            raise Unauthorized(
                "no API key: send it as X-Api-Key or Authorization: Bearer", reason="missing"
            )
        hashed = key_hash(key)
        if name is not None and doc is not None:
            agent = self.agent_key(name, doc, hashed)
            if agent is not None:
                if not agent.active:
                    raise Unauthorized(
                        f"this API key's agent is gone ({agent.gone}): join again for a new key",
                        reason=agent.gone or "gone",
                    )
                return Identity(Actor.agent(agent.name), hashed, agent.id, agent.name)
        custodian = await self.custodian(key)
        if custodian is not None:
            return custodian
        raise Unauthorized("unknown API key (an agent's key works on its own document only)")
