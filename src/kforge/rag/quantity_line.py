"""The short line of a quantity question: the number with its unit ("64 bytes" for "how many
bytes ..."), or a default's value ("**Default:** `16`")."""

from __future__ import annotations

import re
from collections.abc import Sequence

from kforge.rag.common_words import is_common_word
from kforge.rag.compose import Segment
from kforge.rag.quantities import (
    MEASURES,
    NUMBER,
    RELEASE_AFTER,
    asked_units,
    counted_noun,
    counted_numbers,
    default_entry,
    marked_default,
    parameter_defaults,
    words_of_value,
)
from kforge.rag.question import ENTRY, Question, mentions, term_of, unit_terms
from kforge.rag.short_quote import CLAUSE_END, NOT_UNITS, ShortAnswer, trim

__all__ = ["NUMBERED_NOUNS", "numbered_line", "quantity_line"]

_UNIT = re.compile(
    # "A timeout of 0 won't cache": a word contracted with what follows is no unit
    r"`?(?:\s+or\s+(?:more|fewer|less|so)\b)?\s*(%|[A-Za-z]+(?![A-Za-z'\u2019]))"
    r"(?:\s+(?:per|of)\s+(?!(?:the|a|an|this|that|these|those|its|their|each|every|all)\b)"
    r"[A-Za-z]+)?"
)
"""What may follow a number as its unit ("64 bytes", "`10` listeners", "5 %", "10 or more
times")."""


_NUMBER_OF = re.compile(r"\bnumber of (\w+)", re.IGNORECASE)


def _a_unit(word: str, noun: str) -> bool:
    """Whether ``word`` after a number is its unit: a unit of measure, "%" or "times", or
    the noun a "how many" question counts ("how many listeners": "`10` listeners"); not
    "0 otherwise" or "3 most"."""
    low = word.lower()
    if low in NOT_UNITS:
        return False
    return (
        low in MEASURES
        or low in ("%", "times")
        or (bool(noun) and low.rstrip("s") == noun.rstrip("s"))
    )


_FACTOR = re.compile(r"\s*[*\u00d7]\s*[A-Za-z_]")
"""A number multiplying a name after it ("0.5 * DOWNLOAD_DELAY")."""


