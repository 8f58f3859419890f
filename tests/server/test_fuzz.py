"""schemathesis against the server's own OpenAPI: no 500, no answer outside its schema."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.server.served import REPO_ROOT, custodian_key, make_workspace, pact_server

ST = shutil.which("st", path=str(Path(sys.executable).parent))


@pytest.mark.skipif(ST is None, reason="schemathesis is not installed")
def test_schemathesis_finds_no_server_error(tmp_path: Path) -> None:
    ws = tmp_path / "ws.pact"
    make_workspace(ws)
    human = custodian_key(ws)
    config = tmp_path / "schemathesis.toml"
    # The document served; and no long poll (it waits, as it should, up to a minute).
    config.write_text('[parameters]\n"path.documentId" = "plan"\n"query.wait" = 0\n')
    assert ST is not None
    with pact_server(ws, "--rate", "100000") as served:
        agent, _ = served.join("plan", "fuzzer")
        for key in (agent, human):
            ran = subprocess.run(
                [
                    ST, "--config-file", str(config), "run", f"{served.url}/openapi.json",
                    "--checks", "not_a_server_error,response_schema_conformance",
                    "--max-examples", "10", "--header", f"X-Api-Key: {key}",
                    "--exclude-path-regex", "(leave|stream|remove)",
                    "--generation-deterministic", "--workers", "1",
                ],
                cwd=REPO_ROOT, capture_output=True, text=True, timeout=600,
            )  # fmt: skip
            assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr[-2000:]
            assert "passed" in ran.stdout
