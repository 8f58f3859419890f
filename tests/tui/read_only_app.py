"""Opens the app on the workspace named on the command line, as the user running it, and
prints what a person would see, as JSON: run by test_read_only.py as a user who may not write
there (root runs without its permission bypass: tests.processes.as_ordinary_user)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from tests.tui.inspector import inspector, notifications, settle, status_text


async def main(path: Path) -> None:
    app = inspector(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.workspace is not None
        head = app.workspace.head
        await pilot.press("full_stop")  # advance: a command
        await settle(pilot)
        print(
            json.dumps(
                {
                    "read_only": app.workspace.read_only,
                    "notifications": notifications(app),
                    "status": status_text(app),
                    "head_before": head,
                    "head_after": app.workspace.head,
                }
            )
        )


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
