"""Selectors on an item's timers (``[remaining<=1]``, ``[ttl>2]``, ``[temporary]``, …) are answered
from the working context's index of the items with a ttl (``Context.mortal_candidates``), not
by a scan; the index stays exact as the context changes: after every command of random
sequences (messages, inserts with and without ttl and cadence, updates, deletes, advances,
seals, a restore from a dump), the indexed answer is the scan's."""

from __future__ import annotations

from itertools import count

from hypothesis import given, settings

from engine.context import Context, ContextView, SequentialIds, SteppingClock
from engine.context.query import _matches_any, _walk, index_served  # the scan, as the oracle
from engine.context.selectors import parse_selector

from .random_ops import OPS, apply_op

REBUILDS = count()

SELECTORS = [
    "[remaining<=1]",
    "[remaining>1]",
    "[remaining=2]",
    "[ttl>=2]",
    "[expires_at_episode<4]",
    "[temporary]",
    "[sticky]",
    "[cyclic]",
    "[cyclic][remaining<=1]",
    "d0, *, * [remaining<=2]",
    "[remaining<=1], +never",
]


def _scanned(view: ContextView, selector: str) -> list[tuple[str, tuple[int, ...]]]:
    parsed = parse_selector(selector)
    return [
        (node.id, node.coordinates)
        for node, chain in _walk(view)
        if _matches_any(parsed.alternatives, chain)
    ]


def _selected(view: ContextView, selector: str) -> list[tuple[str, tuple[int, ...]]]:
    return [(node.id, node.coordinates) for node in view.select(selector)]


def _rebuilt_ids() -> SequentialIds:
    return SequentialIds(prefix=f"r{next(REBUILDS)}n")  # new ids, never the dump's


def test_timer_selectors_are_index_served() -> None:
    for selector in ("[remaining<=1]", "[ttl>=2]", "[temporary]", "[cyclic][remaining<=1]"):
        assert index_served(parse_selector(selector)), selector
    for selector in ("[remaining!=1]", "[ttl=null]", "[permanent]", "[age<=1]"):
        assert not index_served(parse_selector(selector)), selector  # these match no-ttl items


@settings(max_examples=200, deadline=None)
@given(OPS)
def test_the_timer_index_answers_what_the_scan_answers(ops: list[tuple]) -> None:  # type: ignore[type-arg]
    context = Context(ids=SequentialIds(), clock=SteppingClock())
    for op in ops:
        context = apply_op(context, op, rebuilt_ids=_rebuilt_ids) or context
        for selector in SELECTORS:
            assert _selected(context, selector) == _scanned(context, selector), (selector, op)
    for snapshot in context.history:  # a snapshot has no index: its scan, the same answer
        view = context.history.at_snapshot(snapshot.id)
        for selector in SELECTORS:
            assert _selected(view, selector) == _scanned(view, selector), selector
