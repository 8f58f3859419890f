"""The working context: placement, ODI, episodes, TTL, cadence and render lifecycles.

Every public operation validates everything first and only then mutates, so a failing call
leaves the state exactly as it was. Mutations go through a few primitives (``_attach``,
``_detach``, ``_writable_*``) that keep the indexes and the copy-on-write discipline right.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pyrsistent import pvector

from .changelog import (
    LIST_LIMIT,
    PREVIEW_CHARS,
    ChangeEntry,
    Changelog,
    Coords,
    Kind,
    Shift,
    preview,
)
from .clock import Clock, IdFactory, RandomIds, SystemClock
from .coords import exact_coordinates, parse_for_write, write_coord
from .errors import (
    InvalidComponent,
    InvalidCoordinate,
    InvalidExport,
    InvalidLifecycle,
    InvalidUpdateMode,
    MalformedPackedTurns,
    NoSuchDepth,
    NotAComponent,
    NotFound,
    SelectorOrKey,
    UnknownKey,
)
from .history import History, Snapshot, SnapshotContext
from .nodes import (
    Item,
    Slot,
    Template,
    Turn,
    check_json_fields,
    check_render_lifecycle,
    check_timers,
    follows_message,
)
from .query import canonical_key
from .selector_ast import Exact
from .stages import Role
from .tree import SYSTEM_SEQ, Diff, Node, TreeState
from .tree_diff import TreeDiff
from .view import ContextView

if TYPE_CHECKING:
    from pyrsistent import PVector

    from .components import ContextComponent

Where = tuple[int, int]  # (turn seq, position); seq -1 is the system region
TURNS_REMOVED = -2  # journal entry: turns were removed, so depths shifted
JOURNAL_LIMIT = 8192
RULES = 3
"""The rules the engine runs by (``Context.rules``). 3 (issue 27): a step that pushes a turn
and removes emptied ones lifts the items that keep their depth once; a due schedule renews its
instance in place; a changelog's ``before`` is always the state before the operation. A replay
of an event written by the rules of version 2 runs by them (``commands.apply_command``)."""


# One change as the operation records it: (kind, id, the item or None for a turn, coordinates
# before, reasons); made a ``ChangeEntry`` when the operation ends, its ``after`` read then.
# The reasons are ChangeEntry's last fields in order: age, ttl, template, replaced, stage,
# stages, cycled.
Reasons = tuple[
    int | None, int | None, str | None, str | None, tuple[int, int | None] | None, int | None, bool
]
_Draft = tuple[Kind, str, "Item | None", "Coords | None", Reasons]
_NONE: Reasons = (None, None, None, None, None, None, False)  # no reasons
_NO_AFTER = frozenset({"deleted", "expired", "turn_removed"})


def _seating_order(lifted: tuple[int, int, int, Item]) -> tuple[int, int, int, int]:
    """The order items that keep their depth are placed back in after a reshape: by depth and
    position, then the core, the post side outward, the pre side outward."""
    depth, position, offset, _item = lifted
    return (depth, position, 0 if offset == 0 else 1 if offset > 0 else 2, abs(offset))


class _Recording:
    """The changelog of the operation under way, gathered as it mutates (see ``_begin``).

    ``turns_before``: the turn list as the operation found it. An operation that may change
    slots before it reshapes the turns (delete, advance) holds it (copy-on-write, as ``hold``
    does); the others reshape first, so it is as they found it until then.
    """

    __slots__ = ("entries", "op", "shifts", "turns_before")

    def __init__(self, op: str, turns_before: PVector[Turn]) -> None:
        self.op = op
        self.turns_before = turns_before
        self.entries: list[_Draft] = []
        # (by, turns, items, depths before, the moved items listed when few)
        self.shifts: list[tuple[int, int, int, tuple[int, int], list[_Draft]]] = []

    def add(self, kind: Kind, item: Item, before: Coords | None, reasons: Reasons = _NONE) -> None:
        self.entries.append((kind, item.id, item, before, reasons))


def _entry(draft: _Draft, final: dict[str, Coords]) -> ChangeEntry:
    kind, item_id, item, before, reasons = draft
    if item is None:  # a turn
        return ChangeEntry(kind, item_id, None, "turn", "", before, None, *reasons)
    head = preview(item.text_head(PREVIEW_CHARS + 1))
    after = None if kind in _NO_AFTER else final.get(item_id)
    return ChangeEntry(kind, item_id, item.key, item.node_type, head, before, after, *reasons)


class Context(ContextView):
    """An agent's context tree, driven as in the seeds.

    ``context.pact_insert("d0, 1, 0", TextContent("…"))``, ``context["d0, 1, 0"]``,
    ``context.select("d1-3, 1, *")``, ``context.add_user("Hello")``, ``context.advance()``.
    """

    def __init__(self, *, ids: IdFactory | None = None, clock: Clock | None = None) -> None:
        self._ids: IdFactory = ids or RandomIds()
        self._clock: Clock = clock or SystemClock()
        self._gen = 0
        self._creation_index = 0
        self._next_turn_seq = 0
        self._episode = 0
        self._root_id = self._ids()
        self._system = self._new_turn(SYSTEM_SEQ)
        self._turns = pvector([self._new_turn(self._take_turn_seq())])
        self._templates: dict[str, Template] = {}
        self._templates_shared = False
        self._history: History = History()
        # Indexes of the working state (snapshots scan instead).
        self._items: dict[str, Item] = {}
        self._where: dict[str, Where] = {}
        self._turn_index: dict[int, int] = {self._turns[0].seq: 0}
        self._by_key: dict[str, dict[str, None]] = {}
        self._by_tag: dict[str, dict[str, None]] = {}
        self._fixed: dict[str, None] = {}
        self._mortal: dict[str, None] = {}  # items with a ttl: what a timer selector can match
        self._expiry: list[tuple[int, int, str]] = []
        self._schedule: list[tuple[int, int, str]] = []
        # Which turns were written, for observers that redraw only what changed (see
        # turns_changed_since). Bounded: an observer too far behind re-reads everything.
        self._journal: list[list[int]] = []  # [turn seq, stamp of its latest write]
        self._journal_floor = 0  # entries older than this stamp were dropped
        self._stamp = 0
        self._unindexed = False  # a restore leaves the indexes to the first operation
        self._loaded_count = 0
        # The turns' counts of slots and items as restored, and the journal's stamp then: a
        # reader measures a restored tree from them until a turn is written (``turn_counts``).
        self._restored_counts: tuple[int, Sequence[int], Sequence[int]] | None = None
        # The changelog: what the last operation did (see ``last_changes``).
        self.record_changes = True
        """Whether operations record their changelog (off only to measure what it costs)."""
        self.last_changes: Changelog | None = None
        self.rules = RULES
        """The rules operations run by (see ``RULES``); a replay sets it per event."""
        """What the last operation that succeeded did, with reasons (``None`` before the
        first, or while ``record_changes`` is off)."""
        self._rec: _Recording | None = None

    # =====================================================================================
    # public: placement
    # =====================================================================================
    def pact_insert(self, selector: str, component: ContextComponent) -> Node:
        """Place ``component`` at exact coordinates, shifting neighbours outward (spec §2)."""
        self._ensure_indexed()
        depth, position, offset = exact_coordinates(selector)
        self._check_component(component, selector)
        self._check_depth(depth, selector)
        self._begin("insert")
        if (depth, position, offset) == (0, 0, 0) and self._active.slots.get(0):
            self._push_turn()
        node = self._insert_component(component, depth, position, offset)
        self._finish()
        return node

    def pact_update(
        self,
        selector: str,
        component: ContextComponent,
        mode: Literal["replace", "append"] = "replace",
    ) -> Node:
        """``replace`` swaps the item at exact coordinates (same id); ``append`` adds to a slot."""
        self._ensure_indexed()
        if mode == "append":
            coord = write_coord(selector, arity=(2,))
            assert isinstance(coord.depth, Exact) and isinstance(coord.position, Exact)
            depth, position = coord.depth.value, coord.position.value
            self._check_component(component, selector)
            self._check_depth(depth, selector)
            turn = self.turn_at(depth)
            assert turn is not None
            slot = turn.slots.get(position)
            offset = len(slot.items) - slot.core if slot is not None else 0
            self._begin("update")
            node = self._insert_component(component, depth, position, offset)
            self._finish()
            return node
        if mode != "replace":
            raise InvalidUpdateMode(
                f"update mode must be 'replace' or 'append', not {mode!r}", mode=repr(mode)
            )
        depth, position, offset = exact_coordinates(selector)
        self._check_component(component, selector)
        old = self.node_at(depth, position, offset)
        if old is None or old.item is None:
            raise NotFound(f"nothing at {selector!r} to replace", selector=selector)
        self._begin("update")
        node = self._replace(old.item, component)
        if self._rec is not None:
            assert node.item is not None
            self._rec.add("replaced", node.item, old.coordinates)
        self._finish()
        return node

    def pact_delete(self, selector: str | None = None, *, key: str | None = None) -> list[str]:
        """Delete by coordinates, by query, or by key; returns the deleted ids in canonical order.
        Deleting nothing is refused (``NotFound``, ``UnknownKey``).

        Deleting an item with a cadence also ends its schedule: it does not come back.
        """
        self._ensure_indexed()
        if (selector is None) == (key is None):
            raise SelectorOrKey("pact_delete takes a selector or key=..., not both or neither")
        templates: list[str] = []
        if key is not None:
            targets = self.key_candidates(key)
            templates = [t.id for t in self.templates() if t.prototype.key == key]
            if not targets and not templates:
                raise UnknownKey(f"no item or schedule has key {key!r}", key=key)
        else:
            assert selector is not None
            parsed = parse_for_write(selector)
            coord = parsed.single_coord
            exact = (
                coord is not None
                and coord.arity == 3
                and all(isinstance(p, Exact) for p in (coord.depth, coord.position, coord.offset))
            )
            targets = [n for n in self.select(parsed) if n.item is not None]
            if not targets:  # a typo'd query should not pass for a delete that happened
                where = "at" if exact else "matches"
                raise NotFound(f"nothing {where} {selector!r} to delete", selector=selector)
        doomed = [self._items[n.item.id] for n in targets if n.item is not None]
        touched = {self._where[item.id][0] for item in doomed}
        templates += [item.template_id for item in doomed if item.template_id is not None]
        self._begin("delete", hold=self._may_empty_turns(doomed))
        rec = self._rec
        if rec is not None:
            for node in targets:
                assert node.item is not None
                rec.add("deleted", node.item, node.coordinates)
            gone = {item.id for item in doomed}
            for template_id in dict.fromkeys(templates):
                template = self._templates.get(template_id)
                if template is not None and template.live_id not in gone:
                    # A schedule with no instance in the tree: it ends, and nothing comes back.
                    ended: Reasons = (None, None, template.id, None, None, None, False)
                    rec.entries.append(("deleted", template.id, template.prototype, None, ended))
        self._detach(*doomed)
        for template_id in dict.fromkeys(templates):
            self._drop_template(template_id)
        self._prune_empty_turns(touched)
        self._finish()
        return [n.id for n in targets]

    # =====================================================================================
    # public: export and load
    # =====================================================================================
    def counters(self) -> dict[str, int]:
        return {"creation_index": self._creation_index, "next_turn_seq": self._next_turn_seq}

    @classmethod
    def load(
        cls, data: Any, *, ids: IdFactory | None = None, clock: Clock | None = None
    ) -> Context:
        """Rebuild a context from ``model_dump()`` output. Snapshot history is not part of it."""
        from .load import load_context  # pydantic loads here, not for every reader of a context

        context = cls(ids=ids, clock=clock)
        load_context(data, context)
        return context

    def restore(
        self,
        *,
        root_id: str,
        episode: int,
        system: Turn,
        turns: list[Turn],
        templates: dict[str, Template],
        counters: tuple[int, int] | None,
        item_count: int | None = None,
        turn_counts: tuple[Sequence[int], Sequence[int]] | None = None,
        seqs: Sequence[int] | None = None,
    ) -> None:
        """Replace this (fresh) context's state with loaded, checked parts (``export``,
        ``compact``). ``counters``: (creation_index, next_turn_seq).

        The indexes are built when an operation first needs them, not here: opening a
        workspace to look at a 100,000-item context should not wait for them (a fifth of its
        start-up). Duplicate ids, which would corrupt them, are refused now; or, given the
        ``item_count`` (turns restored packed, read when first drawn: ``compact.PackedTurn``),
        when the indexes are built, with ``counters``. ``turn_counts``: each turn's counts of
        slots and items, as its checkpoint's index says them (``turn_counts()`` answers
        with them until a turn is written). ``seqs``: the turns' seqs, as the index says them
        (a turn restored packed reads its own when first asked).
        """
        self._note(TURNS_REMOVED)  # everything was replaced: observers re-read the tree
        self._restored_counts = (self._stamp, *turn_counts) if turn_counts is not None else None

        self._root_id = root_id
        self._episode = episode
        self._system = system
        self._turns = pvector(turns)
        if seqs is None:
            seqs = [turn.seq for turn in turns]
        self._turn_index = dict(zip(seqs, range(len(seqs)), strict=True))
        self._templates = templates
        self._templates_shared = False
        self._schedule.clear()
        self._unindexed = True
        for template in templates.values():
            self._push_schedule(template, self._episode)
        if item_count is not None and counters is not None:
            self._loaded_count = item_count
            self._creation_index, self._next_turn_seq = counters
            return
        all_items = [
            item
            for _, turn in self.iter_turns()
            for slot in turn.slots.values()
            for item in slot.items
        ]
        unique = {item.id for item in all_items}
        if len(unique) != len(all_items):
            raise InvalidExport(f"{len(all_items) - len(unique)} item id(s) appear more than once")
        self._loaded_count = len(all_items)
        if counters is not None:
            self._creation_index, self._next_turn_seq = counters
        else:
            highest = max((item.creation_index for item in all_items), default=0)
            for _depth, turn in self.iter_turns():
                slots = (slot.creation_index for slot in turn.slots.values())
                highest = max(highest, turn.creation_index, *slots)
            self._creation_index = highest
            self._next_turn_seq = max(t.seq for t in turns) + 1

    def turn_counts(self) -> tuple[Sequence[int], Sequence[int]]:
        counts = self._restored_counts
        if counts is not None and counts[0] == self._stamp:  # no turn written since restored
            return counts[1], counts[2]
        return super().turn_counts()

    @property
    def indexed(self) -> bool:
        """Whether its indexes are built (a restore leaves them to the first operation, or to
        ``build_indexes``; building them reads every turn)."""
        return not self._unindexed

    def build_indexes(self) -> None:
        """Build now the indexes a restore left for later (a no-op otherwise): a reader that
        has shown the tree calls it while idle, so the first operation is not the one that
        waits."""
        self._ensure_indexed()

    def _ensure_indexed(self) -> None:
        """Fill the indexes a restore left empty, in one pass (see ``restore``)."""
        if not self._unindexed:
            return
        self._unindexed = False
        where = self._where
        for _depth, turn in self.iter_turns():
            seq = turn.seq
            for position, slot in turn.slots.items():
                for item in slot.items:
                    where[item.id] = (seq, position)
                    self._index(item, seq, bulk=True)
        heapq.heapify(self._expiry)  # built once rather than pushed to, item by item
        if len(where) != self._loaded_count:  # only a restore of packed turns checks here
            raise MalformedPackedTurns(
                f"{self._loaded_count - len(where)} item id(s) appear more than once"
            )

    # =====================================================================================
    # public: messages, episodes, snapshots
    # =====================================================================================
    def add_user(self, text: str, **fields: Any) -> Node:
        return self._add_message("user", text, fields)

    def add_assistant(self, text: str, **fields: Any) -> Node:
        return self._add_message("assistant", text, fields)

    def add_message(self, role: Literal["user", "assistant"], text: str, **fields: Any) -> Node:
        return self._add_message(role, text, fields)

    def advance(self) -> int:
        """Start the next episode: expire, move render stages, rehydrate, then snapshot (§3).

        A schedule whose instance is in the tree when the next one is due (a sticky item's,
        expiring in this same advance, or one still alive) is renewed in place: the fresh
        instance takes the old one's place in its slot, so neither it nor its neighbours move
        (seed 002: "always visible at same position"). One with no instance (a cyclic item
        between its lives) is inserted at its coordinates by the placement rules. Render
        stages that run out together move in their items' creation order.
        """
        self._ensure_indexed()
        if self.rules < 3:
            return self._advance_v2()
        episode = self._episode + 1
        expired = self._due_expiries(episode)
        due = self._due_schedules(episode)
        items = self._items
        renewed = {t.live_id for t in due if t.live_id is not None and t.live_id in items}
        leaving = [item for item in expired if item.id not in renewed]
        self._begin("advance", hold=self._may_empty_turns(leaving))
        rec = self._rec
        self._episode = episode
        before: dict[str, Coords] = {}
        if rec is not None:
            there = {item.id: item for item in expired}
            there.update((item_id, items[item_id]) for item_id in renewed)
            before = self._coords_of(list(there.values()))
        touched = {self._where[item.id][0] for item in leaving}
        self._detach(*leaving)
        movers: list[Item] = []
        for item in expired:
            if item.lifecycle is not None:
                movers.append(item)
                continue
            if item.template_id is not None and item.id not in renewed:
                self._set_live(item.template_id, None)
            if rec is not None:
                age = episode - item.born_episode
                reasons: Reasons = (age, item.ttl, None, None, None, None, False)
                rec.add("expired", item, before[item.id], reasons)
        movers.sort(key=lambda item: (item.creation_index, item.id))
        for item in movers:
            moved = self._next_stage(item, episode)
            if rec is not None:
                rec.add("stage", item, before[item.id], self._stage_change(item, moved, episode))
        expiring = {item.id for item in expired}
        for template in due:
            self._renew(template, episode, before, expiring, touched)
        self._prune_empty_turns(touched)
        self._record_snapshot("episode")
        self._finish()
        return episode

    def seal(self, trigger: str = "checkpoint") -> str:
        """Record a named snapshot and return its id. Costs O(1): nothing is copied."""
        self._begin("seal")
        snapshot_id = self._record_snapshot(trigger)
        self._finish()
        return snapshot_id

    def hold(self) -> SnapshotContext:
        """The state as it is now, as a read-only view that stays so while the context moves
        on, without recording a snapshot (no id is taken, no event written: replay is not
        changed). Costs what a seal costs: nothing is copied now, the next write copies what
        it changes."""
        held = Snapshot(
            id="held",
            index=-1,
            episode=self._episode,
            trigger="held",
            created_at_ns=0,  # the clock is not read: reading it may move it
            state=self._state(),
        )
        self._gen += 1  # everything reachable from the held state is now frozen
        self._templates_shared = True
        return SnapshotContext(held, self._history)

    @property
    def history(self) -> History:
        return self._history

    def diff(self, a: str | None, b: str | None = None) -> Diff:
        """Changes from snapshot ``a`` to snapshot ``b`` (``None`` = the working state)."""
        older: ContextView = self if a is None else self._history.at_snapshot(a)
        newer: ContextView = self if b is None else self._history.at_snapshot(b)
        return TreeDiff.between(older, newer).to_diff()

    # -- observing changes -------------------------------------------------------------------
    def live(self) -> Context:
        return self

    @property
    def journal_token(self) -> int:
        """Where the record of written turns is now; see :meth:`turns_changed_since`."""
        return self._stamp

    def turns_changed_since(self, token: int) -> set[int] | None:
        """The seqs of turns written or added since ``token`` (-1 is the system region).

        ``None`` when turns were removed since (depths shifted) or the record no longer reaches
        back to ``token``: the caller should re-read the whole tree.
        """
        if token < self._journal_floor or token > self._stamp:
            return None
        changed: set[int] = set()
        for seq, stamp in reversed(self._journal):
            if stamp <= token:
                break
            changed.add(seq)
        return None if TURNS_REMOVED in changed else changed

    def item_count(self) -> int:
        return self._loaded_count if self._unindexed else len(self._items)

    # -- indexes the read side uses --------------------------------------------------------
    def key_candidates(self, key: str) -> list[Node]:
        self._ensure_indexed()
        return self._nodes_for(self._by_key.get(key, {}))

    def tag_candidates(self, tag: str) -> list[Node]:
        self._ensure_indexed()
        return self._nodes_for(self._by_tag.get(tag, {}))

    def mortal_candidates(self) -> list[Node]:
        self._ensure_indexed()
        items = self._items
        # A superset at worst (an entry whose item was replaced by one without a ttl, if
        # the replacement was entered without leaving first): the caller tests each.
        alive = (i for i in self._mortal if i in items and items[i].ttl is not None)
        return self._nodes_for(alive)

    def find(self, item_id: str) -> Node | None:
        self._ensure_indexed()
        item = self._items.get(item_id)
        return self._node_of(item) if item is not None else None

    # =====================================================================================
    # validation (nothing below mutates until validation is over)
    # =====================================================================================
    def _check_component(self, component: ContextComponent, selector: str) -> None:
        from .components import ContextComponent  # pydantic loads on the first component

        if not isinstance(component, ContextComponent):
            raise NotAComponent(
                f"expected a component such as TextContent(...), got {type(component).__name__}",
                got=type(component).__name__,
            )
        lifecycle = component.lifecycle
        check_timers(component.ttl, component.cad)
        check_json_fields(component.content, component.model_extra)
        if lifecycle is not None:
            check_render_lifecycle(lifecycle, component.cad)
            if component.ttl is not None:
                raise InvalidLifecycle(
                    "with a render lifecycle the stages carry the ttl; leave the component's "
                    "ttl unset"
                )

    def _check_depth(self, depth: int, selector: str) -> None:
        if depth < -1:
            raise InvalidCoordinate(
                f"depth {depth} in {selector!r} does not exist: "
                "-1 is the system, 0 the active turn",
                selector=selector,
                depth=depth,
            )
        if depth > self.history_depth:
            raise NoSuchDepth(
                f"depth {depth} in {selector!r} does not exist: the history is "
                f"{self.history_depth} turn(s) deep",
                selector=selector,
                depth=depth,
            )

    # =====================================================================================
    # building items
    # =====================================================================================
    def _add_message(self, role: Role, text: str, fields: dict[str, Any]) -> Node:
        self._ensure_indexed()
        if not isinstance(text, str):
            raise InvalidComponent(
                f"a {role} message must be text, not {type(text).__name__}", field="text"
            )
        if "role" in fields or "content" in fields:
            raise InvalidComponent("a message's role and text are given by the call", field="role")
        from pydantic import ValidationError

        from .components import TextContent

        try:
            component = TextContent(content=text, role=role, **fields)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "message"
            raise InvalidComponent(f"message field {where}: {first['msg']}", field=where) from None
        self._check_component(component, "d0, 0, 0")
        self._begin("message")
        active = self._active
        if active.slots.get(0) or any(
            item.follows for slot in active.slots.values() for item in slot.items
        ):
            self._push_turn()
        node = self._insert_component(component, 0, 0, 0)
        self._finish()
        return node

    def _insert_component(
        self, component: ContextComponent, depth: int, position: int, offset: int
    ) -> Node:
        item = self._new_item(component)
        seq = self._seq_at(depth)
        self._attach(item, seq, position, offset)
        if self._rec is not None:
            self._rec.add("inserted", item, None)
        if item.cad is not None:
            self._start_schedule(item, seq, position)
        return self._node_of(item)

    def _new_item(self, component: ContextComponent, **overrides: Any) -> Item:
        self._creation_index += 1
        fields: dict[str, Any] = {
            "id": self._ids(),
            "created_at_ns": self._clock.now_ns(),
            "creation_index": self._creation_index,
            **self._leased(component),
        }
        if component.cad is not None:
            fields["template_id"] = fields["id"]  # the first instance names its schedule
        fields.update(overrides)
        return Item(**fields)

    def _leased(self, component: ContextComponent) -> dict[str, Any]:
        """The item fields a component gives, born now: its ttl (or its first render stage's)
        counts from this episode."""
        lifecycle = component.lifecycle
        return {
            "node_type": component.node_type,
            "content": component.content,
            "key": component.key,
            "tags": tuple(component.tags),
            "ttl": lifecycle.stages[0].ttl if lifecycle is not None else component.ttl,
            "cad": component.cad,
            "priority": component.priority,
            "role": component.role,
            "born_episode": self._episode,
            "data": component.data_fields() or None,
            "lifecycle": lifecycle,
        }

    def _replace(self, old: Item, component: ContextComponent) -> Node:
        """Same id and coordinates, new content. The replacement is a fresh lease: it is born
        now, so its ttl (or its first render stage) counts from this episode."""
        fields = self._leased(component)
        fields["role"] = component.role or old.role
        new = old.evolve(**fields, stage=0, passes=0)
        seq, position = self._where[old.id]
        template = self.template_of(old)
        if template is not None and new.cad is None:
            self._drop_template(template.id)
            new = new.evolve(template_id=None)
        elif new.cad is not None:
            new = new.evolve(template_id=template.id if template is not None else new.id)
        self._swap(old, new)
        if template is not None and new.cad is not None:
            # The schedule carries the new content from now on (the seeds' status example) and
            # is anchored as its new lifecycle says, or it would not rehydrate where the
            # instance now lives.
            anchor_seq, anchor_depth = self._anchor(new, seq)
            updated = template.evolve(
                prototype=new, cad=new.cad, anchor_seq=anchor_seq, anchor_depth=anchor_depth
            )
            self._put_template(updated)
            self._push_schedule(updated, self._episode)
        elif template is None and new.cad is not None:
            self._start_schedule(new, seq, position)
        return self._node_of(new)

    # =====================================================================================
    # ODI: turns
    # =====================================================================================
    @property
    def _active(self) -> Turn:
        return self._turns[-1]

    def _push_turn(self) -> None:
        """A new message starts a turn at depth 0; every turn becomes one deeper (ODI). A
        history turn that held only temporary or cyclic items is left empty (they keep their
        depth, so they move to the newer turn that now sits there) and goes in the same step."""
        if self.rules < 3:
            self._push_turn_v2()
            return
        self._reshape(push=True, candidates=(self._active.seq,))

    def _prune_empty_turns(self, seqs: Iterable[int]) -> None:
        """A history turn with no message and no components disappears; older turns move up."""
        if self.rules < 3:
            self._prune_empty_turns_v2(seqs)
            return
        active_seq, turns, index = self._active.seq, self._turns, self._turn_index
        candidates = [s for s in set(seqs) if s != active_seq and s in index]
        if any(not turns[index[s]].slots for s in candidates):
            self._reshape(push=False, candidates=candidates)

    def _reshape(self, *, push: bool, candidates: Iterable[int]) -> None:
        """Add a turn at depth 0 (``push``) and remove every history turn left with nothing, as
        one step: permanent and sticky items stay in their turn, temporary and cyclic items
        keep their depth and position.

        The items that keep their depth are lifted out once (the slots they leave close up).
        A history turn with no item that follows it goes unless such an item keeps the depth
        it comes to; removing one moves the deeper turns up, so this is repeated, on paper,
        until no more go. Then the turn list changes once and the lifted items are placed back
        once, at their depth (clamped to the history), position and offset, by the ordinary
        placement rules: core first, then the post side outward, then the pre side outward,
        which reproduces their offsets in a slot that holds nothing else. Lifting them once per
        operation, not once per removed turn, is what keeps a follower's offset in a slot they
        share as it was (issue 27).
        """
        turns, index = self._turns, self._turn_index
        last = len(turns) - 1  # the active turn, before the push
        count = len(turns) + (1 if push else 0)
        fixed = [self._items[item_id] for item_id in self._fixed]
        places = [self._where[item.id] for item in fixed]
        fixed_in = Counter(seq for seq, _position in places)
        kept_depths = {last - index[seq] for seq in fixed_in}
        hollow = sorted(
            i
            for i in {index[seq] for seq in (*candidates, *fixed_in) if seq in index}
            if i < count - 1 and turns[i].item_count() == fixed_in.get(turns[i].seq, 0)
        )
        removed: list[int] = []  # indexes in ``turns``, ascending
        while hollow:
            deepest = count - 1 - len(removed)
            seats = {min(depth, deepest) for depth in kept_depths}
            going = set(removed)
            more = [
                i
                for i in hollow
                if i not in going
                and count - 1 - i - (len(removed) - bisect_right(removed, i)) not in seats
            ]
            if not more:
                break
            removed = sorted(removed + more)
        if self._rec is not None:
            self._record_reshape(self._rec, push, removed, fixed, places)
        groups = self._lift(fixed, places, last)
        if push:
            turn = self._new_turn(self._take_turn_seq())
            self._note(turn.seq)
            index[turn.seq] = len(self._turns)
            self._turns = self._turns.append(turn)
        if removed:
            doomed = set(removed)
            self._note(TURNS_REMOVED)
            kept = [t for i, t in enumerate(self._turns) if i not in doomed]
            self._turns = pvector(kept)
            self._turn_index = {t.seq: i for i, t in enumerate(kept)}
            for template in list(self._templates.values()):
                anchor = template.anchor_seq
                if anchor not in (None, SYSTEM_SEQ) and anchor not in self._turn_index:
                    self._drop_template(template.id)
        groups.sort(key=lambda group: (group[0], group[1]))
        deepest = self.history_depth
        for depth, position, whole, lifted in groups:
            seq = self._seq_at(min(depth, deepest))
            if whole is not None:
                turn = self._writable_turn(seq)
                if position not in turn.slots:
                    self._settle(whole, turn, position)
                    continue
                lifted = [
                    (depth, position, i - whole.core, item) for i, item in enumerate(whole.items)
                ]
            lifted.sort(key=_seating_order)
            for _depth, _position, offset, item in lifted:
                self._place(item, seq, position, offset)

    def _lift(
        self, fixed: list[Item], places: list[Where], last: int
    ) -> list[tuple[int, int, Slot | None, list[tuple[int, int, int, Item]]]]:
        """Take the items that keep their depth out of their slots, one group per slot, as
        (depth, position, the slot when they were all it held, else None, each item with its
        depth, position and offset). A slot they leave empty goes."""
        by_slot: dict[Where, list[Item]] = {}
        for item, place in zip(fixed, places, strict=True):
            group = by_slot.get(place)
            if group is None:
                by_slot[place] = [item]
            else:
                group.append(item)
        index = self._turn_index
        groups: list[tuple[int, int, Slot | None, list[tuple[int, int, int, Item]]]] = []
        for (seq, position), group in by_slot.items():
            depth = last - index[seq]
            turn = self._writable_turn(seq)
            slot = self._writable_slot(turn, position)
            if len(group) == len(slot.items):  # the whole slot: it goes, its order kept
                del turn.slots[position]
                groups.append((depth, position, slot, []))
                continue
            offsets = slot.take(group)
            if not slot.items:
                del turn.slots[position]
            lifted = [
                (depth, position, offset, item) for item, offset in zip(group, offsets, strict=True)
            ]
            groups.append((depth, position, None, lifted))
        return groups

    def _settle(self, lifted: Slot, turn: Turn, position: int) -> None:
        """Put the items of a slot lifted whole into ``turn``'s empty slot at ``position``, in
        their order and with their core: what placing them one by one (core, the post side
        outward, the pre side outward) gives in a slot that holds nothing else."""
        slot = self._writable_slot(turn, position)
        slot.items, slot.core = lifted.items, lifted.core
        where, place = self._where, (turn.seq, position)
        for item in lifted.items:
            where[item.id] = place

    # =====================================================================================
    # episodes: expiry, render lifecycles, cadence
    # =====================================================================================
    def _due_expiries(self, episode: int) -> list[Item]:
        due: list[Item] = []
        seen: set[str] = set()
        while self._expiry and self._expiry[0][0] <= episode:
            expires_at, _, item_id = heapq.heappop(self._expiry)
            item = self._items.get(item_id)
            if item is None or item_id in seen or item.expires_at_episode != expires_at:
                continue  # deleted, replaced or already handled: a stale heap entry
            seen.add(item_id)
            due.append(item)
        return due

    def _next_stage(self, item: Item, episode: int) -> Item | None:
        """Place ``item`` (detached, its stage over) at its next stage; returns it there, or
        None when its lifecycle is over and it is gone."""
        lifecycle = item.lifecycle
        assert lifecycle is not None
        stage, passes = item.stage + 1, item.passes
        if stage >= len(lifecycle.stages):
            passes += 1
            if not lifecycle.goes_on_after(passes):
                return None  # the lifecycle is over: the item is gone
            stage = 0
        target = lifecycle.stages[stage]
        moved = item.evolve(stage=stage, passes=passes, born_episode=episode, ttl=target.ttl)
        depth = min(target.depth, self.history_depth)
        self._attach(moved, self._seq_at(depth), target.position, target.offset)
        return moved

    def _due_schedules(self, episode: int) -> list[Template]:
        """The schedules due at ``episode`` (taken off the heap), in the order they renew."""
        due: list[Template] = []
        seen: set[str] = set()
        while self._schedule and self._schedule[0][0] <= episode:
            entry = heapq.heappop(self._schedule)
            template = self._templates.get(entry[2])
            if (
                template is None
                or template.id in seen
                or entry != self._entry(template, episode - 1)
            ):
                # Dropped, rescheduled, given a new prototype (which reorders it) or already
                # done: a stale heap entry. Only the entry the template's state gives counts,
                # so a loaded copy, whose heap holds nothing else, rehydrates in the same order.
                continue
            seen.add(template.id)
            due.append(template)
        return due

    def _renew(
        self,
        template: Template,
        episode: int,
        before: dict[str, Coords],
        expiring: set[str],
        touched: set[int],
    ) -> None:
        """A due schedule's fresh instance: in its instance's place if it has one in the tree
        (``before`` holds that one's coordinates before the advance; ``expiring`` the ids that
        expired in it), else inserted at the schedule's coordinates."""
        current = self._templates.get(template.id)
        if current is None:
            return
        template = current
        rec = self._rec
        live = self._items.get(template.live_id) if template.live_id is not None else None
        if template.anchor_seq is not None:
            seq = template.anchor_seq
            if seq != SYSTEM_SEQ and seq not in self._turn_index:
                self._drop_template(template.id)
                if live is not None:
                    touched.add(self._where[live.id][0])
                    self._detach(live)
                    if rec is not None and live.id not in expiring:
                        ended = (None, None, template.id, None, None, None, False)
                        rec.add("deleted", live, before.get(live.id), ended)
                return
        else:
            assert template.anchor_depth is not None
            seq = self._seq_at(min(template.anchor_depth, self.history_depth))
        self._creation_index += 1
        fresh = template.prototype.evolve(
            id=self._ids(),
            born_episode=episode,
            created_at_ns=self._clock.now_ns(),
            creation_index=self._creation_index,
            template_id=template.id,
        )
        if live is not None:
            self._swap(live, fresh)
            self._where[fresh.id] = self._where.pop(live.id)
        else:
            self._attach(fresh, seq, template.position, template.offset)
        self._put_template(template.evolve(live_id=fresh.id))
        self._push_schedule(template, episode)
        if rec is not None:
            replaced = live.id if live is not None and live.id not in expiring else None
            came = (None, None, template.id, replaced, None, None, False)
            rec.add("rehydrated", fresh, before.get(replaced) if replaced else None, came)

    @staticmethod
    def _entry(template: Template, after: int) -> tuple[int, int, str]:
        """The schedule heap entry of ``template``'s first rehydration after episode ``after``:
        due episode first, then the prototype's creation order, then the id."""
        return (template.next_after(after), template.prototype.creation_index, template.id)

    def _push_schedule(self, template: Template, after: int) -> None:
        heapq.heappush(self._schedule, self._entry(template, after))

    def _start_schedule(self, item: Item, seq: int, position: int) -> None:
        slot = self._slot_of(item)
        assert item.template_id is not None
        anchor_seq, anchor_depth = self._anchor(item, seq)
        template = Template(
            id=item.template_id,
            prototype=item,
            anchor_seq=anchor_seq,
            anchor_depth=anchor_depth,
            position=position,
            offset=slot.offset_of(item),
            born=self._episode,
            cad=item.cad or 1,
            live_id=item.id,
        )
        self._put_template(template)
        self._push_schedule(template, self._episode)

    def _anchor(self, item: Item, seq: int) -> tuple[int | None, int | None]:
        """``(anchor_seq, anchor_depth)`` of a schedule whose instance sits in turn ``seq``:
        sticky and permanent schedules follow their message, cyclic ones keep their depth (the
        system region never moves, so there the turn is the depth)."""
        if item.follows or seq == SYSTEM_SEQ:
            return seq, None
        return None, self._depth_of_seq(seq)

    def _set_live(self, template_id: str, live_id: str | None) -> None:
        template = self._templates.get(template_id)
        if template is not None:
            self._put_template(template.evolve(live_id=live_id))

    def _put_template(self, template: Template) -> None:
        self._own_templates()
        self._templates[template.id] = template

    def _drop_template(self, template_id: str) -> None:
        if template_id in self._templates:
            self._own_templates()
            del self._templates[template_id]

    def _own_templates(self) -> None:
        if self._templates_shared:
            self._templates = dict(self._templates)
            self._templates_shared = False

    # =====================================================================================
    # the changelog (see engine/context/changelog.py)
    # =====================================================================================
    def _may_empty_turns(self, leaving: Sequence[Item]) -> bool:
        """Whether taking ``leaving`` out can leave a history turn with nothing, so that the
        operation reshapes the turns after changing slots (and must hold what it started
        from: see ``_Recording``)."""
        if not self.record_changes:
            return False
        by_turn: dict[int, int] = {}
        for item in leaving:
            seq = self._where[item.id][0]
            by_turn[seq] = by_turn.get(seq, 0) + 1
        active = self._active.seq
        return any(
            seq not in (SYSTEM_SEQ, active) and self._turn_of_seq(seq).item_count() <= count
            for seq, count in by_turn.items()
        )

    def _begin(self, op: str, *, hold: bool = False) -> None:
        """An operation starts mutating: record what it does (unless recording is off).
        ``hold``: keep the state as it is now readable while the operation changes it (see
        ``_Recording``); it costs what ``hold()`` costs."""
        if not self.record_changes:
            self._rec = None
            return
        if hold and self.rules >= 3:
            self._gen += 1  # what is reachable now is frozen: later writes copy
        self._rec = _Recording(op, self._turns)

    def _finish(self) -> None:
        """The operation is done: read the final places and keep its changelog."""
        rec, self._rec = self._rec, None
        if rec is None:
            self.last_changes = None
            return
        drafts = rec.entries
        if rec.shifts:
            drafts = drafts + [draft for *_, listed in rec.shifts for draft in listed]
        items = self._items
        placed = [items[d[1]] for d in drafts if d[0] not in _NO_AFTER and d[1] in items]
        final = self._coords_of(placed) if placed else {}
        self.last_changes = Changelog(
            rec.op,
            self._episode,
            tuple([_entry(draft, final) for draft in rec.entries]),
            tuple(
                [
                    Shift(by, turns, items, depths, tuple([_entry(d, final) for d in listed]))
                    for by, turns, items, depths, listed in rec.shifts
                ]
            ),
        )

    @staticmethod
    def _stage_change(item: Item, moved: Item | None, episode: int) -> Reasons:
        """The reasons of a render-lifecycle item whose stage ran out: stage k → k+1
        (1-based), cycled back to the first, or ended (``moved`` None: it is gone)."""
        assert item.lifecycle is not None
        return (
            episode - item.born_episode,
            item.ttl,
            None,
            None,
            (item.stage + 1, moved.stage + 1 if moved is not None else None),
            len(item.lifecycle.stages),
            moved is not None and moved.passes > item.passes,
        )

    def _coords_of(self, items: Sequence[Item]) -> dict[str, Coords]:
        """Where each (placed) item is, reading each slot once: many from one slot stay
        linear."""
        if len(items) == 1:  # the common case, without the grouping
            [item] = items
            seq, position = self._where[item.id]
            slot = self._turn_of_seq(seq).slots[position]
            return {item.id: (self._depth_of_seq(seq), position, slot.offset_of(item))}
        by_slot: dict[Where, list[Item]] = {}
        for item in items:
            by_slot.setdefault(self._where[item.id], []).append(item)
        out: dict[str, Coords] = {}
        for (seq, position), group in by_slot.items():
            slot = self._turn_of_seq(seq).slots[position]
            depth = self._depth_of_seq(seq)
            if len(group) == 1:
                out[group[0].id] = (depth, position, slot.offset_of(group[0]))
                continue
            wanted = {id(item) for item in group}
            for index, placed in enumerate(slot.items):
                if id(placed) in wanted:
                    out[placed.id] = (depth, position, index - slot.core)
        return out

    def _record_reshape(
        self,
        rec: _Recording,
        push: bool,
        removed: list[int],
        fixed: list[Item],
        places: list[Where],
    ) -> None:
        """What a reshape is about to do, in the coordinates from before the operation: each
        removed turn (``turn_removed``); the turns that come to another depth, as mass moves
        (``Shift``s), one per band between removed turns; the items that keep their depth but
        whose depth is gone (``moved``: they come up to the deepest turn).

        A reshape is the only change to the turn list an operation makes, so depths now are
        depths before; offsets are read from the turns as the operation found them
        (``rec.turns_before``). Items the operation already accounts for (placed by it: a
        stage, a fresh instance) are neither counted nor listed again.
        """
        turns, index = self._turns, self._turn_index
        last = len(turns) - 1
        gone = [last - i for i in reversed(removed)]  # depths, ascending
        for depth in gone:
            rec.entries.append(("turn_removed", turns[last - depth].id, None, (depth,), _NONE))
        noted = {draft[1] for draft in rec.entries}
        items, fixed_ids, where = self._items, self._fixed, self._where
        placed = [
            last - index[where[i][0]]
            for i in noted
            if i in items and i not in fixed_ids and where[i][0] != SYSTEM_SEQ
        ]
        before_turns = rec.turns_before
        if not removed:  # a push alone (the common case): every turn moves, one band
            system = sum(len(slot.items) for slot in self._system.slots.values())
            moving = len(items) - system - len(fixed) - len(placed)
            listed: list[_Draft] = []
            if moving <= LIST_LIMIT:
                self._list_before(before_turns, range(last + 1), noted, listed)
            rec.shifts.append((1, last + 1, moving, (0, last), listed))
            return  # nothing is removed: no depth is gone, nothing comes up
        fixed_depths = sorted(last - index[seq] for seq, _position in places)
        bounds = [-1, *gone, last + 1]
        for k in range(len(bounds) - 1):
            by = (1 if push else 0) - k
            low, high = bounds[k] + 1, bounds[k + 1] - 1
            if by == 0 or low > high:
                continue
            moving = (
                self._items_in_depths(low, high)
                - (bisect_right(fixed_depths, high) - bisect_left(fixed_depths, low))
                - sum(1 for depth in placed if low <= depth <= high)
            )
            listed = []
            if moving <= LIST_LIMIT:
                self._list_before(before_turns, range(low, high + 1), noted, listed)
            rec.shifts.append((by, high - low + 1, moving, (low, high), listed))
        deepest = last + (1 if push else 0) - len(removed)
        came_up = []
        for item, (seq, position) in zip(fixed, places, strict=True):
            depth = last - index[seq]
            if depth > deepest and item.id not in noted:
                held = before_turns[index[seq]].slots.get(position)
                slot = held if held is not None and item in held.items else self._slot_of(item)
                came_up.append(((depth, position, slot.offset_of(item)), item))
        for at, item in sorted(came_up, key=lambda pair: pair[0]):
            rec.add("moved", item, at)

    def _list_before(
        self, before: PVector[Turn], depths: Iterable[int], noted: set[str], listed: list[_Draft]
    ) -> None:
        """List, as ``moved`` entries at their places in ``before`` (the turns as the operation
        found them), the items of the turns at ``depths`` that move with their turn: those
        that follow it, are still there and have no entry of their own."""
        last, items = len(before) - 1, self._items
        for depth in depths:
            turn = before[last - depth]
            for position in sorted(turn.slots):
                slot = turn.slots[position]
                for i, item in enumerate(slot.items):
                    if item.follows and item.id in items and item.id not in noted:
                        at = (depth, position, i - slot.core)
                        listed.append(("moved", item.id, item, at, _NONE))

    def _items_in_depths(self, low: int, high: int) -> int:
        """How many items the turns at depths ``low``..``high`` hold: counted over those turns
        or over the others, whichever are fewer (the indexes know the total)."""
        last = len(self._turns) - 1
        turns = self._turns

        def held(depths: Iterable[int]) -> int:
            return sum(len(slot.items) for d in depths for slot in turns[last - d].slots.values())

        inside = high - low + 1
        if inside <= last + 1 - inside:
            return held(range(low, high + 1))
        system = sum(len(slot.items) for slot in self._system.slots.values())
        outside = held(range(low)) + held(range(high + 1, last + 1))
        return len(self._items) - system - outside

    # =====================================================================================
    # snapshots
    # =====================================================================================
    def _record_snapshot(self, trigger: str) -> str:
        snapshot = Snapshot(
            id=self._ids(),
            index=len(self._history),
            episode=self._episode,
            trigger=trigger,
            created_at_ns=self._clock.now_ns(),
            state=self._state(),
        )
        self._history.record(snapshot)
        self._gen += 1  # everything reachable from the snapshot is now frozen
        self._templates_shared = True
        return snapshot.id

    def state(self) -> TreeState:
        """The working state as it is now, to compare a snapshot with (not frozen: read it
        before the next change, or ``hold`` it)."""
        return self._state()

    def adopt_past(self, snapshots: Sequence[Snapshot]) -> None:
        """Record snapshots taken before this context was restored (oldest first), as its
        history's first; they share turns with the working state, which is frozen now, so
        that later writes copy what they share."""
        if len(self._history):
            raise InvalidExport("past snapshots are adopted only before any is taken")
        for snapshot in snapshots:
            snapshot.index = len(self._history)
            self._history.record(snapshot)
        if snapshots:
            self._gen += 1  # everything reachable from them is now frozen
            self._templates_shared = True

    def _state(self) -> TreeState:
        return TreeState(
            root_id=self._root_id,
            system=self._system,
            turns=self._turns,
            episode=self._episode,
            templates=self._templates,
        )

    # =====================================================================================
    # primitives: copy-on-write access, attach/detach with indexes
    # =====================================================================================
    def _take_turn_seq(self) -> int:
        seq = self._next_turn_seq
        self._next_turn_seq += 1
        return seq

    def _new_turn(self, seq: int) -> Turn:
        self._creation_index += 1
        return Turn(
            id=self._ids(),
            seq=seq,
            gen=self._gen,
            created_at_ns=self._clock.now_ns(),
            creation_index=self._creation_index,
        )

    def _seq_at(self, depth: int) -> int:
        turn = self.turn_at(depth)
        assert turn is not None, depth
        return turn.seq

    def _depth_of_seq(self, seq: int) -> int:
        if seq == SYSTEM_SEQ:
            return -1
        return len(self._turns) - 1 - self._turn_index[seq]

    def _turn_of_seq(self, seq: int) -> Turn:
        return self._system if seq == SYSTEM_SEQ else self._turns[self._turn_index[seq]]

    def _note(self, seq: int) -> None:
        self._stamp += 1
        journal = self._journal
        if journal and journal[-1][0] == seq:
            journal[-1][1] = self._stamp  # the same turn again: one entry, newest stamp
            return
        journal.append([seq, self._stamp])
        if len(journal) > JOURNAL_LIMIT:
            del journal[: len(journal) - JOURNAL_LIMIT // 2]
            self._journal_floor = journal[0][1] - 1

    def _writable_turn(self, seq: int) -> Turn:
        self._note(seq)
        if seq == SYSTEM_SEQ:
            if self._system.gen != self._gen:
                self._system = self._system.copy(self._gen)
            return self._system
        index = self._turn_index[seq]
        turn = self._turns[index]
        if turn.gen != self._gen:
            turn = turn.copy(self._gen)
            self._turns = self._turns.set(index, turn)
        return turn

    def _writable_slot(self, turn: Turn, position: int) -> Slot:
        slot = turn.slots.get(position)
        if slot is None:
            self._creation_index += 1
            slot = Slot(
                id=self._ids(),
                position=position,
                gen=self._gen,
                created_at_ns=self._clock.now_ns(),
                creation_index=self._creation_index,
            )
            turn.slots[position] = slot
        elif slot.gen != self._gen:
            slot = slot.copy(self._gen)
            turn.slots[position] = slot
        return slot

    def _slot_of(self, item: Item) -> Slot:
        seq, position = self._where[item.id]
        return self._turn_of_seq(seq).slots[position]

    def _place(self, item: Item, seq: int, position: int, offset: int) -> None:
        """Put an item in a slot (no index bookkeeping beyond its location)."""
        turn = self._writable_turn(seq)
        self._writable_slot(turn, position).place(item, offset)
        self._where[item.id] = (seq, position)

    def _unplace_many(self, items: Iterable[Item]) -> dict[str, int]:
        """Take items out of their slots, one pass per slot (a slot left empty goes), and
        return each one's offset from before. Taking many from one slot stays linear."""
        by_slot: dict[tuple[int, int], list[Item]] = {}
        for item in items:
            by_slot.setdefault(self._where[item.id], []).append(item)
        offsets: dict[str, int] = {}
        for (seq, position), group in by_slot.items():
            turn = self._writable_turn(seq)
            slot = self._writable_slot(turn, position)
            for item, offset in zip(group, slot.take(group), strict=True):
                offsets[item.id] = offset
            if not slot.items:
                del turn.slots[position]
        return offsets

    def _attach(self, item: Item, seq: int, position: int, offset: int) -> None:
        self._place(item, seq, position, offset)
        self._index(item, seq)

    def _detach(self, *items: Item) -> None:
        """Take items out of the tree and every index."""
        self._unplace_many(items)
        for item in items:
            self._unindex(item)
            del self._where[item.id]

    def _swap(self, old: Item, new: Item) -> None:
        seq, position = self._where[old.id]
        turn = self._writable_turn(seq)
        self._writable_slot(turn, position).swap(old, new)
        self._unindex(old)
        self._index(new, seq)

    def _index(self, item: Item, seq: int, *, bulk: bool = False) -> None:
        """Enter ``item`` (in turn ``seq``) in the id, key, tag, fixed and expiry indexes.
        ``bulk``: only append to the expiry heap; the caller heapifies once at the end."""
        item_id = item.id
        self._items[item_id] = item
        if item.key is not None:
            self._by_key.setdefault(item.key, {})[item_id] = None
        for tag in item.tags:
            self._by_tag.setdefault(tag, {})[item_id] = None
        if seq != SYSTEM_SEQ and not follows_message(item.ttl, item.cad):
            self._fixed[item_id] = None
        if item.ttl is not None:
            self._mortal[item_id] = None
            entry = (item.born_episode + item.ttl, item.creation_index, item_id)
            if bulk:
                self._expiry.append(entry)
            else:
                heapq.heappush(self._expiry, entry)

    def _unindex(self, item: Item) -> None:
        item_id = item.id
        self._items.pop(item_id, None)
        if item.key is not None:
            keyed = self._by_key.get(item.key)
            if keyed is not None:
                keyed.pop(item_id, None)
                if not keyed:
                    del self._by_key[item.key]
        for tag in item.tags:
            tagged = self._by_tag.get(tag)
            if tagged is not None:
                tagged.pop(item_id, None)
                if not tagged:
                    del self._by_tag[tag]
        self._fixed.pop(item_id, None)
        self._mortal.pop(item_id, None)

    def _node_of(self, item: Item) -> Node:
        seq, position = self._where[item.id]
        slot = self._turn_of_seq(seq).slots[position]
        return self.make_node(item, slot, self._depth_of_seq(seq), slot.offset_of(item))

    def _nodes_for(self, ids: Iterable[str]) -> list[Node]:
        nodes = [self._node_of(self._items[i]) for i in ids]
        nodes.sort(key=canonical_key)
        return nodes

    # =====================================================================================
    # the rules of version 2: events written before issue 27 replay by them (``rules``)
    # =====================================================================================
    # A reshape lifted the items that keep their depth once per step (a push, then each round
    # of removed turns), so a second step re-seated them from where the first had put them; a
    # due schedule's instance was taken out and the fresh one inserted at the schedule's
    # coordinates; the changelog read a later step's ``before`` after the earlier ones.
    def _advance_v2(self) -> int:
        """``advance`` by the rules of version 2."""
        self._ensure_indexed()
        self._begin("advance")
        rec = self._rec
        self._episode += 1
        episode = self._episode
        expired = self._due_expiries(episode)
        touched = {self._where[item.id][0] for item in expired}
        before = self._coords_of(expired) if rec is not None else {}
        self._detach(*expired)
        movers: list[Item] = []
        for item in expired:
            if item.lifecycle is not None:
                movers.append(item)
                continue
            if item.template_id is not None:
                self._set_live(item.template_id, None)
            if rec is not None:
                age = episode - item.born_episode
                reasons: Reasons = (age, item.ttl, None, None, None, None, False)
                rec.add("expired", item, before[item.id], reasons)
        for item in movers:
            moved = self._next_stage(item, episode)
            if rec is not None:
                rec.add("stage", item, before[item.id], self._stage_change(item, moved, episode))
        self._rehydrate_v2(episode, touched)
        self._prune_empty_turns_v2(touched)
        self._record_snapshot("episode")
        self._finish()
        return episode

    def _push_turn_v2(self) -> None:
        """A new message starts a turn at depth 0; every turn becomes one deeper (ODI)."""

        def append_turn() -> None:
            turn = self._new_turn(self._take_turn_seq())
            self._note(turn.seq)
            self._turn_index[turn.seq] = len(self._turns)
            self._turns = self._turns.append(turn)

        if self._rec is not None:
            self._record_push_v2()

        # A history turn that held only temporary or cyclic items is left empty: they keep
        # their depth, so they move to the newer turn that now sits there.
        self._prune_empty_turns_v2(self._keeping_fixed_coordinates_v2(append_turn))

    def _remove_turns_v2(self, seqs: Iterable[int]) -> set[int]:
        """Remove these (empty) turns; returns the turns that re-seating may have emptied."""
        doomed = {self._turn_index[s] for s in seqs}
        if self._rec is not None:
            self._record_removal_v2(doomed)

        def delete_turns() -> None:
            self._note(TURNS_REMOVED)
            kept = [t for i, t in enumerate(self._turns) if i not in doomed]
            self._turns = pvector(kept)
            self._turn_index = {t.seq: i for i, t in enumerate(kept)}
            for template in list(self._templates.values()):
                anchor = template.anchor_seq
                if anchor not in (None, SYSTEM_SEQ) and anchor not in self._turn_index:
                    self._drop_template(template.id)

        return self._keeping_fixed_coordinates_v2(delete_turns)

    def _keeping_fixed_coordinates_v2(self, reshape: Callable[[], None]) -> set[int]:
        """Change which turn sits at which depth; temporary and cyclic items keep their depth.

        They are lifted out (the slots they leave close up), the turns are reshaped, and they
        are placed back at the same coordinates by the ordinary placement rules: core first,
        then the post side outward, then the pre side outward, which reproduces their offsets
        in a slot that holds nothing else. Returns the turns they were lifted from, which may
        now be empty.
        """
        fixed = [self._items[item_id] for item_id in self._fixed]
        places = [self._where[item.id] for item in fixed]
        offsets = self._unplace_many(fixed)
        lifted = [
            (self._depth_of_seq(seq), position, offsets[item.id], item)
            for item, (seq, position) in zip(fixed, places, strict=True)
        ]
        sources = {seq for seq, _position in places}
        reshape()
        lifted.sort(key=lambda e: (e[0], e[1], 0 if e[2] == 0 else 1 if e[2] > 0 else 2, abs(e[2])))
        deepest = self.history_depth
        rec = self._rec
        for depth, position, offset, item in lifted:
            seq = self._seq_at(min(depth, deepest))
            self._place(item, seq, position, offset)
            if rec is not None and depth > deepest:  # its depth is gone: it comes up
                rec.add("moved", item, (depth, position, offset))
        return sources

    def _prune_empty_turns_v2(self, seqs: Iterable[int]) -> None:
        """A history turn with no message and no components disappears; older turns move up."""
        active_seq = self._active.seq
        while True:
            empty = [
                s
                for s in set(seqs)
                if s != SYSTEM_SEQ
                and s != active_seq
                and s in self._turn_index
                and not self._turns[self._turn_index[s]].slots
            ]
            if not empty:
                return
            seqs = self._remove_turns_v2(empty)

    def _rehydrate_v2(self, episode: int, touched: set[int]) -> None:
        seen: set[str] = set()
        while self._schedule and self._schedule[0][0] <= episode:
            entry = heapq.heappop(self._schedule)
            template_id = entry[2]
            template = self._templates.get(template_id)
            if (
                template is None
                or template_id in seen
                or entry != self._entry(template, episode - 1)
            ):
                # Dropped, rescheduled, given a new prototype (which reorders it) or already
                # done: a stale heap entry. Only the entry the template's state gives counts,
                # so a loaded copy, whose heap holds nothing else, rehydrates in the same order.
                continue
            seen.add(template_id)
            live: Item | None = None
            live_at: Coords | None = None
            if template.live_id is not None and template.live_id in self._items:
                live = self._items[template.live_id]
                touched.add(self._where[live.id][0])
                if self._rec is not None:
                    live_at = self._coords_of([live])[live.id]
                self._detach(live)
            if template.anchor_seq is not None:
                seq = template.anchor_seq
                if seq != SYSTEM_SEQ and seq not in self._turn_index:
                    self._drop_template(template_id)
                    if self._rec is not None and live is not None:
                        ended = (None, None, template_id, None, None, None, False)
                        self._rec.add("deleted", live, live_at, ended)
                    continue
            else:
                assert template.anchor_depth is not None
                seq = self._seq_at(min(template.anchor_depth, self.history_depth))
            self._creation_index += 1
            fresh = template.prototype.evolve(
                id=self._ids(),
                born_episode=episode,
                created_at_ns=self._clock.now_ns(),
                creation_index=self._creation_index,
                template_id=template_id,
            )
            self._attach(fresh, seq, template.position, template.offset)
            self._put_template(template.evolve(live_id=fresh.id))
            self._push_schedule(template, episode)
            if self._rec is not None:
                replaced = live.id if live is not None else None
                came = (None, None, template_id, replaced, None, None, False)
                self._rec.add("rehydrated", fresh, live_at, came)

    def _record_push_v2(self) -> None:
        """A new turn is about to push every turn one deeper: every item but the system's and
        those that keep their coordinates moves (counted from the indexes, not the tree)."""
        assert self._rec is not None
        turns = len(self._turns)
        system = sum(len(slot.items) for slot in self._system.slots.values())
        count = len(self._items) - system - len(self._fixed)
        listed: list[_Draft] = []
        self._rec.shifts.append((1, turns, count, (0, turns - 1), listed))
        if count <= LIST_LIMIT:
            self._list_moving_v2(range(turns), listed)

    def _record_removal_v2(self, doomed: set[int]) -> None:
        """These turns (indexes in ``_turns``, all empty) are about to go: each is a
        ``turn_removed``, and the deeper turns come up, past k removed turns by k."""
        assert self._rec is not None
        rec = self._rec
        last = len(self._turns) - 1
        depths = sorted(last - index for index in doomed)
        for depth in depths:
            turn = self._turns[last - depth]
            rec.entries.append(("turn_removed", turn.id, None, (depth,), _NONE))
        # The items that keep their depth, by the band they sit in (k: past k removed turns).
        fixed = [0] * (len(depths) + 1)
        turn_index = self._turn_index
        for item_id in self._fixed:
            fixed[bisect_left(depths, last - turn_index[self._where[item_id][0]])] += 1
        for k, low in enumerate(depths, 1):
            high = depths[k] - 1 if k < len(depths) else last
            if high <= low:
                continue
            count = self._items_in_depths(low + 1, high) - fixed[k]
            listed: list[_Draft] = []
            rec.shifts.append((-k, high - low, count, (low + 1, high), listed))
            if count <= LIST_LIMIT:
                self._list_moving_v2(range(low + 1, high + 1), listed)

    def _list_moving_v2(self, depths: Iterable[int], listed: list[_Draft]) -> None:
        """List the items of the turns at ``depths`` that move with their turn (``moved``
        entries, placed where they are now; their ``after`` is read at the end)."""
        last = len(self._turns) - 1
        for depth in depths:
            turn = self._turns[last - depth]
            for position in sorted(turn.slots):
                slot = turn.slots[position]
                for index, item in enumerate(slot.items):
                    if item.id not in self._fixed:
                        coords = (depth, position, index - slot.core)
                        listed.append(("moved", item.id, item, coords, _NONE))
