"""The two items a question names to choose between or compare: "which is older, X or Y",
"the difference between X and Y", "how does X differ from Y", "when should I X and when Y"."""

from __future__ import annotations

import re

__all__ = ["BETTER_CHOICE", "TWO_WAYS", "named_options"]

_CHOICE = re.compile(r"\b(?:which|who|what)\b.*?,?\s+(.+?)\s+or\s+(.+?)\s*\??$", re.IGNORECASE)
_OR_ELSE = re.compile(
    r"(?:(?:is|are|was|were|does|do|did|will|would|can|could|has|have)\s+(?:it|they|that|this|"
    r"there|he|she)|not|the other way)\b",
    re.IGNORECASE,
)
"""What follows "or" in a question naming no second item: "Which one does it handle first, or
is it random?", "..., or not?", "..., or the other way round?"."""
_WHICH_OF = re.compile(
    r"\bwhich of (?:the )?(.+?)\s+and\s+(.+?)\s+(?:has|have|is|was|were|are|did|does|had)\b",
    re.IGNORECASE,
)
_OR_START = re.compile(
    r"^(?i:is|are|was|were|does|did|do|has|have|can|could)\s+(?:the\s+)?(.+?)\s+or\s+"
    r"(?:the\s+)?([A-Z][\w'\u2019.&-]*(?:\s+[A-Z0-9][\w'\u2019.&-]*)*)"
)
_BETWEEN = re.compile(r"\bbetween\s+(.+?)\s+and\s+(.+?)\s*\??$", re.IGNORECASE)
_DIFFER = re.compile(
    r"\bhow (?:does|do|is|are|did|was|were)\s+(.+?)\s+(?:differ|compare|different)\w*\s+"
    r"(?:from|to|with|than)\s+(.+?)\s*\??$"
    r"|^compare\s+(.+?)\s+(?:and|with|to)\s+(.+?)\s*\??$"
    r"|^(?:what about\s+)?(.+?)\s+(?:vs\.?|versus)\s+(.+?)\s*\??$",
    re.IGNORECASE,
)
"""Two compared items said otherwise: "how does X differ from Y", "compare X and Y", "X vs Y"."""
_BOTH = re.compile(
    r"^(?:are|were|is|was|do|did|does|have|has)\s+(?:both\s+)?(.+?)\s+and\s+(.+?)\s+"
    r"(?:both\b|the same\b|each\b|from\b|in\b|considered\b|located\b|[a-z]+ed\b|an?\b)",
    re.IGNORECASE,
)


TWO_WAYS = re.compile(
    r"^when (?:should|do|can|would|must) (?:i|we|you|one)\s+(.+?),?\s+and when\s+"
    r"(?:(?:should|do|can|would|must) (?:i|we|you|one)\s+)?(.+?)\s*\??$"
    r"|^(?:should|do|can|would|must) (?:i|we|you|one)\b.*?\b(?:with|use|using|via|by|as)\s+"
    r"(.+?)\s+or\s+(?:with|use|using|via|by|as)\s+(.+?)\s*\??$"
    r"|^(?:should|do|can|would|must) (?:i|we|you|one)\b[^?]*?\s([\w-]+-[\w-]+|\w+ly)\s+or\s+"
    r"([\w-]+-[\w-]+|\w+ly)\s*\??$",
    re.IGNORECASE,
)
"""Two ways the user weighs: "When should I skip a test and when should I mark it xfail?",
"Should I configure it with spider arguments or with settings?", "Should I write it
left-recursive or right-recursive?"."""


def named_options(text: str) -> tuple[tuple[str, ...], bool]:
    """The two items a question names to choose between or compare, and whether it asks to
    choose one of them."""
    ways = TWO_WAYS.match(text)
    if ways:
        first, second = [g for g in ways.groups() if g][:2]
        if ways.group(1):  # "skip a test" and "mark it xfail": what is done, "skip", "xfail"
            first, second = _way(first), _way(second)
        return (_bare_item(first), _bare_item(second)), False
    choice = _CHOICE.search(text)
    if choice and not _OR_ELSE.match(choice.group(2)):
        first = re.split(r",\s*|\bbetween\b|\bof\b", choice.group(1))[-1].strip(" ,:")
        return (first, choice.group(2).strip(" ,?")), True
    for pattern in (_WHICH_OF, _OR_START):
        which = pattern.search(text)
        if which:
            return (which.group(1).strip(), which.group(2).strip()), True
    better = BETTER_CHOICE.search(text)
    if better:
        # which is safer is for the passages to say: both items are described, neither chosen
        return (_bare_item(better.group(1)), _bare_item(better.group(2))), False
    for pattern in (_BETWEEN, _DIFFER, _BOTH):
        pair = pattern.search(text)
        if pair:
            first, second = [g for g in pair.groups() if g][:2]
            if pattern is not _BOTH:
                second = _TAIL.split(second, maxsplit=1)[0]
            return (_bare_item(first), _said_whole(_bare_item(second), _bare_item(first))), False
    return (), False


_TAIL = re.compile(
    r",|\s+(?:for|in|on|when|while|within|inside|during|if|to|from)\s+(?=\S)", re.IGNORECASE
)
"""Where the words after the second compared item stop naming it: "restic for backing up a
laptop", "extracted comments in a PO file", "an argument, and when should I use which",
"BorderedTable from cmd2.table_creator"."""
BETTER_CHOICE = re.compile(
    r"\b(?:is|are)\s+(?:the\s+)?(.+?)\s+or\s+(?:the\s+)?(.+?)\s+the\s+"
    r"(?:\w+er|better|best|more \w+|\w+est)\s+(?:choice|option|way|one|pick|method|bet)\b",
    re.IGNORECASE,
)
"""Two items weighed as "is md5 or scram-sha-256 the safer choice?"."""


def _said_whole(second: str, first: str) -> str:
    """The second item with the noun it leaves to "one" said again: "the client side one"
    after "the server side search engine" is the client side search engine."""
    words = second.split()
    if len(words) < 2 or words[-1].lower() not in ("one", "ones"):
        return second
    said = first.split()
    if len(said) <= len(words) - 1:
        return second
    return " ".join([*words[:-1], *said[len(words) - 1 :]])


_GENERIC_VERBS = frozenset("mark use set make do run call have get put add let".split())  # noqa: SIM905


def _way(phrase: str) -> str:
    """The word naming a way of doing in "skip a test" (skip) or "mark it xfail" (xfail):
    past a generic verb and the object ("a test", "it") both ways share."""
    words = [w for w in phrase.split() if w.lower() not in ("a", "an", "the", "it", "them")]
    if len(words) > 1 and words[0].lower() in _GENERIC_VERBS:
        words = words[1:]
    return words[-1] if words and words[0].lower() in _GENERIC_VERBS else (words or [phrase])[0]


def _bare_item(text: str) -> str:
    """A compared item without the article or the question mark around it."""
    return re.sub(r"^(?:the|a|an)\s+", "", text.strip(" ?"), flags=re.IGNORECASE)
