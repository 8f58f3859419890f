"""A known bug, kept as a failing example: a context loaded midway and driven on with the same
operations ends with a cyclic template pointing at a different live instance (an id one
behind) than the context that never stopped. Hypothesis found it in the property test's
load-midway check (test_properties.py); it predates this session's changes."""

from __future__ import annotations

import pytest

from .test_properties import ContextMachine


@pytest.mark.xfail(
    strict=True, reason="known bug: a template's live_id after load midway differs (issue 2)"
)
def test_a_context_loaded_midway_continues_exactly_like_the_original() -> None:
    state = ContextMachine()
    state.add_message(assistant=False)
    state.add_message(assistant=False)
    state.replace(drawn=(None, (), (2, 4, None)), pick=159)
    state.advance()
    state.advance()
    state.advance()
    state.add_message(assistant=False)
    state.add_message(assistant=False)
    state.add_message(assistant=False)
    state.advance()
    state.advance()
    state.replace(drawn=(None, (), (None, None, None)), pick=0)
    state.replace(drawn=(None, (), (1, 1, None)), pick=108)
    state.advance()
    state.advance()
    state.add_message(assistant=True)
    state.replace(drawn=(None, (), (1, 1, None)), pick=1)
    state.advance()
    state.replace(drawn=(None, (), (None, None, None)), pick=1)
    state.advance()
    state.advance()
    state.advance()
    state.advance()
    state.advance()
    state.advance()
    state.advance()
    state.teardown()
