"""The selector parser: exact ASTs, exact error positions/tokens, and fuzzing.

The grammar is documented in docs/selectors.md; ``test_docs_examples`` keeps its examples honest.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
from engine.context.selectors import check_input_selector, parse_selector, parse_selector_uncached

# -- helpers to build expected ASTs ---------------------------------------------------------------


def _part(p: int | Part | None) -> Part | None:
    return Exact(p) if isinstance(p, int) else p


def C(d: int | Part, p: int | Part | None = None, o: int | Part | None = None) -> Coord:
    depth = _part(d)
    assert depth is not None
    return Coord(depth, _part(p), _part(o))


def K(coord: Coord | None = None, *terms: Simple) -> Compound:
    return Compound(coord, terms)


def T(*terms: Simple) -> Compound:
    return Compound(None, terms)


def chain(*items: Compound | Literal[" ", ">"]) -> Complex:
    """``chain(a, ">", b, " ", c)`` -> Complex((a, b, c), (">", " "))."""
    parts = tuple(x for x in items if isinstance(x, Compound))
    combs = tuple(x for x in items if isinstance(x, str))
    assert len(parts) == len(combs) + 1
    return Complex(parts, combs)


def alts(*items: Complex | Compound | Coord | Simple) -> tuple[Complex, ...]:
    out = []
    for x in items:
        if isinstance(x, Coord):
            x = K(x)
        elif not isinstance(x, Complex | Compound):
            x = T(x)
        out.append(x if isinstance(x, Complex) else Complex((x,), ()))
    return tuple(out)


def assert_same(actual: object, expected: object) -> None:
    """``==`` plus ``repr``: dataclass equality says ``True == 1 == 1.0``; repr does not."""
    assert actual == expected
    assert repr(actual) == repr(expected)


def parse_error(text: str) -> InvalidSelector:
    with pytest.raises(InvalidSelector) as info:
        parse_selector(text)
    return info.value


# -- valid selectors ------------------------------------------------------------------------------

SEEDS = [
    ("d0, 1, 0", C(0, 1, 0)),
    ("d-1, 0, 0", C(-1, 0, 0)),
    ("d1-3, 1, *", C(Span(1, 3), 1, Star())),
    ("d5, 0, 0", C(5, 0, 0)),
    ("(d0, 1, 0)", C(0, 1, 0)),
    ("d0, 1", C(0, 1)),
    ("d0, 1, -2", C(0, 1, -2)),
    ("d-1, 1, 0", C(-1, 1, 0)),
    ("d0, 0, -1", C(0, 0, -1)),
    ("d1, 1, -1", C(1, 1, -1)),
    ("d0, 0, 1", C(0, 0, 1)),
]


@pytest.mark.parametrize(("text", "coord"), SEEDS)
def test_seed_coordinates(text: str, coord: Coord) -> None:
    sel = parse_selector(text)
    assert_same(sel, Selector(text, None, alts(coord)))
    assert sel.single_coord == coord


COORDS = [
    ("d0", C(0)),
    ("0, 1, 0", C(0, 1, 0)),
    ("-1, 0", C(-1, 0)),
    ("*", C(Star())),
    ("d*, *, *", C(Star(), Star(), Star())),
    ("d1..3, 1, *", C(Span(1, 3), 1, Star())),
    ("d-2..-1, 0, 0", C(Span(-2, -1), 0, 0)),
    ("d0, -3..-1", C(0, Span(-3, -1))),
    ("d0, 0, -2..3", C(0, 0, Span(-2, 3))),
    ("d0, 1-3, 0", C(0, Span(1, 3), 0)),
    ("d1-1", C(Span(1, 1))),
    ("d007", C(7)),
    ("d-0", C(0)),
    ("d12345678901234567890", C(12345678901234567890)),  # read back from a log: any size
    ("( d0 , 1 , 0 )", C(0, 1, 0)),
    ("(0,1)", C(0, 1)),
    ("(*)", C(Star())),
    ("d0 ,1 , 0", C(0, 1, 0)),
    ("d0,1,0", C(0, 1, 0)),
    ("  d0, 1, 0  ", C(0, 1, 0)),
    ("\td0,\n1,\r\n0\t", C(0, 1, 0)),
]


@pytest.mark.parametrize(("text", "coord"), COORDS)
def test_coordinate_forms(text: str, coord: Coord) -> None:
    assert_same(parse_selector(text).alternatives, alts(coord))


def test_selector_keeps_its_source_text_verbatim() -> None:
    assert parse_selector("  d0, 1, 0  ").source == "  d0, 1, 0  "


COMMA_AMBIGUITY = [
    # a comma continues an unparenthesized coordinate only if a part follows it
    ("d0, 1, #x", (C(0, 1), KeyIs("x"))),
    ("d0, #x", (C(0), KeyIs("x"))),
    ("d0, 1, ^ah", (C(0, 1), Region("ah"))),
    ("d0, 1, d2", (C(0, 1), C(2))),
    ("d0, d1", (C(0), C(1))),
    # ... and never past the third part
    ("d0, 1, 0, d1, 1, 0", (C(0, 1, 0), C(1, 1, 0))),
    ("d0, 1, 0, 1", (C(0, 1, 0), C(1))),
    ("d0, 1, 0, *", (C(0, 1, 0), C(Star()))),
    ("d0,1,0,-1,2", (C(0, 1, 0), C(-1, 2))),
    # parentheses make the union explicit
    ("(d0,1,0), (d1,1,0)", (C(0, 1, 0), C(1, 1, 0))),
    ("(d0), 1", (C(0), C(1))),
    ("(d0, 1), (2)", (C(0, 1), C(2))),
    # a comma after terms always separates alternatives
    ("d0#x, 1", (K(C(0), KeyIs("x")), C(1))),
]


@pytest.mark.parametrize(("text", "expected"), COMMA_AMBIGUITY)
def test_comma_ambiguity(text: str, expected: Sequence[Coord | Simple]) -> None:
    assert_same(parse_selector(text).alternatives, alts(*expected))


SIMPLES: list[tuple[str, Simple]] = [
    ("^sys", Region("sys")),
    ("^ah", Region("ah")),
    ("^seq", Region("seq")),
    ("#user_prefs", KeyIs("user_prefs")),
    ("#a-b.c:d", KeyIs("a-b.c:d")),
    ("#7days", KeyIs("7days")),
    ('#"a b"', KeyIs("a b")),
    ("#'a b'", KeyIs("a b")),
    ('#"say \\"hi\\""', KeyIs('say "hi"')),
    ("#'it\\'s'", KeyIs("it's")),
    ("#'back\\\\slash'", KeyIs("back\\slash")),
    ("#'#,> x'", KeyIs("#,> x")),
    ("+important", HasTag("important")),
    ('+"two words"', HasTag("two words")),
    (".text", TypeIs("text")),
    (".turn.x", TypeIs("turn.x")),
    ("[permanent]", Flag("permanent")),
    ("[temporary]", Flag("temporary")),
    ("[sticky]", Flag("sticky")),
    ("[cyclic]", Flag("cyclic")),
    ("[ sticky ]", Flag("sticky")),
    ("[ttl=1]", Attr("ttl", "=", 1)),
    ("[ttl!=1]", Attr("ttl", "!=", 1)),
    ("[ttl<1]", Attr("ttl", "<", 1)),
    ("[ttl<=1]", Attr("ttl", "<=", 1)),
    ("[ttl>1]", Attr("ttl", ">", 1)),
    ("[ttl>=1]", Attr("ttl", ">=", 1)),
    ("[ ttl <= 1 ]", Attr("ttl", "<=", 1)),
    ("[priority>=-5]", Attr("priority", ">=", -5)),
    ("[score>1.5]", Attr("score", ">", 1.5)),
    ("[score>-0.25]", Attr("score", ">", -0.25)),
    ("[score<1e3]", Attr("score", "<", 1000.0)),
    ("[score<2.5E-3]", Attr("score", "<", 0.0025)),
    ("[score<1e+2]", Attr("score", "<", 100.0)),
    ("[ttl=null]", Attr("ttl", "=", None)),
    ("[sticky=true]", Attr("sticky", "=", True)),
    ("[sticky=false]", Attr("sticky", "=", False)),
    ("[key='x']", Attr("key", "=", "x")),
    ('[key="x"]', Attr("key", "=", "x")),
    ("[key=x]", Attr("key", "=", "x")),
    ("[key='a b']", Attr("key", "=", "a b")),
    ("[key='']", Attr("key", "=", "")),
    ("[key='1']", Attr("key", "=", "1")),
    ("[key='null']", Attr("key", "=", "null")),
    ("[key=Null]", Attr("key", "=", "Null")),
    ("[key=1a]", Attr("key", "=", "1a")),
    ("[version=1.2.3]", Attr("version", "=", "1.2.3")),
    ("[key=a-b.c:d]", Attr("key", "=", "a-b.c:d")),
    ("[content.text='hi']", Attr("content.text", "=", "hi")),
    ("[created_at_ns>=1700000000000000000]", Attr("created_at_ns", ">=", 1700000000000000000)),
]


@pytest.mark.parametrize(("text", "term"), SIMPLES)
def test_simple_terms(text: str, term: Simple) -> None:
    assert_same(parse_selector(text).alternatives, alts(term))


COMPOUNDS: list[tuple[str, Compound]] = [
    ("d0, 1, 0#x", K(C(0, 1, 0), KeyIs("x"))),
    ("(d0, 1).text+pinned", K(C(0, 1), TypeIs("text"), HasTag("pinned"))),
    ("+pinned.text", T(HasTag("pinned.text"))),
    ("d1-3, 1, *[ttl<=1]", K(C(Span(1, 3), 1, Star()), Attr("ttl", "<=", 1))),
    ("d0.text", K(C(0), TypeIs("text"))),
    ("d1..3.text", K(C(Span(1, 3)), TypeIs("text"))),
    ("*.text", K(C(Star()), TypeIs("text"))),
    ("^ah.text", T(Region("ah"), TypeIs("text"))),
    ("^sys^ah", T(Region("sys"), Region("ah"))),
    ("+user+important", T(HasTag("user"), HasTag("important"))),
    (
        ".text#k+t[ttl<=1][sticky]^ah",
        T(
            TypeIs("text"),
            KeyIs("k"),
            HasTag("t"),
            Attr("ttl", "<=", 1),
            Flag("sticky"),
            Region("ah"),
        ),
    ),
    # an IDENT may contain '.', so '#k.text' is one key: quote it or put the type first
    ("#k.text", T(KeyIs("k.text"))),
    ('#"k".text', T(KeyIs("k"), TypeIs("text"))),
    (".text#k", T(TypeIs("text"), KeyIs("k"))),
]


@pytest.mark.parametrize(("text", "compound"), COMPOUNDS)
def test_compounds(text: str, compound: Compound) -> None:
    assert_same(parse_selector(text).alternatives, alts(compound))


CHAINS: list[tuple[str, Complex]] = [
    ("^ah .text", chain(T(Region("ah")), " ", T(TypeIs("text")))),
    ("^ah > .text", chain(T(Region("ah")), ">", T(TypeIs("text")))),
    ("^ah>.text", chain(T(Region("ah")), ">", T(TypeIs("text")))),
    ("^ah   >\t.text", chain(T(Region("ah")), ">", T(TypeIs("text")))),
    ("^ah\n.text", chain(T(Region("ah")), " ", T(TypeIs("text")))),
    (
        "^seq .turn > .slot #k",
        chain(T(Region("seq")), " ", T(TypeIs("turn")), ">", T(TypeIs("slot")), " ", T(KeyIs("k"))),
    ),
    ("#a>#b", chain(T(KeyIs("a")), ">", T(KeyIs("b")))),
    ("d0, 1, 0 > #x", chain(K(C(0, 1, 0)), ">", T(KeyIs("x")))),
    ("d0, 1 #x", chain(K(C(0, 1)), " ", T(KeyIs("x")))),
    # after a combinator a coordinate is written with 'd', '(' or '*'
    ("^ah > d0, 1", chain(T(Region("ah")), ">", K(C(0, 1)))),
    ("^ah (1, 0)", chain(T(Region("ah")), " ", K(C(1, 0)))),
    ("^seq *", chain(T(Region("seq")), " ", K(C(Star())))),
    ("^seq > *, 1", chain(T(Region("seq")), ">", K(C(Star(), 1)))),
    ("d0 d1", chain(K(C(0)), " ", K(C(1)))),
]


@pytest.mark.parametrize(("text", "expected"), CHAINS)
def test_combinators(text: str, expected: Complex) -> None:
    assert_same(parse_selector(text).alternatives, (expected,))


def test_unions_of_queries() -> None:
    assert_same(parse_selector("#a, #b").alternatives, alts(KeyIs("a"), KeyIs("b")))
    assert_same(parse_selector("#a,#b").alternatives, alts(KeyIs("a"), KeyIs("b")))
    assert_same(
        parse_selector("^ah .text, ^seq > .text").alternatives,
        (
            chain(T(Region("ah")), " ", T(TypeIs("text"))),
            chain(T(Region("seq")), ">", T(TypeIs("text"))),
        ),
    )


TIMES = [
    ("@t0 d0", Time("now"), alts(C(0))),
    ("@t-1 d0, 1, 0", Time("back", 1), alts(C(0, 1, 0))),
    ("@t-12 #k", Time("back", 12), alts(KeyIs("k"))),
    ("@e0 ^ah", Time("episode", 0), alts(Region("ah"))),
    ("@e42 ^ah", Time("episode", 42), alts(Region("ah"))),
    ("@snap:abc-123.x:y ^sys", Time("snapshot", "abc-123.x:y"), alts(Region("sys"))),
    ("  @t-1\t#k, #j", Time("back", 1), alts(KeyIs("k"), KeyIs("j"))),
    ("@t-1 *", Time("back", 1), alts(C(Star()))),
]


@pytest.mark.parametrize(("text", "time_", "expected"), TIMES)
def test_time_qualifiers(text: str, time_: Time, expected: tuple[Complex, ...]) -> None:
    sel = parse_selector(text)
    assert_same(sel, Selector(text, time_, expected))
    assert sel.is_time_qualified == (time_.kind != "now")


def test_single_coord_only_for_a_lone_coordinate() -> None:
    assert parse_selector("(d0, 1, 0)").single_coord == C(0, 1, 0)
    assert parse_selector("(d0, 1, 0)#x").single_coord is None
    assert parse_selector("d0, d1").single_coord is None
    assert parse_selector("d0 > d1").single_coord is None


def test_parse_is_cached_and_the_uncached_parser_agrees() -> None:
    assert parse_selector("d1-3, 1, *") is parse_selector("d1-3, 1, *")
    assert parse_selector_uncached("d1-3, 1, *") == parse_selector("d1-3, 1, *")
    assert parse_selector_uncached("d1-3, 1, *") is not parse_selector_uncached("d1-3, 1, *")


@pytest.mark.parametrize("value", [b"d0", 0, None, ["d0"], ("d0",)])
def test_a_selector_that_is_not_a_string_is_an_invalid_selector(value: object) -> None:
    for parse in (parse_selector, parse_selector_uncached):
        with pytest.raises(InvalidSelector) as caught:
            parse(value)  # type: ignore[arg-type]
        assert caught.value.position == 0
        assert caught.value.token == type(value).__name__


# -- errors ---------------------------------------------------------------------------------------

ERRORS: list[tuple[str, int, str, str]] = [
    # (selector, position, token, a piece of the reason)
    ("", 0, "", "empty selector"),
    ("   ", 0, "", "empty selector"),
    ("\t\n", 0, "", "empty selector"),
    # time
    ("@", 1, "", "after '@'"),
    ("@ d0", 1, " ", "after '@'"),
    ("@t", 0, "@t", "unknown time qualifier '@t'"),
    ("@t5 d0", 0, "@t5", "unknown time qualifier"),
    ("@t01 d0", 0, "@t01", "unknown time qualifier"),
    ("@snap d0", 0, "@snap", "unknown time qualifier"),
    ("@x d0", 0, "@x", "unknown time qualifier"),
    ("@t-0 d0", 3, "0", "'@t-0' is not a snapshot"),
    ("@t- d0", 3, " ", "snapshots back"),
    ("@t-x d0", 3, "x", "snapshots back"),
    ("@e", 2, "", "episode number"),
    ("@e-1 d0", 2, "-1", "episode number"),
    ("@snap: d0", 6, " ", "snapshot id"),
    ("@t-1", 4, "", "expected a selector after the time qualifier"),
    ("@t-1   ", 7, "", "expected a selector after the time qualifier"),
    ("@t-1d0", 4, "d0", "expected whitespace"),
    ("@t0#x", 3, "#", "expected whitespace"),
    ("#x, @t-1 d0", 4, "@", "must come first"),
    ("d0 @t-1", 3, "@", "must come first"),
    # coordinates
    ("d", 1, "", "for the depth"),
    ("d x", 1, " ", "for the depth"),
    ("dx", 0, "dx", "unknown term 'dx'"),
    ("d-", 2, "", "for the depth"),
    ("d-x", 2, "x", "for the depth"),
    ("d²", 1, "²", "for the depth"),
    ("d0,", 3, "", "expected a selector after ','"),
    ("d0, 1, ", 7, "", "expected a selector after ','"),
    (",d0", 0, ",", "expected a coordinate or a selector term"),
    ("#a,,#b", 3, ",", "expected a coordinate or a selector term"),
    ("d0, 1 0", 6, "0", "is a ',' missing?"),
    ("d0 1", 3, "1", "is a ',' missing?"),
    ("d0, 1 -2", 6, "-2", "is a ',' missing?"),
    ("^ah -1", 4, "-1", "must start with 'd' or '('"),
    ("d-2-1", 1, "-2-1", "ambiguous range"),
    ("d1--2", 1, "1--2", "ambiguous range"),
    ("d3..1", 1, "3..1", "range 3..1 is empty"),
    ("d3-1", 1, "3-1", "range 3-1 is empty"),
    ("d0, -1..-2", 4, "-1..-2", "range -1..-2 is empty"),
    ("d1-", 3, "", "expected an integer after '-'"),
    ("d1-x", 3, "x", "expected an integer after '-'"),
    ("d1..", 4, "", "expected an integer after '..'"),
    ("d1..x", 4, "x", "expected an integer after '..'"),
    ("d1..-", 5, "", "expected an integer after '..'"),
    ("d1-3-5", 4, "-5", "a range has two ends"),
    ("d1..3..5", 5, "..5", "a range has two ends"),
    ("d0.5", 1, "0.5", "the depth must be an integer"),
    ("d0, 1.5, 0", 4, "1.5", "the position must be an integer"),
    ("d0, 1, 2.25", 7, "2.25", "the offset must be an integer"),
    ("d1..3.5", 4, "3.5", "the depth must be an integer"),
    ("d" + "1" * 101, 1, "1" * 101, "integer too long"),
    ("d0, \u0661, 0", 4, "\u0661", "expected a coordinate"),  # ASCII digits only
    ("d0, 1, 0x", 8, "x", "unknown term 'x'"),
    ("d0x", 2, "x", "unknown term 'x'"),
    ("d0*", 2, "*", "expected whitespace, ',', '>' or a selector term"),
    # parentheses
    ("(", 0, "(", "unterminated '('"),
    ("(d0, 1", 0, "(d0, 1", "unterminated '('"),
    ("(d0, 1,", 0, "(d0, 1,", "unterminated '('"),
    ("#x, (d0", 4, "(d0", "unterminated '('"),
    ("(d0 1)", 4, "1", "expected ',' or ')'"),
    ("(d0,1,0 x)", 8, "x", "expected ')'"),
    ("(d0,1,0,1)", 7, ",", "at most three parts"),
    ("(d0, #x)", 5, "#", "for the position"),
    ("()", 1, ")", "for the depth"),
    ("d0)", 2, ")", "unbalanced ')'"),
    ("#a )", 3, ")", "unbalanced ')'"),
    ("(d0)(d1)", 4, "(", "at most one coordinate"),
    ("#x(d0)", 2, "(", "at most one coordinate"),
    # words that are not terms
    ("div", 0, "div", "unknown term 'div'"),
    ("foo bar", 0, "foo", "a key is '#foo'"),
    ("#a b", 3, "b", "unknown term 'b'"),
    # regions
    ("^", 1, "", "expected a region name"),
    ("^ sys", 1, " ", "expected a region name"),
    ("^foo", 0, "^foo", "unknown region '^foo'"),
    ("^SYS", 0, "^SYS", "unknown region '^SYS'"),
    ("^sysx", 0, "^sysx", "unknown region '^sysx'"),
    ("#x ^foo.text", 3, "^foo", "unknown region '^foo'"),
    # keys, tags, types
    ("#", 1, "", "expected a key"),
    ("# x", 1, " ", "expected a key"),
    ("#'x", 1, "'x", "unterminated string"),
    ('#"x\\', 1, '"x\\', "unterminated string"),
    ('#""', 1, '""', "a key cannot be empty"),
    ("+", 1, "", "expected a tag"),
    ("+''", 1, "''", "a tag cannot be empty"),
    (".", 1, "", "expected a node type"),
    (".'x'", 1, "'", "expected a node type"),
    ("1 .. 3", 2, "..", "without spaces"),
    # brackets
    ("[", 0, "[", "unterminated '['"),
    ("[]", 1, "]", "expected an attribute name or a flag"),
    ("[fizz]", 0, "[fizz]", "unknown flag '[fizz]'"),
    ("[ fizz ]", 0, "[ fizz ]", "unknown flag '[fizz]'"),
    ("[ttl", 0, "[ttl", "unterminated '['"),
    ("[ttl<", 0, "[ttl<", "unterminated '['"),
    ("[ttl<1", 0, "[ttl<1", "unterminated '['"),
    ("#x [ttl<1 ", 3, "[ttl<1 ", "unterminated '['"),
    ("[ttl!1]", 4, "!", "expected a comparison operator"),
    ("[ttl~1]", 4, "~", "expected a comparison operator"),
    ("[ttl==1]", 5, "=", "expected a value"),
    ("[ttl=]", 5, "]", "expected a value"),
    ("[ttl=1 2]", 7, "2", "expected ']'"),
    ("[ttl=-]", 6, "]", "expected a digit after '-'"),
    ("[ttl=-x]", 6, "x", "expected a digit after '-'"),
    ("[ttl=-1x]", 5, "-1x", "invalid number"),
    ("[key='x]", 5, "'x]", "unterminated string"),
    ("[ttl=1]]", 7, "]", "unbalanced ']'"),
    ("[ttl=" + "1" * 101 + "]", 5, "1" * 101, "number too long"),
    # combinators
    ("#a >", 4, "", "expected a selector term after '>'"),
    ("#a > > #b", 5, ">", "expected a coordinate or a selector term"),
    ("#a >, #b", 4, ",", "expected a coordinate or a selector term"),
    ("> #a", 0, ">", "expected a coordinate or a selector term"),
]


@pytest.mark.parametrize(("text", "position", "token", "reason"), ERRORS)
def test_errors(text: str, position: int, token: str, reason: str) -> None:
    err = parse_error(text)
    assert err.code == "INVALID_SELECTOR"
    assert (err.position, err.token) == (position, token)
    assert reason in err.reason
    assert err.selector == text
    assert err.to_dict() == {
        "code": "INVALID_SELECTOR",
        "message": err.message,
        "selector": text,
        "position": position,
        "token": token,
    }
    assert (
        err.message == f"{err.reason} at position {position} (token {token!r}) in selector {text!r}"
    )


def test_error_reasons_are_specific() -> None:
    assert parse_error("d0, #x, (d0, *x)").reason == "expected ',' or ')'"
    assert parse_error("(d1, x)").reason == "expected an integer, a range or '*' for the position"
    assert parse_error("^foo").reason == "unknown region '^foo' (regions: ^sys, ^ah, ^seq)"
    assert parse_error("#'x").reason == "unterminated string"
    assert parse_error("d3..1").reason == "range 3..1 is empty"


def test_failures_are_not_cached_and_raise_every_time() -> None:
    for _ in range(2):
        assert parse_error("d-2-1").position == 1


DOCS = Path(__file__).resolve().parents[3] / "docs" / "selectors.md"


def test_docs_examples() -> None:
    """The ```text blocks of the docs: examples parse, and the error examples are exact."""
    blocks = re.findall(r"```text\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
    examples = errors = 0
    for block in blocks:
        lines = block.splitlines()
        if any(":=" in line for line in lines):
            continue  # the grammar
        if not any(re.search(r"position \d+, token", line) for line in lines):
            for line in lines:
                parse_selector(re.split(r"\s{2,}", line.strip())[0])
                examples += 1
            continue
        for text_line, caret_line in zip(lines[::2], lines[1::2], strict=True):
            text, reason = re.split(r"\s{2,}", text_line, maxsplit=1)
            match = re.search(r"position (\d+), token (.*)$", caret_line)
            assert match, caret_line
            err = parse_error(text)
            assert caret_line.index("^") == err.position
            assert (err.position, repr(err.token)) == (int(match[1]), match[2])
            assert err.reason.startswith(reason.removesuffix("...)"))
            errors += 1
    assert examples >= 10
    assert errors >= 10


