"""The rules that cut the span answering a question asking for one thing (a name, a place, a
date, a title) from the supporting sentences: where the sentence says what the question says
around its "what" (a cloze), or the name a sentence describes the way the question describes
what it asks for ("Who is this American cartoonist ..." → the subject of "... is an American
cartoonist"), or the word two named items' sentences share ("What profession do A and B have
in common?"), or the kind a sentence gives ("which type of character" → "fictional
character"). Each span is a stretch of one sentence, copied, never reworded;
``kforge.rag.named_answer.answer_span`` tries the rules in turn.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from kforge.rag.analyze import STOPWORDS, tokenize
from kforge.rag.common_words import is_common_word
from kforge.rag.question import Question, asked_noun, term_of, unit_terms

__all__ = [
    "Span",
    "cloze_span",
    "described_subject",
    "kind_of",
    "named_kind",
    "shared_attribute",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Span:
    """A stretch of one supporting sentence that answers, and where it is."""

    text: str
    """The span as the sentence writes it."""
    unit: int
    """Index of the supporting sentence (in the order given) it is cut from."""
    score: float = 0.0
    """How strongly the rule that found it holds (more is better; comparable within a rule)."""


@dataclass(frozen=True, slots=True)
class _Token:
    start: int
    end: int
    word: str
    """Lower-cased, as written otherwise."""


_TOKEN = re.compile(r"\w[\w'\u2019&-]*\w|\w|[^\w\s]")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_WH = frozenset(["what", "which", "who", "whom", "where", "when"])
_NOUN_STOP = _words(
    "is are was were be been does do did has have had can could will would should may might "
    "that which who whom whose in on at of for from to by with as and or the a an its his her "
    "their it he she they this these those"
)
_SPAN_STOP = _words(
    "by in on at from with for during which who whom whose that where when after before since "
    "while until because although though is was are were has had have"
)
"""Words that begin the next phrase: a span of a cloze ends before them."""
_PREPOSITIONS = _words(
    "by in on at of for from to with into onto about during after before against among "
    "through under over between within without as"
)
_PLACES = _words("city country state county town village island region province airport")
_NOT_NOUN = _NOUN_STOP | _PREPOSITIONS
_NAME_RUN = re.compile(
    r"(?:[A-Z0-9][\w'\u2019.&-]*)(?:\s+(?:(?:of|de|the|and|von|van|da|del|&)\s+)*"
    r"[A-Z0-9][\w'\u2019.&-]*)*"
)
_CONNECTORS = _words("of and the de von van da del du la y")
_CALLINGS = frozenset(["profession", "occupation", "job", "career"])
"""Nouns asking what someone does for a living."""
_PRONOUNS = _words("It He She They This These Its His Her Their")
_PUNCT_STOP = frozenset(",;:()[]!?\u2013\u2014")
_MAX_SPAN = 8
_NEAR = 4
"""Tokens before a cloze's last left word in which the question's word nearest its "what"
must stand."""
_WINDOW = 8
"""Tokens before a cloze's last left word in which its other words must be found."""
_COPULA = re.compile(
    r"(?:\s*\((?:[^()]|\([^()]*\))*\)|,[^,]{0,80}(?=,)|,){0,4}\s*(?:is|was|are|were)\s+"
    r"((?:a|an|the|one of the)\s+)?"
)
"""What stands between a subject and its description: a parenthesis ("(born 1947)") or an
apposition (", virtual channel 12,"), then "is a"."""
_LEAD = re.compile(r"^(?:The|A|An)\s+")
_DEMONYM = re.compile(r"^[A-Z][a-z]+(?:an|ish|ese|ian|ch|i)$")
_LIFE = re.compile(r"\((?:born\b|[^()]*\b1\d{3}\s*[\u2013-])")
"""A person's sentence: "(born 1962)", "(28 June 1909 - 22 October 1998)"."""
_COMMON = re.compile(r"\b(?:in common|both|share|shared)\b", re.IGNORECASE)


