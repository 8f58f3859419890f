"""The FastAPI application: the PACT v0.3 routes over one open workspace (docs/server.md).

Every write is a typed engine command run with ``Workspace.run_document`` as the key's actor;
every read is one of ``engine.protocol.views`` with the key's agent as the reader (a custodian
reads everything). No rule of the protocol is decided here: the routes translate HTTP to
commands and views, and the engine's ``ProtocolError`` to the v0.3 error document.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

import orjson
from fastapi import APIRouter, Body, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from sse_starlette.sse import EventSourceResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from engine.canonical import whole_number
from engine.keys import key_hash
from engine.protocol import views
from engine.protocol.barriers import named_section, reads
from engine.protocol.decide import iso, proposal_response
from engine.protocol.errors import (
    DocumentNotFound,
    Forbidden,
    InvalidRequest,
    NotFound,
    ProtocolError,
    Unauthorized,
)
from engine.protocol.results import Joined
from engine.protocol.short_ids import proposal_id as whole_proposal_id

from .activity import KeyActivity
from .identity import Identity, Keys, presented_key
from .limits import BodyLimit, RateLimit, error_body
from .live import Live

if TYPE_CHECKING:
    from engine.protocol.document import Document
    from engine.protocol.model import Agent, Proposal
    from engine.workspace import Workspace

API = "/api/pact/{documentId}"
POLL_DEFAULT, POLL_MIN, POLL_MAX = 50, 1, 200
WAIT_MAX_S = 60  # the longest a long poll waits
HEARTBEAT_MS = 60_000  # an agent's request older than this since it was last seen heartbeats
RATE, BURST = 50.0, 100  # requests a second per key (and per address for the open routes)

Doc = Annotated[str, Path(description="the document's id or its name")]

STATUS = {
    "auth.unauthorized": 401,
    "auth.forbidden": 403,
    "classification.access_denied": 403,
    "agent.not_joined": 403,
    "agent.not_found": 404,
    "section.not_found": 404,
    "proposal.not_found": 404,
    "document.not_found": 404,
    "entity.not_found": 404,
    "route.not_found": 404,
    "agent.already_joined": 409,
    "section.locked": 409,
    "proposal.conflict": 409,
    "proposal.invalid_status": 409,
    "proposal.self_approval": 409,
    "document.locked": 423,
    "request.idempotency_mismatch": 409,
    "rate.limited": 429,
    "request.too_large": 413,
}


def status_of(code: str) -> int:
    return STATUS.get(code, 400)


def json_answer(body: Any) -> Response:
    """``body`` as a JSON answer, serialised by orjson. A page of events is the largest answer
    agents ask for most: FastAPI's serialisation of an untyped dict (pydantic, reading each
    value's type) took several times orjson's time for it. The route still declares the
    answer's type (``route(answer=…)``) for the OpenAPI document."""
    return Response(orjson.dumps(body), media_type="application/json")


def refusal(error: ProtocolError) -> JSONResponse:
    headers = {}
    if error.code == "auth.unauthorized":
        headers["WWW-Authenticate"] = 'Bearer realm="pact"'
    if error.code == "rate.limited":
        headers["Retry-After"] = str(error.metadata.get("retryAfter", 1))
    return JSONResponse(
        {"errors": [error.wire()]}, status_code=status_of(error.code), headers=headers
    )


# -- request bodies: the v0.3 schemas' fields; unknown fields are ignored here (docs/server.md) --
class Body_(BaseModel):
    model_config = ConfigDict(extra="ignore")


class JoinBody(Body_):
    agentName: Annotated[str, Field(min_length=1, max_length=200)]
    role: Annotated[str, Field(max_length=100)] | None = None
    token: str | None = None


class JoinTokenBody(JoinBody):
    token: Annotated[str, Field(min_length=1)]


class ProposalBody(Body_):
    sectionId: Annotated[str, Field(min_length=1, max_length=256)]
    newContent: Annotated[str, Field(min_length=1)]
    summary: Annotated[str, Field(max_length=500)] | None = None
    baseVersion: Annotated[int, Field(ge=0)] | None = None
    reasoning: Annotated[str, Field(max_length=2000)] | None = None
    windowSeconds: int | None = None


class ReasonBody(Body_):
    reason: str | None = None


class ObjectBody(Body_):
    reason: Annotated[str, Field(min_length=1)]


class LockBody(Body_):
    ttlSeconds: Annotated[int, Field(ge=1, le=60)] | None = None


class UnlockBody(Body_):
    why: str | None = None


class IntentBody(Body_):
    sectionId: Annotated[str, Field(min_length=1, max_length=256)]
    goal: Annotated[str, Field(min_length=1)]
    category: str | None = None


class ConstraintBody(Body_):
    sectionId: Annotated[str, Field(min_length=1, max_length=256)]
    boundary: Annotated[str, Field(min_length=1)]
    category: str | None = None
    reasoning: str | None = None


