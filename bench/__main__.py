"""Run every benchmark: ``python -m bench`` (or ``python -m bench app store`` for some).

Each group runs in a fresh interpreter: one group's heap, threads and warm caches must not
weigh on the next one's figures (the store's batch figure lost a quarter when it ran in the
process that had just held the app's 100,000-item workspace). Exits non-zero if any figure
misses its target.

A group is a module ``bench/bench_<name>.py`` with a ``main()``, found by its name: ``app``,
``store``, ``workspace``, ``context``, ``changes``, ``protocol``, ``queue``, ``heatmap``,
``inbox``, ``doclive``, ``doctime``, ``masterlog``, ``import`` (``ctx import --gptme`` and
following it), ``custodian`` (the audit trail, the events view, a key after a view switch
reaching the view shown), ``tap`` (one tap command's peak memory) and ``server``
(``pact-tui serve`` on loopback).

``python -m bench --tiny`` is CI's smoke run: every group runs once at its tiny sizes
(``bench.common.sized``: each figure and its anchor made as at full size, only small), so that a
group that no longer runs fails CI (exit 1). Its figures mean nothing: no target is checked, only
that every group ends. ``python -m bench --list`` prints the groups' names, one a line
(``tests/test_bench_tiny.py`` checks that each has tiny sizes).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import resource
import subprocess
import sys
import time
import traceback

import bench
from bench.common import RESULTS

MISSED_PREFIX = "  MISSED: "
TINY_FLAG = "--tiny"
LIST_FLAG = "--list"


def groups() -> list[str]:
    """Every group's module name (``bench_<name>``), sorted."""
    return sorted(
        m.name for m in pkgutil.iter_modules(bench.__path__) if m.name.startswith("bench_")
    )


def children_cpu_s() -> float:
    """CPU seconds (user and system) of the finished child processes and theirs: unlike wall
    time, what a group costs does not wait on whatever else shares the machine."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run_one(name: str) -> int:
    """Run one group in this process; print its misses in a form the parent can count."""
    try:
        importlib.import_module(f"bench.{name}").main()
    except Exception:  # a crash is no figure: not "within target" (exit 1 means missed ones)
        traceback.print_exc()
        return 2
    failed = [figure for figure, ok in RESULTS if not ok]
    print(f"{len(RESULTS) - len(failed)} of {len(RESULTS)} figures within target")
    for figure in failed:
        print(f"{MISSED_PREFIX}{figure}")
    return 1 if failed else 0


def main() -> int:
    if sys.argv[1:2] == ["--one"]:
        return run_one(sys.argv[2])
    names = groups()
    if sys.argv[1:] == [LIST_FLAG]:
        print("\n".join(name.removeprefix("bench_") for name in names))
        return 0
    tiny = TINY_FLAG in sys.argv[1:]
    only = set(sys.argv[1:]) - {TINY_FLAG}
    unknown = {n for n in only if n not in names and f"bench_{n}" not in names}
    if unknown:
        print(f"error: no benchmark group {', '.join(sorted(unknown))} (python -m bench --list)")
        return 2
    if tiny:
        print("smoke run: every group once at its tiny sizes\n")
    missed: list[str] = []
    crashed: list[str] = []
    env = {**os.environ, "BENCH_TINY": "1"} if tiny else None
    for name in names:
        if only and name not in only and name.removeprefix("bench_") not in only:
            continue
        start, cpu = time.perf_counter(), children_cpu_s()
        with subprocess.Popen(
            [sys.executable, "-m", "bench", "--one", name],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        ) as child:
            assert child.stdout is not None
            for line in child.stdout:  # shown as it comes: some groups take minutes
                print(line, end="", flush=True)
                if line.startswith(MISSED_PREFIX):
                    missed.append(line[len(MISSED_PREFIX) :].rstrip())
        if child.returncode not in (0, 1):
            crashed.append(f"{name} did not finish (exit {child.returncode})")
        took, used = time.perf_counter() - start, children_cpu_s() - cpu
        print(f"({name}: {took:.1f} s, CPU {used:.1f} s, load {os.getloadavg()[0]:.1f})\n")
    if tiny:  # a smoke run: every group ran to its end, or not
        print("every group ran" if not crashed else f"{len(crashed)} group(s) did not:")
        for group in crashed:
            print(f"{MISSED_PREFIX}{group}")
        return 1 if crashed else 0
    missed += crashed
    print("all figures within target" if not missed else f"{len(missed)} figure(s) missed:")
    for figure in missed:
        print(f"{MISSED_PREFIX}{figure}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
