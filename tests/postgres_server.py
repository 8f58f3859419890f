"""A real PostgreSQL server for the tests and the benchmarks, started from the machine's binaries.

The server lives in a fresh temporary folder and listens on a unix socket only (no TCP port, so
servers of several pytest-xdist workers never collide). PostgreSQL refuses to run as root: when
this process is root, ``initdb`` and ``postgres`` run as ``nobody``, who owns the folder.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

BIN = Path(os.environ.get("PACT_PG_BIN", "/usr/lib/postgresql/15/bin"))
UNPRIVILEGED = "nobody"  # who runs the server when the tests run as root
START_GUARD_S = 60  # a failure guard: start() returns as soon as the server answers


def binaries_missing() -> str | None:
    """Why a server cannot be started here, or None."""
    for name in ("initdb", "postgres"):
        if not os.access(BIN / name, os.X_OK):
            return f"no PostgreSQL 15 at {BIN} ({name} missing): apt-get install postgresql-15"
    return None


class PostgresServer:
    """``with PostgresServer() as server:`` starts a server; ``server.url(db)`` names a database."""

    def __init__(self, *, fsync: bool = False) -> None:
        self.fsync = fsync
        self.folder = Path(tempfile.mkdtemp(prefix="pact-pg-"))
        self.data = self.folder / "data"
        self.socket_dir = self.folder  # the socket is .s.PGSQL.5432 in here
        self.port = 5432  # only names the socket file: no TCP
        self._process: subprocess.Popen[bytes] | None = None
        self._as: dict[str, Any] = {}
        if os.geteuid() == 0:
            user = pwd.getpwnam(UNPRIVILEGED)
            os.chown(self.folder, user.pw_uid, user.pw_gid)
            self._as = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}

    def url(self, database: str = "postgres") -> str:
        """A libpq URL for ``database`` on this server's socket, as the superuser ``postgres``."""
        return f"postgresql://postgres@/{database}?host={quote(str(self.socket_dir), safe='')}"

    def start(self) -> None:
        env = {"PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
        self._run(
            str(BIN / "initdb"),
            "--pgdata", str(self.data),
            "--username", "postgres",
            "--auth", "trust",
            "--encoding", "UTF8",
            "--locale", "C.UTF-8",
            "--no-sync",
            env=env,
        )  # fmt: skip
        log = (self.folder / "server.log").open("wb")
        settings = {
            "listen_addresses": "",
            "unix_socket_directories": str(self.socket_dir),
            "port": str(self.port),
            "max_connections": "200",
            "fsync": "on" if self.fsync else "off",
            "full_page_writes": "on" if self.fsync else "off",
            "synchronous_commit": "on" if self.fsync else "off",
        }
        arguments = [a for k, v in settings.items() for a in ("-c", f"{k}={v}")]
        self._process = subprocess.Popen(
            [str(BIN / "postgres"), "-D", str(self.data), *arguments],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # a ^C to the tests reaches us, not the server first
            **self._as,
        )
        log.close()
        self._wait_until_ready()

    def _run(self, *command: str, env: dict[str, str]) -> None:
        done = subprocess.run(command, capture_output=True, env=env, check=False, **self._as)
        if done.returncode != 0:
            raise RuntimeError(f"{command[0]} failed: {done.stderr.decode(errors='replace')}")

    def _wait_until_ready(self) -> None:
        socket = self.socket_dir / f".s.PGSQL.{self.port}"
        pid_file = self.data / "postmaster.pid"
        deadline = time.monotonic() + START_GUARD_S
        assert self._process is not None
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"postgres exited at start: {self.log()}")
            # postmaster.pid's 8th line is "ready" once the server accepts connections.
            with contextlib.suppress(OSError, IndexError):
                if socket.exists() and pid_file.read_text().splitlines()[7].strip() == "ready":
                    return
            time.sleep(0.02)  # polling with a deadline: the server writes no other signal
        raise RuntimeError(f"postgres did not start in {START_GUARD_S} s: {self.log()}")

    def log(self) -> str:
        with contextlib.suppress(OSError):
            return (self.folder / "server.log").read_text(errors="replace")[-2000:]
        return ""

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.send_signal(signal.SIGINT)  # "fast" shutdown
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def running_server(*, fsync: bool = False) -> Iterator[PostgresServer]:
    with PostgresServer(fsync=fsync) as server:
        yield server
