"""A question's focus: the terms that say what it is about, weighted by how rare they are in
the corpus, and the rule that decides which passages hold it.

Terms. Stopwords and the words of the request ("how do I", "what is", "tell me") are not
focus, except the verb a "how do I …" question asks about ("how do I *write* a file").
Identifiers as written (``fs.link``, ``os.EOL``, ``--force``, ``ffi_call``, ``readFileSync``,
``sha256``) and numbers (``1945``, ``2.5``) are one term each and match only whole: ``fs.link``
is not in ``fs.linkSync``. Other words match by their Porter stem, except that a word of one or
two letters is never stemmed (the stemmer turns ``os`` into ``o``): a two-letter word (``fs``,
``io``) matches only as that whole word, and a one-letter word is no term.

Modifiers ("too", "whole", "entire", "several", ``MODIFIERS``) are terms that weigh no more
than the question's lightest other term: in a manual they are rare, so their idf is high, yet
"How do I stash untracked files *too*?" is about stashing untracked files, and the entry that
says so need not say "too". So does an adverb of a common word the corpus never names
("*Conceptually*, what is a Quantity object?"): how the question asks, not what about.

Weights. A term weighs its BM25 idf in the corpus, ``ln(1 + (N - df + 0.5) / (df + 0.5))``
over its N passages; an identifier or number weighs what its parts weigh together. A term the
corpus never names weighs the most, scaled by the corpus's *silence*: a common word turns up
about once in ``COMMON_WORD_CHARS`` characters of text, so ten short paragraphs may well lack
"given" or "both", while a manual that never names ``libffi`` does not speak of it. Silence is
``1 - exp(-C / COMMON_WORD_CHARS)`` for a corpus of C characters (how likely a common word is
to occur in it), and a term never named weighs at least as much as the lightest term named.

Rule. Passages found hold the focus when the terms they hold between them (one passage, or
two that join two facts: "the 1945 film starring the actress who became an ambassador") weigh
at least ``FOCUS_SHARE`` (half) of what the terms the corpus names weigh; never when half of the
question's terms or more (modifiers aside, and common words only the sentences before the
one that asks say) are never named in the corpus, nor, in a corpus
whose silence is
``LOUD_SILENCE`` or more, when names and terms it never names (words that are not common
English, ``is_common_word``: "libffi", "rebase", not "big") weigh ``UNNAMED_SHARE`` (a third)
of the focus, or the sentence that asks writes a name the corpus never names (a capitalized
word inside it, "Weblate", an identifier such as ``HTTP/2``, or a number; a name in the
sentences before it is the user's situation: "In CI I want ..."). When they do not hold it,
no passage is relevant and the documents do not say. When they do, a passage (title, heading
and text) is relevant when its terms weigh at least ``PASSAGE_SHARE`` (a quarter) of the focus
(common words the corpus never names aside: "is that frowned upon?") and half of what the best
passage's weigh, or, where sentences before the one that asks tell
the user's situation, when it holds that much of the asking sentence's own terms, or when it
holds the entry of a name the question asks about (a line opening with the name, then a
colon: ``-w, --wip: Only run scenarios tagged with "wip"`` for "What does the -w flag do?",
which weighs "flag" more); so is a passage holding any of the focus in the section (file and
heading) of a relevant one, since where a section was cut into passages says nothing of what
they answer. Over Node.js's path page, "Is libffi thread safe?" is not held
(libffi and thread are never named); over the Node.js reference, "What does os.EOL contain?"
is not answered from ``os.constants`` ("Contains commonly used …"): ``os.EOL`` weighs far
more than "contain".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from kforge.rag.analyze import STOPWORDS, analyze, tokenize
from kforge.rag.asking import asking_sentence, contrasted, users_own
from kforge.rag.common_words import MODIFIERS, adverb_of_common_word, is_common_word
from kforge.rag.corpus_statistics import COMMON_WORD_CHARS, OWN_NAME_SHARE, CorpusStatistics
from kforge.rag.idioms import plain_words
from kforge.rag.names import OWN_OBJECT, documented_in, name_pattern
from kforge.rag.stem import porter_stem
from kforge.rag.textcheck import (
    asked_verbs,
    comparing_words,
    key_terms,
    measured_words,
    written_names,
)
from kforge.rag.types import Chunk

__all__ = [
    "COMMON_WORD_CHARS",
    "FOCUS_SHARE",
    "LOUD_SILENCE",
    "MODIFIERS",
    "OWN_NAME_SHARE",
    "PASSAGE_SHARE",
    "SEE_ALSO",
    "UNNAMED_SHARE",
    "CorpusStatistics",
    "Focus",
    "FocusTerm",
    "TermKind",
    "passage_text",
    "question_focus",
]

FOCUS_SHARE = 0.5
"""Passages found hold the focus when their terms weigh this share of what named terms weigh."""
PASSAGE_SHARE = 0.25
"""A relevant passage holds at least this share of it (and half of what the best one holds)."""
UNNAMED_SHARE = 1 / 3
"""A focus this much of whose weight the corpus never names is not held (where its silence is
``LOUD_SILENCE``)."""
LOUD_SILENCE = 0.9
"""A corpus that would name a common word nine times in ten (about 46,000 characters)."""
SEE_ALSO = 3
"""Passages a refusal lists as the closest ones."""
TermKind = Literal["word", "identifier", "number"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FocusTerm:
    """One term of a question's focus."""

    text: str
    """As the question wrote it (``os.EOL``, ``thread``)."""
    match: str
    """What a passage must hold: a word's Porter stem, else the lower-cased whole term."""
    kind: TermKind
    weight: float
    """The term's idf in the corpus (its parts' together, for an identifier or a number)."""
    whole: bool
    """Matched as a whole word or identifier rather than by stem."""
    known: bool = True
    """The corpus holds the term (some passage has it, or its rarest part)."""


