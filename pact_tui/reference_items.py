"""The items of a context imported from a gptme conversation (``ctx import --gptme``) that carry
byte-range references into its master log, judged by the master-log verifier.

An imported item's ``source`` names the log and the line it was read from; one whose message
holds references also names the conversation folder (``conversation``), which the app opens
with the master-log reader (``LogSession``, one per folder, verified once). A reference item's
verdict is the verifier's for the references on that line; the badge is the first of them that
is not ok (in the verifier's order of precedence), so one broken reference shows the line broken.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache

from engine.context import ContextView
from engine.context.nodes import Item

# The master-log reader (``engine.masterlog``: the verifier's statuses, the master's name) is
# imported where a reference item is judged or found, not when a context screen starts.


@dataclass(frozen=True, slots=True)
class ItemSource:
    """Where an imported item was read: the log and its 0-based line (and the master's line
    it is, when it is one), and the conversation folder when it holds references."""

    log: str
    line: int
    master_line: int | None
    conversation: str | None
    references: int


def source_of(item: Item) -> ItemSource | None:
    """Where ``item`` was read from a gptme log, or None (not imported from one)."""
    data = item.data
    source = data.get("source") if data else None
    if not isinstance(source, dict) or source.get("from") != "gptme":
        return None
    log, line = source.get("log"), source.get("line")
    if not isinstance(log, str) or not isinstance(line, int) or isinstance(line, bool) or line < 1:
        return None
    master = source.get("master_line")
    conversation = source.get("conversation")
    references = source.get("references")
    return ItemSource(
        log,
        line - 1,
        master - 1 if isinstance(master, int) and not isinstance(master, bool) else None,
        conversation if isinstance(conversation, str) else None,
        len(references) if isinstance(references, list) else 0,
    )


def reference_of(item: Item) -> ItemSource | None:
    """Where ``item``'s references are, when it is a reference item of a known folder."""
    source = source_of(item)
    if source is None or not source.references or source.conversation is None:
        return None
    return source


OK = "ok"  # the verifier's Status.OK (tests/tui/test_reference_items.py holds them equal)


def worst(statuses: list[str]) -> str:
    """The badge of a reference item whose references have ``statuses``: the first that is not
    ok in the verifier's order of precedence (docs/masterlog.md), else ok."""
    problems = [s for s in statuses if s != OK]
    if not problems:  # most items: no look at the verifier's order (12 µs a call)
        return OK
    order = _precedence()
    return min(problems, key=lambda s: order.index(s) if s in order else len(order))


@cache
def _precedence() -> tuple[str, ...]:
    from engine.masterlog.verify import Status

    return tuple(status.value for status in Status)


def judge(
    view: ContextView, statuses_of: Callable[[ItemSource], list[str] | None]
) -> dict[str, str]:
    """Each reference item's badge in ``view``: its id → the worst status of its references
    (``statuses_of`` says them, None: its folder cannot be read, no badge)."""
    badges: dict[str, str] = {}
    for item, _depth, _slot, _offset in view.iter_items():
        source = reference_of(item)
        if source is None:
            continue
        statuses = statuses_of(source)
        if statuses:
            badges[item.id] = worst(statuses)
    return badges


def made_from(view: ContextView, log: str, line: int) -> tuple[Item, int, int, int] | None:
    """The item of ``view`` read from line ``line`` (0-based) of ``log`` (for the master log:
    also a view's line that is that master line), with its coordinates."""
    from engine.masterlog.conversation import MASTER

    fallback = None
    for item, depth, slot, offset in view.iter_items():
        source = source_of(item)
        if source is None:
            continue
        if source.log == log and source.line == line:
            return item, depth, slot.position, offset
        if log == MASTER and source.master_line == line and fallback is None:
            fallback = item, depth, slot.position, offset
    return fallback


Badges = Mapping[str, str]
"""Reference items' badges by item id (what :func:`judge` found)."""
