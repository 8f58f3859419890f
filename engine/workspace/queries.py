"""Reading contexts: views, selections, renderings and diffs; verifying the log."""

from __future__ import annotations

import dataclasses
import json

from engine.context import ContextView
from engine.context.errors import InvalidCommand, UnknownSnapshot
from engine.context.explorer import render_tree
from engine.context.selector_ast import Selector
from engine.context.selectors import check_input_selector
from engine.context.tree import Diff, Node
from engine.context.tree_diff import Locations, TreeDiff
from engine.store import VerifyResult
from engine.workspace.checkpoints import decode_checkpoint
from engine.workspace.errors import CACHE_ERRORS
from engine.workspace.keys import DEEP_VERIFIED
from engine.workspace.past import PastStates
from engine.workspace.types import DeepVerification, PrintMode, SnapshotEntry


class Queries(PastStates):
    """Looking at contexts, now or at a snapshot."""

    # -- queries -------------------------------------------------------------------------------
    async def view(self, name: str, at: str | None = None) -> ContextView:
        """The context now (``at=None``) or at snapshot ``at``."""
        await self.load(name)
        return self.context(name) if at is None else await self.at_snapshot(name, at)

    async def select(self, name: str, selector: str) -> list[Node]:
        """``select`` with the whole history reachable: ``@t-N``, ``@eN``, ``@snap:<id>``.
        The selector is one given now: checked as such (``check_input_selector``)."""
        parsed = check_input_selector(selector)
        await self.load(name)
        if not parsed.is_time_qualified:
            return self.context(name).select(parsed)
        view = await self.at_snapshot(name, self.resolve_time(name, parsed).id)
        return view.select(dataclasses.replace(parsed, time=None))

    def resolve_time(self, name: str, selector: Selector) -> SnapshotEntry:
        """The snapshot a time-qualified selector (``@t-N``, ``@eN``, ``@snap:<id>``) reads."""
        time_ = selector.time
        assert time_ is not None
        snapshots = self._projection(name).snapshots
        if time_.kind == "back":
            assert isinstance(time_.value, int)
            if not 1 <= time_.value <= len(snapshots):
                raise UnknownSnapshot(
                    f"@t-{time_.value}: context {name!r} has {len(snapshots)} snapshot(s)",
                    steps=time_.value,
                )
            return snapshots[-time_.value]
        if time_.kind == "episode":
            assert isinstance(time_.value, int)
            return self.snapshot_of_episode(name, time_.value)
        assert isinstance(time_.value, str)
        return self.snapshot(name, time_.value)

    async def render(self, name: str, mode: PrintMode = "tree", at: str | None = None) -> str:
        view = await self.view(name, at)
        if mode == "tree":
            return render_tree(view)
        if mode == "provider":
            return json.dumps(view.render_provider(), indent=2, ensure_ascii=False)
        if mode == "json":
            return json.dumps(view.model_dump(), indent=2, sort_keys=True)
        raise InvalidCommand(f"unknown print mode {mode!r}; use tree, provider or json", mode=mode)

    async def tree_diff(self, name: str, a: str | None, b: str | None = None) -> TreeDiff:
        """The turn-by-turn diff from snapshot ``a`` to snapshot ``b`` (``None`` = now): what
        :meth:`diff` lists, and the mass moves counted without listing them."""
        return TreeDiff.between(await self.view(name, a), await self.view(name, b))

    async def diff(self, name: str, a: str | None, b: str | None = None) -> Diff:
        """Changes from snapshot ``a`` to snapshot ``b`` (``None`` = now)."""
        return (await self.tree_diff(name, a, b)).to_diff()

    async def located_diff(
        self, name: str, a: str | None, b: str | None = None
    ) -> tuple[Diff, Locations, Locations]:
        """:meth:`diff`, and where each item it names is on each side (``TreeDiff.to_located``)."""
        return (await self.tree_diff(name, a, b)).to_located()

    async def verify(self) -> VerifyResult:
        return await self.store.verify()

    async def deep_verification(self) -> DeepVerification | None:
        """When ``verify --deep`` last passed on this workspace; None if it never did, or if
        its record cannot be used (the log no longer holds the event it was saved at)."""
        try:
            record = await self.store.load_checkpoint(DEEP_VERIFIED)
            if record is None:
                return None
            return DeepVerification.load(record.seq, decode_checkpoint(record.data))
        except CACHE_ERRORS:
            return None
