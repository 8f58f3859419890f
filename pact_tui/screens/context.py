"""The context inspector: the tree, the detail, the provider view, step control, time travel,
diffs and the selector bar, for one context of the workspace at a time.

The screen follows ``docs/screens.md``: its state is the reactives below; watchers derive what
is shown from them; widgets are bound to what they draw and post messages back; only the screen
talks to the workspace.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import SystemCommand
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.timer import Timer
from textual.widgets import ContentSwitcher, OptionList

from engine.context import ContextError, ContextResult, ContextView, InvalidSelector, Node
from engine.context.query import check_fields, index_served
from engine.context.selector_ast import Selector
from engine.context.selectors import check_input_selector, parse_selector
from engine.context.tree_diff import TreeDiff
from engine.masterlog.errors import MasterLogError
from engine.store import StoreError
from engine.store.opening import where_shown
from engine.visible import visible
from engine.workspace import Change, ContextInfo, SnapshotEntry, Workspace

from ..export import (
    SUFFIXES,
    Format,
    Where,
    changelog_json,
    changelog_markdown,
    diff_json,
    diff_markdown,
    format_of,
    provider_json,
    provider_markdown,
)
from ..files import WriteError, write_atomically
from ..jump import JumpError, Place, find_place
from ..keymap import bind
from ..provider import provider_changes
from ..reasons import Reasons
from ..reference_items import Badges, ItemSource, judge, made_from, reference_of, source_of
from ..tree_diff import ghosts_of
from ..tree_layout import Row, TreeLayout
from ..types import (
    Account,
    Comparison,
    Mark,
    ProviderChanges,
    RowFilter,
    Selection,
    SelectorProblem,
    Shown,
    Told,
)
from ..widgets.changelog import ChangeLine, ChangelogList
from ..widgets.context_list import ContextList, fork_point
from ..widgets.context_tree import (
    PROVIDER_LEGEND,
    TREE_LEGEND,
    Bookmark,
    ContextTree,
    LinePane,
    ProviderList,
)
from ..widgets.context_tree import preview as json_preview
from ..widgets.cursor import CursorPane
from ..widgets.detail import NodeDetail, Subject
from ..widgets.footer import FittedFooter
from ..widgets.scrubber import TIMELINE_LEGEND, Scrubber
from ..widgets.selector_bar import SelectorBar
from ..widgets.status import STATUS_LEGEND, Status, StatusBar, deep_verified, display_path
from .choose import Choice, ChooseScreen
from .confirm import ConfirmScreen
from .help import SELECTOR_SECTION, Legend
from .prompt import PromptScreen
from .reader import ReaderScreen
from .timetravel import TimeTravel

if TYPE_CHECKING:
    from engine.context.changelog import Changelog
    from engine.context.commands import ContextCommand
    from engine.workspace import StepChanges

    from ..app import PactApp
    from ..logsession import LogSession

SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0)  # seconds per step while playing
SELECT_DELAY = 0.12  # seconds of quiet typing before a selector is evaluated
SYNC_SELECT_ITEMS = 5_000
"""A selector that must scan a view of more items than this is matched in a thread, off the
input's path (one that the indexes answer is matched at once, whatever the size)."""
STORY_DELAY = 0.1  # seconds the cursor rests on an item before its story is read from the log
SYNC_DIFF_ITEMS = 20_000  # items a diff compares one by one in the handler; more: in a thread
REBUILD_FOR_PROVIDER = 20_000  # items: a context this small is rebuilt for the marks
COMMAND_ACTIONS = frozenset({"message", "advance", "seal"})  # the actions that write
WIDE = 100  # columns from which the context list is shown at start (narrower: the tree's room)
CLIPBOARD_LARGE = 100_000  # characters: more than some terminals take through OSC 52
EXPORTS = {  # what can be exported
    "provider": "provider rendering",
    "changelog": "changelog",
    "diff": "diff",
}
FORM_NAMES = {"markdown": "Markdown", "json": "JSON"}
LEGEND: list[Legend] = [  # the help page (?) under the keys
    SELECTOR_SECTION,
    ("The tree: glyphs and badges (hover a row for its own)", TREE_LEGEND),
    ("The provider view (v)", PROVIDER_LEGEND),
    ("The timeline", TIMELINE_LEGEND),
    ("The status line", STATUS_LEGEND),
]


@dataclass(frozen=True, slots=True)
class DiffBase:
    """One end of a diff: a snapshot (its index in the context's list), or a state held as it
    was when ``d`` was pressed at live (``view``; it does not move as live does). Held, it is
    named for the newest snapshot when nothing has happened since (same state), else for its
    episode (``index`` None: newer than every snapshot)."""

    snapshot_id: str | None
    index: int | None
    view: ContextView | None = None
    name: str = ""  # as the header and the detail say it: "n64", "e3 held"


