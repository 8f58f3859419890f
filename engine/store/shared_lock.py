"""A read lock on a workspace file, on the bytes where SQLite takes its own (issue 23 §5).

SQLite's unix VFS locks bytes past the first GiB of a database file: a connection reading it
holds a read lock on the 510 bytes of its SHARED range, and in WAL mode it holds that lock for
as long as it is open. The last connection to close takes a write lock on the same bytes before
it checkpoints the ``-wal`` file into the database and deletes the ``-wal`` and ``-shm`` files;
while anyone holds the read lock, no connection closing deletes them.

A process that cannot write a workspace reads it without making either file (see
:func:`engine.store.file_check.read_only_access`). It holds this lock while it looks: the files
it found beside the workspace then stay, and a writer that starts meanwhile leaves its ``-wal``
in place, so looking again shows that it started.

The lock is an open file description lock where the platform has them (Linux): a POSIX lock is
the process's, and closing any descriptor of the file, as SQLite does when one of this process's
other connections to it closes, would drop it. Elsewhere it is a POSIX lock, held only until
this process closes another connection to the file.
"""

from __future__ import annotations

import errno
import fcntl
import os
import struct
from pathlib import Path

# SQLite's unix VFS (os_unix.c): PENDING_BYTE, and SHARED_FIRST and SHARED_SIZE after it.
PENDING_BYTE = 0x40000000
SHARED_FIRST = PENDING_BYTE + 2
SHARED_SIZE = 510

# struct flock where off_t is a long: type, whence, start, length, pid (0 for an OFD lock).
_FLOCK = "hhlli0l"
_OFD_SETLK: int = getattr(fcntl, "F_OFD_SETLK", 0)  # 0: the platform has none
_USE_OFD = _OFD_SETLK != 0 and struct.calcsize("l") == 8
# What fcntl says when a conflicting lock is held (POSIX allows either).
_HELD_ELSEWHERE = (errno.EAGAIN, errno.EACCES)


class SharedLock:
    """Held from :meth:`take` until :meth:`release` (or until this process ends)."""

    def __init__(self, descriptor: int) -> None:
        self._descriptor: int | None = descriptor

    @classmethod
    def take(cls, file: Path) -> SharedLock | None:
        """The lock on ``file``, or None while a connection holds the write lock on those
        bytes (the last one closing, for the moment it checkpoints). Blocking, never waits."""
        descriptor = os.open(file, os.O_RDONLY | os.O_CLOEXEC)
        try:
            if _USE_OFD:
                lock = struct.pack(_FLOCK, fcntl.F_RDLCK, os.SEEK_SET, SHARED_FIRST, SHARED_SIZE, 0)
                fcntl.fcntl(descriptor, _OFD_SETLK, lock)
            else:
                fcntl.lockf(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB, SHARED_SIZE, SHARED_FIRST)
        except OSError as error:
            os.close(descriptor)
            if error.errno in _HELD_ELSEWHERE:
                return None
            raise
        except BaseException:
            os.close(descriptor)
            raise
        return cls(descriptor)

    def release(self) -> None:
        """Let go of the lock (closing the descriptor it was taken on). Idempotent."""
        if self._descriptor is not None:
            descriptor, self._descriptor = self._descriptor, None
            os.close(descriptor)