def _tokens(text: str) -> list[_Token]:
    return [_Token(m.start(), m.end(), m.group(0).lower()) for m in _TOKEN.finditer(text)]


def _same(a: str, b: str) -> bool:
    return a == b or (a.isalpha() and b.isalpha() and term_of(a) == term_of(b))


def _question_words(question: Question) -> tuple[list[_Token], int, int]:
    """The question's tokens, where its asked "what" phrase starts, and where it ends (after
    its noun: "what Teen Titans spinoff series"); (-1, -1) without one. The asked word is the
    first "what", else the one the question opens with, else a "which", "who" or "whom" after
    a preposition ("directed by who?"): a "who" after a noun only says which one it is."""
    words = _tokens(question.text)
    found = [i for i, t in enumerate(words) if t.word == "what"]
    found += [0] if words and words[0].word in _WH else []
    found += [
        i
        for i, t in enumerate(words)
        if t.word in ("which", "who", "whom") and i and words[i - 1].word in _PREPOSITIONS
    ]
    if not found:
        return words, -1, -1
    at = found[0]
    end = at + 1
    if words[at].word in ("what", "which"):
        while end < len(words) and end - at <= 6 and words[end].word not in _NOT_NOUN:
            place = (
                words[end].word == ","
                and end + 1 < len(words)
                and _capital(question, words[end + 1])
            )
            if (not words[end].word[0].isalnum() and not place) or (
                end > at + 1 and words[end].word.endswith("ed")
            ):
                break  # "which German project recorded ...": the verb ends the noun
            end += 1
    return words, at, end


def _capital(question: Question, token: _Token) -> bool:
    return question.text[token.start : token.start + 1].isupper()


def named_kind(question: Question, units: Sequence[str]) -> Span | None:
    """For "what NOUN": the title or name a sentence gives right after that noun ('the
    spin-off series "Teen Titans Go!"'), or the name it puts before it ("the excellent pytz
    library" for "what library ..."), one the question does not name itself. A name before
    a noun of software (``_SOFTWARE``) is no common word ("the standard library" names none)."""
    words, at, after = _question_words(question)
    if at < 0 or after <= at + 1:
        return None
    noun = term_of(words[after - 1].word)
    said = question.text.lower()
    for index, text in enumerate(units):
        for match in re.finditer(
            r"\b([A-Za-z-]+)\s+(\"[^\"]{2,60}\"|\u201c[^\u201d]{2,60}\u201d)", text
        ):
            if term_of(match.group(1).lower()) != noun:
                continue
            title = match.group(2)
            if title.strip('"\u201c\u201d').lower() not in said:
                return Span(text=title, unit=index, score=1.0)
        for match in (m for pattern in _NAME_BEFORE for m in pattern.finditer(text)):
            name = match.group(1)
            if term_of(match.group(2).lower()) != noun or noun not in _SOFTWARE:
                continue
            named = re.search(rf"(?<![\w.-]){re.escape(name.lower())}(?![\w-])", said)
            if not (is_common_word(name) or name.lower() in STOPWORDS or named):
                return Span(text=name, unit=index, score=1.0)
    return None


_NAME_BEFORE = [
    re.compile(rf"\b(?:the|an?)\s+{adjective}([A-Za-z][\w.+-]*\w)\s+([a-z-]+)\b")
    for adjective in ("", r"[a-z]+\s+")
]
"""A name between an article and its noun, maybe after an adjective: "the pytz library", "the
excellent pytz library" (name, noun)."""
_SOFTWARE_NOUNS = (
    "library package module tool program command plugin extension framework backend "
    "engine server database parser driver utility script"
)
_SOFTWARE = frozenset(map(term_of, _SOFTWARE_NOUNS.split()))
"""Nouns of software, which a name stands before ("the pytz library"); before another noun a
word is as likely an adjective ("a large bipedal creature")."""


