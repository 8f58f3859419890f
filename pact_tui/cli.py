"""The ``pact-tui`` command line: the app, the demo, and ``ctx`` commands agents run themselves.

Every ``ctx`` subcommand takes the workspace path, runs one command or query, and prints a line
for people or, with ``--json``, one JSON document for scripts. A failure is one line on stderr
(``pact-tui: CODE: message``; with ``--json`` the error object) and a non-zero exit. ``verify``
finding a broken chain is a result, printed like an intact one, with exit status 1; so is
``verify --deep`` finding a checkpoint that is not what the log's events build, or a context
they do not rebuild.

Every line goes out through :func:`commandline.echo`, which makes control characters visible
(``engine.visible``): a key, a trigger or a path from the workspace or the command line never
acts on the operator's terminal. Fields are made visible one by one as they are put on a line
(a newline in a key cannot forge a row), and the whole output again on its way out; a JSON
document stays the same document (the escapes are JSON's).

When the reader of the output goes away (``pact-tui … | head``), the command stops quietly with
status 141, as a shell reports a Unix tool killed by SIGPIPE (128 + 13).

Commands are built as the typed models of ``engine.context.commands``, imported where a command
is built: that module loads pydantic, which a query (``ctx list``, ``print``) need not pay for.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import io
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NoReturn

from engine.canonical import MAX_NESTING, text_problem, whole_number
from engine.context import Advanced, ContextError, ContextResult, Deleted, Node, Placed, Sealed
from engine.heap import end_start
from engine.importing.errors import ImportRefused
from engine.masterlog.errors import MasterLogError
from engine.protocol.errors import ProtocolError
from engine.store import StoreError
from engine.store.opening import is_url, open_store, where_shown
from engine.visible import visible

from .commandline import (
    Handler,
    UsageError,
    echo,
    emit,
    fail,
    open_workspace,
    whole_int,
)

if TYPE_CHECKING:
    from engine.context.commands import ComponentSpec, ContextCommand, StageSpec

EXIT_FAILED = 1  # the command was refused or the file is bad (argparse uses 2 for usage errors)
EXIT_READER_GONE = 128 + 13  # stdout's reader went away: what a shell reports after SIGPIPE
# `ctx advance --steps`: an episode is an event (and a snapshot); a script that needs more
# runs the command again. 100,000,000 appended 216,703 events before it was killed (issue 23).
MAX_STEPS = 1_000
DEFAULT_WEB_HOST, DEFAULT_WEB_PORT = "127.0.0.1", 8000  # pact-tui web: loopback only


# -- output -----------------------------------------------------------------------------------
def _node_line(node: Node) -> str:
    coords = ",".join(str(c) for c in node.coordinates)
    text = node.item.text_head(71) if node.item is not None else ""  # 71: more than 70?
    if len(text) > 70:
        text = text[:67] + "..."
    parts = [f"({coords})", visible(node.node_type), visible(node.id)]
    if node.key:
        parts.append(f"#{visible(node.key)}")
    parts.extend(f"+{visible(tag)}" for tag in node.tags)
    if node.lifecycle:
        parts.append(node.lifecycle)
    return "  ".join(parts) + f"  {visible(json.dumps(text, ensure_ascii=False))}"


# -- ctx: building commands from arguments ----------------------------------------------------


def _component(args: argparse.Namespace) -> ComponentSpec:
    from engine.context.commands import ComponentSpec, LifecycleSpec, parse_component

    if args.component is not None:
        try:
            given = json.loads(args.component)
        except json.JSONDecodeError as error:
            raise UsageError(f"--component is not JSON: {error}") from None
        except RecursionError:
            raise UsageError(
                f"--component nests too deeply to read (a component nests at most "
                f"{MAX_NESTING} levels)"
            ) from None
        if not isinstance(given, dict):
            raise UsageError("--component must be a JSON object")
        return parse_component(given)
    if args.text is None:
        raise UsageError("give the component's TEXT or --component JSON")
    fields: dict[str, Any] = {"content": args.text}
    if args.key is not None:
        fields["key"] = args.key
    tags = [t.strip() for tag in args.tag for t in tag.split(",") if t.strip()]
    if tags:
        fields["tags"] = tuple(tags)
    for name in ("ttl", "cad", "priority"):
        value = getattr(args, name)
        if value is not None:
            fields[name] = value
    if args.stage:
        stages = tuple(_stage(text) for text in args.stage)
        fields["render_lifecycle"] = LifecycleSpec(stages=stages, cycle=_cycle(args.cycle))
    elif args.cycle is not None:
        raise UsageError("--cycle needs --stage")
    return ComponentSpec(**fields)


def _stage(text: str) -> StageSpec:
    """``"d0, 0, 1:2"`` → a stage at d0,0,1 for 2 episodes; no ``:TTL`` = the final stage."""
    from engine.context.commands import StageSpec

    selector, _, ttl = text.rpartition(":")
    if not selector:
        return StageSpec(selector=text)
    try:
        return StageSpec(selector=selector, ttl=whole_number(ttl))
    except ValueError as error:
        raise UsageError(f"--stage {text!r}: after ':', {error}") from None


def _cycle(text: str | None) -> bool | int:
    if text is None or text.lower() == "false":
        return False
    if text.lower() == "true":
        return True
    try:
        return whole_number(text)
    except ValueError:
        raise UsageError(f"--cycle {text!r}: use true, false or a number of passes") from None


# -- ctx: handlers ----------------------------------------------------------------------------
async def _ctx_create(args: argparse.Namespace) -> None:
    from engine.store import made_or_nothing
    from engine.workspace import check_context_name

    check_context_name(args.name)  # before the workspace file is made
    # A create that fails leaves no file behind (a database is the server's to make).
    made = (
        contextlib.nullcontext()
        if is_url(args.workspace)
        else made_or_nothing(Path(args.workspace))
    )
    with made:
        async with await open_workspace(args, create=True) as ws:
            await ws.create_context(args.name, actor=args.actor)
    where = visible(str(where_shown(args.workspace)))
    emit(args, {"created": args.name}, f"created context {args.name!r} in {where}")


async def _ctx_list(args: argparse.Namespace) -> None:
    async with await open_workspace(args, read_only=True) as ws:
        infos = await ws.list_contexts()  # loads only contexts the index has no numbers for
    rows = [dataclasses.asdict(info) for info in infos]
    forks = any(info.forked_from is not None for info in infos)
    header = f"{'name':<24} {'episode':>7} {'items':>8} {'depth':>6} {'snapshots':>9}"
    lines = [header + ("  forked from" if forks else "")]
    for info, r in zip(infos, rows, strict=True):
        line = (
            f"{visible(r['name']):<24} {r['episode']:>7} {r['items']:>8} {r['depth']:>6}"
            f" {r['snapshots']:>9}"
        )
        if info.forked_from is not None:
            line += f"  {visible(info.forked_from.describe())}"
        lines.append(line)
    emit(args, rows, "\n".join(lines) if rows else "no contexts yet")


async def _ctx_fork(args: argparse.Namespace) -> None:
    from engine.workspace import check_context_name

    check_context_name(args.new)  # before opening: a bad name is refused as it is
    async with await open_workspace(args) as ws:
        at = _snapshot_ref(ws, args.name, args.at) if args.at is not None else None
        origin = await ws.fork_context(args.name, args.new, at=at, actor=args.actor)
    text = f"forked {visible(origin.describe())} into context {visible(args.new)!r}"
    emit(args, {"forked": args.new, "from": origin.to_json()}, text)


async def _run(args: argparse.Namespace, command: ContextCommand) -> ContextResult:
    async with await open_workspace(args) as ws:
        result: ContextResult = await ws.run(args.name, command, actor=args.actor)
    return result


async def _run_placing(args: argparse.Namespace, command: ContextCommand) -> Placed:
    """Run ``command`` (an insert, update or message): the item it placed."""
    result = await _run(args, command)
    assert isinstance(result, Placed), result
    return result


def _placed_text(verb: str, result: Placed) -> str:
    coords = ",".join(str(c) for c in result.coordinates)
    return f"{verb} {visible(result.id)} at ({coords})"


async def _ctx_insert(args: argparse.Namespace) -> None:
    from engine.context.commands import InsertCommand

    command = InsertCommand(selector=args.selector, component=_component(args))
    result = await _run_placing(args, command)
    emit(args, result.to_json(), _placed_text("inserted", result))


async def _ctx_update(args: argparse.Namespace) -> None:
    from engine.context.commands import UpdateCommand

    command = UpdateCommand(selector=args.selector, component=_component(args), mode=args.mode)
    result = await _run_placing(args, command)
    verb = "replaced" if args.mode == "replace" else "appended"
    emit(args, result.to_json(), _placed_text(verb, result))


async def _ctx_delete(args: argparse.Namespace) -> None:
    from engine.context.commands import DeleteCommand

    if (args.selector is None) == (args.key is None):
        raise UsageError("delete takes a SELECTOR or --key KEY (one of them)")
    result = await _run(args, DeleteCommand(selector=args.selector, key=args.key))
    assert isinstance(result, Deleted), result
    deleted = " ".join(visible(node_id) for node_id in result.deleted)
    emit(args, result.to_json(), f"deleted {len(result.deleted)}: {deleted}")


def _message_handler(role: Literal["user", "assistant"]) -> Handler:
    async def handler(args: argparse.Namespace) -> None:
        from engine.context.commands import MessageCommand

        result = await _run_placing(args, MessageCommand(role=role, text=args.text))
        emit(args, result.to_json(), _placed_text(f"{role} message", result))

    return handler


def _read_commands(stream: Any) -> list[dict[str, Any]]:
    """The commands of ``ctx run``: one JSON object a line (blank lines skipped), each checked
    as ``Workspace.run`` checks it; an error names its line and nothing runs."""
    from engine.context.commands import parse_command
    from engine.context.errors import ContextError, InvalidCommand

    if stream.isatty():
        raise UsageError("give the commands on stdin, one JSON object a line")
    commands: list[dict[str, Any]] = []
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            given = json.loads(line)
        except json.JSONDecodeError as error:
            raise InvalidCommand(f"stdin line {number}: not JSON: {error}") from None
        except RecursionError:
            raise InvalidCommand(
                f"stdin line {number}: nests too deeply to read (at most {MAX_NESTING} levels)"
            ) from None
        if not isinstance(given, dict):
            raise InvalidCommand(f"stdin line {number}: a command is a JSON object")
        try:
            parse_command(given)
        except ContextError as error:
            raise type(error)(f"stdin line {number}: {error.message}", **error.details) from None
        commands.append(given)
    if not commands:
        raise UsageError("no commands on stdin (one JSON object a line)")
    return commands


async def _ctx_run(args: argparse.Namespace) -> None:
    commands = _read_commands(sys.stdin)
    async with await open_workspace(args) as ws:
        results = await ws.run_many(args.name, commands, actor=args.actor)
    answer = [result.to_json() for result in results]
    emit(args, answer, f"ran {len(results):,} commands in one transaction")


async def _ctx_advance(args: argparse.Namespace) -> None:
    from engine.context.commands import AdvanceCommand

    if not 1 <= args.steps <= MAX_STEPS:
        raise UsageError(f"--steps must be from 1 to {MAX_STEPS:,}, got {args.steps}")
    results: list[Advanced] = []
    async with await open_workspace(args) as ws:
        for _ in range(args.steps):
            result = await ws.run(args.name, AdvanceCommand(), actor=args.actor)
            assert isinstance(result, Advanced), result
            results.append(result)
    last = results[-1]
    emit(
        args,
        [result.to_json() for result in results] if args.steps > 1 else last.to_json(),
        f"episode {last.episode} (snapshot {last.snapshot})",
    )


async def _ctx_seal(args: argparse.Namespace) -> None:
    from engine.context.commands import parse_command

    # From its JSON form: a blank trigger is refused as the INVALID_COMMAND it is, not as a
    # pydantic error.
    command, _stored = parse_command({"op": "seal", "trigger": args.trigger})
    result = await _run(args, command)
    assert isinstance(result, Sealed), result
    emit(args, result.to_json(), f"sealed {args.trigger!r} as snapshot {result.snapshot}")


async def _ctx_select(args: argparse.Namespace) -> int:
    """The nodes a selector matches; exit 1 when there are none (as grep does), so a script
    can test for a match."""
    async with await open_workspace(args, read_only=True) as ws:
        nodes = await ws.select(args.name, args.selector)
    text = "\n".join(_node_line(n) for n in nodes) if nodes else "no match"
    emit(args, [n.model_dump() for n in nodes], text)
    return 0 if nodes else EXIT_FAILED


STORY_ITEMS = 20  # the stories one ``ctx story`` tells; more matches are counted


async def _ctx_story(args: argparse.Namespace) -> None:
    from engine.context import NotFound
    from engine.context.selectors import check_input_selector

    async with await open_workspace(args, read_only=True) as ws:
        parsed = check_input_selector(args.selector)
        nodes = [n for n in await ws.select(args.name, args.selector) if n.item is not None]
        if not nodes:
            raise NotFound(f"no item of context {args.name!r} matches {args.selector!r}")
        at = ws.resolve_time(args.name, parsed).id if parsed.is_time_qualified else None
        told = [(n, await ws.item_story(args.name, n.id, at)) for n in nodes[:STORY_ITEMS]]
    lines, data = [], []
    for node, story in told:
        lines.append(_node_line(node))
        for event in story:
            times = f" ({event.times} times)" if event.times > 1 else ""
            due = " (due)" if event.seq is None else ""
            what = f"{event.what:<10}"
            lines.append(f"  ep {event.episode:<6} {what} {visible(event.detail)}{times}{due}")
        data.append(
            {
                "id": node.id,
                "coordinates": list(node.coordinates),
                "story": [
                    {
                        "episode": e.episode,
                        "seq": e.seq,
                        "what": e.what,
                        "detail": e.detail,
                        "times": e.times,
                    }
                    for e in story
                ],
            }
        )
    if len(nodes) > STORY_ITEMS:
        lines.append(f"… and {len(nodes) - STORY_ITEMS:,} more items (narrow the selector)")
    emit(args, data, "\n".join(lines))


def _resolve_at(ws: Any, args: argparse.Namespace) -> str | None:
    if args.episode is not None:
        entry = ws.snapshot_of_episode(args.name, args.episode)
        return str(entry.id)
    return args.at  # type: ignore[no-any-return]


async def _ctx_print(args: argparse.Namespace) -> None:
    async with await open_workspace(args, read_only=True) as ws:
        at = _resolve_at(ws, args)
        if args.mode == "messages":  # a request's messages: JSON whatever --json says
            from .requests import request_messages

            view = await ws.view(args.name, at)
            request = request_messages(view.render_provider(), args.format or "openai")
            echo(json.dumps(request, indent=None if args.json else 2, ensure_ascii=False))
            return
        if args.format is not None:
            raise UsageError("--format is for --mode messages")
        if args.json:
            view = await ws.view(args.name, at)
            data = view.render_provider() if args.mode == "provider" else view.model_dump()
            emit(args, data, "")
        else:
            echo(await ws.render(args.name, args.mode, at))


class ExportRefused(ContextError):
    """A folder ``ctx export`` cannot write: the code of the files' refusal (``NOT_EMPTY``,
    ``WRITE_FAILED``)."""

    def __init__(self, code: str, message: str, path: str) -> None:
        super().__init__(message, path=path)
        self.code = code


async def _ctx_export(args: argparse.Namespace) -> None:
    from .export import gptme_files, gptme_messages
    from .files import WriteError, write_folder_atomically

    async with await open_workspace(args, read_only=True) as ws:
        messages = gptme_messages(await ws.view(args.name, None))
    try:
        written = write_folder_atomically(Path(args.gptme), gptme_files(messages))
    except WriteError as error:
        where = visible(str(error.path))
        raise ExportRefused(error.code, f"--gptme {where}: {error.why}", str(error.path)) from None
    count = f"{len(messages):,} message{'' if len(messages) == 1 else 's'}"
    text = f"exported context {args.name!r} ({count}) to {visible(str(written))}"
    emit(args, {"exported": args.name, "gptme": str(written), "messages": len(messages)}, text)


def _snapshot_ref(ws: Any, name: str, ref: str) -> str | None:
    """``now``, a snapshot id, ``eN`` (episode N) or ``-N`` (N-th newest)."""
    if ref == "now":
        return None
    if ref.startswith("e") and _is_digits(ref[1:]):
        return str(ws.snapshot_of_episode(name, _number(ref[1:], ref)).id)
    if ref.startswith("-") and _is_digits(ref[1:]):
        count, steps = ws.snapshot_count(name), _number(ref[1:], ref)
        if not 1 <= steps <= count:
            raise UsageError(f"{ref}: context {name!r} has {count} snapshot(s)")
        return str(ws.snapshot_at(name, -steps).id)
    ws.snapshot(name, ref)  # raises UNKNOWN_SNAPSHOT
    return ref


def _is_digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _number(text: str, given: str) -> int:
    try:
        return whole_number(text)
    except ValueError as error:
        raise UsageError(f"{given}: {error}") from None


async def _ctx_diff(args: argparse.Namespace) -> None:
    from engine.context.changelog import LIST_LIMIT, by_words

    async with await open_workspace(args, read_only=True) as ws:
        older = _snapshot_ref(ws, args.name, args.older)
        newer = _snapshot_ref(ws, args.name, args.newer)
        tree = await ws.tree_diff(args.name, older, newer)
    # Many items whose only change is a depth move by the same steps are ODI's mass move:
    # counted on one line, not listed (the JSON lists every change).
    odi = {by: n for by, n in sorted(tree.depth_moves.items(), reverse=True) if by}
    summarised = {by for by, n in odi.items() if n > LIST_LIMIT}
    if args.json:  # the JSON document lists every change: built only when asked for
        diff, before, after = tree.to_located()
        data = diff.to_dict()
        data["items"] = {
            i: _diff_item(before.get(i), after.get(i))
            for i in [*diff.added, *diff.removed, *(c.id for c in diff.changed)]
        }
        data["odi"] = {f"{by:+d}": n for by, n in odi.items()}
        emit(args, data, "")
        return
    lines = [_diff_line("+", placed.located) for placed in tree.added.values()]
    lines += [_diff_line("-", placed.located) for placed in tree.removed.values()]
    for change, _was, now in tree.located_changes(leave_out=summarised):
        moves = [f"{name} {a}→{b}" for name, (a, b) in change.moves().items()]
        what = visible(", ".join([*change.fields, *moves]))
        lines.append(f"{_diff_line('~', now)}: {what}")
    for by in sorted(summarised, reverse=True):
        lines.append(f"~ ODI: {odi[by]:,} items moved {by_words(by)} (depth {by:+d}), nothing else")
    echo("\n".join(lines) if lines else "no changes")


Located = tuple[Any, int, int, int]  # (item, depth, position, offset)


def _diff_line(glyph: str, located: Located) -> str:
    """``+ (0,3,0)  text  n12  #key  "its text…"``: where (the newer side's place, the older
    side's for a removed item), what, which, and the first line of its text."""
    from engine.context.changelog import preview

    item, depth, position, offset = located
    parts = [f"{glyph} ({depth},{position},{offset})", visible(item.node_type), visible(item.id)]
    if item.key is not None:
        parts.append(f"#{visible(item.key)}")
    text = preview(item.text_head(61))
    parts.append(visible(json.dumps(text, ensure_ascii=False)))
    return "  ".join(parts)


