"""Context operations as data: what the workspace stores as events and replays.

A command is a JSON-native dict (``{"op": "insert", "selector": …, "component": {…}}``).
``apply_command`` runs it on a ``Context`` and returns a JSON-native result. Replaying the same
commands on a context built with the same id factory and clock readings rebuilds the same tree,
so the workspace stores commands, not their effects, and checks each replayed result against
the recorded one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .context import Context
from .errors import ContextError
from .stages import Pos
from .view import Node

if TYPE_CHECKING:
    from .components import ContextComponent

OPS = ("insert", "update", "delete", "message", "advance", "seal")


class InvalidCommand(ContextError):
    code = "INVALID_COMMAND"


def component_from_dict(data: Any) -> ContextComponent:
    """A component from its JSON form; anything malformed is an ``InvalidCommand``."""
    from pydantic import ValidationError

    from .components import ContextComponent, TextContent

    if not isinstance(data, dict):
        raise InvalidCommand(
            f"a component must be a JSON object, got {type(data).__name__}", field="component"
        )
    fields = dict(data)
    kind = fields.pop("type", "text")
    lifecycle = fields.pop("render_lifecycle", None)
    extra = fields.pop("data", None) or {}
    if not isinstance(extra, dict):
        raise InvalidCommand("component 'data' must be a JSON object", field="data")
    if kind == "text" and not isinstance(fields.get("content", ""), str):
        raise InvalidCommand("a text component's content must be a string", field="content")
    cls = TextContent if kind == "text" else ContextComponent
    try:
        component = cls(**fields, **extra)
        if lifecycle is not None:
            stages = [Pos(s["selector"], ttl=s.get("ttl")) for s in lifecycle["stages"]]
            component.render_lifecycle(stages, cycle=lifecycle.get("cycle", False))
    except ContextError:
        raise
    except ValidationError as error:  # name the field: "ttl: Input should be a valid integer"
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "component"
        raise InvalidCommand(f"invalid component: {where}: {first['msg']}", field=where) from None
    except Exception as error:  # a missing stage field, …
        first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise InvalidCommand(f"invalid component: {first_line}", field="component") from None
    return component


def _required(command: dict[str, Any], name: str, kind: type) -> Any:
    if name not in command:
        raise InvalidCommand(f"{command.get('op')!r} command is missing {name!r}", field=name)
    value = command[name]
    if not isinstance(value, kind):
        raise InvalidCommand(
            f"{command.get('op')!r} command: {name!r} must be a {kind.__name__}, "
            f"got {type(value).__name__}",
            field=name,
        )
    return value


def _placed(node: Node) -> dict[str, Any]:
    return {"id": node.id, "coordinates": list(node.coordinates)}


def apply_command(context: Context, command: dict[str, Any]) -> dict[str, Any]:
    """Run one command; raises a ``ContextError`` (state unchanged) if it is refused."""
    if not isinstance(command, dict):
        raise InvalidCommand(f"a command must be a JSON object, got {type(command).__name__}")
    op = command.get("op")
    if op == "insert":
        selector = _required(command, "selector", str)
        component = component_from_dict(_required(command, "component", dict))
        return _placed(context.pact_insert(selector, component))
    if op == "update":
        selector = _required(command, "selector", str)
        component = component_from_dict(_required(command, "component", dict))
        mode = command.get("mode", "replace")
        return _placed(context.pact_update(selector, component, mode=mode))
    if op == "delete":
        selector, key = command.get("selector"), command.get("key")
        if selector is not None and not isinstance(selector, str):
            raise InvalidCommand("'delete' command: 'selector' must be a string", field="selector")
        if key is not None and not isinstance(key, str):
            raise InvalidCommand("'delete' command: 'key' must be a string", field="key")
        return {"deleted": context.pact_delete(selector, key=key)}
    if op == "message":
        role = command.get("role")
        if role not in ("user", "assistant"):
            raise InvalidCommand(
                f"message role must be 'user' or 'assistant', not {role!r}", field="role"
            )
        text = _required(command, "text", str)
        fields = command.get("fields") or {}
        if not isinstance(fields, dict):
            raise InvalidCommand("'message' command: 'fields' must be an object", field="fields")
        try:
            node = context.add_message(role, text, **fields)
        except ContextError:
            raise
        except Exception as error:  # unknown or ill-typed message fields
            raise InvalidCommand(f"invalid message fields: {error}", field="fields") from None
        return _placed(node)
    if op == "advance":
        episode = context.advance()
        latest = context.history.latest
        assert latest is not None
        return {"episode": episode, "snapshot": latest.id}
    if op == "seal":
        trigger = command.get("trigger", "checkpoint")
        if not isinstance(trigger, str) or not trigger.strip():
            raise InvalidCommand("'seal' needs a non-empty trigger name", field="trigger")
        return {"snapshot": context.seal(trigger)}
    raise InvalidCommand(
        f"unknown context operation {op!r}; use one of {', '.join(OPS)}", op=repr(op)
    )
