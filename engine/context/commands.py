"""Context operations as data: the commands a workspace validates, stores as events and replays.

Each operation is a pydantic model, told apart by ``op`` (:data:`ContextCommand`, a discriminated
union); its JSON form is what an event stores::

    {"op": "insert", "selector": "d0, 1, 0", "component": {"type": "text", "content": "…"}}

:func:`parse_command` turns that form (or a model built in code) into a checked model, and
:func:`apply_command` runs one on a ``Context`` and returns its result (a value of
``engine.context.results``). Replaying the same commands on a context built with the same id
factory and clock readings rebuilds the same tree, so a workspace stores commands, not their
effects.

This module loads pydantic: import it where a command is built or run, not where a context is
only read (opening a workspace to look at it should not pay for pydantic).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Self, TypeAlias

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from engine.canonical import UnfitValue, check_fit

from .components import ContextComponent, TextContent
from .context import RULES, Context
from .errors import ContextError, InvalidCommand, InvalidUpdateMode
from .nodes import lived_ttl
from .results import Advanced, ContextResult, Deleted, Placed, Sealed
from .selectors import check_input_selector
from .stages import Pos, Role
from .tree import Node

OPS = ("insert", "update", "delete", "message", "advance", "seal")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StageSpec(_Model):
    """One render-lifecycle stage: coordinates, and how many episodes it lasts (None: final)."""

    selector: str
    ttl: int | None = None


class LifecycleSpec(_Model):
    stages: tuple[StageSpec, ...]
    cycle: StrictBool | StrictInt = False


# The fields of a component that are its own (everything else it is given is kept as its data).
COMPONENT_FIELDS = ("content", "key", "tags", "ttl", "cad", "priority", "role")


class ComponentSpec(BaseModel):
    """A component in its JSON form: ``{"type": "text", "content": "…", "key": …, "tags": […],
    "ttl": 3, "cad": 1, "priority": 0, "role": …, "render_lifecycle": {"stages": [{"selector":
    "d0, 0, 1", "ttl": 2}, …], "cycle": false}, "data": {…}}``, all optional. ``cadence`` is
    another name for ``cad``. Fields it does not name, and those in ``data``, are kept as the
    item's data. A ``text`` component's content is a string; any other ``type`` names the
    item's type (``.image`` in a selector) and may carry any JSON content, or none."""

    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)

    type: str = "text"
    content: Any = None
    key: str | None = None
    tags: tuple[str, ...] = ()
    ttl: int | None = None
    cad: int | None = Field(default=None, alias="cadence")
    priority: int = 0
    role: Role | None = None
    render_lifecycle: LifecycleSpec | None = None
    data: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _check(self) -> Self:
        given_text = self.type == "text" and "content" in self.model_fields_set
        if given_text and not isinstance(self.content, str):
            raise ValueError("a text component's content must be a string")
        given = set(self.data or ()) & (set(self.model_extra or ()) | set(COMPONENT_FIELDS))
        if given:
            raise ValueError(f"'data' repeats field(s) given elsewhere: {', '.join(sorted(given))}")
        return self

    def build(self) -> ContextComponent:
        """The component to place (its lifecycle checks run when it is placed)."""
        fields = {name: getattr(self, name) for name in COMPONENT_FIELDS}
        if "content" not in self.model_fields_set and self.type == "text":
            fields["content"] = ""
        extra = {**(self.model_extra or {}), **(self.data or {})}
        cls = TextContent if self.type == "text" else ContextComponent
        component = cls(**fields, **extra).of_type(self.type)
        if self.render_lifecycle is not None:
            stages = [Pos(stage.selector, ttl=stage.ttl) for stage in self.render_lifecycle.stages]
            component.render_lifecycle(stages, cycle=self.render_lifecycle.cycle)
        return component


class InsertCommand(_Model):
    """Place a component at exact coordinates (``pact_insert``)."""

    op: Literal["insert"] = "insert"
    selector: str
    component: ComponentSpec


class UpdateCommand(_Model):
    """Replace the item at exact coordinates, or append to a slot (``pact_update``)."""

    op: Literal["update"] = "update"
    selector: str
    component: ComponentSpec
    mode: Literal["replace", "append"] = "replace"


class DeleteCommand(_Model):
    """Delete by coordinates or query (``selector``), or by ``key``: one of the two."""

    op: Literal["delete"] = "delete"
    selector: str | None = None
    key: str | None = None


class MessageCommand(_Model):
    """A user or assistant message: a new turn (ODI). ``fields`` are the message item's own
    (``key``, ``tags``, ``ttl``…)."""

    op: Literal["message"] = "message"
    role: Literal["user", "assistant"]
    text: str
    fields: dict[str, Any] = Field(default_factory=dict)


class AdvanceCommand(_Model):
    """Start the next episode: expiry, render-lifecycle moves, rehydration, a snapshot."""

    op: Literal["advance"] = "advance"


