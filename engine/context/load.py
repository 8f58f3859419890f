"""Loading a context export back (``Context.load``): validated with pydantic, so a damaged or
hand-edited export is refused with a typed error that names the bad field and node, before
anything is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from .errors import ContextError, InvalidExport, InvalidLifecycle
from .export import FORMAT, VERSION
from .nodes import (
    Item,
    Slot,
    Template,
    Turn,
    check_json_fields,
    check_render_lifecycle,
    check_timers,
    lived_ttl,
)
from .stages import Pos, RenderLifecycle, Role
from .tree import SYSTEM_SEQ

if TYPE_CHECKING:
    from .context import Context


# -- validation models ------------------------------------------------------------------------
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StageModel(_Strict):
    selector: str
    ttl: int | None


class LifecycleModel(_Strict):
    stages: list[StageModel]
    cycle: bool | int
    stage: int
    passes: int


class ItemModel(_Strict):
    id: str
    parent_id: str | None
    node_type: str
    offset: int | None
    ttl: int | None
    cad: int | None
    created_at_ns: int
    creation_index: int
    key: str | None
    tags: list[str]
    content: Any
    priority: int
    born_episode: int
    content_hash: str
    role: Role | None
    coordinates: list[int] | None = None
    template_id: str | None = None
    render_lifecycle: LifecycleModel | None = None
    data: dict[str, Any] | None = None


class SlotModel(_Strict):
    id: str
    node_type: str
    parent_id: str
    position: int
    created_at_ns: int
    creation_index: int
    items: list[ItemModel]


class TurnModel(_Strict):
    id: str
    node_type: str
    parent_id: str
    seq: int
    depth: int
    created_at_ns: int
    creation_index: int
    slots: list[SlotModel]


class TemplateModel(_Strict):
    id: str
    anchor_seq: int | None
    anchor_depth: int | None
    position: int
    offset: int
    born: int
    cad: int
    live_id: str | None
    prototype: ItemModel


class CountersModel(_Strict):
    creation_index: int
    next_turn_seq: int


class RootModel(_Strict):
    id: str
    node_type: str


class ExportModel(_Strict):
    format: str
    version: int
    root: RootModel
    episode: int
    system: TurnModel
    turns: list[TurnModel]
    templates: list[TemplateModel]
    counters: CountersModel | None


# -- building the records ----------------------------------------------------------------------
class _Loader:
    """Builds the records of one parsed export in a single linear pass.

    An export repeats what the tree already implies (depths, coordinates, parent ids, content
    hashes, a schedule's live instance and anchoring). A hand-edited one where they disagree, or
    that holds a lifecycle an operation would refuse, is refused here with the node named: loaded,
    it would be a state no operation can produce, and later operations would fail on it in ways
    that are not typed errors.
    """

    def __init__(self, model: ExportModel, gen: int) -> None:
        self.model = model
        self.gen = gen
        self.ids: set[str] = set()
        self.highest = 0  # creation index
        self.instances: dict[str, tuple[Item, int]] = {}  # template id -> (live instance, seq)

    def build(self) -> tuple[Turn, list[Turn], dict[str, Template]]:
        model = self.model
        root = model.root
        if root.node_type != "root":
            raise InvalidExport(f"root {root.id!r} has node_type {root.node_type!r}, not 'root'")
        self.ids.add(root.id)
        if model.episode < 0:
            raise InvalidExport(f"episode {model.episode} is negative", field="episode")
        if not model.turns:
            raise InvalidExport("an export needs at least the active turn")
        system = self.turn(model.system, -1)
        count = len(model.turns)
        turns = [self.turn(t, count - 1 - index) for index, t in enumerate(model.turns)]
        seqs: dict[int, str] = {}
        for turn in turns:
            other = seqs.setdefault(turn.seq, turn.id)
            if other != turn.id:
                raise InvalidExport(
                    f"turn {turn.id!r} has seq {turn.seq}, which turn {other!r} has too",
                    field="seq",
                )
        templates: dict[str, Template] = {}
        for template_model in model.templates:
            if template_model.id in templates:
                raise InvalidExport(f"template {template_model.id!r} appears twice")
            templates[template_model.id] = self.template(template_model, seqs)
        for template_id, (instance, _seq) in self.instances.items():
            if template_id not in templates:
                raise InvalidExport(
                    f"item {instance.id!r} is an instance of template {template_id!r}, which "
                    "the export does not have",
                    field="template_id",
                )
        counters = model.counters
        if counters is not None:
            if counters.next_turn_seq <= max(seqs):
                raise InvalidExport(
                    f"counters.next_turn_seq {counters.next_turn_seq} would repeat turn seq "
                    f"{max(seqs)}",
                    field="counters.next_turn_seq",
                )
            if counters.creation_index < self.highest:
                raise InvalidExport(
                    f"counters.creation_index {counters.creation_index} is below a creation "
                    f"index in the export ({self.highest})",
                    field="counters.creation_index",
                )
        return system, turns, templates

    def claim(self, node_id: str) -> None:
        if node_id in self.ids:
            raise InvalidExport(f"id {node_id!r} appears twice", field="id")
        self.ids.add(node_id)

    def turn(self, model: TurnModel, depth: int) -> Turn:
        kind = "system" if depth == -1 else "turn"
        try:
            self.claim(model.id)
            if model.node_type != kind:
                raise InvalidExport(f"node_type {model.node_type!r}", field="node_type")
            if model.depth != depth:
                raise InvalidExport(f"its depth field says {model.depth}", field="depth")
            if model.parent_id != self.model.root.id:
                raise InvalidExport(
                    f"parent_id {model.parent_id!r} is not the root", field="parent_id"
                )
            if depth == -1 and model.seq != SYSTEM_SEQ:
                raise InvalidExport(f"seq {model.seq}; the system's is -1", field="seq")
            if depth != -1 and model.seq < 0:
                raise InvalidExport(
                    f"seq {model.seq}; turns count from 0 (-1 is the system's)", field="seq"
                )
        except InvalidExport as error:
            raise _at(f"{kind} {model.id!r} at depth {depth}", error) from None
        self.highest = max(self.highest, model.creation_index)
        turn = Turn(
            id=model.id,
            seq=model.seq,
            gen=self.gen,
            created_at_ns=model.created_at_ns,
            creation_index=model.creation_index,
        )
        for slot_model in model.slots:
            if slot_model.position in turn.slots:
                raise InvalidExport(
                    f"turn {model.id} has two slots at position {slot_model.position}"
                )
            turn.slots[slot_model.position] = self.slot(slot_model, turn, depth)
        return turn

    def slot(self, model: SlotModel, turn: Turn, depth: int) -> Slot:
        position = model.position
        offsets = [m.offset for m in model.items]
        core = offsets.index(0) if 0 in offsets else -1
        try:
            self.claim(model.id)
            if model.node_type != "slot":
                raise InvalidExport(f"node_type {model.node_type!r}", field="node_type")
            if model.parent_id != turn.id:
                raise InvalidExport(
                    f"parent_id {model.parent_id!r} is not its turn {turn.id!r}",
                    field="parent_id",
                )
            if not offsets:
                raise InvalidExport("it is empty; empty slots do not exist")
            if core < 0 or offsets != list(range(-core, len(offsets) - core)):
                raise InvalidExport(f"offsets {offsets} are not dense around a core at 0")
        except InvalidExport as error:
            raise _at(f"slot {model.id!r} at ({depth}, {position})", error) from None
        self.highest = max(self.highest, model.creation_index)
        items = [
            self.item(m, depth, position, index - core, model.id, turn.seq)
            for index, m in enumerate(model.items)
        ]
        return Slot(
            id=model.id,
            position=position,
            gen=self.gen,
            created_at_ns=model.created_at_ns,
            creation_index=model.creation_index,
            items=items,
            core=core,
        )

    def item(
        self, model: ItemModel, depth: int, position: int, offset: int, slot_id: str, seq: int
    ) -> Item:
        """An item of the tree: a record that also agrees with where it was found."""
        try:
            self.claim(model.id)
            item = self.record(model)
            if model.parent_id != slot_id:
                raise InvalidExport(
                    f"parent_id {model.parent_id!r} is not its slot {slot_id!r}", field="parent_id"
                )
            if model.coordinates is not None and model.coordinates != [depth, position, offset]:
                raise InvalidExport(
                    f"its coordinates field says {model.coordinates}", field="coordinates"
                )
            episode, born, ttl = self.model.episode, item.born_episode, item.ttl
            if born > episode:
                raise InvalidExport(
                    f"born_episode {born} is after the export's episode {episode}",
                    field="born_episode",
                )
            # spec §3: alive iff age < ttl
            if ttl is not None and episode - born >= ttl:
                raise InvalidExport(
                    f"ttl {ttl} from episode {born} is over by episode {episode}", field="ttl"
                )
            if item.template_id is not None:
                other = self.instances.setdefault(item.template_id, (item, seq))[0]
                if other is not item:
                    raise InvalidExport(
                        f"template {item.template_id!r} already has the live instance {other.id!r}",
                        field="template_id",
                    )
        except InvalidExport as error:
            raise _at(f"item {model.id!r} at ({depth}, {position}, {offset})", error) from None
        return item

    def record(self, model: ItemModel) -> Item:
        """An item record whose lifecycle an insert would accept and whose hash is right."""
        lifecycle = None
        stage = passes = 0
        ttl = lived_ttl(model.ttl)  # an export written before ttl=0 was refused
        try:
            check_json_fields(model.content, model.data)
            check_timers(ttl, model.cad)
            if model.render_lifecycle is not None:
                lc = model.render_lifecycle
                # Pos parses the selectors.
                stages = [Pos(s.selector, ttl=lived_ttl(s.ttl)) for s in lc.stages]
                lifecycle = RenderLifecycle(stages, lc.cycle)
                stage, passes = lc.stage, lc.passes
                check_render_lifecycle(lifecycle, model.cad)
                _check_progress(lifecycle, stage, passes, ttl)
        except ContextError as error:
            raise InvalidExport(error.message, **error.details) from None
        if model.creation_index > self.highest:
            self.highest = model.creation_index
        item = Item(
            id=model.id,
            node_type=model.node_type,
            content=model.content,
            key=model.key,
            tags=tuple(model.tags),
            ttl=ttl,
            cad=model.cad,
            priority=model.priority,
            role=model.role,
            created_at_ns=model.created_at_ns,
            creation_index=model.creation_index,
            born_episode=model.born_episode,
            data=model.data,
            template_id=model.template_id,
            lifecycle=lifecycle,
            stage=stage,
            passes=passes,
        )
        if item.content_hash != model.content_hash:
            raise InvalidExport(
                f"content_hash {model.content_hash!r} is not the hash of its content "
                f"({item.content_hash!r})",
                field="content_hash",
            )
        return item

    def template(self, model: TemplateModel, seqs: dict[int, str]) -> Template:
        try:
            try:
                prototype = self.record(model.prototype)
            except InvalidExport as error:
                raise _at("prototype", error) from None
            self.check_schedule(model, prototype, seqs)
        except InvalidExport as error:
            raise _at(f"template {model.id!r}", error) from None
        return Template(
            id=model.id,
            prototype=prototype,
            anchor_seq=model.anchor_seq,
            anchor_depth=model.anchor_depth,
            position=model.position,
            offset=model.offset,
            born=model.born,
            cad=model.cad,
            live_id=model.live_id,
        )

    def check_schedule(self, model: TemplateModel, prototype: Item, seqs: dict[int, str]) -> None:
        if prototype.template_id != model.id:
            raise InvalidExport(
                f"its prototype names template {prototype.template_id!r}", field="template_id"
            )
        if prototype.cad != model.cad:
            raise InvalidExport(
                f"cad {model.cad}, but its prototype has cad {prototype.cad}", field="cad"
            )
        anchor_seq, anchor_depth = model.anchor_seq, model.anchor_depth
        if (anchor_seq is None) == (anchor_depth is None):
            raise InvalidExport(
                "it needs exactly one of anchor_seq and anchor_depth", field="anchor_seq"
            )
        # Sticky and permanent schedules follow a message and cyclic ones keep a depth; the
        # system region, which never moves, anchors any schedule by its seq.
        if anchor_seq is not None and anchor_seq != SYSTEM_SEQ:
            if anchor_seq not in seqs:
                raise InvalidExport(
                    f"anchored to turn seq {anchor_seq}, which the export does not have",
                    field="anchor_seq",
                )
            if not prototype.follows:
                raise InvalidExport(
                    f"a {prototype.kind} schedule keeps its depth, but it is anchored to turn "
                    f"seq {anchor_seq}",
                    field="anchor_seq",
                )
        if anchor_depth is not None and (anchor_depth < 0 or prototype.follows):
            raise InvalidExport(
                f"a {prototype.kind} schedule cannot keep depth {anchor_depth}",
                field="anchor_depth",
            )
        instance, seq = self.instances.get(model.id, (None, None))
        live_id = instance.id if instance is not None else None
        if model.live_id != live_id:
            raise InvalidExport(
                f"live_id {model.live_id!r}, but its live instance is {live_id!r}",
                field="live_id",
            )
        if instance is None:
            return
        if instance.cad != model.cad:
            raise InvalidExport(
                f"cad {model.cad}, but its instance {live_id!r} has cad {instance.cad}",
                field="cad",
            )
        if seq != anchor_seq if anchor_seq is not None else seq == SYSTEM_SEQ:
            raise InvalidExport(
                f"its instance {live_id!r} is not where the schedule is anchored",
                field="anchor_seq",
            )


def _at(where: str, error: InvalidExport) -> InvalidExport:
    """The same refusal, saying which node it is about."""
    return InvalidExport(f"{where}: {error.message}", **error.details)


def _check_progress(lifecycle: RenderLifecycle, stage: int, passes: int, ttl: int | None) -> None:
    """A render-lifecycle item sits in one of its stages, with that stage's ttl, and has done
    fewer full passes than its cycle allows (it would have been removed)."""
    stages, cycle = lifecycle.stages, lifecycle.cycle
    if not 0 <= stage < len(stages):
        raise InvalidLifecycle(f"stage {stage} does not exist (there are {len(stages)})")
    if ttl != stages[stage].ttl:
        raise InvalidLifecycle(f"ttl {ttl}, but stage {stage} has ttl {stages[stage].ttl}")
    if passes < 0 or not lifecycle.goes_on_after(passes):
        raise InvalidLifecycle(f"passes {passes} is not possible with cycle={cycle!r}")


def parse_export(data: Any) -> ExportModel:
    try:
        model = ExportModel.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InvalidExport(f"not a context export: {where}: {first['msg']}", field=where) from None
    if model.format != FORMAT or model.version != VERSION:
        raise InvalidExport(
            f"export format {model.format!r} v{model.version}; this build reads {FORMAT!r} "
            f"v{VERSION}"
        )
    return model


def build_parts(model: ExportModel, gen: int) -> tuple[Turn, list[Turn], dict[str, Template]]:
    try:
        return _Loader(model, gen).build()
    except ContextError:
        raise
    except Exception as error:  # content that cannot be hashed, for instance
        raise InvalidExport(f"not a loadable context export: {error}") from None


def load_context(data: Any, context: Context) -> None:
    """Fill a fresh ``Context`` from an export (used by ``Context.load``)."""
    model = parse_export(data)
    system, turns, templates = build_parts(model, gen=0)
    counters = model.counters
    context.restore(
        root_id=model.root.id,
        episode=model.episode,
        system=system,
        turns=turns,
        templates=templates,
        counters=(counters.creation_index, counters.next_turn_seq) if counters else None,
    )
