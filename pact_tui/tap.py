"""``pact-tui doc …`` and ``pact-tui tap …``: documents, and the PACT v0.3 agent verbs.

``doc`` is the custodian's view of a workspace's documents: ``create`` (from a Markdown file,
making the workspace file if missing), ``list``, ``show`` (sections with their versions, locks,
open proposals and marks), ``export`` (the Markdown, exactly; or, with ``--as AGENT`` or
``--clearance LEVEL``, only what that reader may read), ``log`` (the events: when, who, what,
why) and ``audit`` (the custodian's audit trail as Markdown, JSON or CSV: ``audit.py``).

``tap VERB WORKSPACE DOC …`` runs one protocol verb, as in the v0.3 ``tailor tap`` examples with
the workspace inserted before the document: the acting agent is ``--agent NAME`` (or
``$PACT_AGENT``; ``join --as NAME`` names the joining agent), a human acts with ``--human NAME``.
Read verbs (``get``, ``sections``, ``poll``, ``escalation-briefing``, ``watch``) show only what
the actor may see: the engine's views with the agent as the reader (a human reads everything),
and every event passed through ``views.redact``. Every write takes ``--idempotency-key``.

A refusal is the engine's ``ProtocolError``: ``pact-tui: CODE: description`` on stderr, or with
``--json`` the v0.3 error document ``{"errors": [{"code", "description", "metadata"}]}``, and
exit status 1 (see ``cli._main``). One process runs one command; a query opens the workspace
read-only. Every line goes out through ``commandline.echo``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.canonical import whole_number
from engine.store.opening import is_url, where_shown
from engine.visible import visible

from .commandline import Handler, echo, emit, whole_int
from .files import ReadError, read_text_input

if TYPE_CHECKING:
    from engine.protocol.audit import AuditRow, EventFilter
    from engine.protocol.commands import Actor
    from engine.protocol.document import Document
    from engine.protocol.model import Agent
    from engine.workspace import Workspace

POLL_DEFAULT, POLL_MIN, POLL_MAX = 50, 1, 200


def _invalid(description: str, **metadata: Any) -> Exception:
    from engine.protocol.errors import InvalidRequest

    return InvalidRequest(description, **metadata)


# -- opening ----------------------------------------------------------------------------------
async def _open(
    args: argparse.Namespace, *, read_only: bool, create: bool = False, watch: bool = False
) -> Workspace:
    from engine.workspace import Workspace

    ws = await Workspace.open(
        args.workspace, create=create, watch=watch, lazy=True, read_only=read_only
    )
    args.opened = ws  # for the note on a checkpoint it could not use (see cli._main)
    return ws


async def _document(ws: Workspace, name: str) -> Document:
    projection = await ws.load_document(name)
    return projection.doc


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


# -- who acts ---------------------------------------------------------------------------------
def _actor(args: argparse.Namespace, *, joining: bool = False) -> Actor:
    """``--human NAME``; else the agent: ``join --as``, ``--agent`` or ``$PACT_AGENT``."""
    from engine.protocol.commands import Actor

    human = _name("--human", getattr(args, "human", None))
    agent = _name("--as", getattr(args, "as_", None)) if joining else None
    agent = agent or _name("--agent", getattr(args, "agent", None))
    if human is not None and agent is not None:
        raise _invalid("act as an agent or as a human, not both (--agent/--as or --human)")
    if human is not None:
        return Actor.human(human)
    agent = agent or _name("PACT_AGENT", os.environ.get("PACT_AGENT") or None)
    if agent is None:
        who = "--as NAME" if joining else "--agent NAME (or PACT_AGENT)"
        raise _invalid(f"who is acting? give {who}, or --human NAME")
    return Actor.agent(agent)


def _name(option: str, value: str | None) -> str | None:
    """The name ``option`` gives (None when not given), refused when empty or blank: it would
    name nobody, and a log or a view could not show who acted."""
    if value is not None and not value.strip():
        raise _invalid(f"{option} {value!r}: a name cannot be empty or blank")
    return value


def _reader(doc: Document, actor: Actor) -> Agent | None:
    """The reader the views take: the joined agent, or None for a human (who sees all)."""
    from engine.protocol.errors import NotJoined

    if actor.is_human:
        return None
    agent = doc.agent_named(actor.name)
    if agent is None:
        raise NotJoined(
            f"agent {actor.name!r} has not joined document {doc.name!r}", agent=actor.name
        )
    return agent


# -- text -------------------------------------------------------------------------------------
def _decode_escapes(text: str) -> str:
    """``\\n`` → a newline and ``\\\\`` → a backslash, as the v0.3 examples write content."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text) and text[i + 1] in "n\\":
            out.append("\n" if text[i + 1] == "n" else "\\")
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out)


def _content(args: argparse.Namespace, *, required: bool = True) -> str | None:
    text, path = getattr(args, "content", None), getattr(args, "content_file", None)
    if text is not None and path is not None:
        raise _invalid("give --content or --content-file, not both")
    if path is not None:
        try:
            return read_text_input(path)
        except ReadError as error:
            raise _invalid(f"cannot read --content-file {path!r}: {error.why}") from None
    if text is not None:
        return _decode_escapes(text)
    if required:
        raise _invalid("give the new content: --content TEXT or --content-file FILE")
    return None


def _fields(data: dict[str, Any]) -> str:
    """A result as ``key=value`` pairs, each value made visible."""
    parts = []
    for key, value in data.items():
        if value is None or value == [] or value == {}:
            continue
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        parts.append(f"{key}={visible(shown)}")
    return "  ".join(parts)


def _proposal_id(args: argparse.Namespace) -> str:
    given = [p for p in (getattr(args, "proposal_id", None), getattr(args, "proposal", None)) if p]
    if not given:
        raise _invalid("name the proposal: PROPOSAL_ID or --proposal ID")
    if len(set(given)) > 1:
        raise _invalid("two different proposals named (PROPOSAL_ID and --proposal)")
    return str(given[0])


