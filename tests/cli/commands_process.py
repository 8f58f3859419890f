"""A separate process that runs ``pact-tui`` commands one after another, each as ``main(argv)``
in this process, for the tests that need the commands run by a process of another user (file
permissions apply to it) but not a new process for each command.

    python commands_process.py

Reads one command a line on stdin (its arguments, a JSON list), runs it with its stdout and
stderr captured, and prints one JSON line ``{"code", "out", "err"}``; ends at the end of stdin.
"""

from __future__ import annotations

import io
import json
import sys
from contextlib import redirect_stderr, redirect_stdout
from typing import Any

from pact_tui.cli import main


def run(argv: list[str]) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit:  # argparse: usage errors
            code = exit.code if isinstance(exit.code, int) else 1
    return {"code": code, "out": out.getvalue(), "err": err.getvalue()}


if __name__ == "__main__":
    answers = sys.stdout
    for line in sys.stdin:
        print(json.dumps(run(json.loads(line))), file=answers, flush=True)