def _diff_item(before: Located | None, after: Located | None) -> dict[str, Any]:
    from engine.context.changelog import preview

    located = after if after is not None else before
    assert located is not None
    item = located[0]
    return {
        "before": list(before[1:]) if before is not None else None,
        "after": list(after[1:]) if after is not None else None,
        "key": item.key,
        "node_type": item.node_type,
        "preview": preview(item.text_head(61)),
    }


async def _ctx_changes(args: argparse.Namespace) -> None:
    async with await open_workspace(args, read_only=True) as ws:
        between = None
        if args.between is not None:
            older, newer = (_snapshot_ref(ws, args.name, ref) for ref in args.between)
            if older is None:
                raise UsageError("--between A B: A is a snapshot ('now' can only be B)")
            between = (older, newer)
        step = await ws.changelogs(args.name, episode=args.episode, between=between)
    lines = [visible(step.title())]
    for event in step.events:
        log = event.changelog
        how = "" if event.recorded else " (recomputed: stored before changelogs)"
        lines.append(
            f"event {event.seq} {log.op} → episode {log.episode}{how}: {visible(log.summary())}"
        )
        lines.extend("  " + line for line in log.lines())
    if len(step.events) > 1:
        lines.append(f"in all: {visible(step.summary())}")
    emit(args, step.to_json(), "\n".join(lines))


