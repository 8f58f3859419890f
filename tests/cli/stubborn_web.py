"""``python stubborn_web.py PIDFILE``: pact-tui's web server (``WebServer``, half a second to
wait at each step of its stop) serving an app that ignores both ``quit`` and SIGTERM, and
writes its process id to PIDFILE once started: what the server's stop must still end."""

from __future__ import annotations

import asyncio
import shlex
import sys

from pact_tui.web import WebServer

APP = """
import os, signal, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
with open(sys.argv[1], "w") as pidfile:
    pidfile.write(str(os.getpid()))
sys.stdout.write("__GANGLION__\\n")
sys.stdout.flush()
while True:
    signal.pause()
"""


def say(line: str) -> None:
    print(line, flush=True)


def main() -> None:
    command = f"exec {shlex.join([sys.executable, '-c', APP, sys.argv[1]])}"
    server = WebServer(command, host="127.0.0.1", port=0, title="stub", say=say, stop_wait=0.5)
    asyncio.run(server.run(lambda url: say(f"Serving stub at {url} as nobody; Ctrl+C stops")))
    say("Stopped: every app it started has quit")


if __name__ == "__main__":
    main()
