"""Sections of a Markdown document, and replacing one section's content without breaking the rest.

A document's sections come from its headings, found by markdown-it-py
(``MarkdownIt("commonmark")``), never by matching text: ATX (``## Title``) and setext (``Title``
underlined with ``===`` or ``---``) headings both count; a ``#`` line inside a code fence, an
indented code block or an HTML block is not a heading at all. Decision: only *top-level* headings
make sections (markdown-it tokens with ``level == 0``). A heading inside a block quote
(``> # Quoted``) or a list item (``- # Item``) is part of the quote or the list, so it stays body
text of the section around it; making it a section would split a quote or a list in two.

Lines. A line ends at ``"\\n"``. ``"\\r\\n"`` and a lone ``"\\r"`` are first turned into ``"\\n"``
(markdown-it does the same before it counts lines, so line numbers agree with it), and
:func:`replace_section` returns ``"\\n"``-only text. Other characters Python calls line breaks
(``"\\x0b"``, ``"\\u2028"``, ...) are not line breaks in Markdown and are not here either.

Each section owns the lines from its heading (for a setext heading, the text line) up to the next
heading of any level: its subsections follow it and are not part of its own content. The text
before the first heading is the synthetic section :data:`ROOT`, present even when empty.

Ids. ``sec:`` + the slugs of the heading path joined with ``/``. A heading's parent is the nearest
preceding heading of a lower level, so a skipped level still nests (``# A`` then ``### C`` is
``sec:a/c``). :func:`slug` follows the v0.3 rule with two decisions of this project: any
whitespace (a tab, the line break of a two-line setext heading) counts as a space, and a title
with nothing left (``# ???``, ``# Привет``, an empty ``#``) gets the slug ``section``. The slug is
taken from the title as written, inline Markdown included (``## The `x` *y*`` is ``the-x-y``).
Siblings (same parent) with the same slug get ``-2``, ``-3``, ... in document order; a suffix
already taken by a sibling's own slug (``# A``, ``# A-2``, ``# A``) is skipped, so ids are unique.
That numbering is a document's at its creation only: afterwards an id is an identity, and the
document's fold keeps each section's id through merges (:func:`sibling_ids`, docs/protocol.md),
so a document's ids may differ from what :func:`parse_sections` gives its Markdown.
An id never exceeds the 256 characters v0.3 allows a ``sectionId``: a slug too long for its
place is cut (:func:`heading_id`), so every section stays addressable.

Replacing a section (:func:`replace_section`) splices new content in place of its own lines, then
parses the result again and refuses (:class:`~engine.protocol.errors.InvalidContent`) anything
whose section structure is not exactly the intended one: no section outside the replaced one
changes its content, and the replaced lines hold exactly the proposal's headings.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import InvalidContent, SectionNotFound

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

ROOT = "sec:_root"


# One parser for the module: parse() keeps its state in per-call objects.
@functools.cache
def _markdown() -> MarkdownIt:
    """The CommonMark parser, made on first use: folding a document (loading one, replaying
    its log) parses no Markdown, and need not import the parser. Sections are blocks: the
    inline rules (emphasis, links, code spans inside each paragraph) are left out, as nothing
    here reads what they make; a heading's title is its inline token's ``content``, which the
    block rules fill in. (A 10 MB proposal parsed in 1.9 s, not 10.7 s.)"""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").disable("inline")


# The slug rule works on characters, not on Markdown: a regex is the plain tool for it.
_SLUG_SPACE = re.compile(r"[\s_]")
_SLUG_DROP = re.compile(r"[^a-z0-9-]")
_SLUG_DASHES = re.compile(r"-{2,}")

# What a block that would run past the proposed content is called in a refusal.
_BLOCK_NAMES = {
    "fence": "a code fence that is never closed",
    "html_block": "an HTML block that is not closed",
    "bullet_list_open": "a list",
    "ordered_list_open": "a list",
    "blockquote_open": "a block quote",
    "paragraph_open": "a paragraph",
    "code_block": "an indented code block",
}


@dataclass(frozen=True, slots=True)
class Section:
    """One section of a document. Lines are 0-based; ``end`` is exclusive."""

    id: str
    """``"sec:"`` + the slug path, e.g. ``"sec:budget/line-items"``; :data:`ROOT` for the text
    before the first heading."""
    title: str
    """The heading's inline Markdown as written, stripped; ``""`` for :data:`ROOT`."""
    level: int
    """1 to 6; 0 for :data:`ROOT`."""
    parent: str | None
    """Id of the nearest enclosing section (a lower level); ``None`` at the top and for ROOT."""
    start: int
    """First line of its own content: the heading line (for setext, the text line)."""
    end: int
    """The line after its own content: the next heading's first line, or the line count."""