# an option (--force, -k), a dotted or :: path (fs.link, os.EOL, Node.js, std::vector), a
# snake_case or camelCase name, a word with digits (sha256, utf8), each maybe with "()"
_IDENTIFIER = re.compile(
    r"(?<![\w.$-])(?:"
    r"--?[A-Za-z][\w-]*"
    r"|(?:[^\W\d]|\$)[\w$]*(?:(?:\.|::|:)(?:[^\W\d]|\$)[\w$]*)+"
    r"|(?:[^\W\d_]|\$)\w*_\w*|_\w+"
    r"|[a-z]+[A-Z][A-Za-z0-9]*"
    r"|[^\W\d_]+\d\w*"
    r"|[A-Za-z]+/\d+(?:\.\d+)?"  # a protocol's version: HTTP/2, HTTP/1.1
    r")(?:\(\))?(?![\w$])"
    r"|(?<![\w:\\])\\[A-Za-z]+(?![\w$])"  # an escape or a markup command: \b, \brief
)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?!\w)")
_MIN_STEM = 3


def _whole(term: str) -> re.Pattern[str]:
    """``term`` as a whole: after no word character (``fs.readFileSync`` holds ``readFileSync``)
    and before none (``fs.linkSync`` does not hold ``fs.link``); ``web.run_app`` also as
    ``run_app`` (``kforge.rag.names``). A one-letter option keeps its case (``-e`` is not
    ``-E``)."""
    forms = name_pattern(term)
    flags = 0 if _SHORT_OPTION.fullmatch(term) and term[1].isalpha() else re.I
    return re.compile(rf"(?<![\w$-])(?:{forms})(?![\w$])", flags)


_SHORT_OPTION = re.compile(r"-[A-Za-z0-9]|\\[A-Za-z]")
"""A one-letter command-line option (``-e``) or escape (``\\b``)."""


def _weight(terms: Iterable[FocusTerm]) -> float:
    return sum(t.weight for t in terms)


def _lists_entry(text: str, names: Sequence[FocusTerm]) -> bool:
    """True when a line of ``text`` is the entry of one of ``names``: it opens with the name
    (maybe among others: ``-w, --wip:``), then a colon."""
    for name in names:
        forms = name_pattern(name.text)
        others = r"[^\s:,]+"
        entry = (
            rf"(?m)^[ \t]*(?:[-*][ \t]+)?(?:{others},[ \t]*)*(?:{forms})"
            rf"(?:,[ \t]*{others})*[ \t]*:(?:\s|$)"
        )
        if re.search(entry, text):
            return True
    return False


def passage_text(chunk: Chunk) -> str:
    """What a passage says, for the focus: its title, heading and text."""
    return f"{chunk.title}\n{chunk.heading}\n{chunk.text}"


