"""Lossless export and load of a context tree (spec §7: dump → load → dump is byte-identical).

The export is plain JSON built directly from the records (fast at 100,000 items); loading goes
through pydantic models so a damaged or hand-edited export is refused with a typed error that
names the bad field, before anything is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from .components import Pos, RenderLifecycle
from .errors import ContextError, InvalidExport
from .nodes import Item, Slot, Template, Turn
from .view import ContextView, dump_item

if TYPE_CHECKING:
    from .context import Context

FORMAT = "pact-context"
VERSION = 1


def _dump_turn(view: ContextView, turn: Turn, depth: int) -> dict[str, Any]:
    slots = []
    for slot in turn.sorted_slots():
        items = [
            dump_item(item, slot.id, (depth, slot.position, index - slot.core))
            for index, item in enumerate(slot.items)
        ]
        slots.append(
            {
                "id": slot.id,
                "node_type": "slot",
                "parent_id": turn.id,
                "position": slot.position,
                "created_at_ns": slot.created_at_ns,
                "creation_index": slot.creation_index,
                "items": items,
            }
        )
    return {
        "id": turn.id,
        "node_type": "system" if depth == -1 else "turn",
        "parent_id": view.root_id,
        "seq": turn.seq,
        "depth": depth,
        "created_at_ns": turn.created_at_ns,
        "creation_index": turn.creation_index,
        "slots": slots,
    }


def dump_state(view: ContextView) -> dict[str, Any]:
    turns = [_dump_turn(view, turn, depth) for depth, turn in view.iter_turns()]
    counters = getattr(view, "counters", None)
    return {
        "format": FORMAT,
        "version": VERSION,
        "root": {"id": view.root_id, "node_type": "root"},
        "episode": view.current_episode,
        "system": turns[0],
        "turns": turns[1:],
        "templates": [
            {
                "id": t.id,
                "anchor_seq": t.anchor_seq,
                "anchor_depth": t.anchor_depth,
                "position": t.position,
                "offset": t.offset,
                "born": t.born,
                "cad": t.cad,
                "live_id": t.live_id,
                "prototype": dump_item(t.prototype, None, None),
            }
            for t in view.templates()
        ],
        "counters": counters() if callable(counters) else None,
    }


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
    role: str | None
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


def _item(model: ItemModel) -> Item:
    lifecycle = None
    stage = passes = 0
    if model.render_lifecycle is not None:
        lc = model.render_lifecycle
        lifecycle = RenderLifecycle([Pos(s.selector, ttl=s.ttl) for s in lc.stages], lc.cycle)
        stage, passes = lc.stage, lc.passes
    return Item(
        id=model.id,
        node_type=model.node_type,
        content=model.content,
        key=model.key,
        tags=tuple(model.tags),
        ttl=model.ttl,
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


def _turn(model: TurnModel, gen: int) -> Turn:
    turn = Turn(
        id=model.id,
        seq=model.seq,
        gen=gen,
        created_at_ns=model.created_at_ns,
        creation_index=model.creation_index,
    )
    for slot_model in model.slots:
        if not slot_model.items:
            raise InvalidExport(f"slot {slot_model.id} is empty; empty slots do not exist")
        if slot_model.position in turn.slots:
            raise InvalidExport(f"turn {model.id} has two slots at position {slot_model.position}")
        items = [_item(m) for m in slot_model.items]
        offsets = [m.offset for m in slot_model.items]
        core = offsets.index(0) if 0 in offsets else -1
        if core < 0 or offsets != list(range(-core, len(items) - core)):
            raise InvalidExport(
                f"slot {slot_model.id}: offsets {offsets} are not dense around a core at 0"
            )
        turn.slots[slot_model.position] = Slot(
            id=slot_model.id,
            position=slot_model.position,
            gen=gen,
            created_at_ns=slot_model.created_at_ns,
            creation_index=slot_model.creation_index,
            items=items,
            core=core,
        )
    return turn


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
        system = _turn(model.system, gen)
        turns = [_turn(t, gen) for t in model.turns]
        templates = {}
        for t in model.templates:
            templates[t.id] = Template(
                id=t.id,
                prototype=_item(t.prototype),
                anchor_seq=t.anchor_seq,
                anchor_depth=t.anchor_depth,
                position=t.position,
                offset=t.offset,
                born=t.born,
                cad=t.cad,
                live_id=t.live_id,
            )
    except ContextError:
        raise
    except Exception as error:  # a stage selector that no longer parses, for instance
        raise InvalidExport(f"not a loadable context export: {error}") from None
    if not turns:
        raise InvalidExport("an export needs at least the active turn")
    return system, turns, templates


def load_context(data: Any, context: Context) -> None:
    """Fill a fresh ``Context`` from an export (used by ``Context.load``)."""
    model = parse_export(data)
    context.restore(model, *build_parts(model, gen=0))
