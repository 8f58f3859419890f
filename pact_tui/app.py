"""The pact-tui application: opens a workspace, follows its change feed, and shows its views;
or, given a gptme conversation directory, its master log (``MasterLogScreen``).

``PactApp(path, clock=None, watch=True)`` builds it with injectable parts: tests pass a
simulated clock and ``watch=False`` (no file watchers).
"""

from __future__ import annotations

import asyncio
import getpass
import threading
import time
from collections.abc import Callable, Iterable
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, work
from textual.app import App, SystemCommand
from textual.binding import BindingType
from textual.color import Color
from textual.geometry import Size
from textual.notifications import SeverityLevel
from textual.reactive import var
from textual.screen import Screen
from textual.signal import Signal
from textual.widgets import Static
from textual.worker import WorkerFailed

from engine.context.errors import MalformedPackedTurns
from engine.heap import end_start
from engine.masterlog.errors import MasterLogError
from engine.store.opening import is_url
from engine.visible import visible

from .keymap import KeymapError, bind, key_shown
from .palette import PlainCommands, PlainThemes

if TYPE_CHECKING:
    from engine.masterlog.index import Refresh
    from engine.workspace import Change, Workspace

    from .logsession import LogSession
from .screens.help import HelpScreen, Legend
from .themes import (
    DEFAULT_THEME,
    ConfigFileError,
    ThemeFileError,
    bundled_themes_dir,
    configured_human,
    configured_keymap,
    configured_theme,
    load_theme_file,
    load_themes,
    remember_theme,
    user_themes_dir,
)

MIN_WIDTH, MIN_HEIGHT = 80, 20


# A workspace's screens are loaded when first shown (with what they draw, Markdown included): a
# gptme conversation's start does not wait for them.
def _context_screen() -> Screen[Any]:
    from .screens.context import ContextScreen

    return ContextScreen()


def _document_screen() -> Screen[Any]:
    from .screens.document import DocumentScreen

    return DocumentScreen()


def _masterlog_screen() -> Screen[Any]:
    from .screens.masterlog import MasterLogScreen

    return MasterLogScreen()


