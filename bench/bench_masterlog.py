"""Benchmarks of the master-log reader (issue 13, ``engine/masterlog``), each figure beside its
anchor measured in the same run: ``python -m bench masterlog``.

The conversation is made here, in a temporary directory, as gptme 0.35.1 leaves it. Its
``conversation.jsonl`` is 1 GiB (``BENCH_MASTERLOG_SIZE=32M python -m bench masterlog`` for a
quick run), one line per message as gptme writes it (``json.dumps({"role", "content",
"timestamp"}) + "\\n"``, non-ASCII escaped): user questions of 100 B to 2 KB, assistant answers
and tool outputs (``system``) of 300 B and 200 B to 20 KB, sizes log-uniform, the text Zipf
words with code, paths and some non-ASCII lines, each message's first line with a word of its
own. Its active view ``views/compacted-001.jsonl`` holds ``REFERENCES`` messages compacted as
gptme's autocompact does: tool outputs of 2,000 characters or more saved whole to
``tool-outputs/autocompact/`` and replaced by gptme's summary and a reference (``tool-output``),
assistant answers over 1,000 tokens by their opening and a reference (``compressed``), spread
evenly over the log. ``events.jsonl`` holds gptme's ``message_append`` records of the last
messages. Every reference verifies ``ok``.

1. Indexing the whole log: ``LineIndex.refresh()`` on a fresh cache, in this process ÷
   ``wc -l`` on the same file (a process of its own), the file read once before so both find it
   in the page cache, best of 3 each: ≤ 1.5. When some Python has gptme (``BENCH_GPTME_PYTHON``,
   the one running the bench, or the one beside a ``gptme`` on ``PATH``), gptme's own
   ``build_master_context_index`` is timed inside that interpreter and printed beside them,
   without a target.
2. One message appended as gptme appends it on a view (to the master log, the view and
   ``events.jsonl``), then ``watch.update`` (the logs' indexes refreshed, the references
   verified again where they may have changed, the new lines catalogued): median of 20 appends
   ≤ 20 ms, with the catalogue (its FTS5 index included) and every verdict made before; the time
   cataloguing the whole log took is printed. Anchor: the same appends to a conversation of
   1 MiB, its view compacted the same way (every message autocompact would cut).
3. ``verify_all`` of the view's ``REFERENCES`` references on a conversation just opened: the
   view's references parsed, then each verified (its byte range against the index, its message
   read and matched to the Preview and size, a tool output's saved file read and compared), the
   median of 3 openings: ≤ 1 s. Anchor: reading the same byte ranges with ``os.pread`` and
   ``json.loads`` alone, the least any check must do.
4. Full-text search over the whole catalogued log: ``Catalogue.search(query, limit=20)`` for 50
   queries of one or two words (common, middling and rare words, and words of one message
   alone), after one pass over them: p95 ≤ 50 ms. Anchor: the p95 of a point lookup of one
   catalogued line (``SELECT * FROM messages WHERE name = ? AND line = ?``).
5. Opening the master-log screen on the indexed log: a fresh headless process running
   ``PactApp(directory, watch=False)`` with ``PACT_TUI_CACHE`` naming a cache that already holds
   every log's index (made before, untimed), from spawning it to the first frame composed with
   the ``MasterLogScreen`` shown and its master list holding lines (verifying and cataloguing go
   on in workers after that, by design, and are not waited for) ÷ the cold start of a minimal
   Textual app that shows one label (``bench.bench_app``'s), both run once untimed first, then
   the median of 5 each: ≤ 2. Both start as an installed program does, their modules' bytecode
   cached (in the scratch folder, whatever ``PYTHONDONTWRITEBYTECODE`` says).

6. An undo on the indexed and catalogued log, as gptme 0.35.1 does one: the master copied to
   ``branches/main-undo-0.jsonl``, written again without its last 2 messages (a new file
   renamed over it) and an ``undo`` record appended to ``events.jsonl``; then the app's
   ``LogSession.update`` (the files read outside the session's lock, the rewrite compared with
   the catalogue, every reference verified again a batch per hold of the lock): the re-index
   of the master (the first stage and apply of ``LogSession.reindex``, its rows published)
   ≤ 2 s; the new branch, staged and applied after it, is timed beside. Anchor: the byte
   index of the whole log on a fresh cache, in the same run. Meanwhile a thread reads rows
   as the screen's lists do (40 ``LogSession.row``, 60 times a second, from the lines the
   update published: never waiting for the lock the verification holds): the longest a
   screenful took (the reader's longest wait, the screen answering keys) ≤ 50 ms. Anchor:
   the same reader, as many screenfuls, with nothing else running, in the same run. Figure
   6 changes the conversation: it runs last.

``BENCH_MASTERLOG_FIGURES=5`` (a comma list) runs some figures alone (figure 4 searches the
catalogue figure 2 builds). The module is also the
child process of figure 5: ``python -m bench.bench_masterlog paint DIR``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

from bench.bench_app import STARTS, WARM_STARTS, cold_start, on_paint
from bench.common import fmt, monotonic_ns, percentile, report_limit, report_ratio, sized
from engine.masterlog.conversation import MASTER, Conversation
from engine.masterlog.index import LineIndex, connect
from engine.masterlog.lines import encode_message, preview_of
from engine.masterlog.references import format_reference, format_tool_summary
from engine.masterlog.verify import Status, Verifier, verify
from engine.masterlog.watch import update

SIZE = sized("1G", "1M")  # the master log's size unless BENCH_MASTERLOG_SIZE says otherwise
SMALL = sized(1 << 20, 256 << 10)  # figure 2's anchor: a conversation of 1 MiB
REFERENCES = sized(10_000, 20)
VIEW = "views/compacted-001.jsonl"
EVENTS = "events.jsonl"
KEPT_EVENTS = 20  # message_append records in events.jsonl at the start
APPENDS, WARM = sized(20, 3), sized(3, 1)
QUERIES = 50
TOOL_MIN_CHARS = 2_000  # tool outputs this long are saved to a file and cut to a reference
COMPRESS_MIN_CHARS = 4_004  # assistant answers over 1,000 tokens are compressed
POOL_CHARS = sized(6_000_000, 300_000)  # the text the messages are cut from
WRITE_BUFFER = 8 << 20


def parse_size(text: str) -> int:
    """``"1G"``, ``"256M"``, ``"64K"`` (binary multiples, an optional ``iB``/``B``) or bytes."""
    text = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    return int(float(text[:-1] if scale != 1 else text) * scale)


def size_text(size: int) -> str:
    return f"{size / (1 << 30):.2f} GiB" if size >= 1 << 30 else f"{size / (1 << 20):,.1f} MiB"


# -- the messages -------------------------------------------------------------------------------
_COMMON = (
    "the of and to a in is it that for on with as was be this by are not or at from have an"
    " but which you they we can if will all one there has more when do so what up out about"
    " into than them some could its then other only new also any these two may first use how"
    " file line function test error value return list data code change run output build"
    " config path module class method call type string number result check update read write"
)
_CODE = "def return import self None True False async await print raise yield"
_SYLLABLES = (
    "ka lo mi ne ru sa te vo zu pre qua dor vel lin mar tos gel hub rix fen pal cor dun sil"
)
COMMON, CODE_WORDS, SYLLABLES = (words.split() for words in (_COMMON, _CODE, _SYLLABLES))
NON_ASCII = (
    "Café — naïve résumé, “quoted” \u2018text\u2019 … déjà vu",
    "日本語のテキストを含む行です",
    "Ünïcödé ✓ ✗ → ← ≤ ≥ ± °C µs",
    "emoji in a log line 😀 🚀 🎉 and a dash \u2013",
    "Ελληνικά και русский текст",
)


@dataclass(frozen=True, slots=True)
class Vocabulary:
    words: list[str]  # by rank: the common words first, then made-up ones
    weights: list[float]  # cumulative, Zipf

    @classmethod
    def make(cls, rnd: random.Random, size: int = 40_000) -> Vocabulary:
        words = list(dict.fromkeys(COMMON + CODE_WORDS))
        seen = set(words)
        while len(words) < size:
            word = "".join(rnd.choices(SYLLABLES, k=rnd.randint(2, 4)))
            if word not in seen:
                seen.add(word)
                words.append(word)
        weights = list(itertools.accumulate(1 / (rank + 1) ** 1.05 for rank in range(size)))
        return cls(words, weights)

    def draw(self, rnd: random.Random, count: int) -> list[str]:
        return rnd.choices(self.words, cum_weights=self.weights, k=count)


def text_pool(rnd: random.Random, vocabulary: Vocabulary, chars: int) -> str:
    """``chars`` characters of prose, code, paths and some non-ASCII lines."""
    words = vocabulary.draw(rnd, chars // 6 + 1)
    lines: list[str] = []
    used = position = 0
    while used < chars:
        count = rnd.randint(4, 18)
        chunk = words[position : position + count]
        position = (position + count) % (len(words) - 20)
        kind = rnd.random()
        if kind < 0.6:
            line = " ".join(chunk).capitalize() + "."
        elif kind < 0.8:
            line = f"    {chunk[0]} = {chunk[1]}({', '.join(chunk[2:5])})  # {' '.join(chunk[5:])}"
        elif kind < 0.9:
            line = f"src/{chunk[0]}/{chunk[1]}.py:{rnd.randint(1, 999)}: {' '.join(chunk[2:])}"
        elif kind < 0.97:
            line = ""
        else:
            line = rnd.choice(NON_ASCII)
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)


def own_word(n: int) -> str:
    """The word only message ``n`` holds (a search for it finds one line)."""
    return f"zq{n * 7_919 % 1_000_003:07d}"


class Messages:
    """A reproducible, endless stream of gptme messages."""

    def __init__(self, seed: int) -> None:
        self.rnd = random.Random(seed)
        self.vocabulary = Vocabulary.make(self.rnd)
        self.pool = text_pool(self.rnd, self.vocabulary, POOL_CHARS)
        self.time = datetime(2025, 6, 1, 9, 0, tzinfo=UTC)
        self.count = 0

    def next(self) -> dict[str, str]:
        rnd = self.rnd
        w = self.vocabulary.draw(rnd, 4)
        own = own_word(self.count)
        pick = rnd.random()
        if pick < 0.15:
            role, low, high = "user", 100, 2_000
            first = f"Can you {w[0]} the {w[1]} {w[2]} in {w[3]}? ({own})"
        elif pick < 0.6:
            role, low, high = "assistant", 300, 20_000
            first = f"Let me {w[0]} the {w[1]} of {w[2]} first ({own})."
            if rnd.random() < 0.05:  # a first line longer than a Preview
                first += " " + " ".join(self.vocabulary.draw(rnd, 60))
        else:
            role, low, high = "system", 200, 20_000
            first = f"Ran command: `grep -rn {w[0]} src/{w[1]}/` ({own})"
        length = int(low * (high / low) ** rnd.random())
        body = max(0, length - len(first) - 1)
        at = rnd.randrange(len(self.pool) - body - 1)
        self.time += timedelta(seconds=rnd.randint(1, 90), microseconds=rnd.randrange(10**6))
        self.count += 1
        return {
            "role": role,
            "content": f"{first}\n{self.pool[at : at + body]}",
            "timestamp": self.time.isoformat(),
        }


def compactable(message: dict[str, str]) -> str | None:
    """How gptme's autocompact would cut this message (None: it keeps it)."""
    chars = len(message["content"])
    if message["role"] == "system" and chars >= TOOL_MIN_CHARS:
        return "tool-output"
    if message["role"] == "assistant" and chars >= COMPRESS_MIN_CHARS:
        return "compressed"
    return None


