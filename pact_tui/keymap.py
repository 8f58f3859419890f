"""One keymap: every action of the app has an id and one key (or set of keys) wherever it is
bound, and a key means one action on a screen.

``ACTIONS`` is the registry (as harlequin's ``actions.py``): each action id, its default keys,
and where it is bound (``Where``). Every ``Binding`` of the app is made with :func:`bind` from
it, with its id, so the user's keymap applies with ``App.set_keymap`` (as posting does): a
``[keys]`` table in the config file maps action ids to keys (``copy = "c"``,
``live = "L,right_curly_bracket"``); the footer, the help page and the palette show the keys in
force. A keymap that would give one key two meanings on a screen is refused whole
(:func:`clashes`), with the clash named, and the default keys kept.

Key names are Textual's (``textual keys`` prints them): ``a``, ``A``, ``ctrl+f``,
``left_square_bracket``, ``full_stop``, ``question_mark``; several keys for one action are
separated by commas.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from textual.binding import Binding
from textual.keys import _normalize_key_list, format_key

Where = Literal[
    "app",  # every screen of a workspace and of a conversation
    "contexts",
    "documents",
    "masterlog",
    "dialog",  # the modal screens that ask something (choose, pick, prompt, edit)
    "confirm",
    "help",
    "reader",
    "invites",
    "token",
]
SCREENS: tuple[Where, ...] = ("contexts", "documents", "masterlog")
"""The app's screens (modes); ``app`` actions are on each of them. The modal screens are each a
place of their own (nothing under a modal screen takes a key)."""
SCREEN_NAMES = {"contexts": "contexts", "documents": "documents", "masterlog": "master-log"}


@dataclass(frozen=True, slots=True)
class Action:
    keys: str
    """The default keys, comma-separated, as Textual names them."""
    where: tuple[Where, ...]
    """The screens (and modal screens) it is bound on."""


def _a(keys: str, *where: Where) -> Action:
    return Action(keys, where)


PANES: tuple[Where, ...] = SCREENS  # the lists and trees every screen has
TIME: tuple[Where, ...] = ("contexts", "documents")

ACTIONS: dict[str, Action] = {
    # -- everywhere --
    "quit": _a("q", "app"),
    "help": _a("question_mark", "app"),
    "show-contexts": _a("1", "app"),
    "show-documents": _a("2", "app"),
    # -- moving in a list, a tree, a grid, a reader --
    "up": _a("up,k", *PANES, "reader"),
    "down": _a("down,j", *PANES, "reader"),
    "page-up": _a("pageup", *PANES),
    "page-down": _a("pagedown", *PANES),
    "top": _a("home,g", *PANES, "reader"),
    "bottom": _a("end,G", *PANES, "reader"),
    "select": _a("enter", *PANES),
    "next-pane": _a("tab", "masterlog", "reader"),
    "toggle-fold": _a("space", "contexts"),
    "left": _a("left,h", "contexts", "documents"),
    "right": _a("right,l", "contexts", "documents"),
    "page-left": _a("shift+left,ctrl+pageup", "documents"),
    "page-right": _a("shift+right,ctrl+pagedown", "documents"),
    "first-column": _a("0", "documents"),
    "last-column": _a("dollar_sign", "documents"),
    "first-cell": _a("ctrl+home", "documents"),
    "last-cell": _a("ctrl+end", "documents"),
    "read-on": _a("space", "reader"),
    # -- time travel: one set of keys on the contexts and the documents --
    "earlier": _a("left_square_bracket", *TIME),
    "later": _a("right_square_bracket", *TIME),
    "first": _a("left_curly_bracket", *TIME),
    "live": _a("right_curly_bracket", *TIME),
    "go-to": _a("colon", *TIME, "masterlog"),
    "diff": _a("d", *TIME),
    "advance": _a("full_stop", *TIME),
    # -- finding, reading, keeping --
    "search": _a("slash", "contexts", "masterlog"),
    "next": _a("n", "contexts", "masterlog"),
    "previous": _a("N", "contexts", "masterlog"),
    "close": _a("escape", "contexts", "masterlog", "dialog", "invites"),
    "filter": _a("f", "contexts", "documents"),
    "follow": _a("F", "contexts", "masterlog"),
    "read": _a("o", "contexts", "masterlog"),
    "copy": _a("y", "contexts", "masterlog", "token"),
    "jump": _a("J", "contexts", "masterlog"),
    "export": _a("x", "contexts", "documents"),
    # -- the context inspector --
    "user-message": _a("u", "contexts"),
    "assistant-message": _a("a", "contexts"),
    "seal": _a("s", "contexts"),
    "play": _a("p", "contexts"),
    "faster": _a("plus", "contexts"),
    "slower": _a("minus", "contexts"),
    "quick-filter": _a("ctrl+f", "contexts"),
    "provider": _a("v", "contexts"),
    "fold-history": _a("z", "contexts"),
    "unfold-all": _a("Z", "contexts"),
    "focus-contexts": _a("c", "contexts"),
    "toggle-contexts": _a("b", "contexts"),
    "toggle-detail": _a("i", "contexts"),
    "zoom": _a("w", "contexts"),
    "fork": _a("K", "contexts"),
    "changelog": _a("C", "contexts"),
    # -- the custodian's document screen --
    "outline": _a("O", "documents"),
    "proposals": _a("P", "documents"),
    "heatmap": _a("H", "documents"),
    "inbox": _a("I", "documents"),
    "agents": _a("A", "documents"),
    "events": _a("E", "documents"),
    "view-as": _a("V", "documents"),
    "share": _a("W", "documents"),
    "comment": _a("M", "documents"),
    "resolve-comment": _a("U", "documents"),
    "custodian-menu": _a("exclamation_mark", "documents"),
    "next-document": _a("D", "documents"),
    "fire-due": _a("t", "documents"),
    "step-size": _a("plus", "documents"),
    "diff-layout": _a("vertical_line", "documents"),
    "approve": _a("a", "documents"),
    "reject": _a("r", "documents"),
    "force-merge": _a("m", "documents"),
    "choose": _a("c", "documents"),
    "revert": _a("u", "documents"),
    "respond": _a("e", "documents"),
    "resolve": _a("R", "documents"),
    "dismiss": _a("X", "documents"),
    "trust": _a("T", "documents"),
    "clearance": _a("L", "documents"),
    "disclosure": _a("B", "documents"),
    "remove-agent": _a("delete", "documents"),
    "sort-agents": _a("s", "documents"),
    "sort-sections": _a("S", "documents"),
    # -- the modal screens --
    "yes": _a("y", "confirm"),
    "no": _a("n,escape", "confirm"),
    "save": _a("ctrl+s", "dialog"),
    "close-help": _a("escape,q,question_mark", "help"),
    "close-reader": _a("escape,q,o", "reader"),
    "new-invite": _a("n", "invites"),
    "revoke": _a("x", "invites"),
    "close-token": _a("escape,enter", "token"),
}


def bind(
    action_id: str,
    action: str,
    description: str,
    *,
    show: bool = True,
    tooltip: str = "",
) -> Binding:
    """The binding of ``action_id``: its keys from ``ACTIONS``, and the id a user's keymap
    rebinds it by."""
    return Binding(
        ACTIONS[action_id].keys, action, description, show=show, tooltip=tooltip, id=action_id
    )


def split_keys(keys: str) -> list[str]:
    """``"up,k"`` → ``["up", "k"]``, each in Textual's long form (``?`` → ``question_mark``)."""
    return [_normalize_key_list(key) for key in keys.split(",") if key.strip()]