# -- properties -----------------------------------------------------------------------------------

ALPHABET = "d0123456789-.,*()#+^[]<>=!'\" @tsnapeqhyrcmluk:\\_\t"


def check_outcome(text: str) -> None:
    """Parse ``text``: a well-formed Selector, or an InvalidSelector that points into ``text``."""
    try:
        sel = parse_selector_uncached(text)
    except InvalidSelector as err:
        assert type(err) is InvalidSelector
        assert err.code == "INVALID_SELECTOR"
        assert 0 <= err.position <= len(text)
        assert text.startswith(err.token, err.position)
        assert err.selector == text
        return
    assert sel.source == text
    assert sel.alternatives
    for complex_ in sel.alternatives:
        assert len(complex_.parts) == len(complex_.combinators) + 1
        for compound in complex_.parts:
            assert compound.coord is not None or compound.terms
    # whatever parsed must survive rendering and parsing again
    assert_same(
        parse_selector_uncached(render(sel, random.Random(0))).alternatives, sel.alternatives
    )


@settings(max_examples=600)
@given(st.text())
def test_any_text_parses_or_fails_cleanly(text: str) -> None:
    check_outcome(text)


@settings(max_examples=1500)
@given(st.text(alphabet=ALPHABET, max_size=40))
def test_grammar_alphabet_parses_or_fails_cleanly(text: str) -> None:
    check_outcome(text)


