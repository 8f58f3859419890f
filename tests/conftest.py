"""What every test shares: a real PostgreSQL server (one database per test), and the order the
suite runs in (see tests/README.md).

The slow tests (``@pytest.mark.slow``) run first. On two pytest-xdist workers a minute-long
test started last is a minute with one core idle; started first, the quick tests fill in
around it. Groups (``@pytest.mark.xdist_group``) are scheduled before both, largest first, by
``--dist loadgroup`` itself, except those in ``STARTED_FIRST``, which go before them."""

from __future__ import annotations

import compileall
import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from tests.postgres_server import PostgresServer, binaries_missing

_databases = itertools.count()


# Groups that mostly wait (pip on the network) start before every other unit of work, each
# on its own worker, so that the wait overlaps the other tests instead of following a group.
STARTED_FIRST = ("pip",)


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # once, in the process that starts the workers
        compile_the_project()


def compile_the_project() -> None:
    """The project's bytecode written once before the tests start, as installing it would.
    Hundreds of tests start ``python -m pact_tui`` (a command, the app in a terminal, a
    server): where nothing writes bytecode (a fresh checkout, with ``PYTHONDONTWRITEBYTECODE``
    set, as on this machine) each of them compiled every module it imported again, 0.14-0.17 s
    of a 0.24 s ``doc log`` on the demo. ``py_compile`` writes it whatever that says."""
    root = Path(__file__).resolve().parent.parent
    for package in ("engine", "pact_tui", "bench"):
        compileall.compile_dir(root / package, quiet=1)


WORKERS_PER_CORE = 2


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two workers per core. A fifth of the suite's time is a test waiting (a
    terminal, a child process, a server, the app's timers: 151 s of 672 s measured per test
    on two workers), and a second worker on the core runs meanwhile: on this 2-core machine
    two workers took 5 min 51 s, three 5 min 27 s, four 5 min 15 s."""
    return len(os.sched_getaffinity(0)) * WORKERS_PER_CORE


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup``, with the groups in ``STARTED_FIRST`` handed out first."""
    if config.getvalue("dist") != "loadgroup":
        return None  # pytest-xdist's own choice
    from xdist.scheduler import LoadGroupScheduling

    class StartedFirst(LoadGroupScheduling):  # type: ignore[misc]
        def _assign_work_unit(self, node: Any) -> None:
            for group in reversed(STARTED_FIRST):
                if group in self.workqueue:
                    self.workqueue.move_to_end(group, last=False)
            super()._assign_work_unit(node)

    return StartedFirst(config, log)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # A stable sort: the slow ones keep their order among themselves, and so do the others
    # (every worker collects the same order, as pytest-xdist requires).
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One server per test process (each xdist worker starts its own, in its own folder)."""
    missing = binaries_missing()
    if missing is not None:
        pytest.skip(missing)
    with PostgresServer() as server:
        yield server


@pytest.fixture
async def postgres_url(postgres_server: PostgresServer) -> str:
    """The URL of a new, empty database of its own (dropped with the server)."""
    name = f"test_{os.getpid()}_{next(_databases)}"
    connection = await asyncpg.connect(postgres_server.url())
    try:
        await connection.execute(f"CREATE DATABASE {name} TEMPLATE template0")
    finally:
        await connection.close()
    return postgres_server.url(name)
