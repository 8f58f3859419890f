"""The request body limit (413) and the per-key rate limit (429 with ``Retry-After``)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

BODY_LIMIT = 1_048_576  # bytes: a section's Markdown is far smaller


class BodyTooLarge(Exception):
    pass


def error_body(code: str, description: str, **metadata: Any) -> dict[str, Any]:
    """The v0.3 error document (``error-response.json``)."""
    entry: dict[str, Any] = {"code": code, "description": description}
    if metadata:
        entry["metadata"] = metadata
    return {"errors": [entry]}


class BodyLimit:
    """ASGI middleware: a body over ``limit`` bytes gets 413 before any route sees it, whether
    its Content-Length says so or it is sent in chunks."""

    def __init__(self, app: ASGIApp, limit: int = BODY_LIMIT) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            await self._refuse(send)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise BodyTooLarge
            return message

        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited, tracked)
        except BodyTooLarge:
            if not started:
                await self._refuse(send)

    async def _refuse(self, send: Send) -> None:
        import orjson

        body = orjson.dumps(
            error_body(
                "request.too_large",
                f"the request body is over {self.limit} bytes",
                limit=self.limit,
            )
        )
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


@dataclass(slots=True)
class _Bucket:
    tokens: float
    at: float


class RateLimit:
    """A token bucket per key: ``rate`` requests a second, bursts of ``burst``."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self._buckets: dict[str, _Bucket] = {}

    def take(self, who: str) -> float:
        """0 if ``who`` may go on now, else the seconds until it may (nothing is taken)."""
        now = time.monotonic()
        bucket = self._buckets.get(who)
        if bucket is None:
            bucket = self._buckets[who] = _Bucket(float(self.burst), now)
        bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.at) * self.rate)
        bucket.at = now
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            return 0.0
        return (1 - bucket.tokens) / self.rate

    @staticmethod
    def retry_after(seconds: float) -> str:
        return str(max(1, math.ceil(seconds)))