def kind_of(question: Question, units: Sequence[str]) -> Span | None:
    """For "which type of NOUN ...": the kind a sentence says something is, "is a fictional
    character" → "fictional character"."""
    asked = re.search(r"\b(?:kind|type|sort) of ([a-z]+)\b", question.text, re.IGNORECASE)
    if asked is None:
        return None
    noun = term_of(asked.group(1).lower())
    for index, text in enumerate(units):
        for match in re.finditer(
            r"\b(?:is|was|are|were) (?:a|an) ((?:[a-z-]+ ){1,3}?([a-z]+))\b", text
        ):
            if term_of(match.group(2)) == noun and match.group(1) != match.group(2):
                return Span(text=match.group(1), unit=index, score=1.0)
    return None


def cloze_span(question: Question, units: Sequence[str]) -> Span | None:
    """What a sentence says where the question has its "what": the question's words just
    before it ("as part of what?") found in a sentence, the span after them up to the
    question's words after it ("... about his works"), the next phrase or clause, at most
    eight words; for "what NOUN", the name it opens with. The word right before the span must
    be the question's last word before its "what" (the same stem), and the question's content
    word nearest its "what" must stand a few words before, in the same phrase ("killed at",
    "voices", "developed by"), so that "in what" alone aligns nothing. The score counts the
    question's words found before the span."""
    words, at, after = _question_words(question)
    if at <= 0:
        return None  # "What team was led ...": nothing before the "what" to align
    left = [t.word for t in words[max(0, at - 4) : at] if t.word[0].isalnum()]
    right = {term_of(t.word) for t in words[after : after + 1] if t.word[0].isalnum()}
    if not left:
        return None
    noun = unit_terms(question.text[words[at + 1].start : words[after - 1].end]) if (
        after > at + 1
    ) else frozenset()  # fmt: skip
    anchors = [w for w in left if w not in STOPWORDS and w not in _PREPOSITIONS]
    if not anchors:
        return None
    asked = {t.word for t in words}
    best: Span | None = None
    for index, text in enumerate(units):
        tokens = _tokens(text)
        for i, token in enumerate(tokens[:-1]):
            if not _same(token.word, left[-1]):
                continue
            before = {term_of(t.word) for t in tokens[max(0, i - _WINDOW) : i + 1]}
            held = [w for w in anchors if term_of(w) in before]
            near = [
                j for j in range(max(0, i - _NEAR), i + 1) if _same(tokens[j].word, anchors[-1])
            ]
            if not near or any(t.word in _PUNCT_STOP for t in tokens[near[-1] : i]):
                continue  # the word nearest the "what" is what it hangs on, in the same phrase
            span = _noun_part(_span_after(text, tokens, i + 1, right), noun)
            if not span or all(t in asked for t in tokenize(span)):
                continue
            if noun:  # "what city" asks for a name: "Aberdeen", not "Aberdeen ... use diesel"
                span = _name_run(span)
                if not span:
                    continue
            score = len(held) + 0.5 * (left[-1] not in STOPWORDS) - 0.01 * index
            if best is None or score > best.score:
                best = Span(text=span, unit=index, score=score)
    return best


def _span_after(text: str, tokens: list[_Token], first: int, right: Collection[str]) -> str:
    """The span from token ``first``: a quoted title whole, else up to the question's next
    words, a word beginning the next phrase, a punctuation mark, or eight words."""
    if first >= len(tokens):
        return ""
    opening = tokens[first].word
    if opening in ('"', "\u201c"):
        close = text.find('"' if opening == '"' else "\u201d", tokens[first].end)
        return text[tokens[first].start : close + 1] if 0 < close - tokens[first].end < 80 else ""
    end = first
    while end < len(tokens) and end - first < _MAX_SPAN:
        word = tokens[end].word
        if end > first and (word in _SPAN_STOP or term_of(word) in right):
            break
        if word in _PUNCT_STOP or (word == "." and not _initial(tokens, end)):
            break
        end += 1
    if end == first:
        return ""
    span = text[tokens[first].start : tokens[end - 1].end].strip()
    return _named_end(span)


