"""What only a workspace on PostgreSQL has: a database that is not one, a newer schema, a
read-only session, text PostgreSQL cannot hold. Each refusal leaves the database untouched."""

from __future__ import annotations

import pytest

from engine.store import NewEvent, StoreError
from engine.store.postgres import PostgresEventStore

from .conftest import PostgresBackend, events

pytestmark = pytest.mark.filterwarnings("error")


async def tables(backend: PostgresBackend) -> list[str]:
    rows = await backend.rows(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
    )
    return [name for (name,) in rows]


async def refused(url: str, code: str, **options: object) -> StoreError:
    with pytest.raises(StoreError) as error:
        await PostgresEventStore.open(url, **options)  # type: ignore[arg-type]
    assert error.value.code == code, str(error.value)
    return error.value


async def test_an_empty_database_is_a_workspace_only_when_asked_to_create_one(
    postgres_url: str,
) -> None:
    backend = PostgresBackend(postgres_url)
    await refused(postgres_url, "WORKSPACE_NOT_FOUND")
    await refused(postgres_url, "WORKSPACE_NOT_FOUND", read_only=True)
    assert await tables(backend) == []

    async with await PostgresEventStore.open(postgres_url, create=True) as store:
        await store.append(events("ctx:a", 2))
    assert await tables(backend) == ["checkpoint_chunks", "checkpoints", "events", "pact_workspace"]


async def test_a_database_that_does_not_exist_is_named(postgres_url: str) -> None:
    missing = postgres_url.replace("/test_", "/absent_")
    error = await refused(missing, "WORKSPACE_NOT_FOUND", create=True)
    assert "absent_" in str(error)


async def test_another_application_s_database_is_refused_and_left_alone(
    postgres_url: str,
) -> None:
    backend = PostgresBackend(postgres_url)
    await backend.edit("CREATE TABLE invoices (id integer)")
    await refused(postgres_url, "FOREIGN_DATABASE", create=True)
    assert await tables(backend) == ["invoices"]


async def test_a_newer_schema_is_refused_for_writing_and_for_reading(postgres_url: str) -> None:
    backend = PostgresBackend(postgres_url)
    async with await PostgresEventStore.open(postgres_url, create=True) as store:
        await store.append(events("ctx:a", 3))
    await backend.edit("UPDATE pact_workspace SET schema_version = 99")
    before = await backend.rows("SELECT * FROM events ORDER BY seq")

    error = await refused(postgres_url, "SCHEMA_TOO_NEW")
    assert error.details == {"found_version": 99, "supported_version": 2}
    await refused(postgres_url, "SCHEMA_TOO_NEW", read_only=True)
    assert await backend.rows("SELECT * FROM events ORDER BY seq") == before
    assert await backend.rows("SELECT schema_version FROM pact_workspace") == [(99,)]


async def test_a_read_only_store_reads_and_writes_nothing(postgres_url: str) -> None:
    async with await PostgresEventStore.open(postgres_url, create=True) as store:
        await store.append(events("ctx:a", 3))
        await store.save_checkpoint("tree", 3, b"state")
    async with await PostgresEventStore.open(postgres_url, read_only=True) as looker:
        assert looker.read_only
        assert [e.seq for e in await looker.read()] == [1, 2, 3]
        assert await looker.load_checkpoint("tree") == (3, b"state")
        assert (await looker.verify()).ok
        for write in (
            lambda: looker.append(events("ctx:a", 1)),
            lambda: looker.execute(lambda _seen: events("ctx:a", 1)),
            lambda: looker.save_checkpoint("tree", 3, b"other"),
            lambda: looker.delete_checkpoint("tree"),
        ):
            with pytest.raises(StoreError) as error:
                await write()
            assert error.value.code == "READ_ONLY"
        assert await looker.head() == 3


async def test_text_postgresql_cannot_hold_is_refused_before_anything_is_written(
    postgres_url: str,
) -> None:
    async with await PostgresEventStore.open(postgres_url, create=True) as store:
        for bad in (
            NewEvent("ctx:a\x00", "noted"),
            NewEvent("ctx:a", "noted", actor="\ud800"),
        ):
            with pytest.raises(StoreError) as error:
                await store.append([*events("ctx:a", 1), bad])
            assert error.value.code == "INVALID_EVENT"
            assert error.value.details == {"index": 1}
        assert await store.head() == 0
        # In a payload both are escaped by canonical JSON, and read back as they were.
        [stored] = await store.append([NewEvent("ctx:a", "noted", {"t": "\x00\ud800"})])
        assert (await store.read())[0].payload == stored.payload == {"t": "\x00\ud800"}


async def test_a_password_in_the_url_never_reaches_a_message(postgres_url: str) -> None:
    with_password = postgres_url.replace("postgres@", "postgres:hunter2@").replace(
        "/test_", "/absent_"
    )
    error = await refused(with_password, "WORKSPACE_NOT_FOUND")
    assert "hunter2" not in str(error)
    assert "postgres:***@" in str(error)
