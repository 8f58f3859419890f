"""Parse selector strings into the AST of ``selector_ast`` (spec §6, ``docs/selectors.md``).

The parser is a hand-written scanner rather than a regex or a parser library for two reasons:
selectors are parsed on hot paths (every ``context["d0, 1, 0"]``), and every error has to name
the exact character a human would put a caret under, which the TUI draws.

Every failure is an ``InvalidSelector`` whose ``token`` is always ``selector[position:position +
len(token)]``: ``''`` at the end of the input, the unterminated rest for an unclosed ``(``,
``[`` or quote (the position is the opener), otherwise the offending text itself.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal, NoReturn

from engine.canonical import INT_MAX, INT_MIN, lone_surrogate
from engine.context.errors import InvalidSelector
from engine.context.selector_ast import (
    Attr,
    Complex,
    Compound,
    Coord,
    Exact,
    Flag,
    HasTag,
    KeyIs,
    Op,
    Part,
    Region,
    Selector,
    Simple,
    Span,
    Star,
    Time,
    TypeIs,
    Value,
)

__all__ = ["check_input_selector", "parse_selector", "parse_selector_uncached"]

_DIGITS = frozenset("0123456789")
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_NAME_CHARS = _LETTERS | _DIGITS | {"_"}  # region names; also the first char of an IDENT
_IDENT_CHARS = _NAME_CHARS | {"-", ".", ":"}
_SIMPLE_START = frozenset("^#+.[")
_QUOTES = frozenset("'\"")
# Python refuses int() on very long digit strings (sys.int_info); stop well before that.
_MAX_DIGITS = 100

_REGIONS: dict[str, Literal["sys", "ah", "seq"]] = {"sys": "sys", "ah": "ah", "seq": "seq"}
_FLAGS: dict[str, Literal["permanent", "temporary", "sticky", "cyclic"]] = {
    "permanent": "permanent",
    "temporary": "temporary",
    "sticky": "sticky",
    "cyclic": "cyclic",
}
# Two-character operators first so '<=' is not read as '<' followed by '='.
_OPS: tuple[tuple[str, Op], ...] = (
    ("!=", "!="),
    ("<=", "<="),
    (">=", ">="),
    ("=", "="),
    ("<", "<"),
    (">", ">"),
)
_KEYWORDS: dict[str, Value] = {"null": None, "true": True, "false": False}
_ROLES = ("depth", "position", "offset")
_STAR = Star()
# The AST is frozen, so the common parts can be shared: saves an allocation per part.
_EXACT = {value: Exact(value) for value in range(-16, 65)}

_TERM_HINT = "a coordinate or a selector term (^region, #key, +tag, .type, [attr])"


class _Parser:
    """One parse of one string: ``i`` is the cursor, ``opener`` the innermost open ``(``/``[``."""

    __slots__ = ("i", "in_range", "n", "opener", "text")

    def __init__(self, text: str, *, in_range: bool = False) -> None:
        self.text = text
        self.n = len(text)
        self.i = 0
        self.opener = -1
        self.in_range = in_range  # refuse integers outside the engine's range

    # -- errors -------------------------------------------------------------------------------

    def fail(self, reason: str, position: int, end: int | None = None) -> NoReturn:
        """Raise with ``token = text[position:end]`` (``end`` defaults to the token there)."""
        if end is None:
            end = self.token_end(position)
        raise InvalidSelector(
            reason, selector=self.text, position=position, token=self.text[position:end]
        )

    def fail_expected(self, reason: str, position: int) -> NoReturn:
        """``reason`` at ``position``, or "unterminated" at the opener if the input ran out."""
        if position >= self.n and self.opener >= 0:
            self.fail_unterminated()
        self.fail(reason, position)

    def fail_unterminated(self) -> NoReturn:
        """The input ended inside ``(`` or ``[``: point at the opener, the token is the rest."""
        self.fail(f"unterminated '{self.text[self.opener]}'", self.opener, self.n)

    def fail_unexpected(self, position: int, expected: str) -> NoReturn:
        """A character that cannot continue the selector; a few get a more useful reason."""
        text = self.text
        if position >= self.n:
            self.fail_expected(f"expected {expected}", position)
        c = text[position]
        if c == "@":
            self.fail("a time qualifier (@t0, @t-N, @eN, @snap:<id>) must come first", position)
        if c == ")":
            self.fail("unbalanced ')'", position, position + 1)
        if c == "]":
            self.fail("unbalanced ']'", position, position + 1)
        if c in _NAME_CHARS and c not in _DIGITS:
            word = text[position : self.token_end(position)]
            self.fail(
                f"unknown term {word!r} (a key is '#{word}', a tag '+{word}', a type '.{word}')",
                position,
            )
        self.fail(
            f"expected {expected}, got {text[position : self.token_end(position)]!r}", position
        )

    def token_end(self, position: int) -> int:
        """End of the token starting at ``position``: a run of IDENT characters, or one char."""
        text, n = self.text, self.n
        if position >= n:
            return n
        if text[position] not in _IDENT_CHARS:
            return position + 1
        j = position + 1
        while j < n and text[j] in _IDENT_CHARS:
            j += 1
        return j

    # -- scanning helpers ---------------------------------------------------------------------

    def skip_ws(self) -> None:
        text, n, i = self.text, self.n, self.i
        while i < n and text[i].isspace():
            i += 1
        self.i = i

    def starts_int(self, j: int) -> bool:
        """Does an (optionally negative) integer start at ``j``?"""
        text, n = self.text, self.n
        if j < n and text[j] == "-":
            j += 1
        return j < n and text[j] in _DIGITS

    def starts_part(self, j: int) -> bool:
        return (j < self.n and self.text[j] == "*") or self.starts_int(j)

    def read_digits(self, what: str) -> int:
        """Read an unsigned integer at the cursor (the caller knows a digit is there or not)."""
        text, n, start = self.text, self.n, self.i
        j = start
        while j < n and text[j] in _DIGITS:
            j += 1
        if j == start:
            self.fail_expected(f"expected {what}", start)
        if j - start > _MAX_DIGITS:
            self.fail(f"integer too long (more than {_MAX_DIGITS} digits)", start, j)
        self.i = j
        return self.number(start, j)

    def number(self, start: int, end: int) -> int:
        """The integer written at ``text[start:end]`` (ASCII digits, checked by the caller);
        with ``in_range``, refused outside the engine's range rather than carried as a bigger
        int (or, when placing, clamped to the end of a slot)."""
        value = int(self.text[start:end])
        if self.in_range and not INT_MIN <= value <= INT_MAX:
            self.fail(f"integer outside the engine's range ({INT_MIN}..{INT_MAX})", start, end)
        return value

    def read_ident(self, what: str) -> str:
        """IDENT = ``[A-Za-z0-9_][A-Za-z0-9_\\-.:]*``."""
        text, n, start = self.text, self.n, self.i
        if start >= n or text[start] not in _NAME_CHARS:
            self.fail_expected(f"expected {what}", start)
        j = start + 1
        while j < n and text[j] in _IDENT_CHARS:
            j += 1
        self.i = j
        return text[start:j]

    def read_quoted(self) -> str:
        """A '...' or "..." string at the cursor; a backslash escapes the next character."""
        text, n, start = self.text, self.n, self.i
        quote = text[start]
        chars: list[str] = []
        j = start + 1
        while j < n:
            c = text[j]
            if c == quote:
                self.i = j + 1
                return "".join(chars)
            if c == "\\":
                if j + 1 >= n:
                    break
                chars.append(text[j + 1])
                j += 2
            else:
                chars.append(c)
                j += 1
        self.fail("unterminated string", start, n)

    # -- grammar ------------------------------------------------------------------------------

    def parse(self) -> Selector:
        text, n = self.text, self.n
        self.skip_ws()
        if self.i >= n:
            self.fail("empty selector", 0, 0)
        time = self.parse_time() if text[self.i] == "@" else None
        alternatives = [self.parse_alternative()]
        while self.i < n:  # parse_alternative stops only at the end or at a ','
            self.i += 1
            self.skip_ws()
            if self.i >= n:
                self.fail("expected a selector after ','", n)
            alternatives.append(self.parse_alternative())
        return Selector(source=text, time=time, alternatives=tuple(alternatives))

    def parse_time(self) -> Time:
        """``@t0``, ``@t-N`` (N >= 1), ``@eN`` or ``@snap:<id>``, then whitespace."""
        text, n = self.text, self.n
        self.i += 1
        start = self.i
        time: Time
        if text.startswith("t-", start):
            self.i = start + 2
            digits_at = self.i
            back = self.read_digits("the number of snapshots back after '@t-'")
            if back < 1:
                self.fail("'@t-0' is not a snapshot; the working state is '@t0'", digits_at)
            time = Time("back", back)
        elif text.startswith("t0", start) and not (start + 2 < n and text[start + 2] in _DIGITS):
            self.i = start + 2
            time = Time("now")
        elif start >= n or text[start] not in _NAME_CHARS:
            self.fail("expected t0, t-N, eN or snap:<id> after '@'", start)
        elif text.startswith("e", start):
            self.i = start + 1
            time = Time("episode", self.read_digits("an episode number after '@e'"))
        elif text.startswith("snap:", start):
            self.i = start + 5
            id_start = self.i
            while self.i < n and text[self.i] in _IDENT_CHARS:
                self.i += 1
            if self.i == id_start:
                self.fail("expected a snapshot id after '@snap:'", id_start)
            time = Time("snapshot", text[id_start : self.i])
        else:
            at = start - 1
            self.fail(
                f"unknown time qualifier {text[at : self.token_end(start)]!r} "
                "(use @t0, @t-N, @eN or @snap:<id>)",
                at,
                self.token_end(start),
            )
        if self.i < n and not text[self.i].isspace():
            self.fail("expected whitespace after the time qualifier", self.i)
        self.skip_ws()
        if self.i >= n:
            self.fail("expected a selector after the time qualifier", n)
        return time

    def parse_alternative(self) -> Complex:
        """Compounds joined by combinators; stops at the end of input or at a top-level ','."""
        text, n = self.text, self.n
        parts = [self.parse_compound(in_chain=False)]
        combinators: list[Literal[" ", ">"]] = []
        while True:
            before_ws = self.i
            self.skip_ws()
            if self.i >= n or text[self.i] == ",":
                break
            if text[self.i] == ">":
                self.i += 1
                self.skip_ws()
                if self.i >= n:
                    self.fail("expected a selector term after '>'", n)
                combinators.append(">")
            elif self.i > before_ws:
                combinators.append(" ")
            else:
                self.fail_unexpected(self.i, "whitespace, ',', '>' or a selector term")
            parts.append(self.parse_compound(in_chain=True))
        return Complex(parts=tuple(parts), combinators=tuple(combinators))

    def parse_compound(self, *, in_chain: bool) -> Compound:
        """An optional coordinate, then simple terms written without spaces between them.

        After a combinator a coordinate must start with ``d``, ``(`` or ``*``: a bare number
        there (``d0, 1 0``) is almost always a forgotten comma, so it is an error.
        """
        text, n, start = self.text, self.n, self.i
        c = text[start]
        coord: Coord | None = None
        if c == "(":
            coord = self.parse_paren_coord()
        elif c == "d":
            if start + 1 < n and text[start + 1] in _LETTERS:
                self.fail_unexpected(start, _TERM_HINT)
            self.i += 1
            coord = self.parse_coord_body(paren=False)
        elif c == "*" or self.starts_int(start):
            if in_chain and c != "*":
                self.fail(
                    "a coordinate after a space or '>' must start with 'd' or '(' "
                    "(is a ',' missing?)",
                    start,
                )
            coord = self.parse_coord_body(paren=False)
        terms: list[Simple] = []
        while self.i < n and text[self.i] in _SIMPLE_START:
            terms.append(self.parse_simple())
        if coord is None and not terms:
            self.fail_unexpected(start, _TERM_HINT)
        if self.i < n and text[self.i] == "(":
            self.fail("a compound has at most one coordinate, and it comes first", self.i)
        return Compound(coord=coord, terms=tuple(terms))

    def parse_paren_coord(self) -> Coord:
        outer = self.opener
        self.opener = self.i
        self.i += 1
        self.skip_ws()
        if self.i < self.n and self.text[self.i] == "d":
            self.i += 1
        coord = self.parse_coord_body(paren=True)
        self.opener = outer
        return coord

    def parse_coord_body(self, *, paren: bool) -> Coord:
        """``part (, part (, part)?)?`` after an optional ``d`` (already consumed).

        Unparenthesized, a ',' continues the coordinate only if a part follows it; otherwise it
        is left for the caller as the separator between alternatives.
        """
        text, n = self.text, self.n
        parts = [self.parse_part("depth")]
        while len(parts) < 3:
            after_part = self.i
            self.skip_ws()
            if self.i < n and text[self.i] == ",":
                j = self.i + 1
                while j < n and text[j].isspace():
                    j += 1
                if paren or self.starts_part(j):
                    self.i = j
                    parts.append(self.parse_part(_ROLES[len(parts)]))
                    continue
            self.i = after_part
            break
        if paren:
            self.skip_ws()
            if self.i < n and text[self.i] == ")":
                self.i += 1
            elif self.i < n and text[self.i] == ",":
                self.fail("a coordinate has at most three parts (depth, position, offset)", self.i)
            else:
                self.fail_expected(
                    "expected ')'" if len(parts) == 3 else "expected ',' or ')'", self.i
                )
        position = parts[1] if len(parts) > 1 else None
        offset = parts[2] if len(parts) > 2 else None
        return Coord(depth=parts[0], position=position, offset=offset)

    def parse_part(self, role: str) -> Part:
        """``*``, ``N``, ``N-M`` (N >= 0) or ``N..M`` (either may be negative)."""
        text, n, start = self.text, self.n, self.i
        if start < n and text[start] == "*":
            self.i = start + 1
            return _STAR
        j = self.scan_int(start)
        if j == start:
            where = start + 1 if text.startswith("-", start) else start
            self.fail_expected(f"expected an integer, a range or '*' for the {role}", where)
        lo = self.number(start, j)
        if j < n:
            c = text[j]
            if c == "." and text.startswith(".", j + 1):
                hi_end = self.scan_int(j + 2)
                if hi_end == j + 2:
                    where = j + 3 if text.startswith("-", j + 2) else j + 2
                    self.fail_expected("expected an integer after '..'", where)
                self.reject_decimal(j + 2, hi_end, role)
                self.i = hi_end
                return self.span(lo, self.number(j + 2, hi_end), start, role)
            if c == "-":
                if text[start] == "-" or text.startswith("-", j + 1):
                    self.fail(
                        "ambiguous range: write a negative range with '..', e.g. '-2..-1'", start
                    )
                hi_end = self.scan_int(j + 1)
                if hi_end == j + 1:
                    self.fail_expected("expected an integer after '-'", j + 1)
                self.reject_decimal(j + 1, hi_end, role)
                self.i = hi_end
                return self.span(lo, self.number(j + 1, hi_end), start, role)
            self.reject_decimal(start, j, role)
        self.i = j
        exact = _EXACT.get(lo)
        return Exact(lo) if exact is None else exact

    def scan_int(self, start: int) -> int:
        """End of ``-?[0-9]+`` at ``start``, or ``start`` itself if there is none."""
        text, n = self.text, self.n
        j = start + 1 if text.startswith("-", start) else start
        digits_at = j
        while j < n and text[j] in _DIGITS:
            j += 1
        if j == digits_at:
            return start
        if j - digits_at > _MAX_DIGITS:
            self.fail(f"integer too long (more than {_MAX_DIGITS} digits)", start, j)
        return j

    def reject_decimal(self, start: int, end: int, role: str) -> None:
        """``d0.5`` is a mistyped number, not depth 0 with type ``5``: say so."""
        text, n = self.text, self.n
        if end + 1 < n and text[end] == "." and text[end + 1] in _DIGITS:
            end += 2
            while end < n and text[end] in _DIGITS:
                end += 1
            self.fail(f"the {role} must be an integer", start, end)

    def span(self, lo: int, hi: int, start: int, role: str) -> Span:
        text, end = self.text, self.i
        if lo > hi:
            self.fail(f"range {text[start:end]} is empty", start, end)
        if text.startswith("..", end) or text.startswith("-", end):
            self.fail(f"a range has two ends (in the {role})", end)
        return Span(lo, hi)

    def parse_simple(self) -> Simple:
        text, start = self.text, self.i
        c = text[start]
        self.i += 1
        if c == "^":
            return self.parse_region(start)
        if c == "#":
            return KeyIs(self.read_name("key", start))
        if c == "+":
            return HasTag(self.read_name("tag", start))
        if c == ".":
            if text.startswith(".", self.i):
                self.fail("unexpected '..' (a range is written without spaces: '1..3')", start)
            return TypeIs(self.read_ident("a node type after '.'"))
        return self.parse_bracket(start)

    def parse_region(self, caret: int) -> Region:
        text, n = self.text, self.n
        j = self.i
        while j < n and text[j] in _NAME_CHARS:
            j += 1
        name = text[self.i : j]
        if not name:
            self.fail("expected a region name after '^' (sys, ah, seq)", self.i)
        region = _REGIONS.get(name)
        if region is None:
            self.fail(f"unknown region '^{name}' (regions: ^sys, ^ah, ^seq)", caret, j)
        self.i = j
        return Region(region)

    def read_name(self, what: str, sigil_at: int) -> str:
        """A key or tag: an IDENT, or a quoted string for anything else (spaces, '#', ...)."""
        if self.i < self.n and self.text[self.i] in _QUOTES:
            quote_at = self.i
            value = self.read_quoted()
            if not value:
                self.fail(f"a {what} cannot be empty", quote_at, self.i)
            return value
        sigil = self.text[sigil_at]
        return self.read_ident(f"a {what} after '{sigil}' (a name, or a quoted string)")

    def parse_bracket(self, open_at: int) -> Attr | Flag:
        """``[flag]`` or ``[name op value]``, whitespace allowed inside the brackets."""
        text, n = self.text, self.n
        outer = self.opener
        self.opener = open_at
        self.skip_ws()
        name = self.read_ident("an attribute name or a flag after '['")
        self.skip_ws()
        if self.i >= n:
            self.fail_unterminated()
        result: Attr | Flag
        if text[self.i] == "]":
            flag = _FLAGS.get(name)
            if flag is None:
                self.fail(
                    f"unknown flag '[{name}]' (flags: permanent, temporary, sticky, cyclic; "
                    f"a comparison is written like '[{name}=value]')",
                    open_at,
                    self.i + 1,
                )
            result = Flag(flag)
        else:
            op = self.read_op()
            self.skip_ws()
            value = self.parse_value()
            self.skip_ws()
            if self.i >= n or text[self.i] != "]":
                self.fail_expected("expected ']'", self.i)
            result = Attr(name=name, op=op, value=value)
        self.i += 1
        self.opener = outer
        return result

    def read_op(self) -> Op:
        for spelling, op in _OPS:
            if self.text.startswith(spelling, self.i):
                self.i += len(spelling)
                return op
        self.fail("expected a comparison operator (= != < <= > >=) or ']'", self.i)

    def parse_value(self) -> Value:
        """A number, a quoted string, ``null``/``true``/``false``, or a bare IDENT (a string)."""
        text, n, start = self.text, self.n, self.i
        what = "a value (a number, a quoted string, null, true, false or a name)"
        if start >= n:
            self.fail_expected(f"expected {what}", start)
        c = text[start]
        if c in _QUOTES:
            return self.read_quoted()
        if c == "-" or c in _DIGITS:
            number = self.read_number()
            if number is not None:
                return number
            if c == "-":
                self.fail("invalid number", start)
            self.i = start
            return self.read_ident(what)
        if c not in _NAME_CHARS:
            self.fail(f"expected {what}", start)
        word = self.read_ident(what)
        return _KEYWORDS.get(word, word)

    def read_number(self) -> int | float | None:
        """``-?D+(.D+)?([eE][+-]?D+)?``; ``None`` if more IDENT characters follow (``1a``)."""
        text, n, start = self.text, self.n, self.i
        j = start + 1 if text[start] == "-" else start
        digits_at = j
        while j < n and text[j] in _DIGITS:
            j += 1
        if j == digits_at:
            self.fail_expected("expected a digit after '-'", j)
        is_float = False
        if j + 1 < n and text[j] == "." and text[j + 1] in _DIGITS:
            is_float = True
            j += 2
            while j < n and text[j] in _DIGITS:
                j += 1
        if j < n and text[j] in "eE":
            k = j + 1
            if k < n and text[k] in "+-":
                k += 1
            if k < n and text[k] in _DIGITS:
                is_float = True
                j = k
                while j < n and text[j] in _DIGITS:
                    j += 1
        if j < n and text[j] in _IDENT_CHARS:
            return None
        if j - start > _MAX_DIGITS:
            self.fail(f"number too long (more than {_MAX_DIGITS} characters)", start, j)
        self.i = j
        literal = text[start:j]
        return float(literal) if is_float else self.number(start, j)


def parse_selector_uncached(text: str) -> Selector:
    """Parse ``text``; raises ``InvalidSelector`` (and nothing else) for anything."""
    if not isinstance(text, str):
        raise InvalidSelector(
            f"a selector must be a string, not {type(text).__name__}",
            selector=repr(text),
            position=0,
            token=type(text).__name__,
        )
    return _Parser(text).parse()


def check_input_selector(text: str) -> Selector:
    """Parse a selector given now (a command's, a query typed in), stricter than one read back
    from the log: it must be text, and every integer in it within the engine's range. Logs
    written before these rules hold selectors that broke them, and must still replay."""
    if isinstance(text, str) and (at := lone_surrogate(text)) is not None:
        raise InvalidSelector(  # not text: it could not even be printed in an error
            "a lone surrogate is not text (an invalid UTF-8 byte, or half of a '\\uXXXX' pair)",
            selector=text.encode("utf-8", "backslashreplace").decode(),
            position=at,
            token=ascii(text[at]).strip("'"),
        )
    if not isinstance(text, str):
        return parse_selector_uncached(text)  # raises
    return _Parser(text, in_range=True).parse()


def parse_selector(text: str) -> Selector:
    """Cached ``parse_selector_uncached``: the AST is frozen, so sharing it is safe.

    Failures are not cached (``lru_cache`` does not store exceptions).
    """
    if type(text) is not str:
        return parse_selector_uncached(text)  # raises; and a list cannot be a cache key
    return _parse_cached(text)


@lru_cache(maxsize=4096)
def _parse_cached(text: str) -> Selector:
    return parse_selector_uncached(text)