@settings(max_examples=300)
@given(
    st.lists(
        st.sampled_from(
            [
                "d0",
                "d-1",
                ", ",
                "1",
                "-2",
                "1-3",
                "..",
                "*",
                "(",
                ")",
                "#k",
                "+t",
                ".text",
                "^ah",
                "[ttl<=1]",
                "[sticky]",
                " > ",
                " ",
                "@t-1 ",
                "'",
                '"',
                "#'a b'",
                ",",
            ]
        ),
        max_size=12,
    ).map("".join)
)
def test_token_soup_parses_or_fails_cleanly(text: str) -> None:
    check_outcome(text)


# A small renderer: AST -> text, with random but always-valid spelling choices.

_IDENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_\-.:]*\Z")


def render_part(part: Part, rng: random.Random) -> str:
    if isinstance(part, Star):
        return "*"
    if isinstance(part, Exact):
        return str(part.value)
    if part.lo >= 0 and rng.random() < 0.5:
        return f"{part.lo}-{part.hi}"
    return f"{part.lo}..{part.hi}"


def render_coord(coord: Coord, rng: random.Random, *, paren: bool, d_prefix: bool) -> str:
    parts = [coord.depth, coord.position, coord.offset]
    sep = rng.choice([", ", ",", " , "])
    body = sep.join(render_part(p, rng) for p in parts if p is not None)
    body = ("d" if d_prefix else "") + body
    return f"({body})" if paren else body