# -- doc --------------------------------------------------------------------------------------
async def _doc_create(args: argparse.Namespace) -> None:
    from engine.documents import check_document_name
    from engine.store import made_or_nothing

    check_document_name(args.doc)  # before the workspace file is made
    try:
        markdown = read_text_input(args.source)
    except ReadError as error:
        raise _invalid(f"cannot read --from {args.source!r}: {error.why}") from None
    options: dict[str, Any] = {"human": _name("--human", args.human)}
    for name, key in (
        ("policy", "policy"),
        ("window", "window_s"),
        ("strategy", "strategy"),
        ("trust", "default_trust"),
    ):
        value = getattr(args, name)
        if value is not None:
            options[key] = value
    url = is_url(args.workspace)  # a database is the server's to make: nothing to remove
    with contextlib.nullcontext() if url else made_or_nothing(Path(args.workspace)):
        async with await _open(args, read_only=False, create=True) as ws:
            info = await ws.create_document(args.doc, markdown, **options)
    data = {"created": args.doc, "documentId": info.id, "sections": info.sections}
    where = visible(str(where_shown(args.workspace)))
    emit(args, data, f"created document {args.doc!r} ({info.sections} sections) in {where}")


async def _doc_list(args: argparse.Namespace) -> None:
    async with await _open(args, read_only=True) as ws:
        infos = await ws.list_documents()
    rows: list[dict[str, Any]] = [
        {
            "name": i.name,
            "documentId": i.id,
            "version": i.version,
            "sections": i.sections,
            "agents": i.agents,
            "openProposals": i.open_proposals,
            "events": i.events,
        }
        for i in infos
    ]
    lines = [f"{'name':<24} {'version':>7} {'sections':>8} {'agents':>6} {'open':>5} {'events':>7}"]
    lines += [
        f"{visible(r['name']):<24} {r['version']:>7} {r['sections']:>8} {r['agents']:>6}"
        f" {r['openProposals']:>5} {r['events']:>7}"
        for r in rows
    ]
    emit(args, rows, "\n".join(lines) if rows else "no documents yet")


def _section_lines(rows: list[dict[str, Any]]) -> list[str]:
    from engine.protocol.model import who

    lines = []
    for row in rows:
        marks = []
        if row["lock"] is not None:
            lock = row["lock"]
            marks.append(f"locked by {visible(who(lock['holder'], lock['holderKind']))}")
        if row["pending"]:
            marks.append(f"{row['pending']} pending")
        if row["conflict"]:
            marks.append("CONFLICT")
        if row["escalated"]:
            marks.append("ESCALATED")
        if row["classification"]:
            marks.append(f"[{visible(row['classification'])}]")
        indent = "  " * max(row["level"] - 1, 0)
        title = visible(row["title"]) if row["title"] else "(before the first heading)"
        line = f"{indent}{visible(row['sectionId'])}  v{row['version']}  {title}"
        lines.append(line + (f"  ({', '.join(marks)})" if marks else ""))
    return lines


async def _doc_show(args: argparse.Namespace) -> None:
    from engine.protocol import views

    async with await _open(args, read_only=True) as ws:
        doc = await _document(ws, args.doc)
        rows = views.section_rows(doc, None, _now_ms())
    agents = [
        {"name": a.name, "role": a.role, "trust": a.trust, "clearance": a.clearance}
        for a in doc.active_agents()
    ]
    data = {
        "name": doc.name,
        "documentId": doc.id,
        "version": doc.version,
        "policy": doc.policy,
        "agents": agents,
        "sections": rows,
    }
    head = (
        f"document {visible(doc.name)!r} v{doc.version}, policy {visible(doc.policy)},"
        f" {len(agents)} agent(s)"
    )
    emit(args, data, "\n".join([head, *_section_lines(rows)]))


async def _doc_export(args: argparse.Namespace) -> None:
    """The document's Markdown; with ``--as AGENT`` or ``--clearance LEVEL``, only what that
    reader may read (``views.content``, through the barriers): a redacted copy to share."""
    from engine.protocol import views

    agent = _name("--as", args.as_)
    if agent is not None and args.clearance is not None:
        raise _invalid("export as an agent or at a clearance, not both (--as or --clearance)")
    async with await _open(args, read_only=True) as ws:
        doc = await _document(ws, args.doc)
        data: dict[str, Any] = {"name": doc.name, "documentId": doc.id}
        if agent is not None:
            reader = _agent_reader(doc, agent)
            markdown = views.content(doc, reader)
            data["as"] = reader.name
        elif args.clearance is not None:
            reader = views.cleared_reader(doc, args.clearance)
            markdown = views.content(doc, reader)
            data["clearance"] = reader.clearance
        else:
            markdown = doc.markdown()
    if args.json:
        emit(args, {**data, "markdown": markdown}, "")
    else:  # the Markdown exactly (made visible: a control character cannot act)
        sys.stdout.write(visible(markdown, multiline=True))


def _agent_reader(doc: Document, name: str) -> Agent:
    """The agent ``name`` as a reader: the joined one, else its latest registration (an agent
    that left is read through the barriers it had); ``agent.not_found`` if none."""
    from engine.protocol.errors import AgentNotFound

    agent = doc.agent_named(name)
    if agent is None:
        agent = next((a for a in reversed(doc.agents.values()) if a.name == name), None)
    if agent is None:
        raise AgentNotFound(f"no agent {name!r} on document {doc.name!r}", agent=name)
    return agent


def _event_row(event: dict[str, Any], row: AuditRow) -> dict[str, Any]:
    return {
        "sequence": event["sequenceNumber"],
        "time": row.time,
        "type": event["eventType"],
        "actor": event["actorDisplay"],
        "actorKind": event["actorKind"],
        "actorId": event["actorId"],
        "section": event["sectionId"],
        "why": row.why,
        "override": row.override,
    }


