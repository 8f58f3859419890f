"""Does a reference still recover the truth? A verdict per reference, with evidence in words.

A reference was made for one message: its ``Preview`` is that message's first line and its
``tokens`` gptme's count of it (``len(content) // 4`` offline). The verdict checks the byte
range against the master log as indexed now:

``ok``                  the range is exactly one line, holding the message the Preview names
``missing-file``        the master log it names exists neither there nor in this directory
``torn``                the range reaches into an unfinished last line (gptme still writing)
``mid-line``            the range starts or ends inside a line
``shifted``             the range is one whole line, but of a neighbour: the message the
                        Preview names is next to it (gptme's index counted a blank or
                        malformed line its reader skipped)
``rewritten``           the range no longer holds that message: the file was rewritten (undo,
                        edit) or truncated since the reference was made
``tool-output-differs`` the range is right, but the saved tool output is not the message

Wherever the original can still be found (a branch gptme saved before an undo or edit, a view,
the saved tool output), the verdict names it; :func:`recover` returns it with that evidence.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from .conversation import MASTER, Conversation, Found, Location, read_saved
from .errors import BadRange
from .index import LineIndex, Refresh
from .lines import PREVIEW_CHARS, LineProblem, Message, parse_line
from .references import Reference

NEIGHBOURS = 2  # lines either side searched for a shifted reference's message


class Status(StrEnum):
    OK = "ok"
    MISSING_FILE = "missing-file"
    TORN = "torn"
    MID_LINE = "mid-line"
    SHIFTED = "shifted"
    REWRITTEN = "rewritten"
    TOOL_OUTPUT_DIFFERS = "tool-output-differs"


@dataclass(frozen=True, slots=True)
class Verdict:
    where: Location
    reference: Reference
    status: Status
    explanation: str  # what is wrong, in words ("" when ok)
    master: str | None = None  # the master log read, as a path
    resolved_relative: bool = False
    lands_on: int | None = None  # the 0-based master line holding the range's first byte
    preview_matches: tuple[int, ...] = ()  # master lines (0-based) whose message the Preview names
    original: str | None = None  # where the original message still is, e.g. "branches/x:12"
    notes: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    def to_json(self) -> dict[str, Any]:
        ref = self.reference
        return {
            "where": str(self.where),
            "kind": ref.kind,
            "bytes": [ref.start, ref.end],
            "tokens": ref.tokens,
            "preview": ref.preview,
            "master_path": ref.master_path,
            "tool_output": ref.tool_output,
            "status": self.status.value,
            "explanation": self.explanation,
            "evidence": {
                "master": self.master,
                "resolved_relative": self.resolved_relative,
                "lands_on_line": None if self.lands_on is None else self.lands_on + 1,
                "preview_matches_lines": [line + 1 for line in self.preview_matches],
                "original": self.original,
                "notes": list(self.notes),
            },
        }


def matches(reference: Reference, message: Message | LineProblem) -> bool:
    """Whether a message is the one a reference was made for, by its Preview and size."""
    if isinstance(message, LineProblem):
        return False
    return message.preview == reference.preview and size_agrees(reference, message)


def size_agrees(reference: Reference, message: Message) -> bool:
    """Whether the reference's token count is gptme's offline count of the message."""
    return reference.tokens == len(message.content) // 4


def verify(conversation: Conversation, found: Found) -> Verdict:
    ref = found.reference
    where = found.where
    resolved = conversation.resolve(ref.master_path, MASTER)
    if resolved is None:
        return Verdict(
            where,
            ref,
            Status.MISSING_FILE,
            f"the master log {ref.master_path} does not exist, and this directory has no"
            f" {MASTER} to resolve it to",
        )
    path, relative = resolved
    index = conversation.index_for(path)
    notes: list[str] = []
    if relative:
        notes.append(
            f"{ref.master_path} does not exist here: resolved relative to the conversation"
            f" directory, as {path}"
        )

    def verdict(status: Status, why: str, **more: Any) -> Verdict:
        if status is not Status.OK:
            original = find_original(conversation, ref, index)
            if original is not None:
                more.setdefault("original", original)
                why += f"; the original is still in {original}"
            rewrites = conversation.rewrites if index is conversation.master else []
            if rewrites:
                notes.append(
                    f"{MASTER} was rewritten by gptme: " + "; ".join(str(r) for r in rewrites)
                )
        return Verdict(
            where,
            ref,
            status,
            why,
            master=str(path),
            resolved_relative=relative,
            notes=tuple(notes),
            **more,
        )

    size, whole = index.size, index.size + index.partial
    if ref.end > size:  # beyond the complete lines
        if index.partial and ref.start <= size < ref.end:
            return verdict(
                Status.TORN,
                f"the range runs into the unfinished last line (from byte {size:,}): the file"
                f" has {whole:,} of its {ref.end:,} bytes, and gptme may still be writing",
                lands_on=index.line_at(ref.start),
            )
        return verdict(
            Status.REWRITTEN,
            f"the range runs past the end of {path.name}, which now ends at byte {whole:,}:"
            " the file was rewritten or truncated since the reference was made",
            lands_on=index.line_at(ref.start),
            preview_matches=preview_lines(conversation, ref, index),
        )
    first = index.line_at(ref.start)
    last = index.line_at(ref.end - 1)
    assert first is not None and last is not None
    first_start, first_end = index.bounds(first)
    if first_start != ref.start or index.bounds(last)[1] != ref.end:
        parts = []
        if first_start != ref.start:
            parts.append(
                f"it starts {ref.start - first_start:,} bytes into line {first + 1}"
                f" (bytes {first_start}-{first_end})"
            )
        last_start, last_end = index.bounds(last)
        if last_end != ref.end:
            parts.append(
                f"it ends {ref.end - last_start:,} bytes into line {last + 1}"
                f" (bytes {last_start}-{last_end})"
            )
        why = "the range is not a whole line: " + " and ".join(parts)
        matched = preview_lines(conversation, ref, index)
        if matched:
            why += (
                f"; the Preview names line {_lines(matched)}, which is a different message"
                if not _exact_match(ref, index, matched)
                else f"; the message it was made for is now line {_lines(matched)}"
            )
        return verdict(Status.MID_LINE, why, lands_on=first, preview_matches=matched)
    message = parse_line(index.read_line(first))
    same_first_line = isinstance(message, Message) and message.preview == ref.preview
    if not same_first_line:
        held = _describe(message)
        for distance in _around():
            neighbour = first + distance
            if 0 <= neighbour < index.lines and matches(
                ref, parse_line(index.read_line(neighbour))
            ):
                skipped = skipped_lines(index, min(first, neighbour))
                why = (
                    f"the range is line {first + 1}, which holds {held}; the message the Preview"
                    f" names is line {neighbour + 1}"
                )
                if skipped:
                    why += (
                        f" (gptme's index counted line(s) {_lines(skipped)}, which its reader"
                        " skips: "
                        + ", ".join(f"line {s + 1} at byte {index.bounds(s)[0]:,}" for s in skipped)
                        + ")"
                    )
                return verdict(Status.SHIFTED, why, lands_on=first, preview_matches=(neighbour,))
        return verdict(
            Status.REWRITTEN,
            f"line {first + 1} now holds {held}, not the message the reference was made for",
            lands_on=first,
            preview_matches=preview_lines(conversation, ref, index),
        )
    assert isinstance(message, Message)
    if not size_agrees(ref, message):
        counted = len(message.content) // 4
        edits = [r for r in conversation.rewrites if r.kind == "message_edit"]
        if edits and index is conversation.master:
            return verdict(
                Status.REWRITTEN,
                f"line {first + 1} has the first line the Preview names, but gptme's count of"
                f" it is {counted:,} tokens where the reference says {ref.tokens:,}, and gptme"
                " recorded an edit: its content changed",
                lands_on=first,
                preview_matches=(first,),
            )
        notes.append(
            f"the reference counts {ref.tokens:,} tokens where gptme's offline count gives"
            f" {counted:,}: counted with a tokenizer (no edit is recorded)"
        )
    if ref.tool_output is not None:
        saved = conversation.resolve(ref.tool_output, "tool-outputs")
        if saved is None:
            local = conversation.local_path(ref.tool_output, "tool-outputs")
            looked = f"{ref.tool_output} (the path recorded)"
            if local is not None and str(local) != ref.tool_output:
                looked += f" nor {local} (in this directory)"
            return verdict(
                Status.TOOL_OUTPUT_DIFFERS,
                f"the saved tool output is missing: it is not at {looked}",
                lands_on=first,
            )
        saved_path, saved_relative = saved
        if saved_relative:
            notes.append(f"the tool output was resolved relative to the directory: {saved_path}")
        difference = _first_difference(read_saved(saved_path), message.content.encode())
        if difference is not None:
            return verdict(
                Status.TOOL_OUTPUT_DIFFERS,
                f"the saved tool output {saved_path.name} differs from the master log's"
                f" message (line {first + 1}) from byte {difference:,} of its text on",
                lands_on=first,
            )
    return verdict(Status.OK, "", lands_on=first, preview_matches=(first,))


def verify_all(conversation: Conversation) -> list[Verdict]:
    return [verify(conversation, found) for found in conversation.references()]


@dataclass(frozen=True, slots=True)
class Recovery:
    """An original message, where it was read, and how far it can be trusted."""

    content: str | None
    message: Message | None
    source: str  # e.g. "conversation.jsonl:4 (bytes 1316-11760)"
    evidence: str
    verdict: Verdict | None = None


def recover(conversation: Conversation, found: Found) -> Recovery:
    """The original of a reference: from its range when it verifies, else from wherever it is
    still found (a branch, the saved tool output), else nothing, with the reason."""
    result = verify(conversation, found)
    ref = found.reference
    if result.ok or result.status is Status.TOOL_OUTPUT_DIFFERS:
        assert result.lands_on is not None and result.master is not None
        index = conversation.index_for(Path(result.master))
        message = parse_line(index.read_line(result.lands_on))
        assert isinstance(message, Message)
        evidence = "the range is exactly this line, and it is the message the Preview names"
        if result.status is Status.TOOL_OUTPUT_DIFFERS:
            evidence += f" (but: {result.explanation})"
        return Recovery(
            message.content,
            message,
            f"{index.name}:{result.lands_on + 1} (bytes {ref.start}-{ref.end})",
            evidence,
            result,
        )
    if result.original is not None:
        name, _, line = result.original.rpartition(":")
        if result.original.startswith("tool-outputs/"):
            saved = conversation.directory / result.original
            text = read_saved(saved).decode("utf-8", "replace")
            return Recovery(
                text,
                None,
                result.original,
                f"{result.explanation}: read from the tool output",
                result,
            )
        message = conversation.message(name, int(line) - 1)
        assert isinstance(message, Message)
        return Recovery(message.content, message, result.original, result.explanation, result)
    found_at = _named_line(conversation, result)
    if found_at is not None:
        index, at, message = found_at
        start, end = index.bounds(at)
        return Recovery(
            message.content,
            message,
            f"{index.name}:{at + 1} (bytes {start}-{end})",
            f"{result.explanation}: read from the line the Preview and the size name",
            result,
        )
    return Recovery(None, None, "", result.explanation, result)


def _named_line(
    conversation: Conversation, result: Verdict
) -> tuple[LineIndex, int, Message] | None:
    """The master line the verdict found the reference's message on (its Preview and gptme's
    count of its size agree: "the message it was made for is now line 7"), if any."""
    if result.master is None or not result.preview_matches:
        return None
    index = conversation.index_for(Path(result.master))
    for line in result.preview_matches:
        if 0 <= line < index.lines:
            message = parse_line(index.read_line(line))
            if isinstance(message, Message) and matches(result.reference, message):
                return index, line, message
    return None


def recover_range(conversation: Conversation, start: int, end: int) -> Recovery:
    """The message in bytes ``[start, end)`` of the master log, or why there is none."""
    index = conversation.master
    if start >= end or start < 0:
        raise BadRange(f"bytes {start}-{end} are empty")
    if end > index.size:
        raise BadRange(
            f"bytes {start}-{end} run past the indexed end of {MASTER} (byte {index.size:,})"
        )
    first, last = index.line_at(start), index.line_at(end - 1)
    assert first is not None and last is not None
    if index.bounds(first)[0] != start or index.bounds(last)[1] != end:
        a, b = index.bounds(first)
        raise BadRange(
            f"bytes {start}-{end} are not whole lines: line {first + 1} is bytes {a}-{b}"
            + (
                f", line {last + 1} is bytes {index.bounds(last)[0]}-{index.bounds(last)[1]}"
                if last != first
                else ""
            )
        )
    if first != last:
        raise BadRange(f"bytes {start}-{end} hold {last - first + 1} lines, not one message")
    message = parse_line(index.read_line(first))
    if isinstance(message, LineProblem):
        return Recovery(
            None, None, f"{MASTER}:{first + 1}", f"a {message.kind} line: {message.reason}"
        )
    return Recovery(
        message.content, message, f"{MASTER}:{first + 1} (bytes {start}-{end})", "exactly one line"
    )


# -- evidence ---------------------------------------------------------------------------------
def find_original(conversation: Conversation, ref: Reference, index: LineIndex) -> str | None:
    """Where the message a reference was made for still is: a branch line at the same bytes,
    else the saved tool output when it is that message."""
    for name in conversation.branches:
        other = conversation.index(name)
        line = other.line_at(ref.start)
        if line is None or other.bounds(line) != (ref.start, ref.end):
            continue
        if matches(ref, parse_line(other.read_line(line))):
            return str(Location(name, line))
    if ref.tool_output is not None:
        saved = conversation.resolve(ref.tool_output, "tool-outputs")
        if saved is not None:
            text = read_saved(saved[0]).decode("utf-8", "replace")
            if matches(ref, Message("system", text, None)):
                return str(saved[0].relative_to(conversation.directory))
    return None


def preview_lines(conversation: Conversation, ref: Reference, index: LineIndex) -> tuple[int, ...]:
    """The master lines (0-based) whose first line the Preview names: from the catalogue, and
    by reading the lines it does not cover yet."""
    if ref.preview is None:
        return ()
    cut = len(ref.preview) == PREVIEW_CHARS + 3 and ref.preview.endswith("...")
    found = conversation.catalogue.lines_starting(
        index.name, ref.preview[:PREVIEW_CHARS] if cut else ref.preview
    )
    for line, raw in index.each(conversation.catalogue.count(index.name), index.lines):
        message = parse_line(raw)
        if isinstance(message, Message) and message.preview == ref.preview:
            found.append(line)
    return tuple(found)


def skipped_lines(index: LineIndex, upto: int) -> list[int]:
    """Blank and malformed lines among the 1,000 lines up to line ``upto``."""
    return [
        line
        for line, raw in index.each(max(0, upto - 1_000), upto + 1)
        if isinstance(parse_line(raw), LineProblem)
    ]


def _exact_match(ref: Reference, index: LineIndex, lines: tuple[int, ...]) -> bool:
    return any(matches(ref, parse_line(index.read_line(line))) for line in lines)


def _around() -> list[int]:
    return [d for k in range(1, NEIGHBOURS + 1) for d in (k, -k)]


def _describe(message: Message | LineProblem) -> str:
    if isinstance(message, LineProblem):
        return f"a {message.kind} line ({message.reason})"
    first = message.first_line
    shown = first if len(first) <= 60 else first[:57] + "..."
    return f"a {message.role} message ({shown!r}, {len(message.content):,} characters)"


def _lines(lines: tuple[int, ...] | list[int]) -> str:
    return ", ".join(str(line + 1) for line in lines)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _first_difference(a: bytes, b: bytes) -> int | None:
    if a == b:
        return None
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


class Verifier:
    """Verdicts kept current as the directory changes: a reference is verified again when it is
    new, when it was not ok (an unfinished line may be finished now), when the master log was
    rewritten, or when its tool output changed; the rest are not read again.

    While no log was rewritten and no saved tool output touched, an update looks only at the
    references its views and branches gained (each one's list only grows at its end) and at
    those not ok; otherwise it walks them all (about 10 ms at 10,000)."""

    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation
        self.verdicts: dict[tuple[Location, int], Verdict] = {}
        self._seen: dict[str, tuple[int, int]] = {}  # log → (generation, references looked at)
        self._not_ok: dict[tuple[Location, int], Found] = {}

    def update(
        self, refreshes: list[Refresh] | None = None, touched: set[Path] | None = None
    ) -> list[Verdict]:
        """Verify what may have changed (everything when ``refreshes`` is None); the verdicts
        that did change. Nothing is looked at when no log gained a line and nothing was
        touched: a reference's verdict depends on nothing else."""
        return [v for part in self.updating(refreshes, touched) for v in part]

    def updating(
        self,
        refreshes: list[Refresh] | None = None,
        touched: set[Path] | None = None,
        batch: int | None = None,
    ) -> Iterator[list[Verdict]]:
        """:meth:`update` a ``batch`` of references at a time (all at once: None), yielding
        the verdicts each batch changed, so a caller can let go of its lock between batches.
        The conversation must not change until it is done."""
        quiet = refreshes is not None and not any(r.new_lines or r.rewritten for r in refreshes)
        if quiet and not touched and self.verdicts:
            return
        conversation = self.conversation
        names = conversation.views + conversation.branches
        lists = {name: conversation.references_of(name) for name in names}
        # A saved tool output changed (watchfiles names it): the references to it are checked.
        outputs = any("tool-outputs" in path.parts for path in touched or ())
        appended = (
            refreshes is not None
            and not outputs
            and not any(r.rewritten for r in refreshes)
            and set(lists) == set(self._seen)
            and all(self._seen[name][0] == generation for name, (generation, _) in lists.items())
        )
        self_seen = self._seen
        self._seen = {name: (generation, len(found)) for name, (generation, found) in lists.items()}
        if appended:
            new = [f for name, (_, found) in lists.items() for f in found[self_seen[name][1] :]]
            todo = [*self._not_ok.values(), *new]
            step = batch or max(1, len(todo))
            for start in range(0, len(todo), step):
                yield self._verify(todo[start : start + step])
            return
        # Every reference is looked at, a batch at a time (choosing which to verify again
        # costs too: 0.2 s for 10,000), then the verdicts of those gone are dropped.
        every = [found for _, found_list in lists.values() for found in found_list]
        again = self._selector(refreshes, touched)
        step = batch or max(1, len(every))
        for start in range(0, len(every), step):
            yield self._verify([f for f in every[start : start + step] if again(f)])
        present = {(found.where, found.reference.offset) for found in every}
        for key in set(self.verdicts) - present:
            del self.verdicts[key]
            self._not_ok.pop(key, None)

    def _verify(self, founds: list[Found]) -> list[Verdict]:
        changed: list[Verdict] = []
        for found in founds:
            key = (found.where, found.reference.offset)
            old = self.verdicts.get(key)
            new = verify(self.conversation, found)
            if old is None or (old.status, old.explanation) != (new.status, new.explanation):
                changed.append(new)
            self.verdicts[key] = new
            if new.ok:
                self._not_ok.pop(key, None)
            else:
                self._not_ok[key] = found
        return changed

    def _selector(
        self, refreshes: list[Refresh] | None, touched: set[Path] | None
    ) -> Callable[[Found], bool]:
        """Whether a reference is verified again when the logs did not only grow."""
        rewritten = any(r.rewritten and r.name == MASTER for r in refreshes or ())
        # An undo keeps the bytes before what it removed: an ok reference within them stays ok
        # (an edit gptme recorded may change a verdict that noted a token count: all again).
        edited = any("an edit" in r.reason for r in refreshes or ())
        kept = self.conversation.unchanged if rewritten and not edited else None
        master, masters = self.conversation.master, dict[str, bool]()

        def is_master(path: str) -> bool:  # the master log of this directory (asked once)
            if path not in masters:
                masters[path] = _same_file(Path(path), master.path)
            return masters[path]

        touched_names = {p.name for p in touched or ()}

        def again(found: Found) -> bool:
            old = self.verdicts.get((found.where, found.reference.offset))
            ref = found.reference
            return not (
                old is not None
                and old.ok
                and (
                    not rewritten
                    or (
                        kept is not None
                        and ref.end <= kept
                        and old.master is not None
                        and is_master(old.master)
                    )
                )
                and not (
                    touched_names
                    and ref.tool_output
                    and os.path.basename(ref.tool_output) in touched_names
                )
            )

        return again

    def counts(self, name: str | None = None) -> dict[str, int]:
        counts: dict[str, int] = {}
        for (where, _), verdict in self.verdicts.items():
            if name is None or where.name == name:
                counts[verdict.status.value] = counts.get(verdict.status.value, 0) + 1
        return counts

    def ordered(self) -> list[Verdict]:
        return [self.verdicts[key] for key in sorted(self.verdicts)]
