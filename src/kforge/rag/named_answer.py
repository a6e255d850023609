"""The name a who, where, when or which question asks for, as a supporting sentence gives it.

The first rule of ``kforge.rag.spans`` that cuts an answering span from the sentences answers
(``answer_span``); a sure cloze may come from a sentence of the answer's passages that the
answer does not quote (the second hop's sentence the composer left out), and the line then
cites that passage. Else the name (or date) the sentences hold that the question does not,
standing nearest its words.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from kforge.rag.analyze import tokenize
from kforge.rag.common_words import is_common_word
from kforge.rag.compose import Segment
from kforge.rag.question import DATE, Question, asked_noun, date_spans, name_spans, term_of
from kforge.rag.short_quote import NOT_UNITS, ShortAnswer, word_set
from kforge.rag.spans import (
    cloze_span,
    described_subject,
    kind_of,
    named_kind,
    shared_attribute,
)
from kforge.rag.textcheck import split_sentences
from kforge.rag.types import Chunk

__all__ = ["answer_span", "answering_span", "best_name", "widen_place"]


_PLACE_CUE = re.compile(r"\b(?:in|at|from|near|of|based in|located in)\s*$", re.IGNORECASE)
_PERSON_CUE = re.compile(r"\b(?:by|with|and|to|married|starring|directed by)\s*$", re.I)
_BIRTH = re.compile(r"(?:\(|\bborn)\s*(?:[A-Z][a-z]+\.?\s+)?(?:\d{1,2},?\s+)?(?:[A-Z][a-z]+\s+)?$")
"""What stands before a birth date: "(", "born", then maybe the month and day of a year."""
_NEAR = 6
"""Words on either side of a name in which the question's words count as near it."""
_AGAIN = 0.2
"""Lead of a name for each further supporting sentence that gives it."""
_OPENERS = word_set("The A An It He She They This These In On At For As You We I Your Our Note")
"""Words a sentence opens with that name nothing ("You can't have a keyword ...")."""
_DESCRIBES = re.compile(r"\S:\s+$")
"""What stands before the first word of an entry's description ("get_logger(*args): ")."""
_VERB_FORM = re.compile(r"(?:ed|ing|ly)$")
_CLAUSE_START = re.compile(r"(?:[\[(]\s*|[\]):\u2013\u2014]\s+|\s-\s+)$")
"""What a clause opens after inside a sentence: a bracket, a label, a dash ("[Note added in
3.0.7] Fixed ...", "table (str) - Name of table")."""
_SURE = 1.4
"""The score of a cloze sure enough to answer from a sentence the answer does not quote: the
question's word before its "what" is a content word ("developed by" → "developed"), or two of
its words before the "what" are found."""
_PLACE_TAIL = re.compile(r",\s+([A-Z][\w.]*(?:\s+[A-Z][\w.]*)*)")


def answering_span(
    question: Question,
    units: Sequence[Segment],
    passages: Sequence[Chunk],
    named: ShortAnswer | None,
) -> ShortAnswer | None:
    """The answering span a rule of ``kforge.rag.spans`` cuts from the units, else ``named``;
    for "where", with the larger place after it ("San Francisco, California")."""
    span = answer_span(question, [u.text for u in units], [u.source for u in units], passages)
    found = ShortAnswer(span[0], span[0], span[1]) if span else named
    if found is None or question.kind != "where":
        return found
    text = next((u.text for u in units if u.source == found.source and found.quote in u.text), "")
    wide = widen_place(text, found.quote)
    return ShortAnswer(wide, wide, found.source)


