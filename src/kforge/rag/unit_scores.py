"""How far a unit of a passage answers a question, by what it opens with and where it
stands: the lead of a section whose heading names what is asked, of the entry that defines
the asked subject, of the code a sentence leads to; the weight of a parameter list's item or
of another name's entry, which answer only what names them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from kforge.rag.candidates import NAME_PREFIX, Candidate, bare_heading
from kforge.rag.commands import is_command_line
from kforge.rag.defining import defines_subject
from kforge.rag.follow_on import refers_back
from kforge.rag.names import documents_name
from kforge.rag.question import (
    ENTRY,
    PROCEDURAL,
    Question,
    identifiers,
    mentions,
    spells_question,
    unit_terms,
)
from kforge.rag.types import Chunk
from kforge.rag.units import field_name

__all__ = [
    "NAMED_HEADING",
    "about_subject",
    "completes",
    "defining_units",
    "entry_leads",
    "heading_lead",
    "led_code",
    "names_what_is_asked",
    "naming_units",
    "opens_with_asked",
    "opens_with_identifier",
    "other_entry",
    "parameter_item",
    "term_overlap",
]

NAMED_HEADING = 0.5
"""Lead of a section whose heading names an identifier of the question (``os.EOL``)."""
_NAMES_IT = re.compile(
    r"\b(?:is called|are called|referred to as|known as)\s+(?:its |their )?[\"\u201c']?"
    r"((?:the |an? )?[^\"\u201d'.,;:(]+)"
)
_ENTRY_LEAD = 1.5
"""How far the first sentence of the entry named "what does X do" asks about defines it."""


_PARAMETER_ITEM = re.compile(r"^(?:`([^`]+)`\s*\{[^}]*\}|Returns:\s*\{)")
"""A parameter list's item (a name in backticks, then its type in braces: "paths {string} A
sequence of path segments"), or its "Returns: {Promise}"."""


def parameter_item(text: str, question: Question) -> bool:
    """True for an item of a parameter list that the question does not ask about by name: it
    says what a parameter is, not what the call does."""
    field = field_name(text)
    if field is not None:  # "host (Optional[str]) - ..." answers only what names the host
        return not any(mentions(question.text, w) for w in (field, field.replace("_", " ")))
    item = _PARAMETER_ITEM.match(text)
    if item is None:
        return False
    name = (item.group(1) or "").strip(".")
    asks_parameters = re.search(
        r"\b(?:parameter|argument|option|property)s?\b", question.text, re.I
    )
    return not name or not (
        any(mentions(name, n) or mentions(n, name) for n in question.identifiers)
        or (asks_parameters and mentions(question.text, name))
    )


def other_entry(c: Candidate, question: Question) -> bool:
    """True when ``c`` continues the entry of a name other than those the question asks
    about: "Returns True for broken symbolic links." under ``os.path.lexists`` does not answer
    a question about ``os.path.exists``."""
    if not question.identifiers:
        return False
    if not c.entry:
        # "Morsel.setdefault(...): ... the same as dict.setdefault()": the entry of the same
        # method on another class, which only refers to the one asked about
        opening = ENTRY.match(c.text)
        own = identifiers(opening.group(1)) if opening else []
        return bool(own) and all(
            documents_name(own[0], "", name) is False for name in question.identifiers
        )
    return not any(
        mentions(c.entry, name) or NAME_PREFIX + name in c.terms for name in question.identifiers
    )


def defining_units(
    candidates: Sequence[Candidate],
    passages: Sequence[Chunk],
    subject: frozenset[str],
    *,
    head: bool = False,
) -> dict[int, float]:
    """How far each unit (by id) defines ``subject``: 1 for one saying what it is ("Deques
    are ...", "fast-forward: ...") and for the first unit of a section whose own heading
    names just it (``docs_dir`` above "The directory containing ..."); less for one that
    opens with it otherwise ("Named tuple instances do not ...", an API entry
    ``class collections.deque(...): ...``)."""
    found = {id(c): weight for c in candidates if (weight := defines_subject(c.text, subject))}
    found.update(naming_units(candidates, subject, head=head))
    firsts: dict[int, Candidate] = {}
    for c in candidates:
        if c.source not in firsts or c.position < firsts[c.source].position:
            firsts[c.source] = c
    for source, c in firsts.items():
        last = passages[source].heading.rsplit(">", 1)[-1]
        if unit_terms(last) == subject:
            found[id(c)] = 1.0
    return found


def naming_units(
    candidates: Sequence[Candidate], subject: frozenset[str], *, head: bool = False
) -> dict[int, float]:
    """The units (by id) that end by naming ``subject``, which says what it is: "... a single
    large file named "sqlite3.c" and referred to as "the amalgamation"", "The preferred storage
    class for a column is called its "affinity"". With ``head``, naming part of it is enough
    ("affinity" for "the type affinity of a column")."""
    return {id(c): 1.0 for c in candidates if names_subject(c.text, subject, head=head)}


