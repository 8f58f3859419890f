"""The custodian's screen: one document of the workspace, its views side by side with what
the selected thing is, live, acted on from the keyboard as the human custodian.

The screen follows ``docs/screens.md``: its state is the reactives below; ``shown`` (a
``DocShown``) is derived from them and every view is bound to it; views post messages back;
only the screen talks to the workspace, and every action goes through
``Workspace.run_document`` as ``Actor.human(custodian)``, a refusal shown as a notification.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from rich.console import Group, RenderableType
from rich.text import Text
from textual import on, work
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.reactive import var
from textual.widgets import ContentSwitcher

from engine.documents import DOC_PREFIX
from engine.store import StoreError
from engine.visible import visible
from engine.workspace import Change, UnreplayableEvent, Workspace

from ..keymap import bind
from ..server.activity import ActivityReader, KeyActivity
from ..themes import Palette
from ..types import DocAt, DocShown
from ..widgets.agents import AgentRoster, AgentRow, agent_detail
from ..widgets.cursor import CursorPane
from ..widgets.events import PAGE, EventList, EventSearch, event_detail
from ..widgets.footer import FittedFooter
from ..widgets.heatmap import HeatFilter, SalienceHeatmap, next_sort, standing
from ..widgets.inbox import EscalationInbox, InboxRow, briefing_text, open_items
from ..widgets.outline import OutlineRow, SectionOutline
from ..widgets.pane import DetailPane
from ..widgets.queue import (
    MERGED,
    ProposalQueue,
    QueueAction,
    QueueFilter,
    QueueRow,
    check_choice,
    choose_command,
    proposal_detail,
)
from ..widgets.rows import RowList
from ..widgets.section_markdown import SectionMarkdown
from ..widgets.status import DocStatus, LineBar
from .custodian import CustodianActions
from .pick import Pick
from .timetravel import TimeTravel

if TYPE_CHECKING:
    from engine.protocol.decide import Decision
    from engine.protocol.document import Document
    from engine.protocol.model import Agent, Section
    from engine.protocol.results import DocumentResult

    from ..app import PactApp

TICK_S = 1.0  # how often countdowns are redrawn and due work is looked for
VIEWS = (
    "outline",
    "queue",
    "heatmap",
    "inbox",
    "agents",
    "events",
)  # the views, in the order of their keys
SEARCH_PAGE = 10_000  # events read at a time by the events view's search


class DocumentScreen(CustodianActions, TimeTravel):
    BINDINGS: ClassVar[list[BindingType]] = [
        bind("outline", "view('outline')", "Outline", tooltip="the section tree and its marks"),
        bind(
            "proposals", "view('queue')", "Proposals", tooltip="every proposal, what it waits for"
        ),
        bind("heatmap", "view('heatmap')", "Heatmap", tooltip="salience: agents by sections"),
        bind("inbox", "view('inbox')", "Inbox", tooltip="what waits for a human, oldest first"),
        bind(
            "agents", "view('agents')", "Agents", tooltip="the roster: trust, clearance, heartbeat"
        ),
        bind("events", "view('events')", "Events", tooltip="the document's event stream"),
        bind(
            "view-as",
            "view_as_agent",
            "View as",
            tooltip="see the document as an agent sees it (again: back to your view)",
        ),
        bind("share", "share", "Share", tooltip="write the document as the agent viewed sees it"),
        bind("comment", "comment", "Comment", tooltip="comment on the section or proposal shown"),
        bind(
            "resolve-comment", "resolve_comment", "Resolve comment", show=False, tooltip="pick one"
        ),
        bind("custodian-menu", "custodian_menu", "Actions", tooltip="the custodian's powers"),
        bind(
            "next-document",
            "next_document",
            "Next doc",
            tooltip="show the workspace's next document",
        ),
        bind("fire-due", "tick", "Fire due", show=False, tooltip="fire what is due now"),
        *TimeTravel.TIME_BINDINGS,
        bind("go-to", "go_to_event", "Go to", show=False, tooltip="the document after event #N"),
        bind("advance", "step_time", "Step", tooltip="step protocol time ahead (demo)"),
        bind("step-size", "next_step", "Step size", show=False, tooltip="the step: 1 s to 1 h"),
        bind(
            "diff-layout",
            "toggle_diff_layout",
            "Side by side",
            show=False,
            tooltip="a proposal's diff: unified or side by side",
        ),
    ]

    FIRST = 1  # time travel's first position: the document after its creation event
    UNIT = "event"

    # -- state: what the user chose ------------------------------------------------------------
    document_name: var[str | None] = var(None, init=False)
    """The document shown."""
    view: var[str] = var("outline", init=False)
    """Which view is in front."""
    revision: var[int] = var(0, init=False)
    """How many events of the document are applied: moved by the change feed and by this
    screen's own commands."""
    now_ms: var[int] = var(0, init=False)
    """The clock the countdowns read, moved every ``TICK_S``."""
    section_id: var[str | None] = var(None, init=False)
    """The section under the outline's cursor."""
    viewing_as: var[str | None] = var(None, init=False)
    """The agent (by id) whose eyes every view sees through; None: the custodian's."""
    event_filter: var[str] = var("", init=False)
    """What the events view is filtered by (``type:``, ``agent:``, ``section:`` words)."""
    inbox_row: var[InboxRow | None] = var(None, init=False)
    """The inbox item under its cursor: its briefing is shown beside it."""
    queue_filter: var[str] = var("", init=False)
    """What the proposal queue is filtered by (``status:``, ``section:``, ``author:``,
    ``needs:me``)."""
    proposal_id: var[str | None] = var(None, init=False)
    """The proposal under the queue's cursor: its diff and votes are shown beside it."""
    diff_side: var[bool] = var(False, init=False)
    """Whether a proposal's diff is side by side (else unified)."""
    heat_filter: var[str] = var("", init=False)
    """What the heatmap is filtered and sorted by (``min:``, ``agent:``, ``section:``,
    ``sort:``)."""
    agent_id: var[str | None] = var(None, init=False)
    """The agent under the roster's cursor: its sections, proposals, locks and keys beside it."""
    heat_cell: var[tuple[str, int] | None] = var(None, init=False)
    """The heatmap's cell under its cursor (agent id, section key): its intents and
    constraints are shown beside it."""

    position: var[int | None] = var(None, init=False)
    """The document is shown as it was after its first ``position`` events (read-only); None:
    live."""
    diff_base: var[int | None] = var(None, init=False)
    """The point marked with ``d`` (a count of events): what is shown is diffed against it."""
    step_s: var[int] = var(60, init=False)
    """How far ``.`` steps protocol time (seconds)."""
    step_report: var[str] = var("", init=False)
    """What the last step of protocol time fired, said on the status line."""

    # -- derived -------------------------------------------------------------------------------
    past: var[DocAt | None] = var(None, init=False)
    """The document at ``position`` once read."""
    base_doc: var[DocAt | None] = var(None, init=False)
    """The document at ``diff_base`` once read."""
    documents: var[tuple[str, ...]] = var((), init=False)
    """Every document of the workspace, by name."""
    unreadable: var[tuple[str, str] | None] = var(None, init=False)
    """The document asked for that cannot be shown, and why (its stream holds an event that
    cannot be replayed): the status line says so, and no document is shown."""
    shown: var[DocShown | None] = var(None, init=False)
    """What every view draws: (document_name, revision, now_ms), through the custodian's eyes
    or, viewing as an agent, through that agent's barriers."""
    event_search: var[EventSearch | None] = var(None, init=False)
    """What the search of every event of the document for ``event_filter`` found so far."""
    event_sequence: var[int | None] = var(None, init=False)
    """The event under the events view's cursor: its detail is shown beside it."""
    no_documents: var[bool] = var(False, init=False)
    """The workspace has no document (the status line says how to make one)."""
    status: var[DocStatus] = var(DocStatus, init=False)
    """What the status line says (``_derive_status``, from ``shown`` and why there is none)."""

    def compose(self) -> Any:
        yield LineBar(id="doc-status").data_bind(status=DocumentScreen.status)
        with Horizontal(id="doc-body"):
            with ContentSwitcher(initial="outline", id="doc-views"):
                yield SectionOutline(id="outline").data_bind(shown=DocumentScreen.shown)
                yield ProposalQueue(id="queue").data_bind(
                    shown=DocumentScreen.shown, queue_filter=DocumentScreen.queue_filter
                )
                yield SalienceHeatmap(id="heatmap").data_bind(
                    shown=DocumentScreen.shown, heat_filter=DocumentScreen.heat_filter
                )
                yield EscalationInbox(id="inbox").data_bind(shown=DocumentScreen.shown)
                yield AgentRoster(id="agents").data_bind(shown=DocumentScreen.shown)
                yield EventList(id="events").data_bind(
                    shown=DocumentScreen.shown,
                    event_filter=DocumentScreen.event_filter,
                    event_search=DocumentScreen.event_search,
                )
            with Vertical(id="doc-detail"):
                yield DetailPane(self._diff, id="doc-diff").data_bind(
                    shown=DocumentScreen.shown, key=DocumentScreen.base_doc
                )
                # Each drawn only while its view is in front (a hidden one is not remade at
                # every change): the view is bound too, so showing it draws it.
                yield DetailPane(briefing_text, id="inbox-briefing", only_in="inbox").data_bind(
                    shown=DocumentScreen.shown,
                    key=DocumentScreen.inbox_row,
                    view=DocumentScreen.view,
                )
                yield DetailPane(cell_text, id="heat-detail", only_in="heatmap").data_bind(
                    shown=DocumentScreen.shown,
                    key=DocumentScreen.heat_cell,
                    view=DocumentScreen.view,
                )
                with VerticalScroll(id="agent-pane"):
                    yield DetailPane(
                        self._agent_detail, id="agent-detail", only_in="agents"
                    ).data_bind(
                        shown=DocumentScreen.shown,
                        key=DocumentScreen.agent_id,
                        view=DocumentScreen.view,
                    )
                with VerticalScroll(id="proposal-pane"):
                    yield DetailPane(
                        self._proposal_detail, id="proposal-detail", only_in="queue"
                    ).data_bind(
                        shown=DocumentScreen.shown,
                        key=DocumentScreen.proposal_id,
                        view=DocumentScreen.view,
                    )
                with VerticalScroll(id="event-pane"):
                    yield DetailPane(
                        self._event_detail, id="event-detail", only_in="events"
                    ).data_bind(
                        shown=DocumentScreen.shown,
                        key=DocumentScreen.event_sequence,
                        view=DocumentScreen.view,
                    )
                yield SectionMarkdown(id="section-markdown")
                # drawn in every view, in sight under the outline's Markdown when there are any
                yield DetailPane(
                    self._section_comments, id="section-comments", displayed_in="outline"
                ).data_bind(
                    shown=DocumentScreen.shown,
                    key=DocumentScreen.section_id,
                    view=DocumentScreen.view,
                )
        yield FittedFooter(compact=True)

    @property
    def workspace(self) -> Workspace:
        app: PactApp = self.app  # type: ignore[assignment]
        assert app.workspace is not None
        return app.workspace

    def _key(self, action_id: str) -> str:
        """The key in force for ``action_id``, as a hint names it."""
        app: PactApp = self.app  # type: ignore[assignment]
        return app.key_for(action_id)

    @property
    def custodian(self) -> str:
        app: PactApp = self.app  # type: ignore[assignment]
        return app.custodian

    async def on_mount(self) -> None:
        app: PactApp = self.app  # type: ignore[assignment]
        app.workspace_changed.subscribe(self, self._on_workspace_changed)
        self.now_ms = app.clock() // 1_000_000
        self._looked_at, self._opening = set(), set()
        self.set_interval(TICK_S, self._on_clock)
        self.watch_view(self.view)  # which detail the first view has beside it
        self.query_one("#doc-diff").display = False
        self._open_first(app.initial_document)

    @work(exclusive=True, group="documents")
    async def _open_first(self, wanted: str | None) -> None:
        try:
            names = tuple(await self.workspace.document_names())
        except StoreError as error:
            self.notify(str(error), severity="error", title="Documents")
            return
        self.documents = names
        if wanted is not None and wanted not in names:
            self.notify(
                f"no document named {wanted!r}; showing the first",
                severity="warning",
            )
        if not names:
            self.no_documents = True
            return
        await self._load(wanted if wanted in names else names[0])

    async def _load(self, name: str) -> None:
        from engine.protocol.errors import ProtocolError

        try:
            await self.workspace.load_document(name)
        except UnreplayableEvent as error:
            self._cannot_show(name, error)
            return
        except (ProtocolError, StoreError) as error:
            self.notify(str(error), severity="error", title="Document")
            return
        self.unreadable = None
        self.document_name = name
        self.call_after_refresh(self._prepare_past, name)

    @work(exclusive=True, group="past-ahead")
    async def _prepare_past(self, name: str) -> None:
        """Once the document is drawn, build its rewind at its present in the background
        (``Workspace.prepare_past``), so that the first ``[`` is a step, not a fold. A ``[``
        pressed before it is ready shows the past as ``read_past`` does (waiting for it, or
        from a fold); an error is said when the past is asked for."""
        from engine.protocol.errors import ProtocolError
        from engine.workspace.errors import WorkspaceError

        quiet = (ProtocolError, StoreError, UnreplayableEvent, ValueError, WorkspaceError)
        with contextlib.suppress(*quiet):
            await self.workspace.prepare_past(name)

    def _cannot_show(self, name: str, error: UnreplayableEvent) -> None:
        """Document ``name`` cannot be shown: its stream holds an event that cannot be
        replayed."""
        self.document_name = None
        self.unreadable = (name, str(error))

    async def _command_met(self, name: str | None, error: UnreplayableEvent, title: str) -> None:
        """A command on document ``name`` met an event that cannot be replayed among those
        other processes appended: that document cannot be shown, if the event is of its
        stream; else it is said, and the document (which the failed command dropped) read
        again."""
        if name is not None and error.details.get("stream") == DOC_PREFIX + name:
            self._cannot_show(name, error)
            return
        self.notify(str(error), severity="error", title=title)
        if name is not None:
            await self._load(name)

    def watch_unreadable(self, unreadable: tuple[str, str] | None) -> None:
        self._derive_status()
        if unreadable is not None:
            self._show_section()

    def watch_no_documents(self) -> None:
        self._derive_status()

    # -- deriving what is shown -----------------------------------------------------------------
    def watch_document_name(self, name: str | None) -> None:
        if name is not None:  # the document in the custodian's hands: the app counts for it
            app: PactApp = self.app  # type: ignore[assignment]
            app.document = name
        self._show()

    def watch_revision(self) -> None:
        self._show()

    def watch_now_ms(self) -> None:
        self._show()

    def _show(self) -> None:
        name = self.document_name
        if name is None:
            self.shown = None
            return
        doc = self.workspace.document(name)
        if self.position is not None:
            past = self.past
            if past is None or (past.name, past.count) != (name, self.position):
                return  # read_past is on its way
            doc = past.doc
        reader = doc.agents.get(self.viewing_as) if self.viewing_as is not None else None
        self.shown = DocShown(name, doc, doc.sequence, self.now_ms, self.custodian, reader)

    def watch_shown(self, shown: DocShown | None) -> None:
        self._derive_status()
        if shown is None:
            return
        self._follow_events(shown)

    def _derive_status(self) -> None:
        """What the status line says: the document shown, counted through the eyes in use
        (or why there is none)."""
        shown = self.shown
        keyed = DocStatus(
            later_key=self._key("later"), live_key=self._key("live"), back_key=self._key("view-as")
        )
        if self.unreadable is not None or self.no_documents or shown is None:
            self.status = dataclasses.replace(
                keyed, unreadable=self.unreadable, no_documents=self.no_documents
            )
            return
        sections, proposals = self._counted(shown)
        reader = shown.reader
        self.status = dataclasses.replace(
            keyed,
            name=shown.name,
            version=shown.doc.version,
            events=shown.revision,
            live_events=self.workspace.document(shown.name).sequence,
            past=self.position is not None,
            sections=sections,
            agents=len(shown.doc.active),
            proposals=proposals,
            custodian=shown.custodian,
            read_only=self.workspace.read_only,
            # the custodian's count, whoever's eyes the views use
            waiting=open_items(shown.doc),
            viewing_as=reader.name if reader is not None else None,
            ahead=self._time_ahead(),
        )

    @staticmethod
    def _counted(shown: DocShown) -> tuple[int, int]:
        """The sections and the open proposals the status line counts: viewing as an agent,
        only those it may know of (the sections it sees, the proposals on those it reads)."""
        from engine.protocol.barriers import reads, sees

        doc, reader = shown.doc, shown.reader
        if reader is None:
            return len(doc.sections), sum(len(v) for v in doc.open_by_section.values())
        sections = sum(1 for section in doc.sections if sees(doc, reader, section))
        pending = sum(
            len(ids)
            for key, ids in doc.open_by_section.items()
            if key in doc.by_key and reads(doc, reader, doc.by_key[key])
        )
        return sections, pending

    def watch_section_id(self) -> None:
        self._show_section()

    def _readable_section(self, section_id: str | None) -> Section | None:
        """Section ``section_id`` if whoever's eyes the views use may read it (viewing as an
        agent that may only know that it exists: None)."""
        from engine.protocol.barriers import reads

        shown = self.shown
        if shown is None or section_id is None:
            return None
        section = shown.doc.section(section_id, shown.now_ms)
        return section if section is not None and reads(shown.doc, shown.reader, section) else None

    def _show_section(self) -> None:
        section = self._readable_section(self.section_id)
        markdown = self.query_one("#section-markdown", SectionMarkdown)
        markdown.update(section.content if section is not None else "")

    def _section_comments(self, shown: DocShown, section_id: str | None) -> RenderableType:
        """The outline's pane under the section's Markdown: the comments on the section."""
        from ..widgets.comments import comments_text

        section = self._readable_section(section_id)
        return comments_text(shown, section=section) if section is not None else Text()

    @on(RowList.Highlighted, "#outline")
    def _section_highlighted(self, event: RowList.Highlighted) -> None:
        row: OutlineRow | None = event.row
        self.section_id = row.key if row is not None else None
        self._show_section()

    @on(RowList.Selected, "#outline")
    def _read_section(self, event: RowList.Selected) -> None:
        """The section under the cursor, whole, however long (the pane beside the outline
        renders its start)."""
        from .reader import ReaderScreen

        row: OutlineRow = event.row
        section = self._readable_section(row.key)
        if section is not None:
            self.app.push_screen(ReaderScreen(f"{row.key} · v{row.version}", section.content))

    # -- live changes and time ------------------------------------------------------------------
    def _on_workspace_changed(self, change: Change) -> None:
        if self.document_name is not None and self.document_name in change.documents:
            self.revision = self.workspace.document(self.document_name).sequence
            if self.position is not None:
                self._derive_status()  # the status line counts the newer events
        if any(name not in self.documents for name in change.documents):
            self._refresh_documents()

    @work(exclusive=True, group="documents-list")
    async def _refresh_documents(self) -> None:
        self.documents = tuple(await self.workspace.document_names())

    def _on_clock(self) -> None:
        app: PactApp = self.app  # type: ignore[assignment]
        self.now_ms = app.protocol_clock() // 1_000_000
        if self.view == "agents":
            self.read_key_activity()
        name = self.document_name
        if name is None or self.workspace.read_only or self._stepping:
            return
        due = self.workspace.document(name).next_due_ms()  # the live one's, whatever is shown
        if name not in self._looked_at:  # its first look: what it fires is said (fire_due)
            self._looked_at.add(name)
            if due is not None and due <= self.now_ms:
                self._opening.add(name)
        if due is not None and due <= self.now_ms:  # something is due: fire it here
            self.fire_due()

    key_activity: dict[str, KeyActivity] = {}  # replaced whole, never changed in place
    _activity: ActivityReader | None = None

    @work(exclusive=True, group="key-activity")
    async def read_key_activity(self) -> None:
        """What the servers on this workspace heard from each key (its label, its last request:
        ``pact_tui.server.activity``), for the agents view; looked at in a thread once a tick,
        a server's file read again only when it changed."""
        path = self.workspace.path
        if not isinstance(path, Path):
            return  # a database: no folder the servers share with the app
        if self._activity is None or self._activity.workspace != path:
            self._activity = ActivityReader(path)  # only what changed is read again
        activity = await asyncio.to_thread(self._activity.read)
        if activity != self.key_activity:
            self.key_activity = activity
            self.query_one("#agent-detail", DetailPane).redraw()  # drawn with what was heard

    _looked_at: set[str]  # documents the clock has looked at since this screen opened
    _opening: set[str]  # those whose first firing is yet to be said ("fired on opening: …")

    def action_tick(self) -> None:
        self.fire_due()

    @work(exclusive=True, group="tick")
    async def fire_due(self) -> None:
        name = self.document_name
        if name is None or self.workspace.read_only:
            return
        from engine.protocol.errors import ProtocolError

        try:
            decision = await self.workspace.tick_document(name)
        except UnreplayableEvent as error:
            await self._command_met(name, error, "Due work")
            return
        except (ProtocolError, StoreError) as error:
            self.notify(str(error), severity="error", title="Due work")
            return
        self._applied(name, decision)
        if name in self._opening:  # opening fired this, before anything was touched: say so
            from ..doc_time import fired_summary

            self._opening.discard(name)
            if decision.events:
                said = f"fired on opening: {fired_summary(decision.events)}"
                self.notify(said, title="Due work", timeout=10)

    # -- acting as the custodian ----------------------------------------------------------------
    @work(group="document-commands")
    async def run_document(self, command: dict[str, Any]) -> DocumentResult | None:
        """Run one protocol command as the human custodian; a refusal is a notification."""
        return await self.command(command)

    async def command(self, command: dict[str, Any]) -> DocumentResult | None:
        """``run_document``'s work, awaited by a worker that wants the answer (None: refused,
        and said so)."""
        from engine.protocol.commands import Actor
        from engine.protocol.errors import ProtocolError

        name = self.document_name
        if name is None or self._live_doc() is None:
            return None
        try:
            decision = await self.workspace.run_document(name, command, Actor.human(self.custodian))
        except UnreplayableEvent as error:
            await self._command_met(name, error, "Refused")
            return None
        except (ProtocolError, StoreError) as error:
            self.notify(str(error), severity="error", title="Refused")
            return None
        self._applied(name, decision)
        return decision.result

    def _applied(self, name: str, decision: Decision) -> None:
        app: PactApp = self.app  # type: ignore[assignment]
        app.document_changed(name)  # without a change feed (watch off), this is how it knows
        if name == self.document_name:
            self.revision = self.workspace.document(name).sequence

    # -- views and documents --------------------------------------------------------------------
    def action_view(self, view: str) -> None:
        if view in VIEWS:
            self.view = view
            self._focus_view()  # the view's key takes the focus back from a detail pane too

    def watch_view(self, view: str) -> None:
        switcher = self.query_one("#doc-views", ContentSwitcher)
        switcher.current = view
        shown = self.query_one(f"#{view}")
        if isinstance(shown, RowList):
            shown.catch_up()  # now, not on its Show event: the frame that shows it is current
        self.query_one("#inbox-briefing").display = view == "inbox"
        self.query_one("#proposal-pane").display = view == "queue"
        self.query_one("#heat-detail").display = view == "heatmap"
        self.query_one("#event-pane").display = view == "events"
        self.query_one("#agent-pane").display = view == "agents"
        # the section's Markdown, where the briefing, the proposal, the cell, the event or the
        # agent is not
        detailed = ("inbox", "queue", "heatmap", "events", "agents")
        self.query_one("#section-markdown").display = view not in detailed
        if view == "events":
            self.query_one(EventList).ask_now()  # its rows' events read while it is drawn
        self._focus_view()

    def _focus_view(self) -> None:
        """Focus the view in front now, in the handler that put it there: a key typed right
        after a view's key is that view's. (``Widget.focus`` would move the focus only when a
        later message is handled, and a key between would reach the view just hidden.)"""
        self.set_focus(self.query_one(f"#{self.view}"))
        # Its keys in the footer now, in the frame that shows the view (``set_focus`` announces
        # them only after that frame, and the footer would be laid out again in the next).
        self.refresh_bindings()

    def action_next_document(self) -> None:
        names = self.documents
        if not names:
            return
        shown = self.unreadable[0] if self.unreadable is not None else self.document_name
        at = names.index(shown) if shown in names else -1
        self.switch_document(names[(at + 1) % len(names)])

    @work(exclusive=True, group="documents")
    async def switch_document(self, name: str) -> None:
        self.set_reactive(DocumentScreen.position, None)
        self.set_reactive(DocumentScreen.diff_base, None)
        await self._load(name)

    # -- time: the document's past, a diff between two points, stepping protocol time --------
    def _live_count(self) -> int:
        name = self.document_name
        return self.workspace.document(name).sequence if name is not None else 0

    def validate_position(self, position: int | None) -> int | None:
        if position is None:
            return None
        return None if position >= self._live_count() else max(1, position)

    # (time travel: ``TimeTravel``, through the document's events; ``position`` counts them)
    def newest_past(self) -> int:
        return self._live_count() - 1

    def action_go_to_event(self) -> None:
        """``:N``: the document after event #N, numbered as the events view numbers them (#0 is
        its creation): its first N + 1 events."""
        from ..screens.prompt import PromptScreen

        last = self._live_count() - 1

        def chosen(text: str | None) -> None:
            if text is None:
                return
            text = text.strip()
            if not text.isdigit() or not 0 <= int(text) <= last:
                self.notify(
                    f"{text!r}: give an event number from 0 to {last}",
                    severity="error",
                    title="Go to",
                )
                return
            self.position = int(text) + 1

        question = f"Show the document after event # (0-{last}, as the events view numbers them)"
        self.app.push_screen(PromptScreen(question), chosen)

    def watch_position(self, position: int | None) -> None:
        if position is None:
            self._show()
        else:
            self.read_past(self.document_name, position, "past")

    @work(exclusive=True, group="past")
    async def read_past(self, name: str | None, count: int, into: str) -> None:
        """The document after ``count`` events (never the live one), set as ``past`` or
        ``base_doc`` if the screen still wants it. The past shown is the quickest way there
        (``document_past``): the workspace's rewind, which steps event by event (it changes
        with the next step, and is shown again then), or, where the rewind does not reach
        (entering the past, ``:N``), a fold from the nearest cache, shown first; the rewind is
        then built there, so the next steps are steps (a step meanwhile cancels the building
        and keeps what it built). The diff's base is a projection of its own
        (``document_at``)."""
        from engine.protocol.errors import ProtocolError

        if name is None:
            return
        try:
            if into == "past":
                doc, stepped = await self.workspace.document_past(name, count)
            else:
                doc, stepped = await self.workspace.document_at(name, count), True
            if into == "past" and (self.document_name, self.position) == (name, count):
                self.past = DocAt(name, count, doc)
            elif into == "base" and (self.document_name, self.diff_base) == (name, count):
                self.base_doc = DocAt(name, count, doc)
            if not stepped:
                await self.workspace.document_stepped(name, count)  # for the steps to come
        except (ProtocolError, StoreError, UnreplayableEvent, ValueError) as error:
            self.notify(str(error), severity="error", title="The past")

    def watch_past(self) -> None:
        self._show()

    def action_diff(self) -> None:
        if self.diff_base is not None:
            self.diff_base = None
            return
        self.diff_base = self.position or self._live_count()

    def watch_diff_base(self, base: int | None) -> None:
        if base is not None:
            self.read_past(self.document_name, base, "base")
        pane = self.query_one("#doc-diff", DetailPane)
        pane.display = base is not None
        pane.redraw()  # drawn against the point marked

    def _diff(self, shown: DocShown, base: DocAt | None) -> RenderableType:
        """The pane above the view while a point is marked (``diff_base``): what is shown,
        diffed against the document at that point once read."""
        if self.diff_base is None:
            return Text()  # out of sight
        if base is None or (base.name, base.count) != (shown.name, self.diff_base):
            return Text(f"Reading the document after event #{self.diff_base - 1}…", style="dim")
        palette = Palette.of(self.app.theme_variables)
        return document_diff(base.doc, base.count, shown.doc, shown.revision, palette, shown.reader)

    def action_next_step(self) -> None:
        from ..doc_time import STEPS, duration

        at = STEPS.index(self.step_s) if self.step_s in STEPS else -1
        self.step_s = STEPS[(at + 1) % len(STEPS)]
        self.notify(
            f"'{self._key('advance')}' steps protocol time by {duration(self.step_s)}.",
            title="Step",
        )

    def action_set_step(self) -> None:
        """Ask for the step (``30``, ``10s``, ``5m``, ``1h``); one refused changes nothing."""
        from ..doc_time import duration, parse_step
        from ..screens.prompt import PromptScreen

        def chosen(text: str | None) -> None:
            if text is None:
                return
            try:
                self.step_s = parse_step(text)
            except ValueError as error:
                self.notify(str(error), severity="error", title="Step")
                return
            self.notify(
                f"'{self._key('advance')}' steps protocol time by {duration(self.step_s)}.",
                title="Step",
            )

        question = "Step protocol time by (30, 10s, 5m, 1h)"
        self.app.push_screen(PromptScreen(question, value=str(self.step_s)), chosen)

    def _time_ahead(self) -> str:
        from ..doc_time import duration

        ahead = self.workspace.time_ahead_ms // 1000
        report = f" · last step: {self.step_report}" if self.step_report else ""
        return f" · time +{duration(ahead)} ahead{report}" if ahead else ""

    def watch_step_report(self) -> None:
        self._derive_status()

    def action_step_time(self) -> None:
        if not self.workspace.time_stepped:
            self.notify(
                "Protocol time follows the clock here: step it in the demo, or open the"
                " workspace with --step-time.",
                severity="warning",
                title="Step",
            )
            return
        if self.position is not None:
            live = self._key("live")
            self.notify(f"Go back to live ({live}) before stepping time.", severity="warning")
            return
        if self.workspace.read_only:
            self.notify("The workspace is open read-only.", severity="warning", title="Step")
            return
        self.step_and_fire(self.step_s)

    _stepping = 0  # steps under way: the clock's tick leaves their firing to them

    @work(group="step")
    async def step_and_fire(self, seconds: int) -> None:
        """Move protocol time ahead for every process, fire what became due, and say what
        firing did (in a notification and on the status line). Not exclusive: a second step
        cancelling the first between its two transactions would lose what the first fired."""
        from engine.protocol.errors import ProtocolError

        from ..doc_time import duration, fired_summary, fired_words

        name = self.document_name
        self._stepping += 1
        try:
            await self.workspace.step_time(seconds, human=self.custodian)
            self.now_ms = self.workspace.now_ns() // 1_000_000
            decision = await self.workspace.tick_document(name) if name is not None else None
        except UnreplayableEvent as error:
            await self._command_met(name, error, "Step")
            return
        except (ProtocolError, StoreError) as error:
            self.notify(str(error), severity="error", title="Step")
            return
        finally:
            self._stepping -= 1
        events = decision.events if decision is not None else []
        if name is not None and decision is not None:
            self._applied(name, decision)
        # The status line says it in one short line (a header of at most two lines at 80
        # columns); the notification says each event.
        self.step_report = f"+{duration(seconds)}: {fired_summary(events)}"
        self.notify(f"+{duration(seconds)}: {fired_words(events)}", title="Step")

    # -- escalation inbox, agents, events, view as agent ----------------------------------------
    @on(RowList.Highlighted, "#inbox")
    def _inbox_highlighted(self, event: RowList.Highlighted) -> None:
        self.inbox_row = event.row

    @on(EscalationInbox.Act)
    def _inbox_act(self, event: EscalationInbox.Act) -> None:
        self.act_on_inbox(event.action, event.row)

    @work(group="inbox-prompts")
    async def act_on_inbox(self, action: str, row: InboxRow) -> None:
        """Ask what the command needs (Escape at any question: nothing is done), then run it."""
        from ..screens.prompt import PromptScreen

        async def ask(question: str, value: str = "") -> str | None:
            return await self.app.push_screen_wait(PromptScreen(question, value=value))

        if row.closed is not None:
            self.notify(f"Settled already: {row.closed}", severity="warning", title="Inbox")
            return
        if row.kind == "comment":
            await self._act_on_comment(action, row, ask)
            return
        if action in ("respond", "dismiss") and row.kind != "question":
            self.notify(f"Only a question can be {action}ed.", severity="warning")
            return
        if action == "respond":
            response = await ask(f"Answer: {visible(row.text)}")
            if response is not None:
                self.run_document({"op": "respond", "queryId": row.ref, "response": response})
        elif action == "dismiss":
            why = await ask(f"Dismiss {visible(row.text)!r}: why?")
            if why is not None:
                self.run_document({"op": "dismiss", "queryId": row.ref, "why": why})
        elif action == "resolve":
            if row.section_id is None:
                self.notify("This question is on no section: respond to it.", severity="warning")
                return
            await self._resolve(row.section_id)

    async def _resolve(self, section_id: str) -> None:
        """A binding decision on an escalated section, as ``tap resolve`` makes it: pick one of
        its open proposals to merge, your own text for it, or the decision alone; then the
        decision, its justification and (others being open) whether to reject them; then say
        what it did to the section."""
        from ..asking import describe_proposal

        doc = self._live_doc()
        if doc is None or self._refused(doc, "resolve", section_id=section_id):
            return
        section = doc.by_id[section_id]
        named = f"“{section.title}” ({section.id}, v{section.version})"
        open_ids = [p.id for p in doc.open_on(section.key)]
        picks = [Pick(f"merge {describe_proposal(doc, pid)}", pid, pid) for pid in open_ids]
        picks.append(Pick("write the section's text yourself (an editor)", WRITE))
        picks.append(Pick("record the decision only: the section stays as it is", DECIDE))
        how = await self._pick(f"Resolve {named}: what goes in the section?", picks)
        if how is None:
            return
        content = None
        if how == WRITE:
            content = await self._edit_section(section.id, section.content)
            if content is None:
                return
        chosen = how if how not in (WRITE, DECIDE) else None
        fields = {"section_id": section.id, "proposal_id": chosen, "content": content}
        if self._refused(doc, "resolve", **fields):
            return
        decision = await self._ask(f"Your decision on {named}")
        if decision is None:
            return
        justification = await self._ask("Justification (kept with the decision)")
        if justification is None:
            return
        others = [pid for pid in open_ids if pid != chosen]
        override: str | bool = False
        if others:
            asked = await self._ask(
                f"Override: reject the {len(others)} other open proposal(s) there? (y/n)", "n"
            )
            if asked is None:
                return
            override = asked
        command = resolve_command(section.id, decision, justification, override)
        if chosen is not None:
            command["proposalId"] = chosen
        if content is not None:
            command["content"] = content
        version = section.version
        worker = self.run_document(command)
        await worker.wait()
        if worker.result is not None:
            self.notify(resolved_words(doc, section.id, version, chosen, content), title="Resolved")

    async def _edit_section(self, section_id: str, content: str) -> str | None:
        """The section's text as the custodian writes it (None: cancelled)."""
        from .edit import EditScreen

        if visible(content, multiline=True) != content:  # an editor would show them raw
            self.notify(
                "The section holds control characters: pick a proposal, or edit it with"
                " `pact-tui tap edit`.",
                severity="error",
                title="Resolve",
            )
            return None
        title = f"The text of {section_id}: write it, then ctrl+s"
        edited: str | None = await self.app.push_screen_wait(EditScreen(title, content))
        return edited

    # -- comments and sharing -------------------------------------------------------------------
    async def _act_on_comment(self, action: str, row: InboxRow, ask: Any) -> None:
        """A comment in the inbox: ``r`` replies on its section (and proposal), ``R`` resolves
        it; a comment is not dismissed (it is no question)."""
        doc = self.shown.doc if self.shown is not None else None
        comment = doc.comments.get(row.ref) if doc is not None else None
        if comment is None or row.section_id is None:
            return
        if action == "respond":
            text = await ask(f"Reply on {visible(row.section_id)} to: {visible(row.text)}")
            if text is not None:
                self.run_document(_comment_command(row.section_id, comment.proposal, text))
        elif action == "resolve":
            from .confirm import ConfirmScreen

            question = f"Resolve the comment by {visible(row.by)} on {visible(row.section_id)}:"
            question += f" {visible(row.text)!r}?"
            if await self.app.push_screen_wait(ConfirmScreen(question, yes="Resolve")):
                self.run_document({"op": "resolve-comment", "commentId": comment.id})
        else:
            resolve = self._key("resolve")
            self.notify(f"A comment is resolved ({resolve}), not dismissed.", severity="warning")

    def _comment_target(self) -> tuple[Section, str | None] | None:
        """What a comment typed now is about: the proposal under the queue's cursor, the
        inbox item's section, the heatmap cell's section, else the section beside the outline;
        None (and said) when there is none the eyes in use may read."""
        from engine.protocol.barriers import reads

        shown = self.shown
        if shown is None:
            return None
        doc = shown.doc
        section: Section | None = None
        proposal: str | None = None
        if self.view == "queue":
            found = doc.proposals.get(self.proposal_id) if self.proposal_id else None
            if found is not None:
                section, proposal = doc.by_key[found.section], found.id
        elif self.view == "inbox":
            row = self.inbox_row
            section = doc.by_id.get(row.section_id) if row and row.section_id else None
            if row is not None and row.kind == "comment" and row.ref in doc.comments:
                proposal = doc.comments[row.ref].proposal
        elif self.view == "heatmap":
            section = doc.by_key.get(self.heat_cell[1]) if self.heat_cell else None
        else:
            section = self._readable_section(self.section_id)
        if section is None or not reads(doc, shown.reader, section):
            self.notify(
                f"Put the cursor on a section ({self._key('outline')}) or a proposal"
                f" ({self._key('proposals')}) first.",
                severity="warning",
                title="Comment",
            )
            return None
        return section, proposal

    def action_comment(self) -> None:
        target = self._comment_target()
        if target is not None:
            self.ask_comment(target[0].id, target[1])

    @work(group="comment-prompts")
    async def ask_comment(self, section_id: str, proposal: str | None) -> None:
        """Ask for the comment's text (Escape: nothing is done), and add it as the custodian."""
        from ..screens.prompt import PromptScreen

        on = f"proposal {proposal} on {section_id}" if proposal else section_id
        question = f"Comment on {on} as {self.custodian} (@human:NAME addresses a human)"
        text = await self.app.push_screen_wait(PromptScreen(question))
        if text is not None:
            self.run_document(_comment_command(section_id, proposal, text))

    def action_resolve_comment(self) -> None:
        target = self._comment_target()
        if target is not None:
            self.pick_comment_to_resolve(*target)

    @work(group="comment-prompts")
    async def pick_comment_to_resolve(self, section: Section, proposal: str | None) -> None:
        """Pick one of the open comments on the proposal (or else the section) and resolve it;
        in the inbox on a comment, that comment is the only choice offered."""
        from ..screens.choose import ChooseScreen
        from ..widgets.comments import comments_of, resolve_choices

        shown = self.shown
        if shown is None:
            return
        found = comments_of(shown, section=None if proposal else section, proposal=proposal)
        open_ = [k for k in found if k.resolved_by is None]
        row = self.inbox_row if self.view == "inbox" else None
        if row is not None and row.kind == "comment":
            open_ = [k for k in open_ if k.id == row.ref]
        on = f"proposal {proposal}" if proposal else section.id
        if not open_:
            self.notify(f"No open comment on {on}.", severity="warning", title="Comment")
            return
        title = f"Resolve which comment on {on}?"
        chosen = await self.app.push_screen_wait(ChooseScreen(title, resolve_choices(open_, shown)))
        if chosen is not None:
            self.run_document({"op": "resolve-comment", "commentId": chosen})

    def action_share(self) -> None:
        """Ask where to write the document as the agent viewed sees it (``views.content``,
        through its barriers), as it is shown now; then write it and say where."""
        import re

        from engine.protocol.barriers import reads, sees
        from engine.protocol.views import content

        from ..screens.prompt import PromptScreen

        shown = self.shown
        if shown is None:
            return
        reader = shown.reader
        if reader is None:
            self.notify(
                f"View the document as an agent first ({self._key('view-as')}):"
                f" {self._key('share')} writes what that agent sees.",
                severity="warning",
                title="Share",
            )
            return
        doc = shown.doc
        text = content(doc, reader)  # what is seen now is what is written
        seen = sum(1 for s in doc.sections if sees(doc, reader, s))
        read = sum(1 for s in doc.sections if reads(doc, reader, s))
        said = f"{read} of {len(doc.sections)} sections"
        if read < seen:
            said += f", {seen - read} more as headings only"
        at = f"-e{shown.revision}" if self.position is not None else ""
        offered = re.sub(r"[^\w.-]+", "_", f"{shown.name}-as-{reader.name}{at}").strip("._")
        where = f"agent {reader.name}"

        def chosen(typed: str | None) -> None:
            if typed and typed.strip():
                self.write_share(typed.strip(), text, where, said)

        question = f"Write the document as {where} sees it ({said}) to"
        self.app.push_screen(PromptScreen(question, value=f"{offered}.md"), chosen)

    @work(group="export")
    async def write_share(self, typed: str, text: str, where: str, said: str) -> None:
        """Write ``text`` whole to ``typed`` and say where, or why not; nothing a path can be
        makes this crash, and a file that cannot be written is left as it was."""
        import asyncio
        from pathlib import Path

        from ..files import WriteError, write_atomically

        try:
            written = await asyncio.to_thread(write_atomically, Path(typed).expanduser(), text)
        except (WriteError, OSError, RuntimeError) as error:  # a folder gone, no home…
            self.notify(str(error), severity="error", title="Cannot share")
            return
        self.notify(f"Wrote {written}: the document as {where} sees it ({said})", title="Shared")

    # -- the proposal queue ---------------------------------------------------------------------
    @on(RowList.Highlighted, "#queue")
    def _proposal_highlighted(self, event: RowList.Highlighted) -> None:
        row: QueueRow | None = event.row
        self.proposal_id = row.key if row is not None else None

    def watch_proposal_id(self) -> None:
        # another proposal: read from its top (the bound pane draws it)
        self.query_one("#proposal-pane", VerticalScroll).scroll_home(animate=False, immediate=True)

    def watch_diff_side(self) -> None:
        self.query_one("#proposal-detail", DetailPane).redraw()  # the other layout

    def action_toggle_diff_layout(self) -> None:
        self.diff_side = not self.diff_side

    def _proposal_detail(self, shown: DocShown, proposal_id: str | None) -> RenderableType:
        """The queue's pane: the proposal under the cursor, its diff side by side or not."""
        palette = Palette.of(self.app.theme_variables)
        return proposal_detail(shown, proposal_id, self.diff_side, palette)

    @on(ProposalQueue.FilterAsked)
    def _ask_queue_filter(self) -> None:
        question = "Filter proposals: status:…, section:…, author:…, needs:me, or words"
        self.ask_filter(question, "queue_filter", QueueFilter.parse)

    @on(ProposalQueue.Act)
    def _proposal_act(self, event: ProposalQueue.Act) -> None:
        self.act_on_proposal(event.action, event.row, event.held)

    def _live_doc(self) -> Document | None:
        """The live document, if commands can run on it now (else it is said why not)."""
        name = self.document_name
        if name is None:
            return None
        if self.position is not None:
            self.notify(
                f"You are looking at the document after event #{self.position - 1}: press"
                f" {self._key('live')} to go back to live before acting.",
                severity="warning",
                title="The past is read-only",
            )
            return None
        if self.workspace.read_only:
            self.notify(
                "The workspace is open read-only: commands cannot run.",
                severity="warning",
                title="Read-only",
            )
            return None
        return self.workspace.document(name)

    def _refused(self, doc: Document, op: str, **fields: Any) -> bool:
        """Whether the engine refuses ``op`` on what ``fields`` name now (said as the command's
        refusal would be): asked before the custodian is asked anything (``decide.check``)."""
        from engine.protocol.commands import Actor
        from engine.protocol.decide import check
        from engine.protocol.errors import ProtocolError

        try:
            check(doc, Actor.human(self.custodian), self.now_ms, op, **fields)
        except ProtocolError as error:
            self.notify(str(error), severity="error", title="Refused")
            return True
        return False

    async def _ask(self, question: str, value: str = "") -> str | None:
        from ..screens.prompt import PromptScreen

        return await self.app.push_screen_wait(PromptScreen(question, value=value))

    async def _pick(self, title: str, picks: list[Pick]) -> str | None:
        from ..screens.pick import PickScreen

        return await self.app.push_screen_wait(PickScreen(title, picks))

    @work(group="queue-prompts")
    async def act_on_proposal(
        self, action: QueueAction, row: QueueRow, held: QueueRow | None = None
    ) -> None:
        """Check that the engine would take the command (a refusal is said before anything is
        asked), ask for the justification the record keeps, naming the proposal (Escape:
        nothing is done), then run the command as the custodian. It acts on the proposal
        highlighted (``held``), and says so if the row under the cursor is another one now."""
        from ..asking import describe_proposal, held_note

        doc = self._live_doc()
        if doc is None:
            return
        pid, note = held_note(doc, held, row)
        order = self.query_one(ProposalQueue).order()  # the rows as the custodian saw them
        if action == "choose":
            await self._choose_side(doc, pid, note, order)
            return
        if self._refused(doc, action, proposal_id=pid):
            return
        what = describe_proposal(doc, pid) + (f"\n{note}" if note else "")
        if action == "approve":
            why = await self._ask(f"Approve {what}\nIt merges at once: why?")
            if why is not None:
                await self._decide(pid, order, {"op": "approve", "proposalId": pid, "why": why})
        elif action == "reject":
            reason = await self._ask(f"Reject {what}\nThe reason:")
            if reason is not None:
                command = {"op": "reject", "proposalId": pid, "reason": reason}
                await self._decide(pid, order, command)
        elif action == "force-merge":
            why = await self._ask(f"Force-merge {what}\nIt merges past its policy: why?")
            if why is not None:
                command = {"op": "force-merge", "proposalId": pid, "why": why}
                await self._decide(pid, order, command)
        elif action == "revert":
            await self._revert(doc, pid, what)

    async def _decide(self, pid: str, order: list[str], command: dict[str, Any]) -> None:
        """Run ``command``, a decision on proposal ``pid``; once it is applied, the queue's
        cursor goes on to the next open proposal (``order``: the queue's rows when the
        decision was asked for), not with ``pid`` down among the closed ones."""
        if await self.run_document(command).wait() is not None:
            self.query_one(ProposalQueue).go_on_from(pid, order)

    async def _revert(self, doc: Document, pid: str, what: str) -> None:
        """Say what the revert becomes (merged at once, or waiting as the policy says), offer
        "revert now" (an override, merged at once) when it would wait, then ask why."""
        from engine.protocol.commands import Actor
        from engine.protocol.decide import revert_outcome
        from engine.protocol.errors import ProtocolError

        from ..screens.choose import Choice, ChooseScreen

        try:
            outcome = revert_outcome(doc, Actor.human(self.custodian), self.now_ms, pid)
        except ProtocolError as error:
            self.notify(str(error), severity="error", title="Refused")
            return
        now = False
        if not outcome.at_once:
            choices = [
                Choice("p", f"revert as the policy says: it {outcome.says}", "policy"),
                Choice("n", "revert now: it merges at once, past the policy (an override)", "now"),
            ]
            title = f"Revert {what}\nA revert {outcome.says}."
            how = await self.app.push_screen_wait(ChooseScreen(title, choices))
            if how is None:
                return
            now = how == "now"
        if now:
            why = await self._ask(f"Revert {what} now (an override, recorded): why?")
            if why is not None:
                command = {"op": "revert", "proposalId": pid, "now": True, "why": why}
                self.run_document(command)
            return
        said = outcome.says if outcome.at_once else f"it {outcome.says}"
        why = await self._ask(f"Revert {what}\nThe revert {said}. Why?")
        if why is not None:
            self.run_document({"op": "revert", "proposalId": pid, "summary": why})

    async def _choose_side(self, doc: Document, pid: str, note: str, order: list[str]) -> None:
        """Settle the conflict of proposal ``pid``: pick one side, or the three-way result."""
        from ..asking import describe_proposal, side_picks

        proposal = doc.proposals.get(pid)
        group = doc.conflicts.get(proposal.conflict) if proposal and proposal.conflict else None
        if proposal is None or group is None:
            self.notify(f"{pid} is in no conflict.", severity="warning", title="Choose")
            return
        section = doc.by_key[proposal.section]
        if self._refused(doc, "resolve", section_id=section.id):
            return
        title = f"Choose for the conflict on “{section.title}” ({section.id}) of " + (
            describe_proposal(doc, pid) + (f"\n{note}" if note else "")
        )
        choice = await self._pick(title, side_picks(doc, group, MERGED))
        if choice is None:
            return
        content = None
        if choice == MERGED and group.merged is not None:
            content = await self._edit_merged(group.id, group.merged)
            if content is None:
                return
        try:
            check_choice(group, choice, content)  # a wrong choice asks no more
        except ValueError as error:
            self.notify(str(error), severity="error", title="Choose")
            return
        chosen = "the three-way result" if choice == MERGED else describe_proposal(doc, choice)
        why = await self._ask(f"Choose {chosen}\nJustification (kept with the decision):")
        if why is None:
            return
        await self._decide(pid, order, choose_command(section.id, group, choice, why, content))

    async def _edit_merged(self, conflict_id: str, merged: str) -> str | None:
        """The three-way result as the custodian settles its overlaps (None: cancelled)."""
        from .edit import EditScreen

        if visible(merged, multiline=True) != merged:  # an editor would show them raw
            self.notify(
                "The three-way result holds control characters: choose a side.",
                severity="error",
                title="Choose",
            )
            return None
        title = f"The three-way result of {conflict_id}: settle each overlap, then ctrl+s"
        edited: str | None = await self.app.push_screen_wait(EditScreen(title, merged))
        return edited

    # -- the salience heatmap -------------------------------------------------------------------
    @on(SalienceHeatmap.CellHighlighted)
    def _cell_highlighted(self, event: SalienceHeatmap.CellHighlighted) -> None:
        self.heat_cell = event.cell

    @on(SalienceHeatmap.FilterAsked)
    def _ask_heat_filter(self) -> None:
        question = "Filter the heatmap: min:N, agent:…, section:…, sort:name|total, sort:max"
        self.ask_filter(question, "heat_filter", HeatFilter.parse)

    @on(SalienceHeatmap.SortAsked)
    def _next_sort(self, event: SalienceHeatmap.SortAsked) -> None:
        self.heat_filter = next_sort(self.heat_filter, event.axis)

    @on(RowList.Highlighted, "#agents")
    def _agent_highlighted(self, event: RowList.Highlighted) -> None:
        row: AgentRow | None = event.row
        self.agent_id = row.key if row is not None else None

    def watch_agent_id(self) -> None:
        self.query_one("#agent-pane", VerticalScroll).scroll_home(
            animate=False, immediate=True
        )  # its top (the bound pane draws the agent)

    def _agent_detail(self, shown: DocShown, agent_id: str | None) -> RenderableType:
        """The agents view's pane: the agent, and what the servers heard from its key."""
        return agent_detail(shown, agent_id, self.key_activity)

    @on(AgentRoster.Act)
    def _agent_act(self, event: AgentRoster.Act) -> None:
        if event.action == "disclosure":
            agent = self.shown.doc.agents.get(event.row.key) if self.shown is not None else None
            if agent is not None:
                self.run_worker(self.set_disclosure(agent.name, agent.disclosure))
            return
        self.act_on_agent(event.action, event.row.name, event.row.trust)

    @work(group="agent-prompts")
    async def act_on_agent(self, action: str, agent: str, trust: str) -> None:
        """Check first (an agent gone, a level that is none: refused before anything is asked),
        then pick the level and ask why, naming the agent."""
        from engine.protocol.model import TRUST_LEVELS

        from ..asking import describe_agent, level_picks

        doc = self._live_doc()
        if doc is None or self._refused(doc, action, agent=agent):
            return
        found = doc.agent_named(agent) or next(
            (a for a in doc.agents.values() if a.name == agent), None
        )
        if found is None:
            return
        what = describe_agent(doc, found)
        if action == "trust":
            level = await self._pick(f"Trust for {what}", level_picks(TRUST_LEVELS, trust))
            if level is None or self._refused(doc, "trust", agent=agent, level=level):
                return
            why = await self._ask(f"Trust {level} for {what}: why?")
            if why is not None:
                self.run_document({"op": "trust", "agent": agent, "level": level, "why": why})
        elif action == "clearance":
            if doc.framework is None:
                self.notify(
                    "The document has no classification framework yet: classify a section first.",
                    severity="error",
                    title="Refused",
                )
                return
            name, levels = doc.framework
            level = await self._pick(
                f"Clearance for {what} (framework {name})", level_picks(levels, found.clearance)
            )
            if level is not None:
                self.run_document({"op": "clearance", "agent": agent, "level": level})
        elif action == "remove":
            why = await self._ask(f"Remove {what} from the document: why?")
            if why is not None:
                self.run_document({"op": "remove", "agent": agent, "why": why})

    def _follow_events(self, shown: DocShown) -> None:
        """With a filter, search the events the search has not seen yet (all of them, for a
        new filter, document or reader); the list reads the pages it shows by itself."""
        if not self.event_filter.strip():
            if self.event_search is not None:
                self.event_search = None
            return
        reader = shown.reader.id if shown.reader is not None else None
        search = self.event_search
        if (
            search is not None
            and (search.name, search.wanted, search.reader)
            == (shown.name, self.event_filter, reader)
            and search.searched == shown.revision
        ):
            return  # nothing new
        self.search_events(shown, self.event_filter)

    def watch_event_filter(self) -> None:
        if self.shown is not None:
            self._follow_events(self.shown)

    @work(exclusive=True, group="event-search")
    async def search_events(self, shown: DocShown, wanted: str) -> None:
        """Search every event of the document up to ``shown.revision`` for the filter
        ``wanted`` (as ``shown.reader`` sees them), a page of the store's at a time, saying
        after each page how many it searched; a search of the same filter goes on from where
        the last one stopped."""
        from dataclasses import replace

        from engine.protocol.audit import EventFilter
        from engine.protocol.errors import ProtocolError
        from engine.protocol.filters import section_titles
        from engine.protocol.views import redact

        name, reader = shown.name, shown.reader
        reader_id = reader.id if reader is not None else None
        keep = EventFilter.parse(wanted)
        if keep.sections:  # section: matches a title word the reader may read, as elsewhere
            keep = replace(keep, titles=section_titles(shown.doc, reader))
        before = self.event_search
        if (
            before is not None
            and (before.name, before.wanted, before.reader) == (name, wanted, reader_id)
            and before.searched <= shown.revision
        ):
            found, searched = list(before.found), before.searched
        else:
            found, searched = [], 0
            self.event_search = EventSearch(name, wanted, reader_id, (), 0, False)
        try:
            async for page in self.workspace.document_pages(
                name, searched, SEARCH_PAGE, shown.revision
            ):
                for event in page:
                    seen = event if reader is None else redact(shown.doc, reader, event)
                    if keep.keeps_event(seen):
                        found.append(event["sequenceNumber"])
                searched = page[-1]["sequenceNumber"] + 1
                done = searched >= shown.revision
                self.event_search = EventSearch(
                    name, wanted, reader_id, tuple(found), searched, done
                )
        except (ProtocolError, StoreError) as error:
            self.notify(str(error), severity="error", title="Events")
            return
        if searched >= shown.revision:
            self.event_search = EventSearch(name, wanted, reader_id, tuple(found), searched, True)

    @on(EventList.PagesWanted)
    def _event_pages_wanted(self, event: EventList.PagesWanted) -> None:
        self.read_event_pages(event.name, event.pages)

    @work(group="event-pages")
    async def read_event_pages(self, name: str, pages: tuple[int, ...]) -> None:
        """Read the events of ``pages`` (``PAGE`` sequence numbers each) for the events view."""
        from engine.protocol.errors import ProtocolError

        events = self.query_one(EventList)
        try:
            for page in pages:
                start = page * PAGE
                async for read in self.workspace.document_pages(name, start, PAGE, start + PAGE):
                    events.add_events(name, read)
        except (ProtocolError, StoreError) as error:
            self.notify(str(error), severity="error", title="Events")

    @on(RowList.Highlighted, "#events")
    def _event_highlighted(self, event: RowList.Highlighted) -> None:
        row = event.row
        self.event_sequence = row.sequence if row is not None and not row.loading else None

    def watch_event_sequence(self) -> None:
        # another event: read from its top (the bound pane draws it)
        self.query_one("#event-pane", VerticalScroll).scroll_home(animate=False, immediate=True)

    def _event_detail(self, shown: DocShown, sequence: int | None) -> RenderableType:
        """The events view's pane: the event under the cursor."""
        event = self.query_one(EventList).event(sequence) if sequence is not None else None
        return event_detail(shown, event)

    @on(RowList.Selected, "#events")
    def _read_event(self, event: RowList.Selected) -> None:
        """The event under the cursor, its payload whole, however long."""
        from .reader import ReaderScreen

        shown, row = self.shown, event.row
        found = self.query_one(EventList).event(row.sequence) if not row.loading else None
        if shown is not None and found is not None:
            text = event_detail(shown, found, whole=True).plain
            self.app.push_screen(ReaderScreen(f"event #{row.sequence}", text))

    @on(EventList.FilterAsked)
    def _ask_event_filter(self) -> None:
        self.ask_filter("Filter events: type:…, agent:…, section:…, or words", "event_filter")

    @on(EventList.ExportAsked)
    def _ask_export(self) -> None:
        self.export_audit()

    @work(group="audit-export")
    async def export_audit(self) -> None:
        """Ask for a file, then write the audit trail there (as its suffix says: .md, .json or
        .csv) with the events view's filter: the same text as ``pact-tui doc audit``. A file
        that exists, a folder that does not or an unknown suffix: said, nothing written."""
        from dataclasses import replace

        from engine.protocol.audit import EventFilter
        from engine.protocol.errors import ProtocolError
        from engine.protocol.filters import section_titles

        from ..audit import SUFFIXES, Tally, audit_chunks, form_of
        from .prompt import PromptScreen

        name, shown = self.document_name, self.shown
        if name is None or shown is None:
            return
        wanted = self.event_filter.strip()
        said = f" (filter: {wanted})" if wanted else ""
        answer = await self.app.push_screen_wait(
            PromptScreen(
                f"Write the audit trail of {name}{said} to which file? (.md, .json or .csv)",
                value=f"{name}-audit.md",
            )
        )
        if answer is None or not answer.strip():
            return
        path = Path(answer.strip()).expanduser().absolute()
        if path.suffix.lower() not in (*SUFFIXES.values(), ".markdown"):
            self.notify(
                f"{path.name}: the file's name must end in .md, .json or .csv; nothing written",
                severity="error",
                title="Export",
            )
            return
        form = form_of(path.suffix, "md")
        until = shown.revision if self.position is not None else None
        tally = Tally()

        def counted(now: Tally) -> None:
            nonlocal tally
            tally = now

        try:
            with path.open("x", encoding="utf-8", newline="") as out:
                try:
                    async for chunk in audit_chunks(
                        self.workspace,
                        name,
                        replace(
                            EventFilter.parse(wanted),
                            titles=section_titles(shown.doc, None),
                        ),
                        form,
                        described=wanted,
                        until=until,
                        progress=counted,
                    ):
                        out.write(chunk)
                except BaseException:
                    out.close()
                    path.unlink(missing_ok=True)  # half a trail is no trail
                    raise
        except FileExistsError:
            self.notify(
                f"{path} exists: choose another name; nothing written",
                severity="error",
                title="Export",
            )
            return
        except (OSError, StoreError, ProtocolError) as error:
            self.notify(f"{path}: {error}; nothing written", severity="error", title="Export")
            return
        self.notify(
            f"Audit of {name}: {tally.kept:,} of {tally.searched:,} events"
            f" ({tally.overrides:,} overrides) written to {path}",
            title="Export",
        )

    def ask_filter(
        self, question: str, field: str, parse: Callable[[str], object] | None = None
    ) -> None:
        """Ask for a view's filter (``-`` clears it) and set the screen's reactive ``field``;
        one that ``parse`` refuses is a notification, and the filter stays as it was."""
        from ..screens.prompt import PromptScreen

        def chosen(text: str | None) -> None:
            if text is None:
                return
            text = "" if text.strip() == "-" else text.strip()
            if parse is not None:
                try:
                    parse(text)
                except ValueError as error:
                    self.notify(str(error), severity="error", title="Filter")
                    return
            setattr(self, field, text)

        self.app.push_screen(
            PromptScreen(f"{question} (- clears)", value=getattr(self, field)), chosen
        )

    def action_view_as_agent(self) -> None:
        """Ask which agent's eyes to see through; viewing as one already: back to your own."""
        from ..screens.pick import PickScreen

        if self.viewing_as is not None:
            self.view_as(None)
            return
        shown = self.shown
        if shown is None or not shown.doc.agents:
            self.notify("No agent on this document.", severity="warning")
            return
        from ..asking import agent_picks

        def chosen(name: str | None) -> None:
            if name is not None:
                self.view_as(name)

        self.app.push_screen(PickScreen("View as which agent?", agent_picks(shown.doc)), chosen)

    def view_as(self, name: str | None) -> None:
        """Every view through ``name``'s barriers (None: the custodian's own view)."""
        if name is None:
            self.viewing_as = None
            return
        agent = self.shown.doc.agent_named(name) if self.shown is not None else None
        if agent is None and self.shown is not None:
            agent = next((a for a in self.shown.doc.agents.values() if a.name == name), None)
        if agent is None:
            self.notify(f"no agent named {name!r}", severity="error")
            return
        self.viewing_as = agent.id

    def action_view_as_custodian(self) -> None:
        self.view_as(None)

    def watch_viewing_as(self) -> None:
        self._show()
        self._show_section()  # the section under the cursor, through the new reader's barriers

    @staticmethod
    def help_groups(keymap: Mapping[str, str] | None = None) -> list[tuple[str, list[BindingType]]]:
        """The help page's keys of this screen and of each of its views (titled with the key
        that shows the view, in ``keymap``)."""
        from ..keymap import key_shown

        def titled(view: str, action_id: str) -> str:
            return f"{view} ({key_shown(action_id, keymap or {})})"

        return [
            ("Document", list(DocumentScreen.BINDINGS)),
            (titled("Proposal queue", "proposals"), list(ProposalQueue.BINDINGS)),
            (titled("Heatmap", "heatmap"), list(SalienceHeatmap.BINDINGS)),
            (titled("Inbox", "inbox"), list(EscalationInbox.BINDINGS)),
            (titled("Agents", "agents"), list(AgentRoster.BINDINGS)),
            (titled("Events", "events"), list(EventList.BINDINGS)),
            ("Lists", [*CursorPane.BINDINGS, *RowList.BINDINGS]),
        ]

    @staticmethod
    def legends() -> list[Any]:
        return []

    def system_commands(self) -> Any:
        """The palette's commands of this screen: view as each agent, and back."""
        from functools import partial

        from textual.app import SystemCommand

        shown = self.shown
        if shown is not None:
            for agent in shown.doc.agents.values():
                yield SystemCommand(
                    f"View as agent {visible(agent.name)}",
                    "see the document through its barriers",
                    partial(self.view_as, agent.name),
                )
        yield SystemCommand(
            "View as the custodian", "see everything again", self.action_view_as_custodian
        )
        from .custodian import menu

        if shown is not None:
            section = shown.doc.section(self.section_id) if self.section_id else None
            for item in menu(shown.doc, section):
                yield SystemCommand(
                    f"Custodian: {item.label}",
                    "the custodian's powers (also under !)",
                    partial(self.custodian_action, item.action),
                )
        yield from self.time_commands()
        yield SystemCommand(
            "Set the time step",
            f"how far '{self._key('advance')}' steps protocol time",
            self.action_set_step,
        )
        yield SystemCommand(
            "Step protocol time", "by the step, firing what is due", self.action_step_time
        )