def login_name() -> str:
    """The user's login name, the custodian's name when nothing else says one."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name in the environment, nor a passwd entry
        return "custodian"


# Variables our CSS uses beyond Textual's own, so a theme file may leave them out.
THEME_VARIABLE_DEFAULTS = {
    "muted": "#8a94a6",
    "permanent": "#5fa8ff",
    "temporary": "#ebcb8b",
    "sticky": "#8fd18f",
    "cyclic": "#c792ea",
}


class PactApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "pact-tui"
    COMMANDS: ClassVar[set[Any]] = {PlainCommands}  # entries drawn as plain text, not markup
    MODES: ClassVar[dict[str, str | Callable[[], Screen[Any]]]] = {
        "context": _context_screen,
        "document": _document_screen,
        "masterlog": _masterlog_screen,
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        bind("quit", "quit", "Quit"),
        bind("help", "help", "Help"),
        bind("show-contexts", "switch_mode('context')", "Contexts", show=False),
        bind("show-documents", "switch_mode('document')", "Documents", show=False),
    ]

    document: var[str | None] = var(None, init=False)
    """The document in the custodian's hands: the document screen's, else the one it opens on
    (``--document``, else the workspace's first); None: the workspace has none."""
    waiting: var[int] = var(0, init=False)
    """How many things wait for the custodian in ``document`` now (its escalation inbox),
    counted by the app from the workspace: when the document is chosen, and whenever it changes
    (the change feed, or a command of this process). Every screen's status line shows it."""

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's commands, then the rarer actions of ``screen`` (the one the palette was
        opened over: each screen brings its own, ``system_commands``)."""
        yield from super().get_system_commands(screen)
        commands = getattr(screen, "system_commands", None)
        if commands is not None:
            yield from commands()

    def _handle_exception(self, error: Exception) -> None:
        """Textual's hook for what a handler, a render or a worker raised, which ends the app;
        but not for a forged checkpoint's packed turn found malformed where it was first read
        (drawn, or read by a worker, before the unpacking between frames reached it): the
        context screen rebuilds the context from its log and says so, as when the unpacking
        finds it (``ContextScreen.packed_turns_malformed``)."""
        cause = error.error if isinstance(error, WorkerFailed) else error
        if isinstance(cause, MalformedPackedTurns):
            for screen in reversed(self.screen_stack):
                refuse = getattr(screen, "packed_turns_malformed", None)
                if refuse is not None:
                    refuse()
                    return
        super()._handle_exception(error)

    def __init__(
        self,
        path: str | Path,
        *,
        clock: Callable[[], int] | None = None,
        watch: bool = True,
        theme: str | None = None,
        theme_dirs: list[Path] | None = None,
        context: str | None = None,
        document: str | None = None,
        human: str | None = None,
        create: bool = False,
        read_only: bool = False,
        step_time: bool = False,
    ) -> None:
        super().__init__()
        self.workspace_changed: Signal[Change] = Signal(self, "workspace-changed")
        """Events were applied to the workspace (by any process): screens subscribe."""
        self.path = Path(path)
        self.url: str | None = str(path) if is_url(path) else None
        """The workspace's database when it is on PostgreSQL (``path`` means nothing then)."""
        self.clock = clock or time.time_ns
        self.step_time = step_time
        """Make the workspace's protocol time stepped on opening (the demo, or
        ``--step-time``): recorded in the file, for every process, for good
        (``Workspace.make_stepped``, see ``engine/protocol_time.py``)."""
        self.live_updates = watch
        self.create = create
        self.read_only = read_only
        """Asked to open read-only (``--read-only``); one this user cannot write is, anyway."""
        self.initial_context = context
        self.initial_document = document
        self.custodian = human or configured_human() or login_name()
        """Who acts on documents from this app: ``--human``, the config file, or the login."""
        self.workspace: Workspace | None = None
        self.deep_verified: int | None = None
        """When ``pact-tui verify --deep`` last passed on the workspace (ns), as read on
        opening it; None: never (the status line says which)."""
        self.conversation: LogSession | None = None
        """The gptme conversation directory shown, when ``path`` is one (not a workspace)."""
        self.reference_sessions: dict[str, LogSession] = {}
        """The conversation folders an imported context's reference items point into, opened
        and verified when the context screen first judges them (``reference_session``)."""
        self._reference_lock = threading.Lock()
        self.conversation_changed: Signal[list[Refresh]] = Signal(self, "conversation-changed")
        """The conversation directory changed (gptme wrote to it): the master-log screen
        subscribes."""
        self.theme_dirs = theme_dirs if theme_dirs is not None else default_theme_dirs()
        self._good_themes: dict[Path, str] = {}  # theme file → the theme name it last defined
        self._fallback: tuple[str, str] | None = None  # (broken theme, the one shown instead)
        self._load_themes(theme or configured_theme())
        self.keymap: dict[str, str] = {}
        """The user's keys (the config file's ``[keys]``: action id → keys) over the defaults
        of ``pact_tui/keymap.py``."""
        self._keymap_problem: str | None = None
        try:
            self.keymap = configured_keymap()
        except KeymapError as error:
            self._keymap_problem = f"{error}; the default keys are used"

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Every notification of the app (a screen's or a widget's ``notify`` comes here) is
        plain text: it may quote a name, a path, an error's account of bad input, so it is
        never read as markup (``markup`` is ignored), and each control character in it is
        shown as its escape (the message's lines kept)."""
        super().notify(
            visible(message, multiline=True),
            title=visible(title),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return {**super().get_theme_variable_defaults(), **THEME_VARIABLE_DEFAULTS}

    def get_css_variables(self) -> dict[str, str]:
        variables = super().get_css_variables()
        if "muted" not in self.current_theme.variables:
            # Textual's $text-muted is "auto 60%", a contrast colour the line-drawn panes'
            # partial styles cannot resolve (it came out white on the light theme): a real
            # colour, 60% of the way from the background to the foreground, works everywhere.
            background = Color.parse(variables["background"])
            variables["muted"] = background.blend(Color.parse(variables["foreground"]), 0.6).hex
        return variables

    def refresh_css(self, animate: bool = True) -> None:
        if not self.screen_stack:
            # The theme chosen in __init__ asks for this as the app loads, before anything is
            # styled: Textual would parse every rule into a stylesheet of its own, and the
            # first screen parse them again into the app's (6.5 ms of the start at 100k).
            # Parsed once here, with the theme's variables, the first screen reuses them.
            self.stylesheet.set_variables(self.get_css_variables())
            self.stylesheet.parse()
            return
        super().refresh_css(animate)

    # -- themes ---------------------------------------------------------------------------------
    def _load_themes(self, wanted: str | None) -> None:
        loaded, errors = load_themes(self.theme_dirs)
        for theme_file in loaded:
            self.register_theme(theme_file.theme)
            self._good_themes[theme_file.path] = theme_file.theme.name
        self._startup_problems = [str(error) for error in errors]
        name = wanted or DEFAULT_THEME
        if name in self.available_themes:
            self.theme = name
        else:
            if wanted is not None:
                self._startup_problems.append(f"theme {wanted!r} not found; using the default")
            if DEFAULT_THEME in self.available_themes:
                self.theme = DEFAULT_THEME

    def search_themes(self) -> None:
        """Textual's theme picker (the palette's "Theme" command), whose choice is remembered
        for the next start (``choose_theme``)."""
        from textual.command import CommandPalette

        self.push_screen(
            CommandPalette(providers=[RememberedThemes], placeholder="Search for themes…")
        )

    def choose_theme(self, name: str) -> None:
        """Show theme ``name``, and start with it from now on (the config file); a config file
        that cannot take it is said, and the theme is shown anyway."""
        self.theme = name
        try:
            remember_theme(name)
        except ConfigFileError as error:
            self.notify(
                f"{error.path}: {error.problem}",
                title="The theme is not remembered",
                severity="warning",
                timeout=8,
            )

    def reload_theme_file(self, path: Path) -> None:
        """A theme file changed on disk: re-register it; if broken, say so and fall back."""
        try:
            theme_file = load_theme_file(path)
        except ThemeFileError as error:
            previous = self._good_themes.get(path)
            if previous is not None and previous == self.theme:
                self.theme = DEFAULT_THEME if previous != DEFAULT_THEME else "textual-dark"
                self._fallback = (previous, self.theme)
                consequence = f"Using {self.theme} until it is fixed."
            elif previous is not None:
                consequence = f"Keeping the last good version of {previous}."
            else:
                consequence = "Its theme is not available until it is fixed."
            self.notify(
                f"{error.problem}. {consequence}",
                title=f"Theme file {path.name}",
                severity="error",
                timeout=8,
            )
            return
        theme = theme_file.theme
        self.register_theme(theme)
        self._good_themes[path] = theme.name
        if self._fallback == (theme.name, self.theme):  # fixed: back to it, as promised
            self._fallback = None
            self.theme = theme.name
        elif theme.name == self.theme:
            self.refresh_css(animate=False)
            self.refresh(layout=True)
            for screen in self.screen_stack:
                screen.refresh(layout=True)
                for widget in screen.walk_children():
                    widget.refresh()
        self.notify(f"theme {theme.name!r} reloaded", timeout=3)

    @work(exclusive=True, group="themes")
    async def watch_themes(self) -> None:
        from watchfiles import awatch

        directories = [str(d) for d in self.theme_dirs if d.is_dir()]
        if not directories:
            return
        async for changes in awatch(*directories, debounce=100, step=20):
            for path in sorted({Path(p) for _change, p in changes if p.endswith(".toml")}):
                if path.exists():
                    self.reload_theme_file(path)

    def protocol_clock(self) -> int:
        """Protocol time (ns): the workspace's (the clock, plus how far a stepped workspace was
        stepped ahead, in whichever process), or the clock before one is open."""
        return self.workspace.now_ns() if self.workspace is not None else self.clock()

    # -- the workspace --------------------------------------------------------------------------
    async def on_mount(self) -> None:
        try:
            await self._start()
        finally:
            # The process's start is over once this first frame is drawn: the collector,
            # paused by the entry point (pact_tui/launch.py), runs again (a no-op otherwise).
            self.call_after_refresh(end_start)

    async def _start(self) -> None:
        for problem in self._startup_problems:
            self.notify(problem, title="Theme", severity="error", timeout=8)
        if self._keymap_problem is not None:
            self.notify(self._keymap_problem, title="Keys", severity="error", timeout=10)
        if self.keymap:
            self.set_keymap(self.keymap)
        if self.url is None and self.path.is_dir():
            await self._open_conversation()
            return
        await self._open_workspace()

    async def _open_workspace(self) -> None:
        # Loaded here, not with the module: a gptme conversation's start does without them.
        from engine.context import ContextError
        from engine.store import StoreError, can_write
        from engine.workspace import Workspace

        cannot_write = (
            self.url is None
            and not self.read_only
            and self.path.exists()
            and not can_write(self.path)
        )
        # The first screen's modules are imported while the workspace is read (its reads wait
        # on SQLite's thread): 17 ms of the cold start at 100,000 items.
        mode = "document" if self.initial_document is not None else "context"
        asyncio.get_running_loop().call_soon(import_module, f"{__package__}.screens.{mode}")
        try:
            self.workspace = await Workspace.open(
                self.url or self.path,
                create=self.create and not self.read_only,
                clock=self.clock,
                watch=self.live_updates,
                read_only=self.read_only or cannot_write,
            )
        except (StoreError, ContextError) as error:
            self.exit(return_code=1, message=visible(f"pact-tui: {error}"))
            return
        if cannot_write:
            self.notify(
                f"This user cannot write {visible(str(self.path))} (the file or its folder is "
                "read-only): "
                "it is open read-only, and commands are off.",
                title="Read-only",
                severity="warning",
                timeout=10,
            )
        if self.workspace.store.unchanging:
            self.notify(
                "Nobody has the workspace open, and this user cannot write it (or its folder): "
                "it is read as it is now, without making files beside it, and changes by "
                "other processes are not shown.",
                title="Read-only",
                severity="warning",
                timeout=10,
            )
        if self.step_time and not self.workspace.read_only:
            try:
                await self.workspace.make_stepped(human=self.custodian)
            except (StoreError, ContextError) as error:
                self.notify(str(error), title="Step", severity="error")
        verified = await self.workspace.deep_verification()
        self.deep_verified = verified.time_ns if verified is not None else None
        not_used = self.workspace.checkpoint_problem  # a cache: the log was read instead
        if not_used is not None:
            self.notify(not_used, title="Checkpoint", severity="warning", timeout=10)
        # Asked for a document (--document), the app opens on it; else on the contexts.
        await self.switch_mode(mode)
        if self.live_updates:
            self.follow_workspace()
            self.watch_themes()
        self._check_size()
        self.count_waiting()  # in a worker: the first paint does not wait for it

    # -- what waits for the custodian -------------------------------------------------------------
    def watch_document(self) -> None:
        self.count_waiting()

    @work(exclusive=True, group="waiting")
    async def count_waiting(self) -> None:
        """Count what waits in ``document``, reading it from the workspace first if this
        process has not. With none chosen yet (the document screen not opened), the one it
        would open on: ``--document`` if there is one so named, else the workspace's first. A
        document that cannot be read counts nothing (the document screen says why)."""
        from engine.context import ContextError
        from engine.protocol.errors import ProtocolError
        from engine.store import StoreError

        workspace = self.workspace
        if workspace is None:
            return
        try:
            name = self.document
            if name is None:
                names = await workspace.document_names()
                if not names:
                    return
                name = self.initial_document if self.initial_document in names else names[0]
                self.set_reactive(PactApp.document, name)  # counted here, not by its watcher
            await workspace.load_document(name)
        except (ContextError, ProtocolError, StoreError):
            self.waiting = 0
            return
        self.document_changed(name)

    def document_changed(self, name: str) -> None:
        """Document ``name`` changed (in this process or another): count again if it is the one
        in the custodian's hands."""
        from engine.context import ContextError

        from .widgets.inbox import open_items

        if name == self.document and self.workspace is not None:
            try:
                doc = self.workspace.document(name)
            except ContextError:  # not read in this process: count_waiting reads it
                return
            self.waiting = open_items(doc)

    async def on_unmount(self) -> None:
        if self.workspace is not None:
            await self.workspace.close()
        if self.conversation is not None:
            self.conversation.close()
        for session in self.reference_sessions.values():
            session.close()

    def reference_session(self, directory: str) -> LogSession:
        """The conversation folder ``directory`` as the master-log screen reads it, opened and
        every reference verified once (in a thread worker: it reads the folder);
        ``MasterLogError`` when it cannot be read."""
        from .logcli import cache_for
        from .logsession import LogSession

        with self._reference_lock:
            session = self.reference_sessions.get(directory)
            if session is None:
                session = LogSession.open(directory, cache_for(directory))
                try:
                    session.verify()
                except BaseException:
                    session.close()
                    raise
                self.reference_sessions[directory] = session
            return session

    # -- a gptme conversation directory ---------------------------------------------------------
    async def _open_conversation(self) -> None:
        from .logcli import cache_for
        from .logsession import LogSession

        try:
            self.conversation = await asyncio.to_thread(
                LogSession.open, self.path, cache_for(self.path)
            )
        except MasterLogError as error:
            self.exit(return_code=1, message=visible(f"pact-tui: {error}"))
            return
        await self.switch_mode("masterlog")
        if self.live_updates:
            self.follow_conversation()
            self.watch_themes()
        self._check_size()

    @work(exclusive=True, group="feed")
    async def follow_conversation(self) -> None:
        """Index, verify and tell the screen whatever gptme writes to the directory."""
        from engine.masterlog.watch import changes

        session = self.conversation
        assert session is not None
        try:
            async for touched in changes(session.directory):
                refreshes = await asyncio.to_thread(session.update, touched)
                if touched or any(r.new_lines or r.rewritten for r in refreshes):
                    self.conversation_changed.publish(refreshes)
        except (MasterLogError, OSError) as error:
            self._feed_stopped(f"following the directory stopped: {error}")

    async def action_switch_mode(self, mode: str) -> None:
        """The workspace's screens (1, 2) with a workspace open; the master log's with a
        conversation."""
        if (mode == "masterlog") != (self.conversation is not None):
            shows = "a gptme conversation" if self.conversation is not None else "a workspace"
            self.notify(f"This app shows {shows}: that screen is not for it.", timeout=3)
            return
        await super().action_switch_mode(mode)

    @work(exclusive=True, group="feed")
    async def follow_workspace(self) -> None:
        """Apply every change from any process and tell the screens (one batch at a time)."""
        from engine.context import ContextError
        from engine.store import StoreError

        assert self.workspace is not None
        try:
            async for change in self.workspace.changes():
                if self.document in change.documents:
                    self.document_changed(self.document)
                self.workspace_changed.publish(change)
        except (StoreError, ContextError) as error:
            self._feed_stopped(f"live updates stopped: {error}")

    def _feed_stopped(self, why: str) -> None:
        """What follows the workspace or the directory has stopped: say so, and why."""
        self.notify(why, severity="error", timeout=15)

    # -- screenshots (Ctrl+P → Screenshot) --------------------------------------------------------
    def deliver_screenshot(
        self,
        filename: str | None = None,
        path: str | None = None,
        time_format: str | None = None,
    ) -> str | None:
        """Textual's, into the current folder unless told otherwise: Textual's default, the
        Downloads folder, may not exist. Textual's notification names the file it saved."""
        if path is None:
            try:
                path = str(Path.cwd())
            except OSError as error:  # the folder the app was started in has been removed
                self._screenshot_failed(f"the current folder is gone ({error.strerror})")
                return None
        return super().deliver_screenshot(filename, path, time_format)

    def on_delivery_failed(self, event: events.DeliveryFailed) -> None:
        if event.name == "screenshot":
            event.prevent_default()  # Textual's own notice gives no reason
            error = event.exception
            if isinstance(error, OSError) and error.strerror and error.filename:
                self._screenshot_failed(f"{error.filename}: {error.strerror}")
            else:
                self._screenshot_failed(str(error) or type(error).__name__)

    def _screenshot_failed(self, why: str) -> None:
        self.notify(
            f"Could not save the screenshot: {why}",
            title="Screenshot",
            severity="error",
        )

    # -- small things -----------------------------------------------------------------------------
    def action_help(self) -> None:
        """The help page of the screen shown: its groups of keys (each screen brings its own,
        ``help_groups``), the keys of every screen, then its legends."""
        screen = self.screen
        groups: list[tuple[str, list[BindingType]]] = list(
            getattr(screen, "help_groups", lambda keymap: [])(self.keymap)
        )
        from .screens.masterlog import MasterLogScreen  # loaded with its screen, not at start

        everywhere = list(self.BINDINGS)
        if isinstance(screen, MasterLogScreen):  # a conversation: no workspace screens to go to
            modes = ("show-contexts", "show-documents")
            everywhere = [b for b in everywhere if getattr(b, "id", None) not in modes]
        groups.append(("Everywhere", everywhere))
        legends: list[Legend] = getattr(screen, "legends", lambda: [])()
        self.push_screen(HelpScreen(groups, *legends, keymap=self.keymap))

    def key_for(self, action_id: str) -> str:
        """The key in force for ``action_id`` (the user's keymap, else the default), as a hint
        in a sentence names it."""
        return key_shown(action_id, self.keymap)

    def on_resize(self, event: events.Resize) -> None:
        # App's own handler, which updates self.size, runs after this one (subclass first).
        self._check_size(event.size)

    def _check_size(self, size: Size | None = None) -> None:
        """Cover everything with a plain message while the terminal is too small."""
        width, height = size or self.size
        small = width < MIN_WIDTH or height < MIN_HEIGHT
        covered = isinstance(self.screen, TooSmallScreen)
        if small and not covered:
            self.push_screen(TooSmallScreen(width, height))
        elif covered:
            if small:
                self.screen.query_one(Static).update(_too_small_message(width, height))
            else:
                self.pop_screen()


def _too_small_message(width: int, height: int) -> str:
    return (
        f"The terminal is {width}x{height}; pact-tui needs at least {MIN_WIDTH}x{MIN_HEIGHT}.\n"
        "Make the window larger (q quits)."
    )


class RememberedThemes(PlainThemes):
    """The palette's theme list: picking one shows it and remembers it (``choose_theme``)."""

    def choose(self, name: str) -> None:
        app: PactApp = self.app  # type: ignore[assignment]
        app.choose_theme(name)


class TooSmallScreen(Screen[None]):
    DEFAULT_CSS = """
    TooSmallScreen { align: center middle; }
    TooSmallScreen > Static { width: 100%; text-align: center; text-style: bold; }
    """

    def __init__(self, width: int, height: int) -> None:
        super().__init__()
        self.message = _too_small_message(width, height)

    def compose(self) -> Any:
        yield Static(self.message, markup=False)


def default_theme_dirs() -> list[Path]:
    return [bundled_themes_dir(), user_themes_dir()]