def _named_end(span: str) -> str:
    """The name a descriptive span ends in ("American country music duo Love and Theft" →
    "Love and Theft", "his roles as Captain Hans Geering" → "Captain Hans Geering"), or the
    span itself when it does not end in one."""
    words = span.split()
    plain = [i for i, w in enumerate(words) if w[:1].islower() and w not in _CONNECTORS]
    if not plain or plain[-1] == len(words) - 1:
        return span
    rest = words[plain[-1] + 1 :]
    if not rest[0][:1].isupper() or rest[-1] in _CONNECTORS:
        return span
    return " ".join(rest)


def _name_run(span: str) -> str:
    """The name ``span`` opens with (capitalised words, with "of", "the", "and" between),
    a quoted title whole, or "" when it opens with no name."""
    if span[:1] in '"\u201c':
        return span
    run = _NAME_RUN.match(span)
    return run.group(0).strip() if run else ""


def _noun_part(span: str, noun: Collection[str]) -> str:
    """Of "Terminal 2 of Dubai International Airport", for "what airport", the part after
    "of" that names the kind asked for."""
    parts = span.split(" of ")
    if len(parts) < 2 or not noun or not unit_terms(parts[-1]) & set(noun):
        return span
    return parts[-1] if parts[-1][:1].isupper() else span


def _initial(tokens: list[_Token], at: int) -> bool:
    """True when the full stop at ``at`` ends an initial ("M. Night"), not a sentence."""
    previous = tokens[at - 1].word if at else ""
    return len(previous) == 1 and previous.isalpha() and at + 1 < len(tokens)


def described_subject(
    question: Question, units: Sequence[str], titles: Sequence[str] = ()
) -> Span | None:
    """The name a sentence describes as the question describes what it asks for: the
    subject of "NAME (...) is a DESCRIPTION" whose description holds the noun asked for
    ("what airport" → "... is a public airport") and at least two of the question's words, or
    three of them when no noun is asked ("Who is this American cartoonist, writer ..."). A
    subject the question names itself is not what it asks. ``titles`` are the sentences'
    page titles: a sentence opening with its title has that title for its subject."""
    noun = asked_noun(question.text)
    if re.search(r"\b(?:kind|type|sort)s? of\b", question.text, re.IGNORECASE):
        return None  # asks what sort of thing, not which one
    if question.kind == "where" and noun not in _PLACES:
        return None  # "where is the company based?" asks its place, not its name
    words, at, after = _question_words(question)
    naming = re.search(r"\b(?:titled|called|named)\s+what\W*$", question.text, re.I)
    if at > 0 and after == at + 1 and not naming:
        return None  # "... presented what about his works" asks an object, not a subject
    phrase = unit_terms(question.text[words[at + 1].start : words[after - 1].end]) if (
        0 <= at < after - 1
    ) else frozenset()  # fmt: skip
    # the words right after "who is this" / "what X" describe what is asked; the rest of the
    # question says how it relates to something else ("... that worked with this nominee")
    head_end = next(
        (t.start for t in words[max(at, 0) + 1 :] if t.word in ("that", "who", "which", "whose")),
        len(question.text),
    )
    leading = unit_terms(question.text[:head_end])
    wanted = set(question.terms)
    said = question.text.lower()
    best: Span | None = None
    for index, text in enumerate(units):
        subject = _subject(text, titles[index] if index < len(titles) else "")
        if subject is None:
            continue
        name, rest, article = subject
        if not article:
            continue  # "He is best known for ..." says what he did, not what he is
        if name.lower() in said or _DEMONYM.match(name):
            continue
        description = rest[: _sentence_end(rest)]
        held = unit_terms(description) & wanted - unit_terms(name)
        what = re.split(
            r"[,;(]|\s(?:by|of|in|from|for|with|that|which|who|whose|at)\s", description
        )
        head = {term_of(t) for t in tokenize(what[0])[:6]}  # "a song by ...": a song
        if phrase and not phrase & head:
            continue
        if len(held) < (2 if phrase else 3):
            continue
        score = len(held) + len(held & leading) - 0.01 * index
        if best is None or score > best.score:
            best = Span(text=name, unit=index, score=score)
    return best


