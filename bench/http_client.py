"""A lean HTTP/1.1 client for the server benchmark's load generator.

httpx spent about twice the server's CPU on the same requests (its request and response
models, header objects, the connection pool), and on a 2-core machine the load generator's
CPU is taken from the server it measures. Here an agent holds one keep-alive connection
(``asyncio.Protocol``), each request is written as bytes in one call, and the answer is read
with httptools' response parser (uvicorn's parser, already a dependency): one request at a time
per connection, no pool, no redirects, no cookies. Bodies are JSON (orjson).
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlencode, urlsplit

import httptools
import orjson


class Answer:
    __slots__ = ("body", "status")

    def __init__(self, status: int, body: bytes) -> None:
        self.status = status
        self.body = body

    def json(self) -> Any:
        return orjson.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


class _Protocol(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.waiter: asyncio.Future[Answer] | None = None
        self.chunks: list[bytes] = []
        self.lost: Exception | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.parser.feed_data(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = exc or ConnectionResetError("the server closed the connection")
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(self.lost)

    # httptools' callbacks
    def on_body(self, body: bytes) -> None:
        self.chunks.append(body)

    def on_message_complete(self) -> None:
        body = b"".join(self.chunks)
        self.chunks = []
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(Answer(self.parser.get_status_code(), body))


class Connection:
    """One keep-alive connection to ``url``; ``await request(...)`` one at a time."""

    def __init__(self, url: str, headers: dict[str, str] | None = None) -> None:
        split = urlsplit(url)
        self.host, self.port = split.hostname or "127.0.0.1", split.port or 80
        fixed = {"host": f"{self.host}:{self.port}", **(headers or {})}
        self._fixed = "".join(f"{k}: {v}\r\n" for k, v in fixed.items()).encode()
        self._protocol: _Protocol | None = None

    async def _connected(self) -> _Protocol:
        if self._protocol is None or self._protocol.lost is not None:
            loop = asyncio.get_running_loop()
            _, protocol = await loop.create_connection(_Protocol, self.host, self.port)
            self._protocol = protocol
        return self._protocol

    async def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
    ) -> Answer:
        protocol = await self._connected()
        if params:
            path = f"{path}?{urlencode(params)}"
        head = f"{method} {path} HTTP/1.1\r\n".encode() + self._fixed
        if json is not None:
            body = orjson.dumps(json)
            head += b"content-type: application/json\r\ncontent-length: %d\r\n" % len(body)
        else:
            body = b""
        waiter: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        protocol.waiter = waiter
        assert protocol.transport is not None
        protocol.transport.write(head + b"\r\n" + body)
        return await waiter

    def close(self) -> None:
        if self._protocol is not None and self._protocol.transport is not None:
            self._protocol.transport.close()
