"""The footer: Textual's, made to fit the terminal's width."""

from __future__ import annotations

from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class FittedFooter(Footer):
    """The keys that do not fit are left out whole, from the end (every key is still on the
    help page and most in the palette), so none runs on under the palette key at the right
    edge, where a letter of it showed through (an 80-column footer ended in "v")."""

    KEEP = frozenset({"help"})  # the key that lists the others is never left out

    async def recompose(self) -> None:
        await super().recompose()
        self._fit()  # before the next frame, which would show the keys running on

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        keys = list(self.query(FooterKey))
        palette = [key for key in keys if key.has_class("-command-palette")]
        room = self.size.width - sum(_width(key) for key in palette)
        shown = [key for key in keys if key not in palette]
        total = sum(_width(key) for key in shown)
        for key in reversed(shown):
            fits = total <= room or key.action in self.KEEP
            key.display = fits
            if not fits:
                total -= _width(key)


def _width(key: FooterKey) -> int:
    margin = key.styles.margin
    return key.render().cell_len + margin.left + margin.right
