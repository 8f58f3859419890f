"""The hash-chain loop in C (_chain_c.c); engine.store.chain decides whether to use it."""

from collections.abc import Sequence

from engine.store.base import NewEvent, StoredEvent

SHA_EXTENSIONS: bool  # whether sha256_hex uses the CPU's SHA instructions

def link(
    events: Sequence[NewEvent],
    payloads: Sequence[str],
    seq: int,
    prev_hash: str,
    now_ns: int,
    stream_lengths: dict[str, int],
    stored_type: type[StoredEvent],
    /,
) -> tuple[list[StoredEvent], list[tuple[int, str, int, str, int, str, str, str, str]]]: ...
def sha256_hex(data: bytes, /, portable: bool = False) -> str: ...
def plain_json_types(value: object, /) -> bool: ...
