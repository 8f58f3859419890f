"""The byte index: appended in any chunks it equals one full index, it survives a restart, and
it tells an append from a rewrite."""

from __future__ import annotations

import os
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.masterlog.index import LineIndex, connect
from engine.masterlog.lines import encode_message

messages = st.lists(
    st.builds(
        lambda role, content: encode_message({"role": role, "content": content}),
        st.sampled_from(["user", "assistant", "system"]),
        st.text(max_size=300),
    )
    | st.just(b"\n")  # blank lines are lines too
    | st.just(b'{"role": "user", "con\n'),
    min_size=1,
    max_size=30,
)


def full(tmp: Path, data: bytes) -> list[int]:
    path = tmp / "full.jsonl"
    path.write_bytes(data)
    db = connect(tmp / "full.sqlite")
    index = LineIndex.load(db, path, "full")
    index.refresh()
    db.close()
    return list(index.ends)


@settings(max_examples=60, deadline=None)
@given(lines=messages, cuts=st.lists(st.integers(min_value=0), max_size=8))
def test_appending_in_random_chunks_equals_one_full_index(
    tmp_path_factory: object, lines: list[bytes], cuts: list[int]
) -> None:
    tmp = tmp_path_factory.mktemp("idx")  # type: ignore[attr-defined]
    data = b"".join(lines)
    points = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    path = tmp / "log.jsonl"
    path.write_bytes(b"")
    db = connect(tmp / "cache.sqlite")
    index = LineIndex.load(db, path, "log")
    for a, b in pairwise(points):
        with path.open("ab") as file:
            file.write(data[a:b])  # cuts fall anywhere, mid-line included
        refresh = index.refresh()
        assert not refresh.rewritten
        assert refresh.size + refresh.partial == b  # complete lines indexed, the rest partial
        assert refresh.partial == b - (data.rfind(b"\n", 0, b) + 1)
    assert list(index.ends) == full(tmp, data)
    db.close()
    # a restart reads the blobs back, and no byte of the file again
    db = connect(tmp / "cache.sqlite")
    again = LineIndex.load(db, path, "log")
    assert list(again.ends) == list(index.ends)
    assert again.refresh().bytes_read == len(data) - again.size
    db.close()


