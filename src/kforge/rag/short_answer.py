"""The short answer line an answer opens with, drawn by rule from its supporting sentences.

The line quotes a stretch of one supporting sentence: the number with its unit for "how many",
the command or code for "how do I", the date for "when", the name for "who", "where" and
"which", one of the two named items for "which of X or Y", the defining clause for "what is".
For a yes/no question it is "Yes." or "No." (kforge's words) and then the deciding phrase,
quoted. Nothing is reworded, so the line is as exact as the sentences under it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kforge.rag.compose import Segment, mentions_title
from kforge.rag.question import DATE, NUMBER, Question, mentions, read_question, unit_terms
from kforge.rag.types import Chunk

__all__ = ["ShortAnswer", "short_answer"]


@dataclass(frozen=True, slots=True)
class ShortAnswer:
    """The direct answer to a question, and where it is quoted from."""

    answer: str
    """What answers: the quote itself, or ``Yes.`` / ``No.`` for a yes/no question."""
    quote: str
    """The stretch of the supporting sentence quoted on the line (for yes/no, the deciding
    phrase; may be empty there)."""
    source: int
    """Index of the passage the quoted sentence comes from."""

    @property
    def line(self) -> str:
        """The line as the answer shows it, without its ``[n]`` marker."""
        if self.answer == self.quote or not self.quote:
            return self.answer
        return f"{self.answer} {self.quote}"


_NEGATION = re.compile(
    r"\b(?:not|no|never|cannot|can't|isn't|aren't|wasn't|weren't|doesn't|don't|didn't|"
    r"won't|unsafe|neither|nor|none|without)\b|n't\b",
    re.IGNORECASE,
)
_COPULA = re.compile(
    r"\b(?:is|are|was|were|refers to|means|denotes|represents|is called|are called|"
    r"contains|returns|holds|stands for)\s+(.+)",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"(?:[,;:]\s|\s[\u2013\u2014-]\s|\.(?:\s|$)|\s\((?!\d))")
_CODE_SPAN = re.compile(r"`[^`\n]+`")
_UNIT = re.compile(
    r"\s*(?:%|(?:[A-Za-z]+)(?:\s+(?:per|of)\s+[A-Za-z]+)?)",
)
_NOT_UNITS = frozenset(
    "and or the a an to of in on is are was were be by for with that this it as at from".split()  # noqa: SIM905
)
_PROPER = re.compile(
    r"(?:\"[^\"]{2,80}\"|\u201c[^\u201d]{2,80}\u201d|"
    r"(?:[A-Z][\w'\u2019.&-]*|[a-z]+[A-Z][\w'\u2019-]*)(?:\s+(?:(?:of|de|the|and|for|du|la|von|van|"
    r"der|da|del|y|on|in|&)\s+)*(?:[A-Z0-9][\w'\u2019.&-]*|[a-z]+[A-Z]\w*))*)"
)
_PLACE_CUE = re.compile(r"\b(?:in|at|from|near|of|based in|located in)\s*$", re.IGNORECASE)
_PERSON_CUE = re.compile(r"\b(?:by|with|and|to|married|starring|directed by)\s*$", re.I)
_MAX_WORDS = 12
_NOT_A_STEP = re.compile(r"^(?:```|~~~|//|#|/\*|\*|import |const .*require\(|'use strict')")
_DECIDES = 0.6
"""A sentence decides a yes/no question when it holds this share of the question's terms."""
_SENTENCE_OPENERS = frozenset("The A An It He She They This These In On At For As".split())  # noqa: SIM905


def short_answer(
    question: str, segments: Sequence[Segment], passages: Sequence[Chunk] = ()
) -> ShortAnswer | None:
    """The short answer to ``question`` drawn from ``segments`` (the supporting sentences, best
    first), or None when there are none. ``passages`` (the segments' sources) let a yes/no
    question about two named items compare what each item's passage says."""
    units = sorted((s for s in segments if s.text.strip()), key=lambda s: s.rank)
    if not units:
        return None
    asked = read_question(question)
    kind = asked.kind
    found: ShortAnswer | None = None
    if kind in ("who", "where", "thing", "when"):
        # the answer is what the question does not name: in a bridge question, the passage
        # the named one leads to
        named = {i for i, p in enumerate(passages) if p.title and mentions_title(question, p.title)}
        units.sort(key=lambda s: (s.source in named, s.rank))
    if kind == "yesno":
        return _yes_no(asked, units, passages)
    if kind == "choice":
        found = _choice(asked, units)
    elif kind == "quantity":
        found = _first(units, lambda s: _quantity(s, asked))
    elif kind == "when":
        found = _first(units, lambda s: _date(s, asked))
    elif kind == "procedure":
        found = _procedure(asked, units)
    elif kind == "reason":
        found = _first(units, _reason)
    elif kind in ("who", "where", "thing"):
        found = _name(asked, units)
    elif kind == "definition":
        found = _first(units[:1], lambda s: _defining(s, asked))
    return found or _clause_of(units[0])