def quantity_line(question: Question, units: Sequence[Segment]) -> ShortAnswer | None:
    """The number with its unit: best in the unit the question asks in ("how many bytes"),
    near the question's words, in a better sentence; for "default", what follows
    ``Default:``."""
    terms = set(question.terms)
    sized = asked_units(question)  # "how big": bytes
    number_of = _NUMBER_OF.search(question.text)  # "the maximum number of listeners"
    noun = counted_noun(question.text) or (number_of.group(1).lower() if number_of else "")
    # "the default name of the configuration file" is a name: no number answers it
    names_default = _NAMED_DEFAULT.search(question.text) is not None
    best: tuple[float, str, int] | None = None
    for unit in units:
        text = unit.text
        found = []
        # "**Default:** `16`", "Default is 10", "defaults to `utf8`", "..., default value: 50",
        # "The default value is ``<space><tab><newline>''";
        # not "Default `host:port` is"
        # "(string, default “.coverage”)", "(defaulting to “.coverage”)", "The default name for
        # configuration files is .coveragerc"
        default = (
            # "Defaults to the $WEB_CONCURRENCY environment variable if available, or 1": the
            # value whole, with what it falls back to
            re.search(r"\b[Dd]efault(?:s|ing) to (the [^.;]{1,100}? or [^\s.;]+)", text)
            or re.search(
                r"\b(?:Default(?::\**|\**:| is| value is)|[Dd]efault value:|[Dd]efault(?:s|ing) to)"
                r"\s*(`[^`]+`|\u201c[^\u201d]+\u201d|\S+)",
                text,
            )
            or re.search(r"\b[Dd]efault value is\s*(``[^`']+'')", text)
            or re.search(r"\b[Dd]efault\s+(\u201c[^\u201d]+\u201d|\"[^\"]+\"|'[^']+')", text)
            # (a number so said is counted below, with its unit: "is five layers")
            or re.search(
                r"\b[Tt]he default (?:[\w-]+ ){1,4}?(?:is|are)\s+(?!\d|(?:one|two|three|four|five|"
                r"six|seven|eight|nine|ten)\b)(`[^`]+`|\S+)",
                text,
            )
        )
        if default and not (
            default.group(1).startswith(("`", "\u201c", '"', "'"))
            or NUMBER.search(default.group(1))
            or _LITERAL_VALUE.fullmatch(default.group(1).rstrip(".,;"))
            # a name no English word: "The timestamp field to check defaults to mtime"
            or _named_value(default.group(1).rstrip(".,;"))
        ):
            default = None  # "Default: what was specified on the CLI" gives no value
        if default and parameter_defaults(text, question):
            # the entry's own default, not a "defaults to" of another it mentions
            # ("max_overflow=10 - ... beyond the pool_size setting, which defaults to five")
            default = None
        if default and "default" in terms:
            # an item of a parameter list is about one parameter: all of it is near its default
            about = len(unit_terms(text) & terms) * 0.2
            named = any(mentions(text, n) for n in question.identifiers)
            end = default.start(1) + len(default.group(1).rstrip(".,;"))  # not the full stop
            found.append((default.start(1), end, 1.0 + about + 0.5 * named))
        for start, end in parameter_defaults(text, question):  # maxsize=128
            if sized and not NUMBER.search(text[start:end]):
                continue  # "for how long ...": not "None" of "reuse_address=None"
            found.append((start, end, 1.5))
        for start, end in default_entry(text, question.terms):
            found.append((start, end, 1.5))  # "ort: This is the default merge strategy ..."
        for start, end in words_of_value(text, question.terms):
            found.append((start, end, 1.0))  # "the TemplateLookup size is unbounded"

        for match in [] if names_default else counted_numbers(text, question.text):
            glued = _GLUED.match(text, match.end())
            if glued and term_of(glued.group(1).lower()) not in terms | {term_of(u) for u in sized}:
                continue  # "a 3-way merge": a kind of merge, not an amount (but "64-bit" bits)
            if "." in match.group(0) and RELEASE_AFTER.match(text, match.end()):
                continue  # "In 3.8+ ...", "MacOS: 10.12 or newer": a release, not an amount
            if _FACTOR.match(text, match.end()):
                continue  # "0.5 * DOWNLOAD_DELAY": a factor of a value named, not the value
            quantity = _UNIT.match(text, match.end())
            end, value = match.end(), 0.0
            start = match.start()
            if not match.group(0)[0].isdigit():
                if sized and not (quantity and _a_unit(quantity.group(1), noun)):
                    continue  # "how often": not the "two" of "two consecutive checks"
                value -= 0.3  # a number in words is as often a manner of speaking
            elif match.group(0)[:2].lower() == "0x":
                value += 0.5  # a hexadecimal literal is a value written out, as with a unit
            if _TIMES.match(text, end):  # "a 5x to 20x performance improvement": a factor
                end, value = end + 1, value + 0.5
            elif quantity and _a_unit(quantity.group(1), noun):
                end, value = quantity.end(), value + 0.5
                if text[end - len(quantity.group(0)) : end].startswith("`") and start > 0:
                    start -= text[start - 1] == "`"  # "`10` listeners", backticks balanced
                if unit_terms(quantity.group(0)) & terms or quantity.group(1).lower() in sized:
                    value += 1.0  # the unit the question asks in: "how many bytes" -> "64 bytes"
            if text[start - 1 : start] == "`" == text[end : end + 1] and start > 0:
                start, end = start - 1, end + 1  # "`4`": the code span whole
            lower = _RANGE_FROM.search(text[max(0, start - 40) : start])
            if lower:  # "two to four bytes", "2-4 bytes": the range whole, not its top
                start, value = start - len(lower.group(0)), value + 0.1  # nor its bottom
            value += 1.5 * ("default" in terms and marked_default(text, end))
            found.append((start, end, value))
        for start, end, value in found:
            near = unit_terms(text[max(0, start - 60) : end + 60]) & terms
            value += 0.2 * len(near) + 0.3 / (1 + unit.rank)
            quote = trim(text[start:end])
            if quote and (best is None or value > best[0]):
                best = (value, quote, unit.source)
    return ShortAnswer(best[1], best[1], best[2]) if best else None


