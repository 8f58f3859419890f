"""Opens the app on the workspace named on the command line, as the user running it, and
prints its exit status and what it said on stderr, as JSON (test_read_only.py runs it as a user
who may not read the file: tests.processes.as_ordinary_user)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import sys
from pathlib import Path

from tests.tui.inspector import SIZE, inspector


async def main(path: Path) -> None:
    app = inspector(path)
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
    print(json.dumps({"return_code": app.return_code, "stderr": said.getvalue()}))


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