def event(seq: int, message: dict[str, str]) -> bytes:
    """gptme's ``message_append`` record in ``events.jsonl``."""
    record = {
        "seq": seq,
        "ts": message["timestamp"],
        "type": "message_append",
        "payload": {"message": message},
    }
    return (json.dumps(record, default=str) + "\n").encode()


# -- the conversation directory -------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Cut:
    """A master line the view compacts."""

    line: int
    start: int
    end: int
    kind: str  # tool-output | compressed


@dataclass(slots=True)
class Made:
    directory: Path
    lines: int
    size: int
    references: list[Cut]
    tool_outputs: int  # saved files
    reused: bool  # fewer compactable messages than references: lines referenced again
    roles: Counter[str]
    stream: Messages  # the conversation's next messages (figure 2's appends)


def make_conversation(directory: Path, size: int, references: int | None) -> Made:
    """A gptme conversation of ``size`` bytes of master log, its view ``references`` references
    (None: one to every message autocompact would cut)."""
    directory.mkdir(parents=True)
    stream = Messages(seed=13)
    cuttable: list[Cut] = []
    roles: Counter[str] = Counter()
    recent: list[dict[str, str]] = []
    written = lines = held = 0
    buffer: list[bytes] = []
    with open(directory / MASTER, "wb", buffering=0) as master:
        while written < size:
            message = stream.next()
            raw = encode_message(message)
            kind = compactable(message)
            if kind is not None:
                cuttable.append(Cut(lines, written, written + len(raw), kind))
            roles[message["role"]] += 1
            recent = [*recent[1 - KEPT_EVENTS :], message]
            buffer.append(raw)
            held += len(raw)
            written += len(raw)
            lines += 1
            if held >= WRITE_BUFFER:
                master.write(b"".join(buffer))
                buffer, held = [], 0
        master.write(b"".join(buffer))
    chosen = _spread(cuttable, references)
    saved = _write_view(directory, chosen)
    first_seq = stream.count - len(recent) + 1
    (directory / EVENTS).write_bytes(
        b"".join(event(first_seq + i, message) for i, message in enumerate(recent))
    )
    reused = references is not None and references > len(cuttable)
    return Made(directory, lines, written, chosen, saved, reused, roles, stream)