def _first(units: Sequence[Segment], pick: Callable[[str], str]) -> ShortAnswer | None:
    for unit in units:
        quote = pick(unit.text)
        if quote:
            return ShortAnswer(quote, quote, unit.source)
    return None


def _trim(text: str) -> str:
    return text.strip().rstrip(".,;:!?").strip()


def _clause(text: str, start: int = 0) -> str:
    """From ``start`` to the end of the clause, at most ``_MAX_WORDS`` words."""
    rest = text[start:]
    end = _CLAUSE_END.search(rest, 1)
    piece = rest[: end.start()] if end else rest
    words = list(re.finditer(r"\S+", piece))
    if len(words) > _MAX_WORDS:
        piece = piece[: words[_MAX_WORDS - 1].end()]
    return _trim(piece)


def _clause_of(unit: Segment) -> ShortAnswer:
    quote = _clause(unit.text) or _trim(unit.text)
    return ShortAnswer(quote, quote, unit.source)


def _quantity(text: str, question: Question) -> str:
    default = re.search(r"\bDefault:?\**:?\s*(`[^`]+`|\S+)", text)
    if default and "default" in question.terms:
        return _trim(default.group(1))
    asked = question.text.lower()
    found: list[tuple[int, int, str]] = []
    for order, match in enumerate(NUMBER.finditer(text)):
        if match.group(0).lower() in asked or text[match.start() - 1 : match.start()] == "[":
            continue  # the question's own number, or a reference such as [12]
        unit = _UNIT.match(text, match.end())
        end, value = match.end(), 0
        if unit and unit.group(0).strip().split()[0].lower() not in _NOT_UNITS:
            end, value = unit.end(), 1
            if unit_terms(unit.group(0)) & set(question.terms):
                value = 2  # the unit the question asks in: "how many bytes" -> "64 bytes"
        found.append((-value, order, _trim(text[match.start() : end])))
    return min(found)[2] if found else ""


def _date(text: str, question: Question) -> str:
    found = [m.group(0) for m in DATE.finditer(text) if m.group(0) not in question.text]
    if not found:
        return ""
    if re.search(r"\b(?:what|which) year\b", question.text, re.IGNORECASE):
        years = [y for d in found for y in re.findall(r"\b(?:1\d{3}|20\d{2})\b", d)]
        return years[0] if years else found[0]
    if re.search(r"\b(?:date|day|born|birthday|when)\b", question.text, re.IGNORECASE):
        found.sort(key=lambda d: -len(d))
    return found[0]


def _reason(text: str) -> str:
    cue = re.search(
        r"\b(?:because|since|so that|in order to|due to|to (?:avoid|prevent|ensure|allow))\b",
        text,
        re.IGNORECASE,
    )
    return _clause(text, cue.start()) if cue else ""


def _defining(text: str, question: Question) -> str:
    entry = re.match(r"^([^:]{1,60}?)::?\s+(\S.*)$", text)
    if entry and unit_terms(entry.group(1)) & set(question.terms):
        return _clause(text, entry.start(2))
    copula = _COPULA.search(text)
    if copula and len(unit_terms(text[: copula.start()]) & set(question.terms)) > 0:
        return _clause(text, copula.start(1))
    return ""


def _procedure(question: Question, units: Sequence[Segment]) -> ShortAnswer | None:
    """The call, command or code that does it: an API signature, else a code block's first
    line that does something, else a code span naming what is asked or holding a call."""
    for unit in units:
        if _CODE_SPAN.fullmatch(unit.text.strip()):
            return ShortAnswer(unit.text.strip(), unit.text.strip(), unit.source)
    for unit in units:
        if "\n" in unit.text:  # a code block
            for line in unit.text.splitlines():
                code = line.strip()
                if code and not _NOT_A_STEP.match(code):
                    return ShortAnswer(code, code, unit.source)
    for unit in units:
        spans = _CODE_SPAN.findall(unit.text)
        named = [s for s in spans if any(mentions(s, n) for n in question.identifiers)]
        calls = [s for s in spans if "(" in s or " " in s.strip("`")]
        for group in (named, calls):
            if group:
                return ShortAnswer(group[0], group[0], unit.source)
    return None