def best_name(
    question: Question,
    units: Sequence[Segment],
    named: Collection[int] = (),
    *,
    dates: bool = False,
    titles: frozenset[str] = frozenset(),
) -> ShortAnswer | None:
    """A name (or with ``dates``, a date) the supporting sentences hold that the question does
    not: the one standing nearest the question's words, preferring what fits the kind (a place
    after "in", a person after "by", the noun the question asks for such as "stadium"), named
    in more of the sentences, in a better sentence, and in a passage the question does not
    itself name (``named``: the answer of a bridge question lies in the passage the named one
    leads to). The words of those passages' ``titles`` name the bridge, not what is asked of
    it, so they count for no name's context."""
    asked = {_bare(w) for w in question.text.split()}
    noun = asked_noun(question.text)
    terms = set(question.terms) - {term_of(noun)} - titles  # the kind asked for is no context
    born = re.search(r"\b(?:born|birthday|birth)\b", question.text, re.IGNORECASE)
    best: dict[str, tuple[float, str, int]] = {}
    """For each name (lower-cased): its best score, as written there, and its passage."""
    count: dict[str, int] = {}
    for unit in units:
        text = unit.text
        for order, (start, end) in enumerate(
            date_spans(text, question) if dates else name_spans(text, question)
        ):
            span = text[start:end].strip(" .,'\u2019\"\u201c\u201d")
            if start == 0:
                span = re.sub(r"^(?:The|A|An)\s+(?=[A-Z])", "", span)
            words = [_bare(w) for w in span.split()]
            if not span or all(w in asked for w in words) or (not dates and DATE.search(span)):
                continue
            inside = _CLAUSE_START.search(text[:start]) is not None
            if (
                len(words) == 1
                and (start == 0 or inside)
                and (
                    span in _OPENERS or _VERB_FORM.search(span) or (inside and is_common_word(span))
                )
            ):
                # "Signed to Lyric Street ...", "[Note added in 3.0.7] Fixed a bug ...",
                # "table (str) - Name of table": a capitalised word, not a name
                continue
            labels = _DESCRIBES.search(text[:start]) or (start == 0 and text[end:][:1] == ":")
            if len(words) == 1 and labels and is_common_word(span):
                # "get_logger(*args): Convenience function that ...", "Raises:: ValueError if
                # ...": an entry's first word, a field's label
                continue
            before, after = text[:start], text[end:]
            left = [term_of(t) for t in tokenize(before)[-_NEAR:]]
            right = [term_of(t) for t in tokenize(after)[:_NEAR]]
            value = 0.3 * len(terms & (set(left) | set(right)))
            if terms & set(left[-3:]):
                value += 0.5  # "covered by ... [Love and Theft]": the question's words lead in
            value += 0.3 / (1 + unit.rank) + (0.0 if unit.source in named else 0.3)
            if question.kind == "where" and _PLACE_CUE.search(before):
                value += 0.5
            if question.kind == "who" and (_PERSON_CUE.search(before) or len(words) >= 2):
                value += 0.3
            if dates and born and _BIRTH.search(before):
                value += 1.0  # a life's first date, "(born 2 March 1972)", is its birth
            elif dates and order == 0:
                value += 0.3
            if noun and noun in span.lower():
                value += 1.2  # "Sam Boyd Stadium" for "what stadium"
            elif noun and _is_a(after, noun):
                value += 1.0  # "Stone Brewing is a brewery ...": what the question asks for
            elif noun and term_of(noun) in {term_of(t) for t in tokenize(after)[:6]}:
                value += 0.5  # "Love and Theft, a country band"
            shared = [w for w in words if w in asked and w not in NOT_UNITS and w != noun]
            value -= 0.4 * len(shared) / len(words)
            key = span.lower()
            count[key] = count.get(key, 0) + 1
            if key not in best or value > best[key][0]:
                best[key] = (value, span, unit.source)
    if not best:
        return None
    # a name several supporting sentences give is more likely what they are about
    key = max(best, key=lambda k: best[k][0] + _AGAIN * (count[k] - 1))
    _, span, source = best[key]
    return ShortAnswer(span, span, source)


def _is_a(after: str, noun: str) -> bool:
    """True when ``after`` (what follows a name) says the name is a ``noun``."""
    says = re.match(r"\s*,?\s*(?:is|was|are|were)\s+(?:a|an|the)\s+([^.;,]{0,60})", after)
    return says is not None and term_of(noun) in {term_of(t) for t in tokenize(says.group(1))}


def _bare(word: str) -> str:
    """``word`` lower-cased without a possessive or punctuation around it."""
    return re.sub(r"['\u2019]s$", "", word.lower().strip(".,;:()\"'"))


def widen_place(text: str, span: str) -> str:
    """``span`` with the larger place that follows it in ``text`` after a comma ("San
    Francisco" → "San Francisco, California"), when there is one."""
    at = text.find(span)
    if at < 0:
        return span
    tail = _PLACE_TAIL.match(text, at + len(span))
    if tail is None or len(tail.group(1).split()) > 3:
        return span
    return text[at : tail.end()].rstrip(".")


def answer_span(
    question: Question, units: Sequence[str], sources: Sequence[int], passages: Sequence[Chunk]
) -> tuple[str, int] | None:
    """The span answering ``question`` and the index of the passage it is cut from, or None.
    ``units`` are the supporting sentences, best first, ``sources`` their passages' indexes
    in ``passages``. The first rule that finds a span there answers: a shared attribute, a
    kind, a described subject, a cloze, a name after the asked noun. Failing those, a cloze
    that aligns surely in another sentence of the passages answers from there (the composer
    may have left out the second hop's sentence that holds the span)."""
    if question.kind == "when":
        return _dated(question, units, sources, passages)
    titles = [passages[s].title if 0 <= s < len(passages) else "" for s in sources]
    found = (
        shared_attribute(question, units, sources)
        or kind_of(question, units)
        or described_subject(question, units, titles)
        or cloze_span(question, units)
        or named_kind(question, units)
    )
    if found is not None:
        return found.text, sources[found.unit]
    others = _other_sentences(units, passages)
    far = cloze_span(question, [sentence for sentence, _ in others])
    if far is None or far.score < _SURE:
        return None
    source = others[far.unit][1]
    return (far.text, source) if far.text in passages[source].text else None


def _other_sentences(units: Sequence[str], passages: Sequence[Chunk]) -> list[tuple[str, int]]:
    """The sentences of ``passages`` that are not among ``units``, with their passage's index."""
    return [
        (sentence, index)
        for index, passage in enumerate(passages)
        for sentence in split_sentences(passage.text)
        if sentence not in units
    ]


def _dated(
    question: Question, units: Sequence[str], sources: Sequence[int], passages: Sequence[Chunk]
) -> tuple[str, int] | None:
    """For "when" / "in what year": a cloze whose span opens with a date, from the supporting
    sentences or, the date being the kind asked for, from another sentence of the passages
    ("... was completed in what year?" → "completed in 1998")."""
    found = cloze_span(question, units)
    date = date_spans(found.text, question) if found else []
    if found is not None and date and date[0][0] == 0:
        return found.text[: date[0][1]], sources[found.unit]
    others = _other_sentences(units, passages)
    far = cloze_span(question, [sentence for sentence, _ in others])
    date = date_spans(far.text, question) if far else []
    if far is None or not date or date[0][0] != 0:
        return None
    return far.text[: date[0][1]], others[far.unit][1]