@dataclass(frozen=True, slots=True)
class Replacement:
    """The outcome of :func:`replace_section`."""

    markdown: str
    """The whole new document (``"\\n"`` line ends)."""
    sections: list[Section]
    """``parse_sections(markdown)``."""
    renamed: dict[str, str]
    """Old id -> new id for every section still there whose id changed: the replaced section and
    its descendants when its title changed, and any section whose id moved because of that or of
    the new subsections (a sibling's duplicate number, a new parent between it and the replaced
    section). An old id may reappear as a new section's id."""
    added: list[str]
    """Ids of the sections the proposal's deeper headings introduced, in document order."""
    removed: list[str]
    """Ids of sections that no longer exist. Always empty: a replacement that would drop or
    swallow a section is refused instead. Kept so every structural change reports alike."""


@dataclass(frozen=True, slots=True)
class _Heading:
    line: int
    level: int
    title: str
    setext: bool


@dataclass(frozen=True, slots=True)
class _Proposal:
    lines: list[str]
    """The normalised content, each line with its ``"\\n"``."""
    headings: list[_Heading]
    """Its headings, lines counted in ``lines``."""
    offset: int
    """How many lines were dropped from the front (leading blank lines before the heading)."""


def slug(title: str) -> str:
    """The v0.3 slug of a heading title: lowercase; whitespace and ``_`` become ``-``; everything
    but ``a-z``, ``0-9`` and ``-`` is dropped; runs of ``-`` collapse; ``-`` is trimmed at both
    ends. A title with nothing left gets ``"section"``."""
    text = _SLUG_SPACE.sub("-", title.lower())
    text = _SLUG_DASHES.sub("-", _SLUG_DROP.sub("", text)).strip("-")
    return text or "section"


# v0.3 caps a sectionId at 256 characters (event.json and every request schema).
MAX_ID = 256
# Room kept for each deeper level a heading's subsections may still use: "/" and 15 characters.
_ROOM_PER_LEVEL = 16
_DEEPEST = 6


def heading_id(parent_id: str | None, level: int, title: str, siblings: set[str]) -> str:
    """The id of a heading at ``level`` under the section ``parent_id`` (None: at the top),
    whose siblings already have the names in ``siblings`` (its own is added to them).

    The name is the heading's slug, numbered ``-2``, ``-3``, ... past a sibling's, as the
    spec page says, unless that would make an id too long to address. Each heading may make
    its id at most ``MAX_ID`` less ``_ROOM_PER_LEVEL`` for every deeper level (a level-1 id up
    to 176 characters, a level-6 one up to 256), so every id, and every id its subsections will
    have, fits. A name that does not fit is cut (before its number, so siblings stay apart);
    ordinary headings are untouched. The cut depends only on the heading and the ids above it,
    so the parser and the document's fold cut alike, and a replay gives the same ids."""
    prefix, room, base = _place(parent_id, level, title)
    number = 1
    while True:
        name = _name(base, room, number)
        if name not in siblings:
            siblings.add(name)
            return prefix + name
        number += 1


def fits(section_id: str, parent_id: str | None, level: int, title: str) -> bool:
    """Whether ``section_id`` is an id :func:`heading_id` can give this heading under
    ``parent_id``: the parent's id, then the heading's slug, bare or numbered (cut alike)."""
    prefix, room, base = _place(parent_id, level, title)
    if not section_id.startswith(prefix):
        return False
    name = section_id[len(prefix) :]
    if name == _name(base, room, 1):
        return True
    _, dash, number = name.rpartition("-")
    if not dash or not (number.isascii() and number.isdigit()) or number.startswith("0"):
        return False
    return int(number) >= 2 and name == _name(base, room, int(number))


