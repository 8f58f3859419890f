"""The list of contexts in the workspace (one per agent), with each one's episode and size."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from engine.workspace import ContextInfo


class ContextList(OptionList):
    def show(self, infos: list[ContextInfo], current: str | None) -> None:
        highlighted = self.highlighted
        self.clear_options()
        for info in infos:
            label = Text.assemble(
                (info.name, "bold"),
                "\n",
                (f"ep {info.episode} · {info.items} items", "dim"),
            )
            self.add_option(Option(label, id=info.name))
        names = [info.name for info in infos]
        if current in names:
            self.highlighted = names.index(current)
        elif highlighted is not None and highlighted < len(names):
            self.highlighted = highlighted
