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

from collections.abc import Iterator
from dataclasses import dataclass

from textual.cache import LRUCache

from engine.context import ContextView
from engine.context.nodes import Item, Turn
from engine.context.tree import provider_role

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
    order does not matter here, so no slot is sorted)."""
    messages = chars = largest = 0
    for _depth, turn in view.iter_turns():
        for slot in turn.slots.values():
            items = slot.items
            messages += len(items)
            for item in items:
                content = item.content
                count = len(content) if type(content) is str else char_count(item)
                chars += count
                if count > largest:
                    largest = count
    return ProviderTotals(messages, chars, largest)


def provider_changes(before: ContextView, now: ContextView, since: str) -> ProviderChanges:
    """Which messages of ``now`` the model was not sent in ``before`` (added) or was sent
    otherwise (changed: another text or another role); how many it no longer is (removed).
    Where a message sits is not a change: the model reads its text, not its coordinates.

    A turn that is the same object in both views was not written between them (the context
    copies a turn a snapshot holds before writing it), so its messages are the same: the turns
    are walked side by side in ``seq`` order (both views list them so), and only those written
    since are compared item by item."""
    old: dict[str, tuple[str, Item]] = {}
    written: list[tuple[int, Turn]] = []
    old_turns, new_turns = before.iter_turns(), now.iter_turns()
    old_turn = next(old_turns, None)
    for depth, turn in new_turns:
        while old_turn is not None and old_turn[1].seq < turn.seq:  # gone since
            old.update((item.id, (role, item)) for role, item in _messages(*old_turn))
            old_turn = next(old_turns, None)
        if old_turn is not None and old_turn[1] is turn:
            old_turn = next(old_turns, None)
            continue  # not written since: the same messages
        if old_turn is not None and old_turn[1].seq == turn.seq:
            old.update((item.id, (role, item)) for role, item in _messages(*old_turn))
            old_turn = next(old_turns, None)
        written.append((depth, turn))
    while old_turn is not None:
        old.update((item.id, (role, item)) for role, item in _messages(*old_turn))
        old_turn = next(old_turns, None)
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
