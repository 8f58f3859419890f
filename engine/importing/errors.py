"""Typed errors of an import: a stable ``code``, and a message naming the file and the line (a
gptme log) or the index (a messages list) of what was wrong. An import that raises one has
appended nothing."""

from __future__ import annotations

from engine.errors import CodedError


class ImportRefused(CodedError):
    """Base class of the import's errors."""

    code = "IMPORT_REFUSED"


class BadLogLine(ImportRefused):
    """A line of a gptme log that is no message gptme writes (blank, not JSON, no role…)."""

    code = "BAD_LOG_LINE"


class TruncatedLog(ImportRefused):
    """A gptme log whose last line is cut off (no newline at its end)."""

    code = "TRUNCATED_LOG"


class BadMessages(ImportRefused):
    """A messages list (``--messages FILE.json``) that is not one, naming the bad message."""

    code = "BAD_MESSAGES"
