"""The footer: Textual's, made to fit the terminal's width."""

from __future__ import annotations

from typing import NamedTuple

from textual import events
from textual.await_remove import AwaitRemove
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class Shown(NamedTuple):
    """One key as ``Footer.compose`` makes it (a key of no binding group)."""

    key: str
    display: str
    description: str
    action: str
    disabled: bool
    tooltip: str


Keys = tuple[bool, Shown | None, tuple[Shown, ...]]
"""What the footer shows: compact or not, the palette key (if shown) and the other keys."""


class FittedFooter(Footer):
    """The keys that do not fit are left out whole, from the end (every key is still on the
    help page and most in the palette), so none runs on under the palette key at the right
    edge, where a letter of it showed through (an 80-column footer ended in "v").

    When the bindings change (a view switch moves the focus), the keys already made are given
    what they now show, in the handler that was told, rather than all unmounted and made again
    after the next frame: the new view's keys are in the frame that shows the view, and a
    switch costs one layout, not two (``Footer.compose`` is still the pattern, and what makes
    the keys when there are none yet or a binding group asks for its own layout)."""

    KEEP = frozenset({"help"})  # the key that lists the others is never left out

    _composed: Keys | None = None  # what the keys shown were made from, when last made
    made = 0
    """How many times the keys were made anew (each one unmounted and mounted again)."""

    def on_mount(self, event: events.Mount) -> None:  # type: ignore[override]
        # Told at once (``Footer`` is told with ``call_next``): the keys change in the handler
        # that changed the bindings.
        event.prevent_default()
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed, immediate=True)

    def bindings_changed(self, screen: Screen[object]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            with self._context():  # told by whatever changed the bindings: work as the footer
                if not self._reshow():
                    self.call_after_refresh(self.recompose)

    async def recompose(self) -> None:
        # Every focus change announces new bindings, and a view switch moves the focus several
        # times: the keys are made again only when what they show has changed.
        if self._reshow():
            return
        self._composed = self._shown()
        self.made += 1
        await super().recompose()  # the old keys removed, the new ones mounted
        self._forget_removed_keys()
        self._fit()  # before the next frame, which would show the keys running on

    def _reshow(self) -> bool:
        """Show the active bindings with the keys already made, if they can: True if the keys
        show them now (or did already)."""
        shown = self._shown()
        if shown is None or not self.children:
            return False
        if shown == self._composed:
            return True
        _, palette, wanted = shown
        keys = [key for key in self.children if isinstance(key, FooterKey) and not key._pruning]
        if len(keys) != sum(not child._pruning for child in self.children):
            return False  # a binding group's keys
        made = [key for key in keys if not key.has_class("-command-palette")]
        palettes = [key for key in keys if key.has_class("-command-palette")]
        if len(palettes) != (palette is not None):
            return False  # the palette key come or gone
        for key, want in zip(made, wanted, strict=False):
            _give(key, want)
        more = [
            FooterKey(
                want.key,
                want.display,
                want.description,
                want.action,
                disabled=want.disabled,
                tooltip=want.tooltip,
            ).data_bind(compact=Footer.compact)  # as ``compose`` binds them
            for want in wanted[len(made) :]
        ]
        if more:  # styled as they are mounted, so they are measured and drawn with the rest
            self.mount_all(more, before=palettes[0] if palettes else None)
            made += more
            self.call_after_refresh(self._fit)  # measured again once they are laid out
        if palette is not None:
            _give(palettes[0], palette)
        gone = made[len(wanted) :]
        if gone:  # not drawn from now on (``display`` is False while they are pruned)
            self.call_later(self._forget_watchers_of, self.remove_children(gone))
        self._composed = shown
        self._fit(made[: len(wanted)] + palettes)
        return True

    async def _forget_watchers_of(self, removing: AwaitRemove) -> None:
        await removing
        self._forget_removed_keys()

    def _forget_removed_keys(self) -> None:
        """Drop the watchers of the keys removed. Each key watches ``compact`` (``data_bind``,
        as ``compose`` binds them), and Textual forgets a removed key's watcher only when
        ``compact`` is set, which nothing does: each key removed left its watcher behind, and
        each key mounted scanned them all (thousands after a session of view switches, issue
        25). Set again to what it is, ``compact`` drops them; the keys shown keep theirs."""
        self.mutate_reactive(Footer.compact)

    def _shown(self) -> Keys | None:
        """Everything ``Footer.compose`` reads to make the keys (None before bindings are
        ready, or when a binding is in a group): whether the palette key is shown and what it
        shows, and each key shown, one per action, in the order of the active bindings."""
        if not self._bindings_ready or not self.is_attached:
            return None
        app = self.app
        active = self.screen.active_bindings
        wanted: dict[str, Shown] = {}
        for _, binding, enabled, tooltip in active.values():
            if not binding.show or binding.action in wanted:
                continue
            if binding.group is not None:
                return None
            wanted[binding.action] = Shown(
                binding.key,
                app.get_key_display(binding),
                binding.description,
                binding.action,
                not enabled,
                tooltip,
            )
        palette = None
        if self.show_command_palette and app.ENABLE_COMMAND_PALETTE:
            found = active.get(app.COMMAND_PALETTE_BINDING)
            if found is not None:
                _, binding, enabled, _ = found
                palette = Shown(
                    binding.key,
                    app.get_key_display(binding),
                    binding.description,
                    binding.action,
                    not enabled,
                    binding.tooltip or binding.description,
                )
        return (self.compact, palette, tuple(wanted.values()))

    def on_resize(self) -> None:
        self._fit()

    def _fit(self, keys: list[FooterKey] | None = None) -> None:
        if keys is None:
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


def _give(key: FooterKey, shown: Shown) -> None:
    """Make ``key`` show ``shown``, as ``FooterKey`` made with it would."""
    if (key.key, key.key_display, key.description, key.action) != shown[:4]:
        key.key, key.key_display, key.description, key.action = shown[:4]
        key.refresh(layout=True)  # its width is its text's
    if key._disabled != shown.disabled:
        key._disabled = shown.disabled
        key.set_class(shown.disabled, "-disabled")
    key.tooltip = shown.tooltip or None


def _width(key: FooterKey) -> int:
    margin = key.styles.margin
    return key.render().cell_len + margin.left + margin.right