async def _ctx_snapshots(args: argparse.Namespace) -> None:
    async with await open_workspace(args, read_only=True) as ws:
        entries = ws.snapshots(args.name)
    rows = [
        {"index": e.index, "id": e.id, "episode": e.episode, "trigger": e.trigger, "seq": e.seq}
        for e in entries
    ]
    text = "\n".join(
        f"{r['index']:>5}  {visible(r['id']):<10} episode {r['episode']:<6} {visible(r['trigger'])}"
        for r in rows
    )
    emit(args, rows, text or "no snapshots yet")


async def _verify(args: argparse.Namespace) -> int:
    async with await open_store(args.workspace, read_only=True, watch=False) as store:
        if args.deep:
            from engine.deep_verify import verify_deep

            deep = await verify_deep(store)
            result = deep.chain
        else:
            result = await store.verify()
    data: dict[str, Any] = {
        "ok": result.ok,
        "checked": result.checked,
        "broken_seq": result.broken_seq,
        "problem": str(result.problem) if result.problem else None,
        "detail": result.detail,
    }
    lines = [visible(str(result)) if result.ok else f"broken: {visible(str(result))}"]
    if args.deep:
        data["ok"] = deep.ok
        data["contexts"] = [replay.to_dict() for replay in deep.contexts]
        data["documents"] = [replay.to_dict() for replay in deep.documents]
        data["checkpoints"] = [finding.to_dict() for finding in deep.checkpoints]
        data["recorded"] = deep.ok and args.record and await _record_pass(args, deep)
        lines.extend(_deep_lines(deep))
    emit(args, data, "\n".join(lines))
    return 0 if data["ok"] else EXIT_FAILED


