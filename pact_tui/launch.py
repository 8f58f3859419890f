"""The ``pact-tui`` command's entry point: the collector paused before anything is imported.

Opening the app imports a thousand modules and builds its first screen, making almost no
garbage; the cyclic collector, left on, walked that growing heap again and again (about
40 ms of the cold start at 100,000 items). So the collector is paused first, and the command
ends the pause (``engine.heap.end_start``): a command as soon as its arguments are read, the
app once its first frame is drawn."""

from __future__ import annotations

from engine.heap import pause_start


def main() -> int:
    pause_start()
    from pact_tui.cli import main as run

    return run()
