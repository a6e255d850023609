"""Checks on text a model wrote before anyone reads it: loops, prompt echo, unsupported sentences.

Small models loop ("a way of life that is also a way of life …"), repeat their instructions
back, and write sentences their sources never said. Each check is cheap and lexical, so it runs
on every generated answer, streaming included, and on any model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from kforge.rag.analyze import STOPWORDS, analyze, tokenize
from kforge.rag.minilm_onnx import vocabulary_path
from kforge.rag.stdlib_names import defines
from kforge.rag.stem import porter_stem

__all__ = [
    "DEGENERATE_SHARE",
    "REQUEST_WORDS",
    "SUPPORT_THRESHOLD",
    "LoopWatch",
    "Support",
    "asked_verbs",
    "comparing_words",
    "cut_loop",
    "distinct_ngram_share",
    "echoed_phrase",
    "is_degenerate",
    "key_terms",
    "measured_words",
    "split_sentences",
    "support",
]

DEGENERATE_SHARE = 0.6
"""A text whose distinct word 4-grams are fewer than this share of all its 4-grams loops."""
SUPPORT_THRESHOLD = 0.7
"""A sentence is supported when at least this share of its content words occur in its sources."""
_ECHO_WORDS = 6
"""A run of this many consecutive instruction words in an answer is prompt echo."""
_LOOP_WORDS = 5
"""A run of this many words that comes back within the same text starts a loop."""
_MIN_WORDS = 8

REQUEST_WORDS = frozenset(
    [
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "do",
        "does",
        "did",
        "done",
        "can",
        "could",
        "should",
        "would",
        "will",
        "may",
        "might",
        "must",
        "shall",
        "i",
        "me",
        "my",
        "myself",
        "ourselves",
        "yourself",
        "yourselves",
        "himself",
        "herself",
        "itself",
        "themselves",
        "we",
        "our",
        "you",
        "your",
        "he",
        "she",
        "him",
        "her",
        "his",
        "its",
        "they",
        "them",
        "it",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "have",
        "has",
        "had",
        "having",
        "about",
        "tell",
        "explain",
        "describe",
        "give",
        "show",
        "list",
        "write",
        "please",
        "some",
        "any",
        "all",
        "also",
        "just",
        "like",
        "thing",
        "things",
        "something",
        "way",
        "ways",
        "use",
        "used",
        "using",
        "need",
        "want",
        "know",
        "get",
        "make",
        "mean",
        "means",
        "meaning",
        "say",
        "says",
        "said",
        "kind",
        "kinds",
        "one",
        "ones",
        "other",
        "more",
        "most",
        "much",
        "many",
        "very",
        "there",
        "here",
        "this",
        "that",
        "these",
        "those",
        "from",
        "than",
        "then",
        "out",
        "up",
        "into",
        "over",
        "under",
        "between",
        "through",
        "while",
        "each",
        "every",
        "don",
        "doesn",
        "hi",
        "hello",
        "hey",
        "thanks",
        "thank",
        "bye",
        "goodbye",
        "ok",
        "okay",
        "yes",
        "good",
        "great",
        "morning",
        "evening",
        "again",
        "anyone",
        "cheers",
        "sorry",
    ]
)
"""Words of a request that say nothing of its topic."""

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]*_]*\s+(?=[\"'(\[*_]*(?:[A-Z0-9`]|@\w))")
"""A sentence ends before a capital, a digit, code, or a decorator ("... there. @app.route()
creates a simple route")."""
_ABBREVIATIONS = re.compile(
    r"(?<![\w/~-])(?:(?i:e\.g|i\.e|etc|vs|cf|Dr|Mr|Mrs|Ms|St|No|Fig|approx)|[A-Z])\.$"
)
"""Ends of words that are no sentence end: abbreviations, and an initial ("M. Night"); not the
last part of a path ("... normally /usr/etc or /usr/local/etc. To find out ...")."""


_RUN_TOGETHER = re.compile(
    r"(?<![\w.$/])(?P<word>[a-z]{3,})[.!?](?=(?P<next>[A-Z][a-z]{2,})\b(?![.(])(?P<after> \w+)?)"
)
"""Sentences written without a space between them ("deficiency.Treatment"), not a dotted name
("os.EOL", "buffer.Blob(", "collections.OrderedDict")."""
_NAMED_BY = re.compile(r"(?:\b(?:a|an|the|of|type)|:)\s+$", re.IGNORECASE)
"""Words before a dotted name's module ("a pathlib.Path", "type scrapy.Request", "path:")."""
_OF_A_NAME = frozenset(
    [
        "object",
        "objects",
        "instance",
        "instances",
        "class",
        "classes",
        "subclass",
        "subclasses",
        "method",
        "methods",
        "attribute",
        "attributes",
        "type",
        "types",
        "argument",
        "arguments",
        "value",
        "values",
    ]
)
"""Nouns after a dotted name ("a pathlib.Path object"): the class, not a new sentence."""


def _dotted_name(sentence: str, match: re.Match[str]) -> bool:
    """Whether a run-together match is a module's name and a class's ("pathlib.Path",
    "scrapy.Spider"): a module name is no English word, the standard library's module defines
    the name ("typing.Any"), or the words around say it names one (the text lost the code
    markup that would have kept it whole)."""
    words = _english_words(str(vocabulary_path()))
    after = (match.group("after") or "").strip().lower()
    return (
        match.group("word") not in words
        or defines(match.group("word"), match.group("next"))
        or after in _OF_A_NAME
        or _NAMED_BY.search(sentence, 0, match.start()) is not None
    )


@lru_cache(maxsize=1)
def _english_words(path: str) -> frozenset[str]:
    """Whole words of a WordPiece vocabulary (not its ``##`` pieces nor its marks)."""
    with open(path, encoding="utf-8") as f:
        return frozenset(w for w in f.read().split() if w.isalpha())


def _run_together(sentence: str) -> list[str]:
    """``sentence`` cut where a sentence ends without a space, outside code spans and
    dotted names."""
    pieces, start = [], 0
    for match in _RUN_TOGETHER.finditer(sentence):
        if sentence.count("`", 0, match.start()) % 2 == 0 and not _dotted_name(sentence, match):
            pieces.append(sentence[start : match.end()])
            start = match.end()
    pieces.append(sentence[start:])
    return pieces


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (one paragraph or several), whitespace tidied, none empty; a list
    item starts a sentence, and so do a line after one ending a sentence (``_LINE_END``) and a
    sentence run on without a space ("end.Next")."""
    out: list[str] = []
    for block in re.split(r"\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)])\s)", text):
        merged: list[str] = []
        for line in _LINE_END.split(block):
            line = " ".join(line.split())
            pieces = _SENTENCE_END.split(line) if line else ()
            for piece in (p for whole in pieces for p in _run_together(whole)):
                if merged and _ABBREVIATIONS.search(merged[-1]):
                    merged[-1] = f"{merged[-1]} {piece}"
                else:
                    merged.append(piece)
        out.extend(p.strip() for p in merged if p.strip())
    return out


_LINE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]*_])|(?<=[.!?][\"')\]*_]{2}))[ \t]*\n")
"""A line break after a sentence's end: the sentence ends there, whatever the next line opens
with ("... using the White class." then "enable_packrat() - a class-level static method
...")."""


def _words(text: str) -> list[str]:
    return tokenize(text)


def distinct_ngram_share(text: str, n: int = 4) -> float:
    """Distinct word ``n``-grams over all ``n``-grams of ``text`` (1.0 for short texts)."""
    words = _words(text)
    grams = [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]
    if not grams:
        return 1.0
    return len(set(grams)) / len(grams)


def is_degenerate(text: str) -> bool:
    """True when ``text`` loops: at least 8 words and a distinct 4-gram share under 0.6."""
    return len(_words(text)) >= _MIN_WORDS and distinct_ngram_share(text) < DEGENERATE_SHARE


def cut_loop(text: str) -> tuple[str, bool]:
    """``text`` up to where it starts repeating itself, and whether it did.

    A loop starts where a run of five words comes back; the text is cut before the repeat,
    at the last sentence end before it when there is one.
    """
    spans = [(m.start(), m.group(0).lower()) for m in re.finditer(r"[^\W_]+", text)]
    seen: dict[tuple[str, ...], int] = {}
    for i in range(len(spans) - _LOOP_WORDS + 1):
        gram = tuple(w for _, w in spans[i : i + _LOOP_WORDS])
        first = seen.get(gram)
        if first is None:
            seen[gram] = i
            continue
        if i - first < _LOOP_WORDS:
            continue  # overlapping with itself ("very very very …") is caught by the share
        head = text[: spans[i][0]]
        end = max(head.rfind(". "), head.rfind("! "), head.rfind("? "), head.rfind(".\n"))
        cut = head[: end + 1] if end > 0 else head
        return cut.rstrip(" ,;:-\n"), True
    if is_degenerate(text):
        return "", True
    return text, False


class LoopWatch:
    """Watches streamed text and stops it where it starts to loop (a ``RunContext.complete``
    ``watch``): returns the text to keep once it loops, else None. Checks every ``every``
    words, so a long stream costs little."""

    def __init__(self, *, every: int = 16) -> None:
        self._checked = 0
        self._every = every

    def __call__(self, text: str) -> str | None:
        words = text.count(" ")
        if words - self._checked < self._every:
            return None
        self._checked = words
        kept, looped = cut_loop(text)
        return kept if looped else None


def echoed_phrase(text: str, instructions: Iterable[str], *, words: int = _ECHO_WORDS) -> str:
    """The first run of ``words`` consecutive words of ``instructions`` found in ``text``, or "".

    Pass only what the model was told to do, never the question or the passages: repeating
    those is quoting, not echo.
    """
    grams: set[tuple[str, ...]] = set()
    for instruction in instructions:
        tokens = _words(instruction)
        grams.update(tuple(tokens[i : i + words]) for i in range(len(tokens) - words + 1))
    tokens = _words(text)
    for i in range(len(tokens) - words + 1):
        gram = tuple(tokens[i : i + words])
        if gram in grams:
            return " ".join(gram)
    return ""


_WRITTEN_NAME = re.compile(r"(?<![\w-])[A-Z]{2,}(?![\w-])|\b(\w+)\(\)|`(\w+)`")


def written_names(text: str) -> set[str]:
    """The words ``text`` writes as names, lower-cased, whatever word they spell: in capitals
    ("What is ANY?"; not when all of it is: "THANKS!"), called (``has()``) or in backticks."""
    shouted = not any(c.islower() for c in text)
    return {
        (match.group(1) or match.group(2) or match.group(0)).lower()
        for match in _WRITTEN_NAME.finditer(text)
        if not (shouted and match.group(0).isupper())
    }


def key_terms(text: str) -> list[str]:
    """The stemmed words of ``text`` that name its topic (no stopwords, no request words, but
    a word written as a name is one: the ``ANY`` of "What is ANY?", ``has()``)."""
    seen: list[str] = []
    named = written_names(text)
    for token in tokenize(text):
        if (token in STOPWORDS or token in REQUEST_WORDS) and token not in named:
            continue
        term = porter_stem(token)
        if term not in seen:
            seen.append(term)
    return seen


def _content_terms(sentence: str) -> set[str]:
    return {t for t in analyze(sentence) if t not in _REQUEST_STEMS and not t.isdigit()} | {
        t for t in tokenize(sentence) if t.isdigit()
    }


_REQUEST_STEMS = frozenset(porter_stem(w) for w in REQUEST_WORDS)


@dataclass(frozen=True, slots=True)
class Support:
    share: float
    """Content words of the sentence found in the sources, over all its content words."""
    missing: tuple[str, ...]
    """The sentence's content words the sources lack (stemmed)."""

    @property
    def supported(self) -> bool:
        return self.share >= SUPPORT_THRESHOLD


def support(sentence: str, sources: Sequence[str]) -> Support:
    """How much of ``sentence`` its ``sources`` say: the share of its content words in them."""
    words = _content_terms(sentence)
    if not words:
        return Support(0.0, ())
    known: set[str] = set()
    for source in sources:
        known |= set(analyze(source)) | {t for t in tokenize(source) if t.isdigit()}
    missing = tuple(sorted(words - known))
    return Support(1 - len(missing) / len(words), missing)


_HOW_MEASURE = re.compile(
    r"\bhow\s+(big|large|long|small|short|old|often|far|fast|slow|high|low|deep|wide|tall|"
    r"heavy|frequently|quickly)\b",
    re.I,
)


_COMPARING = frozenset(
    [
        "difference",
        "differences",
        "differ",
        "differs",
        "different",
        "compare",
        "compared",
        "comparison",
        "versus",
        "vs",
    ]
)


_HOW_TO = re.compile(
    r"\bhow\s+(?:(?:do|can|could|should|would|shall|to)\s+)+(?:(?:i|we|you|one)\s+)?"
    r"(?:to\s+)?(?!(?:the|a|an|this|that|these|those|they|it|he|she|my|your|our|their|its)\b)"
    r"([a-z]+)",
    re.I,
)
"""The verb of "how do I ...": not the subject of "how do *they* differ", "how do *the* two
look"."""


def asked_verbs(text: str) -> set[str]:
    """The verbs a "how do I ..." question asks about, lower-cased: "list" of "How do I list
    all tags?" is what to do, not a request word as in "List the options"."""
    return {m.group(1).lower() for m in _HOW_TO.finditer(text)}


def measured_words(text: str) -> set[str]:
    """The adjectives of "how big", "how long", ...: part of the request (a size, a duration),
    not of what the question is about."""
    return {m.group(1).lower() for m in _HOW_MEASURE.finditer(text)}


def comparing_words(text: str) -> set[str]:
    """The words asking to compare: "the difference between X and Y" is about X and Y, and a
    manual need not say "difference" to answer it."""
    return {w for w in re.findall(r"[a-z]+", text.lower()) if w in _COMPARING}