class ContextScreen(TimeTravel):
    # The tree has the focus from the start: focusing the first focusable widget (the context
    # list) and then the tree restyled both before the first frame (4 ms at 100k).
    AUTO_FOCUS = "#tree"
    BINDINGS: ClassVar[list[BindingType]] = [
        bind("user-message", "message('user')", "User", tooltip="add a user message (a new turn)"),
        bind(
            "assistant-message",
            "message('assistant')",
            "Assistant",
            tooltip="add an assistant message",
        ),
        bind("advance", "advance", "Advance", tooltip="advance one episode (expire, rehydrate)"),
        bind("seal", "seal", "Seal", tooltip="seal a named snapshot"),
        *TimeTravel.TIME_BINDINGS,
        bind("play", "play", "Play", tooltip="play/pause automatic stepping"),
        bind("faster", "play_faster", "Faster", show=False, tooltip="play faster"),
        bind("slower", "play_slower", "Slower", show=False, tooltip="play slower"),
        bind("search", "search", "Select", tooltip="type a selector; matches highlight"),
        bind("next", "next_match", "Next match", show=False, tooltip="next selector match"),
        bind("previous", "previous_match", "Prev match", show=False, tooltip="previous match"),
        bind("close", "clear_selector", "Clear", show=False, tooltip="clear the selector"),
        bind("provider", "toggle_provider", "Provider", tooltip="tree ↔ what the model is sent"),
        bind(
            "read",
            "read_content",
            "Read",
            show=False,
            tooltip="read the item's whole content (a reference item: beside its original)",
        ),
        bind(
            "jump",
            "to_master_log",
            "Master log",
            show=False,
            tooltip="a reference item: its line on the master-log screen (J there comes back)",
        ),
        bind(
            "fold-history", "fold_history", "Fold history", show=False, tooltip="fold history turns"
        ),
        bind("unfold-all", "unfold_all", "Unfold all", show=False, tooltip="unfold everything"),
        bind(
            "focus-contexts",
            "focus_contexts",
            "Contexts",
            show=False,
            tooltip="focus the context list",
        ),
        # -- the layout --
        bind(
            "toggle-contexts",
            "toggle_contexts",
            "List",
            show=False,
            tooltip="hide/show the context list",
        ),
        bind(
            "toggle-detail",
            "toggle_detail",
            "Detail",
            show=False,
            tooltip="hide/show the detail pane",
        ),
        bind("zoom", "zoom", "Zoom", show=False, tooltip="zoom: the tree takes the whole width"),
        bind(
            "copy", "copy", "Copy", show=False, tooltip="copy the item's content, place or selector"
        ),
        bind(
            "export",
            "export",
            "Export",
            show=False,
            tooltip="export the provider view, the step's changelog or the diff",
        ),
        bind(
            "fork",
            "fork",
            "Fork",
            show=False,
            tooltip="fork: copy this context as of the snapshot shown into a new one",
        ),
        # -- filter, follow, jump --
        bind(
            "filter",
            "toggle_filter",
            "Filter",
            tooltip="show only the selector's matches and their turns (no selector: pick one)",
        ),
        bind(
            "quick-filter",
            "quick_filter",
            "Quick filter",
            show=False,
            tooltip="filter by: expires next episode, rehydrates next episode, lifecycle type",
        ),
        bind(
            "follow",
            "toggle_follow",
            "Follow",
            show=False,
            tooltip="follow: keep the active turn in view as the context grows",
        ),
        bind(
            "go-to",
            "jump",
            "Go to",
            show=False,
            tooltip="go to a coordinate (d3, 1, 0), a depth (d3) or a #key",
        ),
        # -- the changelog --
        bind(
            "changelog",
            "toggle_changelog",
            "Changes",
            show=False,
            tooltip="show/hide what the steps of the position shown did, with reasons",
        ),
    ]

    HORIZONTAL_BREAKPOINTS: list[tuple[int, str]] | None = [
        (0, "-narrow"),
        (WIDE, "-wide"),
    ]

    # ``var``: reactives that never repaint the screen by themselves (a repaint of the screen
    # is a repaint of everything on it); the widgets bound to them redraw what they show.

    # -- state: what the user chose ------------------------------------------------------------
    context_name: var[str | None] = var(None, init=False)
    """The context shown (one per agent)."""
    position: var[int | None] = var(None, init=False)
    """The snapshot shown, by its index in the context's list; None: live."""
    revision: var[int] = var(0, init=False)
    """How many events of the shown context are applied: moved by the workspace's change feed
    (every process's commands, this one's included), it says the live context changed."""
    selector: var[str] = var("", init=False)
    """The selector typed in the bar; its matches are highlighted."""
    pinned: var[frozenset[str]] = var(frozenset(), init=False)
    """A time-qualified selector's matches, by id: it names its own snapshot, so its matches
    are those nodes wherever the view goes (those that are there)."""
    diff_base: var[DiffBase | None] = var(None, init=False)
    """The other end of the diff shown; None: no diff."""
    play_speed: var[float | None] = var(None, init=False)
    """Seconds per automatic step while playing; None: paused."""
    pending: var[int] = var(0, init=False)
    """Events of this context that arrived while the past is shown (live is not redrawn)."""
    match_index: var[int] = var(-1, init=False)
    """Which match ``n``/``N`` last went to; -1: none yet."""
    highlighted: var[Row | None] = var(None, init=False)
    """The row under the cursor of the pane shown (from its Highlighted messages)."""
    filtering: var[bool] = var(False, init=False)
    """Filter mode: only the selector's matches are shown, under their turn and slot headers."""
    following: var[bool] = var(False, init=False)
    """Follow mode: the cursor stays on the active turn, kept in view as the context grows."""
    read_time: var[str] = var("", init=False)
    """The time-qualified selector whose snapshot was read (Enter reads it; typing does not):
    ``pinned`` holds its matches."""

    # -- derived: set by the watchers below, never by hand -------------------------------------
    contexts: var[tuple[ContextInfo, ...]] = var((), init=False)
    """Every context of the workspace, with its episode and size."""
    shown: var[Shown | None] = var(None, init=False)
    """What is drawn: the view for (context_name, position, revision)."""
    selection: var[Selection] = var(Selection, init=False)
    """The selector's matches in the view shown, or why it cannot be read."""
    matching: var[str] = var("", init=False)
    """A selector being matched in a thread for the view shown; "" when ``selection`` is up
    to date (the bar says the matches shown are stale meanwhile)."""
    comparison: var[Comparison | None] = var(None, init=False)
    """The diff between the base and the view shown (the panes draw its glyphs, notes and
    ghosts)."""
    marks: var[dict[str, Mark]] = var(dict, init=False)
    """Rows to highlight: the selector's matches (the diff's changes come with
    ``comparison``)."""
    told: var[Told | None] = var(None, init=False)
    """The story of the item under the cursor, as the log tells it (read in a worker)."""
    base_index: var[int | None] = var(None, init=False)
    """The diff base's snapshot index, for the scrubber to mark (``compute_base_index``)."""
    subject: var[Subject | None] = var(None, init=False)
    """What the detail pane describes (``compute_subject``)."""
    status: var[Status] = var(lambda: Status(None, None, True), init=False)
    """What the status line says (``compute_status``)."""
    waiting: var[int] = var(0, init=False)
    """What waits for the custodian in a document (the app's ``waiting``, followed)."""
    row_filter: var[RowFilter | None] = var(None, init=False)
    """Filter mode's rows: the selection in the view shown, while filtering (``_filter_rows``)."""

    # -- state: what the user chose to see, and allowed to write (the layout, play at live) ---
    show_contexts: var[bool] = var(True, init=False)
    """The context list is shown (it starts hidden on a terminal narrower than ``WIDE``)."""
    show_detail: var[bool] = var(True, init=False)
    """The detail pane is shown."""
    zoomed: var[bool] = var(False, init=False)
    """The tree (or the provider view) takes the whole width: the list and the detail hide."""
    play_writes_to: var[str | None] = var(None, init=False)
    """The context play at live was allowed to write to (asked and confirmed); None: play
    only steps through the past."""
    path_shown: var[str] = var("", init=False)
    """The workspace's path as the status line shows it (``display_path``)."""
    verified_shown: var[str] = var("", init=False)
    """When the workspace's checkpoints were last deep-verified, as the status line says it."""
    provider_changes: var[ProviderChanges | None] = var(None, init=False)
    """What changed in what the model is sent since the episode before the one shown (derived
    while the provider view is shown: ``_compare_provider``)."""

    # -- the changelog: what the steps did, and why --------------------------------------------
    show_changelog: var[bool] = var(False, init=False)
    """The changelog pane is shown (``C``)."""
    account: var[Account | None] = var(None, init=False)
    """What the steps of the position shown did, from the engine's changelogs (read in a
    worker when ``shown`` changes: ``_read_account``)."""
    reasons: var[Reasons | None] = var(None, init=False)
    """Why the items of the diff shown changed, from the changelogs of the steps between its
    two sides (read in a worker when ``comparison`` changes: ``_explain``)."""
    badges: var[Badges] = var(dict, init=False)
    """The master-log verifier's verdict on each reference item of the view shown, by id
    (judged in a thread when ``shown`` changes: ``_judge_references``)."""

    def compose(self) -> Any:
        # The breakpoint's class before anything is styled: set at the first resize, it would
        # style every widget of the screen once more before the first frame.
        wide = self.app.size.width >= WIDE
        self.set_class(wide, "-wide")
        self.set_class(not wide, "-narrow")
        yield StatusBar(id="status").data_bind(status=ContextScreen.status)
        with Horizontal(id="body"):
            yield ContextList(id="contexts").data_bind(
                contexts=ContextScreen.contexts, current=ContextScreen.context_name
            )
            with Vertical(id="main"):
                with ContentSwitcher(initial="tree", id="panes"):
                    yield ContextTree(id="tree").data_bind(
                        shown=ContextScreen.shown,
                        marks=ContextScreen.marks,
                        row_filter=ContextScreen.row_filter,
                        following=ContextScreen.following,
                        comparison=ContextScreen.comparison,
                        reasons=ContextScreen.reasons,
                        account=ContextScreen.account,
                        badges=ContextScreen.badges,
                    )
                    yield ProviderList(id="provider").data_bind(
                        shown=ContextScreen.shown,
                        marks=ContextScreen.marks,
                        changes=ContextScreen.provider_changes,
                        row_filter=ContextScreen.row_filter,
                        following=ContextScreen.following,
                        comparison=ContextScreen.comparison,
                        reasons=ContextScreen.reasons,
                    )
                yield ChangelogList(id="changelog").data_bind(shown=ContextScreen.account)
                yield Scrubber(id="scrubber").data_bind(
                    shown=ContextScreen.shown, base=ContextScreen.base_index
                )
                yield SelectorBar(id="selector").data_bind(
                    selection=ContextScreen.selection, matching=ContextScreen.matching
                )
            yield NodeDetail(id="detail").data_bind(subject=ContextScreen.subject)
        yield FittedFooter(compact=True)

    @property
    def _app(self) -> PactApp:
        app: PactApp = self.app  # type: ignore[assignment]
        return app

    @property
    def workspace(self) -> Workspace:
        app: PactApp = self.app  # type: ignore[assignment]
        assert app.workspace is not None
        return app.workspace

    @property
    def context_tree(self) -> ContextTree:
        return self.query_one(ContextTree)

    @property
    def provider(self) -> ProviderList:
        return self.query_one(ProviderList)

    @property
    def active_pane(self) -> LinePane:
        switcher = self.query_one(ContentSwitcher)
        return self.provider if switcher.current == "provider" else self.context_tree

    # Read-only views of the derived state, as the tests and benchmarks name them.
    @property
    def view(self) -> ContextView | None:
        return self.shown.view if self.shown is not None else None

    @property
    def matches(self) -> tuple[Node, ...]:
        return self.selection.matches

    async def on_mount(self) -> None:
        app: PactApp = self.app  # type: ignore[assignment]
        app.workspace_changed.subscribe(self, self._on_workspace_changed)
        self.watch(app, "waiting", self._follow_waiting)
        self.contexts = tuple(self.workspace.contexts())
        names = [info.name for info in self.contexts]
        wanted = app.initial_context
        if wanted is not None and wanted not in names:
            self.notify(
                f"no context named {wanted!r}; showing the first",
                severity="warning",
            )
        self.show_contexts = app.size.width >= WIDE
        self.path_shown = str(where_shown(app.url)) if app.url else display_path(app.path)
        self.verified_shown = deep_verified(app.deep_verified)
        self.context_name = wanted if wanted in names else (names[0] if names else None)

    # -- deriving what is shown -----------------------------------------------------------------
    # Each watcher brings what depends on its reactive up to date; showing the same thing
    # again changes nothing, so it does not matter how many of them run for one change.
    def watch_context_name(self) -> None:
        self._show()

    def watch_position(self, position: int | None) -> None:
        if position is None and self.context_name is not None:
            self.pending = 0
            self.revision = self.workspace.applied(self.context_name)  # what came meanwhile
        self._show()

    def watch_revision(self) -> None:
        self._show()

    def validate_position(self, position: int | None) -> int | None:
        """Within the context's snapshots (past the newest is live)."""
        if position is None or self.context_name is None:
            return None
        count = self.workspace.snapshot_count(self.context_name)
        return None if position >= count else max(0, position)

    def _show(self) -> None:
        """The view for (context_name, position, revision): at once when this process holds
        it, else once an old snapshot is rebuilt from an archive."""
        name, position = self.context_name, self.position
        if name is None:
            self.shown = None
            return
        entry = None if position is None else self.workspace.snapshot_at(name, position)
        view = self._held(name, entry)
        if view is None:
            self._rebuild_and_show(name, entry)
        else:
            self._shown(name, view, entry)

    def _held(self, name: str, entry: SnapshotEntry | None) -> ContextView | None:
        """The live view, or a snapshot's if this process holds it now (no waiting)."""
        if entry is None:
            return self.workspace.context(name)
        return self.workspace.snapshot_in_memory(name, entry.id)

    def _shown(self, name: str, view: ContextView, entry: SnapshotEntry | None) -> None:
        snapshots = self.workspace.snapshot_count(name)
        self.shown = Shown(name, view, entry, self.revision, snapshots)

    @work(exclusive=True, group="rebuild")
    async def _rebuild_and_show(self, name: str, entry: SnapshotEntry) -> None:
        try:
            view = await self.workspace.at_snapshot(name, entry.id)
        except (ContextError, StoreError) as error:
            self._failed("Cannot show that snapshot", error)
            return
        if (name, entry.index) == (self.context_name, self.position):  # still what is wanted
            self._shown(name, view, entry)

    def _failed(self, what: str, error: Exception) -> None:
        self.notify(str(error), title=what, severity="error")

    def watch_shown(self, old: Shown | None, shown: Shown | None) -> None:
        self.set_class(shown is not None and not shown.live, "-past")
        self._select()
        self._filter_rows()  # the filter's rows, for this view (even when its matches are equal)
        self._compare()
        self._compare_provider()
        self._read_account()
        self._judge_references()
        self._tell()
        if shown is not None and (old is None or old.name != shown.name):
            self.call_after_refresh(self._build_indexes, shown.name)

    _refusing: str | None = None  # the context whose malformed packed turn is being refused

    def packed_turns_malformed(self) -> None:
        """A packed turn of the context shown was found malformed where it was first read
        (drawn, or read by a worker) before the unpacking between frames reached it (the app
        calls this instead of ending): the unpacking starts over and decodes the rest at once,
        which finds that turn and rebuilds the context from its log (``_build_indexes``), once
        however many frames read the turn meanwhile."""
        name = self.context_name
        if name is None or self._refusing is not None:
            return
        self._refusing = name
        self.workers.cancel_group(self, "indexes")
        self._build_indexes(name, chunk=1 << 62)

    @work(group="indexes")
    async def _build_indexes(self, name: str, chunk: int = 1_000) -> None:
        """Once a context is on screen: its turns opening left packed decoded, a chunk between
        frames (``Workspace.unpacking``); then the indexes opening left for later
        (Context.restore, and its story index), so that its first command and its first story
        do not wait for them (a no-op once built), and the heap frozen
        (``Workspace.build_indexes``); the provider view's layout measured first, so that the
        first ``v`` does not measure every turn (``LinePane.prepare``) and what it keeps is
        frozen with the rest. A packed turn found malformed rebuilt the context from its log
        (``Workspace.unpacking``): that one is shown, and the problem said."""
        before = self.workspace.context(name)
        try:
            async for _left in self.workspace.unpacking(name, chunk):
                await asyncio.sleep(0)  # keys and frames between chunks
            if self.workspace.context(name) is not before:
                problem = self.workspace.checkpoint_problem or "the context was read from its log"
                self.notify(problem, title="Checkpoint", severity="warning", timeout=10)
                if self.context_name == name:
                    self._show()
        finally:
            if chunk == 1 << 62:
                self._refusing = None
        if self.shown is not None and self.shown.name == name:
            self.provider.prepare()
        self.workspace.build_indexes(name)

    def watch_selector(self) -> None:
        self._select()

    def watch_pinned(self) -> None:
        self._select()

    def _select(self) -> None:
        """The selector's matches in the view shown: at once, or, when that means scanning a
        big view, in a thread (``_match_off_path``)."""
        view, text = self.view, self.selector
        self.matching, self._match_next = "", None
        if not text or view is None:
            self._selected(Selection())
            return
        try:
            parsed = parse_selector(text)
            if parsed.is_time_qualified and self.context_name is not None:
                entry = self.workspace.resolve_time(self.context_name, parsed)  # one that exists?
                if self.read_time != text:  # typed, not read: the view does not move per key
                    where = f"snapshot {entry.id} (episode {entry.episode})"
                    self._selected(Selection(text, note=f"{where} · Enter goes there"))
                    return
                # It names its own snapshot: its matches are those nodes, wherever the view now
                # is (a node that is not here has no place to be highlighted).
                matches = tuple(view.locate(self.pinned)) if self.pinned else ()
            elif view.item_count() > SYNC_SELECT_ITEMS and not index_served(parsed):
                check_fields(parsed)  # a typo is said at once, not after a scan
                self._match_off_path(text, parsed)
                return
            else:
                matches = tuple(view.select(parsed))
        except InvalidSelector as error:
            problem = SelectorProblem(error.position, error.reason)
            self._selected(Selection(text, (), problem))
            return
        except ContextError as error:
            self._selected(Selection(text, (), SelectorProblem(0, error.message)))
            return
        self._selected(Selection(text, matches))

    def _selected(self, selection: Selection, shown: Shown | None = None) -> None:
        """The selection found in ``shown`` (the view shown by default)."""
        self._selection_shown = shown if shown is not None else self.shown
        self.selection = selection

    _selection_shown: Shown | None = None  # the view the selection was found in
    _match_running = False  # a thread is matching a selector
    _match_next: tuple[Shown, str, ContextView, Selector] | None = None  # then this one

    def _match_off_path(self, text: str, parsed: Selector) -> None:
        """Match ``text`` in a thread, on the view shown (the live one held as it is now: it
        changes in place as commands run). One thread at a time: a newer request waits for
        the running one, and replaces any other waiting."""
        shown = self.shown
        assert shown is not None
        view = shown.view
        if view.live() is not None:
            view = self.workspace.context(shown.name).hold()
        self.matching = text
        self._match_next = (shown, text, view, parsed)
        if not self._match_running:
            self._start_match()

    def _start_match(self) -> None:
        wanted, self._match_next = self._match_next, None
        if wanted is None:
            self._match_running = False
            return
        self._match_running = True
        self._match_in_thread(*wanted)

    @work(group="select", thread=True)
    def _match_in_thread(
        self, shown: Shown, text: str, view: ContextView, parsed: Selector
    ) -> None:
        try:
            found: tuple[Node, ...] | ContextError = tuple(view.select(parsed))
        except ContextError as error:
            found = error
        self.app.call_from_thread(self._matched, shown, text, found)

    def _matched(self, shown: Shown, text: str, found: tuple[Node, ...] | ContextError) -> None:
        """A thread's matches: shown if they are still what is wanted."""
        if (shown, text) == (self.shown, self.selector) and self._match_next is None:
            self.matching = ""
            if isinstance(found, ContextError):
                self._selected(Selection(text, (), SelectorProblem(0, found.message)), shown)
            else:
                self._selected(Selection(text, found), shown)
            if self._first_match_wanted == text and self.selection.matches:
                self.match_index = -1
                self.action_next_match()
        self._start_match()

    _first_match_wanted = ""  # typed: go to the first match once it is found

    def watch_selection(self, old: Selection, new: Selection) -> None:
        if old.matches != new.matches and self.match_index >= len(new.matches):
            self.match_index = len(new.matches) - 1  # the walked-to match went away
        self.marks = self._marks()
        self._filter_rows()

    def watch_diff_base(self) -> None:
        self._compare()

    def _compare(self) -> None:
        """The diff between the base and the view shown: at once when this process holds both
        ends and they share most of their turns, else in a worker (an old snapshot rebuilt
        from an archive, two states that share nothing)."""
        base, shown = self.diff_base, self.shown
        if base is None or shown is None:
            self.comparison = None
            return
        base_view = base.view
        if base_view is None:
            assert base.index is not None
            base_view = self._held(shown.name, self.workspace.snapshot_at(shown.name, base.index))
        if base_view is None:
            self._rebuild_and_compare(base, shown)
        else:
            self._compare_views(base, shown, base_view)

    def _compare_views(self, base: DiffBase, shown: Shown, base_view: ContextView) -> None:
        shown_is_newer = self._shown_is_newer(base)
        older, newer = (base_view, shown.view) if shown_is_newer else (shown.view, base_view)
        planned = TreeDiff.planned(older, newer)
        if planned.written_items <= SYNC_DIFF_ITEMS:
            self.comparison = self._comparison(base, shown, planned.finished(), shown_is_newer)
            return
        live = shown.view.live()
        if live is not None:  # it changes in place as commands run: compare it as it is now
            held = self.workspace.context(shown.name).hold()
            older, newer = (base_view, held) if shown_is_newer else (held, base_view)
        self._compare_in_thread(base, shown, older, newer, shown_is_newer)

    def _shown_is_newer(self, base: DiffBase) -> bool:
        return _ordered(base.index, self.position)[1] == self.position

    @work(exclusive=True, group="rebuild-diff")
    async def _rebuild_and_compare(self, base: DiffBase, shown: Shown) -> None:
        """``base`` and ``shown``: what was wanted when this was asked for (a worker starts
        later, when they may have moved on)."""
        assert base.snapshot_id is not None
        try:
            base_view = await self.workspace.view(shown.name, base.snapshot_id)
        except (ContextError, StoreError) as error:
            self._failed("Cannot compute that diff", error)
            return
        if (base, shown) == (self.diff_base, self.shown):  # still what is wanted
            self._compare_views(base, shown, base_view)

    @work(exclusive=True, group="diff", thread=True)
    def _compare_in_thread(
        self,
        base: DiffBase,
        shown: Shown,
        older: ContextView,
        newer: ContextView,
        shown_is_newer: bool,
    ) -> None:
        """A diff that compares many items one by one, off the event loop (two states that
        do not change)."""
        diff = TreeDiff.between(older, newer)
        self.app.call_from_thread(self._compared, base, shown, diff, shown_is_newer)

    def _compared(self, base: DiffBase, shown: Shown, diff: TreeDiff, newer: bool) -> None:
        if (base, shown) == (self.diff_base, self.shown):  # still what is wanted
            self.comparison = self._comparison(base, shown, diff, newer)

    def _comparison(
        self, base: DiffBase, shown: Shown, diff: TreeDiff, shown_is_newer: bool
    ) -> Comparison:
        older, newer = _side_names(base, shown, shown_is_newer)
        here = shown.entry.id if shown.entry is not None else None
        ats = (base.snapshot_id, here) if shown_is_newer else (here, base.snapshot_id)
        ghosts = ghosts_of(diff, shown_is_newer)
        return Comparison(older, newer, diff, shown_is_newer, ghosts, ats[0], ats[1])

    def watch_comparison(self) -> None:
        self.marks = self._marks()
        self._explain()

    def _marks(self) -> dict[str, Mark]:
        return {node.id: "match" for node in self.selection.matches}

    def compute_base_index(self) -> int | None:
        return self.diff_base.index if self.diff_base is not None else None

    def compute_subject(self) -> Subject | None:
        """What the detail pane describes: the row under the cursor, in the view shown."""
        shown, row, told = self.shown, self.highlighted, self.told
        if shown is None or row is None:
            return None
        item_id = row.item.id if row.item is not None else None
        # The item's story as last told, until the log has told it for this view: the detail
        # does not flash "reading the log…" at every change.
        same_item = told is not None and (told.item_id, told.shown.name) == (item_id, shown.name)
        story = told.events if told is not None and same_item else None
        return Subject(shown, row, self.comparison, story, self.reasons)

    def watch_highlighted(self) -> None:
        self._tell()

    _story_timer: Timer | None = None

    def _tell(self) -> None:
        """Have the log tell the story of the item under the cursor, unless it has for this
        view already, once the cursor rests (a long replay is not begun for every row the
        cursor passes)."""
        shown, row, told = self.shown, self.highlighted, self.told
        if shown is None or row is None or row.item is None:
            return
        if told is None or (told.item_id, told.shown) != (row.item.id, shown):
            if self._story_timer is not None:
                self._story_timer.stop()
            item_id = row.item.id
            self._story_timer = self.set_timer(
                STORY_DELAY, lambda: self._tell_story(shown, item_id)
            )

    @work(exclusive=True, group="story")
    async def _tell_story(self, shown: Shown, item_id: str) -> None:
        at = shown.entry.id if shown.entry is not None else None
        try:
            events = await self.workspace.item_story(shown.name, item_id, at)
        except (ContextError, StoreError):
            events = []  # gone meanwhile, or the log cannot be read: the story is empty
        self.told = Told(item_id, shown, tuple(events))

    def compute_status(self) -> Status:
        shown, selection = self.shown, self.selection
        entry = shown.entry if shown is not None else None
        matches = None
        if selection.problem is not None:
            matches = "invalid selector"
        elif selection.text:
            count = len(selection.matches)
            where = f"{self.match_index + 1}/" if 0 <= self.match_index < count else ""
            matches = f"{where}{count} match{'es' if count != 1 else ''}"
        diff = counts = None
        if self.diff_base is not None and shown is not None:
            comparison = self.comparison
            if comparison is not None:
                diff, counts = comparison.label, comparison.diff.tally
            else:  # still being compared: the same names, in the same order
                newer = self._shown_is_newer(self.diff_base)
                diff = " → ".join(_side_names(self.diff_base, shown, newer)) + " …"
        return Status(
            context=self.context_name,
            episode=shown.view.current_episode if shown is not None else None,
            live=entry is None,
            snapshot=entry.id if entry is not None else None,
            trigger=entry.trigger if entry is not None else None,
            pending=self.pending,
            diff=diff,
            diff_counts=counts,
            playing=self.play_speed,
            matches=matches,
            selector=selection.text,
            read_only=self.workspace.read_only,
            waiting=self.waiting,
            writing=self.play_speed is not None
            and entry is None
            and self.play_writes_to == self.context_name,
            path=self.path_shown,
            verified=self.verified_shown,
            following=self.following,
            filtered=self._filter_counts(),
            live_key=self._app.key_for("live"),
            documents_key=self._app.key_for("show-documents"),
        )

    def _follow_waiting(self, waiting: int) -> None:
        self.waiting = waiting

    @on(LinePane.Highlighted)
    def _on_highlighted(self, event: LinePane.Highlighted) -> None:
        if event.pane is self.active_pane:
            self.highlighted = event.row
            self._left_follow(event.pane)

    # -- live changes ---------------------------------------------------------------------------
    def _on_workspace_changed(self, change: Change) -> None:
        """Events were applied (by any process): the list's numbers, and the context shown."""
        name = self.context_name
        if name is not None and name in change.contexts:
            if self.position is None:
                self.revision = self.workspace.applied(name)
            else:  # the past is not redrawn; the status counts what came meanwhile
                stream = "ctx:" + name
                self.pending += sum(1 for event in change.events if event.stream == stream)
        self.contexts = tuple(self.workspace.contexts())
        if name is None and self.contexts:
            self.context_name = self.contexts[0].name

    # -- step control -----------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Commands are shown dimmed, and do nothing, in a workspace open read-only."""
        if action in COMMAND_ACTIONS and self.workspace.read_only:
            return None
        return True

    def _writable(self) -> bool:
        if self.workspace.read_only:  # the palette's commands come here without check_action
            self.notify(
                "The workspace is open read-only: commands cannot run.",
                severity="warning",
                title="Read-only",
            )
            return False
        if self.context_name is None:
            self.notify("no context selected", severity="warning")
            return False
        if self.position is not None:
            self.notify(
                "You are looking at the past, which is read-only. Press"
                f" {self._app.key_for('live')} to return to live.",
                severity="warning",
                title="Read-only",
            )
            return False
        return True

    @work(group="commands")
    async def run_command(self, command: ContextCommand) -> ContextResult | None:
        """Run one context command; a refusal is a notification, never a crash."""
        name = self.context_name
        assert name is not None
        try:
            result = await self.workspace.run(name, command, actor="tui")
        except (ContextError, StoreError) as error:
            self.notify(str(error), severity="error", title="Refused")
            return None
        finally:
            # The change feed says so too when it runs (watch=True); without it, this does.
            self.contexts = tuple(self.workspace.contexts())
            if name == self.context_name:
                self.revision = self.workspace.applied(name)
        return result

    def action_message(self, role: str) -> None:
        if not self._writable():
            return
        from engine.context.commands import MessageCommand  # pydantic: on the first command

        def send(text: str | None) -> None:
            if text and role in ("user", "assistant"):
                self.run_command(MessageCommand(role=role, text=text))  # type: ignore[arg-type]

        self.app.push_screen(PromptScreen(f"{role.capitalize()} message"), send)

    def action_advance(self) -> None:
        if self._writable():
            from engine.context.commands import AdvanceCommand  # pydantic: on the first command

            self.run_command(AdvanceCommand())

    def action_seal(self) -> None:
        if not self._writable():
            return

        def seal(trigger: str | None) -> None:
            if trigger and trigger.strip():
                from engine.context.commands import SealCommand

                self.run_command(SealCommand(trigger=trigger.strip()))

        self.app.push_screen(PromptScreen("Seal a snapshot named", value="checkpoint"), seal)

    # -- time travel ----------------------------------------------------------------------------
    def go_to(self, position: int | None) -> None:
        """Show snapshot ``position`` (read-only, kept within the snapshots), or live (None)."""
        if self.context_name is None:
            return
        if position is not None and not self.workspace.snapshot_count(self.context_name):
            self.notify("this context has no snapshots yet: advance or seal first")
            return
        self.position = position

    # -- time travel (``TimeTravel``): through the context's snapshots ---------------------------
    def newest_past(self) -> int:
        name = self.context_name
        return self.workspace.snapshot_count(name) - 1 if name is not None else 0

    def travel(self, position: int | None) -> None:
        self.go_to(position)

    def action_last_snapshot(self) -> None:
        if self.context_name is not None:
            self.go_to(self.newest_past())

    @on(Scrubber.Jump)
    def _on_jump(self, event: Scrubber.Jump) -> None:
        self.go_to(event.index)

    def action_play(self) -> None:
        """Play or pause. Through the past it only steps (read-only); at live every step
        appends a real advance to the shared workspace, so that is asked first."""
        if self.play_speed is not None:
            self.play_speed = None
        elif self.position is not None:
            self.play_speed = 1.0
        elif self._writable():
            self._ask_to_play_at_live()

    def action_play_faster(self) -> None:
        self._play_at(-1)

    def action_play_slower(self) -> None:
        self._play_at(1)

    def _play_at(self, step: int) -> None:
        """The next speed in ``SPEEDS`` (seconds per step): -1 faster, 1 slower."""
        if self.play_speed is not None:
            index = SPEEDS.index(self.play_speed) + step
            self.play_speed = SPEEDS[max(0, min(index, len(SPEEDS) - 1))]

    def watch_play_speed(self, speed: float | None) -> None:
        if self._play_timer is not None:
            self._play_timer.stop()
        self._play_timer = None if speed is None else self.set_interval(speed, self.play_step)
        if speed is None:
            self.play_writes_to = None  # the next play at live asks again

    _play_timer: Timer | None = None

    def play_step(self) -> None:
        """One automatic step: forward through the past, or advance the live context it was
        allowed to write to (``play_writes_to``); anything else stops rather than writes."""
        if self.position is not None:
            self.action_later()
            if self.position is None:  # caught up with now: stop rather than write anything
                self.play_speed = None
        elif self.context_name is None or self.play_writes_to != self.context_name:
            self.play_speed = None  # at live, or in another context, without being asked
        elif not self._commands_running():
            from engine.context.commands import AdvanceCommand

            self.run_command(AdvanceCommand())  # a slow write is not queued behind itself

    def _commands_running(self) -> bool:
        return any(not worker.is_finished for worker in self.workers if worker.group == "commands")

    # -- play at live asks first ----------------------------------------------------------------
    def _ask_to_play_at_live(self) -> None:
        name = self.context_name
        assert name is not None
        speed = 1.0
        question = (
            f"Play writes an advance to context {visible(name)!r} every {speed:g} s, "
            "into the shared workspace. Go on?"
        )

        def answered(yes: bool | None) -> None:
            # Only if nothing moved meanwhile: the same context, still live, not playing.
            if yes and (self.context_name, self.position, self.play_speed) == (name, None, None):
                self.play_writes_to = name
                self.play_speed = speed

        self.app.push_screen(ConfirmScreen(question, yes="Play and write"), answered)

    # -- diff -----------------------------------------------------------------------------------
    def action_diff(self) -> None:
        """Mark the state shown as the diff's base, or clear the diff. At live the base is
        the state as it is now, held so that it stays (live moves on): named for the newest
        snapshot if nothing happened since, else for its episode."""
        name, shown = self.context_name, self.shown
        if name is None or shown is None:
            return
        if self.diff_base is not None:
            self.diff_base = None
            self.notify("diff cleared")
            return
        entry = shown.entry
        if entry is not None:
            self.diff_base = DiffBase(entry.id, entry.index, name=entry.id)
            said = f"snapshot {entry.id} (episode {entry.episode})"
        else:
            held = self.workspace.context(name).hold()
            count = self.workspace.snapshot_count(name)
            newest = self.workspace.snapshot_at(name, count - 1) if count else None
            if newest is not None and newest.stream_seq == self.workspace.applied(name):
                self.diff_base = DiffBase(newest.id, newest.index, held, newest.id)
                said = f"snapshot {newest.id}, the newest (episode {newest.episode})"
            else:
                episode = held.current_episode
                self.diff_base = DiffBase(None, None, held, f"e{episode} held")
                since = f"after snapshot {newest.id}" if newest is not None else "no snapshot yet"
                said = f"live as it is now (episode {episode}, {since}), held: it does not move"
        self.notify(
            f"diff base set to {visible(said)}: move with [ ] or let live change to compare",
            title="Diff",
        )

    # -- the selector bar -----------------------------------------------------------------------
    _select_timer: Timer | None = None

    def action_search(self) -> None:
        self._before_search = (self.position, self.active_pane.bookmark())  # for Esc
        self.query_one(SelectorBar).open(self.selector, back_to=self.active_pane)

    @on(SelectorBar.Changed)
    def _on_selector_changed(self, event: SelectorBar.Changed) -> None:
        if self._select_timer is not None:
            self._select_timer.stop()
        text = event.text.strip()
        self._select_timer = self.set_timer(SELECT_DELAY, lambda: self._use_selector(text))

    async def _use_selector(self, text: str) -> None:
        """The typed selector, after a pause in typing: match, and go to the first match. A
        time-qualified one is only checked: its snapshot is read, and gone to, on Enter."""
        if _time_qualified(text):
            self.match_index = -1
            self.selector = text
            return
        self._first_match_wanted = text  # also when it is found in a thread
        await self._apply_selector(text)
        if self.selection.matches and not self.matching:
            self._first_match_wanted = ""
            self.match_index = -1
            self.action_next_match()

    async def _apply_selector(self, text: str) -> None:  # async: may rebuild a snapshot
        """A time-qualified selector names its own snapshot: the view goes there, and its
        matches there are kept (``pinned``) wherever the view goes next."""
        pinned: frozenset[str] = frozenset()
        name = self.context_name
        if name is not None:
            try:
                parsed = check_input_selector(text)  # typed in: checked as given now
                if parsed.is_time_qualified:
                    entry = self.workspace.resolve_time(name, parsed)
                    past = await self.workspace.at_snapshot(name, entry.id)
                    found = past.select(dataclasses.replace(parsed, time=None))
                    pinned = frozenset(node.id for node in found)
                    self.set_reactive(ContextScreen.read_time, text)
                    self.position = entry.index
            except ContextError:
                pass  # the selection says what is wrong, as it finds the same
        self.match_index = -1
        self.set_reactive(ContextScreen.pinned, pinned)  # the selection follows from selector
        if text == self.selector:
            self._select()  # read_time or pinned changed without their watchers
        self.selector = text

    @on(SelectorBar.Closed)
    async def _on_selector_closed(self, event: SelectorBar.Closed) -> None:
        if self._select_timer is not None:
            self._select_timer.stop()
        self.set_focus(self.active_pane)
        if event.keep:
            text = self.query_one(SelectorBar).input.value.strip()
            if text != self.selector or (_time_qualified(text) and text != self.read_time):
                await self._apply_selector(text)
        else:
            self.action_clear_selector()
            self._back_to_before_search()

    def action_clear_selector(self) -> None:
        self.selector, self.pinned, self.match_index = "", frozenset(), -1
        self.filtering = False  # nothing left to filter by

    def action_next_match(self) -> None:
        self._walk_matches(1)

    def action_previous_match(self) -> None:
        self._walk_matches(-1)

    def _walk_matches(self, step: int) -> None:
        """Move to the match ``step`` away from the last one walked to (wrapping), unfolding
        what hides it."""
        matches = self.selection.matches
        if not matches:
            if self.selector:
                self.notify("no matches", severity="warning")
            return
        self.match_index = (self.match_index + step) % len(matches)
        node = matches[self.match_index]
        pane = self.active_pane
        layout = pane.layout_model
        if node.depth is None or node.position is None:
            line = layout.line_of_turn(node.depth if node.depth is not None else 0)
        else:
            pane.reveal(node.depth, node.position)
            line = layout.line_of(node.depth, node.position, node.offset)
        if line is not None:
            pane.jump_to(line)

    # -- panes and contexts ---------------------------------------------------------------------
    def action_toggle_provider(self) -> None:
        """The other view, its cursor on the node the cursor was on (one cursor for both: an
        item is the same message in the provider view; a turn or slot its first message)."""
        switcher = self.query_one(ContentSwitcher)
        was = self.active_pane.current_row
        switcher.current = "provider" if switcher.current == "tree" else "tree"
        pane = self.active_pane
        pane.catch_up()
        if was is not None and was.ghost is None:
            position = was.slot.position if was.slot is not None else None
            pane.go_to_place(was.depth, position, was.offset)
        self.set_focus(pane)  # now: a key typed next is this pane's (see CursorPane)
        self.highlighted = pane.current_row
        self._compare_provider()

    def action_read_content(self) -> None:
        """The whole content of the item under the cursor, over the inspector."""
        row = self.highlighted
        if row is not None and row.ghost is not None:  # a diff's: what it was
            ghost = row.ghost
            title = f" {visible(ghost.item.node_type, limit=40)} {visible(ghost.id)} "
            where = f"was at {ghost.coordinates} · not in this view · Esc closes"
            self.app.push_screen(ReaderScreen(title + where, ghost.item.text()))
            return
        if row is None or row.item is None:
            self.notify("put the cursor on an item to read its content", severity="warning")
            return
        self._read(row)

    @on(LinePane.Selected)
    def _on_selected(self, event: LinePane.Selected) -> None:
        if event.row.item is not None:  # Enter on an item reads it (on a header it folds)
            self._read(event.row)

    def _read(self, row: Row) -> None:
        item = row.item
        assert item is not None and row.slot is not None
        where = f"({row.depth},{row.slot.position},{row.offset})"
        title = f" {visible(item.node_type, limit=40)} {visible(item.id)} {where} · Esc closes"
        source = reference_of(item)
        if source is not None:
            self._read_reference(title, item.text(), source)
            return
        self.app.push_screen(ReaderScreen(title, item.text()))

    # -- reference items: a gptme master log's references, judged --------------------------
    def _judge_references(self) -> None:
        """The badges of the view shown's reference items, judged in a thread (opening and
        verifying their conversation folders reads files); a view whose first items were not
        imported from gptme has none, and is not walked."""
        shown = self.shown
        if shown is None or not _imported_from_gptme(shown.view):
            self.badges = {}
            return
        view = shown.view
        if view.live() is not None:  # it changes in place as commands run: judge it as it is
            view = self.workspace.context(shown.name).hold()
        self._judge_in_thread(shown, view)

    @work(exclusive=True, group="references", thread=True)
    def _judge_in_thread(self, shown: Shown, view: ContextView) -> None:
        sessions: dict[str, LogSession | None] = {}
        problems: list[str] = []

        def statuses(source: ItemSource) -> list[str] | None:
            folder = source.conversation
            assert folder is not None
            if folder not in sessions:
                try:
                    opened = self._app.reference_session(folder)
                    # what the logs gained or lost since: its references verified again only
                    # where they may have changed (the verifier's own choice)
                    opened.update()
                    sessions[folder] = opened
                except (MasterLogError, OSError) as error:
                    sessions[folder] = None
                    problems.append(str(error))
            session = sessions[folder]
            if session is None:
                return None
            return [v.status.value for v in session.verdicts_on(source.log, source.line)]

        badges = judge(view, statuses)
        self.app.call_from_thread(self._judged, shown, badges, problems)

    def _judged(self, shown: Shown, badges: Badges, problems: list[str]) -> None:
        for problem in problems:
            self.notify(f"references not verified: {problem}", title="Master log", timeout=6)
        if shown == self.shown:  # still what is shown
            self.badges = badges

    @work(exclusive=True, group="reference")
    async def _read_reference(self, title: str, text: str, source: ItemSource) -> None:
        """What the model was shown beside the original its reference recovers."""
        from .original import OriginalScreen

        folder = source.conversation
        assert folder is not None
        try:
            session = await asyncio.to_thread(self._app.reference_session, folder)
            verdicts = session.verdicts_on(source.log, source.line)
            recoveries = [await asyncio.to_thread(session.recover, v) for v in verdicts]
        except (MasterLogError, OSError) as error:
            self.notify(f"cannot read its conversation: {error}", title="Read", severity="error")
            self.app.push_screen(ReaderScreen(title, text))
            return
        if not verdicts:
            self.notify("its line holds no reference now", title="Read", severity="warning")
            self.app.push_screen(ReaderScreen(title, text))
            return
        said, originals, sources = [], [], []
        for verdict, recovery in zip(verdicts, recoveries, strict=True):
            ref = verdict.reference
            said.append(
                f"{verdict.where} bytes {ref.start}-{ref.end}: {verdict.status.value}"
                + (f" · {verdict.explanation}" if verdict.explanation else "")
            )
            originals.append(
                recovery.content
                if recovery.content is not None
                else f"(not recovered: {recovery.evidence})"
            )
            sources.append(recovery.source)
        ok = all(verdict.ok for verdict in verdicts)
        original = "\n\n".join(originals)  # a line with two references: both originals
        self.app.push_screen(
            OriginalScreen(title, "\n".join(said), ok, text, original, ", ".join(sources))
        )

    def action_to_master_log(self) -> None:
        """A reference item's line on the master-log screen, pushed over this one (``J`` there
        comes back to the item made from the line under its cursor)."""
        row = self.highlighted
        item = row.item if row is not None else None
        source = reference_of(item) if item is not None else None
        if source is None:
            self.notify(
                "put the cursor on a reference item (one imported from gptme with a ✓ or ✗)",
                title="Master log",
                severity="warning",
            )
            return
        self._open_master_log(source)

    @work(exclusive=True, group="reference")
    async def _open_master_log(self, source: ItemSource) -> None:
        from .masterlog import MasterLogScreen

        folder = source.conversation
        assert folder is not None
        try:
            session = await asyncio.to_thread(self._app.reference_session, folder)
        except (MasterLogError, OSError) as error:
            self.notify(f"cannot read its conversation: {error}", title="Master log")
            return
        screen = MasterLogScreen(session, back=self.go_to_made_from)
        await self.app.push_screen(screen)
        screen.go_to(source.log, source.line)

    def go_to_made_from(self, log: str, line: int) -> bool:
        """The cursor on the item of the view shown read from line ``line`` of ``log`` (for
        the master log: also a view's line that is that master line); False: none is."""
        view = self.view
        found = made_from(view, log, line) if view is not None else None
        if found is None:
            return False
        self.go_to_item(found[0].id)
        return True

    def action_fold_history(self) -> None:
        self.context_tree.fold_history()

    def action_unfold_all(self) -> None:
        self.context_tree.unfold_all()

    def action_focus_contexts(self) -> None:
        self.show_contexts, self.zoomed = True, False  # it cannot be focused hidden
        self.set_focus(self.query_one(ContextList))

    @on(OptionList.OptionSelected, "#contexts")
    def _on_context_picked(self, event: OptionList.OptionSelected) -> None:
        self.switch_context(str(event.option.id))

    def switch_context(self, name: str) -> None:
        """Show another context, live, with no diff, pins or row of the old one: those are set
        without their watchers, so that what they derive is derived once, for the new context,
        when ``context_name`` changes last."""
        if name == self.context_name:
            return
        fresh: dict[str, object] = {
            "position": None,
            "pending": 0,
            "diff_base": None,
            "pinned": frozenset(),
            "match_index": -1,
            "highlighted": None,
            "read_time": "",
            "revision": self.workspace.applied(name),
        }
        for attribute, value in fresh.items():
            self.set_reactive(getattr(ContextScreen, attribute), value)
        self.context_name = name
        self.set_focus(self.context_tree)

    # -- the provider view: what changed since the episode before ------------------------------
    def _compare_provider(self) -> None:
        """What the model is sent now against what it was sent when the episode before the one
        shown began (``@e{N-1}``), while the provider view is shown, and only if this process
        holds that snapshot: rebuilding an old one can take many seconds at 100,000 items (a
        replay from the nearest archive), which a glance at the provider view must not cost.
        Once this process has advanced twice, or has travelled there, it holds it."""
        shown = self.shown
        if shown is None or self.query_one(ContentSwitcher).current != "provider":
            return
        episode = shown.view.current_episode
        try:
            entry = self.workspace.snapshot_of_episode(shown.name, episode - 1)
        except ContextError:  # no episode before, or none recorded: nothing to compare with
            entry = None
        before = self._held(shown.name, entry) if entry is not None else None
        if before is None:
            self.provider_changes = None
            totals = self.provider.totals  # of the view shown: the pane was just laid out
            small = totals is not None and totals.messages <= REBUILD_FOR_PROVIDER
            if entry is not None and small:  # a rebuild of a small context takes milliseconds
                self._rebuild_provider_base(shown, entry)
        else:
            self.provider_changes = provider_changes(before, shown.view, f"e{episode - 1}")

    @work(exclusive=True, group="provider-base")
    async def _rebuild_provider_base(self, shown: Shown, entry: SnapshotEntry) -> None:
        """The snapshot the provider view compares with, rebuilt from the log (a workspace
        just opened holds none of its snapshots): the marks follow once it is there, if the
        view shown is still the one they are for."""
        try:
            before = await self.workspace.at_snapshot(shown.name, entry.id)
        except (ContextError, StoreError):
            return  # no marks: the provider view itself is still right
        if self.shown is shown and self.query_one(ContentSwitcher).current == "provider":
            episode = shown.view.current_episode
            self.provider_changes = provider_changes(before, shown.view, f"e{episode - 1}")

    # -- fork ----------------------------------------------------------------------------------
    def action_fork(self) -> None:
        """Ask for a name, then copy the context as of the snapshot shown (or as it is now, at
        live) into a new context (``Workspace.fork_context``) and show it, live: a place to
        step, insert and play without touching the agent's own context."""
        shown = self.shown
        if shown is None:
            return
        if self.workspace.read_only:
            self.notify(
                "The workspace is open read-only: a fork cannot be made.",
                severity="warning",
                title="Read-only",
            )
            return
        name, entry = shown.name, shown.entry
        when = f"as of snapshot {entry.id}, episode {entry.episode}" if entry else "as it is now"
        question = f"Fork context {visible(name)!r} {visible(when)} into a new context named"

        def fork(new: str | None) -> None:
            if new and new.strip():
                self._fork(name, new.strip(), entry.id if entry is not None else None)

        self.app.push_screen(PromptScreen(question, value=self._fork_name(name)), fork)

    def _fork_name(self, name: str) -> str:
        """``researcher-fork``, or ``researcher-fork-2`` … when that is taken."""
        taken = {info.name for info in self.contexts}
        offered, number = f"{name}-fork", 1
        while offered in taken:
            number += 1
            offered = f"{name}-fork-{number}"
        return offered

    @work(group="commands")
    async def _fork(self, name: str, new: str, at: str | None) -> None:
        try:
            origin = await self.workspace.fork_context(name, new, at=at, actor="tui")
        except (ContextError, StoreError) as error:
            self._failed("Cannot fork", error)
            return
        self.contexts = tuple(self.workspace.contexts())
        self.switch_context(new)
        self.notify(
            f"{new}: a copy of {fork_point(origin)}. Commands here leave {name} as it was.",
            title="Forked",
            timeout=10,
        )

    # -- what the help page and the palette say of this screen ----------------------------------
    @staticmethod
    def help_groups(keymap: Mapping[str, str] | None = None) -> list[tuple[str, list[BindingType]]]:
        """The help page's keys of this screen and of what is on it."""
        return [
            ("Inspector", list(ContextScreen.BINDINGS)),
            (
                "Tree",
                [
                    *CursorPane.BINDINGS,
                    *ContextTree.BINDINGS,
                    *ContextList.BINDINGS,
                    *SelectorBar.BINDINGS,
                ],
            ),
        ]

    @staticmethod
    def legends() -> list[Legend]:
        return LEGEND

    def system_commands(self) -> Iterator[SystemCommand]:
        """The palette's commands of this screen (its rarer actions), then a command to switch
        to each context."""
        yield SystemCommand(
            "Fold all history turns", "keep system and active open", self.action_fold_history
        )
        yield SystemCommand("Unfold everything", "show every turn and slot", self.action_unfold_all)
        yield SystemCommand(
            "Toggle provider view", "what the model would be sent", self.action_toggle_provider
        )
        yield SystemCommand(
            "Read the item's whole content",
            "the item under the cursor, however long",
            self.action_read_content,
        )
        yield from self.time_commands()
        yield SystemCommand("Seal a snapshot…", "record a named snapshot", self.action_seal)
        yield SystemCommand("Play / pause", "step automatically", self.action_play)
        yield SystemCommand(
            "Last snapshot", "jump to the newest snapshot", self.action_last_snapshot
        )
        yield from self.copy_and_export_commands()
        yield from self.fork_commands()
        yield from self.filter_commands()
        for info in self.workspace.contexts():
            yield SystemCommand(
                f"Switch to context {visible(info.name)}",
                f"episode {info.episode}, {info.items} items",
                partial(self.switch_context, info.name),
            )

    def fork_commands(self) -> Iterator[SystemCommand]:
        """The palette's command for forking (``App.get_system_commands``)."""
        yield SystemCommand(
            "Fork this context at the shown snapshot…",
            "a copy in a new context, to step and play without touching this one",
            self.action_fork,
        )

    # -- copy and export -----------------------------------------------------------------------
    def copy_and_export_commands(self) -> Iterator[SystemCommand]:
        """The palette's commands for copying and exporting (``App.get_system_commands``)."""
        yield SystemCommand(
            "Copy the item's content", "to the clipboard", partial(self.copy, "content")
        )
        yield SystemCommand(
            "Copy the item's coordinates", "d3, 1, 0", partial(self.copy, "coordinates")
        )
        yield SystemCommand(
            "Copy a selector for the item",
            "#key, else its coordinates",
            partial(self.copy, "selector"),
        )
        for what, label in EXPORTS.items():
            for form in ("markdown", "json"):
                yield SystemCommand(
                    f"Export the {label} as {FORM_NAMES[form]}…",
                    "to a file; the path is asked",
                    partial(self.export, what, form),
                )

    def action_copy(self) -> None:
        """Choose what to copy of the item under the cursor."""
        row = self._item_under_cursor()
        if row is None:
            return
        choices = [
            Choice("c", "its content", "content"),
            Choice("p", f"its coordinates: {visible(_coordinates(row))}", "coordinates"),
            Choice(
                "s", f"a selector that matches it: {visible(self.selector_for(row))}", "selector"
            ),
        ]
        assert row.item is not None
        title = f"Copy from {visible(row.item.id)} to the clipboard"

        def chosen(what: str | None) -> None:
            if what is not None:
                self.copy(what)

        self.app.push_screen(ChooseScreen(title, choices), chosen)

    def copy(self, what: str) -> None:
        """Copy ``content``, ``coordinates`` or ``selector`` of the item under the cursor to
        the clipboard (``App.copy_to_clipboard``: an OSC 52 sequence, which works over SSH)."""
        row = self._item_under_cursor()
        if row is None:
            return
        item = row.item
        assert item is not None
        if what == "content":
            text = item.text()
            said = f"the content of {item.id} ({len(text):,} characters)"
            if len(text) > CLIPBOARD_LARGE:
                said += "; some terminals keep only the first part of so much"
        elif what == "coordinates":
            text = said = _coordinates(row)
        else:
            text = said = self.selector_for(row)
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied {said}", title="Copied")

    def selector_for(self, row: Row) -> str:
        """A selector that matches exactly this item in the view shown: ``#key`` if that
        finds it alone, else its coordinates; in the past, named with its snapshot."""
        view, item = self.view, row.item
        assert view is not None and item is not None
        coordinates = _coordinates(row)
        chosen = coordinates
        if item.key is not None:
            try:
                if [node.id for node in view.select(f"#{item.key}")] == [item.id]:
                    chosen = f"#{item.key}"
            except ContextError:  # a key the selector language cannot spell
                pass
        entry = self.shown.entry if self.shown is not None else None
        return f"@snap:{entry.id} {chosen}" if entry is not None else chosen

    def _item_under_cursor(self) -> Row | None:
        row = self.highlighted
        if row is None or row.item is None or row.slot is None or self.view is None:
            self.notify("put the cursor on an item first", severity="warning")
            return None
        return row

    def action_export(self) -> None:
        """Choose what to export, and as what."""
        choices = [
            Choice("p", "the provider rendering as Markdown", "provider markdown"),
            Choice("P", "the provider rendering as JSON", "provider json"),
            Choice("c", "what this step did (its changelog) as Markdown", "changelog markdown"),
            Choice("C", "what this step did (its changelog) as JSON", "changelog json"),
        ]
        if self.comparison is not None:
            choices += [
                Choice("d", "the diff shown as Markdown", "diff markdown"),
                Choice("D", "the diff shown as JSON", "diff json"),
            ]

        def chosen(value: str | None) -> None:
            if value is not None:
                what, form = value.split()
                self.export(what, form)  # type: ignore[arg-type]

        self.app.push_screen(ChooseScreen("Export to a file", choices), chosen)

    def export(self, what: str, form: Format) -> None:
        """Ask where to write ``what`` (``provider``, ``diff``), a name in the current folder
        offered; then write it there (``_write_export``)."""
        shown, comparison = self.shown, self.comparison
        if shown is None:
            return
        if what == "diff" and comparison is None:
            self.notify("no diff is shown: mark a base with d first", severity="warning")
            return
        label = EXPORTS[what]
        where = _where(shown)
        if what == "diff":
            assert comparison is not None
            ends = [at or "live" for at in (comparison.older_at, comparison.newer_at)]
            name = f"{where.slug().rsplit('-', 1)[0]}-{ends[0]}-{ends[1]}-diff"
        else:
            name = f"{where.slug()}-{what}"
        offered = re.sub(r"[^\w.-]+", "_", name) + SUFFIXES[form]

        def write(text: str | None) -> None:
            if text and text.strip():
                self._write_export(what, form, text.strip(), shown, comparison)

        question = f"Export the {label} as {FORM_NAMES[form]} to (.json or .md decides)"
        self.app.push_screen(PromptScreen(question, value=offered), write)

    @work(group="export")
    async def _write_export(
        self, what: str, form: Format, typed: str, shown: Shown, comparison: Comparison | None
    ) -> None:
        """Render ``what`` as it was when asked for (``shown``, ``comparison``) and write it
        whole; say where, or why not. Nothing a path can be makes this crash."""
        label = EXPORTS[what]
        try:
            path = Path(typed).expanduser()
            form = format_of(path, form)
            text = await self._export_text(what, form, shown, comparison)
            written = await asyncio.to_thread(write_atomically, path, text)
        except WriteError as error:
            self._failed(f"Cannot export the {label}", error)
            return
        except (ContextError, StoreError, OSError, RuntimeError) as error:
            self._failed(f"Cannot export the {label}", error)  # a folder gone, no home…
            return
        self.notify(
            f"Wrote {written}",
            title=f"Exported the {label} ({FORM_NAMES[form]})",
            timeout=8,
        )

    async def _export_text(
        self, what: str, form: Format, shown: Shown, comparison: Comparison | None
    ) -> str:
        where = _where(shown)
        if what == "provider":
            if form == "json":
                return provider_json(shown.view)
            return provider_markdown(shown.view, where)
        if what == "changelog":  # the step shown: the snapshot's, or live's since the newest
            at = shown.entry.id if shown.entry is not None else None
            step = await self.workspace.changelogs(shown.name, snapshot=at)
            if form == "json":
                return changelog_json(step)
            return changelog_markdown(step, where)
        assert comparison is not None
        # The two states compared, as they were (a live end was held, or is the live view).
        older_view, newer_view = comparison.diff.older, comparison.diff.newer
        older = Where(shown.name, older_view.current_episode, comparison.older_at, comparison.older)
        newer = Where(shown.name, newer_view.current_episode, comparison.newer_at, comparison.newer)
        diff = comparison.diff.to_diff()
        if form == "json":
            return diff_json(diff, older, newer)
        return diff_markdown(diff, older, newer, older_view, newer_view)

    # -- the layout -----------------------------------------------------------------------------
    def action_toggle_contexts(self) -> None:
        if self.zoomed:  # zoomed, the list is hidden whatever it was: b shows it
            self.zoomed, self.show_contexts = False, True
        else:
            self.show_contexts = not self.show_contexts

    def action_toggle_detail(self) -> None:
        if self.zoomed:
            self.zoomed, self.show_detail = False, True
        else:
            self.show_detail = not self.show_detail

    def action_zoom(self) -> None:
        self.zoomed = not self.zoomed

    def watch_show_contexts(self) -> None:
        self._show_panes()

    def watch_show_detail(self) -> None:
        self._show_panes()

    def watch_zoomed(self) -> None:
        self._show_panes()

    def _show_panes(self) -> None:
        """The context list and the detail pane, as shown and zoomed say."""
        contexts = self.query_one(ContextList)
        contexts.display = self.show_contexts and not self.zoomed
        self.query_one(NodeDetail).display = self.show_detail and not self.zoomed
        if not contexts.display and contexts.has_focus:
            self.set_focus(self.active_pane)

    # -- filter, follow, jump --------------------------------------------------------------------
    def watch_filtering(self) -> None:
        self._filter_rows()

    def _filter_rows(self) -> None:
        """Filter mode's rows: the selection, in the view it was found in (the panes lay them
        out for that view only); None when not filtering, or when no selector is typed."""
        shown, selection = self._selection_shown, self.selection
        if not self.filtering or shown is None or not selection.text:
            self.row_filter = None
        else:
            self.row_filter = RowFilter(shown, selection)  # the view it was found in

    def _filter_counts(self) -> tuple[int, int] | None:
        """(matches, rows) for the status line while filtering."""
        wanted = self.row_filter
        if wanted is None:
            return None
        return len(wanted.selection.matches), wanted.layout(headers=True).line_count

    def action_toggle_filter(self) -> None:
        if self.filtering:
            self.filtering = False
        elif not self.selector:
            self.action_quick_filter()  # nothing typed to filter by: pick something
        else:
            self.filtering = True

    def action_quick_filter(self) -> None:
        quick = [(key, label, code) for key, label, code in QUICK_FILTERS]
        if self.selector and self.selector not in {code for _, _, code in QUICK_FILTERS}:
            quick.insert(0, ("/", "the selector typed", self.selector))
        width = max(len(label) for _, label, _ in quick) + 3
        choices = [Choice(key, f"{label:<{width}}{code}", code) for key, label, code in quick]

        def chosen(selector: str | None) -> None:
            if selector is not None:
                self.quick_filter(selector)

        self.app.push_screen(ChooseScreen("Show only the rows of", choices), chosen)

    def quick_filter(self, selector: str) -> None:
        """Filter by ``selector`` (a quick filter, or the one typed)."""
        self.set_reactive(ContextScreen.pinned, frozenset())
        self.set_reactive(ContextScreen.read_time, "")
        self.match_index = -1
        self.selector = selector
        self.filtering = True

    def filter_commands(self) -> Iterator[SystemCommand]:
        """The palette's commands for filter mode, follow mode and going to a place."""
        for _key, label, selector in QUICK_FILTERS:
            yield SystemCommand(
                f"Filter: {label}",
                f"show only {selector} and their turns",
                partial(self.quick_filter, selector),
            )
        yield SystemCommand("Filter: off", "show every row", partial(self._set_filter, False))
        yield SystemCommand(
            "Follow the active turn", "keep it in view as the context grows", self._follow_on
        )
        yield SystemCommand(
            "Go to…", "a coordinate (d3, 1, 0), a depth or a #key", self.action_jump
        )

    def _set_filter(self, on: bool) -> None:
        self.filtering = on

    def action_toggle_follow(self) -> None:
        self.following = not self.following
        self.notify(
            "Following the active turn" if self.following else "Follow off",
            title="Follow",
            timeout=2,
        )

    def _follow_on(self) -> None:
        self.following = True

    def _left_follow(self, pane: LinePane) -> None:
        """The cursor moved off the active turn (by hand, or to a match or a place): follow
        mode ends, and says so."""
        if self.following and pane.cursor_line != pane.follow_line():
            self.following = False
            self.notify("Follow off: the cursor left the active turn (f follows again)")

    def action_jump(self) -> None:
        view = self.view
        if view is None:
            return

        def check(text: str) -> str | None:
            current = self.view
            if current is None:
                return "no context is shown"
            try:
                find_place(current, text)
            except JumpError as error:
                return str(error)
            return None

        def go(text: str | None) -> None:
            current = self.view
            if text is not None and current is not None:
                try:
                    self.go_to_place(find_place(current, text))
                except JumpError as error:  # the view moved on since it was checked
                    self.notify(str(error), title="Go to", severity="warning")

        prompt = PromptScreen("Go to", placeholder="d3, 1, 0   ·   d3   ·   #key", check=check)
        self.app.push_screen(prompt, go)

    def go_to_place(self, place: Place) -> None:
        """The cursor on ``place``, unfolding what hides it; a filter that hides it is
        turned off first (and says so)."""
        pane = self.active_pane
        if self.filtering and not pane.shows_place(place.depth, place.position, place.offset):
            self.filtering = False
            self.notify(f"Filter off: it hid {place.label}", title="Go to")
        if not pane.go_to_place(place.depth, place.position, place.offset):
            self.notify(f"{place.label} is not in this pane", title="Go to", severity="warning")

    @on(LinePane.Vanished)
    def _on_vanished(self, event: LinePane.Vanished) -> None:
        """The item under the cursor left the live context: say which, and why if it is
        plain (its ttl ran out)."""
        item, view = event.item, self.view
        name = f"#{visible(item.key, limit=60)}" if item.key else visible(json_preview(item))
        depth, position, offset = event.where
        why = "was removed"
        ttl = item.ttl
        if view is not None and ttl is not None and view.current_episode - item.born_episode >= ttl:
            why = f"expired (ttl {ttl})"
            if item.template_id is not None:
                why += "; its schedule makes fresh instances"
        self.notify(
            f"{name} at ({depth},{position},{offset}) {why}. The cursor is on the row nearest "
            "its place.",
            title="The selected item is gone",
        )

    _before_search: tuple[int | None, Bookmark] | None = None

    def _back_to_before_search(self) -> None:
        """Esc in the selector bar: the view and the cursor where they were when it opened."""
        if self._before_search is None:
            return
        position, bookmark = self._before_search
        self._before_search = None
        if position != self.position:
            self.position = position
        self.active_pane.return_to(bookmark)

    # -- the changelog: what the steps did, and why ---------------------------------------------
    def _read_account(self) -> None:
        """Have the workspace tell what the steps of the position shown did (``account``)."""
        shown = self.shown
        if shown is None:
            self.account = None
        else:
            self._account_of(shown)

    @work(exclusive=True, group="account")
    async def _account_of(self, shown: Shown) -> None:
        """At live: the events since the newest snapshot, then the step that made it; in the
        past: the step that made the snapshot shown. ``shown``: what was shown when asked."""
        ws, name, entry = self.workspace, shown.name, shown.entry
        at = entry.id if entry is not None else None
        try:
            if entry is not None:
                steps: tuple[StepChanges, ...] = (await ws.changelogs(name, snapshot=entry.id),)
            else:
                step = await ws.changelogs(name)
                steps = (step,)
                if step.kind == "live" and step.since is not None:  # and the step before
                    steps += (await ws.changelogs(name, snapshot=step.since.id),)
            account = Account(name, shown.revision, at, steps)
        except (ContextError, StoreError) as error:
            account = Account(name, shown.revision, at, problem=visible(str(error)))
        if shown == self.shown:  # still what is shown
            self.account = account

    def action_toggle_changelog(self) -> None:
        self.show_changelog = not self.show_changelog

    def watch_show_changelog(self, show: bool) -> None:
        pane = self.query_one(ChangelogList)
        pane.display = show
        if show:
            pane.catch_up()  # now, not on its Show event: the frame that shows it is current
        self.set_focus(pane if show else self.active_pane)

    @on(ChangelogList.Selected, "#changelog")
    def _on_change_chosen(self, event: ChangelogList.Selected) -> None:
        line = event.row
        if isinstance(line, ChangeLine) and line.item_id is not None:
            self.go_to_item(line.item_id)

    def go_to_item(self, item_id: str) -> None:
        """The cursor of the pane shown on that item, or on its ghost during a diff; if the
        view shown has neither, say so."""
        view, pane = self.view, self.active_pane
        if view is None:
            return
        found = view.find(item_id)
        if (
            found is not None
            and found.depth is not None
            and found.position is not None
            and pane.go_to_place(found.depth, found.position, found.offset)
        ):
            return
        layout = pane.layout_model
        line = layout.line_of_ghost(item_id) if isinstance(layout, TreeLayout) else None
        if line is not None:
            pane.jump_to(line)
            return
        where = "this snapshot" if self.position is not None else "the live context"
        self.notify(f"{item_id} is not in {where}", severity="warning")

    def _explain(self) -> None:
        """Have the changelogs of the steps between the diff's two sides say why its items
        changed (``reasons``): those of another pair of sides are dropped at once, those of
        the same sides kept until the new ones come (no flicker while playing)."""
        comparison, name = self.comparison, self.context_name
        if comparison is None or name is None:
            self.reasons = None
            return
        sides = (comparison.older_at, comparison.newer_at)
        if self.reasons is not None and self.reasons.sides != sides:
            self.reasons = None
        self._reasons_of(name, comparison)

    @work(exclusive=True, group="reasons")
    async def _reasons_of(self, name: str, comparison: Comparison) -> None:
        ws, older, newer = self.workspace, comparison.older_at, comparison.newer_at
        logs: list[Changelog] = []
        try:
            if older is not None and newer is not None:
                logs += (await ws.changelogs(name, between=(older, newer))).changelogs
            else:  # the newer side is live (or held at live): up to the newest, then since
                count = ws.snapshot_count(name)
                newest = ws.snapshot_at(name, count - 1) if count else None
                if older is not None and newest is not None and newest.id != older:
                    logs += (await ws.changelogs(name, between=(older, newest.id))).changelogs
                step = await ws.changelogs(name)
                if step.kind == "live":
                    logs += step.changelogs
        except (ContextError, StoreError):
            logs = []  # the diff stands without its reasons
        if comparison == self.comparison:  # still the diff shown
            self.reasons = Reasons.of(logs, (older, newer))


