"""The custodian's audit trail of a document, written as Markdown, JSON or CSV: what
``pact-tui doc audit`` prints and the events view's ``x`` writes to a file, the same text.

The rows are ``engine.protocol.audit.AuditTrail``'s, read a page at a time from the workspace
(``Workspace.audit_rows``: the pieces of the trail kept beside the document's checkpoint, then
rows made from the log's events after them), and each format only writes the rows it is
given. The trail is the
custodian's whatever the app shows (viewing as an agent included): every event, unredacted.

- **Markdown** (``md``), for people: a heading, what the trail includes and what it was
  filtered by, then a table of the events (a human override marked ``⚑ override``), and the
  count of events searched and kept.
- **JSON**: one object, ``{"document", "includes", "filter", "fields", "events": [...],
  "searched", "kept", "overrides"}``, one object per event in ``events`` with the fields of
  ``engine.protocol.audit.FIELDS`` (``docs/audit.md`` says what each holds), one a line.
- **CSV**: one header row (``FIELDS``), then one row per event (the csv module's quoting).

Text from the document is made visible on its way into every format (``engine.visible``): no
control character reaches a terminal or a file raw, and a newline in a reason cannot start a
row of its own. A Markdown cell has its ``|`` and Markdown's own characters escaped as well, so
what an agent wrote is read as it was written, never as formatting or a link.
"""

from __future__ import annotations

import abc
import csv
import io
import json
import re
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import orjson

from engine.protocol.audit import FIELDS, AuditRow, EventFilter, iso_time, who_of
from engine.visible import is_visible, visible

if TYPE_CHECKING:
    from engine.workspace import Workspace

Form = Literal["md", "json", "csv"]
FORMS: tuple[Form, ...] = ("md", "json", "csv")
FORM_NAMES: dict[Form, str] = {"md": "Markdown", "json": "JSON", "csv": "CSV"}
SUFFIXES: dict[Form, str] = {"md": ".md", "json": ".json", "csv": ".csv"}
PAGE = 10_000  # events read at a time
INCLUDES = (
    "every event of the document, as its custodian sees it: nothing withheld, whoever's"
    " eyes the app's views were using"
)
OVERRIDE_MARK = "⚑ override"
_CSV_SCALARS: dict[object, str] = {None: "", True: "true", False: "false"}
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~&])")
_CELL, _WITHHELD = "\x1f", "\x1e"  # the unit and record separators: see MarkdownWriter.rows


def form_of(suffix: str, chosen: Form) -> Form:
    """The format a file's suffix says (``.md``, ``.json``, ``.csv``), else the one chosen."""
    found = {s: f for f, s in SUFFIXES.items()} | {".markdown": "md"}
    return found.get(suffix.lower(), chosen)


@dataclass(frozen=True, slots=True)
class Tally:
    """How far the audit got: events searched, kept, and the overrides among those kept."""

    searched: int = 0
    kept: int = 0
    overrides: int = 0


async def audit_chunks(
    ws: Workspace,
    name: str,
    wanted: EventFilter,
    form: Form,
    *,
    described: str = "",
    until: int | None = None,
    progress: Callable[[Tally], None] | None = None,
) -> AsyncIterator[str]:
    """The audit of document ``name`` as ``form``, in pieces to be written in turn: the
    events ``wanted`` keeps (``described``: the filter as the user gave it), up to event
    ``until`` (None: all). ``progress`` is told the tally after each page."""
    writer = WRITERS[form](name, described)
    # Every event's row, from the trail's stored pieces and the log after them: the names of
    # agents come from their joins, so the rows are made from the first event on.
    pages = ws.audit_rows(name, 0, until, PAGE)
    first = await anext(pages, None)  # no such document: DocumentNotFound, nothing written
    yield writer.head()
    searched = kept = overridden = 0
    everything, keeps = wanted.everything, wanted.keeps_row
    async for page in _chained(first, pages):
        searched += len(page)
        rows = page if everything else [row for row in page if keeps(row)]
        kept += len(rows)
        overridden += sum(row.override for row in rows)
        if rows:
            yield writer.rows(rows)
        if progress is not None:
            progress(Tally(searched, kept, overridden))
    yield writer.tail(Tally(searched, kept, overridden))


async def audit_text(
    ws: Workspace,
    name: str,
    wanted: EventFilter,
    form: Form,
    *,
    described: str = "",
    until: int | None = None,
) -> str:
    """The whole audit as one text (what a file export writes). The cyclic collector waits
    meanwhile (``collector_paused``): the pages read and the rows made of them hold no
    cycles, and it would walk each page again and again as it is made (a tenth of the time)."""
    from engine.heap import collector_paused

    with collector_paused():
        return "".join(
            [
                chunk
                async for chunk in audit_chunks(
                    ws, name, wanted, form, described=described, until=until
                )
            ]
        )


async def _chained(
    first: Sequence[AuditRow] | None, rest: AsyncIterator[Sequence[AuditRow]]
) -> AsyncIterator[Sequence[AuditRow]]:
    if first is not None:
        yield first
        async for page in rest:
            yield page


# -- the formats --------------------------------------------------------------------------------
class Writer(abc.ABC):
    """Writes rows in one format; made for one audit (a document, a filter)."""

    def __init__(self, name: str, described: str) -> None:
        self.name = name
        self.described = described

    def head(self) -> str:
        return ""

    @abc.abstractmethod
    def rows(self, rows: Iterable[AuditRow]) -> str:
        """The text of ``rows`` in this format."""

    def tail(self, tally: Tally) -> str:
        return ""


