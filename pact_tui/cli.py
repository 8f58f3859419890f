"""The ``pact-tui`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from engine.context import ContextError


def _demo(args: argparse.Namespace) -> int:
    from engine.context import Context, ContextExplorer, SequentialIds, SteppingClock
    from engine.context.scenario import demo_steps

    context = Context(ids=SequentialIds(), clock=SteppingClock())
    explorer = ContextExplorer(context)
    for number, (description, action) in enumerate(demo_steps(), start=1):
        action(context)
        if args.verbose:
            print(f"\n── step {number}: {description}  (episode {context.current_episode})")
            explorer.print("tree")
    print(f"\n── the context after the demo (episode {context.current_episode})")
    explorer.print("tree")
    print("\n── what the model would be sent")
    explorer.print("provider")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pact-tui",
        description="Inspect live agent context trees and multi-agent documents.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="walk a scripted agent conversation")
    demo.add_argument(
        "--verbose", "-v", action="store_true", help="print the tree after every step"
    )
    demo.set_defaults(run=_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except ContextError as error:
        print(f"pact-tui: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
