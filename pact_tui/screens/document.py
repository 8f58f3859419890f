"""The custodian's screen: one document of the workspace, its views side by side with what
the selected thing is, live, acted on from the keyboard as the human custodian.

The screen follows ``docs/screens.md``: its state is the reactives below; ``shown`` (a
``DocShown``) is derived from them and every view is bound to it; views post messages back;
only the screen talks to the workspace, and every action goes through
``Workspace.run_document`` as ``Actor.human(custodian)``, a refusal shown as a notification.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import ContentSwitcher, Markdown, Static

from engine.store import StoreError
from engine.visible import visible
from engine.workspace import Change, Workspace

from ..types import DocShown
from ..widgets.footer import FittedFooter
from ..widgets.outline import OutlineRow, SectionOutline
from ..widgets.rows import RowList

if TYPE_CHECKING:
    from engine.protocol.decide import Decision

    from ..app import PactApp

TICK_S = 1.0  # how often countdowns are redrawn and due work is looked for
VIEWS = ("outline",)  # the views, in the order of their keys


class DocumentScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("o", "view('outline')", "Outline", tooltip="the section tree and its marks"),
        Binding("D", "next_document", "Next doc", tooltip="show the workspace's next document"),
        Binding("t", "tick", "Fire due", show=False, tooltip="fire what is due now"),
    ]

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

    # -- derived -------------------------------------------------------------------------------
    documents: var[tuple[str, ...]] = var((), init=False)
    """Every document of the workspace, by name."""
    shown: var[DocShown | None] = var(None, init=False)
    """What every view draws: (document_name, revision, now_ms), through the custodian's eyes."""

    def compose(self) -> Any:
        yield Static(id="doc-status")
        with Horizontal(id="doc-body"):
            with ContentSwitcher(initial="outline", id="doc-views"):
                yield SectionOutline(id="outline").data_bind(shown=DocumentScreen.shown)
            with Vertical(id="doc-detail"):
                yield Markdown(id="section-markdown")
        yield FittedFooter(compact=True)

    @property
    def workspace(self) -> Workspace:
        app: PactApp = self.app  # type: ignore[assignment]
        assert app.workspace is not None
        return app.workspace

    @property
    def custodian(self) -> str:
        app: PactApp = self.app  # type: ignore[assignment]
        return app.custodian

    async def on_mount(self) -> None:
        app: PactApp = self.app  # type: ignore[assignment]
        app.workspace_changed.subscribe(self, self._on_workspace_changed)
        self.now_ms = app.clock() // 1_000_000
        self.set_interval(TICK_S, self._on_clock)
        self.query_one(SectionOutline).focus()
        self._open_first(app.initial_document)

    @work(exclusive=True, group="documents")
    async def _open_first(self, wanted: str | None) -> None:
        try:
            names = tuple(await self.workspace.document_names())
        except StoreError as error:
            self.notify(visible(str(error)), severity="error", title="Documents", markup=False)
            return
        self.documents = names
        if wanted is not None and wanted not in names:
            self.notify(
                visible(f"no document named {wanted!r}; showing the first"),
                severity="warning",
                markup=False,
            )
        if not names:
            self.query_one("#doc-status", Static).update(
                "No documents in this workspace yet: make one with `pact-tui doc create`."
            )
            return
        await self._load(wanted if wanted in names else names[0])

    async def _load(self, name: str) -> None:
        from engine.protocol.errors import ProtocolError

        try:
            await self.workspace.load_document(name)
        except (ProtocolError, StoreError) as error:
            self.notify(visible(str(error)), severity="error", title="Document", markup=False)
            return
        self.document_name = name

    # -- deriving what is shown -----------------------------------------------------------------
    def watch_document_name(self) -> None:
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
        self.shown = DocShown(name, doc, doc.sequence, self.now_ms, self.custodian)

    def watch_shown(self, shown: DocShown | None) -> None:
        status = self.query_one("#doc-status", Static)
        if shown is None:
            return
        doc = shown.doc
        pending = sum(len(v) for v in doc.open_by_section.values())
        status.update(
            visible(
                f" {shown.name} · v{doc.version} · {len(doc.sections)} sections ·"
                f" {len(doc.active)} agents · {pending} open proposals · as {shown.custodian}"
                f"{' · read-only' if self.workspace.read_only else ''}"
            )
        )

    def watch_section_id(self) -> None:
        self._show_section()

    def _show_section(self) -> None:
        shown, section_id = self.shown, self.section_id
        markdown = self.query_one("#section-markdown", Markdown)
        if shown is None or section_id is None:
            markdown.update("")
            return
        section = shown.doc.section(section_id, shown.now_ms)
        markdown.update(section.content if section is not None else "")

    @on(RowList.Highlighted, "#outline")
    def _section_highlighted(self, event: RowList.Highlighted) -> None:
        row: OutlineRow | None = event.row
        self.section_id = row.key if row is not None else None
        self._show_section()

    # -- live changes and time ------------------------------------------------------------------
    def _on_workspace_changed(self, change: Change) -> None:
        if self.document_name is not None and self.document_name in change.documents:
            self.revision = self.workspace.document(self.document_name).sequence
        if any(name not in self.documents for name in change.documents):
            self._refresh_documents()

    @work(exclusive=True, group="documents-list")
    async def _refresh_documents(self) -> None:
        self.documents = tuple(await self.workspace.document_names())

    def _on_clock(self) -> None:
        app: PactApp = self.app  # type: ignore[assignment]
        self.now_ms = app.clock() // 1_000_000
        shown = self.shown
        if shown is None or self.workspace.read_only:
            return
        timers = shown.doc.timers
        if timers and timers[0][0] <= self.now_ms:  # something is due: fire it here
            self.fire_due()

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
        except (ProtocolError, StoreError) as error:
            self.notify(visible(str(error)), severity="error", title="Due work", markup=False)
            return
        self._applied(name, decision)

    # -- acting as the custodian ----------------------------------------------------------------
    @work(group="document-commands")
    async def run_document(self, command: dict[str, Any]) -> dict[str, Any] | None:
        """Run one protocol command as the human custodian; a refusal is a notification."""
        from engine.protocol.commands import Actor
        from engine.protocol.errors import ProtocolError

        name = self.document_name
        if name is None:
            return None
        if self.workspace.read_only:
            self.notify(
                "The workspace is open read-only: commands cannot run.",
                severity="warning",
                title="Read-only",
            )
            return None
        try:
            decision = await self.workspace.run_document(name, command, Actor.human(self.custodian))
        except (ProtocolError, StoreError) as error:
            self.notify(visible(str(error)), severity="error", title="Refused", markup=False)
            return None
        self._applied(name, decision)
        return decision.result

    def _applied(self, name: str, decision: Decision) -> None:
        if name == self.document_name:
            self.revision = self.workspace.document(name).sequence

    # -- views and documents --------------------------------------------------------------------
    def action_view(self, view: str) -> None:
        if view in VIEWS:
            self.view = view

    def watch_view(self, view: str) -> None:
        switcher = self.query_one("#doc-views", ContentSwitcher)
        switcher.current = view
        self.query_one(f"#{view}").focus()

    def action_next_document(self) -> None:
        names = self.documents
        if not names:
            return
        at = names.index(self.document_name) if self.document_name in names else -1
        self.switch_document(names[(at + 1) % len(names)])

    @work(exclusive=True, group="documents")
    async def switch_document(self, name: str) -> None:
        await self._load(name)