def keys_of(action_id: str, keymap: Mapping[str, str]) -> str:
    """The keys in force for ``action_id``: the user's, else the default."""
    return keymap.get(action_id) or ACTIONS[action_id].keys


def shown_keys(keys: str) -> str:
    """Keys as the help page and the palette show them: ``[``, ``ctrl+f``, ``?``."""
    return ", ".join(format_key(key) for key in split_keys(keys))


def _places(where: Iterable[Where]) -> set[Where]:
    places = set(where)
    if "app" in places:
        places |= set(SCREENS)
    return places - {"app"}


def clashes(keymap: Mapping[str, str]) -> list[str]:
    """Where ``keymap`` (over the defaults) would give one key two meanings: two actions on one
    screen, or a key of an action that several screens share taken by another action on any of
    them. Empty: none."""
    found: list[str] = []
    places: dict[Where, dict[str, set[str]]] = {}
    for action_id, action in ACTIONS.items():
        for place in _places(action.where):
            for key in split_keys(keys_of(action_id, keymap)):
                places.setdefault(place, {}).setdefault(key, set()).add(action_id)
    for place, keys in places.items():
        for key, ids in sorted(keys.items()):
            if len(ids) > 1:
                named = " and ".join(sorted(ids))
                found.append(f"{format_key(key)} is {named} on the {_place_name(place)}")
    shared = [
        action_id
        for action_id, action in ACTIONS.items()
        if len(_places(action.where) & set(SCREENS)) > 1
    ]
    for action_id in shared:
        for key in split_keys(keys_of(action_id, keymap)):
            for place in SCREENS:
                for other in sorted(places.get(place, {}).get(key, set()) - {action_id}):
                    if place not in _places(ACTIONS[action_id].where):
                        found.append(
                            f"{format_key(key)} is {action_id} on every screen, and {other}"
                            f" on the {_place_name(place)}"
                        )
    return found


