"""``pact-tui serve`` as a real process on a free port, driven with httpx; and the workspace
files the tests serve."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import jsonschema

from tests.web_server import read_line

REPO_ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = REPO_ROOT / "tests" / "engine" / "protocol" / "schemas"  # v0.3's, copied
SERVING = re.compile(r"^Serving .* at (http://\S+) \(PACT v0\.3: .*\); Ctrl\+C stops$")
START_TIMEOUT = 60.0  # seconds: two cores shared by the whole suite
DOC = "# Plan\n\nIntro.\n\n## Budget\n\nTotal: 1M.\n\n## Risk\n\nRisks.\n"
HUMAN = "carol"


def schema(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((SCHEMAS / f"{name}.json").read_text())
    return loaded


def valid(name: str, body: Any, *, extra: bool = False) -> None:
    """``body`` validates against v0.3's ``name`` schema; ``extra``: the fields the schema
    names do, the others (the ones clients read besides, docs/server.md) left aside."""
    shape = schema(name)
    if extra:
        body = {k: v for k, v in body.items() if k in shape["properties"]}
    jsonschema.validate(body, shape, format_checker=jsonschema.FormatChecker())


def make_workspace(path: Path, markdown: str = DOC, name: str = "plan", **options: Any) -> str:
    """A workspace file at ``path`` holding document ``name``; its id."""
    from engine.workspace import Workspace

    async def made() -> str:
        async with await Workspace.open(path, create=True, watch=False) as ws:
            info = await ws.create_document(name, markdown, human=HUMAN, **options)
            return info.id

    return asyncio.run(made())


def pact(*args: object) -> subprocess.CompletedProcess[str]:
    """``pact-tui ARGS`` as a process (another process than the server, as a user's CLI)."""
    return subprocess.run(
        [sys.executable, "-m", "pact_tui", *map(str, args)],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT,
    )


def custodian_key(workspace: Path, human: str = HUMAN) -> str:
    ran = pact("key", "create", workspace, "--human", human, "--json")
    assert ran.returncode == 0, ran.stderr
    key: str = json.loads(ran.stdout)["key"]
    return key


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    url: str
    said: list[str] = field(default_factory=list)

    def client(
        self, key: str | None = None, headers: dict[str, str] | None = None, **options: Any
    ) -> httpx.Client:
        sent = {**({"X-Api-Key": key} if key else {}), **(headers or {})}
        return httpx.Client(base_url=self.url, headers=sent, timeout=30, **options)

    def join(self, doc: str, name: str, **body: Any) -> tuple[str, dict[str, Any]]:
        """Join ``doc`` as ``name``: its key, and the answer."""
        route = "join-token" if "token" in body else "join"
        with self.client() as http:
            answer = http.post(f"/api/pact/{doc}/{route}", json={"agentName": name, **body})
        assert answer.status_code == 201, answer.text
        data: dict[str, Any] = answer.json()
        return data["apiKey"], data


def start(workspace: Path, *options: str) -> tuple[subprocess.Popen[bytes], str, bytearray]:
    argv = [sys.executable, "-m", "pact_tui", "serve", str(workspace), "--port", "0", *options]
    process = subprocess.Popen(
        argv,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        # A file, not a pipe: a pipe nobody reads would stop the server once full.
        stderr=tempfile.TemporaryFile(),  # noqa: SIM115 (the process holds it)
        start_new_session=True,  # no signal from the test's terminal reaches it
    )
    pending = bytearray()
    try:
        first = read_line(process, time.monotonic() + START_TIMEOUT, pending)
    except BaseException:
        process.kill()
        process.wait()
        raise
    matched = SERVING.match(first)
    assert matched, first
    return process, matched.group(1), pending


@contextlib.contextmanager
def pact_server(workspace: Path, *options: str, stop: int = signal.SIGTERM) -> Iterator[Served]:
    """``pact-tui serve WORKSPACE --port 0`` until its first line says where; ``stop`` at the
    end, which must stop it cleanly (status 0, its last line ``Stopped``)."""
    process, url, pending = start(workspace, *options)
    try:
        served = Served(process, url, [])
        yield served
        process.send_signal(stop)
        out, _ = process.communicate(timeout=START_TIMEOUT)
        served.said += (bytes(pending) + out).decode().splitlines()
        assert process.returncode == 0, served.said
        assert served.said[-1] == "Stopped", served.said
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def until(check: Any, what: str, timeout: float = 20.0) -> Any:
    """Poll ``check()`` until it is truthy (its value), or fail saying ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not in {timeout} s: {what}")
        time.sleep(0.05)
