"""``pact-tui ctx import WS NAME (--gptme DIR | --messages FILE.json) [--follow]``.

A gptme conversation directory (read with the master-log reader; nothing is written into it,
its index cache is kept where ``log`` keeps it) or an OpenAI-style or Anthropic-style messages
list becomes a new context: the context and every command that builds it are appended in one
transaction, or nothing is (``engine.importing``; the mapping is in docs/masterlog.md). A
directory or file that cannot be read as one is a one-line typed error naming the file and the
line (or the message's index), and the workspace is left as it was, not even created.

``--follow`` (gptme only) then keeps the context in step while gptme appends: one line per new
message (one event each), per compaction (its snapshot), and per rewrite of the log followed,
which is said as the master-log verifier says it and not merged. Ctrl-C stops.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from engine.store.opening import is_url, where_shown
from engine.visible import visible

from .commandline import UsageError, emit, open_workspace
from .logcli import cache_for

FIRST_LINE = 80  # characters of a new message's first line a follow line shows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--gptme", metavar="DIR", help="a gptme conversation directory")
    source.add_argument(
        "--messages", metavar="FILE", help="a JSON messages list (OpenAI- or Anthropic-style)"
    )
    parser.add_argument(
        "--follow", action="store_true", help="then follow the gptme directory (Ctrl-C stops)"
    )
    parser.add_argument("--cache", help="the master-log index cache (default: as `log` keeps it)")


async def ctx_import(args: argparse.Namespace) -> None:
    from engine.store import made_or_nothing
    from engine.workspace import check_context_name

    check_context_name(args.name)
    if args.follow and args.gptme is None:
        raise UsageError("--follow follows a gptme directory (--gptme DIR)")
    if args.gptme is not None:
        await _import_gptme(args, made_or_nothing)
        return
    from engine.importing.plan import Plan

    plan = Plan()
    for entry in _message_entries(Path(args.messages)):
        plan.append(entry)
    commands = plan.take()
    made = (
        contextlib.nullcontext()
        if is_url(args.workspace)
        else made_or_nothing(Path(args.workspace))
    )
    with made:
        async with await open_workspace(args, create=True) as ws:
            await ws.create_context_with(args.name, commands, actor=args.actor)
    data = {"imported": args.name, "from": args.messages, "messages": len(plan.held)}
    data["events"] = len(commands) + 1
    text = (
        f"imported {len(plan.held):,} messages from {visible(args.messages)} into context"
        f" {visible(args.name)!r} in {visible(str(where_shown(args.workspace)))}"
    )
    emit(args, data, text)


def _message_entries(path: Path) -> list[Any]:
    from engine.importing.errors import BadMessages
    from engine.importing.messages import message_entries

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadMessages(f"{path}: no such file", path=str(path)) from None
    except (OSError, UnicodeDecodeError) as error:
        raise BadMessages(f"{path}: not readable as UTF-8 text: {error}", path=str(path)) from None
    try:
        given = json.loads(text)
    except json.JSONDecodeError as error:
        raise BadMessages(
            f"{path}: not JSON: {error.msg} at line {error.lineno} column {error.colno}",
            path=str(path),
        ) from None
    except RecursionError:
        raise BadMessages(f"{path}: JSON nested too deeply to read", path=str(path)) from None
    return message_entries(given)


async def _import_gptme(args: argparse.Namespace, made_or_nothing: Any) -> None:
    from engine.importing.gptme import Follower, Importing, follow
    from engine.importing.plan import Plan
    from engine.masterlog.conversation import Conversation

    cache = Path(args.cache) if args.cache else cache_for(args.gptme)
    with Conversation.open(args.gptme, cache) as conversation:
        plan = Plan()
        # Read as it is written, in one transaction: a bad line rolls it back.
        importing = Importing(conversation, plan)
        made = (
            contextlib.nullcontext()
            if is_url(args.workspace)
            else made_or_nothing(Path(args.workspace))
        )
        with made:  # a refused import leaves no workspace file it made
            ws = await open_workspace(args, create=True)
            try:
                ran = await ws.create_context_streamed(args.name, importing, actor=args.actor)
            except BaseException:
                await ws.close()
                raise
        imported = importing.imported
        assert imported is not None
        async with ws:
            data = {
                "imported": args.name,
                "from": str(conversation.directory),
                "messages": imported.messages,
                "events": ran + 1,
                "snapshots": imported.snapshots,
                "log": imported.log,
            }
            snapshots = ", ".join(imported.snapshots) or "none"
            text = (
                f"imported {imported.messages:,} messages from"
                f" {visible(str(conversation.directory))} into context {visible(args.name)!r}"
                f" ({ran + 1:,} events; snapshots: {visible(snapshots)};"
                f" gptme sends {visible(imported.log)})"
            )
            _say(args, data, text)  # flushed: a follower's reader sees it now
            if not args.follow:
                return
            follower = Follower(conversation, plan, imported)
            _say(args, {"event": "following", "log": follower.log}, "following: Ctrl-C stops")
            async for step in follow(follower):
                if step.commands:
                    await ws.run_many(args.name, step.commands, actor=args.actor)
                for event in step.events:
                    _say(args, event, _event_line(event))


def _say(args: argparse.Namespace, event: dict[str, Any], text: str) -> None:
    emit(args, event, text)
    sys.stdout.flush()  # a follower's reader sees each event as it happens


def _event_line(event: dict[str, Any]) -> str:
    kind = event["event"]
    if kind == "message":
        first = event["first_line"]
        cut = first[:FIRST_LINE] + ("…" if len(first) > FIRST_LINE else "")
        return f"+ {event['log']}:{event['line']} {event['role']}: {visible(cut)}"
    if kind == "compacted":
        return f"compacted: {event['view']}, sealed as snapshot {event['snapshot']!r}"
    if kind == "switched":
        return f"switched: gptme sends {event['to']} (was {event['from']})"
    if kind == "refused":
        return f"refused: {visible(event['what'])}; the context takes nothing more (import again)"
    assert kind == "rewritten"
    held = (
        "; the context is left as it was and takes nothing more from it (import again)"
        if event["held"]
        else ""
    )
    return (
        f"rewritten: {event['log']}: {visible(event['what'])}; {event['not_ok']} reference(s)"
        f" not ok{held}"
    )
