"""Imports into a real workspace file from copies of the real gptme 0.35.1 fixtures."""

from __future__ import annotations

from tests.engine.masterlog.conftest import FIXTURES, copy, facts, opened

__all__ = ["FIXTURES", "copy", "facts", "opened"]
