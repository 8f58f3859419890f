"""A scripted agent conversation that exercises every lifecycle type, keys and tags.

Used by ``pact-tui demo`` (and later by the app's demo workspace): a newcomer sees permanent,
temporary, sticky and cyclic items and a render lifecycle working, one step at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from .components import Pos, TextContent
from .context import Context

Step = tuple[str, Callable[[Context], object]]


def demo_steps() -> Iterator[Step]:
    """``(description, action)`` pairs; apply them in order to a fresh ``Context``."""
    yield (
        "system instructions at d-1,0,0",
        lambda c: c.pact_insert(
            "d-1, 0, 0", TextContent("You are a careful research assistant.", key="system_prompt")
        ),
    )
    yield (
        "a system component at d-1,1,0",
        lambda c: c.pact_insert(
            "d-1, 1, 0", TextContent("Always be concise", key="concise_instruction", tags=["style"])
        ),
    )
    yield (
        "user: Find papers on context compaction",
        lambda c: c.add_user("Find me recent papers on context compaction for LLM agents."),
    )
    yield (
        "permanent preference at d0,1,0 (follows its message)",
        lambda c: c.pact_insert(
            "d0, 1, 0",
            TextContent("User prefers formal tone", key="user_prefs", tags=["user", "preferences"]),
        ),
    )
    yield (
        "temporary reminder at d0,2,0 (ttl=3)",
        lambda c: c.pact_insert(
            "d0, 2, 0", TextContent("Ask about the time range in 3 turns", key="reminder", ttl=3)
        ),
    )
    yield (
        "sticky status at d0,3,0 (ttl=1, cadence=1)",
        lambda c: c.pact_insert(
            "d0, 3, 0",
            TextContent("Current mode: research", key="current_mode", ttl=1, cadence=1),
        ),
    )
    yield (
        "cyclic check-in at d0,-1,0 (ttl=2, cadence=5)",
        lambda c: c.pact_insert(
            "d0, -1, 0",
            TextContent("Check if the user needs help", key="checkin", ttl=2, cadence=5),
        ),
    )
    yield (
        "assistant answers",
        lambda c: c.add_assistant("Here are three surveys on context compaction, with summaries."),
    )
    yield "advance (episode 1)", lambda c: c.advance()
    yield (
        "render-lifecycle alert at d0,0,1 (+1 for 2, -1 for 3, then -2)",
        lambda c: c.pact_insert(
            "d0, 0, 1",
            TextContent(
                "Important: sources older than 2023 may be outdated", key="alert"
            ).render_lifecycle([Pos("d0, 0, 1", ttl=2), Pos("d0, 0, -1", ttl=3), Pos("d0, 0, -2")]),
        ),
    )
    yield "user: Summarise the second one", lambda c: c.add_user("Summarise the second one.")
    yield "advance (episode 2)", lambda c: c.advance()
    yield (
        "assistant summarises",
        lambda c: c.add_assistant(
            "The second survey compares summarisation and retrieval-based compaction."
        ),
    )
    yield "seal 'after-summary'", lambda c: c.seal("after-summary")
    yield "advance (episode 3)", lambda c: c.advance()
    yield "advance (episode 4)", lambda c: c.advance()
    yield "advance (episode 5)", lambda c: c.advance()
    yield "update the sticky status where ODI has taken it", _update_status
    yield "advance (episode 6)", lambda c: c.advance()


def _update_status(context: Context) -> object:
    status = context.get_by_key("current_mode")
    assert status is not None
    depth, position, offset = status.coordinates
    return context.pact_update(
        f"d{depth}, {position}, {offset}",
        TextContent("Current mode: writing", key="current_mode", ttl=1, cadence=1),
        mode="replace",
    )


def build_demo(context: Context | None = None) -> Context:
    context = context or Context()
    for _description, action in demo_steps():
        action(context)
    return context
