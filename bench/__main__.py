"""Run every benchmark: ``python -m bench``. Exits non-zero if any figure misses its target."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import bench
from bench.common import RESULTS


def main() -> int:
    names = sorted(
        m.name for m in pkgutil.iter_modules(bench.__path__) if m.name.startswith("bench_")
    )
    only = set(sys.argv[1:])
    for name in names:
        if only and name not in only and name.removeprefix("bench_") not in only:
            continue
        importlib.import_module(f"bench.{name}").main()
        print()
    failed = [name for name, ok in RESULTS if not ok]
    print(f"{len(RESULTS) - len(failed)} of {len(RESULTS)} figures within target")
    for name in failed:
        print(f"  MISSED: {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
