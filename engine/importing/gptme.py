"""A gptme 0.35.1 conversation directory as a context, and following it as gptme appends.

The directory is read with the master-log reader (:class:`engine.masterlog.conversation.
Conversation`: its byte index, its line parser, its reference parser and its verifier's
recovery); nothing is written into it. The context goes through what the model was sent, in
order (docs/masterlog.md, "A conversation as a context"):

1. for each view ``views/compacted-NNN.jsonl``, in order: the messages as they were before the
   compaction (the view's lines up to gptme's status message, each compacted line as its
   original, recovered from the master log, a branch or the saved tool output), then the view
   itself (the compacted lines replace those originals where they sit), sealed as a snapshot
   named after the view (``compacted-001``);
2. then the log gptme sends from now: the view ``views/.current`` names, else the master log.

:class:`Follower` keeps the context in step with that log while gptme appends to it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from engine.masterlog.conversation import MASTER, Conversation, Found
from engine.masterlog.lines import ROLES, LineProblem, Message, parse_line
from engine.masterlog.references import Stub, find_references
from engine.masterlog.verify import Status, Verifier, recover
from engine.masterlog.watch import changes, update

from .errors import BadLogLine, ImportRefused, TruncatedLog
from .plan import Entry, Plan

TOOL_OUTPUTS = "tool-outputs"
MARKERS = ("Master context: ", "[Stale tool output pruned - ")  # a line with a reference or stub


def each_message(
    conversation: Conversation, name: str, first: int = 0, *, writing: bool = False
) -> Iterator[tuple[int, Message]]:
    """The messages of log ``name`` from line ``first`` on, each with its 0-based line, read
    as they are asked for; a line that is none, or a last line cut off, is a typed error
    naming the file and the line. ``writing``: gptme may be writing the last line (a
    follower's look), so one with no newline yet is left for the next look."""
    index = conversation.index(name)
    if index.partial and not writing:
        line = index.lines + 1
        raise TruncatedLog(
            f"{name}:{line}: the last line is cut off ({index.partial:,} bytes and no newline)",
            path=str(index.path),
            line=line,
        )
    for line, raw in index.each(first, index.lines):
        message = parse_line(raw)
        if isinstance(message, LineProblem):
            what = "a blank line" if message.kind == "blank" else message.reason
            raise BadLogLine(
                f"{name}:{line + 1}: {what}: not a message gptme writes",
                path=str(index.path),
                line=line + 1,
            )
        if message.role not in ROLES:
            raise BadLogLine(
                f"{name}:{line + 1}: role {message.role!r} is not system, user or assistant",
                path=str(index.path),
                line=line + 1,
            )
        yield line, message


def read_log(
    conversation: Conversation, name: str, first: int = 0, *, writing: bool = False
) -> list[Message]:
    """:func:`each_message`'s messages as a list (a follower's few new lines)."""
    return [message for _, message in each_message(conversation, name, first, writing=writing)]


def entry(conversation: Conversation, name: str, line: int, message: Message, **more: Any) -> Entry:
    """The context's entry for line ``line`` (0-based) of log ``name``: its role and text, and
    ``source``: where it was read, gptme's other keys, and the references and stubs it holds
    (each saved tool output as its path in the directory)."""
    source: dict[str, Any] = {"from": "gptme", "log": name, "line": line + 1, **more}
    kept: dict[str, Any] = {}
    if message.timestamp is not None:
        kept["timestamp"] = message.timestamp
    kept.update(message.extra)
    if kept:
        source["message"] = kept
    content = message.content
    if any(marker in content for marker in MARKERS):
        references, stubs = find_references(content)
        if references:
            # where the app finds the conversation to verify and recover them (the master
            # path a reference names is the writing machine's)
            source["conversation"] = str(conversation.directory)
            source["references"] = [
                {
                    "kind": ref.kind,
                    "master": ref.master_path,
                    "bytes": [ref.start, ref.end],
                    "tokens": ref.tokens,
                    "preview": ref.preview,
                    **_saved(conversation, ref.tool_output),
                }
                for ref in references
            ]
        if stubs:
            source["stubs"] = [
                {"tokens": stub.tokens, **_saved(conversation, stub.tool_output)} for stub in stubs
            ]
    return Entry(message.role, content, source)


def _saved(conversation: Conversation, written: str | None) -> dict[str, Any]:
    """A saved tool output as written and as a path in the directory (when it is there)."""
    if written is None:
        return {}
    saved: dict[str, Any] = {"tool_output": written}
    local = conversation.local_path(written, TOOL_OUTPUTS)
    if local is not None and local.is_file():
        saved["saved_output"] = str(PurePath(local).relative_to(conversation.directory))
    return saved


def log_entries(conversation: Conversation, name: str) -> Iterator[Entry]:
    """The entries of log ``name``, read as they are asked for; a view's line that is its
    master line (gptme's 1:1: view line *i* is master line *i*) names it (``master_line``):
    the same message, or one whose reference's byte range is exactly that line. The master is
    read beside the view, a line at a time, and to its end (a bad line in it is an error)."""
    masters = None if name == MASTER else each_message(conversation, MASTER)
    for line, message in each_message(conversation, name):
        made = entry(conversation, name, line, message)
        if masters is None:
            made.source["master_line"] = line + 1
        elif (master := next(masters, None)) is not None:
            references = made.source.get("references", [])
            if _same(master[1], message) or (
                len(references) == 1
                and tuple(references[0]["bytes"]) == conversation.master.bounds(line)
            ):
                made.source["master_line"] = line + 1
        yield made
    if masters is not None:
        for _ in masters:  # the rest of the master: read, so that a bad line in it is said
            pass


def before_compaction(conversation: Conversation, name: str) -> Iterator[Entry] | None:
    """The messages of view ``name`` as they were before its compaction, read as they are
    asked for (None: the view compacted nothing): its lines up to gptme's status message (the
    first ``ui_only`` line after the last compacted one), each compacted line as its original
    where it can be recovered."""
    _, founds = conversation.references_of(name)
    by_line: dict[int, list[Found]] = {}
    for found in founds:
        by_line.setdefault(found.where.line, []).append(found)
    stubs = {where.line: stub for where, stub in conversation.stubs() if where.name == name}
    compacted = sorted({*by_line, *stubs})
    if not compacted:
        return None
    end = conversation.index(name).lines
    for line, message in each_message(conversation, name, compacted[-1] + 1):
        if message.role == "system" and message.extra.get("ui_only"):
            end = line
            break
    return _originals(conversation, name, by_line, stubs, end)


def _originals(
    conversation: Conversation,
    name: str,
    by_line: dict[int, list[Found]],
    stubs: dict[int, Stub],
    end: int,
) -> Iterator[Entry]:
    for line, shown in enumerate(itertools.islice(log_entries(conversation, name), end)):
        original: Entry | None = None
        if line in by_line and len(by_line[line]) == 1:
            recovery = recover(conversation, by_line[line][0])
            if recovery.content is not None:
                source = {"from": "gptme", "log": name, "line": line + 1}
                source["recovered_from"] = recovery.source
                original = Entry(shown.role, recovery.content, source)
        elif line in stubs:
            local = conversation.local_path(stubs[line].tool_output, TOOL_OUTPUTS)
            if local is not None and local.is_file():
                text = local.read_bytes().decode("utf-8", "replace")
                source = {"from": "gptme", "log": name, "line": line + 1}
                source["recovered_from"] = str(local.relative_to(conversation.directory))
                original = Entry(shown.role, text, source)
        yield original or shown


@dataclass(frozen=True, slots=True)
class Imported:
    """What an import planned: the commands, the snapshots they seal, the log followed."""

    commands: list[dict[str, Any]]
    snapshots: list[str]
    messages: int  # the messages the context holds after them
    log: str  # the log gptme sends from now (a view, or the master)
    lines: int  # its lines taken in


def followed_log(conversation: Conversation) -> str:
    current = conversation.current_view
    return current if current is not None and current in conversation.views else MASTER


class Importing:
    """The commands that build a context from ``conversation`` (see the module), made as they
    are iterated: the logs are read a line at a time and no more than the message being
    planned is held (with the plan's role and digest of each message). After the iteration,
    :attr:`imported` says what was planned (its ``commands`` left empty: they were given)."""

    def __init__(self, conversation: Conversation, plan: Plan | None = None) -> None:
        self.conversation = conversation
        self.plan = plan or Plan()
        self.count = 0  # the commands given so far
        self.imported: Imported | None = None

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for command in self._commands():
            self.count += 1
            yield command

    def _commands(self) -> Iterator[dict[str, Any]]:
        conversation, plan = self.conversation, self.plan
        for name in conversation.views:
            yield from _compaction(conversation, plan, name)
        log = followed_log(conversation)
        if conversation.views and log == conversation.views[-1]:
            lines = conversation.index(log).lines  # the plan holds it: the last one taken in
        else:
            target = _Counted(log_entries(conversation, log))
            yield from plan.becoming(target)
            lines = target.count
        yield from plan.take()
        self.imported = Imported([], list(plan.snapshots), len(plan.held), log, lines)


def plan_conversation(conversation: Conversation, plan: Plan | None = None) -> Imported:
    """Every command of :class:`Importing` at once, in ``commands`` (a small conversation)."""
    importing = Importing(conversation, plan)
    commands = list(importing)
    assert importing.imported is not None
    return dataclasses.replace(importing.imported, commands=commands)


class _Counted:
    """An iterator's items, counted as they are taken."""

    def __init__(self, items: Iterator[Entry]) -> None:
        self.items = items
        self.count = 0

    def __iter__(self) -> Iterator[Entry]:
        for item in self.items:
            self.count += 1
            yield item


def _compaction(conversation: Conversation, plan: Plan, name: str) -> Iterator[dict[str, Any]]:
    before = before_compaction(conversation, name)
    if before is not None:
        yield from plan.becoming(before)
    yield from plan.becoming(log_entries(conversation, name))
    plan.seal(PurePath(name).stem)
    yield from plan.take()


def _same(a: Message, b: Message) -> bool:
    return a.role == b.role and a.content == b.content


# -- following ----------------------------------------------------------------------------------
@dataclass(slots=True)
class Step:
    """What one look at the directory found: the commands to run, and what to say."""

    commands: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)


