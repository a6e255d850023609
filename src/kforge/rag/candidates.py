"""The candidate units of an extractive answer: each usable unit of the passages, with its
terms, the name of the API entry it continues, and where it stands."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from kforge.rag.commands import is_step, runs_example
from kforge.rag.kinds import holds_kind
from kforge.rag.names import documents_name, signature_name
from kforge.rag.quantities import asks_release, gives_default, names_release
from kforge.rag.question import (
    CAPITALS,
    DATE,
    ENTRY,
    PROCEDURAL,
    PURPOSE_FIRST,
    Question,
    asked_code_noun,
    asked_noun,
    identifiers,
    mentions,
    read_question,
    unit_terms,
)
from kforge.rag.types import Chunk
from kforge.rag.units import Unit, normalized, passage_units, points_elsewhere, reads_as_code

__all__ = [
    "NAME_PREFIX",
    "Candidate",
    "bare_heading",
    "candidate_sentences",
    "entry_names",
    "find_candidates",
    "gives_name",
    "usable",
]

_ENTRY_HEAD = re.compile(r"^(?:class |def )?[\w.]+\([^)]*\):\s+")
"""An API entry's signature before what it says (``class factory.Trait(**kwargs): ...``)."""
_VERSION_NOTE = re.compile(
    r"^(?:New|Changed|Deprecated|Removed|Added) (?:in|since)(?: version)? v?\d+(?:\.\d+)*[.:]?"
    r"\s*(?:Will be removed in [\w ]*\d+(?:\.\d+)*\.?)?$",
    re.I,
)
"""A documentation generator's version note standing alone ("New in version 0.8.",
"Deprecated since version 2.2: Will be removed in Flask 2.3.")."""
_ENTRY_NOTE = re.compile(
    r"^(?:New|Changed|Deprecated|Removed|Added) (?:in|since)(?: version)? v?\d"
)
"""A version note, which an API entry ends with: it belongs to the entry above it."""
_MIN_WORDS = 4
_MIN_ITEM_WORDS = 2
_MAX_WORDS = 60
_MAX_ANSWERING_WORDS = 90
_FILE_TREE = re.compile("[\u251c\u2514]\u2500\u2500")
"""A listing of files drawn as a tree ("data ├── genome.fa ├── ...")."""
NAME_PREFIX = "\x00"
"""Marks an identifier of the question among the terms, apart from any word."""


@dataclass(slots=True)
class Candidate:
    text: str
    source: int
    position: int
    """Unit number within its passage (0 = lead unit)."""
    kind: str
    terms: frozenset[str]
    entry: str = ""
    """The name an API entry opening this unit's paragraph documents (``os.path.lexists`` for
    "Returns True for broken symbolic links." after "os.path.lexists(path): Return True ..."),
    when the unit continues that entry."""
    answers: bool = False
    """The unit comes right after a question the page asks ("Why would you want to build URLs
    using url_for() ...?"): it answers that question, and holds its terms."""
    answers_alike: bool = False
    """The question the unit answers asks what the user's question asks (both "why ...")."""


def entry_names(text: str, units: Sequence[Unit]) -> list[str]:
    """For each unit of ``text``, the code name of the entry it continues, or "": a paragraph
    opening "name(args): ..." documents ``name``, and so do its further sentences."""
    out: list[str] = []
    cursor, current = 0, ""
    for unit in units:
        words = unit.text.split()[:3]
        found = (
            re.compile(r"\s+".join(map(re.escape, words))).search(text, cursor) if words else None
        )
        if found is None:  # not located: no claim about its entry
            out.append("")
            continue
        if _ENTRY_NOTE.match(unit.text):
            out.append(current)  # "Changed in version 3.5: ..." is said of the entry above it
        elif cursor == 0 or "\n" in text[cursor : found.start()]:  # a new paragraph
            entry = ENTRY.match(unit.text)
            names = identifiers(entry.group(1)) if entry else []
            current = names[0] if names else signature_name(entry.group(1)) if entry else ""
            out.append("")
        else:
            out.append(current)
        cursor = found.end()
    return out