class SalienceBody(Body_):
    sectionId: Annotated[str, Field(min_length=1, max_length=256)]
    score: Annotated[int, Field(ge=0, le=10)]


class CommentBody(Body_):
    sectionId: Annotated[str, Field(min_length=1, max_length=256)]
    text: Annotated[str, Field(min_length=1)]
    proposalId: str | None = None


class EscalateBody(Body_):
    sectionId: Annotated[str, Field(min_length=1, max_length=256)] | None = None
    message: str | None = None
    reason: str | None = None


class AskBody(Body_):
    question: Annotated[str, Field(min_length=1)]
    sectionId: Annotated[str, Field(max_length=256)] | None = None
    context: str | None = None
    timeoutSeconds: Annotated[int, Field(ge=10, le=3600)] | None = None


class RespondBody(Body_):
    queryId: str | None = None
    response: Annotated[str, Field(min_length=1)]


class DoneBody(Body_):
    status: Literal["aligned", "dissenting", "partial", "abstained"]
    summary: str | None = None


class ResolveBody(Body_):
    sectionId: Annotated[str, Field(min_length=1, max_length=256)]
    decision: Annotated[str, Field(min_length=1)]
    justification: Annotated[str, Field(min_length=1)]
    override: bool = False
    proposalId: str | None = None
    content: str | None = None


class WhyBody(Body_):
    why: Annotated[str, Field(min_length=1)]


class TrustBody(Body_):
    level: str
    why: str | None = None


class ClearanceBody(Body_):
    level: Annotated[str, Field(min_length=1)]
    framework: str | None = None


class InviteBody(Body_):
    trust: str = "Suggester"
    clearance: str | None = None
    organisation: str | None = None
    mode: str = "Full"
    sections: list[str] = []
    ttlSeconds: int | None = None


class ErrorEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: str
    description: str
    metadata: dict[str, Any] | None = None


class ErrorBody(BaseModel):
    """``error-response.json``: every refusal."""

    model_config = ConfigDict(extra="forbid")
    errors: Annotated[list[ErrorEntry], Field(min_length=1)]


REFUSALS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": "a refusal (v0.3 error document)"}
    for status in (400, 401, 403, 404, 409, 413, 423, 429)
}


# -- the server's state ------------------------------------------------------------------------
@dataclass(slots=True)
class Call:
    """One request on one document: its name, projection and who makes it."""

    name: str
    doc: Document
    who: Identity

    @property
    def reader(self) -> Agent | None:
        return None if self.who.agent_id is None else self.doc.agents[self.who.agent_id]


class Server:
    def __init__(
        self, workspace: Workspace, *, invite_only: bool = False, rate: float = RATE
    ) -> None:
        self.workspace = workspace
        self.keys = Keys(workspace)
        self.live = Live(workspace)
        self.limit = RateLimit(rate, max(1, int(rate * 2)))
        self.invite_only = invite_only
        self._names: dict[str, str] = {}  # document id → name
        self._known: set[str] = set()  # the documents' names, as last read
        # key hash → its label and last request: written beside the workspace for the app
        # (pact_tui/server/activity.py); ``heard`` counts the requests, to write only news.
        self.seen: dict[str, KeyActivity] = {}
        self.heard = 0

    def now_ms(self) -> int:
        return self.workspace.now_ns() // 1_000_000

    async def document(self, given: str) -> tuple[str, Document]:
        """The document ``given`` names: its id or its name. The names are read from the log
        only when ``given`` is not one known here (a document made since, or none)."""
        ws = self.workspace
        name = self._names.get(given, given)
        if name not in self._known:
            self._known = set(await ws.document_names())
            for other in self._known - set(self._names.values()):
                doc = (await ws.load_document(other)).doc
                self._names[doc.id] = other
            name = self._names.get(given, given)
            if name not in self._known:
                raise DocumentNotFound(f"no document {given!r}", document=given)
        return name, (await ws.load_document(name)).doc

    def throttle(self, who: str) -> None:
        wait = self.limit.take(who)
        if wait:
            raise ProtocolError(
                f"too many requests: try again in {RateLimit.retry_after(wait)} s",
                code="rate.limited",
                retryAfter=int(RateLimit.retry_after(wait)),
            )

    async def call(self, request: Request, given: str) -> Call:
        """Who makes ``request`` on document ``given`` (401 for no, an unknown or a revoked
        key, before anything about the document is said), counted as the agent's heartbeat."""
        key = presented_key(request.headers.get("x-api-key"), request.headers.get("authorization"))
        try:
            name, doc = await self.document(given)
        except DocumentNotFound:
            who = await self.keys.identify(key, None, None)  # 401 before 404
            self.throttle(who.key_hash)
            raise
        who = await self.keys.identify(key, name, doc)
        self.throttle(who.key_hash)
        now = self.now_ms()
        self.seen[who.key_hash] = KeyActivity(who.label, now)
        self.heard += 1
        call = Call(name, doc, who)
        agent = call.reader
        if (
            agent is not None
            and request.method == "GET"
            and now - agent.last_seen_ms > HEARTBEAT_MS
        ):
            with contextlib.suppress(ProtocolError):
                await self.workspace.run_document(name, {"op": "heartbeat"}, who.actor)
        return call

    async def run(self, call: Call, request: Request, command: dict[str, Any]) -> dict[str, Any]:
        """Run ``command`` as the call's actor; a 2xx answer means its events are committed."""
        command = {k: v for k, v in command.items() if v is not None}
        idempotency = request.headers.get("idempotency-key")
        if idempotency is not None:
            command["idempotencyKey"] = idempotency
        if command.get("proposalId"):
            command["proposalId"] = whole_proposal_id(call.doc, command["proposalId"], call.reader)
        decision = await self.workspace.run_document(call.name, command, call.who.actor)
        result = decision.answer()
        if decision.retried:
            result["retried"] = True
        return result

    async def join(self, request: Request, given: str, body: JoinBody) -> dict[str, Any]:
        self.throttle("join:" + (request.client.host if request.client else "?"))
        name, doc = await self.document(given)
        if body.token is None and self.invite_only:
            raise Forbidden("this server admits agents by invite only: join with a token")
        key = "pact_" + secrets.token_urlsafe(32)
        command: dict[str, Any] = {
            "op": "join",
            "agentName": body.agentName,
            "role": body.role,
            "token": body.token,
            "keyHash": key_hash(key),
        }
        command = {k: v for k, v in command.items() if v is not None}
        idempotency = request.headers.get("idempotency-key")
        if idempotency is not None:
            command["idempotencyKey"] = idempotency
        from engine.protocol.commands import Actor

        decision = await self.workspace.run_document(name, command, Actor.agent(body.agentName))
        result = decision.answer()
        joined = decision.result
        agent = doc.agents.get(joined.registration_id) if isinstance(joined, Joined) else None
        # The key is shown this once: a retried join (its Idempotency-Key) answers null.
        result["apiKey"] = None if decision.retried else key
        result["keyId"] = None if agent is None or agent.key_hash is None else agent.key_hash[:12]
        if agent is not None:
            result["trustLevel"] = agent.trust
            result["contextMode"] = agent.mode
        if decision.retried:
            result["retried"] = True
        return result