@dataclass(frozen=True, slots=True)
class Focus:
    """The focus of one question in one corpus (see the module docstring)."""

    question: str
    terms: tuple[FocusTerm, ...]
    """Heaviest first (of equal weights, those the corpus holds first, in the question's order)."""
    weighted: bool = True
    """Weighed by a corpus's statistics; without them every term weighs the same and only
    each passage's share decides."""
    silence: float = 1.0
    """The corpus's ``CorpusStatistics.silence``."""

    @property
    def weight(self) -> float:
        return sum(t.weight for t in self.terms)

    def held(self, text: str) -> tuple[FocusTerm, ...]:
        """The focus terms ``text`` holds, heaviest first."""
        if not self.terms:
            return ()
        stems = set(analyze(text))
        tokens = set(tokenize(text))
        held = []
        for term in self.terms:
            if term.kind != "word":
                found = bool(_whole(term.text).search(text)) or documented_in(text, term.text)
            else:
                found = term.match in (tokens if term.whole else stems)
            if found:
                held.append(term)
        return tuple(held)

    def within(self, text: str) -> Focus:
        """The part of this focus that ``text`` (a part of the question, such as one of two
        compared items) holds: what a passage found for that part must hold."""
        return replace(self, terms=self.held(text))

    def share(self, text: str) -> float:
        """The weight of the focus terms ``text`` holds over the whole focus's (0 without terms)."""
        return self.weight_of(self.held(text))

    def passage_share(self, held: Iterable[FocusTerm]) -> float:
        """The weight of ``held`` over what a passage may hold: the focus but the common words
        the corpus never names, which are the user's ("is that *frowned upon*?")."""
        whole = self.weight_of(t for t in self.terms if t.known or not is_common_word(t.text))
        return self.weight_of(held) / whole if whole else 0.0

    def missing(self, text: str) -> tuple[FocusTerm, ...]:
        """The focus terms ``text`` lacks, heaviest first."""
        held = set(self.held(text))
        return tuple(t for t in self.terms if t not in held)

    def weight_of(self, terms: Iterable[FocusTerm]) -> float:
        total = self.weight
        return sum(t.weight for t in set(terms)) / total if total > 0 else 0.0

    @property
    def unknown_share(self) -> float:
        """The share of the focus's terms that the corpus never names (by count: their weights
        are the least certain), a modifier not counted ("when would I *ever* choose it"), nor a
        common word only the user's situation says ("I'm building a *finance dashboard* ...")."""
        asking = asking_sentence(self.question)
        situated = asking != self.question
        terms = [
            t
            for t in self.terms
            if not _modifier(t)
            and not (
                situated
                and not t.known
                and is_common_word(t.text)
                and _whole(t.text).search(asking) is None
            )
        ]
        return sum(not t.known for t in terms) / len(terms) if terms else 0.0

    @property
    def unnamed_share(self) -> float:
        """The share of the focus's weight in names and terms the corpus never names (not
        common words, which it may say otherwise: "big" where it says "size")."""
        return self.weight_of(
            t
            for t in self.terms
            if not t.known
            and not is_common_word(t.text)
            and not users_own(t.text, self.question)
            and not contrasted(t.text, self.question)
        )

    @property
    def unnamed_names(self) -> tuple[FocusTerm, ...]:
        """The names the question writes that the corpus never names: a capitalized word
        inside the question ("Weblate", "Django"), an identifier or a number. A question about
        a product the documents never name is not answered by what they say of its other
        words ("connect a project to a Git repository"). A file name (``myscript.py``) is the
        user's own example, not such a name; nor is what the question sets its subject against
        ("plain assert instead of self.assertEqual")."""
        first = self.question.split()[0] if self.question.split() else ""
        asking = asking_sentence(self.question)
        return tuple(
            t
            for t in self.terms
            if not t.known
            and not users_own(t.text, self.question)
            and not contrasted(t.text, self.question)
            and (t.kind != "word" or (t.text[:1].isupper() and not first.startswith(t.text)))
            and _whole(t.text).search(asking) is not None
        )

    def relevant(self, chunks: Sequence[Chunk]) -> list[bool]:
        """Which of ``chunks`` are relevant to the question (the rule of the module docstring):
        none unless they hold the focus between them."""
        held = [self.held(passage_text(c)) for c in chunks]
        if not self._covers(held):
            return [False] * len(chunks)
        verdicts = _shares_kept(self, held)
        # what the asking sentence names decides too: a passage saying "aiohttp.web itself does
        # not support CORS" answers "My single-page app on another domain calls my API. Does
        # aiohttp.web handle CORS?" without the situation's many words
        asking = self.within(asking_sentence(self.question))
        if asking.terms and len(asking.terms) < len(self.terms):
            told = [asking.held(passage_text(c)) for c in chunks]
            verdicts = [a or b for a, b in zip(verdicts, _shares_kept(asking, told), strict=True)]
        # the entry of a name the question asks about answers it, whatever else it asks ("What
        # does the -w flag do?": "-w, --wip: Only run scenarios tagged with "wip" ...")
        names = [t for t in self.terms if t.kind == "identifier"]
        if names:
            verdicts = [
                v or _lists_entry(c.text, names) for c, v in zip(chunks, verdicts, strict=True)
            ]
        # where a section was cut into passages decides nothing: a passage holding some of the
        # focus is relevant beside a relevant passage of its section (the section's opening,
        # "When trust authentication is specified, PostgreSQL assumes ...", beside its later
        # passage naming pg_hba.conf's lines)
        sections = {(c.file, c.heading) for c, v in zip(chunks, verdicts, strict=True) if v}
        return [
            v or (bool(h) and bool(c.heading) and (c.file, c.heading) in sections)
            for c, v, h in zip(chunks, verdicts, held, strict=True)
        ]

    def holds_any(self, chunks: Sequence[Chunk]) -> bool:
        """True when ``chunks`` hold the focus between them (see the module docstring)."""
        return self._covers([self.held(passage_text(c)) for c in chunks])

    def _covers(self, held: Sequence[tuple[FocusTerm, ...]]) -> bool:
        found = {t for h in held for t in h}
        if not self.weighted:  # without the corpus's word counts nothing else is known
            return bool(found)
        if not self.terms or self.unknown_share >= FOCUS_SHARE - 1e-9:
            return False
        # where a common word would almost surely be named, never naming a name speaks
        if self.silence >= LOUD_SILENCE and (
            self.unnamed_share >= UNNAMED_SHARE - 1e-9 or self.unnamed_names
        ):
            return False
        known = _weight(t for t in self.terms if t.known)
        return _weight(found) >= FOCUS_SHARE * known - 1e-9

    def describe(self, terms: Sequence[FocusTerm] | None = None, joint: str = "or") -> str:
        """Terms as the question wrote them: ``libffi, thread or safe``."""
        names = [t.text for t in (self.terms if terms is None else terms)]
        if len(names) <= 1:
            return "".join(names)
        return f"{', '.join(names[:-1])} {joint} {names[-1]}"

    def closest(self, chunks: Iterable[Chunk], limit: int = SEE_ALSO) -> list[Chunk]:
        """The passages of ``chunks`` that hold most of the focus, one per file and heading,
        in that order (ties keep the given order)."""
        seen: dict[tuple[str, str], tuple[float, int, Chunk]] = {}
        for n, chunk in enumerate(chunks):
            share = self.share(passage_text(chunk))
            key = (chunk.file, chunk.heading)
            if share > 0 and (key not in seen or share > seen[key][0]):
                seen[key] = (share, seen[key][1] if key in seen else n, chunk)
        ranked = sorted(seen.values(), key=lambda item: (-item[0], item[1]))
        return [chunk for _, _, chunk in ranked[:limit]]

    def refusal(self, closest: Sequence[Chunk]) -> str:
        """The answer when no passage holds the focus: that the documents do not say, what the
        closest passages do and do not mention, and those passages under "See also:" (file and
        heading), none of them quoted."""
        text = "The documents do not say."
        if self.terms:
            held = set().union(*(self.held(passage_text(c)) for c in closest))
            said = [t for t in self.terms if t in held]
            lacking = [t for t in self.terms if t not in held]
            if said and lacking:
                text += (
                    f" The closest passages mention {self.describe(said, 'and')} but not "
                    f"{self.describe(lacking)}."
                )
            elif not said:
                text += f" No passage found mentions {self.describe()}."
        if closest:
            lines = [f"- {c.file}" + (f" § {c.heading}" if c.heading else "") for c in closest]
            text += "\n\nSee also:\n" + "\n".join(lines)
        return text