def _names_asked(unit: Unit, entry: str, context: str, question: Question) -> list[str]:
    """The question's identifiers ``unit`` names: those it holds, and a dotted one whose
    entry it opens or continues under a heading naming its class (``setdefault(key[,
    default]): ...`` under "Mapping Types — dict" for ``dict.setdefault``), but none that
    an entry of the same method on another class only refers to ("Morsel.setdefault(...):
    ... behave the same as dict.setdefault()")."""
    opening = ENTRY.match(unit.text)
    own = entry
    if not own and opening:
        names = identifiers(opening.group(1))
        own = names[0] if names else signature_name(opening.group(1))
    found = []
    for name in question.identifiers:
        verdict = documents_name(own, context, name)
        if verdict or (verdict is None and mentions(unit.text, name)):
            found.append(name)
    return found


def usable(unit: Unit, question: Question | None, *, answering: bool = False) -> bool:
    """Whether ``unit`` may stand in an answer to ``question``; ``answering`` for one that
    answers a question its page asks (or follows the one that does), which may run longer (an
    FAQ's "There is no strict rule ..., but settings are more suited for ..., while spider
    arguments ...")."""
    if unit.kind in ("code", "signature"):
        if question is not None and question.kind == "where" and unit.kind == "code":
            return _a_path(unit.text)  # "it's:" then "/usr/local/share/locale"
        return question is not None and question.kind == "procedure"
    if points_elsewhere(unit):
        return False
    if _FILE_TREE.search(unit.text) and (question is None or question.kind != "where"):
        return False  # "data ├── genome.fa ├── ...": what a folder holds, for "where" only
    words = len(unit.text.split())
    if question is not None and question.kind == "quantity" and gives_default(unit.text):
        return words <= _MAX_WORDS  # short, but it gives the value asked for
    if question is not None and question.kind == "when" and DATE.search(unit.text):
        return words <= _MAX_WORDS  # "Released 2022-07-17" under "Version 1.5"
    if unit.kind == "sentence":
        # one introducing a list ("... as a result of either:") answers only with its items
        colon_ok = question is not None or not unit.text.endswith(":")
        longest = _MAX_ANSWERING_WORDS if answering else _MAX_WORDS
        # and may be short: an FAQ's "It's impossible." after its "How do I enable ... globally?"
        shortest = _MIN_ITEM_WORDS if answering else _MIN_WORDS
        return shortest <= words <= longest and colon_ok
    return _MIN_ITEM_WORDS <= words <= _MAX_WORDS


def candidate_sentences(chunk: Chunk) -> list[str]:
    """The units of ``chunk`` that could stand in an answer, quoted exactly, in order (code
    blocks and signatures, usable only for "how do I" questions, left out)."""
    return [u.text for u in passage_units(chunk.text) if usable(u, None)]