def quote(s: str, rng: random.Random) -> str:
    q = rng.choice("'\"")
    return q + s.replace("\\", "\\\\").replace(q, "\\" + q) + q


def render_name(s: str, rng: random.Random, *, followed_by_type: bool) -> str:
    if _IDENT.match(s) and not followed_by_type and rng.random() < 0.7:
        return s
    return quote(s, rng)


def render_value(v: Value, rng: random.Random) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ("1e999" if v > 0 else "-1e999")
    bare_ok = _IDENT.match(v) and v[0] not in "0123456789" and v not in ("null", "true", "false")
    if bare_ok and rng.random() < 0.5:
        return v
    return quote(v, rng)


def render_simple(term: Simple, rng: random.Random, nxt: Simple | None) -> str:
    followed_by_type = isinstance(nxt, TypeIs)
    if isinstance(term, Region):
        return "^" + term.name
    if isinstance(term, KeyIs):
        return "#" + render_name(term.key, rng, followed_by_type=followed_by_type)
    if isinstance(term, HasTag):
        return "+" + render_name(term.tag, rng, followed_by_type=followed_by_type)
    if isinstance(term, TypeIs):
        return "." + term.node_type
    if isinstance(term, Flag):
        return f"[{term.name}]"
    pad = rng.choice(["", " "])
    return f"[{pad}{term.name}{pad}{term.op}{pad}{render_value(term.value, rng)}{pad}]"


