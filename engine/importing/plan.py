"""A conversation's messages as the context commands that build them: pure, no I/O.

A :class:`Plan` holds what the context it builds holds, one :class:`Entry` per message in the
order the model reads them, and where each one sits. Taking a message in is the command any
client would run: a user or assistant message is a ``message`` command (a new turn, ODI as for
any message); a ``system`` message before the first turn joins the system prompt's slot
(``d-1, 0``); one after it sits with the turn before it, in that turn's slot 1 (the turn that
ran the tool, for gptme's tool results), with the role ``system``, so the provider rendering
reads the messages in their order. :meth:`Plan.become` takes the context from what it holds to
another list of messages, index by index as gptme's views correspond to its master log (line
*i* of a view is line *i* of the master): a message with the same role and another text is
replaced where it sits (same item id: a compaction, an edit), and from the first message whose
role differs the rest is deleted from the end (an undo) and the target's messages are added.
A plan keeps of each message only its role and its text's digest (:class:`Held`), and
:meth:`Plan.becoming` takes the target as it is read, giving its commands as it goes: a
conversation of a gigabyte is never held (``ctx import --gptme``).

The coordinates are worked out here, as the engine's placement rules give them for a context
that holds nothing else (a fresh context's empty active turn takes the first message; deleting
the active turn's message leaves it empty; a history turn left empty is removed), so the
commands can be run in one transaction.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

MESSAGE_ROLES = ("user", "assistant")


@dataclass(frozen=True, slots=True)
class Entry:
    """One message: its role, its text, and what the item made from it carries (``source``)."""

    role: str  # system | user | assistant
    content: str
    source: dict[str, Any] = field(default_factory=dict, compare=False)

    def same(self, other: Entry) -> bool:
        return self.role == other.role and self.content == other.content

    def key(self) -> Held:
        text = self.content.encode("utf-8", "surrogatepass")  # a JSON string may hold any
        return Held(self.role, hashlib.blake2b(text, digest_size=16).digest())


class Held(NamedTuple):
    """What a plan keeps of a message the context holds: its role and its text's digest."""

    role: str
    digest: bytes


@dataclass(slots=True)
class _Turn:
    role: str | None  # None: the active turn, holding no message yet
    tools: int = 0  # items in its slot 1


# Where a message sits: ("system", offset) in d-1, 0; ("core", turn) at a turn's d, 0, 0;
# ("tool", turn, offset) in the turn's slot 1. Turns are numbered from the oldest.
Place = tuple[str, int] | tuple[str, int, int]


class Plan:
    """The commands that build a context from messages, and what the context then holds."""

    def __init__(self) -> None:
        self.system = 0
        self.turns: list[_Turn] = [_Turn(None)]  # a fresh context: an empty active turn
        self.held: list[Held] = []
        self.places: list[Place] = []
        self.commands: list[dict[str, Any]] = []
        self.snapshots: list[str] = []

    def take(self) -> list[dict[str, Any]]:
        """The commands planned since the last call."""
        commands, self.commands = self.commands, []
        return commands

    # -- coordinates ------------------------------------------------------------------------
    def _depth(self, turn: int) -> int:
        return len(self.turns) - 1 - turn

    def _selector(self, place: Place) -> str:
        if place[0] == "system":
            return f"d-1, 0, {place[1]}"
        if place[0] == "core":
            return f"d{self._depth(place[1])}, 0, 0"
        assert len(place) == 3
        return f"d{self._depth(place[1])}, 1, {place[2]}"

    # -- building ---------------------------------------------------------------------------
    def append(self, entry: Entry) -> None:
        """A message after the last one."""
        if entry.role in MESSAGE_ROLES:
            last = self.turns[-1]
            if last.role is None and last.tools == 0:
                last.role = entry.role  # the empty active turn takes it
            else:
                self.turns.append(_Turn(entry.role))
            fields = {"source": entry.source} if entry.source else {}
            self.commands.append(
                {"op": "message", "role": entry.role, "text": entry.content, "fields": fields}
            )
            self._placed(entry, ("core", len(self.turns) - 1))
            return
        turn = self._last_turn()
        place: Place
        if turn is None:
            selector, place = "d-1, 0", ("system", self.system)
            self.system += 1
        else:
            selector = f"d{self._depth(turn)}, 1"
            place = ("tool", turn, self.turns[turn].tools)
            self.turns[turn].tools += 1
        component = _component(entry)
        self.commands.append(
            {"op": "update", "mode": "append", "selector": selector, "component": component}
        )
        self._placed(entry, place)

    def replace(self, index: int, entry: Entry) -> None:
        """Another text for message ``index`` (of the same role), where it sits."""
        assert self.held[index].role == entry.role
        self.commands.append(
            {
                "op": "update",
                "mode": "replace",
                "selector": self._selector(self.places[index]),
                "component": _component(entry),
            }
        )
        self.held[index] = entry.key()

    def pop(self) -> None:
        """Delete the last message."""
        place = self.places.pop()
        self.held.pop()
        self.commands.append({"op": "delete", "selector": self._selector(place)})
        if place[0] == "system":
            self.system -= 1
        elif place[0] == "tool":
            self.turns[place[1]].tools -= 1
        elif place[1] == len(self.turns) - 1:
            self.turns[-1] = _Turn(None)  # the active turn stays, holding nothing
        else:
            del self.turns[place[1]]  # a history turn left with nothing is removed

    def become(self, target: Iterable[Entry]) -> None:
        """Take the context from the messages it holds to ``target``'s (see the module)."""
        for _ in self._become(target):
            pass

    def becoming(self, target: Iterable[Entry]) -> Iterator[dict[str, Any]]:
        """:meth:`become`, reading ``target`` one message at a time and giving each command
        as soon as it is planned (with any planned before it)."""
        for _ in self._become(target):
            yield from self.take()

    def _become(self, target: Iterable[Entry]) -> Iterator[None]:
        # In one pass: the messages of the same role as the one held at their index are
        # replaced where their text differs; at the first that is not (or past what is held),
        # the rest of what is held is deleted from the end and the rest of the target added.
        held = self.held
        index = 0
        given = iter(target)
        for entry in given:
            if index < len(held) and held[index].role == entry.role:
                if held[index] != entry.key():
                    self.replace(index, entry)
                    yield
                index += 1
                continue
            while len(held) > index:
                self.pop()
                yield
            self.append(entry)
            yield
            break
        else:  # the target ended within what is held (an undo)
            while len(held) > index:
                self.pop()
                yield
            return
        for entry in given:
            self.append(entry)
            yield

    def seal(self, name: str) -> None:
        self.commands.append({"op": "seal", "trigger": name})
        self.snapshots.append(name)

    def _placed(self, entry: Entry, place: Place) -> None:
        self.held.append(entry.key())
        self.places.append(place)

    def _last_turn(self) -> int | None:
        """The turn a system message after the first turn sits with: the newest holding a
        message (the active turn, or the one before it when the active turn is empty)."""
        for turn in (len(self.turns) - 1, len(self.turns) - 2):
            if turn >= 0 and self.turns[turn].role is not None:
                return turn
        return None


def _component(entry: Entry) -> dict[str, Any]:
    component: dict[str, Any] = {"type": "text", "content": entry.content, "role": entry.role}
    if entry.source:
        component["source"] = entry.source
    return component
