"""What a sentence defines or is about: the subject a "what is X" question asks to define,
whether a sentence opens with it and how far it says what it is, and whether a sentence names
a compared item.
"""

from __future__ import annotations

import re

from kforge.rag.acronyms import spelled_out
from kforge.rag.analyze import STOPWORDS, tokenize
from kforge.rag.question import Question, identifiers, mentions, term_of, unit_terms

__all__ = [
    "after_maker",
    "after_subject",
    "defined_subject",
    "defines_subject",
    "is_about",
    "meant_subject",
    "opens_with_subject",
    "spelled_beside",
    "subject_phrase",
]


_ASKED_SUBJECT = re.compile(
    r"^(?:what(?:'s| is| are)|define|explain what)\s+(?:an? |the )?(.+?)"
    r"(?:\s+(?:is|are|mean|called|named|(?:used |good )?for|in [\w.-]+(?: [\w.-]+)?))?\s*\??$",
    re.IGNORECASE,
)
_ASKED_MEANING = re.compile(
    r"^what does it mean (?:to|when|if)\b.*?\b(?:as|is|are|be) (?:an? |the )?"
    r"([^ ?]+(?: [^ ?]+)?)\s*\??$"
    r"|^what is meant by (?:an? |the )?([^?]+?)\s*\??$"
    # "what does it mean to declare a variable Final?": the name it is declared with
    r"|^what does it mean to \w+ .*?\b((?-i:[A-Z]\w*)|\w*[_.]\w+)\s*\??$"
    # "what does a Literal type express?": what it says of the thing, not a word's meaning
    r"|^what does (?:an? |the )?([^?]+?) (?:express|represent|denote|indicate|signify)\s*\??$",
    re.IGNORECASE,
)
"""What "what does it mean to mark a test as X" and "what is meant by X" ask to define: X
("what does X mean" is read as an entry's name, see ``compose``)."""
_QUOTED_SUBJECT = re.compile(
    "^what(?:'s| is| are)\\s+(?:an? |the )?['\"\u2018\u201c`]([^'\"\u2019\u201d`]{2,40})"
    "['\"\u2019\u201d`](?:\\s+([a-z]+))?",
    re.IGNORECASE,
)
"""A quoted name after "what is" and the noun after it ("the 'authenticated' mode")."""
_PRONOUNS = frozenset(["it", "this", "that", "these", "those", "they", "them"])
_NOT_A_SUBJECT = re.compile(r"\b(?:of|which|that|who|whose|whom|where|when|by|for|with)\b", re.I)


def defined_subject(question: Question) -> frozenset[str]:
    """The terms of what a short "what is X" question asks to define ("a deque" -> deque,
    "the index in Git" -> index), or nothing: for a longer question ("what is the name of the
    stadium ...") the answer is a name, not a definition."""
    return unit_terms(without_kind(subject_phrase(question)))


_KINDS = "object|class|instance|function|method"
_KIND_NOUN = re.compile(rf"(?<=\w) (?:{_KINDS}|tool|script|utility|command)s?$", re.I)
"""The kind of thing a "what is X" question names after X ("a Quantity object")."""


def without_kind(phrase: str) -> str:
    """``phrase`` without the kind of thing it names last ("Quantity object" -> "Quantity"): a
    definition need not say it ("A quantity in Pint is the product of ...")."""
    return _KIND_NOUN.sub("", phrase)