def _modifier(term: FocusTerm) -> bool:
    """A modifier (``MODIFIERS``), or an adverb of a common word never named ("Conceptually")."""
    return term.text.lower() in MODIFIERS or (
        not term.known and term.kind == "word" and adverb_of_common_word(term.text)
    )


def _shares_kept(focus: Focus, held: Sequence[tuple[FocusTerm, ...]]) -> list[bool]:
    """Which passages hold enough of ``focus`` (``passage_share``): a quarter, half the best's."""
    shares = [focus.passage_share(h) for h in held]
    need = max(PASSAGE_SHARE, max(shares, default=0.0) / 2)
    return [bool(h) and s >= need - 1e-9 for h, s in zip(held, shares, strict=True)]


def _request_words(question: str) -> set[str]:
    """The words of the request frame, lower-cased: what ``key_terms`` drops, except the verb
    a "how do I …" asks about."""
    asked = asked_verbs(question)
    # "how big": a size is asked, "big" is no topic; "the difference between" asks to compare
    measured = measured_words(question) | comparing_words(question)
    return {
        t
        for t in tokenize(question)
        if t not in asked and (t in STOPWORDS or t in measured or not key_terms(t))
    }


def _candidates(question: str) -> list[tuple[str, TermKind]]:
    """The question's terms in order: identifiers and numbers whole, and the other words."""
    found: list[tuple[int, str, TermKind]] = []
    taken: list[tuple[int, int]] = []
    for m in _IDENTIFIER.finditer(question):
        text = OWN_OBJECT.sub("", m.group(0).removesuffix("()"))  # "self.cmdqueue"
        parts = [p for p in re.split(r"[.:_$-]+", text) if p]
        if all(len(p) <= 1 for p in parts) and not _SHORT_OPTION.fullmatch(text):
            continue  # "e.g"; an option "-v" or an escape "\\b" stays
        found.append((m.start(), text, "identifier"))
        taken.append(m.span())
    for m in _NUMBER.finditer(question):
        if not any(a <= m.start() < b for a, b in taken):
            found.append((m.start(), m.group(0), "number"))
            taken.append(m.span())
    rest = list(question)
    for a, b in taken:
        rest[a:b] = " " * (b - a)
    for m in re.finditer(r"[^\W\d_]+(?:['\u2019]s\b)?", "".join(rest)):
        found.append((m.start(), m.group(0), "word"))
    return [(text, kind) for _, text, kind in sorted(found)]