class SealCommand(_Model):
    """Record a named snapshot."""

    op: Literal["seal"] = "seal"
    trigger: str = "checkpoint"

    @field_validator("trigger")
    @classmethod
    def _named(cls, trigger: str) -> str:
        if not trigger.strip():
            raise ValueError("'seal' needs a non-empty trigger name")
        return trigger


ContextCommand: TypeAlias = Annotated[
    InsertCommand | UpdateCommand | DeleteCommand | MessageCommand | AdvanceCommand | SealCommand,
    Field(discriminator="op"),
]
_COMMAND: TypeAdapter[ContextCommand] = TypeAdapter(ContextCommand)
_MODELS: dict[str, type[BaseModel]] = {
    model.model_fields["op"].default: model
    for model in (
        InsertCommand,
        UpdateCommand,
        DeleteCommand,
        MessageCommand,
        AdvanceCommand,
        SealCommand,
    )
}


FORMAT = 3
"""The version of the command forms and rules this module writes; an event records it (``"v"``)
with its command. Version 1 (no ``"v"``) is an older release's forms, read by
:func:`parse_recorded`. Version 3 has version 2's forms, run by the engine's rules of issue 27
(``engine.context.context.RULES``): an event of version 2 or 1 replays by the rules it was
written by (:func:`apply_command`'s ``version``), so it gives the state and account it gave."""


def parse_command(
    command: ContextCommand | Mapping[str, Any],
) -> tuple[ContextCommand, dict[str, Any]]:
    """The checked command and its JSON form (what an event stores), or ``InvalidCommand``
    naming what is wrong. A model built in code and its JSON form parse to equal commands.

    The command is taken through JSON first, so what runs now is exactly what a replay of the
    stored form runs (string keys, lists, no NaN).
    """
    if isinstance(command, BaseModel):
        given: Any = command.model_dump(exclude_unset=True)
        given.setdefault("op", command.op)
    else:
        given = command
    checked = _validated(data := _as_json(given, "a command"))
    for selector in _selectors(checked):
        check_input_selector(selector)
    return checked, data


def _selectors(command: ContextCommand) -> list[str]:
    """The selectors a command carries: where it acts, and its component's stages."""
    selector = getattr(command, "selector", None)
    component = getattr(command, "component", None)
    lifecycle = component.render_lifecycle if component is not None else None
    stages = [stage.selector for stage in lifecycle.stages] if lifecycle is not None else []
    return [selector, *stages] if selector is not None else stages


def parse_recorded(data: Any, version: int) -> ContextCommand:
    """A command as an event recorded it (already JSON: no copy through JSON), read by the
    rules of the version that wrote it, so it runs as it ran then. Version 1 commands were
    checked less: keys it ignored are left out, ``"fields": null`` is no fields, and a
    component's ``type`` other than ``text`` gave the item the type ``component``."""
    if version < 2:
        data = _as_version_1(data)
    return _validated(_as_recorded(data))


def _validated(data: Any) -> ContextCommand:
    if not isinstance(data, dict):
        raise InvalidCommand(f"a command must be a JSON object, got {type(data).__name__}")
    op = data.get("op")
    if op not in OPS:
        raise InvalidCommand(
            f"unknown context operation {op!r}; use one of {', '.join(OPS)}", op=repr(op)
        )
    try:
        return _COMMAND.validate_python(data)
    except ValidationError as error:
        first = error.errors()[0]
        raise _refusal(op, first["loc"][1:], first) from None  # [0] is the union's tag: the op


def parse_component(data: Any) -> ComponentSpec:
    """A component from its JSON form (``--component``), or ``InvalidCommand`` naming what is
    wrong, as a command carrying it would be refused."""
    given = _as_json(data, "a component")
    try:
        return ComponentSpec.model_validate(given)
    except ValidationError as error:
        first = error.errors()[0]
        raise _refusal("insert", ("component", *first["loc"]), first) from None


def _as_json(given: Any, what: str) -> Any:
    """``given`` taken through JSON (string keys, lists), once :func:`check_fit` has found
    nothing the engine does not take in; ``InvalidCommand`` naming the place otherwise."""
    try:
        check_fit(given)
        return json.loads(json.dumps(given, sort_keys=True, allow_nan=False))
    except UnfitValue as error:
        where = f" at {error.where!r}" if error.where else ""
        raise InvalidCommand(f"{what}{where}: {error.problem}", field=error.where) from None
    except (TypeError, ValueError) as error:
        raise InvalidCommand(f"{what} must be JSON: {error}") from None


