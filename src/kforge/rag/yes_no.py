"""Yes or no for a yes/no question, and the phrase of a supporting sentence that decides it.

"No." comes with the negation that says it; a sentence that holds no "not" is quoted without
a verdict, as is one that does not hold enough of what is asked to decide it. A clause quoted
without a verdict says most of what is asked, or there is no line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kforge.rag.commands import description_of
from kforge.rag.compose import Segment
from kforge.rag.question import Question, read_question, unit_terms
from kforge.rag.short_quote import CLAUSE_END, MAX_WORDS, ShortAnswer, clause_at, mention, trim
from kforge.rag.types import Chunk

__all__ = ["CONDITION", "yes_no"]


_NEGATION = re.compile(
    # not the "or not" of "whether ... or not", which asks rather than denies
    r"\b(?:(?<!\bor )not|no|never|cannot|can't|isn't|aren't|wasn't|weren't|doesn't|don't|didn't|"
    r"won't|unsafe|neither|nor|none|without)\b(?<!=None)|n't\b",
    re.IGNORECASE,
)
"""A word that says no (``cls=None``, a default value written as code, does not)."""
_NO_SUBJECT = re.compile(
    r"^(?:but|and|or|yet)\s+(?:(?:is|are|was|were|can|cannot|does|do|did|will|would|should|"
    r"must|may|might|has|have|had)(?:n't)?|not|never)\b",
    re.IGNORECASE,
)
"""A clause going on from its sentence's subject without naming it ("but are not mandated")."""
_BOTH = re.compile(r"\b(?:both|same)\b", re.IGNORECASE)
_ORIGIN = re.compile(r"\bsame (?:nationality|country|citizenship)\b", re.IGNORECASE)
"""What "the same" compares by the nationality words of two passages ("from the same
country")."""
_DECIDES = 0.6
"""A sentence decides a yes/no question when it holds this share of the question's terms."""
CONDITION = re.compile(
    r"^(?:so |and |but )?(?:if|when|whenever|unless|while|although|once)\b", re.I
)
"""A clause that only sets a condition: quoted alone, it answers no yes/no question."""


def yes_no(
    question: Question, units: Sequence[Segment], passages: Sequence[Chunk]
) -> ShortAnswer | None:
    # "are X and Y both ...", "... of the same ...": not any question naming two things ("Are
    # the words Given, When and Then mandatory?")
    if len(question.options) == 2 and passages and _BOTH.search(question.text):
        verdict = _both(question, passages)
        if verdict is not None:
            best = units[0]
            return ShortAnswer("Yes." if verdict else "No.", clause_at(best.text), best.source)
    replied = _page_reply(units, passages) if passages else None
    if replied is not None:
        # the page's own reply ("Can I run a spider without a project? Yes. You can use the
        # runspider command."): what it says, with no verdict, as the page's question may be
        # asked the other way round ("Do I need a project ...?"); under a heading that asks
        # this question ("Does Black have an API?" above "Not yet. ..."), with the reply
        reply, unit = replied
        clause = clause_at(unit.text)
        heading = passages[unit.source].heading.rsplit(">", 1)[-1]
        if set(read_question(heading).terms) == set(question.terms):
            return ShortAnswer(reply, clause, unit.source)
        return ShortAnswer(clause, clause, unit.source)
    terms = set(question.terms)
    # what is asked of the named thing ("synchronous" of crypto.randomBytes; "recursive option"
    # of fs.watch) counts first: a sentence naming only the thing says nothing of it
    predicate = terms - unit_terms(" ".join(question.identifiers))

    def holds(u: Segment) -> tuple[int, int]:
        held = unit_terms(description_of(u.text))
        return len(held & predicate), len(held & terms)

    best = max(units, key=holds)
    said = description_of(best.text)
    clause = clause_at(said)
    whole = trim(said)
    short = len(whole.split()) <= MAX_WORDS + 4
    if CONDITION.match(clause):
        # a condition alone decides nothing: the sentence whole when it is short ("If
        # ensure_ascii is true (the default), the output has all non-ASCII characters escaped")
        clause = whole if short else clause
    asked = predicate or terms
    if not _says_most(clause, asked):
        # a clause quoted without a verdict must say most of what is asked: not the opening
        # "In callback functions" of "In callback functions, you parse the page contents ...
        # (but you can also use BeautifulSoup ...)"; the sentence whole when it is short, else
        # no line, and the answer opens with that sentence
        clause = whole if short and _says_most(whole, asked) else ""
    # and a "not" about something else the thing does decides nothing
    held = unit_terms(said)
    if len(held & terms) < _DECIDES * len(terms) or (
        predicate and len(held & predicate) < _DECIDES * len(predicate)
    ):
        # no sentence decides it: the clause, with no verdict ("The recursive option is only
        # supported on macOS and Windows" for "... the recursive option on Linux?")
        return ShortAnswer(clause, clause, best.source) if clause else None
    negated = _NEGATION.search(said)
    if not negated:
        # no "not" is no "yes": "LANGUAGE is ignored if the locale is C" says no without one;
        # the deciding phrase is quoted, and kforge adds no verdict of its own (nor a phrase
        # too short to decide anything, such as the "Note" before a colon)
        return ShortAnswer(clause, clause, best.source) if len(clause.split()) >= 3 else None
    # the phrase that decides it holds the "not": "... times, is not preserved"
    return ShortAnswer("No.", _deciding(said, negated.start()), best.source)