def subject_phrase(question: Question) -> str:
    """What a short "what is X" question asks to define, as written ("spider" for "What is
    a spider in Scrapy?"), or ""."""
    if question.kind != "definition":
        return ""
    asking = question.asking or question.text
    meaning = _ASKED_MEANING.match(asking)
    if meaning:
        return next(g for g in meaning.groups() if g)
    match = _ASKED_SUBJECT.match(asking)
    # "the pwiz tool that comes with peewee": what is asked, then what the user knows of it
    head = (
        re.split(r"\s+(?:that|which)\s+(?=comes?\b|ships?\b|is\b)", match.group(1))[0]
        if match
        else ""
    )
    if match and head != match.group(1) and not _NOT_A_SUBJECT.search(head):
        match = _ASKED_SUBJECT.match(f"what is {head}")
    if not match or _NOT_A_SUBJECT.search(match.group(1)) or len(match.group(1).split()) > 4:
        # "What is the 'authenticated' mode you can choose ...?": the quoted name and its noun
        quoted = _QUOTED_SUBJECT.match(asking)
        return " ".join(g for g in quoted.groups() if g) if quoted else ""
    if match.group(1).lower() in _PRONOUNS:
        return ""  # "... showed up in my list. What is it?": said before, not named
    return match.group(1)


_WHAT_IT_MEANS = re.compile(
    r"^what does (?:an? |the )?(.+?)(?: (?:of|on|in|for) .+?)? mean\b", re.IGNORECASE
)


def meant_subject(question: Question) -> frozenset[str]:
    """The terms of what "what does X mean" asks about ("type affinity" of "What does the type
    affinity of a column mean in SQLite?"), read as a term a sentence may name, or nothing."""
    if question.kind != "definition":
        return frozenset()
    match = _WHAT_IT_MEANS.match(question.asking or question.text)
    return unit_terms(match.group(1)) if match else frozenset()


_TERM_OPENING = re.compile(r"^([^:|]{1,60}?)(?::{1,2}\s|\s\|\s)")
"""An entry, or a table row whose first cell is the term ("OrderedDict | dict subclass that
remembers the order entries were added"), its term in group 1."""


_ENTRY_WORDS = 6
"""The most words an entry's term runs to."""


def _entry(text: str) -> re.Match[str] | None:
    """The "term: definition" opening of ``text``, not a colon within a signature's
    parentheses (``Relation(bidirectional: 'True', ...)``)."""
    entry = _TERM_OPENING.match(text)
    return entry if entry and entry.group(1).count("(") <= entry.group(1).count(")") else None


def opens_with_subject(text: str, subject: frozenset[str]) -> bool:
    """True when ``text`` opens by naming ``subject`` as what it is about: as the term of a
    "term: definition" entry, or as the noun phrase it starts with ("A shallow copy
    constructs ...", "Deques are ...", "The word **checkpoint** is used ..."; not
    "Otherwise, the deque is ...")."""
    return after_subject(text, subject) is not None


def after_subject(text: str, subject: frozenset[str]) -> str | None:
    """What ``text`` says after opening with ``subject`` (see ``opens_with_subject``): the
    rest of the sentence, or of an entry its definition; None when it does not open so."""
    entry = _entry(text)
    if entry and len(entry.group(1).split()) <= _ENTRY_WORDS:
        term = entry.group(1).strip("*_` ")
        if re.fullmatch(r"[\w.$]+", term) and unit_terms(term) != subject:
            return None  # ``xfail_strict:`` is an entry of its own, not of xfail
        first = term.split()[0] if term.split() else term
        first = re.sub(r"\(.*", "", first) or first  # "try_unbind(*keys)": its arguments
        last = re.split(r"[.:]", first)[-1]
        if re.search(r"\w[_.]\w", first) and subject not in (unit_terms(first), unit_terms(last)):
            return None  # "Kitchen.i18n Module: ..." is the entry of kitchen.i18n, not kitchen's
        return text[entry.end() :] if subject <= unit_terms(entry.group(1)) else None
    words = [w.strip("*_`") for w in text.split()]  # **emphasis** marks no word
    if words and words[0].lower() in ("a", "an", "the"):
        words = words[1:]
    if len(words) > 1 and words[0].lower() in _NAMING_WORDS:
        words = words[1:]  # "the term X", "the word X"
    if (
        not words
        or not re.fullmatch(r"[\w.-]+(?:\(\))?[,:]?", words[0])
        or not unit_terms(words[0]) & subject
    ):
        return None
    last = re.split(r"[.:]", words[0].rstrip(",:"))[-1]  # "cmd2.table_creator.BorderedTable"
    if re.search(r"\w[_.(]", words[0]) and not (
        unit_terms(words[0]) <= subject or unit_terms(last) == subject
    ):
        return None  # "The expect_eof() method is gone" is another name's
    phrase: list[str] = []
    for word in words[: len(subject) + 1]:
        phrase.append(word)
        if not re.fullmatch(r"[\w.-]+(?:\(\))?", word) or subject <= unit_terms(" ".join(phrase)):
            break  # "deque," ends the phrase, and so does its last word
    if not subject <= unit_terms(" ".join(phrase)):
        return None
    rest = words[len(phrase) :]
    if len(rest) > 1 and re.fullmatch(rf"(?:{_KINDS})s?", rest[0], re.I):
        rest = rest[1:]  # "The Session object is ...", of "what is a Session object?"
    return " ".join(rest)