def test_a_restart_reads_only_new_bytes(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(
        b"".join(encode_message({"role": "user", "content": str(i)}) for i in range(200_000))
    )
    db = connect(tmp_path / "c.sqlite")
    first = LineIndex.load(db, path, "log")
    assert first.refresh().lines == 200_000  # more than one stored chunk of line ends
    db.close()
    with path.open("ab") as file:
        file.write(encode_message({"role": "user", "content": "one more"}))
    db = connect(tmp_path / "c.sqlite")
    second = LineIndex.load(db, path, "log")
    refresh = second.refresh()
    assert (refresh.new_lines, refresh.lines, refresh.rewritten) == (1, 200_001, False)
    assert refresh.bytes_read == len(encode_message({"role": "user", "content": "one more"}))
    chunks = db.execute("SELECT count(*) FROM chunks WHERE name = 'log'").fetchone()[0]
    assert chunks == 4  # 65,536 ends per chunk
    db.close()


def test_a_shorter_file_or_a_changed_line_is_a_rewrite(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    lines = [encode_message({"role": "user", "content": f"m{i}"}) for i in range(5)]
    path.write_bytes(b"".join(lines))
    db = connect(tmp_path / "c.sqlite")
    index = LineIndex.load(db, path, "log")
    index.refresh()
    path.write_bytes(b"".join(lines[:3]))
    refresh = index.refresh()
    assert refresh.rewritten and "shorter" in refresh.reason and index.lines == 3
    path.write_bytes(lines[1] + lines[1] + lines[2] + lines[3])  # same size, first line changed
    refresh = index.refresh()
    assert refresh.rewritten and refresh.reason == "its first line changed"
    assert index.lines == 4 and index.generation == 2


def test_a_cache_written_halfway_is_started_again(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"".join(encode_message({"role": "user", "content": "x"}) for _ in range(10)))
    db = connect(tmp_path / "c.sqlite")
    LineIndex.load(db, path, "log").refresh()
    db.execute("UPDATE files SET lines = 11")  # the record disagrees with the stored ends
    index = LineIndex.load(db, path, "log")
    assert index.lines == 0
    assert index.refresh().lines == 10


def test_a_damaged_cache_file_is_a_typed_error(tmp_path: Path) -> None:
    from engine.masterlog.errors import CacheError

    bad = tmp_path / "c.sqlite"
    bad.write_bytes(b"not a database, not at all" * 100)
    with pytest.raises(CacheError, match="delete the file to rebuild"):
        connect(bad)


def test_processes_setting_up_one_cache_at_once_all_open_it(tmp_path: Path) -> None:
    """Two ``log tail`` on one conversation share its cache: whoever comes second waits for
    the first's setup. SQLite says "database is locked" at once, without waiting, when the
    schema changed under a statement (3 of 240 openings here, six at a time, before)."""
    import threading

    failed: list[Exception] = []
    for round_ in range(60):
        path = tmp_path / f"c{round_}.sqlite"
        together = threading.Barrier(6)

        def open_it(path: Path = path, together: threading.Barrier = together) -> None:
            together.wait()
            try:
                connect(path).close()
            except Exception as error:
                failed.append(error)

        threads = [threading.Thread(target=open_it) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert failed == []


def rewrite(path: Path, data: bytes, *, renamed: bool) -> None:
    """As gptme rewrites a log (a new file renamed over it), or in place."""
    if renamed:
        temporary = path.with_suffix(".tmp")
        temporary.write_bytes(data)
        os.replace(temporary, path)
    else:
        with path.open("r+b") as file:
            file.write(data)
            file.truncate()


@settings(max_examples=80, deadline=None)
@given(
    before=messages,
    after=messages,
    kept=st.integers(min_value=0, max_value=30),
    renamed=st.booleans(),
)
def test_a_rewrite_indexes_from_its_first_changed_byte_as_a_full_index_does(
    tmp_path_factory: object, before: list[bytes], after: list[bytes], kept: int, renamed: bool
) -> None:
    tmp = tmp_path_factory.mktemp("rw")  # type: ignore[attr-defined]
    old = b"".join(before)
    new = b"".join(before[:kept]) + b"".join(after)  # an undo, an edit, lines added after...
    path = tmp / "log.jsonl"
    path.write_bytes(old)
    db = connect(tmp / "cache.sqlite")
    index = LineIndex.load(db, path, "log")
    index.refresh()
    rewrite(path, new, renamed=renamed)
    refresh = index.refresh(rewritten="undo")
    assert refresh.rewritten
    assert list(index.ends) == full(tmp, new)
    assert index.partial == len(new) - (new.rfind(b"\n") + 1)
    size = min(len(old), len(new))
    same = next((i for i in range(size) if old[i] != new[i]), size)  # bytes alike at the start
    first = max((end for end in full(tmp, old) if end <= same), default=0)  # lines alike end
    if renamed:  # read from the first line that is not as it was
        assert refresh.bytes_read == len(new) - first
    else:  # the file indexed is gone: read whole
        assert refresh.bytes_read == len(new)
    # a restart reads the index back as it is now
    again = LineIndex.load(db, path, "log")
    assert list(again.ends) == list(index.ends)
    db.close()


@settings(max_examples=100, deadline=None)
@given(
    data=st.binary(max_size=64),
    flips=st.lists(st.integers(min_value=0, max_value=80), max_size=3),
    cut=st.integers(min_value=0, max_value=80),
    block=st.integers(min_value=1, max_value=9),
)
def test_the_prefix_two_files_share_is_found_across_blocks(
    tmp_path_factory: object, data: bytes, flips: list[int], cut: int, block: int
) -> None:
    """The bytes a rewrite still holds where they were, compared a block at a time into kept
    buffers (blocks of a few bytes here), are exactly the bytes alike at the start."""
    from engine.masterlog import index as module

    tmp = tmp_path_factory.mktemp("prefix")  # type: ignore[attr-defined]
    other = bytearray(data[:cut] if cut < len(data) else data)
    for flip in flips:
        if flip < len(other):
            other[flip] ^= 0x5A
    (tmp / "a").write_bytes(data)
    (tmp / "b").write_bytes(bytes(other))
    size = min(len(data), len(other))
    expected = next((i for i in range(size) if data[i] != other[i]), size)
    was = module.COMPARE_SIZE
    module.COMPARE_SIZE = block
    try:
        with (tmp / "a").open("rb") as a, (tmp / "b").open("rb") as b:
            assert module._common_prefix(a.fileno(), b.fileno(), size) == expected
            # asked for more than either holds: what both hold alike
            assert module._common_prefix(a.fileno(), b.fileno(), size + 5) == expected
    finally:
        module.COMPARE_SIZE = was
