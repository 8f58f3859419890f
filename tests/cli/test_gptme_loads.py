"""gptme 0.35.1 itself opens what ``ctx export --gptme`` writes: gptme is installed with pip
into a virtualenv in a temporary folder (it is no dependency of this project), loads the
exported folder with its own ``LogManager.load`` and writes it again byte for byte. Skipped,
saying why, only when gptme cannot be installed here (no network, no index)."""

from __future__ import annotations

import json
import os
import subprocess
import venv
from pathlib import Path

import pytest

from .conftest import ok
from .test_ctx_export import FIXTURES, make_context

GPTME = "gptme==0.35.1"
LOADER = Path(__file__).with_name("gptme_load.py")
INSTALL_SECONDS = 900  # about 2 minutes on the shared machine (load 13); pip's own timeouts


@pytest.fixture(scope="session")
def gptme_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python of a virtualenv holding gptme 0.35.1, made once per test process."""
    folder = tmp_path_factory.mktemp("gptme-venv")
    venv.create(folder, with_pip=True)
    python = folder / "bin" / "python"
    try:
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", GPTME],
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
    return python


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