def starts_part(text: str) -> bool:
    return bool(text) and (text[0] in "*0123456789" or (text[0] == "-" and text[1:2].isdigit()))


def last_part(coord: Coord) -> Part:
    if coord.offset is not None:
        return coord.offset
    return coord.position if coord.position is not None else coord.depth


def render_compound(
    compound: Compound, rng: random.Random, *, in_chain: bool, next_alt: str | None
) -> str:
    out = ""
    if compound.coord is not None:
        coord = compound.coord
        first = compound.terms[0] if compound.terms else None
        # bare unless that would change the meaning: 'd0.5' (a decimal), 'd0, 1' + ', 2'
        # (the comma would extend the coordinate), a bare number after a combinator
        needs_paren = (
            isinstance(first, TypeIs)
            and first.node_type[0].isdigit()
            and not isinstance(last_part(coord), Star)
        ) or (
            not compound.terms
            and coord.arity < 3
            and next_alt is not None
            and starts_part(next_alt)
        )
        paren = needs_paren or rng.random() < 0.3
        d_prefix = in_chain or rng.random() < 0.8
        out = render_coord(coord, rng, paren=paren, d_prefix=d_prefix)
    terms = compound.terms
    for i, term in enumerate(terms):
        out += render_simple(term, rng, terms[i + 1] if i + 1 < len(terms) else None)
    return out


