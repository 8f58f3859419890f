"""Random context operations for property tests (hypothesis): ``OPS`` draws sequences of
messages, inserts with and without ttl and cadence, updates, deletes, advances, seals and
rebuilds from a dump; ``apply_op`` runs one on a context as an agent's command would."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st

from engine.context import Context, ContextError, SequentialIds, SteppingClock, TextContent

CONTEXT_OPS = (
    st.tuples(st.just("user"), st.text("ab", max_size=2)),
    st.tuples(st.just("assistant"), st.text("ab", max_size=2)),
    st.tuples(
        st.just("insert"),
        st.integers(0, 3),
        st.integers(-2, 2),
        st.integers(-1, 1),
        st.sampled_from([None, 1, 2]),
        st.sampled_from([None, 1, 3]),
    ),
    st.tuples(st.just("delete"), st.integers(0, 3), st.integers(-2, 2)),
    st.tuples(
        st.just("update"),
        st.integers(0, 3),
        st.integers(-2, 2),
        st.integers(0, 1),
        st.sampled_from(["replace", "append"]),
        st.sampled_from([None, 1, 2]),
    ),
    st.tuples(st.just("advance")),
    st.tuples(st.just("seal")),
)
"""The operations on a context alone, each as ``apply_op`` reads it (other drivers add their
own: the tree layout's tests fold and sync)."""

OPS = st.lists(st.one_of(*CONTEXT_OPS, st.tuples(st.just("rebuild"))), max_size=40)


def apply_op(
    context: Context,
    op: tuple,  # type: ignore[type-arg]
    *,
    updated: str = "y",
    rebuilt_ids: Callable[[], SequentialIds] = SequentialIds,
) -> Context | None:
    """Run ``op`` on ``context``; a refused one changes nothing. ``rebuild`` changes nothing
    either: it returns a copy of the context restored from its dump (with ids from
    ``rebuilt_ids``), sharing nothing with it; every other op returns None. ``updated`` is the
    text an update writes."""
    try:
        if op[0] in ("user", "assistant"):
            context.add_message(op[0], op[1] or "m")
        elif op[0] == "insert":
            _, depth, position, offset, ttl, cad = op
            content = TextContent("x", ttl=ttl, cadence=cad)
            context.pact_insert(f"d{depth}, {position}, {offset}", content)
        elif op[0] == "update":
            _, depth, position, offset, mode, ttl = op
            selector = f"d{depth}, {position}" + (f", {offset}" if mode == "replace" else "")
            context.pact_update(selector, TextContent(updated, ttl=ttl), mode=mode)
        elif op[0] == "delete":
            context.pact_delete(f"d{op[1]}, {op[2]}, *")
        elif op[0] == "advance":
            context.advance()
        elif op[0] == "seal":
            context.seal()
        elif op[0] == "rebuild":
            return Context.load(context.model_dump(), ids=rebuilt_ids(), clock=SteppingClock())
    except ContextError:
        pass  # refused: nothing changed
    return None