def names_subject(text: str, subject: frozenset[str], *, head: bool = False) -> bool:
    """True when ``text`` ends by naming ``subject`` ("A python module/file that defines tasks
    for doit is called dodo file (that is ...)"; see ``naming_units``)."""
    return naming_clause(text, subject, head=head) is not None


def naming_clause(text: str, subject: frozenset[str], *, head: bool = False) -> str | None:
    """What ``text`` says ``subject`` is when it ends by naming it: the words before "is
    called" ("A python module/file that defines tasks for doit"), else None."""
    for named in _NAMES_IT.finditer(text):
        said = unit_terms(" ".join(named.group(1).split()[:4]))
        if said == subject or (head and said and said <= subject):
            return text[: named.start()].strip()
    return None


def entry_leads(
    question: Question, candidates: Sequence[Candidate], passages: Sequence[Chunk]
) -> dict[int, float]:
    """For "what does X do" with X a name: the first sentence of the entry whose own heading
    names X ("Takes a function following the common error-first callback style ..." under
    ``util.promisify(original)``, past its parameter list), by unit id. It weighs more than
    a unit opening with X: the entry's sentences after it name X too ("If there is an
    ``original[util.promisify.custom]`` property present, ...")."""
    found: dict[int, float] = {}
    for source, passage in enumerate(passages):
        heading = passage.heading.rsplit(">", 1)[-1].strip()
        # the entry itself: its heading opens with the name ("(5) SQLITE_BUSY", "Static
        # method: Buffer.alloc(size)"), not a section that mentions it ("Register A Callback
        # To Handle SQLITE_BUSY Errors"), and the passage starts it (not a later part)
        bare = re.sub(r"^(?:\(\d+\)|[\d.]+|[A-Z][\w ]{0,30}:)\s*", "", heading).strip("` ")
        first_line = passage.text.lstrip().split("\n", 1)[0].lstrip("#= ")
        if bare_heading(first_line).replace("`", "") != bare_heading(heading).replace("`", ""):
            continue
        if not any(_opens_with_name(bare, asked) for asked in question.identifiers):
            continue
        sentences = [c for c in candidates if c.source == source and c.kind == "sentence"]
        if sentences:
            found[id(min(sentences, key=lambda c: c.position))] = _ENTRY_LEAD
    return found


def _opens_with_name(text: str, name: str) -> bool:
    """True when ``text`` opens with ``name`` whole: ``SQLITE_BUSY`` opens "SQLITE_BUSY", not
    "SQLITE_BUSY_SNAPSHOT"; ``util.promisify`` opens "util.promisify(original)", not
    "util.promisify.custom"."""
    return re.match(rf"{re.escape(name)}(?![\w$]|\.[A-Za-z_$])", text, re.IGNORECASE) is not None


_NEGATED_NAME = re.compile(r"^\W*no[-_]\w", re.IGNORECASE)
"""An option or setting named as the negation of another: ``--no-renames``, ``no_color``."""
_ASKS_TO_NEGATE = re.compile(
    r"\b(?:no|not|never|without|disable|turn\w* off|stop|prevent|avoid|skip|don't|doesn't)\b",
    re.IGNORECASE,
)
"""A question asking for what such an option does: to turn something off, stop or skip it, or
not to do it (wider than a negated statement: "disable" and "skip" negate by their verb)."""


_OTHER_OPTIONS = r"(?:-{1,2}[A-Za-z0-9][\w-]*(?:=\S+)?,\s+)+"
"""The options an entry names before the one asked: ``-a, `` of ``-a, --append``."""


_DOES_WHAT = re.compile(r"^what does (?:an? |the )?(.+?) do\s*\??$", re.IGNORECASE)


def opens_with_identifier(text: str, question: Question) -> bool:
    """True when ``text`` opens with one of the question's identifiers whole; for "what does X
    do", with X after an article or not ("The send() method writes a string to the child
    application", "A lexer splits the source into tokens")."""
    opening = text.lstrip("`*_ ")
    names = list(question.identifiers)
    does = _DOES_WHAT.match(question.asking or question.text)
    if does:
        opening = re.sub(r"^(?:the|an?)\s+", "", opening, flags=re.IGNORECASE).lstrip("`*_ ")
        names.append(does.group(1))
    return any(
        opening[: len(name)].lower() == name.lower()
        and not re.match(r"[\w$]", opening[len(name) : len(name) + 1])
        and not _QUALIFIED.match(opening[len(name) :])  # "The lexer for Bash ..." is another's
        for name in names
    )