def _event_line(row: AuditRow) -> str:
    """One event: its number, time (UTC), type, actor (its kind from the event, then its name:
    ``agent legal``, ``human alice``, ``system``), section, and why (the reason given)."""
    section = visible(row.section) if row.section else "-"
    why = f"  why: {visible(row.why)}" if row.why else ""
    mark = "  ⚑ override" if row.override else ""
    return (
        f"{row.sequence:>6}  {row.time}  {visible('pact.' + row.type):<36}"
        f" {visible(row.who):<26} {section}{why}{mark}"
    )


def _types(given: list[str] | None) -> tuple[str, ...]:
    """The ``--type`` values, each a part of an event type (``proposal``, ``proposal.merged``,
    ``pact.agent.joined``); one that no event type holds is refused."""
    from engine.protocol.document import event_types

    known = sorted(t.removeprefix("pact.") for t in event_types())
    wanted = []
    for text in given or ():
        value = text.strip().lower().removeprefix("pact.")
        if not value or not any(value in t for t in known):
            families = ", ".join(sorted({t.split(".")[0] for t in known}))
            raise _invalid(
                f"--type {text!r}: no event type holds it (a family: {families};"
                " or a whole type such as proposal.merged)",
                type=text,
            )
        wanted.append(value)
    return tuple(wanted)


def _since(text: str | None) -> tuple[int, int | None]:
    """``--since``: an event number, or an ISO 8601 date or time (UTC unless it says)."""
    from engine.protocol.audit import parse_time

    if text is None:
        return 0, None
    if text.strip().isdigit():
        return int(text), None
    try:
        return 0, parse_time(text)
    except ValueError as error:
        raise _invalid(f"--since: {error}", since=text) from None


async def _doc_log(args: argparse.Namespace) -> None:
    """The document's events a line each (``_event_line``), written a page at a time as they
    are read (their rows, ``Workspace.audit_rows``: the stored trail, then the log after it);
    with ``--json``, one document of their rows beside their envelopes (``_event_row``)."""
    from engine.heap import collector_paused
    from engine.protocol.audit import AuditTrail, EventFilter

    if args.since < 0:
        raise _invalid(f"--since {args.since}: a sequence number is 0 or more", since=args.since)
    if args.limit is not None and args.limit < 1:
        raise _invalid(f"--limit {args.limit}: at least 1 (or leave it out)", limit=args.limit)
    wanted = EventFilter(types=_types(args.type), since_sequence=args.since)
    data: list[dict[str, Any]] = []
    shown, left = 0, args.limit
    trail = AuditTrail()
    async with await _open(args, read_only=True) as ws:
        await ws.check_document(args.doc)  # an event it cannot replay is refused, as ever
        if args.json:
            # Nothing a row shows needs the events before --since.
            async for page in ws.document_pages(args.doc, args.since):
                kept = page if wanted.everything else [e for e in page if wanted.keeps_event(e)]
                if left is not None:
                    kept = kept[:left]
                    left -= len(kept)
                rows = trail.rows(kept)
                data.extend(_event_row(dict(e), row) for e, row in zip(kept, rows, strict=True))
                shown += len(kept)
                if left == 0:
                    break
        else:
            with collector_paused():  # as audit_text does: the rows hold no cycles
                shown = await _write_event_lines(ws, args.doc, wanted, args.since, left)
    if args.json:
        emit(args, data, "")
    elif not shown:
        echo("no events")


async def _write_event_lines(
    ws: Workspace, name: str, wanted: EventFilter, since: int, limit: int | None
) -> int:
    """Write the lines of document ``name``'s events ``wanted`` keeps, from event ``since``
    on, ``limit`` at most (None: all), a page at a time; how many."""
    shown, left = 0, limit
    async for rows in ws.audit_rows(name, since):
        lines = rows if wanted.everything else [row for row in rows if wanted.keeps_row(row)]
        if left is not None:
            lines = lines[:left]
            left -= len(lines)
        if lines:
            sys.stdout.write(_event_lines(lines))
        shown += len(lines)
        if left == 0:
            break
    return shown


def _event_lines(rows: Sequence[AuditRow]) -> str:
    """``_event_line`` of each row, a line each: a page's lines made at once, then looked at
    once; only a page that holds something to make visible is made a line at a time.

    What follows an event's time (its type, who, section, why and the override's mark) is
    made once for each such combination a page holds and looked up for the rest: a log's
    events come of a few types, from a few actors, on a few sections, mostly with no reason
    (209,000 events: their lines in about two thirds of the time of making each whole)."""
    from engine.protocol.audit import iso_time

    from .audit import one_line_each

    tails: dict[tuple[str, str, str, str | None, str, bool], str] = {}
    lines = []
    for (
        sequence,
        at_ms,
        event_type,
        actor,
        actor_kind,
        section,
        _subject,
        _detail,
        why,
        override,
        _withheld,
    ) in rows:
        key = (event_type, actor, actor_kind, section, why, override)
        tail = tails.get(key)
        if tail is None:
            tail = tails[key] = (
                f"  {_type_cell(event_type)} {_who_cell(actor, actor_kind)} {section or '-'}"
                f"{f'  why: {why}' if why else ''}{'  ⚑ override' if override else ''}\n"
            )
        lines.append(f"{sequence:>6}  {iso_time(at_ms)}{tail}")
    text = "".join(lines)
    if one_line_each(text, len(rows)):
        return text
    return "".join(_event_line(row) + "\n" for row in rows)


@functools.lru_cache(maxsize=256)  # a log's events are of few types: each padded once
def _type_cell(event_type: str) -> str:
    return f"{'pact.' + event_type.removeprefix('pact.'):<36}"


@functools.lru_cache(maxsize=4096)  # and from few actors
def _who_cell(actor: str, actor_kind: str) -> str:
    from engine.protocol.audit import who_of

    return f"{who_of(actor, actor_kind):<26}"


