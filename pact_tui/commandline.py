"""What every command-line module shares (``cli``, ``tap``, ``logcli``, ``importcli``, the
server's ``serve`` and ``key``): the one way out, a failure's line, an argument's whole number,
the workspace opened for a ``ctx`` command, and a handler's type.

They live here, below every command-line module, so that ``cli`` can register the others'
commands without either importing the other (import-linter: no cycles between the app's
modules). Every line goes out through :func:`echo`, which makes control characters
visible (``engine.visible``): nothing from a workspace or the command line acts on the
operator's terminal.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TextIO

from engine.canonical import whole_number
from engine.context import ContextError
from engine.visible import visible

Handler = Callable[[argparse.Namespace], Awaitable[int | None]]  # an exit status, None for 0


class UsageError(ContextError):
    code = "USAGE"


def echo(text: str, *, file: TextIO | None = None) -> None:
    """The one way out: lines keep their line breaks, nothing else reaches the terminal raw."""
    print(visible(text, multiline=True), file=file or sys.stdout)


def emit(args: argparse.Namespace, data: Any, text: str) -> None:
    """A command's result: ``data`` as one JSON document with ``--json``, else ``text``."""
    if getattr(args, "json", False):
        echo(json.dumps(data, ensure_ascii=False, sort_keys=True))
    elif text:
        echo(text)


def fail(args: argparse.Namespace, message: str, payload: dict[str, Any]) -> None:
    """A failure: the error object with ``--json``, else one line, on stderr."""
    if getattr(args, "json", False):
        error = json.dumps({"error": payload}, ensure_ascii=False, default=str)
        echo(error, file=sys.stderr)
    else:
        echo(f"pact-tui: {visible(' '.join(message.split()))}", file=sys.stderr)


def whole_int(text: str) -> int:
    """An argument's whole number (argparse's ``type``)."""
    try:
        return whole_number(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


async def open_workspace(
    args: argparse.Namespace, *, create: bool = False, read_only: bool = False
) -> Any:
    """The workspace, opened lazily with only the context the command names loaded; a query
    opens it ``read_only``: looking writes nothing, and works where writing cannot."""
    from engine.workspace import Workspace

    ws = await Workspace.open(
        args.workspace, create=create, watch=False, lazy=True, read_only=read_only
    )
    args.opened = ws  # for the note on a checkpoint it could not use (see cli._main)
    name = getattr(args, "name", None)
    if name is not None and not create:
        try:
            await ws.load(name)
        except BaseException:
            await ws.close()
            raise
    return ws
