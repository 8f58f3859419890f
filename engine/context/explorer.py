"""``ContextExplorer``: step a context like a debugger and print what it holds (spec §9)."""

from __future__ import annotations

import json
import sys
from typing import Literal, TextIO

from engine.visible import visible

from .context import Context
from .errors import ContextError
from .view import ContextView

PrintMode = Literal["tree", "provider", "json"]
StepKind = Literal["user_message", "assistant_message", "render", "seal"]


def _timer(value: int | None) -> str:
    return "-" if value is None else str(value)


def render_tree(view: ContextView) -> str:
    """A plain-text picture of the tree: one line per node with its coordinates and timers.

    Every string from the workspace is :func:`~engine.visible.visible` (one line each: a key
    cannot start a line of its own); the content is quoted as JSON, its first 60 characters.
    """
    lines = [f"context {visible(view.root_id)}  episode {view.current_episode}"]
    for depth, turn in view.iter_turns():
        if depth == -1:
            lines.append(f"├─ system (d-1) id={visible(turn.id)}")
        else:
            label = "active" if depth == 0 else "history"
            role = visible(turn.role or "-")
            lines.append(f"├─ turn d{depth} [{label}] role={role} id={visible(turn.id)}")
        for slot in turn.sorted_slots():
            lines.append(f"│  ├─ slot ({depth},{slot.position}) id={visible(slot.id)}")
            for index, item in enumerate(slot.items):
                node = view.make_node(item, slot, depth, index - slot.core)
                text = item.text_head(61).replace("\n", " ")  # 61: is there more than 60?
                if len(text) > 60:
                    text = text[:57] + "..."
                tags = ",".join(visible(tag) for tag in item.tags)
                lines.append(
                    f"│  │  ├─ ({depth},{slot.position},{node.offset}) {visible(item.node_type)} "
                    f"id={visible(item.id)} key={visible(item.key or '-')} tags=[{tags}] "
                    f"{node.lifecycle} ttl={_timer(item.ttl)} age={_timer(node.age)} "
                    f"remaining={_timer(node.remaining)} cad={_timer(item.cad)} "
                    f"next={_timer(node.next_rehydration_episode)} {visible(json.dumps(text))}"
                )
    return "\n".join(lines)


class ContextExplorer:
    """Drive a context one step at a time; printing never changes it."""

    def __init__(self, context: Context) -> None:
        self.context = context

    def step(self, kind: StepKind = "render", argument: str | None = None) -> str | int | None:
        if kind == "user_message":
            return self.context.add_user(self._text(kind, argument)).id
        if kind == "assistant_message":
            return self.context.add_assistant(self._text(kind, argument)).id
        if kind == "render":
            return self.context.advance()
        if kind == "seal":
            return self.context.seal(argument or "checkpoint")
        raise ContextError(
            f"unknown step {kind!r}; use user_message, assistant_message, render or seal",
            step=repr(kind),
        )

    @staticmethod
    def _text(kind: str, argument: str | None) -> str:
        if argument is None:
            raise ContextError(f"step({kind!r}, text) needs the message text", step=kind)
        return argument

    def render(self, mode: PrintMode = "tree") -> str:
        if mode == "tree":
            return render_tree(self.context)
        if mode == "provider":
            return json.dumps(self.context.render_provider(), indent=2, ensure_ascii=False)
        if mode == "json":
            return json.dumps(self.context.model_dump(), indent=2, sort_keys=True)
        raise ContextError(f"unknown print mode {mode!r}; use tree, provider or json", mode=mode)

    def print(self, mode: PrintMode = "tree", file: TextIO | None = None) -> str:
        text = self.render(mode)
        print(text, file=file or sys.stdout)
        return text
