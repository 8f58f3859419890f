"""Writing a file whole or not at all: an export, the user's config file.

The text goes to a temporary file beside the target, which is then renamed over it
(``os.replace``, atomic on one file system): a reader sees the old file or the new one, never
half of one, and a failure (a full disk, a folder that cannot be written) leaves no partial
file behind.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

NEW_FILE_MODE = 0o644  # a file this writes anew: readable by others, as an editor's would be


class WriteError(Exception):
    """A file that could not be written: ``path`` and why, as people read it."""

    code = "WRITE_FAILED"

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path = path
        self.why = why


def write_atomically(path: Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` whole, or raise :class:`WriteError` having changed
    nothing. Returns the path written, made absolute."""
    target = Path(os.path.abspath(path))
    folder = target.parent
    if target.is_dir():
        raise WriteError(target, "is a folder")
    if not folder.is_dir():
        raise WriteError(target, f"there is no folder {folder}")
    try:
        mode = stat.S_IMODE(target.stat().st_mode)  # an existing file keeps its mode
    except FileNotFoundError:
        mode = NEW_FILE_MODE
    except OSError as error:
        raise WriteError(target, _why(error)) from None
    try:
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as error:
        raise WriteError(target, _why(error)) from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except (OSError, UnicodeEncodeError) as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise WriteError(target, _why(error)) from None
    return target


def _why(error: OSError | UnicodeEncodeError) -> str:
    if isinstance(error, UnicodeEncodeError):
        return "the text holds characters UTF-8 cannot write"
    return error.strerror or type(error).__name__