class MarkdownWriter(Writer):
    COLUMNS = ("#", "time (UTC)", "who", "what", "section", "on", "detail", "why", "override")

    def head(self) -> str:
        wanted = f"Filtered by: {_cell(self.described)}." if self.described else "Not filtered."
        return "\n".join(
            [
                f"# Audit of document {_cell(self.name)}",
                "",
                f"Who did what, when and why: {INCLUDES}. Times are UTC.",
                f"{OVERRIDE_MARK} marks a human overriding the protocol or its policy. {wanted}",
                "",
                "| " + " | ".join(self.COLUMNS) + " |",
                "|---:|" + "---|" * (len(self.COLUMNS) - 1),
                "",
            ]
        )

    def rows(self, rows: Iterable[AuditRow]) -> str:
        rows = list(rows)
        # The common case, in one look at the page: no cell holds a character to make
        # visible (else a row holds more than its newline and its cells' separators, or the
        # search finds it), so the page needs only its Markdown escaped, at once. The cells
        # are parted by a control character (``_CELL``, which no cell then holds) until the
        # escaping is done, and a withheld detail is marked by another (``_WITHHELD``).
        text = "".join(
            f"{row.sequence}{_CELL}{row.time}{_CELL}{row.who}{_CELL}{row.type}"
            f"{_CELL}{row.section or ''}{_CELL}{row.subject}"
            f"{_CELL}{_WITHHELD if row.withheld else row.detail}"
            f"{_CELL}{row.why}{_CELL}{OVERRIDE_MARK if row.override else ''}\n"
            for row in rows
        )
        withheld = sum(row.withheld for row in rows)
        if text.count(_CELL) == (len(self.COLUMNS) - 1) * len(rows) and (
            text.count(_WITHHELD) == withheld
        ):
            escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", text).replace(_WITHHELD, "(withheld)")
            text = ("| " + escaped.replace(_CELL, " | ").replace("\n", " |\n| "))[:-2]
            if one_line_each(text, len(rows)):
                return text
        lines = []
        for row in rows:
            cells = (
                str(row.sequence),
                row.time,
                _cell(row.who),
                _cell(row.type),
                _cell(row.section or ""),
                _cell(row.subject),
                "(withheld)" if row.withheld else _cell(row.detail),
                _cell(row.why),
                OVERRIDE_MARK if row.override else "",
            )
            lines.append("| " + " | ".join(cells) + " |\n")
        return "".join(lines)

    def tail(self, tally: Tally) -> str:
        return (
            f"\n{tally.searched:,} events searched, {tally.kept:,} kept,"
            f" {tally.overrides:,} of them overrides.\n"
        )


class JsonWriter(Writer):
    def __init__(self, name: str, described: str) -> None:
        super().__init__(name, described)
        self.first = True

    def head(self) -> str:
        opening = {"document": self.name, "includes": INCLUDES, "filter": self.described}
        head = json.dumps(opening, ensure_ascii=False)[:-1]  # left open: the events follow
        fields = json.dumps(list(FIELDS))
        return visible(f'{head}, "fields": {fields}, "events": [', multiline=True)

    def rows(self, rows: Iterable[AuditRow]) -> str:
        lines = [_json_line(row.record()) for row in rows]
        joined = ",\n".join(lines)
        lead = "\n" if self.first else ",\n"
        self.first = False
        return visible(lead + joined, multiline=True)

    def tail(self, tally: Tally) -> str:
        counts = {"searched": tally.searched, "kept": tally.kept, "overrides": tally.overrides}
        return "\n], " + json.dumps(counts)[1:] + "\n"


class CsvWriter(Writer):
    def head(self) -> str:
        return self._lines([FIELDS])

    def rows(self, rows: Iterable[AuditRow]) -> str:
        rows = list(rows)
        # The common case, in one look at the page: nothing to make visible in any field.
        # Each row unpacked at once (AuditRow's order), not read a field at a time.
        text = self._lines(
            (
                sequence,
                iso_time(at_ms),
                at_ms,
                who_of(actor, actor_kind),
                actor,
                actor_kind,
                event_type,
                section or "",
                subject,
                detail,
                why,
                "true" if override else "false",
            )
            for (
                sequence,
                at_ms,
                event_type,
                actor,
                actor_kind,
                section,
                subject,
                detail,
                why,
                override,
                _,
            ) in rows
        )
        if one_line_each(text, len(rows)):
            return text
        return self._lines(_csv_values(row.record()) for row in rows)

    @staticmethod
    def _lines(rows: Iterable[Iterable[object]]) -> str:
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows(rows)
        return out.getvalue()


WRITERS: dict[Form, Callable[[str, str], Writer]] = {
    "md": MarkdownWriter,
    "json": JsonWriter,
    "csv": CsvWriter,
}


def _cell(text: str) -> str:
    """Text from the document in a Markdown table's cell: one line, nothing raw, read as
    written (its Markdown characters escaped)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", visible(text))


def one_line_each(text: str, rows: int) -> bool:
    """Whether ``text``, written from ``rows`` rows a line each, has nothing to make visible in
    any of its fields: a line a row (no field held a newline), no tab, nothing else."""
    return text.count("\n") == rows and "\t" not in text and is_visible(text, multiline=True)


def _json_line(record: Mapping[str, Any]) -> str:
    try:
        return orjson.dumps(record).decode()
    except TypeError:  # a lone surrogate, which orjson will not write: json escapes it
        return json.dumps(record, ensure_ascii=False)


def _csv_values(record: Mapping[str, Any]) -> list[object]:
    values = [
        _CSV_SCALARS.get(v, v) if v is None or v is True or v is False else v
        for v in record.values()
    ]
    texts = [v for v in values if isinstance(v, str)]
    if visible("".join(texts)) != "".join(texts):  # rare: one look at the row, then each field
        values = [visible(v) if isinstance(v, str) else v for v in values]
    return values