def _says_most(clause: str, asked: set[str]) -> bool:
    """True when ``clause`` holds at least half of the ``asked`` terms."""
    return 2 * len(unit_terms(clause) & asked) >= len(asked)


_REPLY = re.compile(r"(?:yes|no|not yet)[.!]", re.IGNORECASE)
"""A page's bare reply to the question it asks."""


def _page_reply(units: Sequence[Segment], passages: Sequence[Chunk]) -> tuple[str, Segment] | None:
    """The page's bare reply ("Yes.", "No.", "Not yet.") to the question it asks, as the page
    writes it, and the unit that says it in full, right after it in the same passage: the
    best unit, or the one after the reply when the reply is the best."""
    best = units[0]
    if _REPLY.fullmatch(best.text.strip()):
        following = (u for u in units[1:] if u.source == best.source)
        after = next((u for u in following if _reply_before(u, passages[u.source])), None)
        return (best.text.strip(), after) if after is not None else None
    reply = _reply_before(best, passages[best.source])
    return (reply, best) if reply else None


def _reply_before(unit: Segment, passage: Chunk) -> str:
    """The bare reply that ``unit`` follows in ``passage``, or ""."""
    at = passage.text.find(unit.text[:60])
    if at <= 0:
        return ""
    reply = re.search(r"(?:^|\n|\?\s)((?:yes|no|not yet)[.!])\s*$", passage.text[:at], re.I)
    return reply.group(1) if reply else ""


def _deciding(text: str, at: int) -> str:
    """The phrase of ``text`` deciding a yes/no question by the negation at ``at``: the
    sentence up to the end of the clause holding it ("Other metadata, like ..., is not
    preserved"; "The closure API is not thread safe on every platform"), or that clause
    alone when the stretch is long."""
    end = CLAUSE_END.search(text, at)
    whole = trim(text[: end.start() if end else len(text)])
    if len(whole.split()) <= MAX_WORDS + 4:
        return whole
    starts = [m.end() for m in CLAUSE_END.finditer(text, 0, at)]
    # a parenthesis closed before it ends no clause but its own: "On Linux (RH 8) you cannot
    # spawn a child ...", not "RH 8) you cannot ..."
    starts += [m.end() for m in re.finditer(r"\)\s+", text[:at])]
    clause = clause_at(text, max(starts, default=0))
    if _NO_SUBJECT.match(clause) and len(whole.split()) <= 2 * MAX_WORDS:
        # "but are not mandated" says no of nothing alone: "The words Given, When and Then
        # are often used to help drive out the scenarios, but are not mandated"
        return whole
    return clause


def _both(question: Question, passages: Sequence[Chunk]) -> bool | None:
    """For "are X and Y both P" / "the same P": whether the passages about X and Y agree, or
    None when a passage about one of them is missing."""
    about = []
    for option in question.options:
        own = [p for p in passages if p.title.lower() == option.lower()]  # its own page first
        own += [p for p in passages if mention(p.title, option)]
        own += [p for p in passages if mention(p.text[:200], option)]
        if not own:
            return None
        about.append(own[0].text)
    named = set().union(*(unit_terms(o) for o in question.options))
    asked = set(question.terms) - named - {"both", "same"}
    if re.search(r"\bsame\b", question.text, re.IGNORECASE):
        if not _ORIGIN.search(question.text):
            return None  # "the same as the ones strptime uses": no nationality to compare
        kinds = [set(re.findall(r"\b[A-Z][a-z]+(?:an|ish|ese|ian|ch|i)\b", t)) for t in about]
        return bool(kinds[0] & kinds[1]) if all(kinds) else None
    return all(asked <= unit_terms(text) for text in about) if asked else None