_NUMERAL = (
    r"(?<![\w.])(?:\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
    r"twelve)"
)
_TIMES = re.compile(r"[x\u00d7](?!\w)")
"""A factor's sign written on to its number ("5x", or 20 and the multiplication sign)."""
_RANGE_FROM = re.compile(
    rf"(?:\bbetween\s+{_NUMERAL}[x\u00d7]?\s+and|(?:\bfrom\s+)?{_NUMERAL}[x\u00d7]?\s*"
    r"(?:to|-|\u2013))\s*$",
    re.IGNORECASE,
)
"""The lower end of a range before its upper end's number: "two to ", "between 2 and ", "2-"
(not "3.8 or 4", two values)."""
_GLUED = re.compile(r"-([A-Za-z]+)")
"""A word a number is joined to by a hyphen ("3-way", "64-bit")."""


_LITERAL_VALUE = re.compile(
    r"(?:~|[A-Za-z]:)?/[\w.${}()/-]*|True|False|None|ON|OFF|null|\.\w[\w.-]*|\w+\.[a-z]{2,4}"
)
"""A value written as itself: a path ("defaults to /usr/local on UNIX"), a file's name
(``.coveragerc``, ``setup.cfg``) or a literal."""


def _named_value(word: str) -> bool:
    """True for a value named by a word of no English (``mtime``, ``lz4``, ``utf8``)."""
    return re.fullmatch(r"[a-z][a-z0-9_]+", word) is not None and not is_common_word(word)


NUMBERED_NOUNS = frozenset({"code", "codes", "port", "status", "errno"})
"""What "what X" asks when X is known by its number: an exit or status code, a port."""
_LEADING_JOIN = re.compile(r"^(?:or|and|but)\s+", re.IGNORECASE)


def numbered_line(question: Question, units: Sequence[Segment]) -> ShortAnswer | None:
    """For "what exit code ...", "which port ...": the clause holding a number that holds
    the most of what the question asks ("code 1 if some files would be reformatted" of
    "code 0 if nothing would change; code 1 if ...; or code 123 if ..."; "HTTP 204" of the
    entry "HTTP 204: If the input is already well-formatted."), or None when no supporting
    sentence gives one (not a name it mentions: "Docker")."""
    terms = set(question.terms)
    # what is said of the code, not the words naming it ("exit code")
    named = re.search(
        r"(?i)\b(?:what|which)\s+((?:\S+\s+){0,3}?(?:codes?|port|status|errno))\b", question.text
    )
    said_of = terms - unit_terms(named.group(1) if named else "")
    negated = _NEGATED.search(question.text) is not None
    best: tuple[float, str, int] | None = None
    for unit in units:
        if unit.code:
            continue
        entry = ENTRY.match(unit.text)
        for match in NUMBER.finditer(unit.text):
            if not match.group(0)[0].isdigit():
                continue
            if entry is not None and match.end() <= entry.end(1):
                clause, said = entry.group(1).strip(), unit.text  # the entry of the number
            else:
                starts = [m.end() for m in CLAUSE_END.finditer(unit.text, 0, match.start())]
                start = starts[-1] if starts else 0
                end = CLAUSE_END.search(unit.text, match.end())
                clause = _LEADING_JOIN.sub(
                    "", trim(unit.text[start : end.start() if end else None])
                )
                said = clause
            # what follows "unless" is when the number does not apply ("exits with code 0
            # unless an internal error occurred")
            kept = _EXCEPT.split(said, maxsplit=1)[0]
            held = unit_terms(kept)
            if said_of and not held & said_of:
                continue  # "it exits with code 0 unless an internal error occurred"
            value = len(held & said_of) + 0.1 * len(held & terms) + 0.3 / (1 + unit.rank)
            if negated == (_NEGATED.search(kept) is not None):
                value += 0.5  # "when no lines were selected": "1 if no lines were selected"
            if clause and (best is None or value > best[0]):
                best = (value, clause, unit.source)
    return ShortAnswer(best[1], best[1], best[2]) if best else None


_NEGATED = re.compile(r"\b(?:no|not|never|none|nothing|without)\b|n't\b", re.IGNORECASE)
_EXCEPT = re.compile(r"\b(?:unless|except)\b", re.IGNORECASE)


_NAMED_DEFAULT = re.compile(
    r"\bdefault\s+(?:[\w-]+\s+){0,2}?(?:name|filename|directory|folder|path|command|program)s?\b",
    re.IGNORECASE,
)
"""A default asked for by what it is named: the default name, directory, command."""
