"""The escalation inbox: what waits for a human, oldest first. Open ask-human questions (with
the countdown to their timeout), sections an agent flagged for review, conflicts escalated
to a human, open comments addressed to a human (``engine.protocol.mentions``: ``@human``,
``@human:NAME``), and proposals only a human may settle (objected ones, and those that remove
most of their section: the document's removal guard); beside the selected one, its escalation
briefing (``briefing_text``).

The keys act on the row under the cursor: the list says which action was asked for with
``EscalationInbox.Act``; the screen asks what the command needs and runs it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import BindingType
from textual.message import Message

from engine.visible import visible

from ..keymap import bind
from ..text import plain
from ..types import DocShown
from .comments import comment_head
from .outline import countdown
from .rows import RowList

if TYPE_CHECKING:
    from engine.protocol.document import Document
    from engine.protocol.model import Agent, Proposal

InboxKind = Literal["question", "flag", "conflict", "comment", "proposal"]
InboxAction = Literal["respond", "resolve", "dismiss"]


@dataclass(frozen=True, slots=True)
class InboxRow:
    key: str  # "<kind>:<ref>": "question:<id>", "flag:<section id>", "proposal:<id>", …
    kind: InboxKind
    ref: str  # the query's, conflict group's, comment's or proposal's id, or the section's
    since_ms: int  # when it was asked, flagged or escalated: the inbox is oldest first
    section_id: str | None
    text: str  # the question, the flag's reason, or what the conflict is about
    by: str  # who asked or flagged, with its kind: "agent legal", "human carol", "system"
    due_ms: int | None = None  # a question's timeout
    closed: str | None = None  # history: how it was settled ("answered by human ann: yes", …)


def inbox_rows(doc: Document, reader: Agent | None) -> list[InboxRow]:
    """What waits for a human on ``doc``, as ``reader`` may see it, oldest first."""
    from engine.protocol.mentions import addressed_to_human
    from engine.protocol.model import who
    from engine.protocol.views import comment_author

    def readable(key: int | None) -> bool:
        return _readable(doc, reader, key)

    def name_of(agent_id: str) -> str:
        """Who asked: only a joined agent may (``ask-human``), registered by its join."""
        agent = doc.agents.get(agent_id)
        return who(agent.name, "AiAgent") if agent is not None else agent_id

    rows: list[InboxRow] = []
    for query in doc.queries.values():
        if query.status == "open" and readable(query.section):
            on = doc.by_key[query.section].id if query.section is not None else None
            rows.append(
                InboxRow(
                    f"question:{query.id}",
                    "question",
                    query.id,
                    query.asked_ms,
                    on,
                    query.question,
                    name_of(query.author),
                    query.due_ms,
                )
            )
    for section in doc.sections:
        flag = section.escalated
        if flag is not None and readable(section.key):
            rows.append(
                InboxRow(
                    f"flag:{section.id}",
                    "flag",
                    section.id,
                    flag.at_ms,
                    section.id,
                    flag.why,
                    who(flag.by, flag.kind),
                )
            )
    for group in doc.conflicts.values():
        if group.escalated_ms is not None and group.resolved is None and readable(group.section):
            section_id = doc.by_key[group.section].id
            sides = [doc.proposals[p] for p in group.proposals if p in doc.proposals]
            authors = ", ".join(who(p.author_name, p.author_kind) for p in sides)
            rows.append(
                InboxRow(
                    f"conflict:{group.id}",
                    "conflict",
                    group.id,
                    group.escalated_ms,
                    section_id,
                    f"{len(group.proposals)} proposals conflict ({group.strategy}): {authors}",
                    "system",
                )
            )
    for comment in doc.comments.values():
        if (
            comment.resolved_by is None
            and addressed_to_human(comment.text)
            and readable(comment.section)
        ):
            name, kind = comment_author(doc, comment)
            rows.append(
                InboxRow(
                    f"comment:{comment.id}",
                    "comment",
                    comment.id,
                    comment.at_ms,
                    doc.by_key[comment.section].id,
                    comment.text,
                    who(name, kind),
                )
            )
    for proposal in guarded(doc):
        if readable(proposal.section):
            rows.append(
                InboxRow(
                    f"proposal:{proposal.id}",
                    "proposal",
                    proposal.id,
                    proposal.closed_ms or proposal.created_ms,
                    doc.by_key[proposal.section].id,
                    _why_guarded(proposal),
                    who(proposal.author_name, proposal.author_kind),
                )
            )
    rows.sort(key=lambda row: (row.since_ms, row.key))
    return rows


def _readable(doc: Document, reader: Agent | None, key: int | None) -> bool:
    """Whether ``reader`` may read section ``key`` (None: an item on no section)."""
    from engine.protocol.barriers import reads

    return key is None or reads(doc, reader, doc.by_key[key])


HISTORY_KEPT = 200  # the newest settled items the inbox keeps below the open ones


def history_rows(doc: Document, reader: Agent | None) -> list[InboxRow]:
    """What waited for a human and was settled, as ``reader`` may see it, oldest first (the
    newest ``HISTORY_KEPT``): questions answered, dismissed or timed out, escalated conflicts
    resolved, comments to a human resolved; each with how it was settled."""
    from engine.protocol.mentions import addressed_to_human
    from engine.protocol.model import who
    from engine.protocol.views import comment_author

    def readable(key: int | None) -> bool:
        return _readable(doc, reader, key)

    rows: list[InboxRow] = []
    for query in doc.queries.values():
        if query.status != "open" and readable(query.section):
            on = doc.by_key[query.section].id if query.section is not None else None
            author = doc.agents.get(query.author)
            if query.status == "answered":
                how = f"answered by human {query.responder}: {query.response}"
            elif query.status == "dismissed":
                how = "dismissed by a human"
            else:
                how = "timed out unanswered"
            asker = who(author.name, "AiAgent") if author is not None else query.author
            rows.append(
                InboxRow(
                    f"question:{query.id}",
                    "question",
                    query.id,
                    query.asked_ms,
                    on,
                    query.question,
                    asker,
                    closed=how,
                )
            )
    for group in doc.conflicts.values():
        if group.escalated_ms is not None and group.resolved is not None:
            if not readable(group.section):
                continue
            kept = f", kept …{group.winner[-8:]}" if group.winner else ""
            rows.append(
                InboxRow(
                    f"conflict:{group.id}",
                    "conflict",
                    group.id,
                    group.escalated_ms,
                    doc.by_key[group.section].id,
                    f"{len(group.proposals)} proposals conflicted ({group.strategy})",
                    "system",
                    closed=f"resolved ({group.resolved}{kept})",
                )
            )
    for comment in doc.comments.values():
        if (
            comment.resolved_by is not None
            and addressed_to_human(comment.text)
            and readable(comment.section)
        ):
            name, kind = comment_author(doc, comment)
            rows.append(
                InboxRow(
                    f"comment:{comment.id}",
                    "comment",
                    comment.id,
                    comment.at_ms,
                    doc.by_key[comment.section].id,
                    comment.text,
                    who(name, kind),
                    closed=f"resolved by {comment.resolved_by}",
                )
            )
    rows.sort(key=lambda row: (row.since_ms, row.key))
    return rows[-HISTORY_KEPT:]


def guarded(doc: Document) -> list[Proposal]:
    """The proposals only a human may settle that no other item of the inbox stands for:
    the objected ones, and the open ones that remove most of their section (the removal guard),
    but for those in a conflict (the conflict's item) or on a flagged section (the flag's)."""
    found = [doc.proposals[pid] for pid in doc.by_status.get("Objected", {})]
    for status in ("Pending", "Approved"):
        for pid in doc.by_status.get(status, {}):
            proposal = doc.proposals[pid]
            if (
                proposal.removes_most is not None
                and proposal.conflict is None
                and doc.by_key[proposal.section].escalated is None
            ):
                found.append(proposal)
    return found


def _why_guarded(proposal: Proposal) -> str:
    summary = f": {proposal.summary}" if proposal.summary else ""
    if proposal.status == "Objected":
        return f"objected{summary} ({proposal.reason or 'no reason given'})"
    removed, lines, _ = proposal.removes_most or (0, 0, 0)
    return f"removes {removed} of {lines} lines{summary}"


def open_items(doc: Document, reader: Agent | None = None) -> int:
    """How many things wait for a human: the header's badge."""
    return len(inbox_rows(doc, reader))


