"""The base of a mode's screen (the context, document and master-log screens): styled once,
as it mounts, and not again before its first frame.

Textual 8.2.8 styles a mode's new screen more than that. Switching to a mode whose screen is
new, ``_init_mode`` and ``switch_mode`` each call ``refresh_css`` when the screen is not marked
styled since the CSS last changed (the first marks the screen shown before, not the new one):
two reparses of all the CSS. And each posts the screen a ``ScreenResume``, whose handler
restyles every widget of the screen: twice, 12 ms of the cold start at 100,000 items, for
widgets styled a moment before as they mounted. A screen made here is marked styled as it is
made, and a resume restyles it only once it has been suspended (another mode was shown, with
what may have changed meanwhile). A theme changed later still restyles it (the count moves on).
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual._context import active_app
from textual.screen import Screen


class ModeScreen(Screen[None]):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        app = active_app.get(None)
        if app is not None:  # made by the app (its MODES): styled with its CSS as it is now
            self._css_update_count = app._css_update_count
        self._suspended_once = False

    def _on_screen_suspend(self) -> None:
        self._suspended_once = True

    def _on_screen_resume(self, event: events.ScreenResume) -> None:
        # Textual's own handler (Screen's) runs after this one and reads the flag.
        if not self._suspended_once:
            event.refresh_styles = False