def _spread(cuttable: list[Cut], count: int | None) -> list[Cut]:
    """``count`` compactable lines spread evenly over the log (again from the first when there
    are fewer)."""
    if count is None:
        return cuttable
    if count <= len(cuttable):
        step = len(cuttable) / count
        return [cuttable[int(i * step)] for i in range(count)]
    return [cuttable[i % len(cuttable)] for i in range(count)]


def _write_view(directory: Path, chosen: list[Cut]) -> int:
    """The view: one message per reference, in the master's order, cut as autocompact cuts it;
    how many tool outputs were saved."""
    master_path = str(directory / MASTER)
    saved_dir = directory / "tool-outputs" / "autocompact"
    saved_dir.mkdir(parents=True)
    saved: dict[int, str] = {}
    view: list[bytes] = []
    with open(directory / MASTER, "rb") as master:
        fd = master.fileno()
        for cut in sorted(chosen, key=lambda c: c.line):
            message = json.loads(os.pread(fd, cut.end - cut.start, cut.start))
            content = message["content"]
            tokens = len(content) // 4
            reference = format_reference(
                master_path, cut.start, cut.end, tokens, preview_of(content)
            )
            if cut.kind == "tool-output":
                path = saved.get(cut.line)
                if path is None:  # gptme's name: tool-outputs/<tool>/<time>-<sha8>.txt
                    when = datetime.fromisoformat(message["timestamp"]).strftime("%Y%m%d_%H%M%S")
                    digest = hashlib.sha256(content.encode()).hexdigest()[:8]
                    file = saved_dir / f"{when}-{digest}.txt"
                    file.write_text(content, encoding="utf-8")
                    path = saved[cut.line] = str(file)
                command = content.split("\n", 1)[0].strip()
                text = f"{format_tool_summary(tokens, command, path)}\n\n{reference}"
            else:
                text = f"{_opening(content)}\n\n{reference}"
            view.append(encode_message({**message, "content": text}))
    (directory / "views").mkdir()
    (directory / VIEW).write_bytes(b"".join(view))
    (directory / "views" / ".current").write_text("compacted-001\n")
    return len(saved)