async def _record_pass(args: argparse.Namespace, deep: Any) -> bool:
    """Keep when this deep verification passed (the app's status line says it), if this user
    can write the workspace; otherwise say on stderr why not. The verification's result stands
    either way."""
    import time

    from engine.deep_verify import record_pass
    from engine.store import can_write

    path = Path(args.workspace)
    if not is_url(args.workspace) and not await asyncio.to_thread(can_write, path):
        _note(
            args, "NOT_RECORDED", "this user cannot write the workspace: the pass is not recorded"
        )
        return False
    try:
        async with await open_store(args.workspace, watch=False) as store:
            await record_pass(store, deep, time.time_ns())
    except StoreError as error:
        _note(args, "NOT_RECORDED", f"the pass could not be recorded ({error})")
        return False
    return True


VERDICTS = {
    "matches": "matching",
    "differs": "differing",
    "ignored": "ignored",
    "unchecked": "unchecked",
}


def _deep_lines(deep: Any) -> list[str]:
    """What ``verify --deep`` found beyond the chain, a line each, then its verdict."""
    lines = [
        f"broken: {kind} {visible(replay.name)!r} cannot be rebuilt from the log: "
        f"{visible(str(replay.error))}"
        for kind, replays in (("context", deep.contexts), ("document", deep.documents))
        for replay in replays
        if replay.error is not None
    ]
    said = {"differs": "broken", "unchecked": "unchecked", "ignored": "ignored"}
    for finding in deep.checkpoints:
        if finding.verdict in said:
            where = f"checkpoint {visible(finding.name)!r} (event {finding.seq})"
            lines.append(f"{said[finding.verdict]}: {where}: {visible(finding.detail)}")
    events = sum(replay.events for replay in (*deep.contexts, *deep.documents))
    rebuilt = (
        f"{len(deep.contexts)} context(s) and {len(deep.documents)} document(s) rebuilt from"
        f" their {events} events"
    )
    total = len(deep.checkpoints)
    if deep.count("matches") == total:
        lines.append(f"{'ok' if deep.ok else 'broken'}: {rebuilt}; {total} checkpoint(s) match")
    else:
        counts = ", ".join(
            f"{deep.count(verdict)} {label}"
            for verdict, label in VERDICTS.items()
            if deep.count(verdict)
        )
        lines.append(
            f"{'ok' if deep.ok else 'broken'}: {rebuilt}; of {total} checkpoint(s), {counts}"
        )
    return lines


