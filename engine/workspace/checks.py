"""What the workspace checks in what it is given before anything else happens: names, actors,
text."""

from __future__ import annotations

import re

from engine.canonical import text_problem
from engine.workspace.errors import InvalidActor, InvalidName

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def check_text(what: str, text: str) -> None:
    problem = text_problem(text)
    if problem is not None:
        from engine.protocol.errors import InvalidRequest

        raise InvalidRequest(f"{what}: {problem}")


def check_context_name(name: object) -> None:
    """Raise ``InvalidName`` unless ``name`` can name a context."""
    if not isinstance(name, str) or not NAME.fullmatch(name):  # fullmatch: no trailing newline
        raise InvalidName(
            f"context name {name!r}: use 1-64 letters, digits, '_', '.', '-', "
            "starting with a letter or digit",
            name=name,
        )


def check_actor(actor: object) -> None:
    """Raise ``InvalidActor`` unless ``actor`` can be recorded as who acted: text."""
    if not isinstance(actor, str):
        raise InvalidActor(f"an actor is a string, not {type(actor).__name__}")
    problem = text_problem(actor)
    if problem is not None:
        raise InvalidActor(f"actor {actor!a}: {problem}")