_QUALIFIED = re.compile(r"\s+(?:for|of|in|on|at|from|with|to|that|which|and|or)\b", re.IGNORECASE)
"""What makes the name after an article one of a kind ("the lexer for Bash"), not the kind."""


def opens_with_asked(unit: Candidate, question: Question, idf: Callable[[str], float]) -> float:
    """How far ``unit`` opens with what the question asks about: 1 for one of its
    identifiers (``-f, --force: Reset ...``), else for a list item "term: definition" the share
    of the question's words its short term holds, by idf and doubled (at most 1): ``--copy``
    holds a common word of "copy a file with its metadata", not what sets it apart. A
    sentence opening "Stronger Together: A Blueprint ..." is a title, not an entry."""
    if question.kind in ("yesno", "choice", "comparison"):
        return 0.0
    text = unit.text
    opening = text.lstrip("`*_ ")
    if opens_with_identifier(text, question):
        return 1.0
    for name in question.identifiers:
        # an option among the others of its entry: ``-a, --append   Append coverage data ...``
        if name.startswith("-") and re.match(
            rf"{_OTHER_OPTIONS}{re.escape(name)}(?![\w$-])", opening
        ):
            return 1.0
    entry = ENTRY.match(text)
    if (
        entry is None
        or (unit.kind != "item" and not entry.group(1).startswith("-"))
        or question.identifiers
        or len(entry.group(1).split()) > 6
    ):
        return 0.0
    if _NEGATED_NAME.match(entry.group(1)) and not _ASKS_TO_NEGATE.search(question.text):
        return 0.0  # "no-renames: Turn off rename detection" is no entry for renaming
    held = unit_terms(entry.group(1)) & set(question.terms)
    weight = sum(map(idf, question.terms)) or 1.0
    return min(1.0, 2 * sum(map(idf, held)) / weight)


def heading_lead(question: Question, passage: Chunk, query: Sequence[str]) -> float:
    """How well the passage's title and heading name what is asked: the share of the
    question's terms they hold, and a lead when they name one of its identifiers."""
    heading = f"{passage.title} {passage.heading}"
    terms = unit_terms(heading)
    share = len([t for t in query if t in terms]) / max(1, len(query))
    # the entry the passage belongs to: its own heading's name, or, for a part of an entry
    # ("fs.watch(filename[, options]) > Caveats"), the name of the entry it is part of
    parts = passage.heading.split(">")
    entry = next((p for p in reversed(parts) if identifiers(p)), parts[-1])
    named = any(mentions(entry, n) for n in question.identifiers) or spells_question(
        parts[-1], query
    )
    return 0.3 * share + (NAMED_HEADING if named else 0.0)


def names_what_is_asked(question: Question, passage: Chunk) -> bool:
    """False for a passage that names none of the question's identifiers when it names some:
    ``os.constants`` says nothing of ``os.EOL``."""
    where = f"{passage.heading}\n{passage.text}"
    return not question.identifiers or any(mentions(where, n) for n in question.identifiers)


def led_code(best: Candidate, own: Sequence[Candidate]) -> list[Candidate]:
    """The code ``best`` says what of ("This will run tests which ..." after the command), or
    the sentence right after it that says how, ending in a colon, and the code it leads:
    "Before you start scraping, you will have to set up a new Scrapy project." is followed by
    "Enter a directory ... and run:" and ``scrapy startproject tutorial``."""
    if best.kind != "sentence" or best.text.endswith(":"):
        return []
    at = {c.position: c for c in own}
    shown = at.get(best.position - 1)
    if (
        refers_back(best.text)
        and shown is not None
        and (shown.kind == "code" or is_command_line(shown.text))
    ):
        return [shown]  # ``pytest -k "MyClass and not method"`` then "This will run tests ..."
    lead, code = at.get(best.position + 1), at.get(best.position + 2)
    if lead is None or code is None or code.kind != "code" or not lead.text.endswith(":"):
        return []
    return [lead, code] if PROCEDURAL.search(lead.text) else []


def completes(c: Candidate, chosen: Sequence[Candidate]) -> bool:
    """True for a list item next to a chosen one of its passage: the values of ``os.EOL``
    are two items, and one alone misleads."""
    return c.kind == "item" and any(
        o.source == c.source
        and o.kind in ("item", "sentence")
        and abs(o.position - c.position) == 1
        for o in chosen
    )


def term_overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """The share of the smaller of two units' terms that the other holds too."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def about_subject(passages: Sequence[Chunk], subject: frozenset[str]) -> list[bool]:
    """Which ``passages`` name what a "what is X" asks (all, when it asks no X): for "What is a
    Trait in factory_boy?", the page titled factory_boy that never names a Trait is not the
    page of what is asked, nor its heading a match."""
    return [not subject or bool(subject & unit_terms(p.text)) for p in passages]