async def _backup(args: argparse.Namespace) -> int:
    from engine.store import SqliteEventStore
    from engine.store.copy import copy_workspace

    if is_url(args.workspace) or is_url(args.destination):
        copied = await copy_workspace(args.workspace, args.destination, replace=args.force)
    else:
        async with await SqliteEventStore.open(
            args.workspace, read_only=True, watch=False
        ) as store:
            copied = await store.backup(args.destination, replace=args.force)
    chain = copied.chain
    data = {
        "ok": chain.ok,
        "path": str(copied.path),
        "bytes": copied.size,
        "events": chain.checked,
        "checkpoints": copied.checkpoints,
        "broken_seq": chain.broken_seq,
        "problem": str(chain.problem) if chain.problem else None,
        "detail": chain.detail,
    }
    what = f"{chain.checked} events and {copied.checkpoints} checkpoint(s), {copied.size} bytes"
    source, copy = visible(str(where_shown(args.workspace))), visible(str(copied.path))
    if chain.ok:
        text = f"backed up {source} to {copy}: {what}; chain intact"
    else:  # a faithful copy of a broken chain: kept, and said as verify says it
        text = f"backed up {source} to {copy}; broken: {visible(str(chain))}"
    emit(args, data, text)
    return 0 if chain.ok else EXIT_FAILED


# -- the app and the demo ----------------------------------------------------------------------
def _open_app(args: argparse.Namespace) -> int:
    from .app import PactApp

    path = Path(args.workspace)
    if not is_url(args.workspace) and not path.exists():
        where = visible(str(path))
        echo(
            f"pact-tui: no workspace at {where} (create one with: pact-tui ctx create "
            f"{where} NAME)",
            file=sys.stderr,
        )
        return EXIT_FAILED
    app = PactApp(
        args.workspace if is_url(args.workspace) else path,
        theme=args.theme,
        context=args.context,
        document=args.document,
        human=args.human,
        read_only=args.read_only,
        step_time=args.step_time,
    )
    app.run()
    return app.return_code or 0


def _demo(args: argparse.Namespace) -> int:
    if args.print:
        return _print_demo(args)
    import subprocess
    import tempfile

    from .app import PactApp
    from .demo import create_demo, create_scaled_demo

    folder = Path(tempfile.mkdtemp(prefix="pact-demo-"))
    path = folder / "demo.pact"
    if args.items:
        asyncio.run(create_scaled_demo(path, args.items))
    else:
        asyncio.run(create_demo(path))
    # Said before the app takes the screen, so that it stays in the scrollback: the file to
    # open again, or to look at with `ctx`, while the app runs.
    where = visible(str(path))
    if args.live:
        echo(f"The demo workspace is {where}; demo agents write to it every {args.interval:g} s")
    else:
        echo(f"The demo workspace is {where}")
    sys.stdout.flush()  # before the app's first frame, whatever stdout is
    driver = None
    if args.live:
        driver = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pact_tui.demo",
                "drive",
                str(path),
                "--interval",
                str(args.interval),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    try:
        app = PactApp(
            path, theme=args.theme, context="researcher", human=args.human, step_time=True
        )
        app.run()
        code = app.return_code or 0
    finally:
        if driver is not None:
            driver.terminate()
            driver.wait(timeout=5)
    echo(f"The demo workspace is kept at {where}; reopen it with: pact-tui {where}")
    return code


