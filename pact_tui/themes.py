"""Theme files: TOML in ``themes/`` (and the user's config folder), loaded and reloaded live;
and the user's config file (``$XDG_CONFIG_HOME/pact-tui/config.toml``, else
``~/.config/pact-tui/config.toml``), which says the theme to start with (``theme = "…"``, set
when one is picked in the palette), the custodian's name (``human = "…"``) and the user's own
keys (a ``[keys]`` table of action ids, ``pact_tui/keymap.py``).

A theme file names a Textual theme's colours (``primary``, ``background``, … and ``dark``) and
may add ``[variables]``. A broken file is reported with its path and what is wrong; it never
takes the app down.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from textual.color import Color, ColorParseError
from textual.theme import Theme

DEFAULT_THEME = "pact-midnight"
COLOUR_FIELDS = (
    "primary",
    "secondary",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
    "success",
    "warning",
    "error",
)
ALLOWED = {"name", "dark", "variables", *COLOUR_FIELDS}


class ThemeFileError(Exception):
    """A theme file that cannot be used: ``path`` and what is wrong with it."""

    code = "INVALID_THEME"

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


@dataclass(frozen=True, slots=True)
class ThemeFile:
    path: Path
    theme: Theme


def bundled_themes_dir() -> Path:
    """The folder of the package ``pact_tui.bundled_themes``: ``themes/`` at the top of the
    checkout in an editable install (so an edit there reloads live), a copy in a wheel's."""
    folder = files("pact_tui.bundled_themes")
    if not isinstance(folder, Path):  # imported from a zip: no folder to glob and watch
        raise RuntimeError(f"pact-tui needs to be installed as files, not run from {folder}")
    return folder


def user_themes_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "pact-tui" / "themes"


def config_file() -> Path:
    return user_themes_dir().parent / "config.toml"


def load_theme_file(path: Path) -> ThemeFile:
    """Parse one theme file; raises :class:`ThemeFileError` naming the file and the problem."""
    try:
        data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ThemeFileError(path, f"cannot be read ({error.strerror})") from None
    except UnicodeDecodeError:
        raise ThemeFileError(path, "is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as error:
        raise ThemeFileError(path, f"is not valid TOML: {error}") from None
    unknown = sorted(set(data) - ALLOWED)
    if unknown:
        raise ThemeFileError(path, f"unknown field(s) {', '.join(unknown)}")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ThemeFileError(path, 'needs a `name = "…"`')
    if "primary" not in data:
        raise ThemeFileError(path, "needs at least a `primary` colour")
    colours: dict[str, str] = {}
    for field in COLOUR_FIELDS:
        if field in data:
            colours[field] = _colour(path, field, data[field])
    dark = data.get("dark", True)
    if not isinstance(dark, bool):
        raise ThemeFileError(path, "`dark` must be true or false")
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in variables.items()
    ):
        raise ThemeFileError(path, "[variables] must map names to strings")
    theme = Theme(name=name.strip(), dark=dark, variables=dict(variables), **colours)  # type: ignore[arg-type]
    return ThemeFile(path, theme)


def _colour(path: Path, field: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ThemeFileError(path, f"`{field}` must be a colour string, got {value!r}")
    try:
        Color.parse(value)
    except ColorParseError:
        raise ThemeFileError(path, f"`{field}` = {value!r} is not a colour") from None
    return value


def theme_files(directories: list[Path]) -> list[Path]:
    files: list[Path] = []
    for directory in directories:
        if directory.is_dir():
            files.extend(sorted(directory.glob("*.toml")))
    return files


def load_themes(directories: list[Path]) -> tuple[list[ThemeFile], list[ThemeFileError]]:
    """Every theme in ``directories``; broken files are returned as errors, not raised."""
    loaded: list[ThemeFile] = []
    errors: list[ThemeFileError] = []
    for path in theme_files(directories):
        try:
            loaded.append(load_theme_file(path))
        except ThemeFileError as error:
            errors.append(error)
    return loaded, errors


def configured_theme() -> str | None:
    """``theme = "…"`` from the user's config file, if there is one that says so."""
    return _configured("theme")


def configured_human() -> str | None:
    """``human = "…"`` from the user's config file: the custodian's name."""
    return _configured("human")


def configured_keymap() -> dict[str, str]:
    """The ``[keys]`` table of the user's config file as a keymap (action id → keys); empty
    when there is no file or no table. A table that cannot be used raises
    :class:`~pact_tui.keymap.KeymapError` naming the file and what is wrong (none of it is
    applied); a file that cannot be read or parsed says nothing here (the theme and the name
    are read the same way)."""
    from .keymap import check_keymap

    path = config_file()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    if "keys" not in data:
        return {}
    return check_keymap(data["keys"], str(path))


def _configured(setting: str) -> str | None:
    path = config_file()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    value = data.get(setting)
    return value if isinstance(value, str) else None


class ConfigFileError(Exception):
    """The config file could not be changed: ``path`` and why. Nothing was written."""

    code = "CONFIG_NOT_SAVED"

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


def remember_theme(name: str) -> Path:
    """Start with theme ``name`` from now on: ``theme = "name"`` in the config file."""
    return save_setting("theme", name)


def save_setting(setting: str, value: str) -> Path:
    """Set ``setting = "value"`` among the config file's top-level settings, keeping the rest
    of the file as it is (its other settings, comments and tables: tomlkit edits the document
    in place), and write it whole (``write_atomically``). A file that is not valid TOML, or
    whose ``setting`` is something other than a string (a table, a number), is left alone:
    raises :class:`ConfigFileError`, as for one that cannot be written."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    from .files import WriteError, write_atomically

    path = config_file()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError) as error:
        why = error.strerror if isinstance(error, OSError) else "it is not UTF-8 text"
        raise ConfigFileError(path, f"cannot be read ({why})") from None
    try:
        before = tomllib.loads(text)
        document = tomlkit.parse(text)
    except (tomllib.TOMLDecodeError, TOMLKitError) as error:
        raise ConfigFileError(path, f"is not valid TOML ({error}); left as it is") from None
    if not isinstance(before.get(setting, ""), str):
        raise ConfigFileError(path, f"its {setting} is not a string; left as it is")
    document[setting] = value
    edited = tomlkit.dumps(document)
    if tomllib.loads(edited) != {**before, setting: value}:  # tomlkit's edit, checked
        raise ConfigFileError(path, f"cannot set {setting} there safely; left as it is")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return write_atomically(path, edited)
    except OSError as error:
        raise ConfigFileError(path, f"cannot be written ({error.strerror})") from None
    except WriteError as error:
        raise ConfigFileError(path, f"cannot be written ({error.why})") from None


@dataclass(frozen=True, slots=True)
class Palette:
    """The colours of a diff (the detail pane's, the document screen's), from the theme
    (``Palette.of(app.theme_variables)``)."""

    removed: str = "red"
    added: str = "green"
    warn: str = "yellow"
    header: str = "cyan"  # a hunk's @@ line

    @classmethod
    def of(cls, variables: dict[str, str]) -> Palette:
        plain = cls()
        return cls(
            variables.get("error", plain.removed),
            variables.get("success", plain.added),
            variables.get("warning", plain.warn),
            variables.get("accent", plain.header),
        )