def _opening(content: str) -> str:
    """A compressed message's text: its first lines, about a quarter of it."""
    kept: list[str] = []
    used = 0
    for line in content.split("\n"):
        if kept and used + len(line) > len(content) // 4:
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join(kept)


def append_message(made: Made) -> None:
    """The conversation's next message, written as gptme writes it on a view: appended to the
    master log and the view, and its record to ``events.jsonl``."""
    message = made.stream.next()
    raw = encode_message(message)
    for name in (MASTER, VIEW):
        with open(made.directory / name, "ab") as log:
            log.write(raw)
    with open(made.directory / EVENTS, "ab") as events:
        events.write(event(made.stream.count, message))
    made.lines += 1
    made.size += len(raw)


def read_once(path: Path) -> None:
    """Read a file through, so what follows finds it in the page cache."""
    with open(path, "rb", buffering=0) as file:
        while file.read(WRITE_BUFFER):
            pass


# 1. Indexing the whole log


def bench_index(made: Made, scratch: Path) -> None:
    path = made.directory / MASTER
    print(f"1. indexing the whole log ({size_text(made.size)}, {made.lines:,} lines)")
    read_once(path)
    counting = []
    for _ in range(3):
        start = time.perf_counter()
        done = subprocess.run(["wc", "-l", str(path)], capture_output=True, text=True, check=True)
        counting.append(time.perf_counter() - start)
        assert int(done.stdout.split()[0]) == made.lines, done.stdout
    indexing = []
    for run in range(3):
        db = connect(scratch / f"fresh-{run}.sqlite")
        index = LineIndex.load(db, path, MASTER)
        start = time.perf_counter()
        refresh = index.refresh()
        indexing.append(time.perf_counter() - start)
        db.close()
        assert (refresh.lines, refresh.size) == (made.lines, made.size), refresh
    wc = min(counting)
    report_ratio(
        "LineIndex.refresh() of the whole log, fresh cache (best of 3)",
        min(indexing),
        wc,
        1.5,
        anchor_label="wc -l (best of 3)",
    )
    gptme = gptme_index(path)
    if gptme is not None:
        python, seconds, lines = gptme
        assert lines == made.lines, lines
        print(
            f"  context: gptme's build_master_context_index, best of 3 inside {python}:"
            f" {fmt(seconds)} (ratio to wc -l {seconds / wc:.2f}; no target)"
        )


GPTME_TIMING = """
import sys, time
from pathlib import Path
from gptme.util.master_context import build_master_context_index
times = []
for _ in range(3):
    start = time.perf_counter()
    index = build_master_context_index(Path(sys.argv[1]))
    times.append(time.perf_counter() - start)
print(min(times), len(index))
"""