_SAYS_WHAT = re.compile(
    r"(?:(?:is|are)(?!\s+(?:not|never)\b)|means|refers to|denotes|stands for|represents?|"
    r"lets? you|allows? you to|enables? you to|"
    r"helps? you|aims? to|is (?:designed|meant|intended) to|provides)\b"
)
"""What a sentence says after naming its subject when it defines it: what it is, or what it
is for ("TypedDict lets you give precise types ...", "Kitchen aims to pull these small
snippets of code into a few python modules", "CommandSets represent a logical grouping of
commands")."""


_MAKER = re.compile(r"[A-Z]{2,6}")
"""A maker's name written in capitals that a sentence may name its subject after ("GNU Aspell
is a spell checker"), unlike a capitalised word opening a clause ("Since TypedDicts are ...")."""


def after_maker(text: str) -> list[str]:
    """``text`` without the one or two makers' names it may open with, each way ("GNU Aspell
    is ..." as "Aspell is ...")."""
    words = text.split(" ", 2)
    return [
        " ".join(words[n:])
        for n in (1, 2)
        if len(words) > n and all(_MAKER.fullmatch(word) for word in words[:n])
    ]


_SETTING = re.compile(r"(?:In|Within) (?:[\w-]+ ){0,2}[\w-]+, ")
"""The field a definition is said of, before its subject ("In testing, a fixture provides
...")."""


def defines_subject(text: str, subject: frozenset[str]) -> float:
    """How far ``text`` defines ``subject``: 1 when it says what it is ("A Counter is ...",
    an entry "fast-forward: ...", a table row "OrderedDict | dict subclass that ...", an
    acronym beside the words it stands for), 0.6 when it opens with it otherwise ("A counter
    tool is provided ...", an API entry ``class collections.deque([iterable]): ...``), else
    0."""
    if spelled_beside(text, subject):
        return 1.0
    if concept_at(text, subject) is not None:  # "Pint has the concept of contexts which ..."
        return 1.0
    rest = after_subject(text, subject)
    if rest is None:
        # "GNU Aspell is a spell checker ...": its maker's name first, then what it is; "In
        # testing, a fixture provides ...": its field
        setting = _SETTING.match(text)
        for bare in after_maker(text) + ([text[setting.end() :]] if setting else []):
            rest = after_subject(bare, subject)
            if rest is not None and _SAYS_WHAT.match(rest):
                return 1.0
        return 0.0
    entry = _entry(text)
    if entry and len(entry.group(1).split()) <= _ENTRY_WORDS:  # not a sentence before a colon
        says = len(entry.group(1).split()) <= len(subject) + 1
    else:
        # "The type affinity of a column is the recommended type ...": what it is of, then
        # what it is
        says = _SAYS_WHAT.match(_QUALIFIER.sub("", rest, count=1)) is not None
    return 1.0 if says else 0.6