# -- rows ----------------------------------------------------------------------------------
def proposal_row(doc: Document, proposal: Proposal) -> dict[str, Any]:
    """``proposal-response.json``, with ``id`` as the clients read it, and what a reviewer needs."""
    row = proposal_response(doc, proposal)
    row["id"] = proposal.id
    row["authorName"] = proposal.author_name
    row["authorKind"] = proposal.author_kind
    row["newContent"] = proposal.content
    row["baseVersion"] = proposal.base_version
    row["reason"] = proposal.reason
    return row


def section_rows(call: Call, now_ms: int) -> list[dict[str, Any]]:
    rows = []
    for row in views.section_rows(call.doc, call.reader, now_ms):
        if row["sectionId"] == "sec:_root":
            root = call.doc.by_id.get("sec:_root")
            if root is None or not root.content.strip():
                continue  # an empty preamble is no section to a client
        rows.append({**row, "heading": row["title"]})
    return rows


def agent_row(agent: Agent) -> dict[str, Any]:
    return {
        "agentId": agent.id,
        "registrationId": agent.id,
        "agentName": agent.name,
        "role": agent.role,
        "trustLevel": agent.trust,
        "joinedAt": iso(agent.joined_ms),
        "lastSeenAt": iso(agent.last_seen_ms),
        "active": agent.active,
        "status": "active" if agent.active else agent.gone,
    }


def cursor_of(text: str | None, what: str) -> int:
    """``evt_N`` or ``N``: from sequence number N."""
    if text is None or text == "":
        return 0
    digits = text[4:] if text.startswith("evt_") else text
    if not (digits.isascii() and digits.isdigit()):
        raise InvalidRequest(
            f"{what} {text!r}: a cursor is evt_N (N a sequence number)", field=what
        )
    try:
        return whole_number(digits)
    except ValueError as error:
        raise InvalidRequest(f"{what} {text!r}: {error}", field=what) from None


