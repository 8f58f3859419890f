"""Reading a child process's output as it comes, with a bound on each wait."""

from __future__ import annotations

import queue
import subprocess
import threading
from collections.abc import Iterator


def lines_of(process: subprocess.Popen[str], who: str, timeout: float = 30.0) -> Iterator[str]:
    """The lines of ``process``'s stdout as they come, ``timeout`` seconds at most for each.

    Read by a thread: waiting on the pipe with ``select`` and then ``readline`` misses lines
    the file object has already buffered (two lines written together), and then waits for
    one that never comes.
    """
    assert process.stdout is not None
    stdout = process.stdout
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in stdout:
            lines.put(line)
        lines.put("")  # the end of the output

    threading.Thread(target=read, daemon=True).start()
    while True:
        try:
            line = lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"{who} printed nothing for {timeout:g} s") from None
        if not line:
            return
        yield line