def _refusal(op: str, loc: tuple[int | str, ...], error: ErrorDetails) -> ContextError:
    """The first thing pydantic found, said as a command error: where, what, what was given."""
    where = [str(part) for part in loc]
    field = ".".join(where) or "command"
    if where == ["mode"]:
        return InvalidUpdateMode(
            f"update mode must be 'replace' or 'append', not {error['input']!r}",
            mode=repr(error["input"]),
        )
    message = error["msg"].removeprefix("Value error, ")
    given = error.get("input")
    if isinstance(given, (str, int, float, bool)) and error["type"] != "missing":
        message += f" (got {given!r})"
    if where[:1] == ["component"] and error["type"] != "missing":
        inside = "".join(f"{part}: " for part in [".".join(where[1:])] if part)
        return InvalidCommand(f"invalid component: {inside}{message}", field=field)
    named = f" {'.'.join(where)!r}:" if where else ""
    return InvalidCommand(f"{op!r} command:{named} {message}", field=field)


def _as_recorded(data: Any) -> Any:
    """Before ``ttl=0`` was refused, an item with ``ttl=0`` lived exactly as one with ``ttl=1``
    does (seen in its birth episode, gone at the next advance): it is read as that, here and by
    every other reader of stored state (``nodes.lived_ttl``). Copies only what it changes."""
    if not any(part.get("ttl") == 0 for part in _with_ttl(data)):
        return data
    data = copy.deepcopy(data)
    for part in _with_ttl(data):
        part["ttl"] = lived_ttl(part.get("ttl"))
    return data


def _with_ttl(data: Any) -> list[dict[str, Any]]:
    """The parts of a command's JSON form that may carry a ttl: its component, its message
    fields, the component's render stages."""
    if not isinstance(data, dict):
        return []
    component, fields = data.get("component"), data.get("fields")
    lifecycle = component.get("render_lifecycle") if isinstance(component, dict) else None
    stages = lifecycle.get("stages") if isinstance(lifecycle, dict) else None
    parts = [component, fields, *(stages if isinstance(stages, list) else [])]
    return [part for part in parts if isinstance(part, dict)]


def _as_version_1(data: Any) -> Any:
    """A version 1 command in version 2's terms (a copy)."""
    if not isinstance(data, dict):
        return data
    model = _MODELS.get(data.get("op"))  # type: ignore[arg-type]
    if model is None:
        return data
    out = {key: value for key, value in data.items() if key in model.model_fields}
    if out.get("fields", {}) is None:
        out["fields"] = {}
    component = out.get("component")
    if isinstance(component, dict):
        component = dict(component)
        if component.get("type", "text") != "text":
            component["type"] = "component"
        lifecycle = component.get("render_lifecycle")
        if isinstance(lifecycle, dict):
            lifecycle = {k: v for k, v in lifecycle.items() if k in LifecycleSpec.model_fields}
            stages = lifecycle.get("stages")
            if isinstance(stages, list):
                lifecycle["stages"] = [
                    {k: v for k, v in stage.items() if k in StageSpec.model_fields}
                    if isinstance(stage, dict)
                    else stage
                    for stage in stages
                ]
            component["render_lifecycle"] = lifecycle
        out["component"] = component
    return out


def _placed(context: Context, node: Node) -> Placed:
    return Placed(node.id, tuple(node.coordinates), context.last_changes)


def apply_command(
    context: Context, command: ContextCommand, version: int = FORMAT
) -> ContextResult:
    """Run one command; raises a ``ContextError`` (state unchanged) if it is refused.

    ``version``: the version of the event that recorded it (see ``FORMAT``); a command of an
    older version runs by the engine's rules of then.

    The result carries what the command did as its ``changes`` (a ``Changelog``), or None if
    the context records no changelog (``record_changes`` off)."""
    context.rules = RULES if version >= 3 else 2
    try:
        return _applied(context, command)
    finally:
        context.rules = RULES


def _applied(context: Context, command: ContextCommand) -> ContextResult:
    match command:
        case InsertCommand(selector=selector, component=component):
            return _placed(context, context.pact_insert(selector, _built(component)))
        case UpdateCommand(selector=selector, component=component, mode=mode):
            return _placed(context, context.pact_update(selector, _built(component), mode=mode))
        case DeleteCommand(selector=selector, key=key):
            deleted = context.pact_delete(selector, key=key)
            return Deleted(tuple(deleted), context.last_changes)
        case MessageCommand(role=role, text=text, fields=fields):
            try:
                node = context.add_message(role, text, **fields)
            except ContextError:
                raise
            except Exception as error:  # unknown or ill-typed message fields
                raise InvalidCommand(f"invalid message fields: {error}", field="fields") from None
            return _placed(context, node)
        case AdvanceCommand():
            episode = context.advance()
            latest = context.history.latest
            assert latest is not None
            return Advanced(episode, latest.id, context.last_changes)
        case SealCommand(trigger=trigger):
            snapshot = context.seal(trigger)
            return Sealed(snapshot, context.last_changes)
    raise InvalidCommand(f"not a context command: {command!r}")


def _built(spec: ComponentSpec) -> ContextComponent:
    try:
        return spec.build()
    except ValidationError as error:  # a field the component model refuses
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "component"
        raise InvalidCommand(f"invalid component: {where}: {first['msg']}", field=where) from None