async def _doc_audit(args: argparse.Namespace) -> None:
    """Who did what, when and why, as Markdown, JSON or CSV on stdout (see ``audit.py``);
    every option is checked before a line is written."""
    from engine.heap import collector_paused
    from engine.protocol.audit import EventFilter

    from .audit import FORMS, audit_chunks

    form = args.format or ("json" if args.json else "md")
    if form not in FORMS:
        raise _invalid(f"--format {form!r}: one of {', '.join(FORMS)}", format=form)
    since, since_ms = _since(args.since)
    types = _types(args.type)
    agents = tuple(a.strip().lower() for a in args.agent or ())
    described = " ".join(
        [f"--since {args.since}"] * (args.since is not None)
        + [f"--type {t}" for t in args.type or ()]
        + [f"--agent {a}" for a in args.agent or ()]
    )
    wanted = EventFilter(types=types, agents=agents, since_sequence=since, since_ms=since_ms)
    async with await _open(args, read_only=True) as ws:
        if agents:
            doc = await _document(ws, args.doc)
            known = {a.name.lower() for a in doc.agents.values()} | {h.lower() for h in doc.humans}
            for given in args.agent:
                if given.strip().lower() not in known:
                    names = sorted(a.name for a in doc.agents.values()) + sorted(doc.humans)
                    shown = ", ".join(names[:12]) + (", …" if len(names) > 12 else "")
                    raise _invalid(
                        f"--agent {given!r}: no agent or human of document {args.doc!r}"
                        f" is named so (known: {shown or 'none'})",
                        agent=given,
                    )
        with collector_paused():  # as audit_text does: the pages hold no cycles
            async for chunk in audit_chunks(ws, args.doc, wanted, form, described=described):
                sys.stdout.write(chunk)


# -- tap: writes ------------------------------------------------------------------------------
Build = Callable[[argparse.Namespace], dict[str, Any]]


def _write(op: str, build: Build, *, joining: bool = False) -> Handler:
    """A handler that runs the command ``build`` makes (an ``op``), as the actor, in a writable
    workspace. Whether the actor may run ``op`` at all is checked first, before the command is
    built (its content file read) and the workspace opened (or found missing)."""

    async def handler(args: argparse.Namespace) -> None:
        from engine.protocol.decide import authorise
        from engine.protocol.results import PolicyStatus

        actor = _actor(args, joining=joining)
        authorise(op, actor)
        command = {k: v for k, v in build(args).items() if v is not None}
        if getattr(args, "idempotency_key", None) is not None:
            command["idempotencyKey"] = args.idempotency_key
        async with await _open(args, read_only=False) as ws:
            if command.get("proposalId"):  # a unique start or end of an id names it
                command["proposalId"] = await _whole_id(ws, args.doc, command["proposalId"], actor)
            decision = await ws.run_document(args.doc, command, actor)
        answer = decision.answer()
        text = f"{command['op']}: {_fields(answer)}"
        if decision.retried:
            text += "  (a retry: nothing new)"
        elif isinstance(decision.result, PolicyStatus) and not decision.result.changed:
            text += "  (nothing changed: nothing appended)"
        emit(args, answer, text)

    return handler


async def _whole_id(ws: Workspace, name: str, given: str, actor: Actor) -> str:
    """The proposal id ``given`` names, a whole id or a unique start or end of one, among the
    proposals ``actor`` may read (``engine.protocol.short_ids``, as the app looks them up)."""
    from engine.protocol.short_ids import proposal_id

    doc = await _document(ws, name)
    reader = doc.agent_named(actor.name) if actor.kind == "agent" else None
    if actor.kind == "agent" and reader is None:
        return given  # not on the document: decide says so
    return proposal_id(doc, given, reader)


def _join(args: argparse.Namespace) -> dict[str, Any]:
    actor = _actor(args, joining=True)
    return {"op": "join", "agentName": actor.name, "role": args.role, "token": args.token}


def _on_proposal(op: str, **names: str) -> Build:
    def build(args: argparse.Namespace) -> dict[str, Any]:
        command = {"op": op, "proposalId": _proposal_id(args)}
        command.update({wire: getattr(args, dest) for wire, dest in names.items()})
        return command

    return build


def _fields_of(op: str, **names: str) -> Build:
    """A command whose fields are options, wire name → argparse dest."""

    def build(args: argparse.Namespace) -> dict[str, Any]:
        return {"op": op, **{wire: getattr(args, dest) for wire, dest in names.items()}}

    return build


def _propose(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "op": "propose",
        "sectionId": args.section,
        "newContent": _content(args),
        "summary": args.summary,
        "baseVersion": args.base_version,
        "reasoning": args.reasoning,
        "windowSeconds": args.window,
    }


def _object(args: argparse.Namespace) -> dict[str, Any]:
    targets = [args.proposal, args.intent, args.constraint]
    if sum(t is not None for t in targets) != 1:
        raise _invalid("object to one thing: --proposal ID, --intent ID or --constraint ID")
    return {
        "op": "object",
        "proposalId": args.proposal,
        "intentId": args.intent,
        "constraintId": args.constraint,
        "reason": args.reason,
    }


def _resolve(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "op": "resolve",
        "sectionId": args.section,
        "decision": args.decision,
        "justification": args.justification,
        "override": args.override,
        "proposalId": args.proposal,
        "content": _content(args, required=False),
    }


def _edit(args: argparse.Namespace) -> dict[str, Any]:
    return {"op": "edit", "sectionId": args.section, "content": _content(args), "why": args.why}


def _invite(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "op": "invite",
        "trust": args.trust,
        "clearance": args.clearance,
        "organisation": args.org,
        "mode": args.mode,
        "sections": [s for given in args.section for s in given.split(",") if s.strip()],
        "ttlSeconds": args.ttl,
    }


async def _tick(args: argparse.Namespace) -> None:
    async with await _open(args, read_only=False) as ws:
        decision = await ws.tick_document(args.doc)
    fired = len(decision.events)
    emit(args, {"fired": fired}, f"tick: {fired} event(s) of due work fired")


