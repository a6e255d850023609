"""The short answer line an answer opens with, drawn by rule from its supporting sentences.

The line quotes a stretch of one supporting sentence: the number with its unit for "how many",
the command or code for "how do I", the date for "when", the name for "who", "where" and
"which", one of the two named items for "which of X or Y", the defining clause for "what is".
For a yes/no question it is "Yes." or "No." (kforge's words) and then the deciding phrase,
quoted. Nothing is reworded, so the line is as exact as the sentences under it.

A why question, a question of how something happens or how two things differ, and a yes/no
question that no supporting sentence decides get no line: their answer is a whole sentence,
and a clause cut from one reads as an answer it is not ("In callback functions", "because in
many languages", "rather than deleting the journal file"). The answer then opens with its
best sentence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from kforge.rag.compose import Segment
from kforge.rag.defining import concept_at, defined_subject, defines_subject, spelled_beside
from kforge.rag.hops import mentions_title
from kforge.rag.identifier_line import asked_code_noun, identifier_line
from kforge.rag.kinds import holds_kind
from kforge.rag.named_answer import answering_span, best_name
from kforge.rag.names import is_entry_of, kind_names
from kforge.rag.procedure_line import CODE_NAME, procedure_line
from kforge.rag.quantities import (
    asks_release,
)
from kforge.rag.quantity_line import NUMBERED_NOUNS, numbered_line, quantity_line
from kforge.rag.question import (
    ENTRY,
    Question,
    asked_noun,
    identifiers,
    mentions,
    read_question,
    unit_terms,
)
from kforge.rag.short_quote import (
    EXCEPTION_NOUNS,
    MAX_WORDS,
    ShortAnswer,
    clause_at,
    exception_named,
    listed,
    mention,
    verb_object,
    word_set,
)
from kforge.rag.types import Chunk
from kforge.rag.unit_scores import naming_clause
from kforge.rag.yes_no import CONDITION, yes_no

__all__ = ["ShortAnswer", "short_answer"]


_COPULA = re.compile(
    r"\b(?:is|are|was|were|refers to|means|denotes|represents|is called|are called|"
    r"contains|returns|holds|stands for|indicates|signals|describes)\s+(.+)",
    re.IGNORECASE,
)
_DOES = re.compile(
    r"^(?:Returns|Contains|Creates|Gets|Sets|Removes|Reads|Writes|Converts|Computes|Encodes|"
    r"Decodes|Allocates|Registers|Adds|Changes|Checks|Tests|Resolves|Joins|Takes|Generates|"
    r"Starts|Stops|Opens|Closes|Sends|Emits|Makes|Runs|Calls|Waits|Schedules|Provides)\b"
)
_DETAIL = re.compile(
    r"\s(?=(?:owned|located|based|founded|published|released|developed|built|written|"
    r"directed|produced|created|designed|operated|managed|headquartered|situated)\b)"
)
_DANGLING = word_set(
    "another the a an of to with than except and or but for from by as that which its their "
    "his her is are was were be"
)
"""Words a line cannot end with: the clause goes on after them."""
_POINTERS = word_set(
    "this that these those it they them here there if before after when while since once "
    "although though unless because however then also otherwise instead so thus hence such "
    "some any each every all both either neither none only"
)
"""Words that alone point elsewhere or join clauses: a line of one of them ("This", "It",
"Before") names nothing, whatever rule cut it."""


def short_answer(
    question: str, segments: Sequence[Segment], passages: Sequence[Chunk] = ()
) -> ShortAnswer | None:
    """The short answer to ``question`` drawn from ``segments`` (the supporting sentences, best
    first), or None when there are none. ``passages`` (the segments' sources) let a yes/no
    question about two named items compare what each item's passage says."""
    found = _short_answer(question, segments, passages)
    if found is None or read_question(question).kind == "choice":  # one of two items
        return found
    texts = [s.text for s in sorted(segments, key=lambda s: s.rank)]
    return listed(found, asked_noun(question), texts)  # "which versions": all the list names


def _short_answer(
    question: str, segments: Sequence[Segment], passages: Sequence[Chunk]
) -> ShortAnswer | None:
    units = sorted((s for s in segments if s.text.strip()), key=lambda s: s.rank)
    if not units:
        return None
    asked = read_question(question)
    kind = asked.kind
    found: ShortAnswer | None = None
    named = {i for i, p in enumerate(passages) if p.title and mentions_title(question, p.title)}
    titles = frozenset().union(*(unit_terms(passages[i].title) for i in named))
    if kind == "choice" and re.match(r"(?i)(?:are|were|is|was)\s+both\b", question):
        kind = "yesno"  # "Are both X or Y a genus of orchids?" asks yes or no of both
    if kind == "yesno":
        return _telling(yes_no(asked, units, passages), asked)
    if kind in ("reason", "comparison") or (kind == "thing" and _HOW.match(asked.asking)):
        # the best sentence answers, whole (see the module doc); "how does ReAct work?" too,
        # which asks how something happens, not for a name ("Synergizing Reasoning and ..."),
        # and "what happens when ...?", which asks what follows ("Once a bounded length deque
        # is full, ... items are discarded from the opposite end"), not "Returns"
        return None
    if asks_release(question, asked_noun(question)):
        # "which Python versions ...", "since which version ...": a version number, or nothing
        # (a name, whatever the question's form: "what is the oldest Python ...?"); "which
        # version dropped ...": the release whose notes say so
        found = _release_heading(question, units, passages) or _version(question, units)
        return _telling(found, replace(asked, kind="thing"))
    if kind == "choice":
        found = _choice(asked, units)
    elif kind == "quantity":
        found = quantity_line(asked, units)
    elif kind == "when":
        # the answer is what the question does not name: in a bridge question, the passage
        # the named one leads to
        found = answering_span(
            asked, units, passages, best_name(asked, units, named, dates=True, titles=titles)
        )
    elif kind == "procedure":
        found = procedure_line(asked, units)
    elif kind == "thing" and asked_code_noun(question):
        found = identifier_line(asked, units)  # "which environment variable ...": a name in code
    elif (kind == "thing" or (kind == "definition" and asked.identifiers)) and (
        found := _verb_object(asked, units[:3])
    ):
        # "what does --prune remove?": "remove any remote-tracking references ..."; "what
        # does dict.setdefault return?": "return its value"
        pass
    elif (kind == "where" and (found := _place(units))) or (
        kind == "thing" and (found := _entry_named(question, units[0]))
    ):
        pass  # a folder or a path; the entry naming the thing asked ("Exit code 5")
    elif kind == "thing" and asked_noun(question) in NUMBERED_NOUNS:
        found = numbered_line(asked, units)  # "what exit code ...": a number, not a name
    elif kind in ("who", "where", "thing"):
        found = answering_span(
            asked, units, passages, best_name(asked, units, named, titles=titles)
        )
        if (
            kind == "where"
            and found is not None
            and _WHERE.search(question)
            and not _placed(found.quote, units)
        ):
            found = None  # "where does mypy write its cache?": not "CI", a name it mentions
    elif kind == "definition" and (found := _defines(asked, units)):
        pass
    elif kind == "definition":
        # of the best sentences, an API description saying what it does ("Takes a function
        # ..."), else the best one that defines it
        best = sorted(
            units[:3],
            key=lambda u: (
                # the entry of what is asked
                not is_entry_of(u.text, [*asked.identifiers, *kind_names(question)]),
                not _DOES.match(u.text),
                u.rank,
            ),
        )
        found = _first(best, lambda s: _defining(s, asked))
    if asked_noun(question) in EXCEPTION_NOUNS:  # "what exception does fetch raise?": a name
        raised = exception_named([u.text for u in units[:3]])
        found = ShortAnswer(raised[0], raised[0], units[raised[1]].source) if raised else None
    # no rule found the kind of thing asked: no short line, rather than a sentence's opening
    # clause that would read as the answer ("Uniforum" for "which program compiles …")
    return _telling(found, asked)


_OPTIONS_OPENING = re.compile(
    r"^((?:-{1,2}[A-Za-z][\w-]*(?:=\S+| <[^>]+>| [A-Z][A-Z_]*\b)?(?:, | / )?)+)"
    r"(?:\s+[-\u2013\u2014])?\s+(?=[A-Z])"
)
"""An option's entry as a program's help or a settings page writes it, without a colon: its
options (``-a, --append``, ``--host <str>``, ``--workers INTEGER``), then what it does."""
_OPTION = re.compile(r"-{1,2}[A-Za-z][\w-]*")
"""An option alone: a name, though it spells a word of the question."""
_CALL = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\([^()]*\)")
"""A call on a module or object (``structlog.configure()``), which says what to run though it
spells the question's words (a bare ``crawl()`` only says one of them)."""
_HOW = re.compile(r"how\b|what\s+(?:happens|will\s+happen|would\s+happen)\b", re.IGNORECASE)
"""A question asking how something happens (one of no other kind: not "how many", "how do I"),
or what happens."""
_LOCATIVE = re.compile(
    r"\b(?:in|into|at|under|inside|within|from|to|on|onto|below|above|beside|near|through|"
    r"via|by|of)\s+(?:(?:the|a|an|your|its|their|each|every|this|that|his|her)\s+)?"
    r"(?:[\w.'\u2019-]+\s+){0,2}$",
    re.IGNORECASE,
)
"""A place's preposition, up to two words before the name it introduces ("in the
``~/.cache`` folder", "at Loughborough University", "born in Paris", "Governor of Maine")."""
_WHERE = re.compile(r"\bwhere\b", re.IGNORECASE)
"""A question that asks "where" in that word ("which city ...?" names the kind of place, and
its answer may follow any word: "a link between Edinburgh and London")."""


def _placed(quote: str, units: Sequence[Segment]) -> bool:
    """True when a unit places ``quote`` after a preposition of place: the name answers
    "where" (not a name the sentence merely mentions)."""
    return any(
        (at := unit.text.find(quote)) >= 0 and _LOCATIVE.search(unit.text[:at]) is not None
        for unit in units
    )


def _entry_named(question: str, best: Segment) -> ShortAnswer | None:
    """For "which X ...", the term of the entry that answers when it names an X: "Exit code
    5" of "Exit code 5:: No tests were collected" for "which exit code ...?"."""
    noun = asked_noun(question)
    entry = ENTRY.match(best.text)
    if not noun or entry is None or not unit_terms(noun) <= unit_terms(entry.group(1)):
        return None
    term = entry.group(1).strip()
    return ShortAnswer(term, term, best.source)


def _telling(found: ShortAnswer | None, question: Question) -> ShortAnswer | None:
    """``found`` with emphasis or code marks it opens or closes without their pair dropped
    (``**Reciprocal rank fusion`` cut from ``**Reciprocal rank fusion (RRF)**, ...``), or None
    when a line that should say what, how or why says nothing the question does not (the
    subject of "what is X" alone)."""
    if found is None:
        return None
    quote = found.quote
    for mark in ("**", "`", "*", "_"):
        if quote.count(mark) % 2:
            quote = quote.strip().removeprefix(mark).removesuffix(mark).strip()
    if not quote:
        return None
    # a line of the question's own words tells nothing: "gettext" for "what is gettext?", and
    # one word of it anywhere ("Citations" for "what should a good citation include?"); a
    # name of several of its words may answer ("Loughborough University" for "... Loughborough
    # Students' Union serves the students at what university?"), a choice's is one of its two
    # items, and yes or no is said
    own = unit_terms(quote) <= unit_terms(question.text)
    if question.kind == "procedure" and (
        CODE_NAME.fullmatch(quote) or _OPTION.fullmatch(quote) or _CALL.fullmatch(quote)
    ):
        # ``target_include_directories`` for "how do I add an include directory", ``--reload``
        # for "how do I turn on auto-reloading", ``structlog.configure()`` for "how do I
        # configure structlog"
        own = False
    if asked_code_noun(question.text) and identifiers(quote) == [quote]:
        own = False  # ``--keep`` for "which setting keeps the original data files?"
    says_what = question.kind in ("definition", "procedure", "reason", "comparison")
    one_word = question.kind not in ("choice", "yesno") and len(unit_terms(quote)) == 1
    if own and (says_what or one_word):
        return None
    words = quote.split()
    if len(words) == 1 and words[0].lower().strip(".,;:!?\"'()") in _POINTERS:
        return None  # "This" cut from "This is '/' for POSIX": no answer
    if words[-1].lower().strip(".,;:") in _DANGLING:
        return None  # a clause cut short: "but gettext has another"
    conditional = question.kind == "yesno" and found.answer == found.quote
    if conditional and CONDITION.match(quote) and "," not in quote:
        return None  # "If the AUTOINCREMENT keyword appears ..." decides nothing alone
    if question.kind in ("definition", "reason", "comparison") and len(words) < _FEWEST_WORDS:
        return None  # "gettext" says what nothing is, nor why, nor how two differ
    answer = quote if found.answer == found.quote else found.answer
    return ShortAnswer(answer, quote, found.source)


_IS_A = re.compile(
    r"^(?!-)[^:]{1,60}:\s|\b(?:is|are)\s+(?:an?\s+|the\s+|one\s+)?(?!\w+(?:ly|ed)\b)\w"
)
"""A definition by its form: an entry "X: ..." (not an option's, "--spider=SPIDER: ..."), or "X
is a ...", "Spiders are classes ..." (not "is actually re-loaded")."""
_FEWEST_WORDS = 3
"""The fewest words a line saying what something is, why, or how two differ may have."""


def _first(units: Sequence[Segment], pick: Callable[[str], str]) -> ShortAnswer | None:
    for unit in units:
        quote = pick(unit.text)
        if quote:
            return ShortAnswer(quote, quote, unit.source)
    return None


def _verb_object(question: Question, units: Sequence[Segment]) -> ShortAnswer | None:
    """For "what does X remove?", the clause of the first of ``units`` that opens with that
    verb: "remove any remote-tracking references that no longer exist on the remote"."""
    found = verb_object(question.asking, [u.text for u in units])
    return ShortAnswer(found[0], found[0], units[found[1]].source) if found else None


def _defining(text: str, question: Question) -> str:
    """The defining clause: what follows "X is" (or "term:") when X is what is asked, or an
    API description that opens with what it does ("Returns an array of ...")."""
    if _DOES.match(text):
        return clause_at(text)
    options = _OPTIONS_OPENING.match(text)
    if options and any(mentions(options.group(1), n) for n in question.identifiers):
        return clause_at(text, options.end())  # "--timid Use a simpler but slower trace method"
    entry = re.match(r"^([^:]{1,60}?)::?\s+(\S.*)$", text)
    if entry and unit_terms(entry.group(1)) & set(question.terms):
        return clause_at(text, entry.start(2))
    copula = _COPULA.search(text)
    # the copula's own clause names what is asked: not "typical values are between 0.9 and
    # 2.0" after "The parameter k1 controls ...;"
    subject = text[: copula.start()].rsplit("; ", 1)[-1] if copula else ""
    if copula and len(unit_terms(subject) & set(question.terms)) > 0:
        clause = clause_at(text, copula.start(1))
        # "a shopping mall owned by ...": what it is, without who owns it
        return _DETAIL.split(clause, maxsplit=1)[0] if len(clause.split()) > 4 else clause
    return ""


def _defines(question: Question, units: Sequence[Segment]) -> ShortAnswer | None:
    """For "what is X": the opening clause, subject and all, of the best sentence that opens
    with X ("A fast-forward is a special type of merge"); of an entry "X: ...", what follows
    its term. A line that reads as a definition, not a fragment without its subject."""
    subject = defined_subject(question)
    weight = {id(u): defines_subject(u.text, subject) for u in units} if subject else {}
    # or ends by naming it: "A python module/file that defines tasks for doit is called dodo
    # file": what comes before "is called"
    named = {id(u): naming_clause(u.text, subject) for u in units} if subject else {}
    only_named = {key for key, clause in named.items() if clause and not weight[key]}
    weight.update(dict.fromkeys(only_named, 1.0))
    opening = [u for u in units if weight.get(id(u))]
    # one that says what X is ("Deques are ...") before one that says something of it
    # (an acronym's own words first: "CLDR: Upgrade to CLDR 30.1" is a release's entry)
    spelled = {id(u): spelled_beside(u.text, subject) for u in opening}
    # an entry of X or "X is a ..." before one naming X ("... unicode text known as code
    # points" after "code point: A number that maps to a particular abstract character"), and
    # that before one saying something else X is ("The dodo file is actually re-loaded")
    opening.sort(
        key=lambda u: (
            not spelled[id(u)],
            -weight[id(u)],
            1 if id(u) in only_named else 0 if _IS_A.search(u.text) else 2,
            not holds_kind(u.text, question),
        )
    )
    for unit in opening:
        # (what is named so only when it reads as a line: a short one)
        clause = named.get(id(unit)) or ""
        phrase = spelled[id(unit)] or (clause if len(clause.split()) <= MAX_WORDS else "")
        # "What is CLDR?": "Common Locale Data Repository"; but "Behavior-driven development
        # (or BDD) is an agile ... technique ..." says what it is as well
        says = phrase and re.match(
            rf"(?:the |an? )?{re.escape(phrase)} \([^()]*\) (?=(?:is|are)\b)", unit.text, re.I
        )
        if says:  # the phrase, its acronym, and the clause saying what it is
            quote = unit.text[: says.end()] + clause_at(unit.text, says.end())
            return ShortAnswer(quote, quote, unit.source)
        if phrase and len(phrase.split()) >= _FEWEST_WORDS:
            return ShortAnswer(phrase, phrase, unit.source)
        # a word alone is no line ("internationalization"): the clause saying it is, as for
        # any definition ("I18N is an abbreviation for internationalization")
        entry = re.match(r"^[^:]{1,60}?:{1,2}\s+(?=\S)", unit.text)
        concept = concept_at(unit.text, subject)  # "the concept of contexts which provides ..."
        quote = clause_at(unit.text, entry.end() if entry else concept or 0)
        if quote:
            return ShortAnswer(quote, quote, unit.source)
    return None


_FOLDER = re.compile(
    r"\b(?:in|under|inside|into|from|within)\s+(?:the\s+|a\s+|an\s+|your\s+|its\s+)?"
    r"(?!(?:the|a|an|your|its)\s)[^\s.,;:!?]+(?:\s+[^\s.,;:!?]+){0,3}?\s+"
    r"(?:folder|directory|subdirectory|subfolder)\b"
    r"|\b(?:in|under|inside|into|from|within)\s+(?:the\s+|a\s+)?(?P<path>(?=\S*/)[\w.~/-]+\w/?)"
)
"""A place in a project or on disk: "in the templates folder", or a path after its
preposition ("in refs/stash")."""


_VERSION = re.compile(
    r"(?:(?:[A-Z][\w.+-]*|version|release)\s+)?(?:>=\s*|v)?\d+\.\d+(?:\.\d+)*\+?"
    r"(?:\s+(?:and|or)\s+(?:newer|later|above|higher))?"
)
"""A version as a sentence writes it: "Python >=3.7", "version 3.37.0", "3.7 and newer"."""


_OWN_RELEASE = re.compile(r"(?i)^(?:in |since )?(?:which|what) (?:version|release)s?\b(?! of\b)")
_RELEASE_HEADING = re.compile(r"(?i)^(?:version|release|v)?\s*(\d+(?:\.\d+)+)\b")


def _release_heading(
    question: str, units: Sequence[Segment], passages: Sequence[Chunk]
) -> ShortAnswer | None:
    """For "which version dropped X?": the release the best unit's section is the notes of
    (its heading "Version 0.2.0", above "Support for Python 2 has been dropped."), when the
    unit names no version itself and the passage holds its heading; not for "which version of
    Python ...", another product's."""
    best = units[0]
    if not _OWN_RELEASE.match(question) or best.source >= len(passages):
        return None
    passage = passages[best.source]
    heading = passage.heading.rsplit(">", 1)[-1].strip()
    release = _RELEASE_HEADING.match(heading)
    # a release of its own the unit names ("Added in 2.3"), not another product's ("Only
    # Python 3.6 and above are supported")
    own = any(
        not (before and before[-1][:1].isupper() and before[-1] not in ("Version", "Release"))
        for m in re.finditer(r"\b\d+(?:\.\d+)+", best.text)
        for before in [best.text[: m.start()].split()]
    )
    if release is None or own or heading not in passage.text:
        return None
    return ShortAnswer(release.group(1), release.group(1), best.source)


_RELEASE_EVENT = re.compile(
    r"\b(deprecat|add|remov|drop|introduc|allow|support|rename)"
    r"(?:e|es|ed|d|s|ing|ion|ition|al|ped|ping)?\b",
    re.I,
)
"""What a release did to a thing: deprecated it, added it, dropped it, ..."""


def _version(question: str, units: Sequence[Segment]) -> ShortAnswer | None:
    """The version the best unit naming one gives, best of what the question names ("Python
    3.7+" for "which Python version ..."), never the question's own ("for Scrapy 2.8"); None
    when no unit names another version."""
    said = set(re.findall(r"\d+(?:\.\d+)+", question))
    # "for Scrapy 2.8" names the release the user runs: Scrapy's releases are not asked
    running = {n.lower() for n in re.findall(r"\b([A-Za-z][\w-]*)\s+v?\d+(?:\.\d+)+", question)}
    # "since which version has it been deprecated?": the version of a unit saying so, not of
    # "Changed in version 20.1.0: This function used to be called ..."
    events = {m.group(1).lower() for m in _RELEASE_EVENT.finditer(question)}
    found: list[tuple[bool, bool, int, str, int]] = []
    for order, unit in enumerate(units):
        told = any(e.lower() in events for e in _RELEASE_EVENT.findall(unit.text))
        for match in _VERSION.finditer(unit.text):
            number = re.search(r"\d+(?:\.\d+)+", match.group(0))
            if number is None or number.group(0) in said:
                continue
            name = match.group(0).split()[0] if " " in match.group(0) else ""
            named = (
                name[:1].isupper()
                and name.lower() not in ("version", *running)
                and mentions(question, name)
            )
            found.append((not named, bool(events) and not told, order, match.group(0), unit.source))
    if not found:
        return None
    _, _, _, quote, source = min(found)
    return ShortAnswer(quote, quote, source)


def _place(units: Sequence[Segment]) -> ShortAnswer | None:
    """Where, for a question about documentation: the folder or path the best unit naming
    one says it is in ("in the templates folder"); None when no unit names one."""
    for unit in units:
        if unit.code and "\n" not in unit.text.strip():
            return ShortAnswer(unit.text.strip(), unit.text.strip(), unit.source)  # a path
        found = _FOLDER.search(unit.text)
        if found:  # "in the templates folder"; a path alone: "refs/stash"
            place = found.group("path") or found.group(0)
            return ShortAnswer(place, place, unit.source)
    return None


def _choice(question: Question, units: Sequence[Segment]) -> ShortAnswer | None:
    """One of the two named items, as a supporting sentence writes it: by date when the
    question asks which came first or later, else the one the best sentence names."""
    found = {o: [(u, m) for u in units if (m := mention(u.text, o))] for o in question.options}
    years = {}
    for option, mentioned in found.items():
        dates = [int(y) for u, _ in mentioned for y in re.findall(r"\b(1\d{3}|20\d{2})\b", u.text)]
        years[option] = min(dates) if dates else None
    order = [o for o in question.options if found[o]]
    dated = all(years[o] is not None for o in order)
    if dated and re.search(r"\b(?:first|earlier|older|oldest|before)\b", question.text, re.I):
        order.sort(key=lambda o: years[o] or 0)
    elif dated and re.search(
        r"\b(?:later|younger|youngest|more recent|newer)\b", question.text, re.I
    ):
        order.sort(key=lambda o: -(years[o] or 0))
    else:
        order.sort(key=lambda o: min(u.rank for u, _ in found[o]))
    if not order:
        return None
    unit, quote = found[order[0]][0]
    return ShortAnswer(quote, quote, unit.source)