def find_candidates(
    question: Question, passages: Sequence[Chunk], exclude: Collection[str]
) -> list[Candidate]:
    said = {normalized(s) for s in exclude}
    release = asks_release(question.text, asked_noun(question.asking or question.text))
    out = []
    for index, chunk in enumerate(passages):
        headings = {bare_heading(h) for h in (chunk.title, *chunk.heading.split(">"))}
        context = f"{chunk.title}\n{chunk.heading}"
        units = passage_units(chunk.text)
        entries = entry_names(chunk.text, units)
        asked_here = _page_questions(units, question)
        for n, (unit, entry) in enumerate(zip(units, entries, strict=True)):
            if not usable(unit, question, answering=bool({n, n - 1} & asked_here.keys())):
                continue
            if normalized(unit.text) in said:
                continue
            before, after = (
                units[n - 1] if n else None,
                units[n + 1] if n + 1 < len(units) else None,
            )
            text = unit.text
            if after is not None and _gives_form(unit, after, question):
                # "The personal dictionary generally has a filename of the form:" and the name
                # it leads, ".aspell.lang.pws": one stretch of the passage, quoted whole
                text = f"{unit.text} {after.text}"
            elif (
                unit.text.endswith(":")
                and not _introduces(unit, after, question)
                and not _FOR_EXAMPLE.search(unit.text)
                and not (question.kind == "procedure" and _names_code(unit, after, question))
                # "By default Nox stores virtualenvs in ./.nox, however, you can change this
                # using --envdir:" says where itself
                and not (question.kind == "where" and holds_kind(unit.text, question))
                # "The default precision is 12 significant figures, it can be changed with -p
                # ...:" gives the value asked
                and not (
                    question.kind == "quantity"
                    and _DEFAULT.search(unit.text)
                    and holds_kind(unit.text, question)
                )
                # "You can also use the NOXSESSION environment variable:" for "which ...
                # environment variable ...?": the name asked
                and not gives_name(unit.text, question)
                # "As of Peewee 3.9.7, the isolation level can be specified as ...:" for "from
                # which version ...?"
                and not (release and names_release(unit.text, question.text))
            ):
                continue  # it introduces what is not here, or code: it says nothing alone
            if unit.kind == "code" and before is not None and _SHOWS_OUTPUT.search(before.text):
                continue  # "... will render:" then what the way gives, not the way
            if unit.kind == "code" and _takes_no_step(unit.text, question):
                continue  # ``import logging`` alone: what an example needs, not what it does
            if unit.kind == "sentence" and bare_heading(unit.text) in headings:
                continue  # a heading extracted from HTML as a line of its own
            if unit.kind == "sentence" and unit.text.endswith("?"):
                continue  # a question the page asks is no answer; the units after it are
            if question.kind != "when" and _VERSION_NOTE.match(_ENTRY_HEAD.sub("", unit.text)):
                continue  # "New in version 0.8.", after an entry's name too: when it came
            names = {NAME_PREFIX + n for n in _names_asked(unit, entry, context, question)}
            terms = unit_terms(text) | names
            if unit.kind == "code" and before is not None and _captions(before.text):
                terms |= unit_terms(before.text)  # "Undo a commit and redo" says what it does
            if _SOLVES.match(unit.text):
                # "To solve this, Click ... accepts the string -- as a separator": what it
                # solves is said in the sentences before it
                for earlier in units[max(0, n - 2) : n]:
                    terms |= unit_terms(earlier.text)
            if before is not None and gives_default(unit.text):
                terms |= unit_terms(before.text)  # "Defaults to 4093." after what it is of
                if after is not None and bare_heading(before.text) in headings:
                    # a settings entry: its name, "Default: 2", then what it is ("Maximum
                    # number of times to retry ...")
                    terms |= unit_terms(after.text)
            answers = n in asked_here
            alike = False
            if answers:
                terms |= asked_here[n][0]
                alike = asked_here[n][1]
            elif does_what_is_asked(unit.text, question):
                answers = alike = True  # "To apply more than one filter, separate ...:"
            out.append(
                Candidate(text, index, unit.position, unit.kind, terms, entry, answers, alike)
            )
    return out


_DEFAULT = re.compile(r"\bdefault\b", re.IGNORECASE)
_POINTS_BACK = re.compile(r"\b(?:this|that|these|those|it|them)\b", re.IGNORECASE)
_LINKING = re.compile(r"^(?:so|and|but|then|now|well|ok(?:ay)?),?\s+", re.IGNORECASE)
"""A word linking a page's question to the text before it ("So why would you ...?")."""
_BARE_REPLY = re.compile(r"^(?:yes|no|not really|sure|indeed)[.!]?$", re.IGNORECASE)
"""A reply too short to quote: the sentence after it says what it means."""
_ANSWERING = 2
"""Units after a question a page asks that answer it ("So why would you want to do this?"
then "Testing." and "You can have instances ... to test every case.")."""