def render(sel: Selector, rng: random.Random) -> str:
    texts: list[str] = []
    for a in reversed(sel.alternatives):  # right to left: each needs to know what follows
        next_alt = texts[0] if texts else None
        pieces = []
        for i, compound in enumerate(a.parts):
            last = i == len(a.parts) - 1
            pieces.append(
                render_compound(
                    compound,
                    rng,
                    in_chain=i > 0,
                    next_alt=next_alt.lstrip() if last and next_alt else None,
                )
            )
        text = pieces[0]
        for comb, piece in zip(a.combinators, pieces[1:], strict=True):
            text += rng.choice([" ", "  ", "\t"]) if comb == " " else rng.choice([">", " > ", "> "])
            text += piece
        texts.insert(0, text)
    body = rng.choice([", ", ",", " , "]).join(texts)
    if sel.time is None:
        return body
    t = sel.time
    prefix = {
        "now": "@t0",
        "back": f"@t-{t.value}",
        "episode": f"@e{t.value}",
        "snapshot": f"@snap:{t.value}",
    }[t.kind]
    return prefix + rng.choice([" ", "  ", "\n"]) + body


# Hypothesis strategies over the AST.

small_int = st.integers(-40, 40)
parts = st.one_of(
    st.just(Star()),
    small_int.map(Exact),
    st.tuples(small_int, small_int).map(lambda t: Span(min(t), max(t))),
)
coords = st.one_of(
    st.builds(Coord, parts),
    st.builds(Coord, parts, parts),
    st.builds(Coord, parts, parts, parts),
)
_NAME_START = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
idents = st.builds(
    str.__add__,
    st.sampled_from(_NAME_START),
    st.text(alphabet=_NAME_START + "-.:", max_size=8),
)
names = st.one_of(idents, st.text(min_size=1, max_size=8))
values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    idents,
)
ops: st.SearchStrategy[Op] = st.sampled_from(["=", "!=", "<", "<=", ">", ">="])
simples: st.SearchStrategy[Simple] = st.one_of(
    st.sampled_from([Region("sys"), Region("ah"), Region("seq")]),
    names.map(KeyIs),
    names.map(HasTag),
    idents.map(TypeIs),
    st.sampled_from([Flag("permanent"), Flag("temporary"), Flag("sticky"), Flag("cyclic")]),
    st.builds(Attr, idents, ops, values),
)


