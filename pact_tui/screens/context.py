"""The context inspector: the tree, the detail, the provider view, step control, time travel,
diffs and the selector bar, for one context of the workspace at a time.

Widgets are given views and post messages; this screen is what talks to the workspace.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.console import Group
from textual import on, work
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import ContentSwitcher, Footer, OptionList

from engine.context import ContextError, ContextView, Diff, InvalidSelector, Node
from engine.context.selectors import parse_selector
from engine.store import StoreError
from engine.workspace import Change, SnapshotEntry, Workspace

from ..messages import WorkspaceChanged
from ..types import Mark
from ..widgets.context_list import ContextList
from ..widgets.context_tree import ContextTree, LinePane, ProviderList
from ..widgets.detail import NodeDetail, describe, diff_summary
from ..widgets.scrubber import Scrubber
from ..widgets.selector_bar import SelectorBar
from ..widgets.status import Status, StatusBar
from .prompt import PromptScreen

if TYPE_CHECKING:
    from ..app import PactApp

SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0)  # seconds per step while playing
SELECT_DELAY = 0.12  # seconds of quiet typing before a selector is evaluated
MAX_REMOVED_SHOWN = 12  # removed items listed in the detail pane during a diff


@dataclass(frozen=True, slots=True)
class DiffBase:
    """One end of a diff: a snapshot (its index in the context's list), or now (None)."""

    snapshot_id: str | None
    index: int | None


def _state_of(view: ContextView) -> tuple[object, ...]:
    """How far a view has got, for remembering what was derived from it: the view object, its
    episode (ages, lifecycle flags) and, live, its journal (every write) and latest snapshot
    (an item's history; a seal writes nothing else)."""
    live = view.live()
    token = live.journal_token if live is not None else None
    return (view, view.current_episode, token, view.history.latest)


class ContextScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("u", "message('user')", "User", tooltip="add a user message (a new turn)"),
        Binding("a", "message('assistant')", "Assistant", tooltip="add an assistant message"),
        Binding(
            "full_stop", "advance", "Advance", tooltip="advance one episode (expire, rehydrate)"
        ),
        Binding("s", "seal", "Seal", tooltip="seal a named snapshot"),
        Binding("left_square_bracket", "step(-1)", "◀", tooltip="step back one snapshot"),
        Binding("right_square_bracket", "step(1)", "▶", tooltip="step forward (to live)"),
        Binding("L", "live", "Live", tooltip="return to the live context"),
        Binding("p", "play", "Play", tooltip="play/pause automatic stepping"),
        Binding("plus", "speed(-1)", "Faster", show=False, tooltip="play faster"),
        Binding("minus", "speed(1)", "Slower", show=False, tooltip="play slower"),
        Binding("d", "diff", "Diff", tooltip="mark this state as the diff base, or clear the diff"),
        Binding("slash", "search", "Select", tooltip="type a selector; matches highlight"),
        Binding("n", "next_match(1)", "Next match", show=False, tooltip="next selector match"),
        Binding("N", "next_match(-1)", "Prev match", show=False, tooltip="previous match"),
        Binding("v", "toggle_provider", "Provider", tooltip="tree ↔ what the model is sent"),
        Binding("z", "fold_all(1)", "Fold history", show=False, tooltip="fold every history turn"),
        Binding("Z", "fold_all(0)", "Unfold all", show=False, tooltip="unfold everything"),
        Binding(
            "left_curly_bracket", "edge(0)", "First snap", show=False, tooltip="oldest snapshot"
        ),
        Binding(
            "right_curly_bracket", "edge(1)", "Last snap", show=False, tooltip="newest snapshot"
        ),
        Binding("c", "focus_contexts", "Contexts", show=False, tooltip="focus the context list"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.context_name: str | None = None
        self.position: int | None = None  # index of the snapshot shown; None = live
        self.view: ContextView | None = None
        self.pending = 0
        self.diff_base: DiffBase | None = None
        self.diff: Diff | None = None
        self.removed: list[tuple[str, str, str]] = []  # (id, coordinates, text) of removed items
        self.selector = ""
        self.matches: list[Node] = []
        self._pinned_matches: frozenset[str] = frozenset()  # a time-qualified selector's ids
        self._matched: tuple[object, ...] | None = None  # what self.matches was computed for
        self._detailed: tuple[object, ...] | None = None  # what the detail pane shows
        self.selector_error = False
        self.match_index = -1
        self.play_speed: float | None = None
        self._play_timer: Timer | None = None
        self._select_timer: Timer | None = None
        self._refresh_queued = False
        self._showing = asyncio.Lock()  # one show_current at a time: each reads then draws
        self._commands_in_flight = 0
        self._diff_cache: tuple[tuple[str, str], Diff, list[Any]] | None = None

    # -- layout -----------------------------------------------------------------------------------
    def compose(self) -> Any:
        yield StatusBar(id="status")
        with Horizontal(id="body"):
            yield ContextList(id="contexts")
            with Vertical(id="main"):
                with ContentSwitcher(initial="tree", id="panes"):
                    yield ContextTree(id="tree")
                    yield ProviderList(id="provider")
                yield Scrubber(id="scrubber")
                yield SelectorBar(id="selector")
            yield NodeDetail(id="detail")
        yield Footer(compact=True)

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

    async def on_mount(self) -> None:
        app: PactApp = self.app  # type: ignore[assignment]
        names = [info.name for info in self.workspace.contexts()]
        wanted = app.initial_context
        if wanted is not None and wanted not in names:
            self.notify(f"no context named {wanted!r}; showing the first", severity="warning")
        self.context_name = wanted if wanted in names else (names[0] if names else None)
        self.context_tree.focus()
        await self.show_current()
        self.call_after_refresh(self._build_indexes)

    def _build_indexes(self) -> None:
        """After the first paint: what opening left for the shown context (see
        Context.restore); other contexts build theirs on their first operation."""
        if self.context_name is not None:
            self.workspace.context(self.context_name).build_indexes()

    # -- drawing the current state --------------------------------------------------------------
    async def show_current(self) -> None:
        """Bring every pane up to date with the workspace and this screen's state."""
        async with self._showing:  # a rebuilt past view awaits: no two draws interleave
            await self._show_current()

    async def _show_current(self) -> None:
        self._refresh_queued = False
        ws, name = self.workspace, self.context_name
        self.query_one(ContextList).show(ws.contexts(), name)
        if name is None:
            self.view = None
            self.query_one(StatusBar).show(Status(None, None, True))
            return
        count = ws.snapshot_count(name)
        if self.position is not None and self.position >= count:
            self.position = None
        if self.position is None:
            self.view = ws.context(name)
        else:
            self.view = await ws.at_snapshot(name, ws.snapshot_at(name, self.position).id)
        if self.selector:
            self._evaluate_selector()
        if self.diff_base is not None:
            await self._compute_diff()
        marks = self._marks()
        pane = self.active_pane
        pane.show(self.view, marks)
        entry = self._entry()
        self.set_class(entry is not None, "-past")
        kind = "provider rendering" if pane is self.provider else "context tree"
        if entry is None:
            pane.border_title = f"{kind} · live"
        else:
            pane.border_title = (
                f"{kind} · PAST · snapshot {entry.id} · episode {entry.episode} · read-only"
            )
        base = self.diff_base.index if self.diff_base is not None else None
        self.query_one(Scrubber).show(count, entry, base)
        self._show_status()
        self._show_detail()

    def _show_status(self) -> None:
        entry = self._entry()
        matches = None
        if self.selector and self.selector_error:
            matches = "invalid selector"
        elif self.selector:
            where = f"{self.match_index + 1}/" if self.match_index >= 0 else ""
            matches = f"{where}{len(self.matches)} match{'es' if len(self.matches) != 1 else ''}"
        diff = None
        if self.diff_base is not None:
            diff = f"{self.diff_base.snapshot_id or 'now'} ↔ {entry.id if entry else 'now'}"
            if self.diff is not None:
                added, removed, changed = self.diff.counts
                diff += f"  +{added} -{removed} ~{changed}"
        status = Status(
            context=self.context_name,
            episode=self.view.current_episode if self.view is not None else None,
            live=self.position is None,
            snapshot=entry.id if entry is not None else None,
            trigger=entry.trigger if entry is not None else None,
            pending=self.pending,
            diff=diff,
            playing=self.play_speed,
            matches=matches,
        )
        self.query_one(StatusBar).show(status)

    def _entry(self) -> SnapshotEntry | None:
        if self.position is None or self.context_name is None:
            return None
        return self.workspace.snapshot_at(self.context_name, self.position)

    def _show_detail(self) -> None:
        detail = self.query_one(NodeDetail)
        row = self.active_pane.current_row
        view = self.view
        if row is None or view is None or self.context_name is None:
            return
        # A draw shows the detail, and the cursor's Selected message that the same draw posts
        # would show it again: build it only when what it describes has changed.
        shown = (*_state_of(view), row, self.diff)
        if shown == self._detailed:
            return
        self._detailed = shown
        change = None
        if self.diff is not None and row.item is not None:
            change = self.diff.change_of(row.item.id)
        body = describe(view, row, change)
        if self.diff is not None:
            body = Group(diff_summary(self.diff, self.removed, self._diff_label()), body)
        detail.show(body)

    def _diff_label(self) -> str:
        assert self.diff_base is not None
        entry = self._entry()
        older, newer = self.diff_base.snapshot_id or "now", entry.id if entry else "now"
        if self._diff_order()[0] == self.position:
            older, newer = newer, older
        return f"{older} → {newer}"

    def _marks(self) -> dict[str, Mark]:
        marks: dict[str, Mark] = {}
        if self.diff is not None:
            shown_is_newer = self._diff_order()[1] == self.position
            for item_id in self.diff.added if shown_is_newer else self.diff.removed:
                marks[item_id] = "added" if shown_is_newer else "removed"
            for change in self.diff.changed:
                marks[change.id] = "changed"
        for node in self.matches:
            marks[node.id] = "match"
        return marks

    @on(LinePane.Selected)
    def _on_selected(self, event: LinePane.Selected) -> None:
        if event.pane is self.active_pane:
            self._show_detail()

    def request_refresh(self) -> None:
        """Coalesce bursts: many changes before the next frame cost one repaint."""
        if not self._refresh_queued:
            self._refresh_queued = True
            self.call_later(self.show_current)

    # -- live changes ---------------------------------------------------------------------------
    async def on_workspace_changed(self, message: WorkspaceChanged) -> None:
        change: Change = message.change
        if self.context_name is None:
            names = [info.name for info in self.workspace.contexts()]
            self.context_name = names[0] if names else None
        if self.context_name not in change.contexts or self.position is not None:
            # Another context moved, or the user is in the past (which live changes must not
            # move): only the list of contexts and the count of what arrived are redrawn.
            if self.context_name in change.contexts:
                stream = "ctx:" + self.context_name
                self.pending += sum(1 for event in change.events if event.stream == stream)
                self._show_status()
            self.query_one(ContextList).show(self.workspace.contexts(), self.context_name)
            return
        self.request_refresh()

    # -- step control -----------------------------------------------------------------------------
    def _writable(self) -> bool:
        if self.context_name is None:
            self.notify("no context selected", severity="warning")
            return False
        if self.position is not None:
            self.notify(
                "You are looking at the past, which is read-only. Press L to return to live.",
                severity="warning",
                title="Read-only",
            )
            return False
        return True

    @work(group="commands")
    async def run_command(self, command: dict[str, Any]) -> dict[str, Any] | None:
        """Run one context command; a refusal is a notification, never a crash."""
        assert self.context_name is not None
        self._commands_in_flight += 1
        try:
            result: dict[str, Any] = await self.workspace.run(
                self.context_name, command, actor="tui"
            )
        except (ContextError, StoreError) as error:
            self.notify(str(error), severity="error", title="Refused")
            self.request_refresh()  # a refusal may still have reloaded what others appended
            return None
        finally:
            self._commands_in_flight -= 1
        await self.show_current()
        return result

    def action_message(self, role: str) -> None:
        if not self._writable():
            return

        def send(text: str | None) -> None:
            if text:
                self.run_command({"op": "message", "role": role, "text": text})

        self.app.push_screen(PromptScreen(f"{role.capitalize()} message"), send)

    def action_advance(self) -> None:
        if self._writable():
            self.run_command({"op": "advance"})

    def action_seal(self) -> None:
        if not self._writable():
            return

        def seal(trigger: str | None) -> None:
            if trigger:
                self.run_command({"op": "seal", "trigger": trigger.strip()})

        self.app.push_screen(PromptScreen("Seal a snapshot named", value="checkpoint"), seal)

    # -- time travel ----------------------------------------------------------------------------
    async def go_to(self, position: int | None) -> None:
        """Show snapshot ``position`` (read-only), or live (None)."""
        if self.context_name is None:
            return
        count = self.workspace.snapshot_count(self.context_name)
        if position is not None:
            if count == 0:
                self.notify("this context has no snapshots yet: advance or seal first")
                return
            position = max(0, min(position, count - 1))
        self.position = position
        if position is None:
            self.pending = 0
        await self.show_current()

    async def action_step(self, direction: int) -> None:
        if self.context_name is None:
            return
        count = self.workspace.snapshot_count(self.context_name)
        if self.position is None:
            if direction < 0 and count:
                await self.go_to(count - 1)
            return
        target = self.position + direction
        await self.go_to(None if target >= count else target)

    async def action_edge(self, end: int) -> None:
        if self.context_name is None:
            return
        count = self.workspace.snapshot_count(self.context_name)
        await self.go_to(count - 1 if end else 0)

    async def action_live(self) -> None:
        await self.go_to(None)

    @on(Scrubber.Jump)
    async def _on_jump(self, event: Scrubber.Jump) -> None:
        await self.go_to(event.index)

    def action_play(self) -> None:
        if self.play_speed is not None:
            self._stop_playing()
        else:
            self.play_speed = 1.0
            self._start_timer()
        self._show_status()

    def action_speed(self, direction: int) -> None:
        if self.play_speed is None:
            return
        index = SPEEDS.index(self.play_speed) + direction
        self.play_speed = SPEEDS[max(0, min(index, len(SPEEDS) - 1))]
        self._start_timer()
        self._show_status()

    def _start_timer(self) -> None:
        if self._play_timer is not None:
            self._play_timer.stop()
        assert self.play_speed is not None
        self._play_timer = self.set_interval(self.play_speed, self.play_step)

    def _stop_playing(self) -> None:
        if self._play_timer is not None:
            self._play_timer.stop()
        self._play_timer = None
        self.play_speed = None

    async def play_step(self) -> None:
        """One automatic step: forward through the past, or advance the live context."""
        if self.position is not None:
            await self.action_step(1)
            if self.position is None:  # caught up with now: stop rather than write anything
                self._stop_playing()
                self._show_status()
        elif self.context_name is not None and not self._commands_in_flight:
            self.run_command({"op": "advance"})  # a slow write is not queued behind itself

    # -- diff -----------------------------------------------------------------------------------
    async def action_diff(self) -> None:
        if self.context_name is None:
            return
        if self.diff_base is not None:
            self.diff_base, self.diff, self.removed = None, None, []
            self.notify("diff cleared")
        else:
            entry = self._entry()
            self.diff_base = DiffBase(entry.id if entry else None, self.position)
            self.notify(
                f"diff base set to {entry.id if entry else 'now'}: move with [ ] to compare",
                title="Diff",
            )
        await self.show_current()

    def _diff_order(self) -> tuple[int | None, int | None]:
        """(older, newer) positions of the diff's two ends (None = now, the newest)."""
        assert self.diff_base is not None
        a, b = self.diff_base.index, self.position
        a_key = float("inf") if a is None else a
        b_key = float("inf") if b is None else b
        return (a, b) if a_key <= b_key else (b, a)

    async def _compute_diff(self) -> None:
        assert self.diff_base is not None and self.context_name is not None
        ws, name = self.workspace, self.context_name
        older, newer = self._diff_order()
        older_id = None if older is None else ws.snapshot_at(name, older).id
        newer_id = None if newer is None else ws.snapshot_at(name, newer).id
        ends = (older_id, newer_id)
        # Two snapshots never change: their diff is kept while live changes repaint the screen.
        if self._diff_cache is not None and self._diff_cache[0] == ends:
            self.diff, self.removed = self._diff_cache[1], self._diff_cache[2]
            return
        self.diff = diff = await ws.diff(name, older_id, newer_id)
        gone = set(diff.removed[:MAX_REMOVED_SHOWN])
        older_view = await ws.view(name, older_id)
        self.removed = [
            (item.id, f"({depth},{slot.position},{offset})", item.text())
            for item, depth, slot, offset in older_view.iter_items()
            if item.id in gone
        ]
        if older_id is not None and newer_id is not None:
            self._diff_cache = ((older_id, newer_id), diff, self.removed)

    # -- the selector bar -----------------------------------------------------------------------
    def action_search(self) -> None:
        self.query_one(SelectorBar).open(self.selector)

    @on(SelectorBar.Changed)
    def _on_selector_changed(self, event: SelectorBar.Changed) -> None:
        self.selector = event.text.strip()
        self._pinned_matches = frozenset()
        if self._select_timer is not None:
            self._select_timer.stop()
        self._select_timer = self.set_timer(SELECT_DELAY, self._evaluate_and_show)

    async def _evaluate_and_show(self) -> None:
        await self._apply_selector(jump=True)

    @on(SelectorBar.Closed)
    async def _on_selector_closed(self, event: SelectorBar.Closed) -> None:
        if self._select_timer is not None:
            self._select_timer.stop()
        self.active_pane.focus()
        if event.keep:
            await self._apply_selector(jump=False)  # which draws what it found
        else:
            self.selector, self.matches, self.match_index, self._matched = "", [], -1, None
            self.query_one(SelectorBar).clear_feedback()
            await self.show_current()

    def _matched_for(self) -> tuple[object, ...]:
        """What the matches depend on: the selector, its pins and the view's state."""
        assert self.view is not None
        return (self.selector, self._pinned_matches, *_state_of(self.view))

    def _evaluate_selector(self) -> None:
        """Re-evaluate the current selector against the view (after a change or a move); a
        no-op when the matches were just computed for this very state."""
        if not self.selector or self.view is None:
            self.matches, self._matched = [], None
            return
        key = self._matched_for()
        if key == self._matched:
            return
        self._matched = key
        try:
            parsed = parse_selector(self.selector)
            if parsed.is_time_qualified:
                # It names its own snapshot: its matches are those nodes, wherever the view now
                # is (a node that is not here has no place to be highlighted).
                pinned = self._pinned_matches
                self.matches = self.view.locate(pinned) if pinned else []
                return
            self.matches = self.view.select(parsed)
        except ContextError:
            self.matches = []

    async def _apply_selector(self, *, jump: bool) -> None:
        bar = self.query_one(SelectorBar)
        text, name = self.selector, self.context_name
        shown = [node.id for node in self.matches]
        if not text or name is None:
            self.matches, self.match_index, self.selector_error, self._matched = [], -1, False, None
            bar.clear_feedback()
            await self.show_current()
            return
        try:
            parsed = parse_selector(text)
            if parsed.is_time_qualified:
                entry = self.workspace.resolve_time(name, parsed)
                position = entry.index
                if position != self.position:
                    self.position = position
                    await self.show_current()
                assert self.view is not None
                self.matches = self.view.select(dataclasses.replace(parsed, time=None))
                self._pinned_matches = frozenset(node.id for node in self.matches)
            elif self.view is not None:
                self.matches = self.view.select(parsed)
        except InvalidSelector as error:
            self.matches, self.match_index, self.selector_error, self._matched = [], -1, True, None
            self._pinned_matches = frozenset()
            bar.show_error(error.position, error.reason)
            await self.show_current()
            return
        except ContextError as error:
            self.matches, self.match_index, self.selector_error, self._matched = [], -1, True, None
            self._pinned_matches = frozenset()
            bar.show_error(0, error.message)
            await self.show_current()
            return
        self.selector_error = False
        if self.view is not None:
            self._matched = self._matched_for()  # the draw below need not select again
        bar.show_matches(len(self.matches))
        if jump or [n.id for n in self.matches] != shown:
            self.match_index = -1  # Enter on what was already walked keeps the place
        await self.show_current()
        if jump and self.matches:
            self.action_next_match(1)

    def action_next_match(self, direction: int) -> None:
        if not self.matches:
            if self.selector:
                self.notify("no matches", severity="warning")
            return
        self.match_index = (self.match_index + direction) % len(self.matches)
        node = self.matches[self.match_index]
        pane = self.active_pane
        layout = pane.layout_model
        if node.depth is None or node.position is None:
            line = layout.line_of_turn(node.depth if node.depth is not None else 0)
        else:
            layout.reveal(node.depth, node.position)
            if self.view is not None:
                pane.show(self.view)
            line = layout.line_of(node.depth, node.position, node.offset)
        if line is not None:
            pane.jump_to(line)
        self._show_status()

    # -- panes and contexts ---------------------------------------------------------------------
    async def action_toggle_provider(self) -> None:
        switcher = self.query_one(ContentSwitcher)
        switcher.current = "provider" if switcher.current == "tree" else "tree"
        self.active_pane.focus()
        await self.show_current()

    def action_fold_all(self, folded: int) -> None:
        self.context_tree.fold_all(bool(folded))

    def action_focus_contexts(self) -> None:
        self.query_one(ContextList).focus()

    @on(OptionList.OptionSelected, "#contexts")
    async def _on_context_picked(self, event: OptionList.OptionSelected) -> None:
        await self.switch_context(str(event.option.id))

    async def switch_context(self, name: str) -> None:
        if name == self.context_name:
            return
        self.context_name = name
        self.position, self.pending = None, 0
        self.diff_base, self.diff, self.removed = None, None, []
        self._pinned_matches, self.match_index = frozenset(), -1
        for pane in (self.context_tree, self.provider):
            pane.forget()  # folds and layout belong to the context they were made for
        await self.show_current()
        self.context_tree.focus()
