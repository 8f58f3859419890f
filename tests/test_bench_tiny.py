"""Every benchmark group has tiny sizes, so that CI's smoke run (``python -m bench --tiny``)
runs each of them in seconds: a group without any would run at full size there (minutes to an
hour), or not at all."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"


def listed_groups() -> list[str]:
    """The groups ``python -m bench --list`` names."""
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--list"],
        cwd=BENCH.parent,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.split()


def tiny_sizes(source: str) -> list[int]:
    """The lines where ``source`` picks a size for the smoke run: a call of
    ``bench.common.sized`` or a test of ``bench.common.TINY``."""
    tree = ast.parse(source)
    imported = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "bench.common"
        for alias in node.names
        if alias.name in ("sized", "TINY")
    }
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and node.id in imported and isinstance(node.ctx, ast.Load)
    ]


def test_the_list_names_every_group_module() -> None:
    modules = sorted(path.stem.removeprefix("bench_") for path in BENCH.glob("bench_*.py"))
    assert listed_groups() == modules
    assert "app" in modules and "store" in modules  # the modules really were found


def test_every_listed_group_has_tiny_sizes() -> None:
    without = [
        group
        for group in listed_groups()
        if not tiny_sizes((BENCH / f"bench_{group}.py").read_text(encoding="utf-8"))
    ]
    assert without == [], f"groups with no tiny size (bench.common.sized): {without}"


def test_a_group_that_never_picks_a_tiny_size_is_found() -> None:
    without = "from bench.common import fmt\n\nROUNDS = 20\n\ndef main() -> None:\n    pass\n"
    with_sized = "from bench.common import sized\n\nROUNDS = sized(20, 2)\n"
    with_flag = "from bench.common import TINY\n\nPOINTS = (1,) if TINY else (2,)\n"
    assert tiny_sizes(without) == []
    assert tiny_sizes(with_sized) == [3]
    assert tiny_sizes(with_flag) == [3]