def briefing_text(shown: DocShown, row: InboxRow | None) -> Text:
    """The selected item and its escalation briefing (``engine.protocol.views.briefing``),
    through the reader's eyes: every text from the workspace passes through ``visible``."""
    from engine.protocol.barriers import reads
    from engine.protocol.model import who
    from engine.protocol.views import briefing

    text = Text()
    doc = shown.doc
    section = doc.by_id.get(row.section_id) if row is not None and row.section_id else None
    if (
        row is not None
        and row.section_id
        and (section is None or not reads(doc, shown.reader, section))
    ):
        row = None  # an item the screen kept from another reader's view (or another time)
    if row is None:
        text.append("Nothing waits for you here.", style="dim")
        return text
    now = shown.now_ms
    label = {
        "question": "Question",
        "flag": "Flagged section",
        "conflict": "Conflict",
        "comment": "Comment",
        "proposal": "Proposal (P: the queue; a, r, m there)",
    }[row.kind]
    text.append(f"{label}", style="bold")
    text.append(f" · by {visible(row.by)}\n")
    text.append(visible(row.text, multiline=True) + "\n")
    query = doc.queries.get(row.ref) if row.kind == "question" else None
    if query is not None:  # (a question kept from another time may not be asked yet)
        if query.context:
            text.append("context: ", style="dim")
            text.append(visible(query.context, multiline=True) + "\n")
        if row.due_ms is not None:
            text.append(f"times out in {countdown(row.due_ms, now)}\n", style="bold")
    if row.kind == "comment" and row.ref in doc.comments:
        text.append(f"{comment_head(shown, doc.comments[row.ref])}\n", style="dim")
        text.append("e replies on its section, R resolves it\n", style="dim")
    if section is None:
        return text
    found = briefing(doc, shown.reader, section)
    text.append(f"\nBriefing on {visible(found['sectionId'])}\n", style="bold underline")
    if found["escalated"]:
        flag = found["escalated"]
        by = who(flag["by"], flag["byKind"])
        text.append(f"flagged by {visible(by)}: {visible(flag['reason'])}\n")
    for intent in found["intents"]:
        text.append("intent ", style="dim")
        text.append(f"{visible(intent['agent'])}: {visible(intent['goal'])} ({intent['status']})\n")
    for constraint in found["constraints"]:
        text.append("constraint ", style="dim")
        by = f"{visible(constraint['author'])}: " if "author" in constraint else ""
        text.append(f"{by}{visible(constraint['boundary'])}")
        if constraint.get("category"):
            text.append(f" [{visible(constraint['category'])}]", style="dim")
        text.append("\n")
        if constraint.get("reasoning"):
            text.append(f"  why: {visible(constraint['reasoning'])}\n", style="dim")
    for question in found["questions"]:
        text.append("question ", style="dim")
        text.append(f"{visible(question['question'])} ({question['status']})\n")
    for conflict in found["conflicts"]:
        text.append("conflict ", style="dim")
        text.append(
            f"{len(conflict['proposals'])} proposals, {conflict['overlaps']} overlapping hunks\n"
        )
    for comment in found["comments"]:
        text.append("comment ", style="dim")
        author = who(comment["author"], comment["authorKind"])
        text.append(f"{visible(author)}: {visible(comment['text'])}\n")
    if found["drafter"]:
        text.append(f"invited to draft: {visible(found['drafter'])}\n")
    return text


