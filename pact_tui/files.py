"""Files the command line reads and writes.

Writing a file whole or not at all (an export, the user's config file): the text goes to a
temporary file beside the target, which is then renamed over it (``os.replace``, atomic on one
file system): a reader sees the old file or the new one, never half of one, and a failure (a
full disk, a folder that cannot be written) leaves no partial file behind. A folder of files
(``ctx export --gptme``) is written the same way: a temporary folder beside it, renamed to its
name once every file in it is written; it is made new, or in place of an empty folder, never
over anything.

Reading a file named on the command line (``doc create --from``, ``tap … --content-file``):
a regular file only, of at most :data:`MAX_INPUT_BYTES`. ``/dev/zero`` was read until memory
ran out, and a FIFO with no writer blocked the command for good.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

NEW_FILE_MODE = 0o644  # a file this writes anew: readable by others, as an editor's would be
NEW_FOLDER_MODE = 0o755  # a folder this makes anew: as mkdir makes one under the usual umask
MAX_INPUT_BYTES = 16 * 1024 * 1024  # a document or a section's content: 16 MiB at most
MAX_INPUT_SHOWN = "16 MiB"


class ReadError(Exception):
    """A file named on the command line that could not be read: why, as people read it."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def read_text_input(name: str) -> str:
    """The UTF-8 text of the regular file ``name`` (``-``: standard input), of at most
    :data:`MAX_INPUT_BYTES`, its line ends read as ``\n`` as ``Path.read_text`` reads them;
    :class:`ReadError` otherwise. A device, a FIFO or a folder is refused before it is opened
    (and a FIFO put there meanwhile is opened without waiting for a writer)."""
    data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1) if name == "-" else _read_regular_file(name)
    if len(data) > MAX_INPUT_BYTES:
        raise ReadError(f"it holds more than the {MAX_INPUT_SHOWN} a file read here may hold")
    try:
        return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8").read()
    except UnicodeDecodeError as error:
        raise ReadError(f"not UTF-8 text ({error.reason} at byte {error.start})") from None


def _read_regular_file(name: str) -> bytes:
    try:
        status = os.stat(name)
        _check_regular(status, name)
        descriptor = os.open(name, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as error:
        raise ReadError(error.strerror or type(error).__name__) from None
    with open(descriptor, "rb", closefd=True) as file:
        try:
            _check_regular(os.fstat(descriptor), name)
            return file.read(MAX_INPUT_BYTES + 1)
        except OSError as error:
            raise ReadError(error.strerror or type(error).__name__) from None


def _check_regular(status: os.stat_result, name: str) -> None:
    if stat.S_ISREG(status.st_mode):
        if status.st_size > MAX_INPUT_BYTES:
            raise ReadError(
                f"it holds {status.st_size:,} bytes, more than the {MAX_INPUT_SHOWN} a file "
                "read here may hold"
            )
        return
    kinds = [
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ]
    kind = next((what for test, what in kinds if test(status.st_mode)), "not a file")
    raise ReadError(f"{kind}, not a regular file (a file is read here, '-' for standard input)")


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


class FolderNotEmpty(WriteError):
    """A folder to write that already holds something: nothing in it is touched."""

    code = "NOT_EMPTY"


def write_folder_atomically(path: Path, files: Mapping[str, bytes]) -> Path:
    """Make the folder ``path`` holding ``files`` (names relative to it, ``/`` between folders)
    whole, or raise :class:`WriteError` having changed nothing: a folder that exists must be
    empty (:class:`FolderNotEmpty` otherwise; the new one takes its place and its mode), and
    anything else at ``path`` is refused. Returns the path written, made absolute."""
    target = Path(os.path.abspath(path))
    folder = target.parent
    mode = NEW_FOLDER_MODE
    try:
        status = target.stat()
    except FileNotFoundError:
        pass
    except OSError as error:
        raise WriteError(target, _why(error)) from None
    else:
        if not stat.S_ISDIR(status.st_mode):
            raise WriteError(target, "is there and is not a folder")
        mode = stat.S_IMODE(status.st_mode)
        try:
            with os.scandir(target) as entries:
                if next(entries, None) is not None:
                    raise FolderNotEmpty(target, "is not empty (give a new or an empty folder)")
        except OSError as error:
            raise WriteError(target, _why(error)) from None
    if not folder.is_dir():
        raise WriteError(target, f"there is no folder {folder}")
    try:
        temporary = Path(tempfile.mkdtemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp"))
    except OSError as error:
        raise WriteError(target, _why(error)) from None
    try:
        for name, data in files.items():
            file_path = temporary.joinpath(*name.split("/"))
            file_path.parent.mkdir(parents=True, exist_ok=True)
            with open(file_path, "xb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            os.chmod(file_path, NEW_FILE_MODE)
        os.chmod(temporary, mode)
        os.rename(temporary, target)  # over an empty folder only: refused if one holds anything
    except OSError as error:
        shutil.rmtree(temporary, ignore_errors=True)
        if error.errno in (errno.ENOTEMPTY, errno.EEXIST):
            raise FolderNotEmpty(target, "is not empty (something was put there since)") from None
        raise WriteError(target, _why(error)) from None
    return target


def _why(error: OSError | UnicodeEncodeError) -> str:
    if isinstance(error, UnicodeEncodeError):
        return "the text holds characters UTF-8 cannot write"
    return error.strerror or type(error).__name__