def _subject(text: str, title: str) -> tuple[str, str, bool] | None:
    """The name a sentence opens with, what follows its "is", and whether an article opens
    that ("is a ..."); None when it does not open with a name said to be something."""
    core = re.sub(r"\s*\([^)]*\)\s*$", "", title).strip()
    opening = _LEAD.sub("", text)
    pronoun = re.match(r"(?:It|He|She|They)\b", opening)
    if pronoun:
        return None  # "She is ...": its name is not in the sentence to quote
    if core and opening.lower().startswith(core.lower()):
        name = opening[: len(core)]
    else:
        run = re.match(
            r"(?:[A-Z][\w'\u2019.&-]*|\"[^\"]{2,60}\")"
            r"(?:\s+(?:(?:of|de|the|and|von|van|da|del|&)\s+)*[A-Z0-9\"][\w'\u2019.&\"-]*)*",
            opening,
        )
        if run is None or run.group(0) in _PRONOUNS:
            return None
        name = run.group(0)
    copula = _COPULA.match(opening, len(name))
    if copula is None:
        return None
    return name.strip(), opening[copula.end() :], bool(copula.group(1))


def _sentence_end(text: str) -> int:
    found = re.search(r"\.(?:\s|$)", text)
    return found.start() if found else len(text)


def shared_attribute(
    question: Question, units: Sequence[str], sources: Sequence[int]
) -> Span | None:
    """For "what profession do A and B have in common" / "are both best known for what": a
    word of one item's description ("... is a British journalist and novelist") that the other
    item's sentences also use (by stem: "novels"), else the description's first noun."""
    if not _COMMON.search(question.text) or len(set(sources)) < 2:
        return None
    by_source: dict[int, list[int]] = {}
    for index, source in enumerate(sources):
        by_source.setdefault(source, []).append(index)
    said = unit_terms(question.text)
    found: list[tuple[bool, int, int, str]] = []
    """(not a person's, order of the noun in its description, the unit, the noun)"""
    for source, indices in by_source.items():
        others = " ".join(units[i] for s, ix in by_source.items() if s != source for i in ix)
        other_terms = {term_of(t)[:5] for t in tokenize(others)}
        for index in indices:
            subject = _subject(units[index], "")
            if subject is None:
                continue
            description = subject[1][: _sentence_end(subject[1])]
            for order, word in enumerate(_described_nouns(description)):
                if term_of(word.lower()) in said:
                    continue
                shared = term_of(word.lower())[:5] in other_terms
                found.append((not _LIFE.search(units[index]), order, index, word))
                if shared:
                    return Span(text=word, unit=index, score=2.0)
    if found and asked_noun(question.text).rstrip("s") in _CALLINGS:
        # no word in common: what the best-described one is ("author" of "... was an
        # influential British author of thrillers")
        index, word = min(found)[2:]  # a person's calling, not an album's "album"
        return Span(text=word, unit=index, score=1.0)
    return None


def _described_nouns(description: str) -> list[str]:
    """The nouns a description lists as what something is: "American singer, songwriter and
    record producer" gives singer, songwriter, producer (adjectives before them dropped)."""
    head = re.split(
        r"\s+(?:of|who|which|that|for|from|in|by|best|known|with|whose|at)\s+", description
    )
    items = re.split(r",\s*|\s+and\s+|\s+or\s+", head[0])
    nouns = []
    for item in items:
        words = [w for w in item.split() if w[:1].islower() and w.isalpha() and w not in STOPWORDS]
        if words:
            nouns.append(words[-1])
    return nouns
