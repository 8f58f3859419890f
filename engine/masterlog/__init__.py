"""gptme conversation directories: the master log, its views and branches, and the byte-range
references a compacted view leaves into the master log.

``lines`` and ``references`` are pure; ``index`` and ``catalogue`` keep derived data in a SQLite
cache (never in a workspace's event log); ``conversation`` reads a directory; ``verify`` judges
and recovers references; ``compact`` writes a view of its own; ``watch`` follows a directory as
gptme appends.
"""