def _place_name(place: Where) -> str:
    if place in SCREEN_NAMES:
        return f"{SCREEN_NAMES[place]} screen"
    return f"{place} screen" if place != "dialog" else "dialogs"


class KeymapError(Exception):
    """The ``[keys]`` table of the config file cannot be used: what is wrong, and where. None
    of it is applied."""

    code = "INVALID_KEYMAP"

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")
        self.where = where
        self.problem = problem


KEY_NAME = re.compile(r"^(?:(?:ctrl|shift|alt|super|meta|hyper)\+)*[A-Za-z0-9_]+$")


def check_keymap(table: object, where: str) -> dict[str, str]:
    """The ``[keys]`` table read from ``where`` as a keymap (action id → keys), or
    :class:`KeymapError` naming the first thing wrong: not a table, an unknown action id, a
    value that is not a string of key names, or a clash."""
    if not isinstance(table, dict):
        raise KeymapError(where, '[keys] must be a table of action = "keys"')
    keymap: dict[str, str] = {}
    for action_id, keys in table.items():
        if action_id not in ACTIONS:
            raise KeymapError(where, f"[keys] names no action {action_id!r}")
        if not isinstance(keys, str) or not split_keys(keys):
            raise KeymapError(where, f'[keys] {action_id} must be a string of keys, like "y"')
        for key in split_keys(keys):
            if not KEY_NAME.match(key):
                raise KeymapError(where, f"[keys] {action_id}: {key!r} is not a key name")
        keymap[action_id] = ",".join(split_keys(keys))
    problems = clashes(keymap)
    if problems:
        raise KeymapError(where, f"[keys] {problems[0]}")
    return keymap


def key_shown(action_id: str, keymap: Mapping[str, str]) -> str:
    """The first key in force for ``action_id``, as a hint in a sentence names it (``}``,
    ``ctrl+f``)."""
    return format_key(split_keys(keys_of(action_id, keymap))[0])


def reference(said: Mapping[str, str]) -> str:
    """``docs/keys.md``: every action id, its default keys, where it is bound and what it does
    (``said``: id → the binding's tooltip or description)."""
    lines = [
        "# Keys",
        "",
        "Every action of the app, by the id a `[keys]` table in the config file rebinds it by",
        '(`~/.config/pact-tui/config.toml`; README, "One key means one action"). Generated from',
        "`pact_tui/keymap.py` (`tests/tui/test_keymap.py` checks that it is up to date).",
        "",
        "| id | keys | where | what it does |",
        "|---|---|---|---|",
    ]
    for action_id, action in ACTIONS.items():
        keys = ", ".join(
            f"`{key}`" if format_key(key) == key else f"`{key}` ({format_key(key)})"
            for key in split_keys(action.keys)
        )
        where = ", ".join("every screen" if w == "app" else w for w in action.where)
        what = said.get(action_id, "").replace("|", "\\|")
        lines.append(f"| `{action_id}` | {keys} | {where} | {what} |")
    return "\n".join(lines) + "\n"
