"""``pact-tui web`` as a real process: started on a free port, its address read from the line
it prints when it listens, stopped with SIGTERM as a service manager would."""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SERVING = re.compile(r"^Serving .* at (http://\S+) as .*; Ctrl\+C stops$")
START_TIMEOUT = 60.0  # seconds: two cores shared by the whole suite


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    url: str
    said: list[str] = field(default_factory=list)
    """What the server printed so far, line by line (its stdout)."""


def read_line(process: subprocess.Popen[bytes], deadline: float, pending: bytearray) -> str:
    """The next line ``process`` prints on stdout, waiting until ``deadline`` (monotonic) at
    most; ``pending`` holds what was read past the last line."""
    assert process.stdout is not None
    descriptor = process.stdout.fileno()
    while b"\n" not in pending:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"no line from the server in time (so far: {bytes(pending)!r})")
        readable, _, _ = select.select([descriptor], [], [], left)
        if readable:
            chunk = os.read(descriptor, 4096)
            if not chunk:
                stderr = process.stderr.read() if process.stderr else b""
                raise AssertionError(f"the server ended: {bytes(pending)!r} {stderr!r}")
            pending += chunk
    line, _, rest = bytes(pending).partition(b"\n")
    pending[:] = rest
    return line.decode()


@contextlib.contextmanager
def web_server(workspace: Path, *options: str) -> Iterator[Served]:
    """``pact-tui web WORKSPACE --port 0 OPTIONS…`` (see :func:`serving`)."""
    argv = [sys.executable, "-m", "pact_tui", "web", str(workspace), "--port", "0", *options]
    with serving(argv) as served:
        yield served


@contextlib.contextmanager
def serving(argv: list[str]) -> Iterator[Served]:
    """``argv`` until its first line says where it serves; SIGTERM at the end, which must stop
    it cleanly (exit status 0, its last line saying every app quit)."""
    process = subprocess.Popen(
        argv,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # no signal from the test's terminal reaches it
    )
    try:
        pending = bytearray()
        first = read_line(process, time.monotonic() + START_TIMEOUT, pending)
        matched = SERVING.match(first)
        assert matched, first
        served = Served(process, matched.group(1), [first])
        yield served
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=START_TIMEOUT)
        served.said += (bytes(pending) + out).decode().splitlines()
        assert process.returncode == 0, (served.said, err.decode())
        assert served.said[-1] == "Stopped: every app it started has quit", served.said
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