def _comment_command(section_id: str, proposal: str | None, text: str) -> dict[str, Any]:
    command = {"op": "comment", "sectionId": section_id, "text": text}
    return command if proposal is None else {**command, "proposalId": proposal}


WRITE, DECIDE = "\x00write", "\x00decide"  # the resolve picker's two choices beside proposals


def resolved_words(
    doc: Document, section_id: str, version: int, chosen: str | None, content: str | None
) -> str:
    """What a resolution did to the section: the proposal merged, the text put in, or the
    decision recorded with the section as it was; and how many open proposals it rejected."""
    section = doc.by_id[section_id]
    if chosen is not None:
        did = f"merged proposal …{chosen[-8:]} ({doc.proposals[chosen].status.lower()})"
    elif content is not None:
        did = "put your text in the section"
    else:
        did = "recorded your decision"
    moved = (
        f"{section_id} is now v{section.version}"
        if section.version != version
        else f"{section_id} is unchanged (v{version})"
    )
    open_now = len(doc.open_on(section.key))
    return f"{did}: {moved}; {open_now} open proposal(s) left there."


def resolve_command(
    section_id: str, decision: str, justification: str, override: str | bool
) -> dict[str, Any]:
    """The ``resolve`` command for a section (``override``: a yes/no answer or a bool)."""
    if isinstance(override, str):
        override = override.strip().lower() in ("y", "yes", "true", "1")
    return {
        "op": "resolve",
        "sectionId": section_id,
        "decision": decision,
        "justification": justification,
        "override": override,
    }


