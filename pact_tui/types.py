"""The small types the app's screens and widgets share, named once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # the engine's modules load with what needs them, not at start-up
    from engine.context import ContextView, Node
    from engine.context.nodes import Item
    from engine.context.timeline import StoryEvent
    from engine.context.tree_diff import TreeDiff
    from engine.masterlog.lines import LineProblem, Message
    from engine.masterlog.verify import Recovery, Verdict
    from engine.protocol.document import Document
    from engine.protocol.model import Agent
    from engine.workspace import SnapshotEntry, StepChanges

    from .filtered_layout import FilteredLayout
    from .logsession import LogEntry, LogSession

RowKind = Literal["system", "turn", "slot", "item", "ghost"]
"""What one line of the tree shows: the system region's or a turn's header, a slot's, an item,
or (during a diff) a ghost: an item the other side has, where it was."""

Mark = Literal["added", "removed", "changed", "moved", "match"]
"""How a row is highlighted: its change in the diff shown (``moved``: only deeper or shallower,
with its turn), or a selector match."""

DIFF_GLYPHS: dict[str, str] = {"added": "+", "removed": "−", "changed": "~", "moved": "↓"}
"""The glyph of each change in a diff, drawn in a column of its own beside the colour (a
``moved`` row going shallower says ``↑``)."""


@dataclass(frozen=True, slots=True)
class Shown:
    """What a screen shows of one context: a view and where it is in time.

    A new ``Shown`` whenever any of it changes, so widgets bound to it redraw: the live view
    changes in place, and ``revision`` (how many events of the context are applied) says it did.
    """

    name: str
    view: ContextView
    entry: SnapshotEntry | None  # the snapshot shown; None: live
    revision: int
    snapshots: int  # how many snapshots the context has

    @property
    def live(self) -> bool:
        return self.entry is None


@dataclass(frozen=True, slots=True)
class SelectorProblem:
    """Why a selector cannot be read: where (a character position) and what."""

    position: int
    reason: str


@dataclass(frozen=True, slots=True)
class Selection:
    """What the typed selector found in the view shown: its matches, or why it cannot be read."""

    text: str = ""
    matches: tuple[Node, ...] = ()
    problem: SelectorProblem | None = None
    note: str = ""  # what the bar says in place of a count: a time-qualified selector not read yet


@dataclass(frozen=True, slots=True)
class RowFilter:
    """Filter mode: only ``selection``'s matches are shown, under the headers of their turns and
    slots. The matches were found in ``shown``'s view: a pane lays them out for that view only
    (a newer view waits for its own selection)."""

    shown: Shown
    selection: Selection
    _layouts: dict[bool, FilteredLayout] = field(default_factory=dict, compare=False, repr=False)

    def layout(self, *, headers: bool) -> FilteredLayout:
        """The rows, with the headers of turns and slots (the tree) or without (the provider
        view): made once, for every pane and the status line to read."""
        made = self._layouts.get(headers)
        if made is None:
            from .filtered_layout import FilteredLayout

            made = self._layouts[headers] = FilteredLayout(
                self.shown.view, self.selection.matches, headers=headers
            )
        return made


@dataclass(frozen=True, slots=True)
class Ghost:
    """An item the other side of a diff has and the view shown lacks, drawn where it was: in
    the turn ``turn_seq`` of the view shown, in its slot after the item ``after`` (None: first),
    dimmed and marked. Never a command's target; the detail pane describes it."""

    item: Item
    mark: Mark  # "removed" (the view shown is the newer side) or "added"
    depth: int  # where it was, on the other side
    position: int
    offset: int
    turn_seq: int  # the turn of the view shown it is drawn in
    after: str | None
    same_turn: bool  # False: its turn is gone, it is drawn in the one now at its depth

    @property
    def id(self) -> str:
        return self.item.id

    @property
    def coordinates(self) -> str:
        return f"({self.depth},{self.position},{self.offset})"


