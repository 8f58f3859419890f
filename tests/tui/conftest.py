"""Fixtures of the app tests: the demo workspace (built once with a fixed clock, copied per
test), a clean configuration folder, and SVG baselines kept in the top-level ``snapshots/``."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import pytest_textual_snapshot
import textual._wait as textual_wait  # textual is pinned (pyproject.toml): its idle check
from syrupy.location import PyTestLocation

from pact_tui.demo import create_demo
from pact_tui.screenshot import fixed_clock

REPO = Path(__file__).resolve().parents[2]
SNAPSHOTS = REPO / "snapshots"
IDLE_STEP = 1 / 250  # seconds; Textual's own is 1 / 50


@pytest.fixture(scope="session", autouse=True)
def _quick_idle_checks() -> Iterator[None]:
    """Textual's pilot waits after every key (twice) and every ``pause()`` until the process
    looks idle: CPU time under 1 ms across a 20 ms sleep, so at least 40 ms a key, whatever the
    app does (a path typed into a prompt: several seconds). The same test at a 4 ms step (0.2 ms
    of CPU: the same share) waits while the app works as before, and not 20 ms longer. Tests
    never rely on these waits: they wait for what they check (``inspector.wait_until``,
    ``settle``)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(textual_wait, "SLEEP_GRANULARITY", IDLE_STEP)
        patch.setattr(textual_wait, "SLEEP_IDLE", IDLE_STEP / 20)
        yield


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("demo-template")
    asyncio.run(create_demo(folder / "demo.pact", clock=fixed_clock()))
    return folder


@pytest.fixture
def demo(demo_template: Path, tmp_path: Path) -> Path:
    """A fresh copy of the demo workspace (two contexts, researcher and writer), every byte the
    same in every run."""
    for part in demo_template.iterdir():  # the file, and its -wal/-shm if SQLite left any
        shutil.copy(part, tmp_path / part.name)
    return tmp_path / "demo.pact"


@pytest.fixture(autouse=True)
def _in_the_tests_own_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The app runs in the test's folder, as it would in the user's: what it writes there (an
    export, a screenshot) stays out of the checkout, and the status line names the workspace
    by its place there (``demo.pact``), the same in every run."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture(autouse=True)
def _no_user_configuration(tmp_path_factory: pytest.TempPathFactory, monkeypatch) -> None:
    """The user's own theme folder and config file never leak into a test."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))


# -- snapshot baselines in snapshots/ ---------------------------------------------------------
class TopLevelSVGExtension(pytest_textual_snapshot.SVGImageExtension):
    """Baselines under ``snapshots/<test folder>/<test module>/``, not next to the tests."""

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        test_file = Path(test_location.filepath).resolve()
        where = test_file.parent.relative_to(REPO / "tests")
        return str(SNAPSHOTS / where / test_location.basename)


@pytest.fixture
def _baselines_in_snapshots_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    # The plugin's snap_compare calls snapshot.use_extension(SVGImageExtension), looking the
    # class up in its module when the fixture runs, and syrupy 4.8 has no option for the folder.
    monkeypatch.setattr(pytest_textual_snapshot, "SVGImageExtension", TopLevelSVGExtension)


@pytest.fixture
def snap_compare(_baselines_in_snapshots_folder: None, snap_compare):  # type: ignore[no-untyped-def]
    """The plugin's fixture, built after the extension is swapped (arguments in order)."""
    return snap_compare