def sibling_ids(
    parent_id: str | None,
    siblings: list[tuple[int, str, int, str]],
    reserved: Mapping[str, int] | None = None,
) -> list[str]:
    """The ids of the sections directly under ``parent_id`` (None: at the top), each given as
    (its key; its id so far, ``""`` for a new one; level; title), in document order.

    An id is an identity: a section keeps the id it has while that id still :func:`fits` its
    heading path (its parent's id and its own title's slug). The others, new sections and
    sections whose title or parent's id changed, then take the first free name in document
    order: the slug, else ``-2``, ``-3``, ... A name is free if no sibling has it and the id
    is not in ``reserved`` (id → key) under another section's key. At a document's creation no
    section has an id and nothing is reserved: siblings are numbered in document order, as
    :func:`heading_id` numbers them for the parser."""
    reserved = reserved or {}
    kept = [bool(old) and fits(old, parent_id, level, title) for _, old, level, title in siblings]
    start = len(parent_id) + 1 if parent_id else len("sec:")
    taken = {row[1][start:] for row, keep in zip(siblings, kept, strict=True) if keep}
    ids = []
    for (key, old, level, title), keep in zip(siblings, kept, strict=True):
        if keep:
            ids.append(old)
            continue
        prefix, room, base = _place(parent_id, level, title)
        number = 1
        while (name := _name(base, room, number)) in taken or reserved.get(
            prefix + name, key
        ) != key:
            number += 1
        taken.add(name)
        ids.append(prefix + name)
    return ids


def _place(parent_id: str | None, level: int, title: str) -> tuple[str, int, str]:
    """A heading's id prefix, the room its name has, and its slug."""
    prefix = f"{parent_id}/" if parent_id else "sec:"
    return prefix, MAX_ID - (_DEEPEST - level) * _ROOM_PER_LEVEL - len(prefix), slug(title)


def _name(base: str, room: int, number: int) -> str:
    """The ``number``-th name of the slug ``base`` (1: the slug itself), cut to ``room``."""
    suffix = f"-{number}" if number > 1 else ""
    if len(base) + len(suffix) <= room:
        return base + suffix
    return base[: max(room - len(suffix), 1)].rstrip("-") + suffix


def parse_sections(markdown: str) -> list[Section]:
    """The document's sections in document order, :data:`ROOT` first (``start == end == 0``
    when the document starts with a heading)."""
    text = _normalise(markdown)
    return _sections(_headings(_markdown().parse(text)), len(_split(text)))


def section_content(markdown: str, section: Section) -> str:
    """The section's own lines (``start`` to ``end``), ending in ``"\\n"`` unless empty."""
    return _join(_split(_normalise(markdown))[section.start : section.end])


def content_at(markdown: str, section_id: str) -> str:
    """The own content of the section ``section_id``; :class:`SectionNotFound` if it has none."""
    text = _normalise(markdown)
    lines = _split(text)
    section = _find(_sections(_headings(_markdown().parse(text)), len(lines)), section_id)
    return _join(lines[section.start : section.end])


def check_content(section: Section, content: str) -> None:
    """Refuse (:class:`InvalidContent`) proposed content that cannot stand for ``section``.

    Content for a heading section must start (first non-blank line) with a heading of exactly the
    section's level, and may hold deeper headings after it (they become new subsections), but no
    heading of the same or a higher level. Content for :data:`ROOT` holds no heading at all. Empty
    or blank content is refused. Line numbers in the description count from 1 in ``content``.
    """
    _proposal(section, content)