def question_focus(question: str, statistics: CorpusStatistics | None = None) -> Focus:
    """The focus of ``question``, its terms weighted by ``statistics`` (all alike without);
    its set phrases read in a manual's words (``kforge.rag.idioms``)."""
    plain = plain_words(question)
    request = _request_words(plain)
    capitals = written_names(plain)  # "What is ANY?", "What does has() do?": no request

    def weigh(text: str) -> tuple[float, bool]:
        """The idf of ``text``'s analyzed parts together (as if they occurred independently),
        and whether the corpus holds every part."""
        if statistics is None or statistics.passages == 0:
            return 1.0, True
        parts = list(dict.fromkeys(analyze(text))) or [text.lower()]
        known = all(statistics.document_frequency(p) > 0 for p in parts)
        return sum(statistics.idf(p) for p in parts), known

    terms: dict[str, FocusTerm] = {}
    for text, kind in _candidates(plain):
        if kind == "word":
            words = tokenize(text)
            if not words or (words[0] in request - capitals) or len(words[0]) < 2:
                continue
            stem = porter_stem(words[0])
            whole = len(words[0]) < _MIN_STEM or len(stem) < _MIN_STEM
            match = words[0] if whole else stem
            shown = re.sub(r"['\u2019]s$", "", text)
        else:
            match, whole, shown = text.lower(), True, text
        if match not in terms:
            weight, known = weigh(shown)
            terms[match] = FocusTerm(
                text=shown, match=match, kind=kind, weight=weight, whole=whole, known=known
            )
    # never naming a word says no less than naming it everywhere
    floor = min((t.weight for t in terms.values() if t.known), default=0.0)
    lifted = [t if t.known else replace(t, weight=max(t.weight, floor)) for t in terms.values()]

    # a modifier weighs no more than the lightest term that names what is asked
    named = [t.weight for t in lifted if not _modifier(t)]
    if named:
        ceiling = min(named)
        lifted = [replace(t, weight=min(t.weight, ceiling)) if _modifier(t) else t for t in lifted]
    ordered = sorted(lifted, key=lambda t: (-t.weight, not t.known))
    if statistics is None or statistics.passages == 0:
        return Focus(question, tuple(ordered), weighted=False)
    return Focus(question, tuple(ordered), silence=statistics.silence)