def _page_questions(
    units: Sequence[Unit], question: Question
) -> dict[int, tuple[frozenset[str], bool]]:
    """For each unit answering a question its page asks, the terms of that question and
    whether it asks what ``question`` asks (both "why ..."). The unit right after a page's
    question answers it; so do the first ``_ANSWERING`` usable units after one asked alike,
    which also holds the terms of the sentence before it when it points back ("So why would
    you want to do this?")."""
    out: dict[int, tuple[frozenset[str], bool]] = {}
    asked: tuple[frozenset[str], bool] | None = None
    said = 0
    for n, unit in enumerate(units):
        if unit.kind == "sentence" and unit.text.endswith("?"):
            terms = unit_terms(unit.text)
            asks = read_question(_LINKING.sub("", unit.text)).kind
            # of a kind that says what is asked ("why", "how do I"): not any question at all
            alike = asks == question.kind and asks not in ("thing", "yesno")
            if alike and n and _POINTS_BACK.search(unit.text):
                terms |= unit_terms(units[n - 1].text)
            asked = (terms, alike)
            said = 0
            if n + 1 < len(units):
                out[n + 1] = asked
                if _BARE_REPLY.match(units[n + 1].text) and n + 2 < len(units):
                    out[n + 2] = asked  # "Yes." then "You can use the runspider command."
        elif asked is not None and asked[1] and usable(unit, question):
            out[n] = asked
            said += 1
            if said >= _ANSWERING:
                asked = None
    return out


_FORM_CHARS = 60
"""The longest one line of code a sentence may lead as its own words (a name, a format)."""
_NAMES_FORM = re.compile(
    r"\b(?:of the form|has the format|in the format|(?:is |are )?(?:named|called)|looks like)\s*:$"
)
"""A sentence ending by saying that what follows is the name or form of what it speaks of."""


def _gives_form(unit: Unit, after: Unit, question: Question) -> bool:
    """True when ``unit``, a sentence ending by saying a form or name follows, leads one short
    line of code that completes it for a question other than "how do I" ("... has a filename
    of the form:" then ``.aspell.lang.pws``): the two say it together; for "how do I", the
    code is the way and leads the answer itself."""
    return (
        unit.kind == "sentence"
        and _NAMES_FORM.search(unit.text) is not None
        and after.kind == "code"
        and "\n" not in after.text
        and len(after.text) <= _FORM_CHARS
        and question.kind != "procedure"
    )


def _introduces(unit: Unit, after: Unit | None, question: Question) -> bool:
    """True when ``unit``, a sentence ending in a colon, can lead what follows it in an
    answer: the items it introduces, or for "how do I" the code it says how to use ("you can
    limit that by setting the MAX_CONTENT_LENGTH config key:")."""
    if after is None:
        return False
    if runs_on(after):
        return True
    if after.kind == "item":  # items, not lines of code a page wrote as a list
        return question.kind == "procedure" or not reads_as_code(after.text)
    if after.kind == "code" and question.kind == "where":
        return _a_path(after.text)
    # code a page's extractor ran into a line ("async with aiohttp.ClientSession(trust_env=True)
    # as session: ...") is code all the same
    return (
        (after.kind == "code" or reads_as_code(after.text))
        and question.kind == "procedure"
        and PROCEDURAL.search(unit.text) is not None
    )


_KEYWORD_ARGUMENT = re.compile(r"\b[a-z_][a-z0-9_]*=(?:True|False|None|[0-9]|[\"'])")


def _takes_no_step(code: str, question: Question) -> bool:
    """True for code whose every line takes no step (imports, comments) when the question
    does not ask how to import."""
    lines = [line for line in code.splitlines() if line.strip()]
    return not any(map(is_step, lines)) and "import" not in question.terms


def _names_code(unit: Unit, after: Unit | None, question: Question) -> bool:
    """True when a sentence ending in a colon names the code to use ("... case-insensitive with
    the case_sensitive parameter:", "... ask for the missing value with prompt=True:") and the
    code it leads is not in the passage (a build that left out its examples), at most a session
    running the example: it says how all the same. Not an option: "If you run nox --list
    --sessions lint you'll see ...:" leads what it prints."""
    if unit.kind != "sentence":
        return False
    if after is not None and after.kind in ("code", "item"):  # the code it leads is here
        return after.kind == "code" and runs_example(after.text, question) and _named(unit)
    return _named(unit) or PURPOSE_FIRST.match(unit.text) is not None  # "To apply ..., ...:"


def _named(unit: Unit) -> bool:
    named = [n for n in identifiers(unit.text) if not n.startswith("-")]
    return bool(named) or _KEYWORD_ARGUMENT.search(unit.text) is not None


