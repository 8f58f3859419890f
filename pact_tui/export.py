"""What the inspector exports to a file, as JSON or Markdown: the provider rendering, a diff,
the changelog of the step shown. Pure text from engine values; the screen asks for the path
and writes it (``pact_tui.files.write_atomically``).

JSON is the engine's own form, so a script reads an export as it reads ``ctx`` output: the
provider rendering is ``render_provider_json`` (canonical JSON), a diff ``Diff.to_dict`` (the
spec's form) with the two ends named, the changelog ``StepChanges.to_json``.

Markdown is for people: a title saying what and when, then each message (or change) in turn. A
message's text is put in a fenced block whose fence is longer than any run of backticks in it,
so that the text reads back exactly as it was; text from the workspace in a heading or a list
line is made visible (one line, no control characters).

A gptme conversation (``ctx export --gptme DIR``) is the provider rendering as gptme 0.35.1's
master log: a ``conversation.jsonl`` of one message a line, in the order the model reads them,
each written as gptme writes one (``engine.masterlog.lines.encode_message``); the folder is
written whole (``pact_tui.files.write_folder_atomically``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from engine.visible import visible

from .provider import char_count, provider_items, provider_totals, token_estimate

if TYPE_CHECKING:
    from engine.context import ContextView, Diff
    from engine.masterlog.lines import Message
    from engine.workspace import StepChanges

Format = Literal["json", "markdown"]
SUFFIXES: dict[Format, str] = {"json": ".json", "markdown": ".md"}
PREVIEW = 60  # characters of an item's text on a line of a diff


@dataclass(frozen=True, slots=True)
class Where:
    """Which context, and when: live, or a snapshot (its id and episode)."""

    context: str
    episode: int
    snapshot: str | None = None
    name: str | None = None  # as the screen names it: "n21 (base)", "e6 held", "live"

    def describe(self) -> str:
        when = self.name or (f"snapshot {self.snapshot}" if self.snapshot else "live")
        return f"context {visible(self.context)}, episode {self.episode} ({visible(when)})"

    def slug(self) -> str:
        """For a file name: ``researcher-e6`` or ``researcher-n41``."""
        name = re.sub(r"[^\w.-]+", "_", self.context).strip("._") or "context"
        return f"{name}-{self.snapshot or f'e{self.episode}'}"


def format_of(path: Path, chosen: Format) -> Format:
    """The format a path's suffix says (``.json``, ``.md``), else the one chosen."""
    suffix = path.suffix.lower()
    if suffix == ".json":
        return "json"
    if suffix in (".md", ".markdown"):
        return "markdown"
    return chosen