def cell_text(shown: DocShown, cell: tuple[str, int] | None) -> Text:
    """One heatmap cell: the agent's salience on the section, its intents and its constraints
    there, at the custodian's disclosure (level 4: everything)."""
    from engine.protocol.barriers import reads
    from engine.protocol.views import constraint_row

    doc = shown.doc
    agent = doc.agents.get(cell[0]) if cell is not None else None
    section = doc.by_key.get(cell[1]) if cell is not None else None
    if agent is None or section is None or not reads(doc, shown.reader, section):
        return Text("No cell under the cursor.", style="dim")
    score = doc.salience.get((agent.id, section.key))
    text = Text()
    text.append(f"{visible(agent.name)} on {visible(section.id)}\n", "bold")
    text.append(f"salience {score}\n" if score is not None else "salience not set (reviews at 5)\n")
    for line in standing(doc, agent.id, section.key):
        text.append(f"{visible(line)}\n", "bold")
    intents = [doc.intents[i] for i in doc.intents_on.get(section.key, ())]
    mine = [i for i in intents if i.author == agent.id]
    text.append(f"\nIntents ({len(mine)}):\n", "bold")
    for intent in mine:
        category = f" [{visible(intent.category)}]" if intent.category else ""
        text.append(f"  {intent.status}: {visible(intent.goal)}{category}\n")
    constraints = [k for k in doc.constraints_of(section.key) if k.author == agent.id]
    text.append(f"\nConstraints ({len(constraints)}):\n", "bold")
    for constraint in constraints:
        row = constraint_row(doc, constraint, 4)
        state = "withdrawn" if constraint.withdrawn else row.get("compatibility", "unknown")
        text.append(f"  {visible(row['boundary'])} ({state})\n")
        for key in ("category", "reasoning"):
            if row.get(key):
                text.append(f"    {key}: {visible(str(row[key]))}\n", "dim")
    return text


