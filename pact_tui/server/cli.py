"""``pact-tui serve`` and ``pact-tui key``: the HTTP server, and its custodians' API keys."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from engine.visible import visible

from ..commandline import echo, emit, fail, whole_int

DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8080


def _serve(args: argparse.Namespace) -> int:
    """``pact-tui serve``: until SIGINT or SIGTERM; one line and status 1 if it cannot start."""
    from engine.context import ContextError
    from engine.store import StoreError
    from engine.store.opening import is_url, where_shown

    from .live import FeedFailed
    from .run import CannotServe, serve

    where = visible(str(where_shown(args.workspace)))

    def ready(url: str) -> None:
        echo(f"Serving {where} at {url} (PACT v0.3: {url}/api/pact/DOC/…); Ctrl+C stops")
        import sys

        sys.stdout.flush()

    try:
        asyncio.run(
            serve(
                args.workspace if is_url(args.workspace) else Path(args.workspace),
                host=args.host,
                port=args.port,
                ready=ready,
                invite_only=args.invite_only,
                rate=args.rate,
            )
        )
    except (CannotServe, FeedFailed) as error:
        fail(args, str(error), error.to_dict())
        return 1
    except (ContextError, StoreError) as error:
        fail(args, str(error), error.to_dict())
        return 1
    except KeyboardInterrupt:
        fail(args, "interrupted", {"code": "INTERRUPTED"})
        return 1
    echo("Stopped")
    return 0


async def _key_create(args: argparse.Namespace) -> None:
    from engine.keys import key_hash

    from ..tap import _name, _open

    human = _name("--human", args.human)
    if human is None:
        from engine.protocol.errors import InvalidRequest

        raise InvalidRequest("a custodian key acts as a human: give --human NAME", field="human")
    async with await _open(args, read_only=False) as ws:
        key = await ws.create_custodian_key(human=human, label=args.label)
    key_id = key_hash(key)[:12]
    data = {"key": key, "keyId": key_id, "human": human, "label": args.label}
    emit(
        args,
        data,
        f"custodian key {key_id} for human {visible(human)!r} (shown this once):\n{key}",
    )


def _key_rows(keys: dict[str, Any], docs: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    from engine.protocol.decide import iso

    rows: list[dict[str, Any]] = [
        {
            "keyId": k.key_id,
            "kind": "custodian",
            "human": k.human,
            "label": k.label,
            "document": None,
            "agent": None,
            "createdAt": iso(k.created_ms),
            "state": "active" if k.active else "revoked",
        }
        for k in keys.values()
    ]
    for name, doc in docs:
        for agent in doc.agents.values():
            if agent.key_hash is None:
                continue
            rows.append(
                {
                    "keyId": agent.key_hash[:12],
                    "kind": "agent",
                    "human": None,
                    "label": None,
                    "document": name,
                    "agent": agent.name,
                    "createdAt": iso(agent.joined_ms),
                    "state": "active" if agent.active else (agent.gone or "gone"),
                }
            )
    return rows


async def _key_list(args: argparse.Namespace) -> None:
    from ..tap import _open

    async with await _open(args, read_only=True) as ws:
        keys = await ws.custodian_keys()
        docs = [(n, (await ws.load_document(n)).doc) for n in await ws.document_names()]
    rows = _key_rows(keys, docs)
    lines = [
        f"{r['keyId']}  {r['kind']:<9} {r['state']:<8} "
        + (
            f"human {visible(r['human'])}" + (f"  ({visible(r['label'])})" if r["label"] else "")
            if r["kind"] == "custodian"
            else f"agent {visible(r['agent'])} on {visible(r['document'])}"
        )
        for r in rows
    ]
    emit(args, rows, "\n".join(lines) or "no keys")


async def _key_revoke(args: argparse.Namespace) -> None:
    """Revoke a key by its id (or a unique prefix of 6 digits or more): a custodian's is
    revoked in the ``keys`` stream; an agent's by removing its agent from its document."""
    from engine.protocol.commands import Actor
    from engine.protocol.errors import InvalidRequest, NotFound

    from ..tap import _name, _open

    human = _name("--human", args.human)
    if human is None:
        raise InvalidRequest("a key is revoked by a human: give --human NAME", field="human")
    given = args.key.strip().lower()
    if len(given) < 6 or any(c not in "0123456789abcdef" for c in given):
        raise InvalidRequest(
            f"KEY {args.key!r}: a key's id, as `key list` shows it (6 hex digits or more)",
            field="key",
        )
    async with await _open(args, read_only=False) as ws:
        keys = await ws.custodian_keys()
        found: list[tuple[str, str, str | None]] = [
            ("custodian", h, None) for h, k in keys.items() if h.startswith(given) and k.active
        ]
        for name in await ws.document_names():
            doc = (await ws.load_document(name)).doc
            found += [
                ("agent", a.name, name)
                for a in doc.agents.values()
                if a.key_hash is not None and a.key_hash.startswith(given) and a.active
            ]
        if not found:
            raise NotFound(f"no active key {given!r} (see `pact-tui key list`)", key=given)
        if len(found) > 1:
            raise InvalidRequest(
                f"KEY {given!r} names {len(found)} keys: give more digits",
                code="request.ambiguous_id",
                key=given,
            )
        kind, which, document = found[0]
        if kind == "custodian":
            await ws.revoke_custodian_key(which, human=human, why=args.why)
            data = {"revoked": which[:12], "kind": kind}
            text = f"revoked custodian key {which[:12]}"
        else:
            assert document is not None
            why = args.why or "its API key was revoked"
            command = {"op": "remove", "agent": which, "why": why}
            await ws.run_document(document, command, Actor.human(human))
            data = {"revoked": given, "kind": kind, "agent": which, "document": document}
            text = f"revoked agent {visible(which)}'s key on {visible(document)} (agent removed)"
    emit(args, data, text)