def replace_section(markdown: str, section_id: str, content: str) -> Replacement:
    """Put ``content`` in place of the own lines of ``section_id``; its subsections stay after it.

    The content is checked (:func:`check_content`) and normalised: blank lines before its heading
    are dropped (they would belong to the section before), and it ends with a line break (the
    document's last line gains one too). Blank lines the content ends with are kept, so putting a
    section's own content back gives the same document. If the content's last line would run
    into the next heading (a paragraph line, a list or an HTML block before a setext or indented
    heading), one blank line is added after the content.

    The result is parsed again and must keep every other section's content exactly, with only
    the proposal's headings in the replaced lines. Otherwise :class:`InvalidContent` names the
    line of the content that breaks it: a code fence or an HTML block left open (it would swallow
    the sections after), or a setext heading that would join the text ending the section before
    (only an ATX heading can follow it). The document is never changed half-way.

    Unknown ``section_id``: :class:`SectionNotFound`.
    """
    text = _normalise(markdown)
    lines = _split(text)
    old = _sections(_headings(_markdown().parse(text)), len(lines))
    target = _find(old, section_id)
    proposal = _proposal(target, content)
    attempts = [proposal]
    if proposal.lines[-1].strip(" \t\n") and target.end < len(lines):
        attempts.append(dataclasses.replace(proposal, lines=[*proposal.lines, "\n"]))
    candidate = text
    for attempt in attempts:
        candidate = _join([*lines[: target.start], *attempt.lines, *lines[target.end :]])
        result = _verified(lines, old, target, attempt, candidate)
        if result is not None:
            return result
    raise _refusal(target, attempts[-1], candidate)


# -- parsing -------------------------------------------------------------------------------------