def _web(args: argparse.Namespace) -> int:
    """``pact-tui web``: the app served to browsers (``pact_tui/web.py``) until Ctrl+C."""
    from .app import login_name
    from .themes import configured_human
    from .web import WILDCARD_HOSTS, AppOptions, CannotListen, is_loopback, serve

    if args.host in WILDCARD_HOSTS:
        problem = (
            f"--host {args.host!r} listens on every address, and the page must name the one its"
            " browser uses: give that address (loopback, the default, unless you mean otherwise)"
        )
        fail(args, f"USAGE: {problem}", {"code": "USAGE", "message": problem})
        return EXIT_FAILED
    path = Path(args.workspace)
    if not path.is_dir():  # a folder is a gptme conversation: the app shows its master log
        try:
            asyncio.run(_check_workspace(path))
        except (ContextError, StoreError) as error:
            fail(args, str(error), error.to_dict())
            return EXIT_FAILED
    human = args.human or configured_human() or login_name()
    options = AppOptions(
        workspace=path,
        human=human,
        context=args.context,
        document=args.document,
        theme=args.theme,
        read_only=args.read_only,
    )
    where = visible(str(path))

    def ready(url: str) -> None:
        echo(f"Serving {where} at {url} as {visible(human)}; Ctrl+C stops")
        if not is_loopback(args.host):
            _note(
                args,
                "NOT_LOOPBACK",
                f"{args.host} is not a loopback address: anyone who can reach {url} acts as"
                f" {human} on {args.workspace}, with no login and no encryption",
            )

    try:
        serve(options, host=args.host, port=args.port, ready=ready, say=echo)
    except CannotListen as error:
        fail(args, str(error), error.to_dict())
        return EXIT_FAILED
    except KeyboardInterrupt:  # before the server listened (after, Ctrl+C stops it)
        fail(args, "interrupted", {"code": "INTERRUPTED"})
        return EXIT_FAILED
    echo("Stopped: every app it started has quit")
    return 0


async def _check_workspace(path: Path) -> None:
    """Raise what opening ``path`` would (no file, not a workspace, too new…), writing nothing:
    said once here, not in every browser."""
    from engine.workspace import Workspace

    workspace = await Workspace.open(path, watch=False, lazy=True, read_only=True)
    await workspace.close()


def _print_demo(args: argparse.Namespace) -> int:
    """The scripted conversation without the app: the explorer's printouts."""
    from engine.context import Context, ContextExplorer, SequentialIds, SteppingClock
    from engine.context.scenario import demo_steps

    context = Context(ids=SequentialIds(), clock=SteppingClock())
    explorer = ContextExplorer(context)
    for number, (description, action) in enumerate(demo_steps(), start=1):
        action(context)
        if args.verbose:
            echo(f"\n── step {number}: {description}  (episode {context.current_episode})")
            echo(explorer.render("tree"))
    echo(f"\n── the context after the demo (episode {context.current_episode})")
    echo(explorer.render("tree"))
    echo("\n── what the model would be sent")
    echo(explorer.render("provider"))
    return 0


# -- the parser -------------------------------------------------------------------------------
def _port(text: str) -> int:
    port = whole_int(text)
    if port > 65_535:
        raise argparse.ArgumentTypeError(f"{port} is not a port (0 to 65535)")
    return port