async def _framework_create(args: argparse.Namespace) -> None:
    if _name("--human", args.human) is None:
        raise _invalid("a framework is made by a human: give --human NAME")
    levels = [level.strip() for level in args.levels.split(",") if level.strip()]
    async with await _open(args, read_only=False) as ws:
        await ws.create_framework(args.name, levels, human=args.human)
    shown = " < ".join(visible(level) for level in levels)
    emit(
        args,
        {"framework": args.name, "levels": levels},
        f"created framework {args.name!r}: {shown}",
    )


# -- tap: reads -------------------------------------------------------------------------------
async def _read(args: argparse.Namespace) -> tuple[Document, Agent | None, Workspace]:
    actor = _actor(args)
    ws = await _open(args, read_only=True)
    try:
        doc = await _document(ws, args.doc)
        return doc, _reader(doc, actor), ws
    except BaseException:
        await ws.close()
        raise


async def _get(args: argparse.Namespace) -> None:
    from engine.protocol import views

    doc, reader, ws = await _read(args)
    async with ws:
        markdown = views.content(doc, reader)
    if args.json:
        emit(args, {"documentId": doc.id, "name": doc.name, "content": markdown}, "")
    else:
        sys.stdout.write(visible(markdown, multiline=True))


async def _sections(args: argparse.Namespace) -> None:
    from engine.protocol import views

    doc, reader, ws = await _read(args)
    async with ws:
        rows = views.section_rows(doc, reader, _now_ms())
    emit(args, rows, "\n".join(_section_lines(rows)) or "no sections you may see")


async def _invites(args: argparse.Namespace) -> None:
    from engine.protocol import views

    if _actor(args).kind != "human":
        raise _invalid("invites are a custodian's: give --human NAME")
    doc, _, ws = await _read(args)
    async with ws:
        rows = views.invite_rows(doc, _now_ms())
    lines = [
        f"{row['invite']}  {row['state']:<12} {row['trustLevel']:<12} {row['mode']}"
        + (f"  used by {visible(row['usedBy'])}" if row["usedBy"] else "")
        + (f"  revoked by {visible(row['revokedBy'])}" if row["revokedBy"] else "")
        for row in rows
    ]
    emit(args, rows, "\n".join(lines) or "no invites")


async def _briefing(args: argparse.Namespace) -> None:
    from engine.protocol import views
    from engine.protocol.barriers import named_section
    from engine.protocol.model import who

    doc, reader, ws = await _read(args)
    async with ws:
        # A section the reader may not read (a SummaryOnly agent's) is refused like a command
        # naming it: its briefing is what is said about it.
        section = named_section(doc, reader, args.section, _now_ms())
        data = views.briefing(doc, reader, section)
    lines = [f"briefing on {visible(data['sectionId'])}"]
    if data["escalated"]:
        flag = data["escalated"]
        lines.append(
            f"escalated by {visible(who(flag['by'], flag['byKind']))}: {visible(flag['reason'])}"
        )
    lines += [
        f"intent {visible(i['agent'])}: {visible(i['goal'])} ({i['status']})"
        for i in data["intents"]
    ]
    lines += [
        f"constraint: {_fields({k: v for k, v in c.items() if k != 'constraintId'})}"
        for c in data["constraints"]
    ]
    lines += [
        f"question {visible(q['queryId'])} ({q['status']}): {visible(q['question'])}"
        for q in data["questions"]
    ]
    lines += [
        f"conflict {visible(g['conflictId'])}: {len(g['proposals'])} proposals"
        for g in data["conflicts"]
    ]
    lines += [_comment_line(k) for k in data["comments"]]
    if data["drafter"]:
        lines.append(f"invited to draft: {visible(data['drafter'])}")
    emit(args, data, "\n".join(lines))


def _comment_line(row: dict[str, Any]) -> str:
    """An open comment of a briefing: its id, author, proposal, whom it addresses, text."""
    from engine.protocol.model import who

    on = f" on {visible(row['proposalId'])}" if row["proposalId"] else ""
    to = f" to {visible(', '.join(row['to']))}" if row["to"] else ""
    author = visible(who(row["author"], row["authorKind"]))
    return f"comment {visible(row['commentId'])} by {author}{on}{to}: {visible(row['text'])}"


def _cursor(text: str | None) -> int:
    """``evt_N`` (or ``N``): from sequenceNumber N."""
    if text is None:
        return 0
    digits = text[4:] if text.startswith("evt_") else text
    if not (digits.isascii() and digits.isdigit()):
        raise _invalid(f"--since {text!r}: a cursor is evt_N (N a sequence number)")
    try:
        return whole_number(digits)
    except ValueError as error:  # past any sequence number the store can hold
        raise _invalid(f"--since {text!r}: {error}") from None


def _shown_line(event: dict[str, Any]) -> str:
    from engine.protocol.audit import AuditTrail

    row = AuditTrail().row(event)  # as the reader sees it: a withheld payload gives no reason
    return _event_line(row) + ("  (withheld)" if row.withheld else "")


async def _poll(args: argparse.Namespace) -> None:
    from engine.protocol import views

    if not POLL_MIN <= args.limit <= POLL_MAX:
        raise _invalid(f"--limit {args.limit}: from {POLL_MIN} to {POLL_MAX}", limit=args.limit)
    since = _cursor(args.since)
    doc, reader, ws = await _read(args)
    async with ws:
        events = await ws.document_events(args.doc, since, args.limit + 1)
        items = [views.redact(doc, reader, e) for e in events[: args.limit]]
    more = len(events) > args.limit
    after = items[-1]["sequenceNumber"] + 1 if items else since
    data = {"items": items, "nextCursor": f"evt_{after}", "hasMore": more}
    lines = [_shown_line(e) for e in items]
    lines.append(f"next: evt_{after}" + ("  (more)" if more else ""))
    emit(args, data, "\n".join(lines))


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)  # what stops `tap watch` cleanly