def _normalise(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _split(text: str) -> list[str]:
    """Lines as markdown-it counts them, each keeping its ``"\\n"`` (the last one may lack it)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _join(lines: list[str]) -> str:
    text = "".join(lines)
    return text if not text or text.endswith("\n") else text + "\n"


def _headings(tokens: list[Token]) -> list[_Heading]:
    headings = []
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.level == 0 and token.map is not None:
            title = tokens[index + 1].content.strip()
            setext = token.markup in ("=", "-")
            headings.append(_Heading(token.map[0], int(token.tag[1:]), title, setext))
    return headings


def _sections(headings: list[_Heading], line_count: int) -> list[Section]:
    first = headings[0].line if headings else line_count
    sections = [Section(ROOT, "", 0, None, 0, first)]
    ancestors: list[Section] = []  # the last heading and its enclosing ones, levels increasing
    taken: dict[str | None, set[str]] = {}  # parent id -> slugs its children already use
    for index, heading in enumerate(headings):
        while ancestors and ancestors[-1].level >= heading.level:
            ancestors.pop()
        parent = ancestors[-1].id if ancestors else None
        siblings = taken.setdefault(parent, set())
        made = heading_id(parent, heading.level, heading.title, siblings)
        end = headings[index + 1].line if index + 1 < len(headings) else line_count
        section = Section(made, heading.title, heading.level, parent, heading.line, end)
        sections.append(section)
        ancestors.append(section)
    return sections


def _find(sections: list[Section], section_id: str) -> Section:
    for section in sections:
        if section.id == section_id:
            return section
    raise SectionNotFound(f"the document has no section {section_id!r}", section_id=section_id)


# -- checking and replacing ----------------------------------------------------------------------


def _describe(heading: _Heading) -> str:
    return f"a level-{heading.level} heading ({heading.title!r})"


def _proposal(section: Section, content: str) -> _Proposal:
    text = _normalise(content)
    tokens = _markdown().parse(text)
    blocks = [token.map[0] for token in tokens if token.level == 0 and token.map is not None]
    if not text.strip() or not blocks:
        raise InvalidContent(
            f"the proposed content for {section.id} is empty", section_id=section.id
        )
    headings = _headings(tokens)
    lines = _split(text)
    lines[-1] = lines[-1] if lines[-1].endswith("\n") else lines[-1] + "\n"
    if section.id == ROOT:
        if headings:
            first = headings[0]
            raise InvalidContent(
                f"line {first.line + 1} of the proposed content is {_describe(first)}: the text "
                "before the first heading (sec:_root) cannot hold a heading",
                section_id=section.id,
                line=first.line + 1,
            )
        return _Proposal(lines, headings, 0)
    first_line = blocks[0]
    if not headings or headings[0].line != first_line:
        raise InvalidContent(
            f"line {first_line + 1} of the proposed content is not a heading: content for "
            f"{section.id} must start with a level-{section.level} heading",
            section_id=section.id,
            line=first_line + 1,
        )
    if headings[0].level != section.level:
        raise InvalidContent(
            f"line {first_line + 1} of the proposed content is {_describe(headings[0])}: content "
            f"for {section.id} must start with a level-{section.level} heading",
            section_id=section.id,
            line=first_line + 1,
        )
    deeper = (
        f"only deeper headings (level {section.level + 1} or more)"
        if section.level < 6
        else "no other heading (level 6 is the deepest)"
    )
    for heading in headings[1:]:
        if heading.level <= section.level:
            raise InvalidContent(
                f"line {heading.line + 1} of the proposed content is {_describe(heading)}: after "
                f"its own heading, content for {section.id} may hold {deeper}, since this one "
                "would start another section",
                section_id=section.id,
                line=heading.line + 1,
            )
    dropped = [
        _Heading(heading.line - first_line, heading.level, heading.title, heading.setext)
        for heading in headings
    ]
    return _Proposal(lines[first_line:], dropped, first_line)


def _verified(
    old_lines: list[str],
    old: list[Section],
    target: Section,
    proposal: _Proposal,
    candidate: str,
) -> Replacement | None:
    """The replacement, if ``candidate`` parses to exactly the intended sections, else None."""
    lines = _split(candidate)
    new = _sections(_headings(_markdown().parse(candidate)), len(lines))
    at = old.index(target)
    added = max(len(proposal.headings) - 1, 0)
    if len(new) != len(old) + added:
        return None
    pairs = [(before, new[i if i <= at else i + added]) for i, before in enumerate(old)]
    for before, after in pairs:
        if before is target:
            continue
        kept = _join(old_lines[before.start : before.end])
        if (after.level, after.title, _join(lines[after.start : after.end])) != (
            before.level,
            before.title,
            kept,
        ):
            return None
    replaced = new[at : at + added + 1]
    first, last = replaced[0].start, replaced[-1].end
    if first != target.start or _join(lines[first:last]) != _join(proposal.lines):
        return None
    # Implied by the checks above today (what follows a top-level heading parses the same
    # wherever it stands), checked because it is the promise: exactly the proposal's headings.
    if target.id != ROOT:
        for section, heading in zip(replaced, proposal.headings, strict=True):
            expected = (heading.level, heading.title, target.start + heading.line)
            if (section.level, section.title, section.start) != expected:
                return None
    return Replacement(
        markdown=candidate,
        sections=new,
        renamed={before.id: after.id for before, after in pairs if before.id != after.id},
        added=[section.id for section in replaced[1:]],
        removed=[],
    )


def _refusal(target: Section, proposal: _Proposal, candidate: str) -> InvalidContent:
    """Why ``candidate`` (the proposal spliced in) does not parse to the intended sections."""
    blocks = [
        (token, token.map)
        for token in _markdown().parse(candidate)
        if token.level == 0 and token.map is not None
    ]

    def covering(line: int) -> tuple[Token, list[int]] | None:
        return next(((t, span) for t, span in blocks if span[0] <= line < span[1]), None)

    def numbered(line: int) -> int:  # a document line as a line of the content as proposed
        return line - target.start + proposal.offset + 1

    if target.id != ROOT:
        block = covering(target.start)
        if block is None or block[0].type != "heading_open" or block[1][0] != target.start:
            heading = proposal.headings[0]
            if heading.setext:
                atx = "#" * heading.level + " " + " ".join(heading.title.split())
                how = (
                    "a setext heading cannot follow a line of text without a blank line between "
                    f"them; write it as an ATX heading ({atx})"
                )
            else:
                how = "it would become part of the block before it; write it without indentation"
            line = numbered(target.start)
            return InvalidContent(
                f"line {line} of the proposed content: the heading would not start a section "
                f"here, {how}",
                section_id=target.id,
                line=line,
            )
    after = target.start + len(proposal.lines)
    block = covering(after)
    if block is not None and target.start <= block[1][0] < after:
        line = numbered(block[1][0])
        name = _BLOCK_NAMES.get(block[0].type, "a block")
        return InvalidContent(
            f"line {line} of the proposed content opens {name}: it would take in the heading "
            f"that follows the content of {target.id}, and the sections after it",
            section_id=target.id,
            line=line,
        )
    return InvalidContent(
        f"the proposed content would change sections other than {target.id}",
        section_id=target.id,
    )
