"""Sequences the property test (test_properties.py) once failed on, replayed step by step so
they keep being checked whatever hypothesis happens to draw.

- Load midway: a context exported and loaded partway and driven on with the same operations
  rehydrated two schedules due in the same episode in a different order from the context that
  never stopped, so their fresh instances swapped ids. A replace had left a stale heap entry
  in the original that still counted (the rehydration now counts only the entry the template's
  state gives; see also test_export.py).
"""

from __future__ import annotations

from .test_properties import ContextMachine


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
