"""``pact-tui log …``: gptme conversation directories from the command line.

``index DIR`` indexes (only new bytes) and catalogues every log, and says what it found: lines,
problem lines with their byte offsets, a rewrite and which messages it changed, references by
status. ``verify DIR`` judges every reference in every view and branch (exit status 1 when one
is not ok; ``--json`` lists each with its evidence). ``recover DIR (VIEW:LINE | --ref TEXT |
--bytes A-B)`` prints the original message. ``search DIR QUERY`` searches message contents
(FTS5), newest first. ``tail DIR`` follows the directory as gptme writes, one line per new
message and per verdict that changes. ``compact DIR --budget N [--out FILE]`` writes a view of
this project's own, with gptme's references.

The index cache is derived data in ``$PACT_TUI_CACHE`` (default ``$XDG_CACHE_HOME/pact-tui``,
else ``~/.cache/pact-tui``), one file per directory; ``--cache FILE`` names another. Nothing is
written into the conversation directory, except by ``compact``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.visible import visible

from .commandline import Handler, echo, emit, whole_int

if TYPE_CHECKING:
    from engine.masterlog.conversation import Conversation, Found
    from engine.masterlog.verify import Verdict

EXIT_PROBLEMS = 1


def cache_for(directory: str | Path) -> Path:
    """Where the index of a conversation directory is kept (one file per directory)."""
    base = os.environ.get("PACT_TUI_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pact-tui"
    )
    key = hashlib.sha256(str(Path(directory).resolve()).encode()).hexdigest()[:16]
    return Path(base) / f"masterlog-{key}.sqlite"


def open_conversation(args: argparse.Namespace) -> Conversation:
    from engine.masterlog.conversation import Conversation

    cache = Path(args.cache) if getattr(args, "cache", None) else cache_for(args.directory)
    return Conversation.open(args.directory, cache)


def _verdict_line(verdict: Verdict) -> str:
    ref = verdict.reference
    head = f"{verdict.status.value:<19} {visible(str(verdict.where))}  bytes {ref.start}-{ref.end}"
    head += f"  {ref.kind}  {json.dumps(ref.preview or '', ensure_ascii=False)[:70]}"
    lines = [head]
    if verdict.explanation:
        lines.append(f"    {visible(verdict.explanation)}")
    return "\n".join(lines)


PROGRESS_EVERY = 0.25  # seconds between two progress lines on a terminal


def _catalogue(conversation: Conversation, args: argparse.Namespace) -> None:
    """Catalogue every line not catalogued yet (1 GiB: minutes the first time); on a terminal,
    how far, on stderr, rewritten in place and cleared at the end."""
    terminal = sys.stderr.isatty()
    said = 0.0
    for progress in conversation.catalogue_all():
        now = time.monotonic()
        if terminal and (now - said >= PROGRESS_EVERY or progress.done == progress.total):
            said = now
            sys.stderr.write(
                f"\rcataloguing {visible(progress.name)}: {progress.done * 100 // progress.total}%"
                f" ({progress.done:,} of {progress.total:,} lines)\x1b[K"
            )
            sys.stderr.flush()
    if terminal and said:
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()


# -- handlers ---------------------------------------------------------------------------------
async def _index(args: argparse.Namespace) -> int | None:
    from engine.masterlog.conversation import MASTER
    from engine.masterlog.verify import Verifier

    with open_conversation(args) as conversation:
        refreshes = conversation.opened  # opening indexed what was new
        _catalogue(conversation, args)
        verifier = Verifier(conversation)
        verifier.update()
        logs: list[dict[str, Any]] = []
        for name in conversation.logs:
            index = conversation.index(name)
            problems = conversation.catalogue.problems(name)
            logs.append(
                {
                    "name": name,
                    "lines": index.lines,
                    "bytes": index.size,
                    "partial": index.partial,
                    "problems": [
                        {
                            "line": p.line + 1,
                            "start": p.start,
                            "kind": p.kind,
                            "reason": p.first_line,
                        }
                        for p in problems
                    ],
                    "references": verifier.counts(name),
                }
            )
        master = next(r for r in refreshes if r.name == MASTER)
        data: dict[str, Any] = {
            "directory": str(conversation.directory),
            "cache": str(conversation.cache),
            "logs": logs,
            "master": {
                "new_lines": master.new_lines,
                "bytes_read": master.bytes_read,
                "rewritten": master.rewritten,
                "reason": master.reason,
                "changes": [c.describe() for c in conversation.changes],
            },
            "stubs": [str(where) for where, _ in conversation.stubs()],
        }
        text = [
            f"{visible(str(conversation.directory))}  (index: {visible(str(conversation.cache))})"
        ]
        for log in logs:
            counts = ", ".join(f"{n} {s}" for s, n in sorted(log["references"].items()))
            text.append(
                f"  {visible(log['name'])}: {log['lines']:,} lines, {log['bytes']:,} bytes"
                + (f", {log['partial']:,} bytes of an unfinished line" if log["partial"] else "")
                + (f"; references: {counts}" if counts else "")
            )
            for problem in log["problems"]:
                text.append(
                    f"    line {problem['line']} at byte {problem['start']:,}: {problem['kind']}"
                    f" ({visible(problem['reason'])}), skipped by gptme's reader"
                )
        if master.rewritten:
            text.append(f"  {MASTER} was rewritten: {visible(master.reason)}")
            text.extend(f"    {change}" for change in data["master"]["changes"])
        else:
            text.append(
                f"  {MASTER}: {master.new_lines:,} new lines ({master.bytes_read:,} bytes read)"
            )
        emit(args, data, "\n".join(text))
    return None


async def _verify(args: argparse.Namespace) -> int | None:
    from engine.masterlog.verify import Verifier

    with open_conversation(args) as conversation:
        verifier = Verifier(conversation)
        verifier.update()
        verdicts = verifier.ordered()
        bad = [v for v in verdicts if not v.ok]
        totals = verifier.counts()
        data = {
            "directory": str(conversation.directory),
            "references": [v.to_json() for v in verdicts],
            "counts": totals,
            "ok": not bad,
        }
        totals = verifier.counts()
        counts = ", ".join(f"{n} {s}" for s, n in sorted(totals.items())) or "none"
        text = [_verdict_line(v) for v in verdicts] + [f"{len(verdicts)} references: {counts}"]
        notes = sorted({note for v in verdicts for note in v.notes})
        text.extend(f"note: {visible(note)}" for note in notes)
        emit(args, data, "\n".join(text))
    return EXIT_PROBLEMS if bad else None


def _found_at(conversation: Conversation, where: str) -> Found:
    """The reference at ``VIEW:LINE`` (``#N``: the Nth of the line's references), as ``verify``
    names it; :class:`BadReference` naming what is not there."""
    from engine.masterlog.errors import BadReference

    place, _, nth = where.partition("#")
    name, _, line_text = place.rpartition(":")
    if not name or not line_text.isdigit() or (nth and not nth.isdigit()):
        raise BadReference(
            f"{where!r} is not VIEW:LINE (views/compacted-001.jsonl:12, #N: the Nth)"
        )
    if name not in conversation.views + conversation.branches:
        logs = ", ".join(conversation.views + conversation.branches) or "none"
        raise BadReference(f"{name!r} is no view or branch of the directory (there are: {logs})")
    line = int(line_text)
    found = [f for f in conversation.references_of(name)[1] if f.where.line == line - 1]
    if not found:
        raise BadReference(f"{name}:{line} holds no reference")
    if nth:
        if not 1 <= int(nth) <= len(found):
            raise BadReference(f"{name}:{line} holds {len(found)} reference(s), not #{nth}")
        return found[int(nth) - 1]
    if len(found) > 1:
        raise BadReference(
            f"{name}:{line} holds {len(found)} references: name one, {name}:{line}#1 to"
            f" #{len(found)}"
        )
    return found[0]


async def _recover(args: argparse.Namespace) -> int | None:
    from engine.masterlog.conversation import Found, Location
    from engine.masterlog.errors import BadRange, BadReference
    from engine.masterlog.references import parse_range, parse_reference
    from engine.masterlog.verify import recover, recover_range

    given = [what for what in (args.where, args.ref, args.bytes) if what is not None]
    if len(given) != 1:
        raise BadReference(
            "give one of: a view's line (views/compacted-001.jsonl:12), --ref TEXT or"
            f" --bytes START-END ({len(given)} given)"
        )
    with open_conversation(args) as conversation:
        if args.where is not None:
            result = recover(conversation, _found_at(conversation, args.where))
        elif args.ref is not None:
            text = sys.stdin.read() if args.ref == "-" else args.ref
            found = Found(Location("(given)", 0), parse_reference(text))
            result = recover(conversation, found)
        else:
            start, end = parse_range(args.bytes)
            try:
                result = recover_range(conversation, start, end)
            except BadRange as error:
                raise BadRange(
                    f"{error.message}; to recover the message a reference was made for, give"
                    " the reference: a view's line (log recover DIR views/compacted-001.jsonl:12)"
                    " or --ref TEXT",
                    path=error.path,
                ) from None
        verdict = result.verdict
        data = {
            "content": result.content,
            "source": result.source,
            "evidence": result.evidence,
            "status": verdict.status.value if verdict else None,
            "message": result.message.to_json() if result.message else None,
        }
        if args.json:
            emit(args, data, "")
        else:
            print(f"# {result.source or 'not recovered'}: {result.evidence}", file=sys.stderr)
            if result.content is not None:
                echo(result.content)
    return None if result.content is not None else EXIT_PROBLEMS


async def _search(args: argparse.Namespace) -> int | None:
    from engine.masterlog.catalogue import MARK

    with open_conversation(args) as conversation:
        _catalogue(conversation, args)
        hits = conversation.catalogue.search(args.query, limit=args.limit)
        data = []
        lines = []
        for hit in hits:
            snippet = hit.snippet.replace(MARK[0], "[").replace(MARK[1], "]")
            where = f"{hit.name}:{hit.line + 1}"
            data.append(
                {
                    "where": where,
                    "bytes": [hit.start, hit.end],
                    "role": hit.role,
                    "snippet": snippet,
                }
            )
            lines.append(
                f"{visible(where)}  bytes {hit.start}-{hit.end}  {hit.role}:"
                f"  {visible(' '.join(snippet.split()))}"
            )
        text = "\n".join(lines)
        emit(args, data, text or "no match")
        if len(hits) == args.limit and not args.json:
            found = conversation.catalogue.matches(args.query)
            if found > len(hits):
                print(
                    f"# the newest {len(hits):,} of {found:,} matches (--limit N lists more)",
                    file=sys.stderr,
                )
    return None if hits else EXIT_PROBLEMS


async def _tail(args: argparse.Namespace) -> int | None:
    from engine.masterlog.conversation import MASTER
    from engine.masterlog.lines import LineProblem
    from engine.masterlog.verify import Verifier
    from engine.masterlog.watch import follow

    with open_conversation(args) as conversation:
        # Catalogued first: a rewrite is compared with the lines' digests
        _catalogue(conversation, args)
        verifier = Verifier(conversation)
        verifier.update()
        master = conversation.master
        shown = max(0, master.lines - args.lines)

        def show_new() -> None:
            nonlocal shown
            for line in range(shown, master.lines):
                start, end = master.bounds(line)
                message = conversation.message(MASTER, line)
                if isinstance(message, LineProblem):
                    entry = {
                        "line": line + 1,
                        "bytes": [start, end],
                        "kind": message.kind,
                        "reason": message.reason,
                    }
                    text = f"{line + 1:>6}  {start:>12,}  {message.kind}: {message.reason}"
                else:
                    entry = {
                        "line": line + 1,
                        "bytes": [start, end],
                        "role": message.role,
                        "timestamp": message.timestamp,
                        "first_line": message.first_line,
                    }
                    text = (
                        f"{line + 1:>6}  {start:>12,}  {message.role:<9} {end - start:>9,} B "
                        f" {visible(message.first_line[:80])}"
                    )
                emit(args, entry, text)
            shown = master.lines
            sys.stdout.flush()

        show_new()
        async for update in follow(conversation, verifier):
            if any(r.rewritten and r.name == MASTER for r in update.refreshes):
                said = conversation.rewrite or "rewritten"
                emit(
                    args,
                    {
                        "rewritten": True,
                        "what": said,
                        "changes": [c.describe() for c in conversation.changes],
                    },
                    f"-- {MASTER} was rewritten: {said}",
                )
                first = conversation.changes[0].new[0] if conversation.changes else 0
                shown = min(shown, first if conversation.compared else master.lines)
            show_new()
            for verdict in update.changed:
                emit(args, {"verdict": verdict.to_json()}, _verdict_line(verdict))
            sys.stdout.flush()
    return None


async def _compact(args: argparse.Namespace) -> int | None:
    from engine.masterlog.compact import write

    with open_conversation(args) as conversation:
        out = Path(args.out) if args.out else None
        written = write(conversation, args.budget, now=datetime.now(UTC), out=out)
        plan = written.plan
        data = {
            "view": str(written.view),
            "tokens_before": plan.tokens_before,
            "tokens_after": plan.tokens_after,
            "budget": plan.budget,
            "within_budget": plan.within,
            "cuts": [
                {"line": c.position + 1, "kind": c.kind, "tokens": c.tokens} for c in plan.cuts
            ],
            "tool_outputs": [str(p) for p in written.tool_outputs],
        }
        text = (
            f"wrote {visible(str(written.view))}: {len(plan.cuts)} references,"
            f" {plan.tokens_before:,} → {plan.tokens_after:,} tokens (budget {plan.budget:,})"
        )
        if not plan.within:
            text += "; the budget cannot be met: the head and pinned messages are kept whole"
        emit(args, data, text)
    return None if plan.within else EXIT_PROBLEMS


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    log = commands.add_parser("log", help="gptme master logs: index, verify, recover, search")
    sub = log.add_subparsers(dest="log_command", required=True, metavar="SUBCOMMAND")
    in_dir = argparse.ArgumentParser(add_help=False, parents=[common])
    in_dir.add_argument("directory", help="a gptme conversation directory")
    in_dir.add_argument("--cache", help="the index cache file (default: one per directory)")

    def add(name: str, handler: Handler, help: str) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = sub.add_parser(
            name, parents=[in_dir], help=help, description=help
        )
        parser.set_defaults(handler=handler)
        return parser

    add("index", _index, "index every log of the directory (only new bytes) and report")
    add("verify", _verify, "check every reference in every view and branch")
    recover = add("recover", _recover, "print the original message of a reference or byte range")
    recover.add_argument(
        "where",
        nargs="?",
        help="a view's line as verify names it (views/compacted-001.jsonl:12; #N: its Nth)",
    )
    which = recover.add_mutually_exclusive_group()
    which.add_argument("--ref", help="the reference's text ('-': read it from stdin)")
    which.add_argument("--bytes", help="a byte range START-END of conversation.jsonl")
    search = add("search", _search, "search message contents (SQLite FTS5), newest first")
    search.add_argument("query")
    search.add_argument("--limit", type=whole_int, default=20)
    tail = add("tail", _tail, "follow the directory as gptme writes (Ctrl-C stops)")
    tail.add_argument("--lines", type=whole_int, default=10, help="recent messages shown first")
    compact = add("compact", _compact, "write a compacted view with gptme's references")
    compact.add_argument("--budget", type=whole_int, required=True, help="tokens (len/4)")
    compact.add_argument("--out", help="the view file (default: views/compacted-NNN.jsonl)")