def concept_at(text: str, subject: frozenset[str]) -> int | None:
    """Where ``text`` introduces ``subject`` as a concept and says what it is ("Pint has the
    concept of contexts which provides conversion rules between dimensions"), else None."""
    for concept in _CONCEPT_OF.finditer(text):
        if any(unit_terms(concept.group(1).rsplit(" ", n)[0]) == subject for n in (0, 1)):
            return concept.start()
    return None


def spelled_beside(text: str, subject: frozenset[str]) -> str | None:
    """The words an acronym ``subject`` stands for, when ``text`` writes them beside it in
    parentheses ("the CLDR (Common Locale Data Repository)", "Write-Ahead Log (WAL)") or says
    so ("I18N is an abbreviation for internationalization"): what a "what is CLDR" question
    asks; else None."""
    if len(subject) != 1:
        return None
    (term,) = subject
    for said in _STANDS_FOR.finditer(text):  # "I18N is an abbreviation for internationalization"
        if unit_terms(said.group(1)) == subject:
            return said.group(2).strip()
    for found in _CAPITALS.finditer(text):
        acronym = found.group(1)
        if acronym.lower() != term:
            continue
        phrase = spelled_out(acronym, text)
        if phrase is not None:
            words = r"\s+".join(map(re.escape, phrase.split()))
            beside = rf"{acronym}s?\s*\(\s*{words}\s*\)|{words}\s*\(\s*{acronym}s?\s*\)"
            if re.search(beside, text):
                return phrase
        # in any case, one word (or part of a hyphenated one) a letter: "Behavior-driven
        # development (or BDD)"
        words = rf"(?<![\w-])((?:\w+[\s-]+){{{len(acronym) - 1}}}\w+)"
        for beside in (
            rf"{words}\s*\(\s*(?:or\s+|a\.?k\.?a\.?\s+)?{acronym}s?\s*\)",
            rf"{acronym}s?\s*\(\s*{words}\s*\)",
        ):
            for match in re.finditer(beside, text):
                parts = re.split(r"[\s-]+", match.group(1))
                if "".join(p[0] for p in parts).lower() == term:
                    return match.group(1)
    return None


_CAPITALS = re.compile(r"(?<![\w-])([A-Z]{2,6})s?(?![\w-])")
_STANDS_FOR = re.compile(
    r"(?<![\w-])([A-Z][A-Za-z0-9]{1,9})\s+(?:is\s+(?:an?\s+|the\s+)?(?:abbreviation|acronym|"
    r"short(?:hand)?|numeronym)\s+(?:of|for)|stands\s+for)\s+[\"\u201c]?([^.,;:()\"\u201d]{3,80})"
)
"""An abbreviation said to stand for its words: "I18N is an abbreviation for
internationalization", "CLI stands for command line interface"."""
_CONCEPT_OF = re.compile(
    r"\b(?:concept|notion|idea) of (?:an? |the )?([\w.-]+(?: [\w.-]+)?),? (?:which|that|to)\b"
)
"""A concept a sentence introduces and what it is ("Pint has the concept of contexts which
provides conversion rules between dimensions")."""
_QUALIFIER = re.compile(r"^(?:of|for|in|on) (?:an? |the )?[\w.-]+,? ")
"""What a subject is of, before what is said of it ("of a column")."""
_NAMING_WORDS = frozenset(["word", "term", "name", "notion", "concept", "phrase"])


def is_about(text: str, option: str) -> bool:
    """True when ``text`` names the compared item ``option``: a code name whole
    (``json.dump`` is not in ``json.dumps``), else its words in a row ("git revert", not
    "Reset, restore and revert in git")."""
    if identifiers(option):
        return all(mentions(text, name) for name in identifiers(option))
    wanted = _term_run(option)
    said = _term_run(text)
    size = len(wanted)
    return size > 0 and any(said[i : i + size] == wanted for i in range(len(said) - size + 1))


def _term_run(text: str) -> list[str]:
    return [term_of(t) for t in tokenize(text) if t not in STOPWORDS]