def _choice(question: Question, units: Sequence[Segment]) -> ShortAnswer | None:
    """One of the two named items, as a supporting sentence writes it."""
    years = {}
    for option in question.options:
        mentioned = [u for u in units if _mention(u.text, option)]
        dates = [int(y) for u in mentioned for y in re.findall(r"\b(1\d{3}|20\d{2})\b", u.text)]
        years[option] = min(dates) if dates else None
    order = list(question.options)
    if re.search(r"\b(?:first|earlier|older|oldest|before)\b", question.text, re.I):
        if all(years[o] is not None for o in order):
            order.sort(key=lambda o: years[o] or 0)
    elif re.search(r"\b(?:later|younger|youngest|more recent|newer|after)\b", question.text, re.I):
        if all(years[o] is not None for o in order):
            order.sort(key=lambda o: -(years[o] or 0))
    else:
        order.sort(key=lambda o: -sum(bool(_mention(u.text, o)) for u in units[:1]))
    for option in order:
        for unit in units:
            quote = _mention(unit.text, option)
            if quote:
                return ShortAnswer(quote, quote, unit.source)
    return None


def _mention(text: str, option: str) -> str:
    """How ``text`` writes ``option``: the whole of it, else its longest run of words."""
    words = option.split()
    for size in range(len(words), 0, -1):
        for i in range(len(words) - size + 1):
            run = " ".join(words[i : i + size])
            if len(run) < 3 or (size == 1 and run.lower() in _NOT_UNITS):
                continue
            match = re.search(rf"(?<!\w){re.escape(run)}(?!\w)", text, re.IGNORECASE)
            if match:
                return match.group(0)
    return ""


def _yes_no(question: Question, units: Sequence[Segment], passages: Sequence[Chunk]) -> ShortAnswer:
    if len(question.options) == 2 and passages:
        verdict = _both(question, passages)
        if verdict is not None:
            best = units[0]
            return ShortAnswer("Yes." if verdict else "No.", _clause(best.text), best.source)
    terms = set(question.terms)
    best = max(units, key=lambda u: len(unit_terms(u.text) & terms))
    clause = _clause(best.text)
    if len(unit_terms(best.text) & terms) < _DECIDES * len(terms):
        return ShortAnswer(clause, clause, best.source)  # no sentence decides it: no verdict
    negated = _NEGATION.search(best.text) is not None
    return ShortAnswer("No." if negated else "Yes.", clause, best.source)


def _both(question: Question, passages: Sequence[Chunk]) -> bool | None:
    """For "are X and Y both P" / "the same P": whether the passages about X and Y agree, or
    None when a passage about one of them is missing."""
    about = []
    for option in question.options:
        own = [p for p in passages if _mention(p.title, option) or _mention(p.text[:200], option)]
        if not own:
            return None
        about.append(own[0].text)
    named = set().union(*(unit_terms(o) for o in question.options))
    asked = set(question.terms) - named - {"both", "same"}
    if re.search(r"\bsame\b", question.text, re.IGNORECASE):
        kinds = [set(re.findall(r"\b[A-Z][a-z]+(?:an|ish|ese|ian|ch|i)\b", t)) for t in about]
        return bool(kinds[0] & kinds[1]) if all(kinds) else None
    return all(asked <= unit_terms(text) for text in about) if asked else None


def _name(question: Question, units: Sequence[Segment]) -> ShortAnswer | None:
    """A name the supporting sentences hold that the question does not: the nearest to the
    question's words, preferring what fits the kind (a place after "in", a noun the question
    asks for such as "stadium")."""
    asked_text = question.text.lower()
    wanted = re.search(r"\b(?:what|which)\s+([a-z]+)", question.text, re.IGNORECASE)
    noun = wanted.group(1).lower() if wanted else ""
    best: tuple[float, str, int] | None = None
    for rank, unit in enumerate(units):
        text = unit.text
        for match in _PROPER.finditer(text):
            span = match.group(0).strip(" .,'\u2019\"\u201c\u201d")
            span = re.sub(r"^(?:The|A|An)\s+(?=[A-Z])", "", span) if match.start() == 0 else span
            words = span.split()
            if not span or all(_bare(w) in asked_text for w in words) or DATE.search(span):
                continue
            if len(words) == 1 and match.start() == 0 and words[0] in _SENTENCE_OPENERS:
                continue
            value = 1.0 / (1 + rank) + (0.5 if rank == 0 else 0.0)
            before = text[: match.start()]
            if question.kind == "where" and _PLACE_CUE.search(before):
                value += 0.5
            if question.kind == "who" and (_PERSON_CUE.search(before) or len(words) >= 2):
                value += 0.3
            if noun and noun in span.lower():
                value += 0.6
            elif noun and noun in text[match.end() : match.end() + 25].lower():
                value += 0.4  # "Love and Theft, a country band"
            near = unit_terms(text[max(0, match.start() - 60) : match.end() + 60])
            value += 0.1 * len(near & set(question.terms))
            if any(_bare(w) in asked_text for w in words):
                value -= 0.3
            if best is None or value > best[0]:
                best = (value, span, unit.source)
    if best is None:
        return None
    return ShortAnswer(best[1], best[1], best[2])


def _bare(word: str) -> str:
    """``word`` lower-cased without a possessive or punctuation around it."""
    return re.sub(r"['\u2019]s$", "", word.lower().strip(".,;:()\"'"))