def gives_name(text: str, question: Question) -> bool:
    """For "which environment variable / option / ... ?": True when ``text`` names, beside the
    kind of name asked, a name the question does not."""
    kind = asked_code_noun(question.text)
    if not kind:
        return False
    found = identifiers(text) + (CAPITALS.findall(text) if kind == "environment variable" else [])
    said = re.search(rf"\b{kind}s?\b", text, re.IGNORECASE) is not None  # not "optional"
    return said and any(not mentions(question.text, n) for n in found)


def does_what_is_asked(text: str, question: Question) -> bool:
    """For "how do I ...?": True when ``text`` opens with doing what is asked and goes on to say
    how ("To use dogpile.cache, the cache_impl argument must be set"): the page's own answer."""
    purpose = PURPOSE_FIRST.match(text)
    if question.kind != "procedure" or purpose is None or not question.terms:
        return False
    return set(question.terms) <= unit_terms(purpose.group(1))


_SHOWS_OUTPUT = re.compile(
    r"\b(?:will|would|should) (?:render|result in|print|output|display|look like|become)"
    r"(?: something)?(?: like| as follows)?(?: this)?\s*:$"
    r"|\b(?:renders|results in|prints|outputs|produces|gives|becomes|following output"
    r"|you(?:'|\u2019)ll see|you (?:will|should) see|the (?:output|result) (?:is|will be))"
    r"(?: something)?(?: like| as follows)?"
    r"(?: this)?\s*:$",
    re.IGNORECASE,
)
"""The end of a sentence leading what an example gives ("will render:", "would generate the
following output:", "Results in:"): output, not how to do anything."""

_FOR_EXAMPLE = re.compile(r", (?:for (?:example|instance)|e\.g\.)\s*:$", re.I)
"""The end of a sentence that says its piece before an example ("Configuration files must start
with the label "[behave]" and are formatted in the Windows INI style, for example:"); one doing
so "like this:" says what the example shows ("by putting them into a pytest.ini file like
this:")."""

_PLAIN_WORD = re.compile(r"\(?(?:[a-z][a-z'-]*|[A-Z][a-z]+)\)?[,.;]?")


def runs_on(unit: Unit | Candidate) -> bool:
    """True for the items of a list read as one sentence after the sentence that introduces
    them, as a page's HTML lists them one a line without bullets ("the current working
    directory (good for per-project settings), your home directory ($HOME), or on Windows,
    ..."; "code 0 if nothing would change; code 1 if ..."): prose in lower case with its items
    between commas (a sentence then) or semicolons, not code run into a line."""
    words = unit.text.split()
    plain = sum(1 for w in words if _PLAIN_WORD.fullmatch(w))
    separated = (unit.text.endswith(".") and ", " in unit.text) or "; " in unit.text
    return (
        unit.kind == "sentence"
        and unit.text[:1].islower()
        and separated
        and len(words) >= 6
        and plain * 10 >= len(words) * 7
    )


def _a_path(text: str) -> bool:
    """True for a code block that is one path ("/usr/local/share/locale")."""
    return re.fullmatch(r"\s*[~.]?/?[\w.@-]+(?:/[\w.@-]+)+/?\s*", text) is not None


_SOLVES = re.compile(
    r"(?:to (?:solve|fix|avoid|prevent|work around|get around|address|overcome|handle) "
    r"(?:this|that|it|these|those|the (?:problem|issue|case))\b"
    r"|the (?:solution|fix|workaround|remedy|answer) (?:is|here is|to (?:this|that))\b"
    r"|(?:this|that|it) (?:can|could|may) be (?:solved|fixed|avoided|worked around)\b)",
    re.IGNORECASE,
)
"""A sentence answering the problem the sentences before it state."""


def _captions(text: str) -> bool:
    """True for a line that says what the code after it does: one introducing it ("run the
    following command:", "... as follows.") or a short title ("Undo a commit and redo")."""
    if text.endswith(":") or re.search(r"\b(?:the following|as follows|below)\b", text, re.I):
        return True
    return len(text.split()) <= 8 and not text.endswith((".", "!", "?"))


def bare_heading(text: str) -> str:
    """A heading without its pilcrow or section number, for comparing."""
    return normalized(text.strip().rstrip("\u00b6").strip()).lower()
