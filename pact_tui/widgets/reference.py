"""The master-log screen's detail: the line under the cursor and, when it holds a reference, the
verdict in words with its evidence, and what the model was shown beside the recovered original.

``ReferenceDetail`` is bound to the screen's ``subject`` (a ``LogSubject``) and draws only
that; long texts are cut to ``DETAIL_CHARS`` (``o`` reads the original whole, ``c`` copies it).
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.reactive import var
from textual.widgets import Static

from engine.masterlog.lines import LineProblem
from engine.masterlog.verify import Status
from engine.visible import visible

from ..types import LogSubject
from .loglines import short_name

DETAIL_CHARS = 3_000  # of each text beside the other


def cut(text: str, limit: int = DETAIL_CHARS) -> Text:
    shown = Text(visible(text[:limit], multiline=True))
    if len(text) > limit:
        shown.append(f"\n… {len(text) - limit:,} more characters (o reads it all)", style="dim")
    return shown


def describe(subject: LogSubject) -> RenderableType:
    inside = subject.directory.rstrip("/") + "/" if subject.directory else None

    def shown(text: str) -> str:
        """``text`` safe to draw, with this directory's paths relative to it."""
        return visible(text.replace(inside, "") if inside else text)

    where = f"{short_name(subject.log)}:{subject.line + 1}"
    message = subject.message
    if isinstance(message, LineProblem):
        return Group(
            Text(f"{where}: a {message.kind} line", style="bold"),
            Text(visible(message.reason)),
        )
    head = Text(visible(f"{where} · {message.role}"), style="bold")
    if message.timestamp:
        head.append(visible(f" · {message.timestamp}"), style="dim")
    head.append(f" · {len(message.content):,} characters", style="dim")
    verdict = subject.verdict
    if verdict is None:
        return Group(head, Text(""), cut(message.content))
    ref = verdict.reference
    count = len(subject.verdicts)
    parts: list[RenderableType] = [head]
    which = f"reference {subject.choice + 1} of {count} (Enter: next) · " if count > 1 else ""
    parts.append(Text(f"{which}{ref.kind} · {ref.tokens:,} tokens", style="dim"))
    status = Text(f" {verdict.status.value} ", style="bold reverse")
    status.stylize("green" if verdict.ok else "red")
    line = Text.assemble(
        status,
        " ",
        shown(verdict.explanation or "the range recovers the message the Preview names"),
    )
    parts.append(line)
    facts = [f"bytes {ref.start:,}-{ref.end:,} of {shown(verdict.master or ref.master_path)}"]
    if verdict.lands_on is not None:
        facts.append(f"lands on line {verdict.lands_on + 1}")
    if verdict.preview_matches:
        named = ", ".join(str(n + 1) for n in verdict.preview_matches[:5])
        facts.append(f"the Preview names line {named}")
    if verdict.resolved_relative:
        facts.append("resolved relative to this directory (written on another machine)")
    if verdict.original:
        facts.append(f"the original is still at {shown(verdict.original)}")
    parts.append(Text(" · ".join(facts), style="dim"))
    for note in verdict.notes:
        parts.append(Text(f"• {shown(note)}", style="dim"))
    recovery = subject.recovery
    table = Table(expand=True, box=None, padding=(0, 1), show_edge=False)
    table.add_column("what the model was shown", ratio=1, overflow="fold")
    source = shown(recovery.source) if recovery is not None and recovery.source else "nothing"
    table.add_column(f"the original ({source})", ratio=1, overflow="fold")
    shown_text = cut(f"{ref.summary}\n{ref.text}" if ref.summary else ref.text)
    if recovery is not None and recovery.content is not None:
        original = cut(recovery.content)
    else:
        why = recovery.evidence if recovery is not None else "not recovered"
        original = Text(shown(f"not recovered: {why}"), style="red")
    table.add_row(shown_text, original)
    parts.extend([Text(""), table])
    if verdict.status is not Status.OK and recovery is not None and recovery.content is not None:
        parts.append(
            Text(shown(f"recovered from {recovery.source}: {recovery.evidence}"), style="dim")
        )
    return Group(*parts)


class ReferenceDetail(Static):
    """What is under the cursor of the screen's lines, explained."""

    DEFAULT_CSS = """
    ReferenceDetail { padding: 0 1; }
    """

    subject: var[LogSubject | None] = var(None)
    """The line, and the reference chosen in it (bound to the screen's)."""

    def watch_subject(self, subject: LogSubject | None) -> None:
        self.update(describe(subject) if subject is not None else "")
