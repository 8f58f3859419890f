"""The small closed sets the app's widgets and screens share, named once."""

from __future__ import annotations

from typing import Literal

RowKind = Literal["system", "turn", "slot", "item"]
"""What one line of the tree shows: the system region's or a turn's header, a slot's, an item."""

Mark = Literal["added", "removed", "changed", "match"]
"""How a row is highlighted: its change in the diff shown, or a selector match."""