def _pythons() -> Iterator[str]:
    if os.environ.get("BENCH_GPTME_PYTHON"):
        yield os.environ["BENCH_GPTME_PYTHON"]
    yield sys.executable
    found = shutil.which("gptme")
    if found:
        yield str(Path(found).resolve().parent / "python")


def gptme_index(path: Path) -> tuple[str, float, int] | None:
    """gptme's own index of the log, timed inside a Python that has gptme: that Python, the best
    of 3 and the lines found; None when no Python at hand has it."""
    for python in dict.fromkeys(_pythons()):
        try:
            subprocess.run(
                [python, "-c", "import gptme.util.master_context"],
                capture_output=True,
                check=True,
                timeout=120,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        done = subprocess.run(
            [python, "-c", GPTME_TIMING, str(path)], capture_output=True, text=True, check=True
        )
        seconds, lines = done.stdout.split()
        return python, float(seconds), int(lines)
    return None


# 2. One message appended, then watch.update


def catalogue_whole(made: Made, cache: Path) -> str:
    """Open the conversation (indexing it) and catalogue every log; how long each took."""
    start = time.perf_counter()
    conversation = Conversation.open(made.directory, cache)
    opened = time.perf_counter()
    for _ in conversation.catalogue_all():
        pass
    built = time.perf_counter()
    rows = conversation.catalogue.count(MASTER)
    conversation.close()
    assert rows == made.lines, rows
    return (
        f"indexed in {fmt(opened - start)}, {rows:,} lines catalogued (rows and FTS5 index)"
        f" in {fmt(built - opened)}, cache {size_text(cache.stat().st_size)}"
    )


def append_latencies(made: Made, cache: Path) -> list[float]:
    """``watch.update`` after each of ``WARM + APPENDS`` appends, the first ``WARM`` left out."""
    conversation = Conversation.open(made.directory, cache)
    try:
        for _ in conversation.catalogue_all():
            pass
        verifier = Verifier(conversation)
        verifier.update()
        assert verifier.counts() == {"ok": len(made.references)}, verifier.counts()
        touched = {made.directory / name for name in (MASTER, VIEW, EVENTS)}  # as watchfiles says
        samples = []
        for _ in range(WARM + APPENDS):
            append_message(made)
            start = time.perf_counter()
            done = update(conversation, verifier, touched)
            samples.append(time.perf_counter() - start)
            assert not done.changed and conversation.master.lines == made.lines, done
        assert conversation.catalogue.count(MASTER) == made.lines
        return samples[WARM:]
    finally:
        conversation.close()


def bench_append(made: Made, cache: Path, scratch: Path) -> None:
    print(
        f"2. one message appended (master, view, events.jsonl), then watch.update"
        f" ({size_text(made.size)} log, {len(made.references):,} references in the view)"
    )
    print(f"  (the whole conversation {catalogue_whole(made, cache)})")
    small = make_conversation(scratch / "small", SMALL, None)
    samples = append_latencies(made, cache)
    anchor = append_latencies(small, scratch / "small.sqlite")
    figure, floor = statistics.median(samples), statistics.median(anchor)
    report_limit(
        f"append + watch.update, median of {APPENDS}",
        figure * 1e3,
        20,
        "ms",
        anchor_text=f"p95 {fmt(percentile(samples, 0.95))}; the same on a 1 MiB conversation"
        f" ({small.lines:,} lines, {len(small.references)} references) {fmt(floor)},"
        f" ratio {figure / floor:.1f}",
    )


# 3. Verifying the view's references


def bench_verify(made: Made, cache: Path) -> None:
    count = len(made.references)
    tools = sum(cut.kind == "tool-output" for cut in made.references)
    print(
        f"3. verify_all of {count:,} references ({tools:,} tool-output, {made.tool_outputs:,}"
        f" saved files; {count - tools:,} compressed)"
        + (" [fewer compactable messages: lines referenced again]" if made.reused else "")
    )
    parsing, checking = [], []
    for _ in range(3):
        conversation = Conversation.open(made.directory, cache)
        try:
            start = time.perf_counter()
            found = conversation.references()  # verify_all, in two steps timed apart
            parsed = time.perf_counter()
            verdicts = [verify(conversation, one) for one in found]
            checked = time.perf_counter()
        finally:
            conversation.close()
        parsing.append(parsed - start)
        checking.append(checked - parsed)
        assert len(verdicts) == count, len(verdicts)
        wrong = [v for v in verdicts if v.status is not Status.OK]
        assert not wrong, wrong[0].to_json()
    ranges = [(cut.start, cut.end) for cut in made.references]
    reading = []
    for _ in range(3):
        start = time.perf_counter()
        with open(made.directory / MASTER, "rb") as master:
            fd = master.fileno()
            for a, b in ranges:
                json.loads(os.pread(fd, b - a, a))
        reading.append(time.perf_counter() - start)
    figure = statistics.median(p + c for p, c in zip(parsing, checking, strict=True))
    floor = min(reading)
    report_limit(
        f"verify_all of {count:,} references, conversation just opened (median of 3)",
        figure * 1e3,
        1_000,
        "ms",
        anchor_text=f"the view parsed in {fmt(statistics.median(parsing))}, verified in"
        f" {fmt(statistics.median(checking))}; pread + json.loads of the ranges {fmt(floor)},"
        f" ratio {figure / floor:.1f}",
    )


# 4. Full-text search


def search_queries(made: Made, rnd: random.Random) -> list[str]:
    """One- and two-word queries: common words, middling ones, rare ones (in the text, seldom),
    and words of one message alone."""
    vocabulary, pool = made.stream.vocabulary, made.stream.pool
    common = vocabulary.words[:60]
    middling = vocabulary.words[500:5_000]
    rare = [word for word in vocabulary.words[20_000:20_400] if f" {word} " in pool]
    alone = [own_word(n) for n in rnd.sample(range(made.lines), 8)]
    c, m, r = (partial(rnd.choice, words) for words in (common, middling, rare))
    queries = [c() for _ in range(10)] + [m() for _ in range(10)] + [r() for _ in range(5)]
    queries += alone[:5]
    queries += [f"{c()} {c()}" for _ in range(8)] + [f"{c()} {m()}" for _ in range(6)]
    queries += [f"{m()} {r()}" for _ in range(3)] + [f"{c()} {word}" for word in alone[5:]]
    assert len(queries) == QUERIES, len(queries)
    return queries


def bench_search(made: Made, cache: Path) -> None:
    print(f"4. full-text search over the {size_text(made.size)} log ({QUERIES} queries)")
    rnd = random.Random(4)
    queries = search_queries(made, rnd)
    lines = [rnd.randrange(made.lines) for _ in range(QUERIES)]
    lookup = "SELECT * FROM messages WHERE name = ? AND line = ?"
    conversation = Conversation.open(made.directory, cache)
    try:
        catalogue, db = conversation.catalogue, conversation.db
        for query in queries:  # the first reads of the index's pages
            catalogue.search(query, limit=20)
        searching, hits = [], []
        for query in queries:
            start = time.perf_counter()
            found = catalogue.search(query, limit=20)
            searching.append(time.perf_counter() - start)
            hits.append(len(found))
        for line in lines:
            db.execute(lookup, (MASTER, line)).fetchone()
        looking = []
        for line in lines:
            start = time.perf_counter()
            row = db.execute(lookup, (MASTER, line)).fetchone()
            looking.append(time.perf_counter() - start)
            assert row is not None
    finally:
        conversation.close()
    slowest = max(range(QUERIES), key=searching.__getitem__)
    print(
        f"  search: p50 {fmt(statistics.median(searching))}, slowest {fmt(searching[slowest])}"
        f" ({queries[slowest]!r}); {sum(h == 20 for h in hits)} queries found a page of 20,"
        f" {sum(0 < h < 20 for h in hits)} fewer, {sum(h == 0 for h in hits)} none"
    )
    figure, anchor = percentile(searching, 0.95), percentile(looking, 0.95)
    report_limit(
        "Catalogue.search(query, limit=20), p95",
        figure * 1e3,
        50,
        "ms",
        anchor_text=f"point lookup of a catalogued line p95 {fmt(anchor)},"
        f" ratio {figure / anchor:.0f}",
    )


# 5. Opening the screen, to its first paint


def child_paint(directory: str) -> None:
    """Open the master-log screen on ``directory`` (headless) and print when the first frame
    with the screen's lists filled was composed: ``shown`` made and the master list holding
    lines (its rows are read as they are drawn)."""
    from engine.heap import pause_start

    pause_start()  # before the app's imports, as the command's entry point (pact_tui/launch.py)
    from pact_tui.app import PactApp
    from pact_tui.screens.masterlog import MasterLogScreen
    from pact_tui.widgets.loglines import LogLines

    app = PactApp(directory, watch=False)
    done = False

    def painted() -> None:
        nonlocal done
        screen = app.screen
        if done or not isinstance(screen, MasterLogScreen) or screen.shown is None:
            return
        if screen.query_one("#master", LogLines).line_count > 0:
            done = True
            print(monotonic_ns(), flush=True)
            app.exit()

    on_paint(app, painted)
    app.run(headless=True)


def bench_paint(made: Made, scratch: Path) -> None:
    from pact_tui.logcli import cache_for

    print(
        f"5. opening the master-log screen on the indexed {size_text(made.size)} log, to its"
        f" first paint ({STARTS} runs each, median)"
    )
    cache_dir = scratch / "paint-cache"
    cache = cache_dir / cache_for(made.directory).name  # where the child looks
    start = time.perf_counter()
    Conversation.open(made.directory, cache).close()  # every log indexed, as the app opens it
    print(f"  (indexed for the screen in {fmt(time.perf_counter() - start)}, untimed)")
    paint = ["paint", str(made.directory)]
    module = "bench.bench_masterlog"

    # Both as installed: the modules' bytecode written once and read at every start (kept in
    # the scratch folder), whatever PYTHONDONTWRITEBYTECODE says here.
    env = {
        "PACT_TUI_CACHE": str(cache_dir),
        "PYTHONDONTWRITEBYTECODE": "",
        "PYTHONPYCACHEPREFIX": str(scratch / "pycache"),
    }
    for _ in range(WARM_STARTS):  # warm the file cache and the bytecode for both
        cold_start(["minimal"], env=env)
        cold_start(paint, module, env)
    minimal = statistics.median(cold_start(["minimal"], env=env) for _ in range(STARTS))
    screen = statistics.median(cold_start(paint, module, env) for _ in range(STARTS))
    report_ratio(
        f"master-log screen on the indexed {size_text(made.size)} log, open → first paint"
        " ÷ minimal Textual app",
        screen,
        minimal,
        2,
        anchor_label="minimal",
    )


# 6. An undo on the big log


def gptme_undo(directory: Path, count: int) -> None:
    """What gptme 0.35.1's undo leaves: the master saved as a branch, written again without its
    last ``count`` messages (a new file renamed over it), an ``undo`` record in events.jsonl."""
    master = directory / MASTER
    (directory / "branches").mkdir(exist_ok=True)
    shutil.copyfile(master, directory / "branches" / "main-undo-0.jsonl")
    with master.open("rb") as file:
        size = master.stat().st_size
        keep, found = size, 0
        while found <= count:  # the start of the last ``count`` lines
            keep = file.seek(max(0, keep - (1 << 20)))
            tail = file.read(size - keep)
            found = tail.count(b"\n")
        cut = keep + [i for i, b in enumerate(tail) if b == 10][-count - 1] + 1
    temporary = directory / (MASTER + ".tmp")
    with master.open("rb") as source, temporary.open("wb") as target:
        shutil.copyfileobj(source, target, length=8 << 20)
        target.truncate(cut)
    os.replace(temporary, master)
    with (directory / EVENTS).open("ab") as events:
        record = {"seq": 10**9, "ts": "2026-11-28T00:00:00", "type": "undo", "payload": {"n": 2}}
        events.write((json.dumps(record) + "\n").encode())


def bench_undo(made: Made, cache: Path, scratch: Path) -> None:
    import threading

    from pact_tui.logsession import LogSession

    print(f"6. an undo of 2 messages on the indexed, catalogued {size_text(made.size)} log")
    path = made.directory / MASTER
    db = connect(scratch / "fresh-undo.sqlite")
    index = LineIndex.load(db, path, MASTER)
    start = time.perf_counter()
    index.refresh()
    fresh = time.perf_counter() - start
    db.close()
    session = LogSession.open(made.directory, cache)
    try:
        start = time.perf_counter()
        for _ in session.conversation.catalogue_all():
            pass
        catalogued = time.perf_counter() - start
        session.verify()
        print(f"  (catalogue brought up to date in {fmt(catalogued)}, references verified)")
        lines = session.lines(MASTER)
        gptme_undo(made.directory, 2)
        read_once(path)
        read_once(made.directory / "branches" / "main-undo-0.jsonl")
        stop = threading.Event()
        waits: list[float] = []  # seconds each screenful took during the update
        idle: list[float] = []  # the same with nothing else running

        def read_rows(into: list[float], count: int | None = None) -> None:
            """As the lists draw: a screenful of rows, 60 times a second (never taking the
            session's lock: rows are read from the lines the update published), at least one
            (an update quicker than a frame, as at the smoke run's size, still has one)."""
            rnd = random.Random(6)
            while (not stop.wait(1 / 60) or not into) and (count is None or len(into) < count):
                first = rnd.randrange(0, session.lines(MASTER) - 42)
                begin = time.perf_counter()
                for line in range(first, first + 40):
                    session.row(MASTER, line)
                into.append(time.perf_counter() - begin)
                session._rows.clear()  # each read a pread and a parse, as a new screenful

        reader = threading.Thread(target=read_rows, args=(waits,))
        reader.start()
        conversation = session.conversation
        start = time.perf_counter()
        with session.lock:  # as LogSession.reindex
            conversation.prepare()
            new = conversation.unindexed()
        staged = conversation.stage(skip=new)
        with session.lock:
            refreshes = conversation.apply(staged)
            replaced = session._publish()  # the master's rows as they are now
        reindexed = time.perf_counter() - start
        del replaced, staged  # the file indexed before closed, outside the lock
        staged = conversation.stage(only=new)  # then the branch gptme saved
        with session.lock:
            refreshes += conversation.apply(staged)
            session._publish()
        with_branch = time.perf_counter() - start
        parts = session.verifier.updating(refreshes, None, batch=200)
        session._drain(parts)
        with session.lock:
            session._index_verdicts()
        whole = time.perf_counter() - start
        stop.set()
        reader.join()
        stop.clear()
        read_rows(idle, len(waits))  # the anchor: as many screenfuls with nothing else running
        changes = [c.describe() for c in conversation.changes]
        assert changes == [f"lines {lines - 1} to {lines} removed"], changes
        master = next(r for r in refreshes if r.name == MASTER)
        branch = _new_branch_alone(made.directory, scratch / "branch-alone.sqlite")
        assert session.lines(MASTER) == lines - 2
        assert new == ["branches/main-undo-0.jsonl"], new
        report_limit(
            "undo on the big log: the master re-indexed, compared and its rows published"
            " (LogSession.reindex's first stage + apply)",
            reindexed,
            2,
            "s",
            anchor_text=f"the byte index of the whole log on a fresh cache {fmt(fresh)},"
            f" ratio {reindexed / fresh:.1f}",
        )
        print(
            f"  (the master: {size_text(master.bytes_read)} read after its cut; then the branch"
            f" gptme saved, a new {size_text(made.size)} file, staged and applied after it:"
            f" both indexed {fmt(with_branch)}, ratio {with_branch / fresh:.1f}; the branch"
            f" indexed alone as the update indexes it (line ends and the references' marker"
            f" search) {fmt(branch)}, ratio {branch / fresh:.1f} of the anchor)"
        )
        print(
            "  (the whole update, the references that may have changed verified again:"
            f" {fmt(whole)}; meanwhile {len(waits):,} screenfuls of 40 rows read)"
        )
        report_limit(
            "a screenful of 40 rows read during the undo's update (the reader's longest wait)",
            max(waits) * 1e3,
            50,
            "ms",
            anchor_text=f"p99 {fmt(percentile(waits, 0.99))}; the same reader with nothing"
            f" else running, longest of {len(idle):,} {fmt(max(idle))},"
            f" p99 {fmt(percentile(idle, 0.99))},"
            f" ratio of the longest {max(waits) / max(idle):.1f}",
        )
    finally:
        session.close()


def _new_branch_alone(directory: Path, cache: Path) -> float:
    """Seconds to index the undo's branch on a fresh cache as ``Conversation.stage`` does."""
    from engine.masterlog.conversation import MARKERS

    db = connect(cache)
    try:
        index = LineIndex.load(db, directory / "branches" / "main-undo-0.jsonl", "branch")
        start = time.perf_counter()
        index.scan(needles=MARKERS)
        return time.perf_counter() - start
    finally:
        db.close()


def main() -> None:
    size = parse_size(os.environ.get("BENCH_MASTERLOG_SIZE", SIZE))
    figures = {
        int(n) for n in os.environ.get("BENCH_MASTERLOG_FIGURES", "1,2,3,4,5,6").split(",") if n
    }
    print(f"Master log (engine/masterlog): a conversation of {size_text(size)}")
    with tempfile.TemporaryDirectory(prefix="bench-masterlog-") as folder:
        scratch = Path(folder)
        start = time.perf_counter()
        made = make_conversation(scratch / "conversation", size, REFERENCES)
        mix = ", ".join(f"{made.roles[r]:,} {r}" for r in ("user", "assistant", "system"))
        print(
            f"  (made in {fmt(time.perf_counter() - start)}: {made.lines:,} messages ({mix}),"
            f" {made.size / made.lines:,.0f} bytes a line on average; the view and"
            f" {made.tool_outputs:,} saved tool outputs)"
        )
        cache = scratch / "cache.sqlite"
        for figure, benchmark in enumerate(
            (
                partial(bench_index, made, scratch),
                partial(bench_append, made, cache, scratch),
                partial(bench_verify, made, cache),
                partial(bench_search, made, cache),
                partial(bench_paint, made, scratch),
                partial(bench_undo, made, cache, scratch),
            ),
            start=1,
        ):
            if figure not in figures:
                continue
            start = time.perf_counter()
            benchmark()
            print(f"  ({fmt(time.perf_counter() - start)} for this benchmark)")


if __name__ == "__main__":
    if sys.argv[1:2] == ["paint"]:
        child_paint(sys.argv[2])
    else:
        main()
