"""What a question asks for: its type (definition, procedure, quantity, yes/no, comparison,
reason, who, when, where, or a thing named), its terms and the identifiers it names whole.

Read by rule, so it costs nothing and says the same every time. The type decides which
sentences of a passage answer (a number with its unit for "how many", a command or code for
"how do I", "X is ..." for "what is X") and what the short answer line quotes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from kforge.rag.analyze import STOPWORDS, tokenize
from kforge.rag.idioms import plain_words
from kforge.rag.names import ENTRY, identifiers, name_pattern
from kforge.rag.options import BETTER_CHOICE, TWO_WAYS, named_options
from kforge.rag.terms import spells_question, term_of, unit_terms
from kforge.rag.textcheck import (
    REQUEST_WORDS,
    asked_verbs,
    measured_words,
    split_sentences,
    written_names,
)

__all__ = [
    "CAPITALS",
    "DATE",
    "ENTRY",
    "LOCATION",
    "PROCEDURAL",
    "Question",
    "QuestionKind",
    "asked_code_noun",
    "asked_noun",
    "asking_sentence",
    "date_spans",
    "identifiers",
    "mentions",
    "name_spans",
    "read_question",
    "situation_terms",
    "spells_question",
    "term_of",
    "unit_terms",
]

QuestionKind = Literal[
    "definition",
    "procedure",
    "quantity",
    "yesno",
    "comparison",
    "choice",
    "reason",
    "who",
    "when",
    "where",
    "thing",
]

_YESNO = re.compile(
    r"^(?:is|are|am|was|were|do|does|did|can|could|should|shall|will|would|has|have|had|"
    r"must|may|might)\b",
    re.IGNORECASE,
)
_QUANTITY = re.compile(
    r"\bhow (?:many|much|long|large|big|old|often|far|fast|high|deep|wide|tall|small|short|"
    r"low|slow|heavy|few|little|frequently|quickly)\b"
    r"|\b(?:maximum|minimum|max|min|default|limit|size|number of|percentage|length of|"
    r"how many|(?:share|proportion|fraction|percent) of)\b",
    re.IGNORECASE,
)
_MANNER = re.compile(r"how (?:is|are|was|were|does|do|did) (?!(?:i|we|you|one)\b)", re.IGNORECASE)
"""A question of how something is done or happens ("how is the total percentage calculated?",
"how does the pool pick a connection?"): the sentence saying how answers, not a number it
holds."""
_WAY_TO = re.compile(
    r"^(?:is there|are there) (?:an? |any |some )?(?:(?:easy|simple|quick|built-in|better) )?"
    r"(?:way|ways|option|options|command|commands|flag|setting|something|tool|function|method)"
    r"\b(?! (?:to (?:know|tell|say)|of)\b)",
    re.IGNORECASE,
)
"""A way asked for as whether one exists: "Is there something like `make clean` that ...?",
"Is there a way to skip ...?" (the answer is the way, not a yes)."""
_SUPERLATIVE = re.compile(
    r"^what(?:'s| is| was| are| were) the (?:longest|shortest|largest|smallest|biggest|highest|"
    r"lowest|oldest|newest|earliest|latest|fewest)\s+(\w+)",
    re.IGNORECASE,
)
"""A measure asked by its extreme: "what's the longest cache key Memcached accepts?" (a length),
"what's the oldest Python that mypy runs on?" (a release)."""
_PROCEDURE = re.compile(
    r"^(?:how (?:do|can|could|should|would|to|does one|must)\b|in what way can\b)"
    r"|\b(?:steps? to|command (?:to|for)|way to)\b",
    re.IGNORECASE,
)
_WHAT_TO_DO = re.compile(
    r"^(?:what|which)(?: else)? (?:do|should|must|can|could|would) (?:i|we|you|one) (?:have to |"
    r"need to |then )?(?:run|install|type|call|enter|execute"
    r"|(?:add|pass|put|set|write|specify)\b.*\bcommand(?: line)?"
    r"|(?:add|put|write) to (?:my|our|your|the|a) (?:\w+ )?(?:class|code|file|script|config))\b"
    r"|^(?:what|which) (?:\w+ )?(?:sub)?commands?\b",
    re.IGNORECASE,
)
"""A command asked for: "what else do I have to run?", "which command writes them back?", "what
do I add to my snakemake command so the jobs go to the cluster?", "what do I add to my class?"
(a line of code)."""
_HOW_DO_I = re.compile(r"how (?:do|can|could|should) (?:i|we|you|one)\b", re.IGNORECASE)
_DEFINITION = re.compile(
    r"^(?:what(?:'s| is| are| was| were| (?:does|do(?! (?:i|we|you|they|one)\b)|did) .+ "
    r"(?:mean|contain|return|do|hold|represent|express|denote|indicate|signify|give|provide|"
    r"produce|yield)\b)|define\b|meaning of\b|explain what\b)|\bwhat (?:kind|type|sort) of\b",
    re.IGNORECASE,
)
_COMPARISON = re.compile(
    r"(?:^|,\s+)(?:what(?:'s| is| are) the (?:\w+ )?differences? between|how (?:does|do|is|are) .+ "
    r"(?:differ|compare)|compare\b)|\b(?:versus|vs\.?|better than)\b",
    re.IGNORECASE,
)


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_NOT_NOUNS = _word_set(
    "is are was were be been does do did has have had can could will would should shall may "
    "might must kind type sort that which who whom whose in on at of for from to by with as "
    "and or the a an its his her their it he she they this these those means mean indicates "
    "indicate denotes denote represents"
)
_PLACE_NOUNS = _word_set(
    "city country state county town place region province continent location island area "
    "street village district nation"
)
_FOLDER_NOUNS = _word_set("directory directories folder folders path paths location locations")
"""What "which directory ... by default?" asks for: a place, whatever else it names."""
_TIME_NOUNS = _word_set("year date day month century decade time")
_PERSON_NOUNS = _word_set(
    "person man woman director actor actress singer writer author player president king "
    "queen composer artist musician politician producer founder leader coach"
)
_WHEN = re.compile(
    r"^(?:when\b|(?:in |on |by )?(?:what|which) (?:year|date|day|month|century|decade|time)\b)"
    r"|\b(?:what|which) (?:year|date)\b|\bborn\b|\bbirthday\b",
    re.IGNORECASE,
)
_WHERE = re.compile(
    r"^where\b|\b(?:what|which) (?:city|country|state|county|town|place|"
    r"region|province|continent|location|island|area|street)\b|\bheadquartered\b|\bbased\b",
    re.IGNORECASE,
)
_WHO = re.compile(r"^(?:who|whom|whose)\b|\b(?:which|what) (?:person|man|woman)\b", re.I)
_REASON = re.compile(r"^(?:why\b|what (?:is|was) the reason\b|for what reason\b)", re.I)

_YEAR = r"(?:1[0-9]{3}|20[0-9]{2})"
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
DATE = re.compile(
    rf"(?<![\d\u2013-])\b(?:\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}} {_MONTH}(?:,? {_YEAR})?"
    rf"|{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?(?:,? {_YEAR})?|{_MONTH} {_YEAR}"
    rf"|{_YEAR}(?:[\u2013-]\d{{2,4}})?)\b"
)
_DOING = (
    r"(?:use|run|call|set|pass|add|create|install|type|enter|open|click|select|write|specify|"
    r"invoke|import|require|execute|issue|compile|enable|disable|register|configure)"
)
LOCATION = re.compile(
    r"\b(?:folders?|director(?:y|ies)|paths?|located|locations?)\b"
    r"|(?:^|\s)[\w.~-]*/[\w./-]*"
)
"""Where a thing is in documentation: a folder, a directory, a path ("templates/", "/usr/...")."""
PURPOSE_FIRST = re.compile(r"^(?:to|in order to) (?!be\b)(\w[^,:;]{0,120}), \w", re.IGNORECASE)
"""A sentence opening with what it says how to do ("To use dogpile.cache, the ... must ...")."""
PROCEDURAL = re.compile(
    # a code span, not a cross-reference a build left as written ({doc}`Black's HTTP server
    # </usage/black_as_a_server>`, :ref:`x`): it names a page, not code to use
    r"(?<!\{doc\})(?<!\{ref\})(?<!:doc:)(?<!:ref:)`(?![^`]*\s<[^`<>]+>`)[^`]+`"
    rf"|^{_DOING}\b|\$ \w"
    r"|\b(?:command|option|flag|method|function|argument|parameter|attribute)s?\b"
    # "You can use a # type: ignore comment to silence the type checker on a particular line"
    rf"|\b(?:you|one|we) (?:can|could|may|should|must|need to) (?:also |then |simply |just )?"
    rf"{_DOING}\b"
    r"|^--?[A-Za-z][\w-]*(?:[,=\[ ]|:\s)"  # an option's entry: "-u, --include-untracked: ..."
    r"|(?<![\w-])--[A-Za-z][\w-]+"
    # "To enable foreign key enforcement, run PRAGMA ...", "To apply ..., separate them by ...:"
    rf"|{PURPOSE_FIRST.pattern}"
    # "... can activate it using the PRAGMA foreign_keys statement", "by calling close()"
    r"|\b(?:using|via|by (?:calling|using|running|setting|passing|adding|issuing|invoking|"
    r"raising))\s+(?:the\s+|a\s+|an\s+)?(?:(?-i:[A-Z]{2,}|[A-Z][a-z]+[A-Z]\w*)\b"
    r"|[\w.]*(?:_|\(|=|\.\w)\S*|--?\w|\w+\s+to\s+(?-i:True|False|None)\b)",  # "ssl to False"
    re.IGNORECASE,
)
_LEADING_WH = re.compile(r"^\W*(?:which|what|who|whom|whose|when|where|why|how)\b", re.I)


@dataclass(frozen=True, slots=True)
class Question:
    """A question read by rule."""

    text: str
    kind: QuestionKind
    terms: tuple[str, ...]
    """Key terms (``term_of`` each word): a one- or two-letter stem is never one."""
    identifiers: tuple[str, ...]
    """Names written as code in the question (``fs.link``, ``os.EOL``, ``--force``), whole."""
    options: tuple[str, ...] = ()
    """For "which of X or Y" and "are X and Y both …": the two items named."""
    asking: str = ""
    """The sentence that asks (``asking_sentence``); ``text`` when it is one sentence."""


_CODE_NOUN = re.compile(
    r"\b(?:what|which)\s+(?:[\w-]+\s+){0,2}?"
    r"(environment variable|variable|option|setting|flag|switch|function|method|class|module|"
    r"parameter|argument|attribute|property|hook|decorator|key|section)s?\b",
    re.IGNORECASE,
)
"""A question asking for a name in code, the kind of name in group 1."""


def asked_code_noun(question: str) -> str:
    """The kind of name in code ``question`` asks for ("environment variable"), or ""."""
    found = _CODE_NOUN.search(question)
    return found.group(1).lower() if found else ""


CAPITALS = re.compile(r"(?<![\w$-])\$?[A-Z][A-Z0-9]{2,}(?![\w(-])")
"""A name in capitals alone (``NOXSESSION``, ``$EDITOR``), as an environment variable is named."""


_INTENSIFIERS = frozenset(
    "actually really just simply basically even ever anyway somehow quite very least".split()  # noqa: SIM905
)
"""Words that stress what a question asks without naming any of it ("make SQLite actually
enforce ..."): a sentence that happens to use one says no more of what is asked."""


_ACTION_REQUESTS = frozenset(["list", "show", "write"])
"""Request words that are also what a tool does ("list the tags", "show the log")."""


def _terms(text: str) -> list[str]:
    asked = measured_words(text)  # "how big" asks a size: "big" is not what it is about
    skip = (REQUEST_WORDS | asked | _INTENSIFIERS) - written_names(text)
    words = [t for t in tokenize(text) if t not in STOPWORDS and t not in skip]
    if len(set(words)) <= 2:  # "How do I list all tags?": the verb says half of it
        verbs = asked_verbs(text) & _ACTION_REQUESTS
        words = [t for t in tokenize(text) if t in verbs or t in words]
    return list(dict.fromkeys(map(term_of, words)))


_ADVICE = re.compile(
    r"^(?:when|in which cases?) (?:should|do|can|would|must|is it better to) (?:i|we|you|one)\b",
    re.IGNORECASE,
)
"""An advice question: "When should I use X?" asks in what case, not for a date."""


def asking_sentence(text: str) -> str:
    """The sentence of ``text`` that asks: the last one ending in a question mark ("My
    print() calls show nothing. How do I see their output?" asks "How do I see their
    output?"), or ``text`` whole when it is one sentence or none ends so. The sentences
    before it say the user's situation: words to search with, not what kind of answer is
    wanted."""
    sentences = split_sentences(text)  # not at an initial: "Andrew J. Elliot"
    asking = [s for s in sentences if s.rstrip().endswith("?")]
    sentence = asking[-1] if len(sentences) > 1 and asking else text
    # "If I mark it Final, will Python stop ...?", "B is a subclass of A, so why won't ...?":
    # the clause after the condition or the premise asks
    lead = _LEAD_CLAUSE.match(sentence)
    return sentence[lead.end() :] if lead else sentence


SITUATION = 0.5
"""Weight of a term only the sentences before the one that asks name."""
_OWN_TERMS = 3
"""The fewest terms of the sentence that asks for the situation's to weigh less."""
_REFERS_BACK = re.compile(
    r"\b(?:it|its|they|them|their)\b|\b(?:this|that|these|those)\b(?=\s*(?:[?.,!]|$|(?:is|are|"
    r"was|were|do|does|did|has|have|will|would|can|could|should|to|for|in|on|with|mean)\b))",
    re.I,
)
"""A pronoun standing for what the situation names ("How do I keep them out?", "Which method
does that?"), not a demonstrative naming it anew ("Where does that log line end up?")."""
_BACK_TO_TWO = re.compile(rf"{_REFERS_BACK.pattern}|\b(?:the two|both)\b", re.I)
"""What stands for the items a comparison's situation names: a pronoun, "the two", "both"."""


def situation_terms(asked: Question) -> dict[str, float]:
    """The terms of the sentences before the one that asks that it does not hold, each with
    its weight (``SITUATION``): the user's situation ("Jobs in my machine shop need machines
    of a given size. Which store type lets a job take only an item matching a condition?"
    asks about a store, not a machine shop)."""
    sentences = split_sentences(asked.text)
    asking = [n for n, s in enumerate(sentences) if s.rstrip().endswith("?")]
    if len(sentences) < 2 or not asking:
        return {}
    own = set(_terms(sentences[asking[-1]]))
    if len(own) < _OWN_TERMS or _REFERS_BACK.search(sentences[asking[-1]]):
        return {}  # "How do I keep all of them out of the docs?": what it asks is the situation
    return {t: SITUATION for s in sentences[: asking[-1]] for t in _terms(s) if t not in own}


_ASKING_WORD = r"(?:why|how|what|which|who|whom|when|where|is|are|can|could|does|do|did|will|would|should|must|may)\b"
_CLAUSE_PART = r"(?:\[[^\]?]*\]|\([^)?]*\)|[^?,\[(])"
"""A character of a clause before the comma ending it, or a bracket holding commas of its own
("If I write expr[..., 3], will ...?")."""
_LEAD_CLAUSE = re.compile(
    rf"^(?:if|when|once|since|although|though|because|after|before|while|given)\b(?!\s+{_ASKING_WORD})"
    rf"{_CLAUSE_PART}{{3,}},\s+(?={_ASKING_WORD})"
    rf"|^(?!{_ASKING_WORD}){_CLAUSE_PART}{{3,}},\s+(?:so|but|and|then)\s+(?={_ASKING_WORD})"
    r"|^(?:on|in|with|for|under|from|at|using|inside|within|without|during)\s"
    rf"{_CLAUSE_PART}{{2,60}},\s+(?={_ASKING_WORD})"
    r"|^by default(?: (?:a|an|the|any) [\w.-]+)?,\s+(?=(?:is|are|does|do|can|will|would|where)\b)"
    rf"|^(?:[a-z]{{3,}}ly|[a-z]{{3,}}-wise|so|also|now|ok|okay|well|then),\s+(?={_ASKING_WORD})",
    re.IGNORECASE,
)
"""A condition, premise, setting or manner ("On Windows, why does ...?", "By default, does
find follow ...?": a yes or no; "By default a stream, where does ...?", for "If I don't pass a
stream": a place; "Conceptually, what is ...?") before the words that ask."""


def read_question(text: str) -> Question:
    """``text`` read as a question: its kind, terms, identifiers and compared items. The
    kind is that of the sentence that asks (``asking_sentence``); the terms are those of
    every sentence."""
    whole = plain_words(" ".join(text.split()))
    question = asking_sentence(whole)
    names = identifiers(whole)
    options, choose = named_options(question)
    kind: QuestionKind
    noun = asked_noun(question)
    if choose:
        kind = "choice"
    elif options and (TWO_WAYS.match(question) or BETTER_CHOICE.search(question)):
        kind = "comparison"  # "is md5 or scram-sha-256 the safer choice?": no yes or no
    elif _WAY_TO.match(question):
        kind = "procedure"  # "is there something like `make clean` that deletes ...?": how
    elif _YESNO.match(question):
        kind = "yesno"
    elif _REASON.match(question):
        kind = "reason"
    elif _COMPARISON.search(question):
        kind = "comparison"
    elif _HOW_DO_I.match(question) or _WHAT_TO_DO.match(question):
        # "how do I get the number of CPUs?" asks for a way, not a number; "what else do I
        # have to run?" and "which command writes them back?" for a command
        kind = "procedure"
    elif noun in _FOLDER_NOUNS or re.match(r"(?i)where\b", question):
        # "in which directory ... by default?", "where does it store X by default?": a place,
        # not a number
        kind = "where"
    elif _measured(question):
        kind = "quantity"
    elif _PROCEDURE.search(question):
        kind = "procedure"
    elif _ADVICE.match(question):
        kind = "thing"  # in what case: the sentence saying so, whatever it holds
    elif re.match(r"(?i)when\b", question):
        kind = "when"
    elif re.match(r"(?i)(?:where|who|whom|whose)\b", question):
        kind = "where" if question[:5].lower() == "where" else "who"
    elif noun in _TIME_NOUNS:
        kind = "when"
    elif noun in _PLACE_NOUNS:
        kind = "where"
    elif noun in _PERSON_NOUNS:
        kind = "who"
    elif noun:
        kind = "thing"  # "what brewery headquartered in ...": a brewery, not a place
    elif _WHEN.search(question):
        kind = "when"
    elif _WHERE.search(question):
        kind = "where"
    elif _WHO.search(question):
        kind = "who"
    elif _DEFINITION.search(question):
        kind = "definition"
    else:
        kind = "thing"
    if kind == "comparison" and not options and _BACK_TO_TWO.search(question):
        options = _situation_items(whole, question)
    return Question(whole, kind, tuple(_terms(whole)), tuple(names), options, question)


def _situation_items(text: str, asking: str) -> tuple[str, ...]:
    """The two items "the difference between them" stands for: those a sentence before it
    compares, else the two names in code it holds ("My errors carry both relative_path and
    absolute_path. What's the difference between them?")."""
    before = split_sentences(text[: text.rfind(asking)])
    for sentence in reversed(before):
        items, _ = named_options(sentence)
        if items:  # "... between SubFactory and RelatedFactory.": not its full stop
            return tuple(item.rstrip(".!;:") for item in items)
        names = list(dict.fromkeys(identifiers(sentence)))
        if len(names) == 2:
            return tuple(names)
    return ()


def _measured(question: str) -> bool:
    """True for a question asking for a number: not "how is the total percentage
    calculated?", which asks how."""
    asks = _QUANTITY.search(question) is not None or _measured_extreme(question)
    return asks and _MANNER.match(question) is None and _KIND_OF.search(question) is None


_KIND_OF = re.compile(r"\bwhat (?:kind|type|sort) of\b", re.IGNORECASE)
"""A kind asked for, never a number: "What kind of lock does it use by default?"."""


def _measured_extreme(question: str) -> bool:
    # "the largest city" is a place and "the oldest player" a person, not a measure
    match = _SUPERLATIVE.match(question)
    return match is not None and match.group(1).lower() not in _PLACE_NOUNS | _PERSON_NOUNS


def asked_noun(question: str) -> str:
    """The noun of "what X" / "which X": the last of up to four words before a verb or
    function word ("which famous director was" asks for a director), or "" when the
    question has none ("what is ...")."""
    match = re.search(r"\b(?:what|which)\s+([^?.,;:!]*)", question.lower())
    if not match:
        return ""
    words: list[str] = []
    for word in match.group(1).split():
        if word in _NOT_NOUNS or len(words) == 4:
            break
        words.append(word)
    return words[-1] if words and not words[-1].isdigit() else ""


def mentions(text: str, name: str) -> bool:
    """True when ``text`` holds ``name`` whole (not inside a longer name), any case, or the
    last part of a dotted name that is a code name itself (``name_forms``)."""
    forms = name_pattern(name)
    pattern = rf"(?<![\w$-])(?:{forms})(?![\w$]|\.[A-Za-z_$])"
    return re.search(pattern, text, re.IGNORECASE) is not None


_NAME = re.compile(
    r"(?:\"(?=[A-Z0-9])[^\"]{2,80}(?<!\s)\"|\u201c(?=[A-Z0-9])[^\u201d]{2,80}\u201d|"
    r"(?:[A-Z][\w'\u2019.&\u2013-]*|[a-z]+[A-Z][\w'\u2019-]*)(?:\s+(?:(?:of|de|the|and|for|du|la|von|van|"
    r"der|da|del|y|on|in|&)\s+)*(?:[A-Z0-9][\w'\u2019.&-]*|[a-z]+[A-Z]\w*))*)"
)


def date_spans(text: str, question: Question) -> list[tuple[int, int]]:
    """Where ``text`` gives a date the question does not: the year alone for "what year", the
    fullest date otherwise."""
    year_only = re.search(r"\b(?:what|which) year\b", question.text, re.IGNORECASE)
    found = []
    for match in DATE.finditer(text):
        if match.group(0) in question.text:
            continue
        year = re.search(r"\b(?:1\d{3}|20\d{2})\b", match.group(0)) if year_only else None
        start = match.start() + year.start() if year else match.start()
        found.append((start, start + len(year.group(0)) if year else match.end()))
    return found


_PATH = re.compile(r"(?<![\w/.~-])[\w.~-]*\w/[\w./{}@-]*\w")
"""A path or ref: ``refs/stash``, ``~/.config/app/settings.yml``."""


def name_spans(text: str, question: Question) -> list[tuple[int, int]]:
    """Where ``text`` names something: runs of capitalised words (with "of", "the", "and" ...
    between them) and quoted titles; a run joined by "and" also gives each side alone; for
    "where", also a path (``refs/stash``: where a program keeps something)."""
    found = [m.span() for m in _PATH.finditer(text)] if question.kind == "where" else []
    for match in _NAME.finditer(text):
        start, end = match.span()
        found.append((start, end))
        piece = match.group(0)
        for part in re.finditer(r"(?:(?<=^)|(?<= and )).+?(?= and |$)", piece):
            if part.span() != (0, len(piece)):
                found.append((start + part.start(), start + part.end()))
    return found
