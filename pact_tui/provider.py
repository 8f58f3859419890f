"""What the provider view counts and compares: each message's size in characters, an estimate
of its size in tokens, the totals, and which messages changed since the episode before.

The token count is an estimate, always shown with ``~``: one token per ``CHARS_PER_TOKEN``
characters, rounded up (English text runs at about four characters a token with the common
tokenizers; code and other scripts differ). No tokenizer is loaded and nothing is downloaded:
the number says roughly how big a message is, not what a provider will bill.

A message is what ``ContextView.render_provider`` sends for one item: its role and its text
(``Item.text``); its character count is ``len`` of that text.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from textual.cache import LRUCache

from engine.context import ContextView
from engine.context.nodes import Item, Turn
from engine.context.tree import provider_role

from .tree_layout import TreeLayout
from .types import ProviderChanges

CHARS_PER_TOKEN = 4
_LENGTHS: LRUCache[Item, int] = LRUCache(4096)  # of items whose content is not a string


def char_count(item: Item) -> int:
    """How many characters the model is sent for ``item``: ``len(item.text())``, counted
    without building the text of content that is not a string (``Item.text_length``), once
    per item (an item is never changed in place: a change makes a new one)."""
    content = item.content
    if isinstance(content, str):
        return len(content)
    length = _LENGTHS.get(item)
    if length is None:
        length = _LENGTHS[item] = item.text_length()
    return length


def token_estimate(chars: int) -> int:
    """About how many tokens ``chars`` characters are: ``ceil(chars / CHARS_PER_TOKEN)``."""
    return -(-chars // CHARS_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class ProviderTotals:
    """How much the model is sent: messages, characters, and the token estimate of them."""

    messages: int
    chars: int
    largest: int  # the most characters of one message

    @property
    def tokens(self) -> int:
        return token_estimate(self.chars)

    def describe(self) -> str:
        noun = "message" if self.messages == 1 else "messages"
        return f"{self.messages:,} {noun} · {self.chars:,} chars · ~{self.tokens:,} tokens"


def provider_items(view: ContextView) -> Iterator[tuple[str, Item]]:
    """(role, item) of every message, in the order the model reads them."""
    for depth, turn in view.iter_turns():
        yield from _messages(depth, turn)


def provider_totals(view: ContextView) -> ProviderTotals:
    """Messages, characters and the largest message of ``view``: one walk of its items (the
    provider pane keeps them per turn instead: ``ProviderLayout.totals``)."""
    messages = chars = largest = 0
    for _depth, turn in view.iter_turns():
        m, c, most = turn_totals(turn)
        messages, chars, largest = messages + m, chars + c, max(largest, most)
    return ProviderTotals(messages, chars, largest)


def turn_totals(turn: Turn) -> tuple[int, int, int]:
    """(messages, characters, the most characters of one message) of ``turn``; the order does
    not matter here, so no slot is sorted."""
    messages = chars = largest = 0
    for slot in turn.slots.values():
        items = slot.items
        messages += len(items)
        for item in items:
            content = item.content
            count = len(content) if type(content) is str else char_count(item)
            chars += count
            if count > largest:
                largest = count
    return messages, chars, largest


class ProviderLayout(TreeLayout):
    """The provider rendering's layout (one line per message: ``TreeLayout(headers=False)``)
    that keeps each turn's totals beside its height, so that the pane's totals are read, not
    walked: like the heights, a change of the live context counts again only the turns it
    wrote (at 100,000 items a walk of every message took a tenth of a second on every ``v``).
    """

    def __init__(self) -> None:
        super().__init__(headers=False)
        # By the layout's entry (the system region, then the turns oldest first); arrays,
        # which the garbage collector does not walk.
        self._messages, self._chars, self._largest = array("q"), array("q"), array("q")

    def forget(self) -> None:
        super().forget()
        self._messages, self._chars, self._largest = array("q"), array("q"), array("q")

    def _measure_all(self, turns: list[Turn]) -> Iterable[int]:
        counted = [turn_totals(turn) for turn in turns]
        self._messages = array("q", [m for m, _c, _l in counted])
        self._chars = array("q", [c for _m, c, _l in counted])
        self._largest = array("q", [most for _m, _c, most in counted])
        if not self._ghosts:  # one line per message
            return self._messages
        return super()._measure_all(turns)

    def _measure(self, index: int, turn: Turn) -> int:
        m, c, most = turn_totals(turn)
        if index == len(self._messages):  # a turn appended
            self._messages.append(m)
            self._chars.append(c)
            self._largest.append(most)
        else:
            self._messages[index], self._chars[index], self._largest[index] = m, c, most
        return super()._measure(index, turn)

    def totals(self) -> ProviderTotals:
        """``provider_totals`` of the view laid out, as it is now."""
        self._catch_up()
        return ProviderTotals(sum(self._messages), sum(self._chars), max(self._largest, default=0))


def provider_changes(before: ContextView, now: ContextView, since: str) -> ProviderChanges:
    """Which messages of ``now`` the model was not sent in ``before`` (added) or was sent
    otherwise (changed: another text or another role); how many it no longer is (removed).
    Where a message sits is not a change: the model reads its text, not its coordinates.

    A turn that is the same object in both views was not written between them (the context
    copies a turn a snapshot holds before writing it), so its messages are the same: only the
    turns that are not are compared item by item, found by identity (set differences of
    each side's turns, at C speed: a walk of 33,000 turns side by side took a tenth of a
    second on every ``v``)."""
    old_turns, new_turns = _turn_list(before), _turn_list(now)
    old: dict[str, tuple[str, Item]] = {}
    for depth, turn in _placed(old_turns, set(old_turns).difference(new_turns)):
        old.update((item.id, (role, item)) for role, item in _messages(depth, turn))
    written = _placed(new_turns, set(new_turns).difference(old_turns))
    added: set[str] = set()
    changed: set[str] = set()
    still_sent = 0
    for depth, turn in written:
        for role, item in _messages(depth, turn):
            previous = old.get(item.id)
            if previous is None:
                added.add(item.id)
                continue
            still_sent += 1
            old_role, old_item = previous
            if old_role != role or (old_item is not item and _text_differs(old_item, item)):
                changed.add(item.id)
    return ProviderChanges(since, frozenset(added), frozenset(changed), len(old) - still_sent)


def _turn_list(view: ContextView) -> list[Turn]:
    """The system region, then the turns oldest first (turn ``i`` of them at depth
    ``len - 1 - i``)."""
    system = view.turn_at(-1)
    assert system is not None
    return [system, *view.turns_oldest_first()]


def _placed(turns: list[Turn], picked: set[Turn]) -> list[tuple[int, Turn]]:
    """(depth, turn) of the ``picked`` turns of ``turns`` (``_turn_list``'s), in their order."""
    last = len(turns) - 1
    placed = []
    for turn in picked:
        if turn is turns[0]:
            placed.append((-1, turn))
        else:  # the turns after the system region are in seq order
            index = bisect_left(turns, turn.seq, lo=1, key=_seq_of)
            placed.append((last - index, turn))
    placed.sort(key=lambda pair: -pair[0])
    return placed


def _seq_of(turn: Turn) -> int:
    return turn.seq


def _messages(depth: int, turn: Turn) -> Iterator[tuple[str, Item]]:
    turn_role = turn.role
    for position in sorted(turn.slots):
        for item in turn.slots[position].items:
            yield provider_role(depth, item.role, turn_role), item


def _text_differs(old: Item, new: Item) -> bool:
    """Whether the model reads another text for ``new`` than for ``old`` (the same item), never
    building a whole text: strings compare, JSON content by its hash (which the item keeps),
    a component without content by its fields."""
    if isinstance(old.content, str) and isinstance(new.content, str):
        return old.content != new.content  # the same string object compares at once
    if old.content is None or new.content is None:
        return (old.content, old.data, old.node_type) != (new.content, new.data, new.node_type)
    return old.content_hash != new.content_hash