class EscalationInbox(RowList[DocShown, InboxRow]):
    """One line per waiting item: a mark, its section, its text, its age or countdown."""

    DEFAULT_CSS = """
    EscalationInbox { border: round $panel; border-title-color: $text-muted; }
    EscalationInbox:focus { border: round $accent; }
    EscalationInbox > .rows--cursor { background: $accent 40%; }
    EscalationInbox > .rows--cursor-blurred { background: $accent 20%; }
    EscalationInbox > .rows--dim { color: $text-muted; }
    EscalationInbox > .rows--warn { color: $warning; }
    EscalationInbox > .rows--alert { color: $error; text-style: bold; }
    EscalationInbox > .rows--good { color: $success; }
    """
    BORDER_TITLE: ClassVar[str] = "escalation inbox"
    BINDINGS: ClassVar[list[BindingType]] = [
        bind(
            "respond", "act('respond')", "Respond", tooltip="answer the question (a comment: reply)"
        ),
        bind(
            "resolve",
            "act('resolve')",
            "Resolve",
            tooltip="a binding decision on the section (a comment: resolve it)",
        ),
        bind("dismiss", "act('dismiss')", "Dismiss", tooltip="dismiss the question"),
    ]

    class Act(Message):
        """The user asked for ``action`` on ``row``."""

        def __init__(self, inbox: EscalationInbox, action: InboxAction, row: InboxRow) -> None:
            super().__init__()
            self.inbox = inbox
            self.action = action
            self.row = row

        @property
        def control(self) -> EscalationInbox:
            return self.inbox

    def rows_of(self, shown: DocShown) -> Sequence[InboxRow]:
        """What waits, oldest first; below it, greyed, what was settled, with how."""
        return [*inbox_rows(shown.doc, shown.reader), *history_rows(shown.doc, shown.reader)]

    def show_now(self) -> None:
        super().show_now()
        settled = sum(row.closed is not None for row in self.rows)
        waiting = len(self.rows) - settled
        self.border_title = plain(f"escalation inbox ({waiting}) · {settled} settled")

    def action_act(self, action: Any) -> None:
        row = self.current_row
        if row is not None:
            self.post_message(self.Act(self, action, row))

    def render_row(self, row: InboxRow, width: int) -> list[Segment]:
        now = self.shown.now_ms if self.shown is not None else 0
        dim, warn, alert = (self.style_of(f"rows--{c}") for c in ("dim", "warn", "alert"))
        mark, mark_style = {
            "question": ("? ", warn),
            "flag": ("⚑ ", alert),
            "conflict": ("⚔ ", alert),
            "comment": ("✎ ", warn),
            "proposal": ("± ", warn),
        }[row.kind]
        right: list[tuple[str, Style | None]] = []
        if row.due_ms is not None:
            right.append((f" ⏳{countdown(row.due_ms, now)}", warn))
        else:
            right.append((f" {countdown(now, row.since_ms)} ago", dim))
        where = f"{visible(row.section_id)} " if row.section_id else ""
        if row.closed is not None:  # settled: greyed, how first (the pane beside has the rest)
            body = set_cell_size(
                f"{where}{visible(row.closed)} · {visible(row.text)}",
                max(1, width - cell_len(mark) - 1),
            ).rstrip()
            return [Segment("✓ ", dim), Segment(body, dim)]
        right_width = sum(cell_len(t) for t, _ in right)
        body_width = max(1, width - right_width - cell_len(mark) - 1)
        body = set_cell_size(f"{where}{visible(row.text)}", body_width).rstrip()
        return [
            Segment(mark, mark_style),
            Segment(body),
            Segment(" " * max(1, width - cell_len(mark) - cell_len(body) - right_width)),
            *(Segment(t, s) for t, s in right),
        ]