@dataclass(frozen=True, slots=True)
class Comparison:
    """The diff shown: between which two states (named as the header and the detail name
    them, older first, the base marked), what it found, and the ghosts of what the view shown
    lacks."""

    older: str  # "n21 (base)", "live", "e6 held (base)"
    newer: str
    diff: TreeDiff
    shown_is_newer: bool
    ghosts: tuple[Ghost, ...] = ()
    older_at: str | None = None  # the older end's snapshot id; None: live, or held at live
    newer_at: str | None = None

    @property
    def label(self) -> str:
        return f"{self.older} → {self.newer}"

    def mark_of(self, item_id: str, turn_seq: int) -> Mark | None:
        return self.diff.mark_of(item_id, turn_seq)


@dataclass(frozen=True, slots=True)
class ProviderChanges:
    """What changed in what the model is sent since an earlier snapshot (``since``): the
    messages added and changed, by item id, and how many were removed."""

    since: str  # the snapshot compared with, e.g. "e5" (where episode 5 began)
    added: frozenset[str]
    changed: frozenset[str]
    removed: int

    def describe(self) -> str:
        """``since e5: +2 ~1 -3`` (added, changed, removed)."""
        return f"since {self.since}: +{len(self.added)} ~{len(self.changed)} -{self.removed}"


@dataclass(frozen=True, slots=True)
class Account:
    """What the steps of the position shown did, from their changelogs (read in a worker):
    at live the events since the newest snapshot, then the step that made that snapshot; in
    the past the step that made the snapshot shown. Newest first; ``problem``: why they could
    not be read."""

    name: str
    revision: int
    at: str | None  # the snapshot shown; None: live
    steps: tuple[StepChanges, ...] = ()
    problem: str | None = None

    @property
    def summary(self) -> str:
        """The newest step in one line, as the tree's lower border says it: ``step to n64
        (e6): expired #deadline (ttl 3) · ODI: 10 items one deeper``."""
        if self.problem is not None:
            return f"changes: {self.problem}"
        if not self.steps:
            return ""
        step = self.steps[0]
        if step.kind == "live":
            since = f" since {step.since.id}" if step.since is not None else ""
            where = f"live{since}"
        elif step.until is not None:
            where = f"step to {step.until.id} (e{step.until.episode})"
        else:
            where = "step"
        return f"{where}: {step.summary()}"


@dataclass(frozen=True, slots=True)
class Told:
    """An item's story as the workspace told it, for one item in one view."""

    item_id: str
    shown: Shown
    events: tuple[StoryEvent, ...]


@dataclass(frozen=True, slots=True)
class DocShown:
    """What the document screen shows: one document, at a revision and a moment, through
    someone's eyes.

    ``doc`` is the workspace's live projection (read it, never change it); it changes in place,
    and ``revision`` (how many of its events are applied) says it did. ``now_ms`` is the clock
    the countdowns read. ``reader`` is None for the custodian, who sees everything; an agent's
    record when viewing the document as that agent, through its barriers.
    """

    name: str
    doc: Document
    revision: int
    now_ms: int
    custodian: str
    reader: Agent | None = None


@dataclass(frozen=True, slots=True)
class DocAt:
    """A document as it was after its first ``count`` events (folded apart from the live
    projection): the document screen's past, or the base of its diff."""

    name: str
    count: int
    doc: Document


@dataclass(frozen=True, slots=True)
class LogShown:
    """What the master-log screen shows of a conversation directory: a new one after every
    update (``revision``), so the lists bound to it are made again."""

    session: LogSession
    revision: int
    entries: tuple[LogEntry, ...]  # the master, the views and the branches
    verified: bool  # every reference has been verified at least once

    @property
    def lines(self) -> dict[str, int]:
        return {entry.name: entry.lines for entry in self.entries}


@dataclass(frozen=True, slots=True)
class LogSubject:
    """A line of a log, and the reference chosen in it, with its verdict and recovery."""

    log: str
    line: int
    message: Message | LineProblem
    verdicts: tuple[Verdict, ...]  # the references the line holds
    choice: int  # which of them is chosen
    recovery: Recovery | None  # the chosen one's original
    directory: str = ""  # the conversation's, so paths in it are shown relative to it

    @property
    def verdict(self) -> Verdict | None:
        return self.verdicts[self.choice] if self.verdicts else None
