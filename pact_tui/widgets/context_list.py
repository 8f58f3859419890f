"""The list of contexts in the workspace (one per agent), with each one's episode and size."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from engine.workspace import ContextInfo


class ContextList(OptionList):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: list[ContextInfo] = []

    def show(self, infos: list[ContextInfo], current: str | None) -> None:
        """Show the contexts; unchanged entries are left alone (no relayout per advance)."""
        names = [info.name for info in infos]
        if [info.name for info in self._shown] != names:
            highlighted = self.highlighted
            self.clear_options()
            self.add_options(Option(_label(info), id=info.name) for info in infos)
        else:
            highlighted = self.highlighted
            for index, (old, new) in enumerate(zip(self._shown, infos, strict=True)):
                if (old.episode, old.items) != (new.episode, new.items):
                    self.replace_option_prompt_at_index(index, _label(new))
        self._shown = list(infos)
        if current in names:
            self.highlighted = names.index(current)
        elif highlighted is not None and highlighted < len(names):
            self.highlighted = highlighted


def _label(info: ContextInfo) -> Text:
    return Text.assemble(
        (info.name, "bold"), "\n", (f"ep {info.episode} · {info.items} items", "dim")
    )
