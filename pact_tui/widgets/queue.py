"""The proposal queue: every proposal of the document the reader may see, what each waits for,
and, beside the selected one, its diff, its reasons and its votes (``proposal_detail``).

Order: the open proposals first, oldest first (conflicts, then pending, then approved), then
the closed ones, newest first. The rows come straight from the document's indexes (``by_status``,
``by_author``, ``open_by_section``) and a row is built only when it is drawn (``QueueRows``), so
a queue of 100,000 proposals opens and filters in milliseconds.

A filter is words: ``status:pending`` (one of the statuses; several words: any of them),
``section:sec:risk`` (a section id, or a word of its title: ``engine.protocol.filters``, as in
every view), ``author:legal`` (the author's name),
``needs:me`` (what waits for a human: see ``needs_human``); a bare word matches a proposal's id,
author or section.

The detail shows a diff as hunks (``pact_tui.diffs``: each change with a few lines around it, at
most ``MAX_DIFF_LINES``), so a long section changed in one place draws the change only.

Keys act on the proposal under the cursor (``ProposalQueue.Act``): approve, reject, force-merge,
choose a conflict's side or its three-way result (settled by hand in an editor first:
``choose_command``), revert a merged one. The screen asks for the justification the record
keeps and runs the command as the custodian.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from rich.cells import cell_len, set_cell_size
from rich.console import Group, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.binding import BindingType
from textual.message import Message
from textual.reactive import var

from engine.protocol.filters import any_section_matches
from engine.visible import visible

from ..diffs import CONTEXT, DiffLine, Hunk, changed, hunks, without_separator
from ..keymap import bind
from ..text import plain
from ..themes import Palette
from ..types import DocShown
from .outline import countdown
from .rows import LazyRows, RowList

if TYPE_CHECKING:
    from engine.protocol.document import Document
    from engine.protocol.model import ConflictGroup, Proposal

QueueAction = Literal["approve", "reject", "force-merge", "choose", "revert"]
# The order of the queue: open first (what needs acting on), then closed.
OPEN_ORDER = ("Conflict", "Pending", "Approved")
CLOSED_ORDER = ("Objected", "Merged", "Rejected", "Withdrawn")
SHORT_ID = 6  # characters of a proposal's id in its row
TITLE_WIDTH = 24  # cells of a section's title in a row, at most (the whole one is in the detail)
PROGRESS_WIDTH = 14  # cells what a proposal waits for keeps in its row, at least


@dataclass(frozen=True, slots=True)
class QueueFilter:
    statuses: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    needs_me: bool = False
    words: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> QueueFilter:
        """The filter ``text`` says; a ``status:`` that is no status, a field without a value or
        a ``needs:`` other than ``me`` is an error (``ValueError``) naming it, so a typo does not
        show an empty queue."""
        from engine.protocol.model import STATUSES

        known = {s.lower(): s for s in STATUSES}
        parts: dict[str, list[str]] = {"status": [], "section": [], "author": [], "": []}
        needs = False
        for word in text.split():
            field, _, value = word.partition(":")
            field = field.lower()
            if field == "needs":
                if value.lower() != "me":
                    raise ValueError(f"needs:{value} (only needs:me is known)")
                needs = True
            elif field in parts and field and not value:
                raise ValueError(f"{field}: needs a value ({field}:…)")
            elif field == "status":
                if value.lower() not in known:
                    raise ValueError(f"no status {value!r} (one of {', '.join(STATUSES)})")
                parts["status"].append(known[value.lower()])
            elif field in parts and field:
                parts[field].append(value)
            else:
                parts[""].append(word.lower())
        return cls(
            tuple(parts["status"]),
            tuple(parts["section"]),
            tuple(parts["author"]),
            needs,
            tuple(parts[""]),
        )


def needs_human(doc: Document, proposal: Proposal) -> bool:
    """Whether a proposal waits for a human: an objected one (only a human's force-merge or
    rejection settles it, short of its author withdrawing it), or an open one that removes most
    of its section (the document's removal guard), under ``human-only``, in a conflict escalated
    to a human and not resolved, or on a section flagged for human review (its auto-merge is
    paused). One blocked by a salience-10 reviewer waits for that agent, not for a human, and
    one in its window or short of its quorum waits for the agents' votes."""
    from engine.protocol.model import OPEN_STATUSES

    if proposal.status == "Objected":
        return True
    if proposal.status not in OPEN_STATUSES:
        return False
    if proposal.policy == "human-only" or proposal.removes_most is not None:
        return True
    group = doc.conflicts.get(proposal.conflict) if proposal.conflict else None
    if group is not None and group.escalated_ms is not None and group.resolved is None:
        return True
    return doc.by_key[proposal.section].escalated is not None


def progress(doc: Document, proposal: Proposal, now_ms: int) -> tuple[str, str]:
    """What the proposal waits for, and how it reads (``dim``, ``warn``, ``alert``, ``good``):
    approvals of its fixed quorum, its objection window's countdown, or what blocks it."""
    from engine.protocol.model import OPEN_STATUSES

    status = proposal.status
    if status == "Merged":
        return f"merged v{proposal.merged_version}", "good"
    if status == "Objected":
        return "objected: waits for a human", "warn"
    if status not in OPEN_STATUSES:
        return status.lower(), "dim"
    group = doc.conflicts.get(proposal.conflict) if proposal.conflict else None
    if group is not None and group.resolved is None:
        escalated = " → human" if group.escalated_ms is not None else ""
        return f"conflict ({group.strategy}){escalated}", "alert"
    section = doc.by_key[proposal.section]
    if status == "Approved" and section.escalated is not None:
        # Its policy was met, but the section is flagged: it merges when a human resolves it.
        return f"approved, paused: {section.id} is escalated to a human", "alert"
    policy = proposal.policy
    if proposal.removes_most is not None:
        removed, lines, _ = proposal.removes_most
        return f"removes {removed} of {lines} lines: waits for a human", "warn"
    if policy == "human-only":
        return "waits for a human", "warn"
    if policy == "auto":
        return "auto", "dim"
    if policy == "objection-based":
        blocked = doc.blocked(proposal)
        if blocked is not None:
            return blocked if blocked.startswith("blocked") else f"paused: {blocked}", "alert"
        if proposal.merge_at_ms is None:
            return "window not started", "dim"
        return f"merges in {countdown(proposal.merge_at_ms, now_ms)}", "warn"
    approving, _ = doc.tally(proposal)
    quorum = len(proposal.quorum)
    if policy == "single":
        return f"{len(approving)}/1 approval", "dim"
    need = quorum // 2 + 1 if policy == "majority" else quorum
    return f"{len(approving)}/{need} of {quorum} ({policy})", "dim"


MERGED = "merged"  # the choice of a merge-both conflict's three-way result
# Lines that open, split and close an overlap in a three-way result (``=======`` is left out:
# it also underlines a Markdown heading).
MARKERS = ("<<<<<<<", "|||||||", ">>>>>>>")


def conflict_choices(group: ConflictGroup) -> list[str]:
    """What settles ``group``: one of its sides (a proposal id), or ``merged``, the three-way
    result of a ``merge-both`` as the custodian edits it."""
    sides = list(group.proposals)
    return [*sides, MERGED] if group.merged is not None else sides


def markers_in(text: str) -> int:
    """How many lines of ``text`` are merge markers (an overlap not settled yet)."""
    return sum(line.startswith(MARKERS) for line in text.splitlines())


def check_choice(group: ConflictGroup, choice: str, content: str | None = None) -> None:
    """A ``ValueError`` saying why ``choice`` cannot settle ``group``: it is not one of
    ``conflict_choices``, or it is the three-way result and that (``content``, as edited, or
    else as merged) still holds merge markers: put in the section, they would publish all
    three versions of each overlap."""
    choices = conflict_choices(group)
    if choice not in choices:
        raise ValueError(f"{choice!r} is not one of {', '.join(choices)}")
    text = content if content is not None else group.merged
    if choice == MERGED and text is not None and markers_in(text):
        raise ValueError(
            f"the three-way result still holds {markers_in(text)} merge marker line(s)"
            " (<<<<<<<, |||||||, >>>>>>>): settle each overlap, or choose a side"
        )


def choose_command(
    section_id: str, group: ConflictGroup, choice: str, why: str, content: str | None = None
) -> dict[str, Any]:
    """The ``resolve`` command settling ``group`` with ``choice`` (``check_choice`` first): a
    side is merged and the other sides are rejected; the three-way result (``content``, as the
    custodian edited it) is put in the section, with ``override`` so that the sides (and any
    other open proposal there) are rejected and the conflict closes."""
    choice = choice.strip()
    check_choice(group, choice, content)
    command: dict[str, Any] = {
        "op": "resolve",
        "sectionId": section_id,
        "decision": f"chose {choice}",
        "justification": why,
        "override": choice == MERGED,
    }
    if choice == MERGED:
        command["content"] = content if content is not None else group.merged
    else:
        command["proposalId"] = choice
    return command


@dataclass(frozen=True, slots=True)
class QueueRow:
    key: str  # the proposal's id
    status: str
    section_id: str
    section_title: str
    author: str  # its kind and name: "agent legal", "human carol"
    summary: str
    progress: str
    tone: str  # how the progress reads: dim, warn, alert, good
    stale: bool
    conflict: bool
    created_ms: int


def queue_row(doc: Document, proposal: Proposal, now_ms: int) -> QueueRow:
    from engine.protocol.model import who

    text, tone = progress(doc, proposal, now_ms)
    section = doc.by_key[proposal.section]
    return QueueRow(
        key=proposal.id,
        status=proposal.status,
        section_id=section.id,
        section_title=section.title or section.id,
        author=who(proposal.author_name, proposal.author_kind),
        summary=proposal.summary or "",
        progress=text,
        tone=tone,
        stale=proposal.stale,
        conflict=proposal.conflict is not None,
        created_ms=proposal.created_ms,
    )


class QueueRows(LazyRows[QueueRow]):
    """The queue's rows as proposal ids, each row made when it is first read."""

    def __init__(self, doc: Document, ids: list[str], now_ms: int) -> None:
        self.doc, self.ids, self.now_ms = doc, ids, now_ms
        self._made: dict[int, QueueRow] = {}
        self._lines: dict[str, int] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def make(self, index: int) -> QueueRow:
        row = self._made.get(index)
        if row is None:
            row = self._made[index] = queue_row(
                self.doc, self.doc.proposals[self.ids[index]], self.now_ms
            )
        return row

    def line_of(self, key: str) -> int | None:
        if self._lines is None:
            self._lines = {pid: line for line, pid in enumerate(self.ids)}
        return self._lines.get(key)


def queue_ids(doc: Document, reader: Any, wanted: QueueFilter) -> list[str]:
    """The ids of the proposals ``reader`` may see that ``wanted`` keeps, in queue order."""
    from engine.protocol.barriers import reads

    statuses = wanted.statuses or (*OPEN_ORDER, *CLOSED_ORDER)
    if wanted.needs_me:
        statuses = tuple(s for s in statuses if s in OPEN_ORDER or s == "Objected")
    ids: list[str] = []
    for status in (*OPEN_ORDER, *CLOSED_ORDER):
        if status in statuses:
            listed = list(doc.by_status.get(status, {}))
            ids.extend(listed if status in OPEN_ORDER else reversed(listed))
    proposals = doc.proposals
    if wanted.authors:
        names = {a.lower() for a in wanted.authors}
        theirs = {  # each author's proposals, from the index by author
            pid
            for written in doc.by_author.values()
            if written and proposals[written[0]].author_name.lower() in names
            for pid in written
        }
        ids = [pid for pid in ids if pid in theirs]
    if wanted.sections:
        keys = {s.key for s in doc.sections if any_section_matches(wanted.sections, s.id, s.title)}
        ids = [pid for pid in ids if proposals[pid].section in keys]
    if wanted.needs_me:
        ids = [pid for pid in ids if needs_human(doc, proposals[pid])]
    if reader is not None or doc.barred:
        hidden = {s.key for s in doc.sections if not reads(doc, reader, s)}
        if hidden:
            ids = [pid for pid in ids if proposals[pid].section not in hidden]
    for word in wanted.words:
        ids = [pid for pid in ids if _mentions(doc, proposals[pid], word)]
    return ids


def _mentions(doc: Document, proposal: Proposal, word: str) -> bool:
    section = doc.by_key[proposal.section].id
    return any(word in text.lower() for text in (proposal.id, proposal.author_name, section))


def short_id(proposal_id: str) -> str:
    """The end of a proposal's id, as a row shows it (a bare filter word finds it)."""
    return visible(proposal_id[-SHORT_ID:]).rjust(SHORT_ID)


class ProposalQueue(RowList[DocShown, QueueRow]):
    """One line per proposal: status, the end of its id, its section's title, author, summary;
    what it waits for on the right, with ``stale`` and ``⚔`` (in a conflict) marks."""

    DEFAULT_CSS = """
    ProposalQueue { border: round $panel; border-title-color: $text-muted; }
    ProposalQueue:focus { border: round $accent; }
    ProposalQueue > .rows--cursor { background: $accent 40%; }
    ProposalQueue > .rows--cursor-blurred { background: $accent 20%; }
    ProposalQueue > .rows--dim { color: $text-muted; }
    ProposalQueue > .rows--warn { color: $warning; }
    ProposalQueue > .rows--alert { color: $error; text-style: bold; }
    ProposalQueue > .rows--good { color: $success; }
    """
    BORDER_TITLE: ClassVar[str] = "proposals"
    BINDINGS: ClassVar[list[BindingType]] = [
        bind("approve", "act('approve')", "Approve", tooltip="approve: it merges (say why)"),
        bind("reject", "act('reject')", "Reject", tooltip="reject it, with a reason"),
        bind("force-merge", "act('force-merge')", "Force", tooltip="force-merge it, with a reason"),
        bind(
            "choose", "act('choose')", "Choose", tooltip="settle its conflict: a side or the merge"
        ),
        bind("revert", "act('revert')", "Revert", tooltip="revert a merged proposal"),
        bind("filter", "ask_filter", "Filter", tooltip="status:, section:, author:, needs:me"),
    ]

    queue_filter: var[str] = var("")
    """What the rows are filtered by (bound to the screen's)."""

    class Act(Message):
        """The user asked for ``action`` on the proposal ``row``."""

        def __init__(
            self,
            queue: ProposalQueue,
            action: QueueAction,
            row: QueueRow,
            held: QueueRow | None = None,
        ) -> None:
            super().__init__()
            self.queue = queue
            self.action = action
            self.row = row  # under the cursor now
            self.held = held  # the row highlighted, as it was then (``RowList.held``)

        @property
        def control(self) -> ProposalQueue:
            return self.queue

    class FilterAsked(Message):
        """The user wants to change the filter."""

    def rows_of(self, shown: DocShown) -> Sequence[QueueRow]:
        try:
            wanted = QueueFilter.parse(self.queue_filter)
        except ValueError:
            wanted = QueueFilter()  # the screen refused it already; show everything
        return QueueRows(shown.doc, queue_ids(shown.doc, shown.reader, wanted), shown.now_ms)

    def line_of(self, key: str) -> int | None:
        rows = self.rows
        return rows.line_of(key) if isinstance(rows, QueueRows) else super().line_of(key)

    def watch_queue_filter(self) -> None:
        self.held = None  # the user filtered: the row under the cursor now is the one seen
        self.refill()

    def refill(self) -> None:
        super().refill()
        wanted = f" · {self.queue_filter}" if self.queue_filter else ""
        self.border_title = plain(f"proposals ({len(self.rows):,}){wanted}")

    def order(self) -> list[str]:
        """The proposals' ids, in the order of the rows."""
        rows = self.rows
        return list(rows.ids) if isinstance(rows, QueueRows) else [row.key for row in rows]

    def go_on_from(self, decided: str, order: Sequence[str]) -> None:
        """After a decision on ``decided``: the cursor goes to the open proposal that came after
        it in ``order`` (the rows when the decision was asked for), else to the one before it;
        it stays where it is if no other is open."""
        shown = self.shown
        if shown is None:
            return
        proposals = shown.doc.proposals
        at = order.index(decided) if decided in order else len(order)
        for key in (*order[at + 1 :], *reversed(order[:at])):
            proposal = proposals.get(key)
            if proposal is None or proposal.status not in OPEN_ORDER:
                continue
            line = self.line_of(key)
            if line is not None:
                self.cursor_line = line
                return

    def action_act(self, action: Any) -> None:
        row = self.current_row
        if row is not None:
            self.post_message(self.Act(self, action, row, self.held))

    def action_ask_filter(self) -> None:
        self.post_message(self.FilterAsked())

    def render_row(self, row: QueueRow, width: int) -> list[Segment]:
        tones = {t: self.style_of(f"rows--{t}") for t in ("dim", "warn", "alert", "good")}
        right: list[tuple[str, Style | None]] = []
        if row.stale:
            right.append((" stale", tones["warn"]))
        if row.conflict:
            right.append((" ⚔", tones["alert"]))
        head = f"{row.status[:8]:<9}{short_id(row.key)} "
        title = visible(row.section_title)
        if cell_len(title) > TITLE_WIDTH:
            title = set_cell_size(title, TITLE_WIDTH - 1) + "…"
        body = f"{title} · {visible(row.author)} · {visible(row.summary)}"
        # What it waits for gives way before the section, author and summary: it keeps at least
        # PROGRESS_WIDTH cells, and more only where the body leaves room.
        room = max(1, width - cell_len(head) - 1)
        marks = sum(cell_len(t) for t, _ in right)
        said = f" {visible(row.progress)}"
        most = max(PROGRESS_WIDTH, room - marks - cell_len(body))
        if cell_len(said) > most:
            said = set_cell_size(said, most - 1) + "…"
        right.append((said, tones.get(row.tone)))
        right_width = sum(cell_len(t) for t, _ in right)
        room = max(1, room - right_width)
        body = set_cell_size(body, room).rstrip()
        return [
            Segment(head, tones["good"] if row.status == "Merged" else tones["dim"]),
            Segment(body),
            Segment(" " * max(1, width - cell_len(head) - cell_len(body) - right_width)),
            *(Segment(t, s) for t, s in right),
        ]


# -- the selected proposal -----------------------------------------------------------------------
MAX_DIFF_LINES = 400  # lines of one diff drawn in the detail pane; the rest are counted


def _diff_text(lines: Sequence[DiffLine], palette: Palette) -> Text:
    text = Text()
    for line in lines:
        sign, style, strong = {
            "same": ("  ", "dim", "dim"),
            "removed": ("- ", palette.removed, f"bold reverse {palette.removed}"),
            "added": ("+ ", palette.added, f"bold reverse {palette.added}"),
        }[line.tag]
        text.append(sign, style)
        for piece, differs in line.spans:
            text.append(visible(piece), strong if differs and line.tag != "same" else style)
        text.append("\n")
    return text


def _more(left: int, what: str) -> Text:
    return Text(f"… {left:,} more {what} not shown\n", "dim italic")


def _unified_text(found: Sequence[Hunk], palette: Palette, limit: int) -> Text:
    text = Text()
    room = limit
    for number, hunk in enumerate(found):
        if room <= 0:
            rest = sum(len(h.lines) for h in found[number:])
            text.append_text(_more(rest, "lines of the diff"))
            break
        text.append(f"{hunk.header}\n", f"dim {palette.header}")
        text.append_text(_diff_text(hunk.lines[:room], palette))
        if len(hunk.lines) > room:
            rest = len(hunk.lines) - room + sum(len(h.lines) for h in found[number + 1 :])
            text.append_text(_more(rest, "lines of the diff"))
            break
        room -= len(hunk.lines)
    return text


def _side_table(
    found: Sequence[Hunk], titles: tuple[str, str], palette: Palette, limit: int
) -> Table:
    table = Table(expand=True, show_edge=False, pad_edge=False, box=None)
    for title in titles:  # a Text: a title is not markup
        table.add_column(Text(visible(title)), ratio=1, overflow="fold")
    room = limit
    for number, hunk in enumerate(found):
        if room <= 0:
            table.add_row(_more(sum(len(h.rows) for h in found[number:]), "rows"), "")
            break
        old, _, new = hunk.header.removeprefix("@@ ").removesuffix(" @@").partition(" ")
        header = f"dim {palette.header}"
        table.add_row(Text(f"@@ {old}", header), Text(f"{new} @@", header))
        for row in hunk.rows[:room]:
            cells = []
            for line in (row.left, row.right):
                cell = _diff_text([line], palette) if line is not None else Text("")
                cell.rstrip()
                cells.append(cell)
            table.add_row(*cells)
        if len(hunk.rows) > room:
            rest = len(hunk.rows) - room + sum(len(h.rows) for h in found[number + 1 :])
            table.add_row(_more(rest, "rows"), "")
            break
        room -= len(hunk.rows)
    return table


def diff_renderable(
    base: str,
    proposed: str,
    side: bool,
    titles: tuple[str, str],
    palette: Palette,
    limit: int = MAX_DIFF_LINES,
) -> RenderableType:
    """``proposed`` against ``base`` as hunks (each change with a few lines around it):
    unified (-/+ lines) or side by side, the changed words marked; at most ``limit`` lines,
    the rest counted."""
    found = hunks(base, proposed)
    if not found:
        same = base == proposed
        return Text("  (no change)\n" if same else "  (only the line endings differ)\n", "dim")
    if side:
        return _side_table(found, titles, palette, limit)
    return _unified_text(found, palette, limit)


def overlap_spans(lines: Sequence[str]) -> list[tuple[int, int]]:
    """The (first, last) line of each overlapping hunk of a three-way merge's result: from its
    ``<<<<<<<`` marker to its ``>>>>>>>`` (``engine.protocol.merge.merge_three`` writes them, on
    lines of their own, around what merge3 found both sides changed differently)."""
    spans: list[tuple[int, int]] = []
    start: int | None = None
    for number, line in enumerate(lines):
        if line.startswith("<<<<<<<") and start is None:
            start = number
        elif line.startswith(">>>>>>>") and start is not None:
            spans.append((start, number))
            start = None
    return spans


def merged_text(merged: str, palette: Palette, limit: int = MAX_DIFF_LINES) -> Text:
    """A three-way merge's result, each overlapping hunk (markers and all three versions)
    marked ``⚠``/``│``. A long result shows its overlaps with ``CONTEXT`` lines around them."""
    lines = merged.splitlines()
    spans = overlap_spans(lines)
    inside: set[int] = set()
    for first, last in spans:
        inside.update(range(first, last + 1))
    if len(lines) <= limit:
        shown = list(range(len(lines)))
    elif spans:
        near = {n for a, z in spans for n in range(a - CONTEXT, z + CONTEXT + 1)}
        shown = sorted(n for n in near if 0 <= n < len(lines))
    else:
        shown = list(range(limit))
    text = Text()
    previous = -1
    for count, number in enumerate(shown):
        if count >= limit:
            text.append_text(_more(len(shown) - count, "lines of the result"))
            return text
        if number > previous + 1:
            text.append(f"  ⋯ {number - previous - 1:,} lines\n", "dim")
        previous = number
        line = lines[number]
        marker = number in inside and line.startswith(("<<<<<<<", "|||||||", "=======", ">>>>>>>"))
        if marker:
            text.append(f"⚠ {visible(line)}\n", f"bold {palette.warn}")
        elif number in inside:
            text.append(f"│ {visible(line)}\n", palette.warn)
        else:
            text.append(f"  {visible(line)}\n")
    if previous < len(lines) - 1 and shown:
        text.append(f"  ⋯ {len(lines) - previous - 1:,} lines\n", "dim")
    return text


def _counts(base: str, proposed: str) -> str:
    """The lines a proposal removes and adds (its content and its base's, as sections: see
    ``without_separator``)."""
    base, proposed = without_separator(base), without_separator(proposed)
    removed, added = changed([line for hunk in hunks(base, proposed) for line in hunk.lines])
    return f"-{removed} +{added} lines"


def proposal_detail(
    shown: DocShown, proposal_id: str | None, side: bool, palette: Palette = Palette()
) -> RenderableType:
    """What the custodian reads about a proposal: what it waits for, its summary and reasoning,
    its diff against its base, votes, override and links; for one in a conflict, every side
    and the three-way result of a ``merge-both``. Every actor is named with its kind."""
    from engine.protocol.barriers import reads
    from engine.protocol.model import who
    from engine.protocol.names import HUMAN_PREFIX

    from .comments import comments_text

    doc = shown.doc
    proposal = doc.proposals.get(proposal_id) if proposal_id is not None else None
    if proposal is None or not reads(doc, shown.reader, doc.by_key[proposal.section]):
        return Text("No proposal selected.", style="dim")
    section = doc.by_key[proposal.section]
    waits, _ = progress(doc, proposal, shown.now_ms)
    head = Text()
    head.append(f"{proposal.id}\n", "bold")
    head.append(
        f"{proposal.status} · {visible(section.title)} ({visible(section.id)},"
        f" base v{proposal.base_version},"
        f" now v{section.version}) · by {visible(who(proposal.author_name, proposal.author_kind))}"
        f" · {visible(waits)}\n"
    )
    if proposal.stale:
        head.append("stale: the section changed under it\n", palette.warn)
    if proposal.summary:
        head.append(f"Summary: {visible(proposal.summary)}\n")
    if proposal.reasoning:
        head.append(f"Reasoning: {visible(proposal.reasoning, multiline=True)}\n")
    for label, votes in (
        ("approved", proposal.approvals),
        ("rejected", proposal.rejections),
        ("objected", proposal.objections),
    ):
        for agent_id, vote in votes.items():
            agent = doc.agents.get(agent_id)
            # A human's vote is filed under its actor id, human:<name>.
            name = agent.name if agent is not None else vote.by.removeprefix(HUMAN_PREFIX)
            voter = who(name, vote.kind)
            why = f": {visible(vote.reason)}" if vote.reason else ""
            when = f"{countdown(shown.now_ms, vote.at_ms)} ago"
            head.append(f"  {label} by {visible(voter)} {when}{why}\n", "dim")
    if proposal.dismissed:
        head.append(f"  {proposal.dismissed} approval(s) dismissed (the section changed)\n", "dim")
    if proposal.reason:
        head.append(f"Reason: {visible(proposal.reason)}\n")
    if proposal.override is not None:
        o = proposal.override
        head.append(f"Override by {visible(who(o.by, o.kind))}: {visible(o.why)}\n", palette.warn)
    for label, ids in (
        ("supersedes", proposal.supersedes),
        ("reverts", (proposal.reverts,) if proposal.reverts else ()),
        ("reverted by", (proposal.reverted_by,) if proposal.reverted_by else ()),
    ):
        if ids:
            head.append(f"{label} {', '.join(ids)}\n", "dim")
    head.rstrip()
    parts: list[RenderableType] = [head]
    said = comments_text(shown, proposal=proposal.id)
    if said:
        said.rstrip()
        parts.append(Text("\n").append_text(said))
    group = doc.conflicts.get(proposal.conflict) if proposal.conflict else None
    if group is None:
        counts = _counts(proposal.base_content, proposal.content)
        parts.append(Text(f"\nDiff against its base ({counts}):", "bold"))
        parts.append(
            diff_renderable(
                without_separator(proposal.base_content),
                without_separator(proposal.content),
                side,
                ("base", "proposed"),
                palette,
            )
        )
        return Group(*parts)
    state = group.resolved or ("escalated to a human" if group.escalated_ms else "open")
    parts.append(
        Text(
            f"\nConflict {group.id} ({group.strategy}, {state}): {len(group.proposals)} sides",
            "bold",
        )
    )
    for pid in group.proposals:
        side_of = doc.proposals.get(pid)
        if side_of is None:
            continue
        mark = "▶ " if pid == proposal.id else "  "
        parts.append(
            Text(
                f"\n{mark}{pid} by {visible(who(side_of.author_name, side_of.author_kind))}"
                f" ({side_of.status},"
                f" {_counts(group.base, side_of.content)})"
                f"{' · chosen' if group.winner == pid else ''}",
                "bold" if pid == proposal.id else "",
            )
        )
        base, content = without_separator(group.base), without_separator(side_of.content)
        parts.append(diff_renderable(base, content, side, ("base", pid), palette))
    if group.merged is not None:
        overlaps = f"{group.overlaps} overlapping hunk(s)" if group.overlaps else "clean"
        settle = " (c, then merged: settle it by hand)" if group.resolved is None else ""
        parts.append(Text(f"\nThree-way result ({overlaps}){settle}:", "bold"))
        parts.append(merged_text(group.merged, palette))
    return Group(*parts)
