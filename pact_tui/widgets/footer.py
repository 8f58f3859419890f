"""The footer: Textual's, made to fit the terminal's width."""

from __future__ import annotations

from collections.abc import Hashable

from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class FittedFooter(Footer):
    """The keys that do not fit are left out whole, from the end (every key is still on the
    help page and most in the palette), so none runs on under the palette key at the right
    edge, where a letter of it showed through (an 80-column footer ended in "v")."""

    KEEP = frozenset({"help"})  # the key that lists the others is never left out

    _composed: Hashable = None  # what the keys shown were made from, when last made

    async def recompose(self) -> None:
        # Every focus change announces new bindings, and a view switch moves the focus several
        # times: the keys are made again only when what they show has changed.
        shown = self._shown()
        if shown == self._composed and self.children:
            return
        self._composed = shown
        await super().recompose()
        self._fit()  # before the next frame, which would show the keys running on

    def _shown(self) -> Hashable:
        """Everything ``Footer.compose`` reads to make the keys (None before bindings are
        ready): the active bindings' keys, how they display, what they say, whether they are
        enabled, their tooltips and groups, and the palette key's setting."""
        if not self._bindings_ready or not self.is_attached:
            return None
        app = self.app
        return (
            self.show_command_palette,
            app.ENABLE_COMMAND_PALETTE,
            tuple(
                (
                    binding.key,
                    app.get_key_display(binding),
                    binding.action,
                    binding.description,
                    binding.show,
                    binding.tooltip,
                    None if binding.group is None else id(binding.group),
                    enabled,
                    tooltip,
                )
                for _, binding, enabled, tooltip in self.screen.active_bindings.values()
            ),
        )

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