def _port(text: str) -> int:
    value = whole_int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, not {value}")
    return value


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    serving = commands.add_parser(
        "serve",
        parents=[common],
        help="serve the workspace's documents to agents: the PACT v0.3 HTTP API",
        description="Serve WORKSPACE's documents over HTTP (PACT v0.3, docs/server.md): agents"
        " join and get an API key; custodians use keys made with `pact-tui key create`.",
    )
    serving.add_argument("workspace", help="the workspace file")
    serving.add_argument("--host", default=DEFAULT_HOST, help=f"default {DEFAULT_HOST}")
    serving.add_argument(
        "--port", type=_port, default=DEFAULT_PORT, help=f"default {DEFAULT_PORT}; 0: any free"
    )
    serving.add_argument(
        "--invite-only", action="store_true", help="agents join only with an invite token"
    )
    serving.add_argument(
        "--rate", type=float, help="requests a second per key (default 50, bursts of twice it)"
    )
    serving.set_defaults(sync=_serve)

    key = commands.add_parser("key", help="custodians' API keys for `pact-tui serve`")
    sub = key.add_subparsers(dest="key_command", required=True, metavar="ACTION")
    create = sub.add_parser("create", parents=[common], help="make a custodian key (shown once)")
    create.add_argument("workspace", help="the workspace file")
    create.add_argument("--human", required=True, help="the human the key acts as")
    create.add_argument("--label", help="what the key is for")
    create.set_defaults(handler=_key_create)
    listing = sub.add_parser("list", parents=[common], help="every key: custodians' and agents'")
    listing.add_argument("workspace", help="the workspace file")
    listing.set_defaults(handler=_key_list)
    revoke = sub.add_parser("revoke", parents=[common], help="revoke a key at once")
    revoke.add_argument("workspace", help="the workspace file")
    revoke.add_argument("key", metavar="KEY", help="the key's id (as `key list` shows it)")
    revoke.add_argument("--human", required=True, help="the human revoking it")
    revoke.add_argument("--why")
    revoke.set_defaults(handler=_key_revoke)