class _Parser(argparse.ArgumentParser):
    """argparse's parser, its errors made visible: they quote the arguments given
    (``unrecognized arguments: …``). Its subparsers are of the same class."""

    def error(self, message: str) -> NoReturn:
        super().error(visible(message))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="pact-tui",
        description="Inspect live agent context trees and multi-agent documents.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    opening = commands.add_parser("open", help="open a workspace in the inspector (the default)")
    opening.add_argument("workspace", help="the workspace file")
    opening.add_argument("--context", help="the context to show first")
    opening.add_argument("--document", help="open on the document screen, showing this document")
    opening.add_argument(
        "--human", help="who acts on documents (default: the config file's, or the login name)"
    )
    opening.add_argument("--theme", help="a theme name (see themes/)")
    opening.add_argument(
        "--read-only", action="store_true", help="look only: open the file read-only"
    )
    opening.add_argument(
        "--step-time",
        action="store_true",
        help="make this workspace's protocol time stepped, for good and for every process"
        " (recorded in the file): '.' on the document screen then steps it ahead, firing"
        " windows and expiries early; for simulations, not for a workspace others share",
    )
    opening.set_defaults(sync=_open_app)

    demo = commands.add_parser("demo", help="open the inspector on a fresh demo workspace")
    demo.add_argument("--live", action="store_true", help="keep the demo agents working")
    demo.add_argument("--human", default="ann", help="who acts on the demo document (ann)")
    demo.add_argument("--interval", type=float, default=1.0, help="seconds between live steps")
    demo.add_argument("--items", type=whole_int, help="scale the researcher context to N items")
    demo.add_argument("--theme", help="a theme name (see themes/)")
    demo.add_argument("--print", action="store_true", help="print the scripted walk instead")
    demo.add_argument(
        "--verbose", "-v", action="store_true", help="with --print: the tree after every step"
    )
    demo.set_defaults(sync=_demo)

    serving = commands.add_parser(
        "web",
        help="serve the app to browsers (textual-serve), on loopback unless --host says",
        description="Serve the app on WORKSPACE to browsers: each browser that opens the page"
        " gets its own app, acting as the custodian (--human). Anyone who can reach the port"
        " acts as that custodian: there is no login and no encryption (docs/web.md).",
    )
    serving.add_argument("workspace", help="the workspace file")
    serving.add_argument(
        "--host", default=DEFAULT_WEB_HOST, help=f"the address to listen on ({DEFAULT_WEB_HOST})"
    )
    serving.add_argument(
        "--port",
        type=_port,
        default=DEFAULT_WEB_PORT,
        help=f"the port ({DEFAULT_WEB_PORT}; 0: any free port)",
    )
    serving.add_argument("--context", help="the context to show first")
    serving.add_argument("--document", help="the document to show first (press 2)")
    serving.add_argument(
        "--human", help="who acts on documents (default: the config file's, or the login name)"
    )
    serving.add_argument("--theme", help="a theme name (see themes/)")
    serving.add_argument(
        "--read-only", action="store_true", help="look only: open the file read-only"
    )
    serving.set_defaults(sync=_web)

    common = _Parser(add_help=False)
    common.add_argument("--json", action="store_true", help="print JSON for scripts")
    in_context = _Parser(add_help=False, parents=[common])
    in_context.add_argument("workspace", help="the workspace file")
    in_context.add_argument("name", help="the context's name")
    in_context.add_argument("--actor", default="cli", help="who is acting (recorded in the log)")

    verify = commands.add_parser("verify", parents=[common], help="walk the workspace's hash chain")
    verify.add_argument("workspace", help="the workspace file")
    verify.add_argument(
        "--deep",
        action="store_true",
        help="also rebuild every context and document from the log and compare every"
        " checkpoint with it; a pass is recorded in the workspace (the app shows when)",
    )
    verify.add_argument(
        "--no-record",
        dest="record",
        action="store_false",
        help="with --deep: write nothing, not even that it passed",
    )
    verify.set_defaults(handler=_verify)

    backup = commands.add_parser(
        "backup",
        parents=[common],
        help="copy the workspace, while others write: file or database, either way",
        description="Copy the workspace, as of one moment, to a new file or a PostgreSQL"
        " database (between files, SQLite's online backup; other processes go on writing),"
        " then verify the copy's chain.",
    )
    backup.add_argument("workspace", help="the workspace file or postgresql:// URL")
    backup.add_argument(
        "destination",
        help="the new file, or a database's URL (refused if it holds a workspace)",
    )
    backup.add_argument("--force", action="store_true", help="replace the destination")
    backup.set_defaults(handler=_backup)

    ctx = commands.add_parser("ctx", help="drive a context from outside the app")
    sub = ctx.add_subparsers(dest="ctx_command", required=True, metavar="SUBCOMMAND")

    def add(name: str, handler: Handler, help: str) -> argparse.ArgumentParser:
        parser = sub.add_parser(name, parents=[in_context], help=help, description=help)
        parser.set_defaults(handler=handler)
        return parser

    add("create", _ctx_create, "create a context (and the workspace file if missing)")
    listing = sub.add_parser("list", parents=[common], help="list the workspace's contexts")
    listing.add_argument("workspace", help="the workspace file")
    listing.set_defaults(handler=_ctx_list)

    def component_options(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("text", nargs="?", help="the component's text")
        parser.add_argument("--key", help="a key to find it by (#key)")
        parser.add_argument("--tag", action="append", default=[], help="a tag (repeatable)")
        parser.add_argument("--ttl", type=whole_int, help="episodes it lives (default: permanent)")
        parser.add_argument("--cad", "--cadence", type=whole_int, help="rehydrate every N episodes")
        parser.add_argument("--priority", type=whole_int)
        parser.add_argument(
            "--stage",
            action="append",
            default=[],
            help="a render-lifecycle stage 'd0, 0, 1:2' (coordinates:ttl; repeatable)",
        )
        parser.add_argument("--cycle", help="after the last stage: false, true or N passes")
        parser.add_argument("--component", help="the whole component as a JSON object")

    insert = add("insert", _ctx_insert, "insert a component at coordinates")
    insert.add_argument("selector", help="coordinates, e.g. 'd0, 1, 0'")
    component_options(insert)
    update = add("update", _ctx_update, "replace the item at coordinates, or append to a slot")
    update.add_argument("selector", help="'d0, 1, 0' to replace, 'd0, 1' with --mode append")
    update.add_argument("--mode", choices=("replace", "append"), default="replace")
    component_options(update)
    delete = add("delete", _ctx_delete, "delete by coordinates, query or key")
    delete.add_argument("selector", nargs="?")
    delete.add_argument("--key")
    roles: tuple[Literal["user", "assistant"], ...] = ("user", "assistant")
    for role in roles:
        said = {"user": "a user", "assistant": "an assistant"}[role]  # "a" before a "you" sound
        message = add(role, _message_handler(role), f"add {said} message (a new turn)")
        message.add_argument("text")
    advance = add("advance", _ctx_advance, "start the next episode")
    advance.add_argument(
        "--steps", type=whole_int, default=1, help=f"how many episodes (1 to {MAX_STEPS:,})"
    )
    add(
        "run",
        _ctx_run,
        "run the commands on stdin (JSON lines) in one transaction: all of them, or none",
    )
    seal = add("seal", _ctx_seal, "record a named snapshot")
    seal.add_argument("trigger", nargs="?", default="checkpoint")
    select = add("select", _ctx_select, "list the nodes a selector matches (exit 1: none)")
    select.add_argument("selector")
    printing = add("print", _ctx_print, "print the tree, the provider rendering or the export")
    printing.add_argument(
        "--mode", choices=("tree", "provider", "json", "messages"), default="tree"
    )
    printing.add_argument(
        "--format",
        choices=("openai", "anthropic"),
        help="with --mode messages: the request's messages as that API wants them",
    )
    when = printing.add_mutually_exclusive_group()
    when.add_argument("--at", help="a snapshot id: print the context as it was then")
    when.add_argument("--episode", type=whole_int, help="print the context at episode N")
    diff = add("diff", _ctx_diff, "what changed between two snapshots")
    diff.add_argument("older", help="a snapshot id, eN (episode N), -N (N-th newest) or now")
    diff.add_argument("newer", nargs="?", default="now")
    changes = add(
        "changes",
        _ctx_changes,
        "what each operation of a step did, with reasons: the live step since the newest"
        " snapshot (or the newest snapshot's step if nothing happened since), an episode's, or"
        " those between two snapshots",
    )
    step = changes.add_mutually_exclusive_group()
    step.add_argument("--episode", type=whole_int, help="the step that made episode N's snapshot")
    step.add_argument(
        "--between",
        nargs=2,
        metavar=("A", "B"),
        help="the steps after snapshot A up to snapshot B (ids, eN or -N; B may be now)",
    )
    add("snapshots", _ctx_snapshots, "list a context's snapshots")
    from . import importcli  # ctx import: a gptme conversation or a messages list

    importcli.add_arguments(
        add(
            "import",
            importcli.ctx_import,
            "create a context from a gptme conversation directory or a messages list, in one"
            " transaction (--follow: then keep it in step as gptme appends)",
        )
    )
    story = add(
        "story",
        _ctx_story,
        "what happened to the items a selector matches (born, moved, replaced, staged) and"
        " what is due for them, read from the log (a time-qualified selector: as of then)",
    )
    story.add_argument("selector", help="e.g. '#finding_7', 'd3, 1, 0' or '@e4 #note'")
    fork = add(
        "fork",
        _ctx_fork,
        "copy a context, as it is or as of a snapshot, into a new context (recording where it"
        " came from): step, insert and play there without touching the original",
    )
    fork.add_argument("new", help="the new context's name")
    fork.add_argument(
        "--at", help="a snapshot to copy as of (an id, eN or -N; default: as it is now)"
    )
    export = add(
        "export",
        _ctx_export,
        "write the context as a new gptme conversation folder: what the model is sent, one"
        " message a line of its conversation.jsonl (the folder must be new or empty)",
    )
    export.add_argument(
        "--gptme", required=True, metavar="DIR", help="the folder to write (new or empty)"
    )

    from .tap import register  # doc and tap: documents and the PACT v0.3 verbs

    register(commands, common)
    from .logcli import register as register_log  # log: gptme master logs

    register_log(commands, common)
    from .server.cli import register as register_server  # serve, key: the HTTP server

    register_server(commands, common)
    return parser


COMMANDS = ("open", "demo", "web", "ctx", "verify", "backup", "doc", "tap", "log", "serve", "key")


def main(argv: Sequence[str] | None = None) -> int:
    try:
        try:
            return _main(argv)
        finally:
            sys.stdout.flush()  # here, not at exit, so that a reader gone away is seen here
    except BrokenPipeError:
        # What Python's documentation advises: nothing more goes to the closed pipe (the
        # interpreter flushes stdout again at exit), and no traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_READER_GONE


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if isinstance(sys.stdout, io.TextIOWrapper):
        # Text stored before input was checked may hold what the terminal's encoding cannot
        # write: shown as an escape (\udc80), never a UnicodeEncodeError.
        sys.stdout.reconfigure(errors="backslashreplace")
    problem = _argument_problem(argv)
    if problem is not None:
        fake = argparse.Namespace(json="--json" in argv)
        fail(fake, f"USAGE: {problem}", {"code": "USAGE", "message": problem})
        return EXIT_FAILED
    if argv and argv[0] not in COMMANDS and not argv[0].startswith("-"):
        argv.insert(0, "open")  # pact-tui WORKSPACE
    args = build_parser().parse_args(argv)
    if getattr(args, "sync", None) is not _open_app:
        end_start()  # the app ends it once its first frame is drawn (pact_tui/launch.py)
    if hasattr(args, "sync"):
        return int(args.sync(args))
    try:
        code = asyncio.run(args.handler(args)) or 0
    except ProtocolError as error:  # a refused protocol command: the v0.3 error document
        _refused(args, error)
    except (ContextError, StoreError, MasterLogError, ImportRefused) as error:
        fail(args, str(error), error.to_dict())
    except KeyboardInterrupt:
        fail(args, "interrupted", {"code": "INTERRUPTED"})
    except BrokenPipeError:
        raise
    except Exception as error:
        if os.environ.get("PACT_TUI_DEBUG"):
            raise
        message = f"INTERNAL: {type(error).__name__}: {error} (PACT_TUI_DEBUG=1 shows where)"
        fail(args, message, {"code": "INTERNAL", "message": str(error)})
    else:
        _note_checkpoint_problem(args)
        return code
    return EXIT_FAILED


def _argument_problem(argv: Sequence[str]) -> str | None:
    """What makes an argument not text (an invalid UTF-8 byte, which Python decodes to a lone
    surrogate), naming the argument; None when every argument is text."""
    for index, argument in enumerate(argv):
        if text_problem(argument) is None:
            continue
        option, equals, _value = argument.partition("=")
        if argument.startswith("--") and equals:
            named = option
        elif index and argv[index - 1].startswith("-"):
            named = argv[index - 1]
        else:
            named = f"argument {index + 1}"
        shown = argument.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        return f"{named} ({shown!r}) is not valid UTF-8 text"
    return None


def _note(args: argparse.Namespace, code: str, message: str) -> None:
    """Say something on stderr beside a command's result, which stands."""
    if getattr(args, "json", False):
        note = {"code": code, "message": message}
        echo(json.dumps({"note": note}, ensure_ascii=False), file=sys.stderr)
    else:
        echo(f"pact-tui: note: {visible(' '.join(message.split()))}", file=sys.stderr)


def _note_checkpoint_problem(args: argparse.Namespace) -> None:
    """Say on stderr why a checkpoint was not used or saved (the command's result stands: a
    checkpoint is a cache, and the log was read instead)."""
    problem = getattr(getattr(args, "opened", None), "checkpoint_problem", None)
    if problem is None:
        return
    _note(args, "CHECKPOINT_NOT_USED", problem)


def _refused(args: argparse.Namespace, error: ProtocolError) -> None:
    """``{"errors": [{"code", "description", "metadata"}]}`` with ``--json``, else one line."""
    if getattr(args, "json", False):
        entry = error.wire()
        entry.setdefault("metadata", {})
        echo(json.dumps({"errors": [entry]}, ensure_ascii=False, default=str), file=sys.stderr)
    else:
        message = " ".join(error.description.split())
        echo(f"pact-tui: {visible(error.code)}: {visible(message)}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
