"""The list of contexts in the workspace (one per agent), with each one's episode and size; a
fork (``Workspace.fork_context``) is marked ``⑂`` and says where it came from."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import BindingType
from textual.reactive import var
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from engine.visible import visible
from engine.workspace import ContextInfo, ForkOrigin

from ..keymap import bind

FORK = "⑂"


class ContextList(OptionList):
    """Picking one posts OptionList's ``OptionSelected`` (the option's id is the name)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        bind("down", "cursor_down", "Down", show=False),
        bind("up", "cursor_up", "Up", show=False),
    ]

    contexts: var[tuple[ContextInfo, ...]] = var(())
    """Every context of the workspace (bound to the screen's)."""
    current: var[str | None] = var(None)
    """The context the screen shows (bound): the highlighted one."""

    def watch_contexts(self, old: tuple[ContextInfo, ...], new: tuple[ContextInfo, ...]) -> None:
        """Unchanged entries are left alone: an advance relabels one option, no relayout, and
        the highlight stays where the user moved it (``c`` then ``j`` during ``demo --live``:
        the next update must not take it back to the context shown). A changed list keeps
        the highlighted context highlighted if it is still there, else the one shown."""
        names = [info.name for info in new]
        if [info.name for info in old] != names:
            highlighted = self.highlighted
            kept = (
                old[highlighted].name
                if highlighted is not None and highlighted < len(old)
                else None
            )
            self.clear_options()
            self.add_options(Option(_label(info), id=info.name) for info in new)
            if kept in names:
                self.highlighted = names.index(kept)
            else:
                self._highlight_current()
            return
        for index, (before, after) in enumerate(zip(old, new, strict=True)):
            if (before.episode, before.items) != (after.episode, after.items):
                self.replace_option_prompt_at_index(index, _label(after))

    def watch_current(self) -> None:
        self._highlight_current()

    def watch_highlighted(self, highlighted: int | None) -> None:
        """The tooltip says where the highlighted context was forked from, if it was."""
        super().watch_highlighted(highlighted)
        contexts = self.contexts
        origin = (
            contexts[highlighted].forked_from
            if highlighted is not None and 0 <= highlighted < len(contexts)
            else None
        )
        self.tooltip = Text(f"{FORK} forked from {visible(fork_point(origin))}") if origin else None

    def _highlight_current(self) -> None:
        names = [info.name for info in self.contexts]
        if self.current in names:
            self.highlighted = names.index(self.current)


def fork_point(origin: ForkOrigin) -> str:
    """``researcher at n41 (episode 2)``: where a fork came from."""
    if origin.snapshot is None:
        return f"{origin.source} at episode {origin.episode} (live)"
    return f"{origin.source} at {origin.snapshot} (episode {origin.episode})"


def _label(info: ContextInfo) -> Text:
    origin = info.forked_from
    if origin is None:
        return Text.assemble(
            (visible(info.name), "bold"), "\n", (f"ep {info.episode} · {info.items} items", "dim")
        )
    at = origin.snapshot or f"e{origin.episode}"
    return Text.assemble(
        (f"{FORK} ", "bold"),
        (visible(info.name), "bold"),
        "\n",
        (f"ep {info.episode} · {info.items} items", "dim"),
        "\n",
        (f"from {visible(origin.source)} at {visible(at)}", "dim italic"),
    )
