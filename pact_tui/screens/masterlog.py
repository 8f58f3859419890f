"""The master-log screen: a gptme conversation directory, its logs, every reference a compacted
view left into the master log, whether it still recovers the truth, and the original beside
what the model was shown.

The screen follows ``docs/screens.md``: its state is the reactives below; ``shown`` (a
``LogShown``) is derived from them and every list is bound to it; lists post messages back;
only the screen talks to the conversation (the app's ``LogSession``), and what takes long
(verifying every reference, cataloguing the lines for the search) runs in workers, a batch at
a time, while the lists draw what is on screen.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.reactive import var
from textual.widgets import ContentSwitcher, Input, Static
from textual.worker import get_current_worker

from engine.masterlog.catalogue import Hit
from engine.masterlog.conversation import MASTER
from engine.masterlog.errors import MasterLogError
from engine.masterlog.lines import LineProblem
from engine.visible import WITHOUT_ANY, visible

from ..keymap import bind
from ..logsession import LineRow, LogEntry, LogSession
from ..text import plain
from ..types import LogShown, LogSubject
from ..widgets.cursor import CursorPane
from ..widgets.footer import FittedFooter
from ..widgets.loglines import HitList, LogLines, LogList, short_name
from ..widgets.reference import ReferenceDetail
from ..widgets.rows import RowList
from ..widgets.status import LineBar, LogStatus
from .help import Legend
from .mode import ModeScreen

if TYPE_CHECKING:
    from engine.masterlog.index import Refresh
    from engine.masterlog.verify import Verdict

    from ..app import PactApp

SEARCH_LIMIT = 200  # hits listed
LEGEND = [
    ("✓ ✗", "a reference in this line verifies ok, or does not"),
    ("…", "a reference not verified yet (just opened)"),
    ("* name", "the view gptme has current (views/.current)"),
    ("(stub) ⌀", "gptme's Phase 0 stub: a stale tool output pruned, with no byte range"),
    ("ok", "the range is exactly one line: the message the Preview names"),
    ("shifted", "the range lands on a neighbour; both lines are named"),
    ("rewritten", "the bytes changed since the reference was made (undo, edit)"),
    ("mid-line", "the range does not start or end at a line's boundary"),
    ("torn", "the range runs into an unfinished last line"),
    ("missing-file", "the master log it names is not there, nor in this directory"),
    ("tool-output-differs", "the saved tool output is not what the master log holds"),
    ("highlighted lines", "in the master list: the chosen reference's byte range"),
]


class MasterLogScreen(ModeScreen):
    AUTO_FOCUS = "#messages"
    BINDINGS: ClassVar[list[BindingType]] = [
        bind("next", "next_problem", "Next problem", tooltip="the next reference that is not ok"),
        bind("previous", "previous_problem", "Prev problem", tooltip="the previous one not ok"),
        bind("search", "search", "Search", tooltip="search every log's messages (FTS5)"),
        bind("follow", "toggle_follow", "Follow", tooltip="keep the master log's end in view"),
        bind("copy", "copy_original", "Copy", tooltip="copy the recovered original"),
        bind("read", "read_original", "Read", tooltip="read the recovered original whole"),
        bind("go-to", "go_to_line", "Go to", tooltip="a line of the log shown, or bN: a byte"),
        bind(
            "jump",
            "to_context",
            "Context",
            show=False,
            tooltip="opened from a context (J on a reference item): the item made from this line",
        ),
        bind("next-pane", "app.focus_next", "Next list", show=False, tooltip="the next list, pane"),
        bind(
            "close",
            "close_search",
            "Close search",
            show=False,
            tooltip="back to the log; hides the banner of a rewrite",
        ),
    ]

    # -- state: what the user chose (or what arrived) -------------------------------------------
    log_name: var[str] = var("", init=False)
    """The log whose lines are listed: the master, a view or a branch."""
    line: var[int | None] = var(None, init=False)
    """The line under the cursor of that list."""
    choice: var[int] = var(0, init=False)
    """Which reference of that line is chosen (Enter moves to the next)."""
    revision: var[int] = var(0, init=False)
    """How many updates of the directory are applied (opening, verifying, following)."""
    following: var[bool] = var(False, init=False)
    """Whether the master list keeps its last line under the cursor as gptme appends."""
    catalogued: var[tuple[int, int]] = var((0, 0), init=False)
    """(lines catalogued for the search, lines): moved by the cataloguing worker."""

    # -- derived ----------------------------------------------------------------------------------
    shown: var[LogShown | None] = var(None, init=False)
    """What the lists draw: the conversation at ``revision``."""
    subject: var[LogSubject | None] = var(None, init=False)
    """The line under the cursor and its chosen reference, verified and recovered."""
    span: var[tuple[int, int] | None] = var(None, init=False)
    """The master lines the chosen reference's byte range covers."""
    hits: var[tuple[Hit, ...]] = var((), init=False)
    """What the search found."""
    status: var[LogStatus] = var(LogStatus, init=False)
    """What the status line says (``_show_status``: the conversation shown, how far verifying
    and cataloguing got, whether it follows)."""

    def __init__(
        self,
        session: LogSession | None = None,
        back: Callable[[str, int], bool] | None = None,
    ) -> None:
        """The app's conversation (``pact-tui DIR``), or ``session``: a reference item's
        conversation, opened from a context, which ``back`` goes to the item of (True: it found
        the item made from that log's line)."""
        super().__init__()
        self._session = session
        self._back = back

    def compose(self) -> Any:
        yield LineBar(id="log-status").data_bind(status=MasterLogScreen.status)
        yield Static(id="log-banner", markup=False)
        with Horizontal(id="log-body"):
            with Vertical(id="log-left"):
                yield LogList(id="logs").data_bind(
                    shown=MasterLogScreen.shown, chosen=MasterLogScreen.log_name
                )
                with ContentSwitcher(initial="messages", id="log-switch"):
                    yield LogLines(id="messages").data_bind(
                        shown=MasterLogScreen.shown, log_name=MasterLogScreen.log_name
                    )
                    yield HitList(id="hits").data_bind(
                        shown=MasterLogScreen.shown, hits=MasterLogScreen.hits
                    )
                yield LogLines(id="master").data_bind(
                    shown=MasterLogScreen.shown,
                    span=MasterLogScreen.span,
                    follow=MasterLogScreen.following,
                )
            with VerticalScroll(id="log-detail"):
                yield ReferenceDetail(id="reference").data_bind(subject=MasterLogScreen.subject)
        yield Input(
            placeholder='search every log (FTS5: words, "a phrase", prefix*); Enter finds',
            restrict=WITHOUT_ANY,
            id="log-search",
        )
        yield FittedFooter(compact=True)

    @property
    def session(self) -> LogSession:
        if self._session is not None:
            return self._session
        app: PactApp = self.app  # type: ignore[assignment]
        assert app.conversation is not None
        return app.conversation

    def on_mount(self) -> None:
        app: PactApp = self.app  # type: ignore[assignment]
        if self._session is None:  # the app follows its own conversation only
            app.conversation_changed.subscribe(self, self._on_changed)
        self.query_one("#log-search").display = False
        self.query_one("#log-banner").display = False
        if any(r.rewritten and r.name == MASTER for r in self.session.conversation.opened):
            self._show_rewrite()  # since the last look (this or another process)
        master = self.query_one("#master", LogLines)
        master.log_name = MASTER
        master.border_title = "master log (conversation.jsonl)"
        current = self.session.conversation.current_view
        self.log_name = current if current is not None else MASTER
        self.revision += 1
        # After the first frame: the verifier holds the session's lock while it works, and the
        # lists read their rows under it, so started here it would hold back the first paint.
        self.call_after_refresh(self.verify)

    # -- deriving what is shown -----------------------------------------------------------------
    def watch_revision(self) -> None:
        session = self.session
        self.shown = LogShown(session, self.revision, session.entries(), session.verified)

    def watch_shown(self, shown: LogShown | None) -> None:
        if shown is None:
            return
        self._show_subject()
        self._show_status()

    def watch_catalogued(self) -> None:
        self._show_status()

    def watch_following(self) -> None:
        self._show_status()

    def watch_choice(self) -> None:
        self._show_subject()

    _described: tuple[str, int] | None = None  # the line the detail pane described last

    def _show_subject(self) -> None:
        line, shown = self.line, self.shown
        if line is None or shown is None or line >= shown.lines.get(self.log_name, 0):
            self.subject = None
            self.span = None
            return
        session = self.session
        verdicts = tuple(session.verdicts_on(self.log_name, line))
        choice = min(self.choice, max(0, len(verdicts) - 1))
        recovery = None
        if verdicts:
            try:
                recovery = session.recover(verdicts[choice])
            except (MasterLogError, OSError) as error:
                self.notify(str(error), title="Recover", severity="error")
        try:
            message = session.message(self.log_name, line)
        except (MasterLogError, OSError):  # changed under us: the update is on its way
            self.subject = None
            return
        self.subject = LogSubject(
            self.log_name, line, message, verdicts, choice, recovery, str(session.directory)
        )
        if (self.log_name, line) != self._described:  # another line: read from its top
            self._described = (self.log_name, line)
            self.query_one("#log-detail", VerticalScroll).scroll_home(animate=False, immediate=True)
        self.span = self._span(verdicts[choice] if verdicts else None)

    def _span(self, verdict: Verdict | None) -> tuple[int, int] | None:
        """The master lines a reference's range covers, with the cursor on the first."""
        if verdict is None or verdict.master is None:
            return None
        session = self.session
        if not session.is_master(verdict.master):
            return None  # a master log of another directory
        ref = verdict.reference
        first = session.master_line_at(ref.start)
        last = session.master_line_at(max(ref.start, ref.end - 1))
        if first is None:
            return None
        if not self.following:
            self.query_one("#master", LogLines).cursor_line = first
        return first, last if last is not None else first

    def _show_status(self) -> None:
        shown = self.shown
        if shown is None:
            return
        master = next(e for e in shown.entries if e.name == MASTER)
        counts: dict[str, int] = {}
        for entry in shown.entries:
            for status, n in entry.counts:
                counts[status] = counts.get(status, 0) + n
        app: PactApp = self.app  # type: ignore[assignment]
        self.status = LogStatus(
            directory=self.session.directory.name,
            master_lines=master.lines,
            logs=len(shown.entries) - 1,
            verified=shown.verified,
            references=sum(counts.values()),
            ok=counts.get("ok", 0),
            catalogued=self.catalogued,
            following=self.following,
            next_key=app.key_for("next"),
        )

    # -- lists → state ------------------------------------------------------------------------
    # A Highlighted message says where a list's cursor was when it was sent; one from before
    # the screen moved the cursor itself (a jump: ``n``, a search hit) is stale, and acting on
    # it would move the cursor back.
    @on(RowList.Highlighted, "#logs")
    def _log_highlighted(self, event: RowList.Highlighted) -> None:
        entry: LogEntry | None = event.row
        if entry is not None and entry == event.rows.current_row and entry.name != self.log_name:
            self.log_name = entry.name

    @on(RowList.Highlighted, "#messages")
    def _line_highlighted(self, event: RowList.Highlighted) -> None:
        row: LineRow | None = event.row
        if row != event.rows.current_row:
            return
        # Line and choice change together, and the log may have changed with the line number
        # the same: set without watchers, and the subject derived once.
        self.set_reactive(MasterLogScreen.choice, 0)
        self.set_reactive(MasterLogScreen.line, row.line if row is not None else None)
        self._show_subject()

    @on(RowList.Selected, "#messages")
    def _line_selected(self, event: RowList.Selected) -> None:
        subject = self.subject
        if subject is not None and len(subject.verdicts) > 1:
            self.choice = (self.choice + 1) % len(subject.verdicts)

    @on(RowList.Selected, "#hits")
    def _hit_selected(self, event: RowList.Selected) -> None:
        hit: Hit = event.row
        self.go_to(hit.name, hit.line)

    def go_to(self, name: str, line: int, choice: int = 0) -> None:
        """Show line ``line`` of log ``name`` under the cursor, its reference ``choice`` chosen."""
        self.query_one("#log-switch", ContentSwitcher).current = "messages"
        messages = self.query_one("#messages", LogLines)
        if name != self.log_name:
            self.log_name = name
        messages.cursor_line = line
        self.set_reactive(MasterLogScreen.choice, choice)
        self.set_reactive(MasterLogScreen.line, line)
        self._show_subject()
        self.set_focus(messages)

    def action_go_to_line(self) -> None:
        """``:N`` a line of the log shown, ``:bN`` the master's line holding byte N."""
        from .prompt import PromptScreen

        name = self.log_name
        lines, size = self.session.lines(name), self.session.master_size()

        def problem(text: str) -> str | None:
            text = text.strip().lower()
            if text.startswith("b") and text[1:].isdigit():
                return None if int(text[1:]) < size else f"byte {text[1:]} is past {size:,}"
            if text.isdigit() and 1 <= int(text) <= lines:
                return None
            return f"{text!r}: give a line from 1 to {lines:,}, or bN for a byte (b0-b{size - 1})"

        def chosen(text: str | None) -> None:
            if text is None:
                return
            text = text.strip().lower()
            if text.startswith("b"):
                line = self.session.master_line_at(int(text[1:]))
                if line is not None:
                    self.go_to(MASTER, line)
            else:
                self.go_to(name, int(text) - 1)

        question = (
            f"Go to a line of {short_name(name)} (1-{lines:,}), or bN: the line of"
            f" {MASTER} holding byte N"
        )
        self.app.push_screen(PromptScreen(question, check=problem), chosen)

    def action_to_context(self) -> None:
        """Back to the context this screen was opened from, on the item made from the line
        under the cursor (a message of a view, or of the master log that a view's line is)."""
        line = self.line
        if self._back is None:
            self.notify(
                "opened on the conversation alone: J on a context's reference item opens it"
                " with its context",
                title="Context",
                severity="warning",
            )
            return
        if line is None:
            return
        if not self._back(self.log_name, line):
            self.notify(
                f"no item of the context shown was made from {self.log_name}:{line + 1}",
                title="Context",
                severity="warning",
            )
            return
        self.dismiss()

    # -- problems ---------------------------------------------------------------------------------
    def action_next_problem(self) -> None:
        self._walk(1)

    def action_previous_problem(self) -> None:
        self._walk(-1)

    def _walk(self, step: int) -> None:
        problems = self.session.problems()
        if not problems:
            said = "every reference is ok" if self.session.verified else "still verifying"
            self.notify(said, title="Problems", timeout=3)
            return
        here = (self.log_name, self.line if self.line is not None else -1, self.choice)
        keys = [(v.where.name, v.where.line, self._choice_of(v)) for v in problems]
        if step > 0:
            at = next((i for i, key in enumerate(keys) if key > here), 0)
        else:
            at = next((i for i in range(len(keys) - 1, -1, -1) if keys[i] < here), len(keys) - 1)
        name, line, choice = keys[at]
        self.go_to(name, line, choice)
        self.notify(f"problem {at + 1} of {len(problems)}", timeout=2)

    def _choice_of(self, verdict: Verdict) -> int:
        on_line = self.session.verdicts_on(verdict.where.name, verdict.where.line)
        return next(i for i, v in enumerate(on_line) if v is verdict)

    # -- the original -----------------------------------------------------------------------------
    def _original(self) -> str | None:
        subject = self.subject
        if subject is None:
            return None
        if subject.verdict is None:
            if isinstance(subject.message, LineProblem):
                self.notify("a problem line has no message", title="Copy", severity="warning")
                return None
            return subject.message.content
        recovery = subject.recovery
        if recovery is None or recovery.content is None:
            self.notify("this reference recovers nothing", title="Copy", severity="warning")
            return None
        return recovery.content

    def action_copy_original(self) -> None:
        text = self._original()
        if text is not None:
            self.app.copy_to_clipboard(text)
            what = (
                "the recovered original" if self.subject and self.subject.verdict else "the message"
            )
            self.notify(f"copied {what} ({len(text):,} characters)", timeout=3)

    def action_read_original(self) -> None:
        from .reader import ReaderScreen

        text, subject = self._original(), self.subject
        if text is None or subject is None:
            return
        recovery = subject.recovery
        title = (
            recovery.source
            if recovery is not None and subject.verdict
            else f"{subject.log}:{subject.line + 1}"
        )
        self.app.push_screen(ReaderScreen(visible(title), text))

    # -- search -----------------------------------------------------------------------------------
    def action_search(self) -> None:
        bar = self.query_one("#log-search", Input)
        bar.display = True
        self.set_focus(bar)

    def action_close_search(self) -> None:
        banner = self.query_one("#log-banner", Static)
        bar = self.query_one("#log-search", Input)
        if banner.display and not bar.display and self.query_one("#messages").has_focus:
            banner.display = False
            return
        bar.display = False
        self.query_one("#log-switch", ContentSwitcher).current = "messages"
        self.set_focus(self.query_one("#messages"))

    @on(Input.Submitted, "#log-search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        self.search(event.value)

    @work(exclusive=True, group="search")
    async def search(self, query: str) -> None:
        """Search every log in a thread (a query over long messages takes a while: the screen
        stays live, and a newer search replaces this one)."""
        try:
            hits = tuple(await asyncio.to_thread(self.session.search, query, SEARCH_LIMIT + 1))
            found = len(hits)
            if found > SEARCH_LIMIT:  # the list stops at the cap: how many there are, counted
                found = await asyncio.to_thread(self.session.matches, query)
                hits = hits[:SEARCH_LIMIT]
        except MasterLogError as error:
            self.notify(str(error), title="Search", severity="error")
            return
        self.hits = hits
        done, total = self.catalogued
        partial = f" ({done * 100 // total}% catalogued so far)" if done < total else ""
        said = f"{found:,} found for {query!r}"
        if found > len(hits):
            said = f"{found:,} found for {query!r}: the newest {len(hits):,} listed (the cap)"
        self.notify(said + partial, timeout=3)
        self.query_one("#log-switch", ContentSwitcher).current = "hits"
        self.query_one("#log-search", Input).display = False
        hits_list = self.query_one("#hits", HitList)
        capped = f" · newest {len(hits):,} of {found:,}" if found > len(hits) else ""
        hits_list.border_title = plain(f"search: {query}{capped}")
        self.set_focus(hits_list)

    # -- following --------------------------------------------------------------------------------
    def action_toggle_follow(self) -> None:
        self.following = not self.following

    def _on_changed(self, refreshes: list[Refresh]) -> None:
        self.revision += 1
        if any(r.rewritten and r.name == MASTER for r in refreshes):
            self._show_rewrite()
        self.catalogue()

    def _show_rewrite(self) -> None:
        """The banner: the master was rewritten, and what changed (Escape puts it away)."""
        said = self.session.rewrite() or "rewritten"
        banner = self.query_one("#log-banner", Static)
        banner.update(plain(f" {MASTER} was rewritten: {said} (Escape hides this)"))
        banner.display = True

    # -- workers ----------------------------------------------------------------------------------
    @work(exclusive=True, group="verify")
    async def verify(self) -> None:
        try:
            await asyncio.to_thread(self.session.verify)
        except (MasterLogError, OSError) as error:
            self.notify(str(error), title="Verify", severity="error")
            return
        self.revision += 1
        self.catalogue()

    @work(exclusive=True, group="catalogue", thread=True)
    def catalogue(self) -> None:
        """Catalogue what is not yet (for the search), a batch at a time, saying how far."""
        worker = get_current_worker()
        session = self.session
        try:
            self.app.call_from_thread(setattr, self, "catalogued", session.catalogued())
            for _ in session.catalogue():
                if worker.is_cancelled:
                    return
                self.app.call_from_thread(setattr, self, "catalogued", session.catalogued())
        except (MasterLogError, OSError) as error:
            self.app.call_from_thread(self.notify, str(error), title="Search", severity="error")

    @staticmethod
    def help_groups(keymap: Mapping[str, str] | None = None) -> list[tuple[str, list[BindingType]]]:
        """The help page's keys of this screen and of what is on it."""
        return [
            ("Master log", list(MasterLogScreen.BINDINGS)),
            ("Lists", [*CursorPane.BINDINGS, *RowList.BINDINGS]),
        ]

    @staticmethod
    def legends() -> list[Legend]:
        return [("Marks and statuses", LEGEND)]

    def system_commands(self) -> list[Any]:
        from textual.app import SystemCommand

        return [
            SystemCommand(
                "Next problem", "the next reference that is not ok", self.action_next_problem
            ),
            SystemCommand("Search the logs", "FTS5 over every message", self.action_search),
            SystemCommand(
                "Follow the master log", "keep its end in view", self.action_toggle_follow
            ),
            SystemCommand("Copy the original", "the recovered message", self.action_copy_original),
            *(
                SystemCommand(
                    f"Show {visible(short_name(entry.name))}",
                    f"{entry.lines:,} lines",
                    partial(self.go_to, entry.name, 0),
                )
                for entry in (self.shown.entries if self.shown is not None else ())
            ),
        ]