def document_diff(
    base: Document,
    base_at: int,
    doc: Document,
    at: int,
    palette: Palette,
    reader: Agent | None = None,
) -> RenderableType:
    """What changed in the document from its first ``base_at`` events to its first ``at``
    (named as the events view numbers events: after event #``base_at - 1``): the sections added,
    removed and changed (with their versions), then the content's diff; as ``reader`` (None:
    the custodian) may see them."""
    from engine.protocol.barriers import sees
    from engine.protocol.views import content

    from ..widgets.queue import diff_renderable

    head = Text()
    head.append(f"Diff: after event #{base_at - 1} → after event #{at - 1}\n", "bold")
    before = {s.id: s for s in base.sections if sees(base, reader, s)}
    after = {s.id: s for s in doc.sections if sees(doc, reader, s)}
    added = [f"{i} v{after[i].version}" for i in after if i not in before]
    removed = [f"{i} v{before[i].version}" for i in before if i not in after]
    changed = [
        f"{i} v{before[i].version}→v{after[i].version}"
        for i in after
        if i in before and before[i].content != after[i].content
    ]
    for label, ids in (("added", added), ("removed", removed), ("changed", changed)):
        head.append(f"{label}: {', '.join(visible(i) for i in ids) or '-'}\n")
    old, new = content(base, reader), content(doc, reader)
    return Group(head, diff_renderable(old, new, False, ("before", "after"), palette))
