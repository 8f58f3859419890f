"""One ``tap`` command's memory at 1,000 agents x 500 sections (issue 27), beside an anchor
measured in the same run (``python -m bench tap``).

The document is the heatmap's (``bench_heatmap.build``: 1,000 agents joined, 50 salience
scores each over 500 sections, checkpointed). Each command runs as its own process, as an
agent runs it, and its peak resident memory (its ``VmHWM`` as it exits) is the figure:
``tap get`` and ``tap sections`` (reads), ``tap join`` then ``tap propose`` (writes: the
first write of a quiet workspace also fires what fell due, the 1,000 agents' evictions
included, as any write would). Target ≤ 300 MB each; anchor: ``pact-tui --help``, the
interpreter with the CLI imported.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.bench_heatmap import AGENTS, PER_AGENT, SECTIONS, build
from bench.common import fmt, report_limit, sized

LIMIT_MB = 300.0
# pact-tui's main, which writes the process's peak resident memory (VmHWM, which exec resets,
# unlike ru_maxrss: a child forked from this process would report this one's) to a file as it
# exits.
CHILD = """
import atexit, sys
from pathlib import Path
report = Path(sys.argv[1])
atexit.register(
    lambda: report.write_text(Path("/proc/self/status").read_text().split("VmHWM:")[1].split()[0])
)
from pact_tui.cli import main
sys.exit(main(sys.argv[2:]))
"""


def peak_mb(arguments: list[str]) -> float:
    """The peak RSS, in MB, of ``pact-tui ARGUMENTS`` run to its end (it must succeed)."""
    with tempfile.NamedTemporaryFile(prefix="bench-tap-", suffix=".hwm") as report:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, report.name, *arguments],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
        assert done.returncode == 0, f"pact-tui {' '.join(arguments)}: {done.stderr.strip()}"
        return int(Path(report.name).read_text()) / 1024  # kB


def main() -> None:
    agents, sections = sized(AGENTS, 20), sized(SECTIONS, 10)
    print(f"one tap command's peak memory: {agents:,} agents x {sections} sections")
    with tempfile.TemporaryDirectory(prefix="bench-tap-") as folder:
        built = Path(folder) / "built.pact"
        start = time.perf_counter()
        asyncio.run(build(built, agents, sections, sized(PER_AGENT, 5)))
        print(f"  (built in {fmt(time.perf_counter() - start)})")
        anchor = peak_mb(["--help"])
        content = Path(folder) / "new.md"
        content.write_text("## Section 1\n\nNew text.\n")
        path = Path(folder) / "plan.pact"
        shutil.copy(built, path)  # each write below changes it; the reads see the built one
        commands = {
            "tap get": ["tap", "get", str(built), "plan", "--agent", "agent-0001"],
            "tap sections": ["tap", "sections", str(built), "plan", "--agent", "agent-0001"],
            "tap join": ["tap", "join", str(path), "plan", "--as", "bench"],
            "tap propose": [
                "tap", "propose", str(path), "plan", "--agent", "bench",
                "--section", "sec:section-1", "--content-file", str(content), "--summary", "bench",
            ],
        }  # fmt: skip
        for name, arguments in commands.items():
            figure = peak_mb(arguments)
            report_limit(
                f"{name} peak RSS at {agents:,} agents x {sections} sections",
                figure,
                LIMIT_MB,
                "MB",
                anchor_text=f"pact-tui --help {anchor:.1f} MB, ratio {figure / anchor:.2f}",
            )


if __name__ == "__main__":
    main()