class TapAlias:
    """ASGI middleware: a request to ``/api/tap/…`` is served as ``/api/pact/…``."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/api/tap/"):
            path = "/api/pact/" + scope["path"][len("/api/tap/") :]
            raw = scope.get("raw_path") or scope["path"].encode()
            scope = {**scope, "path": path, "raw_path": raw.replace(b"/api/tap/", b"/api/pact/", 1)}
        await self.app(scope, receive, send)


# -- the application --------------------------------------------------------------------------
def build(server: Server) -> FastAPI:
    app = FastAPI(
        title="pact-tui",
        version="0.3",
        description="PACT v0.3 over HTTP: the documents of one pact-tui workspace.",
        openapi_url="/openapi.json",
        docs_url=None,
        redoc_url=None,
    )
    app.add_middleware(BodyLimit)

    @app.exception_handler(ProtocolError)
    async def protocol_error(request: Request, error: ProtocolError) -> JSONResponse:
        return refusal(error)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        problems = error.errors()
        first = problems[0] if problems else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "the request"
        return refusal(
            InvalidRequest(
                f"{where}: {first.get('msg', 'invalid')}", field=where, problems=len(problems)
            )
        )

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
        code = {404: "route.not_found", 405: "request.method_not_allowed"}.get(
            error.status_code, "request.invalid"
        )
        return JSONResponse(error_body(code, str(error.detail)), status_code=error.status_code)

    router = APIRouter()

    def route(
        method: str, path: str, verb: str, status: int = 200, *, answer: Any = None
    ) -> Callable[[Callable[..., Awaitable[Any]]], Callable[..., Awaitable[Any]]]:
        """Register a handler; ``answer``: the answer's type, for a handler that returns its
        answer serialised (``json_answer``) rather than the type."""

        def register(handler: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
            typed = {} if answer is None else {"response_model": answer}
            router.add_api_route(
                path,
                handler,
                methods=[method],
                operation_id=verb,
                status_code=status,
                responses=REFUSALS,
                summary=(handler.__doc__ or verb).strip().splitlines()[0],
                **typed,
            )
            return handler

        return register

    # -- agents ----------------------------------------------------------------------------
    @route("POST", "/join", "join", 201)
    async def join(request: Request, documentId: Doc, body: JoinBody) -> dict[str, Any]:
        """Join the document as an agent: the answer holds its API key, shown this once."""
        return await server.join(request, documentId, body)

    @route("POST", "/join-token", "join-token", 201)
    async def join_token(request: Request, documentId: Doc, body: JoinTokenBody) -> dict[str, Any]:
        """Join with an invite token (trust, clearance and context mode come from it)."""
        return await server.join(request, documentId, body)

    async def leave_(request: Request, documentId: Doc) -> dict[str, Any]:
        call = await server.call(request, documentId)
        return await server.run(call, request, {"op": "leave"})

    @route("DELETE", "/leave", "leave")
    async def leave(request: Request, documentId: Doc) -> dict[str, Any]:
        """Leave the document (the key stops working)."""
        return await leave_(request, documentId)

    @route("POST", "/leave", "leave-post")
    async def leave_post(request: Request, documentId: Doc) -> dict[str, Any]:
        """Leave the document (as DELETE /leave)."""
        return await leave_(request, documentId)

    @route("POST", "/heartbeat", "heartbeat")
    async def heartbeat(request: Request, documentId: Doc) -> dict[str, Any]:
        """Say you are still here (any request of yours does)."""
        call = await server.call(request, documentId)
        return await server.run(call, request, {"op": "heartbeat"})

    @route("GET", "/agents", "agents")
    async def agents(request: Request, documentId: Doc) -> list[dict[str, Any]]:
        """The joined agents."""
        call = await server.call(request, documentId)
        return [agent_row(a) for a in call.doc.active_agents()]

    @route("POST", "/done", "done")
    async def done(request: Request, documentId: Doc, body: DoneBody) -> dict[str, Any]:
        """Say you are done: aligned, dissenting, partial or abstained."""
        call = await server.call(request, documentId)
        command = {"op": "done", "status": body.status, "summary": body.summary}
        return await server.run(call, request, command)

    @route("GET", "/completions", "completions")
    async def completions(request: Request, documentId: Doc) -> list[dict[str, Any]]:
        """The agents that said they are done, and how."""
        call = await server.call(request, documentId)
        return [
            {
                "agentId": a.id,
                "agentName": a.name,
                "status": a.completion[0],
                "summary": a.completion[1],
            }
            for a in call.doc.agents.values()
            if a.completion is not None
        ]

    # -- reading -----------------------------------------------------------------------------
    @route("GET", "/content", "get")
    async def content(request: Request, documentId: Doc) -> dict[str, Any]:
        """The Markdown you may read."""
        call = await server.call(request, documentId)
        return {
            "documentId": call.doc.id,
            "name": call.doc.name,
            "version": call.doc.version,
            "content": views.content(call.doc, call.reader),
        }

    @route("GET", "/sections", "sections")
    async def sections(request: Request, documentId: Doc) -> list[dict[str, Any]]:
        """The section tree you may see."""
        call = await server.call(request, documentId)
        return section_rows(call, server.now_ms())

    # -- proposals ---------------------------------------------------------------------------
    @route("GET", "/proposals", "proposals")
    async def proposals(
        request: Request,
        documentId: Doc,
        status: str | None = None,
        sectionId: str | None = None,
    ) -> list[dict[str, Any]]:
        """The proposals you may read, oldest first."""
        call = await server.call(request, documentId)
        section = None
        if sectionId is not None:
            section = named_section(call.doc, call.reader, sectionId, server.now_ms())
        found = views.proposals(call.doc, call.reader, status=status, section=section)
        return [proposal_row(call.doc, p) for p in found]

    @route("POST", "/proposals", "propose", 201)
    async def propose(request: Request, documentId: Doc, body: ProposalBody) -> dict[str, Any]:
        """Propose new content for a section."""
        call = await server.call(request, documentId)
        result = await server.run(call, request, {"op": "propose", **body.model_dump()})
        if "proposalId" in result:
            result["id"] = result["proposalId"]
        return result

    @route("GET", "/proposals/{proposalId}", "proposal")
    async def proposal(request: Request, documentId: Doc, proposalId: str) -> dict[str, Any]:
        """One proposal."""
        call = await server.call(request, documentId)
        pid = whole_proposal_id(call.doc, proposalId, call.reader)
        found = call.doc.proposals.get(pid)
        if found is None or not reads(call.doc, call.reader, call.doc.by_key[found.section]):
            from engine.protocol.errors import ProposalNotFound

            raise ProposalNotFound(f"no proposal {proposalId!r}", proposalId=proposalId)
        return proposal_row(call.doc, found)

    def on_proposal(op: str, field: str | None) -> Callable[..., Awaitable[dict[str, Any]]]:
        async def handler(
            request: Request,
            documentId: Doc,
            proposalId: str,
            body: Annotated[ReasonBody | None, Body()] = None,
        ) -> dict[str, Any]:
            call = await server.call(request, documentId)
            command: dict[str, Any] = {"op": op, "proposalId": proposalId}
            if field is not None and body is not None:
                command[field] = body.reason
            return await server.run(call, request, command)

        handler.__doc__ = f"{op.capitalize()} a proposal."
        return handler

    for op, field in (("approve", "why"), ("reject", "reason"), ("withdraw", "reason")):
        route("POST", f"/proposals/{{proposalId}}/{op}", op)(on_proposal(op, field))

    @route("POST", "/proposals/{proposalId}/object", "object")
    async def object_(
        request: Request, documentId: Doc, proposalId: str, body: ObjectBody
    ) -> dict[str, Any]:
        """Object to a proposal (it becomes Objected)."""
        call = await server.call(request, documentId)
        command = {"op": "object", "proposalId": proposalId, "reason": body.reason}
        return await server.run(call, request, command)

    @route("POST", "/proposals/{proposalId}/force-merge", "force-merge")
    async def force_merge(
        request: Request, documentId: Doc, proposalId: str, body: WhyBody
    ) -> dict[str, Any]:
        """A custodian merges a proposal now (an override: say why)."""
        call = await server.call(request, documentId)
        command = {"op": "force-merge", "proposalId": proposalId, "why": body.why}
        return await server.run(call, request, command)

    # -- locks ------------------------------------------------------------------------------
    @route("POST", "/sections/{sectionId:path}/lock", "lock")
    async def lock(
        request: Request,
        documentId: Doc,
        sectionId: str,
        body: Annotated[LockBody | None, Body()] = None,
    ) -> dict[str, Any]:
        """Lock a section for 1-60 s (30 by default)."""
        call = await server.call(request, documentId)
        ttl = body.ttlSeconds if body is not None else None
        return await server.run(
            call, request, {"op": "lock", "sectionId": sectionId, "ttlSeconds": ttl}
        )

    async def unlock_(
        request: Request, documentId: str, sectionId: str, body: UnlockBody | None
    ) -> dict[str, Any]:
        call = await server.call(request, documentId)
        why = body.why if body is not None else None
        return await server.run(call, request, {"op": "unlock", "sectionId": sectionId, "why": why})

    @route("DELETE", "/sections/{sectionId:path}/lock", "unlock")
    async def unlock(
        request: Request,
        documentId: Doc,
        sectionId: str,
        body: Annotated[UnlockBody | None, Body()] = None,
    ) -> dict[str, Any]:
        """Release a lock (a custodian force-unlocks another's, saying why)."""
        return await unlock_(request, documentId, sectionId, body)

    @route("POST", "/sections/{sectionId:path}/unlock", "unlock-post")
    async def unlock_post(
        request: Request,
        documentId: Doc,
        sectionId: str,
        body: Annotated[UnlockBody | None, Body()] = None,
    ) -> dict[str, Any]:
        """Release a lock (as DELETE .../lock)."""
        return await unlock_(request, documentId, sectionId, body)

    # -- comments, escalation, questions ------------------------------------------------------
    @route("GET", "/comments", "comments")
    async def comments(
        request: Request, documentId: Doc, sectionId: str | None = None
    ) -> list[dict[str, Any]]:
        """The comments you may read."""
        call = await server.call(request, documentId)
        section = None
        if sectionId is not None:
            section = named_section(call.doc, call.reader, sectionId, server.now_ms())
        found = views.comments(call.doc, call.reader, section=section)
        return [views.comment_row(call.doc, k) for k in found]

    @route("POST", "/comments", "comment", 201)
    async def comment(request: Request, documentId: Doc, body: CommentBody) -> dict[str, Any]:
        """Comment on a section (or one of its proposals)."""
        call = await server.call(request, documentId)
        return await server.run(call, request, {"op": "comment", **body.model_dump()})

    @route("POST", "/comments/{commentId}/resolve", "resolve-comment")
    async def resolve_comment(request: Request, documentId: Doc, commentId: str) -> dict[str, Any]:
        """Mark a comment resolved."""
        call = await server.call(request, documentId)
        return await server.run(call, request, {"op": "resolve-comment", "commentId": commentId})

    @route("POST", "/escalate", "escalate")
    async def escalate(request: Request, documentId: Doc, body: EscalateBody) -> dict[str, Any]:
        """Flag a section for human review (``message`` or ``reason`` says why)."""
        call = await server.call(request, documentId)
        reason = body.reason or body.message
        if body.sectionId is None or not reason:
            missing = "sectionId" if body.sectionId is None else "message"
            raise InvalidRequest(f"{missing}: required to escalate", field=missing)
        command = {"op": "escalate", "sectionId": body.sectionId, "reason": reason}
        return await server.run(call, request, command)

    @route("POST", "/ask-human", "ask-human", 201)
    async def ask_human(request: Request, documentId: Doc, body: AskBody) -> dict[str, Any]:
        """Ask the human custodian a question (timeout 10-3600 s, 60 by default)."""
        call = await server.call(request, documentId)
        return await server.run(call, request, {"op": "ask-human", **body.model_dump()})

    @route("GET", "/human-responses", "human-responses")
    async def human_responses(request: Request, documentId: Doc) -> list[dict[str, Any]]:
        """Questions to the custodian and their answers (an agent sees its own)."""
        call = await server.call(request, documentId)
        doc, reader = call.doc, call.reader
        rows = []
        for query in doc.queries.values():
            if reader is not None and query.author != reader.id:
                continue
            section = doc.by_key.get(query.section) if query.section is not None else None
            if section is not None and not reads(doc, reader, section):
                continue
            rows.append(
                {
                    "queryId": query.id,
                    "question": query.question,
                    "sectionId": section.id if section is not None else None,
                    "context": query.context,
                    "status": query.status,
                    "response": query.response,
                    "respondedBy": query.responder,
                    "askedAt": iso(query.asked_ms),
                    "dueAt": iso(query.due_ms),
                }
            )
        return rows

    async def respond_(
        request: Request, documentId: str, query: str | None, body: RespondBody
    ) -> dict[str, Any]:
        call = await server.call(request, documentId)
        query = query or body.queryId
        if query is None:
            raise InvalidRequest("queryId: required", field="queryId")
        return await server.run(
            call, request, {"op": "respond", "queryId": query, "response": body.response}
        )

    @route("POST", "/human-responses", "respond")
    async def respond(request: Request, documentId: Doc, body: RespondBody) -> dict[str, Any]:
        """A custodian answers a question (``queryId``, ``response``)."""
        return await respond_(request, documentId, None, body)

    @route("POST", "/human-responses/{queryId}", "respond-to")
    async def respond_to(
        request: Request, documentId: Doc, queryId: str, body: RespondBody
    ) -> dict[str, Any]:
        """A custodian answers question ``queryId``."""
        return await respond_(request, documentId, queryId, body)

    @route("POST", "/resolve", "resolve")
    async def resolve(request: Request, documentId: Doc, body: ResolveBody) -> dict[str, Any]:
        """A custodian's binding decision on a section."""
        call = await server.call(request, documentId)
        return await server.run(call, request, {"op": "resolve", **body.model_dump()})

    @route("GET", "/escalation-briefing", "escalation-briefing")
    async def briefing(request: Request, documentId: Doc, sectionId: str) -> dict[str, Any]:
        """What bears on a section: intents, constraints (with reasoning), questions."""
        call = await server.call(request, documentId)
        section = named_section(call.doc, call.reader, sectionId, server.now_ms())
        return views.briefing(call.doc, call.reader, section)

    # -- ICS ----------------------------------------------------------------------------------
    @route("GET", "/intents", "intents")
    async def intents(
        request: Request, documentId: Doc, sectionId: str | None = None
    ) -> list[dict[str, Any]]:
        """The intents you may read."""
        call = await server.call(request, documentId)
        section = None
        if sectionId is not None:
            section = named_section(call.doc, call.reader, sectionId, server.now_ms())
        return views.intents(call.doc, call.reader, section)

    @route("POST", "/intents", "intent", 201)
    async def intent(request: Request, documentId: Doc, body: IntentBody) -> dict[str, Any]:
        """Declare an intent on a section."""
        call = await server.call(request, documentId)
        return await server.run(call, request, {"op": "intent", **body.model_dump()})

    @route("POST", "/intents/{intentId}/object", "object-intent")
    async def object_intent(
        request: Request, documentId: Doc, intentId: str, body: ObjectBody
    ) -> dict[str, Any]:
        """Object to an intent."""
        call = await server.call(request, documentId)
        command = {"op": "object", "intentId": intentId, "reason": body.reason}
        return await server.run(call, request, command)

    @route("GET", "/constraints", "constraints")
    async def constraints(
        request: Request, documentId: Doc, sectionId: str | None = None
    ) -> list[dict[str, Any]]:
        """The constraints you may read, at your disclosure level."""
        call = await server.call(request, documentId)
        section = None
        if sectionId is not None:
            section = named_section(call.doc, call.reader, sectionId, server.now_ms())
        return views.constraints(call.doc, call.reader, section)

    @route("POST", "/constraints", "constrain", 201)
    async def constrain(request: Request, documentId: Doc, body: ConstraintBody) -> dict[str, Any]:
        """Publish a constraint on a section."""
        call = await server.call(request, documentId)
        return await server.run(call, request, {"op": "constrain", **body.model_dump()})

    async def withdraw_constraint_(
        request: Request, documentId: str, constraintId: str
    ) -> dict[str, Any]:
        call = await server.call(request, documentId)
        command = {"op": "withdraw-constraint", "constraintId": constraintId}
        return await server.run(call, request, command)

    @route("DELETE", "/constraints/{constraintId}", "withdraw-constraint")
    async def withdraw_constraint(
        request: Request, documentId: Doc, constraintId: str
    ) -> dict[str, Any]:
        """Withdraw a constraint you published."""
        return await withdraw_constraint_(request, documentId, constraintId)

    @route("POST", "/constraints/{constraintId}/withdraw", "withdraw-constraint-post")
    async def withdraw_constraint_post(
        request: Request, documentId: Doc, constraintId: str
    ) -> dict[str, Any]:
        """Withdraw a constraint you published (as DELETE)."""
        return await withdraw_constraint_(request, documentId, constraintId)

    @route("POST", "/salience", "salience")
    async def salience(request: Request, documentId: Doc, body: SalienceBody) -> dict[str, Any]:
        """How much you care about a section, 0-10."""
        call = await server.call(request, documentId)
        return await server.run(call, request, {"op": "salience", **body.model_dump()})

    @route("GET", "/salience", "heatmap")
    async def heatmap(request: Request, documentId: Doc) -> list[dict[str, Any]]:
        """The salience heat map of the sections you may read."""
        call = await server.call(request, documentId)
        doc = call.doc
        rows = []
        for section in doc.sections:
            if not reads(doc, call.reader, section):
                continue
            scores = doc.salience_by_section.get(section.key, {})
            rows.append(
                {
                    "sectionId": section.id,
                    "heading": section.title,
                    "max": views.max_salience(doc, section),
                    "scores": [
                        {"agentId": a, "agentName": doc.agents[a].name, "score": s}
                        for a, s in scores.items()
                        if doc.agents[a].active
                    ],
                }
            )
        return rows

    # -- events -------------------------------------------------------------------------------
    async def events_page(
        call: Call, since: int, limit: int, section: str | None
    ) -> tuple[list[dict[str, Any]], int, bool]:
        # The feed's window when it holds the page (no read of the log, no payload parsed).
        events: Sequence[Mapping[str, Any]] | None
        events = await server.live.page(call.name, since, limit + 1, call.doc.sequence)
        if events is None:
            events = await server.workspace.document_events(call.name, since, limit + 1)
        items = [views.redact(call.doc, call.reader, e) for e in events[:limit]]
        more = len(events) > limit
        after = events[:limit][-1]["sequenceNumber"] + 1 if items else since
        if section is not None:
            items = [e for e in items if e.get("sectionId") == section]
        return items, after, more

    def check_limit(limit: int) -> None:
        if not POLL_MIN <= limit <= POLL_MAX:
            raise InvalidRequest(f"limit {limit}: from {POLL_MIN} to {POLL_MAX}", field="limit")

    @route("GET", "/events", "events", answer=list[dict[str, Any]])
    async def events(
        request: Request,
        documentId: Doc,
        since: str | None = None,
        limit: int = POLL_DEFAULT,
    ) -> Response:
        """The events from a cursor (evt_N or N), as you may see them."""
        call = await server.call(request, documentId)
        check_limit(limit)
        items, _, _ = await events_page(call, cursor_of(since, "since"), limit, None)
        return json_answer(items)

    @route("GET", "/poll", "poll", answer=dict[str, Any])
    async def poll(
        request: Request,
        documentId: Doc,
        since: str | None = None,
        cursor: str | None = None,
        limit: int = POLL_DEFAULT,
        sectionId: str | None = None,
        wait: Annotated[int, Query(ge=0, le=WAIT_MAX_S)] = 0,
    ) -> Response:
        """Events after a cursor; ``wait=S`` holds the answer up to S s until there is one."""
        call = await server.call(request, documentId)
        check_limit(limit)
        start = cursor_of(cursor if cursor is not None else since, "cursor")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        while True:
            items, after, more = await events_page(call, start, limit, sectionId)
            left = deadline - loop.time()
            if items or more or after != start or left <= 0:
                break
            await server.live.wait(call.name, left)
        token = f"evt_{after}"
        return json_answer(
            {
                "items": items,
                "nextCursor": token,
                "hasMore": more,
                "changes": items,
                "cursor": token,
                "since": f"evt_{start}",
            }
        )

    @route("GET", "/events/stream", "watch")
    async def stream(
        request: Request,
        documentId: Doc,
        since: str | None = None,
    ) -> EventSourceResponse:
        """Server-Sent Events, each ``id`` its sequence number; resume with Last-Event-ID."""
        call = await server.call(request, documentId)
        last_id = request.headers.get("last-event-id")
        if last_id is not None and last_id.strip():
            start = cursor_of(last_id.strip(), "Last-Event-ID") + 1
        elif since is not None:
            start = cursor_of(since, "since")
        else:
            start = call.doc.sequence
        queue = server.live.subscribe(call.name)

        async def send() -> AsyncIterator[dict[str, Any]]:
            last = start - 1
            try:
                after = start
                while True:  # the backlog, a page at a time
                    page = await server.workspace.document_events(call.name, after, 500)
                    for event in page:
                        last = event["sequenceNumber"]
                        yield shown(event)
                    if len(page) < 500:
                        break
                    after = last + 1
                while True:
                    queued = await queue.get()
                    if queued is None:
                        return  # fell behind: the client resumes from its Last-Event-ID
                    event = queued
                    if event.get("entityId") != call.doc.id or event["sequenceNumber"] <= last:
                        continue
                    last = event["sequenceNumber"]
                    reader = call.reader
                    if reader is not None and not reader.active:
                        return  # the key's agent is gone: its key opens nothing now
                    yield shown(event)
            finally:
                server.live.unsubscribe(call.name, queue)

        def shown(event: dict[str, Any]) -> dict[str, Any]:
            redacted = views.redact(call.doc, call.reader, event)
            return {
                "id": str(redacted["sequenceNumber"]),
                "event": redacted["eventType"],
                "data": json.dumps(redacted, ensure_ascii=False, sort_keys=True),
            }

        return EventSourceResponse(send(), ping=15)

    # -- the custodian's --------------------------------------------------------------------
    @route("POST", "/agents/{agent}/trust", "trust")
    async def trust(request: Request, documentId: Doc, agent: str, body: TrustBody) -> Any:
        """A custodian sets an agent's trust level."""
        call = await server.call(request, documentId)
        return await server.run(call, request, {"op": "trust", "agent": agent, **body.model_dump()})

    @route("POST", "/agents/{agent}/clearance", "clearance")
    async def clearance(request: Request, documentId: Doc, agent: str, body: ClearanceBody) -> Any:
        """A custodian grants an agent clearance to a level."""
        call = await server.call(request, documentId)
        command = {"op": "clearance", "agent": agent, **body.model_dump()}
        return await server.run(call, request, command)

    @route("POST", "/agents/{agent}/remove", "remove")
    async def remove(request: Request, documentId: Doc, agent: str, body: WhyBody) -> Any:
        """A custodian removes an agent (its key stops working)."""
        call = await server.call(request, documentId)
        return await server.run(call, request, {"op": "remove", "agent": agent, "why": body.why})

    @route("POST", "/invites", "invite", 201)
    async def invite(request: Request, documentId: Doc, body: InviteBody) -> dict[str, Any]:
        """A custodian makes an invite token (shown this once)."""
        call = await server.call(request, documentId)
        return await server.run(call, request, {"op": "invite", **body.model_dump()})

    @route("GET", "/invites", "invites")
    async def invites(request: Request, documentId: Doc) -> list[dict[str, Any]]:
        """A custodian's list of the document's invites."""
        call = await server.call(request, documentId)
        if call.who.agent_id is not None:
            raise Forbidden("only a human may list invites", operation="invites")
        return views.invite_rows(call.doc, server.now_ms())

    @route("GET", "/overrides", "overrides")
    async def overrides(request: Request, documentId: Doc) -> list[dict[str, Any]]:
        """A custodian's list of the human overrides on the document: who, what, why."""
        call = await server.call(request, documentId)
        if call.who.agent_id is not None:
            raise Forbidden("only a human may list overrides", operation="overrides")
        return [
            {"subject": subject, "by": o.by, "why": o.why, "at": iso(o.at_ms)}
            for subject, o in call.doc.overrides
        ]

    app.include_router(router, prefix=API)
    app.add_middleware(TapAlias)  # /api/tap/… is /api/pact/…: one set of routes to match

    @app.get("/openapi/tap.json", include_in_schema=False)
    async def tap_openapi() -> dict[str, Any]:
        document: dict[str, Any] = json.loads(json.dumps(app.openapi()))
        document["paths"] = {
            path.replace("/api/pact/", "/api/tap/", 1): item
            for path, item in document["paths"].items()
        }
        return document

    @app.get("/api/pact", include_in_schema=False)
    async def root() -> dict[str, Any]:
        return {"protocol": "PACT", "version": "0.3", "openapi": "/openapi.json"}

    _ = NotFound, Unauthorized  # refusals the routes raise through the engine
    return app