QUICK_FILTERS = [  # (its key in the menu, what it shows, the selector)
    ("e", "expires next episode", "[remaining<=1]"),
    ("r", "rehydrates next episode", "[rehydrates_in<=1]"),
    ("p", "permanent items", "[permanent]"),
    ("t", "temporary items", "[temporary]"),
    ("s", "sticky items", "[sticky]"),
    ("c", "cyclic items", "[cyclic]"),
]


def _time_qualified(text: str) -> bool:
    """Is ``text`` a selector that names its own snapshot (``@e12 …``)?"""
    try:
        return parse_selector(text).is_time_qualified
    except InvalidSelector:
        return False


def _coordinates(row: Row) -> str:
    """An item's coordinates as a selector spells them: ``d3, 1, 0``."""
    assert row.slot is not None
    return f"d{row.depth}, {row.slot.position}, {row.offset}"


def _where(shown: Shown) -> Where:
    entry = shown.entry
    return Where(shown.name, shown.view.current_episode, entry.id if entry is not None else None)


def _side_names(base: DiffBase, shown: Shown, shown_is_newer: bool) -> tuple[str, str]:
    """The two sides of a diff as the header and the detail name them, older first, the base
    marked: ``("n41 (base)", "live")``."""
    here = visible(shown.entry.id) if shown.entry is not None else "live"
    there = f"{visible(base.name)} (base)"
    return (there, here) if shown_is_newer else (here, there)


def _ordered(a: int | None, b: int | None) -> tuple[int | None, int | None]:
    """Two positions (None = now, the newest), older first."""
    a_key = float("inf") if a is None else a
    b_key = float("inf") if b is None else b
    return (a, b) if a_key <= b_key else (b, a)


def _imported_from_gptme(view: ContextView, first: int = 8) -> bool:
    """Whether one of the first items of ``view`` was read from a gptme log (an imported
    context's system prompt and first messages are)."""
    for number, (item, _depth, _slot, _offset) in enumerate(view.iter_items()):
        if number >= first:
            return False
        if source_of(item) is not None:
            return True
    return False