class Follower:
    """Keeps a context in step with a conversation as gptme appends to it: a new message is a
    command (one event each), a new view its compaction and snapshot; a rewrite of the log
    followed (an undo, an edit) is said as the master-log verifier says it and not merged: the
    context is left as it was, and nothing more is taken from that log."""

    def __init__(self, conversation: Conversation, plan: Plan, imported: Imported) -> None:
        self.conversation = conversation
        self.verifier = Verifier(conversation)
        self.verifier.update()
        for _ in conversation.catalogue_all():  # what a rewrite is compared against, now
            pass
        self.plan = plan
        self.log = imported.log
        self.lines = imported.lines
        self.views = set(conversation.views)
        self.held: str | None = None  # why nothing more is merged (a rewrite), once said

    def step(self, touched: set[Path] | None = None) -> Step:
        """One look: what changed since the last, as commands and events. A log that can no
        longer be read as gptme writes it (a line that is no message) is said (``refused``)
        and nothing more is taken from the directory."""
        try:
            return self._step(touched)
        except ImportRefused as error:
            self.held = error.message
            self.plan.take()  # whatever this look planned is not run
            event = {"event": "refused", "code": error.code, "what": error.message}
            return Step(events=[event])

    def _step(self, touched: set[Path] | None) -> Step:
        conversation = self.conversation
        result = update(conversation, self.verifier, touched)
        step = Step()
        rewritten = {r.name for r in result.refreshes if r.rewritten}
        if MASTER in rewritten and self.log != MASTER:
            step.events.append(self._rewrite(MASTER, held=False))  # the view followed stands
        if self.held is not None:
            return step
        if self.log in rewritten:
            event = self._rewrite(self.log, held=True)
            self.held = event["what"]
            step.events.append(event)
            return step
        new_views = [name for name in conversation.views if name not in self.views]
        commands: list[dict[str, Any]] = []
        for name in new_views:
            commands.extend(_compaction(conversation, self.plan, name))
            self.views.add(name)
            snapshot = self.plan.snapshots[-1]
            step.events.append({"event": "compacted", "view": name, "snapshot": snapshot})
        log = followed_log(conversation)
        if new_views or log != self.log:
            target = _Counted(log_entries(conversation, log))
            self.plan.become(target)
            if log != self.log:
                step.events.append({"event": "switched", "from": self.log, "to": log})
            self.log, self.lines = log, target.count
        else:
            taken = read_log(conversation, log, self.lines, writing=True)
            for line, message in enumerate(taken, self.lines):
                more = {"master_line": line + 1} if log == MASTER else {}
                self.plan.append(entry(conversation, log, line, message, **more))
                step.events.append(
                    {
                        "event": "message",
                        "log": log,
                        "line": line + 1,
                        "role": message.role,
                        "first_line": message.first_line,
                    }
                )
                self.lines = line + 1
        step.commands = commands + self.plan.take()
        return step

    def _rewrite(self, name: str, *, held: bool) -> dict[str, Any]:
        conversation = self.conversation
        what = conversation.rewrite if name == MASTER else None
        what = what or f"{name} was rewritten (not an append of what was read)"
        counts: dict[str, int] = {}
        for verdict in self.verifier.verdicts.values():
            counts[verdict.status.value] = counts.get(verdict.status.value, 0) + 1
        return {
            "event": "rewritten",
            "log": name,
            "what": what,
            "verdicts": counts,
            "not_ok": sum(n for status, n in counts.items() if status != Status.OK.value),
            "held": held,  # the context is left as it was and takes no more from this log
        }


async def follow(
    follower: Follower, stop: asyncio.Event | None = None, poll: int = 1_000
) -> AsyncIterator[Step]:
    """A :class:`Step` after each batch of changes in the directory that found something."""
    async for touched in changes(follower.conversation.directory, stop, poll):
        step = await asyncio.to_thread(follower.step, touched)
        if step.events or step.commands:
            yield step
