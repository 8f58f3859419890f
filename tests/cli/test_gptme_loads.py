"""gptme 0.35.1 itself opens what ``ctx export --gptme`` writes: gptme is installed with pip
into a virtualenv (it is no dependency of this project), loads the exported folder with its own
``LogManager.load`` and writes it again byte for byte. Skipped, saying why, only when gptme
cannot be installed here (no network, no index).

The virtualenv holds gptme and the packages its loader imports (``LOADER_NEEDS``, each at the
version a full ``pip install gptme==0.35.1`` resolves to, within gptme's own ranges), installed
with ``--no-deps``: gptme's own code reads the folder, without its LLM clients, MCP and
IPython. It is built once into the user's cache folder, keyed by what goes into it, and reused
by every later run (``tests/README.md``)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from .conftest import ok
from .test_ctx_export import FIXTURES, make_context

GPTME = "gptme==0.35.1"
# What ``from gptme.logmanager import LogManager`` imports, pinned as pip resolves gptme 0.35.1.
LOADER_NEEDS = (
    GPTME,
    "httpx==0.28.1",
    "idna==3.20",
    "json_repair==0.61.7",
    "platformdirs==4.14.8",
    "Pygments==2.21.0",
    "python-dateutil==2.9.0.post0",
    "rich==15.0.0",
    "six==1.17.0",
    "tomlkit==0.15.2",
    "typing_extensions==4.16.0",
)
LOADER = Path(__file__).with_name("gptme_load.py")
INSTALL_SECONDS = 900  # pip's own timeouts on a loaded machine


def venv_cache() -> Path:
    """Where the virtualenv is kept between runs: ``$XDG_CACHE_HOME/pact-tui-tests``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "pact-tui-tests"


def venv_key() -> str:
    """Names the virtualenv by the Python it runs on and every pinned requirement."""
    python = f"{sys.implementation.cache_tag}:{os.path.realpath(sys.base_prefix)}"
    digest = hashlib.sha256("\n".join([python, *LOADER_NEEDS]).encode()).hexdigest()[:12]
    return f"gptme-0.35.1-{sys.implementation.cache_tag}-{digest}"


def build_venv(folder: Path) -> None:
    """A virtualenv in ``folder`` with ``LOADER_NEEDS``; skips the test if pip cannot."""
    venv.create(folder, with_pip=False)  # this process's pip installs into it (--python)
    pip = [sys.executable, "-m", "pip", "--python", str(folder / "bin" / "python")]
    try:
        done = subprocess.run(
            [*pip, "install", "--quiet", "--no-deps", "--no-compile", *LOADER_NEEDS],
            capture_output=True,
            text=True,
            timeout=INSTALL_SECONDS,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        pytest.skip(f"pip install {GPTME} took more than {INSTALL_SECONDS} s: cannot test here")
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR")]
        why = errors[-1] if errors else done.stderr.strip().splitlines()[-1:]
        pytest.skip(f"pip could not install {GPTME} here, so gptme cannot load the export: {why}")


@pytest.fixture(scope="session")
def gptme_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python of a virtualenv holding gptme 0.35.1: the cached one, built on first use.

    Built in a folder of its own and renamed into place when whole, under a lock, so a run
    that stops half way or runs beside another never leaves or uses half a virtualenv. Where
    the cache cannot be written, built for this run alone."""
    try:
        cache = venv_cache()
        cache.mkdir(parents=True, exist_ok=True)
        lock = (cache / ".lock").open("w")
    except OSError:
        folder = tmp_path_factory.mktemp("gptme-venv")
        build_venv(folder)
        return folder / "bin" / "python"
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another run building the same one: wait for it
        folder = cache / venv_key()
        if not folder.is_dir():
            building = cache / f"{venv_key()}.building"
            shutil.rmtree(building, ignore_errors=True)  # left by a run that stopped
            build_venv(building)
            building.rename(folder)
    return folder / "bin" / "python"


def gptme_reads(python: Path, folder: Path, home: Path) -> dict[str, object]:
    """What gptme's LogManager read from ``folder``, its config and data kept in ``home``."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GPTME_")}
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[name] = str(home / name.lower())
    env["HOME"] = str(home)
    done = subprocess.run(
        [str(python), str(LOADER), str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=home,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert "Skipping" not in done.stderr, done.stderr  # gptme skips a line it cannot read
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.mark.slow
@pytest.mark.xdist_group("pip")
def test_gptme_opens_an_exported_context(gptme_python: Path, tmp_path: Path) -> None:
    ws, out, home = tmp_path / "ws.db", tmp_path / "conv", tmp_path / "home"
    home.mkdir()
    provider = make_context(ws)
    component = {
        "content": "gptme's own prompt",
        "source": {
            "from": "gptme",
            "message": {"timestamp": "2026-03-14T09:12:05.123456", "pinned": True, "hide": True},
        },
    }
    ok("ctx", "insert", ws, "agent", "d-1, 0, 0", "--component", json.dumps(component))
    provider = ok("ctx", "print", ws, "agent", "--mode", "provider", "--json").data
    ok("ctx", "export", ws, "agent", "--gptme", out)
    read = gptme_reads(gptme_python, out, home)
    assert read["gptme"] == "0.35.1"
    messages = read["messages"]
    assert isinstance(messages, list)
    assert [(m["role"], m["content"]) for m in messages] == [
        (entry["role"], entry["content"]) for entry in provider
    ]
    assert messages[0] == {
        "role": "system",
        "content": "gptme's own prompt",
        "timestamp": "2026-03-14T09:12:05.123456",
        "pinned": True,
        "hide": True,
    }
    assert read["written_again_the_same"] is True  # byte for byte as gptme writes its log


@pytest.mark.slow
@pytest.mark.xdist_group("pip")
def test_gptme_opens_an_imported_conversation_exported(gptme_python: Path, tmp_path: Path) -> None:
    ws, out, home = tmp_path / "ws.db", tmp_path / "conv", tmp_path / "home"
    home.mkdir()
    ok("ctx", "import", ws, "basic", "--gptme", FIXTURES / "conv-basic")
    ok("ctx", "export", ws, "basic", "--gptme", out)
    read = gptme_reads(gptme_python, out, home)
    view = FIXTURES / "conv-basic" / "views" / "compacted-001.jsonl"
    sent = [json.loads(line) for line in view.read_text().splitlines()]
    assert read["messages"] == sent  # every field as gptme reads its own view
    assert read["written_again_the_same"] is True