def _fenced(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


# -- the provider rendering -----------------------------------------------------------------------
def provider_json(view: ContextView) -> str:
    return view.render_provider_json() + "\n"


def provider_markdown(view: ContextView, where: Where) -> str:
    totals = provider_totals(view)
    parts = [
        f"# What the model is sent: {where.describe()}",
        "",
        f"{totals.describe()} (tokens estimated as characters ÷ 4)",
    ]
    places = view.iter_items()  # the same order: (item, depth, slot, offset)
    for number, (role, item) in enumerate(provider_items(view), start=1):
        _item, depth, slot, offset = next(places)
        chars = char_count(item)
        parts += [
            "",
            f"## {number}. {visible(role, limit=40)} ({depth},{slot.position},{offset}) · "
            f"{chars:,} chars · ~{token_estimate(chars):,} tokens",
            "",
            _fenced(item.text()),
        ]
    return "\n".join(parts) + "\n"


# -- a gptme conversation ------------------------------------------------------------------------
# gptme's message fields an item imported from gptme carries in ``source.message``, with the
# type gptme reads each as; another key, or one of another type, is not written (gptme drops
# keys it does not know, and a wrong type would fail its Message).
GPTME_FIELDS: dict[str, type | tuple[type, ...]] = {
    "pinned": bool,
    "hide": bool,
    "ui_only": bool,
    "ephemeral_ttl": int,
    "call_id": str,
    "metadata": dict,
}


# gptme's MessageMetadata and UsageData fields in the order gptme declares them, which is the
# order it sets and writes them in; the workspace stores a dict with its keys sorted.
GPTME_METADATA = (
    "model",
    "resolved_model",
    "served_model",
    "cost",
    "usage",
    "input_log_messages",
    "input_log_digest",
    "input_log_model",
    "compaction_reminder_view",
    "compaction_checkpoint_view",
    "compaction_checkpoint_failed_view",
    "compaction_checkpoint_needs_continuation",
    "result_stubs",
    "max_steps_stop",
)
GPTME_USAGE = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")


def gptme_messages(view: ContextView) -> list[Message]:
    """The messages of ``view`` as gptme's master log holds them: each provider message's role
    and text, and its time (the item's creation, as gptme writes times: ISO 8601, naive local
    time). An item imported from a gptme log (``source`` ``{"from": "gptme", "message": …}``)
    keeps its own timestamp and gptme's fields (:data:`GPTME_FIELDS`)."""
    from engine.masterlog.lines import Message  # the master-log reader: loaded for an export

    messages = []
    for role, item in provider_items(view):
        kept = _gptme_fields(item.data)
        timestamp = kept.pop("timestamp", None) or _local_time(item.created_at_ns)
        messages.append(Message(role, item.text(), timestamp, kept))
    return messages


def gptme_files(messages: list[Message]) -> dict[str, bytes]:
    """The files of a gptme conversation folder holding ``messages``: its master log."""
    from engine.masterlog.conversation import MASTER
    from engine.masterlog.lines import encode_message

    return {MASTER: b"".join(encode_message(message.to_json()) for message in messages)}


def _local_time(ns: int) -> str:
    seconds, rest = divmod(ns, 1_000_000_000)
    return datetime.fromtimestamp(seconds).replace(microsecond=rest // 1_000).isoformat()


def _gptme_fields(data: dict[str, Any] | None) -> dict[str, Any]:
    source = (data or {}).get("source")
    if not isinstance(source, dict) or source.get("from") != "gptme":
        return {}
    message = source.get("message")
    if not isinstance(message, dict):
        return {}
    kept: dict[str, Any] = {}
    timestamp = message.get("timestamp")
    if isinstance(timestamp, str):
        try:
            datetime.fromisoformat(timestamp)
        except ValueError:
            pass  # gptme could not read it: the item's own time instead
        else:
            kept["timestamp"] = timestamp
    for name, kind in GPTME_FIELDS.items():
        value = message.get(name)
        if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
            kept[name] = value
    if "metadata" in kept:
        metadata = _in_order(kept["metadata"], GPTME_METADATA)
        if isinstance(metadata.get("usage"), dict):
            metadata["usage"] = _in_order(metadata["usage"], GPTME_USAGE)
        kept["metadata"] = metadata
    return kept


def _in_order(fields: dict[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    """``fields`` with the names of ``order`` first, in that order, then the others."""
    known = {name: fields[name] for name in order if name in fields}
    return {**known, **{name: value for name, value in fields.items() if name not in known}}


# -- a diff ---------------------------------------------------------------------------------------
def diff_json(diff: Diff, older: Where, newer: Where) -> str:
    data = {"context": older.context, "older": _end(older), "newer": _end(newer), **diff.to_dict()}
    return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n"


def _end(where: Where) -> dict[str, object]:
    return {"snapshot": where.snapshot, "episode": where.episode}


def diff_markdown(
    diff: Diff, older: Where, newer: Where, older_view: ContextView, newer_view: ContextView
) -> str:
    """Each change with its coordinates, key and the start of its text: the added and changed
    items as the newer state has them, the removed ones as the older had them."""
    added, removed, changed = diff.counts
    parts = [
        f"# Diff of {visible(older.context)}",
        "",
        f"From {older.describe()} to {newer.describe()}: "
        f"+{added} added · -{removed} removed · ~{changed} changed",
    ]
    new_lines = _lines(newer_view, {*diff.added, *(change.id for change in diff.changed)})
    old_lines = _lines(older_view, set(diff.removed))
    if diff.added:
        parts += ["", "## Added", "", *(f"- {new_lines[i]}" for i in diff.added)]
    if diff.removed:
        parts += ["", "## Removed", "", *(f"- {old_lines[i]}" for i in diff.removed)]
    if diff.changed:
        parts += ["", "## Changed", ""]
        for change in diff.changed:
            what = [*change.fields]
            what += [f"{name} {a} → {b}" for name, (a, b) in change.moves().items()]
            parts.append(f"- {new_lines[change.id]}: {', '.join(what)}")
    return "\n".join(parts) + "\n"


def _lines(view: ContextView, ids: set[str]) -> dict[str, str]:
    """``(3,0,0) n8 #key "start of its text…"`` for each of ``ids`` in ``view``: one walk."""
    out: dict[str, str] = {}
    if not ids:
        return out
    for item, depth, slot, offset in view.iter_items():
        if item.id in ids:
            key = f" #{visible(item.key, limit=80)}" if item.key else ""
            head = item.text_head(PREVIEW + 1).replace("\n", " ")
            head = head if len(head) <= PREVIEW else head[: PREVIEW - 1] + "…"
            text = visible(json.dumps(head, ensure_ascii=False))
            out[item.id] = f"({depth},{slot.position},{offset}) `{visible(item.id)}`{key} {text}"
    return out


# -- the changelog --------------------------------------------------------------------------------
def changelog_json(step: StepChanges) -> str:
    """The engine's own form (``StepChanges.to_json``): which step, and every event's
    changelog."""
    return json.dumps(step.to_json(), ensure_ascii=False, indent=2, sort_keys=True) + "\n"


def changelog_markdown(step: StepChanges, where: Where) -> str:
    """Which step, what it did in a line, then every change (a mass move as one line with
    what it listed under it), each event under its own heading."""
    from engine.context.changelog import lines_of

    parts = [
        f"# What happened: {where.describe()}",
        "",
        visible(step.title()),
        "",
        visible(step.summary()) or "nothing changed",
    ]
    for event in step.events:
        parts += ["", f"## Event {event.seq} ({visible(event.type)})", ""]
        lines = lines_of([event.changelog])
        parts += [_bullet(line) for line in lines] or ["nothing changed"]
    return "\n".join(parts) + "\n"


def _bullet(line: str) -> str:
    """A changelog line as a list item (one indented under a mass move stays under it)."""
    indent = len(line) - len(line.lstrip(" "))
    return f"{' ' * indent}- {visible(line.strip())}"
