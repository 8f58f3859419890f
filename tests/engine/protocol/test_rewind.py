"""A document stepped back and forth through its events (``engine.protocol.rewind``) is, at every
count of events, exactly the document the fold of that many events gives: the fold is the
oracle. Random sessions (those of ``test_properties``: every kind of command, refusals' due
work, timers, renamed sections) make the logs; the rewind starts from the creation or from a
checkpoint of a random point (closed proposals built when read), and walks: steps back, steps
forward, jumps anywhere it holds, and events read again after stepping back."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.protocol.commands import Actor
from engine.protocol.document import Document
from engine.protocol.envelope import CountingIds
from engine.protocol.persist import dump_document, restore_document
from engine.protocol.rewind import CannotRewind, Rewind

from .conftest import T0, replay, snapshot_event
from .test_properties import AGENTS, HUMANS, POLICIES, STRATEGIES, Run, documents, one_in


def state(doc: Document) -> dict[str, Any]:
    """Everything a document holds: its dump, and the indexes a dump leaves out, in order."""
    return {
        "dump": dump_document(doc),
        "positions": list(doc.positions.items()),
        "by_key": [(k, s.id) for k, s in doc.by_key.items()],
        "by_id": [(i, s.key) for i, s in doc.by_id.items()],
        "parents": [(s.key, s.parent, s.id) for s in doc.sections],
        "barred": sorted(doc.barred),
        "active": list(doc.active.items()),
        "by_author": [(a, list(ids)) for a, ids in doc.by_author.items()],
        "intents_on": [(k, list(ids)) for k, ids in doc.intents_on.items()],
        "constraints_on": [(k, list(ids)) for k, ids in doc.constraints_on.items()],
        "salience_by_section": [(k, list(v.items())) for k, v in doc.salience_by_section.items()],
        "quiet": list(doc.quiet_timers),
        "due": doc.next_due_ms(),
    }


def session_log(markdown: str, data: st.DataObject) -> list[dict[str, Any]]:
    """The events of a random session (``test_properties``'s commands, without its checks)."""
    options = {
        "policy": data.draw(st.sampled_from(POLICIES)),
        "strategy": data.draw(st.sampled_from(STRATEGIES)),
        "window_s": data.draw(st.sampled_from([1, 60, 300])),
    }
    ids = CountingIds()
    first = snapshot_event(markdown, ids, **options)
    run = Run(replay([first]), ids, T0, [first])
    run.draw, run.tokens = data.draw, []
    for _ in range(data.draw(st.integers(1, 60), label="steps")):
        jump = one_in(data.draw, 8)
        after_s = data.draw(st.integers(0, 700) if jump else st.sampled_from([0, 0, 1, 5, 30, 61]))
        if not one_in(data.draw, 4):
            name = data.draw(st.sampled_from(AGENTS))
            actor, command = Actor.agent(name), run.agent_command(name)
            if run.doc.agent_named(name) is None and not one_in(data.draw, 6):
                command = {"op": "join", "agentName": name}
                if run.tokens and data.draw(st.booleans()):
                    command["token"] = data.draw(st.sampled_from(run.tokens))
        else:
            actor, command = Actor.human(data.draw(st.sampled_from(HUMANS))), run.human_command()
        outcome = run.run(command, actor, after_s=after_s)
        if command["op"] == "invite" and not isinstance(outcome, Exception):
            run.tokens.append(outcome.answer()["token"])
    return run.log


def starting(log: list[dict[str, Any]], at: int, restored: bool) -> Callable[[], Document]:
    """How to make the document after ``at`` events: folded, or restored from its checkpoint."""
    if not restored:
        return lambda: replay(log[:at])
    dumped = json.dumps(dump_document(replay(log[:at])))
    return lambda: restore_document(json.loads(dumped))


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(markdown=documents(), data=st.data())
@pytest.mark.slow
def test_stepping_back_and_forth_gives_the_folds_states(markdown: str, data: st.DataObject) -> None:
    log = session_log(markdown, data)
    start = data.draw(st.integers(1, len(log)), label="start")
    make = starting(log, start, data.draw(st.booleans(), label="restored"))
    # The oracle: the same start folded forward, each state kept; and from the creation.
    oracle, folded = {}, make()
    oracle[start] = state(folded)
    for count, event in enumerate(log[start:], start + 1):
        folded.apply(event)
        oracle[count] = state(folded)
        assert oracle[count]["dump"] == dump_document(replay(log[:count]))
    rewind = Rewind(make())
    rewind.replay(log[start:])
    assert state(rewind.doc) == oracle[len(log)]
    for _ in range(data.draw(st.integers(1, 40), label="moves")):
        move = data.draw(st.sampled_from(["back", "ahead", "go", "read"]))
        if move == "back" and rewind.count > rewind.first:
            rewind.back()
        elif move == "ahead" and rewind.count < rewind.last:
            rewind.ahead()
        elif move == "go":
            target = data.draw(st.integers(start, len(log)))
            assert rewind.go(target)
        elif move == "read" and rewind.count < len(log):  # the log's next event, read again
            rewind.forward(log[rewind.count])
        assert state(rewind.doc) == oracle[rewind.count], (move, rewind.count)
    assert not rewind.go(start - 1)
    assert not rewind.go(len(log) + 1)


def test_a_step_back_before_the_first_record_is_refused_and_changes_nothing() -> None:
    ids = CountingIds()
    doc = replay([snapshot_event("# Plan\n\nText.\n", ids)])
    rewind = Rewind(doc)
    before = state(doc)
    with pytest.raises(CannotRewind, match="after 1 events is the earliest"):
        rewind.back()
    assert state(rewind.doc) == before
    assert not rewind.go(0)