async def _watch(args: argparse.Namespace) -> int:
    """Events as they are appended, one a line (``--json``: one envelope a line), until
    ``--count`` events, Ctrl-C or SIGTERM."""
    from engine.protocol import views

    if args.count is not None and args.count < 1:
        raise _invalid(f"--count must be at least 1, got {args.count}")
    actor = _actor(args)
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    if task is not None:
        # SIGINT too, whatever this process inherited: started with SIGINT ignored (a shell's
        # background job, a test runner's worker), asyncio.run installs no handler of its own.
        with contextlib.suppress(NotImplementedError, RuntimeError):  # no signals here
            for number in STOP_SIGNALS:
                loop.add_signal_handler(number, task.cancel)
    shown = 0
    try:
        async with await _open(args, read_only=True, watch=True) as ws:
            doc = await _document(ws, args.doc)
            reader = _reader(doc, actor)
            stream_start = ws.head  # the feed from here; earlier events read from the stream
            if args.since is not None:
                backlog = await ws.document_events(args.doc, _cursor(args.since))
            else:
                backlog = []
            if args.ready:
                echo("watching", file=sys.stderr)
                sys.stderr.flush()

            def show(event: dict[str, Any]) -> bool:
                nonlocal shown
                redacted = views.redact(doc, reader, event)
                if args.json:
                    echo(json.dumps(redacted, ensure_ascii=False, sort_keys=True))
                else:
                    echo(_shown_line(redacted))
                sys.stdout.flush()
                shown += 1
                return args.count is not None and shown >= args.count

            for event in backlog:
                if show(event):
                    return 0
            last = backlog[-1]["sequenceNumber"] if backlog else doc.sequence - 1
            async for change in ws.changes(after=stream_start):
                if args.doc not in change.documents:
                    continue
                for stored in change.events:
                    event = dict(stored.payload)
                    if (
                        event.get("entityType") != "pact-document"
                        or event.get("entityId") != doc.id
                        or event["sequenceNumber"] <= last
                    ):
                        continue
                    last = event["sequenceNumber"]
                    if show(event):
                        return 0
    except asyncio.CancelledError:
        return 0  # Ctrl-C or SIGTERM: a clean stop
    finally:
        if task is not None:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                for number in STOP_SIGNALS:
                    loop.remove_signal_handler(number)
    return 0


# -- the parser -------------------------------------------------------------------------------
def register(
    commands: Any,
    common: argparse.ArgumentParser,
) -> None:
    """Add ``doc`` and ``tap`` to ``pact-tui``'s parser (``common`` gives ``--json``)."""
    _register_doc(commands, common)
    _register_tap(commands, common)


def _register_doc(
    commands: Any,
    common: argparse.ArgumentParser,
) -> None:
    from engine.protocol.model import POLICIES, STRATEGIES, TRUST_LEVELS

    doc = commands.add_parser("doc", help="create, list, show, export a workspace's documents")
    sub = doc.add_subparsers(dest="doc_command", required=True, metavar="SUBCOMMAND")

    def add(name: str, handler: Handler, help: str, *, named: bool = True) -> Any:
        parser = sub.add_parser(name, parents=[common], help=help, description=help)
        parser.add_argument("workspace", help="the workspace file")
        if named:
            parser.add_argument("doc", help="the document's name")
        parser.set_defaults(handler=handler)
        return parser

    create = add("create", _doc_create, "create a document (and the workspace file if missing)")
    create.add_argument("--from", dest="source", required=True, help="the Markdown file")
    create.add_argument("--policy", choices=POLICIES)
    create.add_argument("--window", type=whole_int, help="the objection window, in seconds")
    create.add_argument("--strategy", choices=STRATEGIES)
    create.add_argument("--trust", choices=TRUST_LEVELS, help="the trust of agents who join")
    create.add_argument("--human", default="cli", help="the human custodian")
    add("list", _doc_list, "list the workspace's documents", named=False)
    add("show", _doc_show, "the sections: versions, locks, pending proposals, marks")
    export = add("export", _doc_export, "the document's Markdown, exactly (or as a reader sees it)")
    export.add_argument("--as", dest="as_", metavar="AGENT", help="only what this agent may read")
    export.add_argument("--clearance", metavar="LEVEL", help="only what this clearance may read")
    log = add("log", _doc_log, "the document's events: when, who, what, on what, why")
    log.add_argument("--since", type=whole_int, default=0, help="from sequence number N")
    log.add_argument("--limit", type=whole_int)
    log.add_argument(
        "--type", action="append", help="only events whose type holds this (repeatable)"
    )
    audit = add("audit", _doc_audit, "the audit trail: who did what, when and why")
    audit.add_argument("--since", help="from event number N, or an ISO 8601 date or time (UTC)")
    audit.add_argument(
        "--type", action="append", help="only events whose type holds this (repeatable)"
    )
    audit.add_argument("--agent", action="append", help="only this actor's events (repeatable)")
    audit.add_argument("--format", help="md (the default), json or csv")