def drop_adjacent_types(terms: list[Simple]) -> tuple[Simple, ...]:
    """'.a.b' is one type 'a.b': two types in a row cannot be written (nor mean anything)."""
    kept: list[Simple] = []
    for term in terms:
        if not (isinstance(term, TypeIs) and kept and isinstance(kept[-1], TypeIs)):
            kept.append(term)
    return tuple(kept)


@st.composite
def compounds(draw: st.DrawFn) -> Compound:
    coord = draw(st.one_of(st.none(), coords))
    terms = draw(st.lists(simples, min_size=0 if coord else 1, max_size=4))
    return Compound(coord, drop_adjacent_types(terms))


combinators: st.SearchStrategy[Literal[" ", ">"]] = st.sampled_from([" ", ">"])


@st.composite
def complexes(draw: st.DrawFn) -> Complex:
    parts_ = draw(st.lists(compounds(), min_size=1, max_size=4))
    combs = draw(st.lists(combinators, min_size=len(parts_) - 1, max_size=len(parts_) - 1))
    return Complex(tuple(parts_), tuple(combs))


times = st.one_of(
    st.none(),
    st.just(Time("now")),
    st.integers(1, 10**6).map(lambda n: Time("back", n)),
    st.integers(0, 10**6).map(lambda n: Time("episode", n)),
    st.text(alphabet=_NAME_START + "-.:", min_size=1, max_size=12).map(
        lambda s: Time("snapshot", s)
    ),
)
selectors = st.builds(
    lambda t, a: Selector("", t, tuple(a)), times, st.lists(complexes(), min_size=1, max_size=3)
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(selectors, st.randoms(use_true_random=False))
def test_rendered_ast_parses_back_to_itself(sel: Selector, rng: random.Random) -> None:
    text = render(sel, rng)
    parsed = parse_selector_uncached(text)
    assert parsed.source == text
    assert_same(parsed.time, sel.time)
    assert_same(parsed.alternatives, sel.alternatives)


# -- caching ---------------------------------------------------------------------------------------


def test_parse_selector_caches_and_long_unions_parse() -> None:
    """Timing lives in bench/; here: the cache hands back the same object; size is no limit."""
    first = parse_selector("d1-3, 1, *")
    assert parse_selector("d1-3, 1, *") is first
    assert parse_selector_uncached("d1-3, 1, *") is not first
    assert parse_selector_uncached("d1-3, 1, *") == first
    long_text = ", ".join(f"(d{i}, 1, *)#k{i}" for i in range(300))
    assert len(parse_selector_uncached(long_text).alternatives) == 300


@pytest.mark.parametrize(
    ("text", "position", "token"),
    [
        ("d9223372036854775808", 1, "9223372036854775808"),
        ("d0, 1, -9223372036854775809", 7, "-9223372036854775809"),
        ("d0, 1..99999999999999999999", 7, "99999999999999999999"),
        ("[ttl>9223372036854775808]", 5, "9223372036854775808"),
        ("@e99999999999999999999 #a", 2, "99999999999999999999"),
    ],
)
def test_a_selector_given_now_keeps_its_integers_in_the_engines_range(
    text: str, position: int, token: str
) -> None:
    parse_selector(text)  # as a log written before the rule holds it: still read
    with pytest.raises(InvalidSelector) as info:
        check_input_selector(text)
    assert (info.value.position, info.value.token) == (position, token)
    assert "outside the engine's range" in info.value.reason
    assert check_input_selector("d9223372036854775807, -9223372036854775808") is not None


def test_a_selector_that_is_not_text_is_refused_in_words_that_can_be_printed() -> None:
    with pytest.raises(InvalidSelector) as info:
        check_input_selector("#a\ud800")  # what an invalid UTF-8 byte in an argument becomes
    err = info.value
    assert (err.code, err.position) == ("INVALID_SELECTOR", 2)
    assert "lone surrogate" in err.reason
    assert err.selector == "#a\\ud800"
    assert "\\ud800" in str(err).encode("utf-8").decode()  # it can be written out