def _register_tap(
    commands: Any,
    common: argparse.ArgumentParser,
) -> None:
    from engine.protocol.model import (
        COMPATIBILITIES,
        CONTEXT_MODES,
        POLICIES,
        STRATEGIES,
        TRUST_LEVELS,
    )

    tap = commands.add_parser("tap", help="run a PACT v0.3 verb on a document")
    sub = tap.add_subparsers(dest="tap_command", required=True, metavar="VERB")

    def add(
        name: str, handler: Handler, help: str, *, write: bool = True, agent_flag: bool = True
    ) -> Any:
        parser = sub.add_parser(name, parents=[common], help=help, description=help)
        parser.add_argument("workspace", help="the workspace file")
        parser.add_argument("doc", help="the document's name")
        if agent_flag:
            parser.add_argument("--agent", help="the acting agent (default: $PACT_AGENT)")
        parser.add_argument("--human", help="act as this human")
        if write:
            parser.add_argument("--idempotency-key", help="a retry with it changes nothing")
        parser.set_defaults(handler=handler)
        return parser

    def write(name: str, build: Build, help: str, **options: Any) -> Any:
        return add(name, _write(name, build, joining=name == "join"), help, **options)

    def proposal_verb(name: str, build: Build, help: str, **options: Any) -> Any:
        parser = write(name, build, help, **options)
        parser.add_argument("proposal_id", nargs="?", metavar="PROPOSAL_ID")
        parser.add_argument("--proposal", help="the proposal (or give it as PROPOSAL_ID)")
        return parser

    def content_options(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--content", help="the section's new Markdown (\\n: a newline)")
        parser.add_argument("--content-file", help="... or read from a file ('-': stdin)")

    join = write("join", _join, "join the document as an agent")
    join.add_argument("--as", dest="as_", help="the joining agent's name")
    join.add_argument("--role")
    join.add_argument("--token", help="an invite token")
    write("leave", lambda a: {"op": "leave"}, "leave the document")
    write("heartbeat", lambda a: {"op": "heartbeat"}, "say you are still here")
    done = write("done", _fields_of("done", status="status", summary="summary"), "signal done")
    done.add_argument(
        "--status", required=True, choices=("aligned", "dissenting", "partial", "abstained")
    )
    done.add_argument("--summary")

    add("get", _get, "the content you may read", write=False)
    add("sections", _sections, "the section tree you may see", write=False)

    intent = write(
        "intent",
        _fields_of("intent", sectionId="section", goal="goal", category="category"),
        "declare an intent on a section",
    )
    intent.add_argument("--section", required=True)
    intent.add_argument("--goal", required=True)
    intent.add_argument("--category")
    constrain = write(
        "constrain",
        _fields_of(
            "constrain",
            sectionId="section",
            boundary="boundary",
            category="category",
            reasoning="reasoning",
        ),
        "publish a constraint on a section",
    )
    constrain.add_argument("--section", required=True)
    constrain.add_argument("--boundary", required=True)
    constrain.add_argument("--category")
    constrain.add_argument("--reasoning", help="shown in escalation briefings only")
    withdraw_constraint = write(
        "withdraw-constraint",
        _fields_of("withdraw-constraint", constraintId="constraint"),
        "withdraw a constraint you published",
    )
    withdraw_constraint.add_argument("--constraint", required=True, help="the constraint's id")
    mark = write(
        "mark-constraint",
        _fields_of(
            "mark-constraint", constraintId="constraint", compatibility="compatibility", why="why"
        ),
        "a human marks whether a constraint fits the others on its section",
    )
    mark.add_argument("--constraint", required=True, help="the constraint's id")
    mark.add_argument("--compatibility", required=True, choices=COMPATIBILITIES)
    mark.add_argument("--why")
    salience = write(
        "salience",
        _fields_of("salience", sectionId="section", score="score"),
        "how much you care about a section (0-10)",
    )
    salience.add_argument("--section", required=True)
    salience.add_argument("--score", required=True, type=whole_int)

    propose = write("propose", _propose, "propose new content for a section")
    propose.add_argument("--section", required=True)
    content_options(propose)
    propose.add_argument("--summary")
    propose.add_argument("--base-version", type=whole_int)
    propose.add_argument("--reasoning")
    propose.add_argument("--window", type=whole_int, help="this proposal's objection window (s)")
    approve = proposal_verb("approve", _on_proposal("approve", why="reason"), "approve")
    approve.add_argument("--reason", help="a human says why (their approval merges at once)")
    reject = proposal_verb("reject", _on_proposal("reject", reason="reason"), "reject")
    reject.add_argument("--reason", help="why (a human's rejection must say why)")
    obj = write("object", _object, "object to a proposal, an intent or a constraint")
    obj.add_argument("--proposal")
    obj.add_argument("--intent")
    obj.add_argument("--constraint")
    obj.add_argument("--reason", required=True)
    withdraw = proposal_verb("withdraw", _on_proposal("withdraw", reason="reason"), "withdraw")
    withdraw.add_argument("--reason")
    revert = proposal_verb(
        "revert", _on_proposal("revert", summary="summary", now="now", why="why"), "revert a merge"
    )
    revert.add_argument("--summary")
    revert.add_argument(
        "--now",
        action="store_true",
        default=None,
        help="a human merges the revert at once, past the policy (an override: say --why)",
    )
    revert.add_argument("--why", help="why the revert cannot wait (with --now)")

    lock = write(
        "lock", _fields_of("lock", sectionId="section", ttlSeconds="ttl"), "lock a section"
    )
    lock.add_argument("--section", required=True)
    lock.add_argument("--ttl", type=whole_int, help="seconds (1-60, default 30)")
    unlock = write(
        "unlock", _fields_of("unlock", sectionId="section", why="why"), "unlock a section"
    )
    unlock.add_argument("--section", required=True)
    unlock.add_argument("--why", help="a human force-unlocking another's lock says why")

    ask = write(
        "ask-human",
        _fields_of(
            "ask-human",
            question="question",
            sectionId="section",
            timeoutSeconds="timeout",
            context="context",
        ),
        "ask the human custodian",
    )
    ask.add_argument("--question", required=True)
    ask.add_argument("--section")
    ask.add_argument("--timeout", type=whole_int, help="seconds (10-3600, default 60)")
    ask.add_argument("--context")
    respond = write(
        "respond", _fields_of("respond", queryId="query", response="response"), "answer a query"
    )
    respond.add_argument("--query", required=True)
    respond.add_argument("--response", required=True)
    dismiss = write("dismiss", _fields_of("dismiss", queryId="query", why="why"), "dismiss one")
    dismiss.add_argument("--query", required=True)
    dismiss.add_argument("--why")
    resolve = write("resolve", _resolve, "a human's binding decision on a section")
    resolve.add_argument("--section", required=True)
    resolve.add_argument("--decision", required=True)
    resolve.add_argument("--justification", required=True)
    resolve.add_argument("--override", action="store_true")
    resolve.add_argument("--proposal", help="the proposal (a conflict's side) to merge")
    content_options(resolve)
    briefing = add(
        "escalation-briefing", _briefing, "what bears on an escalated section", write=False
    )
    briefing.add_argument("--section", required=True)
    escalate = write(
        "escalate",
        _fields_of("escalate", sectionId="section", reason="reason"),
        "flag a section for human review",
    )
    escalate.add_argument("--section", required=True)
    escalate.add_argument("--reason", required=True)
    comment = write(
        "comment",
        _fields_of("comment", sectionId="section", text="text", proposalId="proposal"),
        "comment on a section",
    )
    comment.add_argument("--section", required=True)
    comment.add_argument("--text", required=True)
    comment.add_argument("--proposal")
    resolve_comment = write(
        "resolve-comment",
        _fields_of("resolve-comment", commentId="comment"),
        "mark a comment resolved",
    )
    resolve_comment.add_argument("--comment", required=True, help="the comment's id")

    poll = add("poll", _poll, "events since a cursor", write=False)
    poll.add_argument("--since", help="a cursor: evt_N, from sequence number N (default evt_0)")
    poll.add_argument("--limit", type=whole_int, default=POLL_DEFAULT, help="1-200 (default 50)")
    watch = add("watch", _watch, "events as they happen, one a line", write=False)
    watch.add_argument("--since", help="first the events from this cursor (evt_N)")
    watch.add_argument("--count", type=whole_int, help="stop after N events")
    watch.add_argument("--ready", action="store_true", help=argparse.SUPPRESS)  # for tests

    classify = write(
        "classify",
        _fields_of(
            "classify",
            sectionId="section",
            level="level",
            organisation="org",
            framework="framework",
        ),
        "classify a section at a level",
    )
    classify.add_argument("--section", required=True)
    classify.add_argument("--level", required=True)
    classify.add_argument("--org")
    classify.add_argument("--framework")
    clearance = write(
        "clearance",
        _fields_of("clearance", agent="target", level="level", framework="framework"),
        "grant an agent clearance to a level",
        agent_flag=False,
    )
    clearance.add_argument("--agent", dest="target", required=True, help="the agent (name or id)")
    clearance.add_argument("--level", required=True)
    clearance.add_argument("--framework")
    trust = write(
        "trust",
        _fields_of("trust", agent="target", level="level", why="why"),
        "set an agent's trust level",
        agent_flag=False,
    )
    trust.add_argument("--agent", dest="target", required=True)
    trust.add_argument("--level", required=True, choices=TRUST_LEVELS)
    trust.add_argument("--why", help="a human says why the trust changes")
    disclosure = write(
        "disclosure",
        _fields_of("disclosure", agent="target", level="level"),
        "how much of others' constraints an agent sees",
        agent_flag=False,
    )
    disclosure.add_argument("--agent", dest="target", required=True, help="the agent (name or id)")
    disclosure.add_argument(
        "--level",
        required=True,
        type=whole_int,
        help="1: the boundary (default); 2: its category too",
    )
    remove = write(
        "remove",
        _fields_of("remove", agent="target", why="why"),
        "remove an agent",
        agent_flag=False,
    )
    remove.add_argument("--agent", dest="target", required=True)
    remove.add_argument("--why", required=True)
    # The token is printed this once: the document keeps only its hash.
    invite = write("invite", _invite, "make an invite token (printed this once)")
    invite.add_argument("--trust", choices=TRUST_LEVELS, default="Suggester")
    invite.add_argument("--clearance")
    invite.add_argument("--org")
    invite.add_argument("--mode", choices=CONTEXT_MODES, default="Full")
    invite.add_argument("--section", action="append", default=[], help="repeatable, or a,b")
    invite.add_argument("--ttl", type=whole_int, help="seconds (default 7 days)")
    revoke = write(
        "revoke-invite",
        _fields_of("revoke-invite", invite="invite", why="why"),
        "revoke an invite no one has used (INVITE: its id, as `invites` lists it)",
    )
    revoke.add_argument("invite", metavar="INVITE")
    revoke.add_argument("--why", required=True)
    add("invites", _invites, "the document's invites: open, used, expired, revoked", write=False)
    force = proposal_verb("force-merge", _on_proposal("force-merge", why="why"), "merge now")
    force.add_argument("--why", required=True)
    edit = write("edit", _edit, "a human edits a section directly")
    edit.add_argument("--section", required=True)
    content_options(edit)
    edit.add_argument("--why", required=True)
    policy = write(
        "policy",
        _fields_of(
            "policy",
            policy="policy",
            windowSeconds="window",
            strategy="strategy",
            removalGuard="removal_guard",
            why="why",
        ),
        "change the approval policy, strategy or removal guard",
    )
    policy.add_argument("--policy", choices=POLICIES)
    policy.add_argument("--window", type=whole_int)
    policy.add_argument("--strategy", choices=STRATEGIES)
    policy.add_argument(
        "--removal-guard",
        type=whole_int,
        help="%% of a section's lines a proposal may remove and still merge without a human",
    )
    policy.add_argument("--why", required=True)
    write(
        "lock-document", _fields_of("lock-document", why="why"), "lock the document"
    ).add_argument("--why", required=True)
    write("unlock-document", lambda a: {"op": "unlock-document"}, "unlock the document")
    add("tick", _tick, "fire the due work now (merges, expiries, time-outs)", write=False)

    framework = sub.add_parser("framework", help="classification frameworks")
    fsub = framework.add_subparsers(dest="framework_command", required=True, metavar="ACTION")
    fcreate = fsub.add_parser("create", parents=[common], help="create a framework")
    fcreate.add_argument("workspace", help="the workspace file")
    fcreate.add_argument("--name", required=True)
    fcreate.add_argument("--levels", required=True, help='"Public,Internal,Confidential"')
    fcreate.add_argument("--human", help="the human making it")
    fcreate.set_defaults(handler=_framework_create)
