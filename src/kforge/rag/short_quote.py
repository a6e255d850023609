"""What a short answer line is, and how a stretch of a sentence is cut for it.

``ShortAnswer`` is the line an answer opens with; ``clause_at`` cuts a clause from a sentence,
at most ``MAX_WORDS`` words; ``mention`` finds how a sentence writes a named item. The rules
that choose what to quote (``kforge.rag.short_answer``, ``kforge.rag.yes_no``,
``kforge.rag.named_answer``) build on these; ``listed`` widens a line to the list its item
opens.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from kforge.rag.stem import porter_stem

__all__ = [
    "CLAUSE_END",
    "EXCEPTION_NOUNS",
    "MAX_WORDS",
    "NOT_UNITS",
    "ShortAnswer",
    "clause_at",
    "exception_named",
    "listed",
    "mention",
    "trim",
    "verb_object",
    "word_set",
]


@dataclass(frozen=True, slots=True)
class ShortAnswer:
    """The direct answer to a question, and where it is quoted from."""

    answer: str
    """What answers: the quote itself, or ``Yes.`` / ``No.`` for a yes/no question."""
    quote: str
    """The stretch of the supporting sentence quoted on the line (for yes/no, the deciding
    phrase; may be empty there)."""
    source: int
    """Index of the passage the quoted sentence comes from."""

    @property
    def line(self) -> str:
        """The line as the answer shows it, without its ``[n]`` marker."""
        if self.answer == self.quote or not self.quote:
            return self.answer
        return f"{self.answer} {self.quote}"


CLAUSE_END = re.compile(r"(?:[,;:]\s|\s[\u2013\u2014-]\s|\.(?:\s|$)|\s\((?!\d))")


def word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


NOT_UNITS = word_set(
    "and or the a an to of in on is are was were be by for with that this it as at from "
    "into onto than after before about over under between within without via "
    "number numbers value values"  # "two numbers: 0x950412de and ...": the number is after
)
MAX_WORDS = 12
_LINKING = word_set(
    "so however also thus therefore otherwise instead finally first second then now still "
    "here besides moreover furthermore additionally consequently hence meanwhile "
    "alternatively similarly likewise nevertheless nonetheless typically usually generally "
    "normally unfortunately fortunately ideally currently internally again"
)
"""Words that link a sentence to the one before ("So, ...", "However, ...")."""
_PHRASE_STARTS = frozenset(
    [
        *("when", "that", "which", "where", "while", "with", "by", "for", "to", "in", "on"),
        # "you cannot spawn a child from a different thread | and pass ..."
        *("from", "and", "but"),
    ]
)


def trim(text: str) -> str:
    return text.strip().rstrip(".,;:!?").strip()


def clause_at(text: str, start: int = 0) -> str:
    """From ``start`` to the end of the clause, at most ``MAX_WORDS`` words."""
    rest = text[start:]
    end = CLAUSE_END.search(rest, 1)
    # a linking word before a comma only leads into the clause ("So, if you need that, ...",
    # "However, ..."): the clause goes on
    if end and end.group(0).startswith(",") and rest[: end.start()].strip().lower() in _LINKING:
        end = CLAUSE_END.search(rest, end.end())
    piece = rest[: end.start()] if end else rest
    words = list(re.finditer(r"\S+", piece))
    if len(words) > MAX_WORDS + 4:
        # too long: end before the last phrase that starts within the limit, not mid-phrase,
        # keeping enough to say something ("The instance folder is designed" says nothing)
        cuts = [w.start() for w in words[6:MAX_WORDS] if w.group(0).lower() in _PHRASE_STARTS]
        piece = piece[: cuts[-1]] if cuts else piece[: words[MAX_WORDS - 1].end()]
    return trim(piece)


def mention(text: str, option: str) -> str:
    """How ``text`` writes ``option``: the whole of it, else its longest run of words."""
    words = option.split()
    for size in range(len(words), 0, -1):
        for i in range(len(words) - size + 1):
            run = " ".join(words[i : i + size])
            if len(run) < 3 or (size == 1 and run.lower() in NOT_UNITS):
                continue
            flags = re.IGNORECASE if size > 1 else 0  # one word alone must be the name as written
            # words of a name may have marks between them in the text ('"Jonny" Craig')
            written = r"\W{1,3}".join(map(re.escape, run.split()))
            match = re.search(rf"(?<!\w){written}(?!\w)", text, flags)
            if match:
                return match.group(0)
    return ""


_WHAT_DOES = re.compile(
    r"^what\s+(?:does|do|did|will|would|can|could|should)\s+"
    r"(?!.*\b(?:do|does|when|if|while|after|before|since|because|once|unless)\b)"
    # nor "what does find_package look for in Module mode?": the verb stands before the place
    r"(?!.*\b(?:in|on|at|for|with|from|of|by|under|inside|during)(?:\s+\S+){1,2}\s*\??$)"
    r"\S.*?\s([a-z]{3,})\s*\??$",
    re.I,
)
""""What does X <verb>?", the verb last: what X acts on is asked, the verb's object (not
"what does zip do when the iterables have different lengths?", whose last word is no verb)."""
_NO_OBJECT_VERBS = frozenset(["do", "mean", "look", "need", "want", "say", "stand", "happen"])


def verb_object(asking: str, texts: Sequence[str]) -> tuple[str, int] | None:
    """For an ``asking`` sentence "What does X <verb>?", the clause of the first of ``texts``
    that says the verb (in any form), from the verb on, and that text's index: "remove any
    remote-tracking references that no longer exist on the remote" for "What does git fetch
    --prune remove?". None for other questions, or when no text says the verb."""
    asked = _WHAT_DOES.match(asking.strip())
    if asked is None or asked.group(1).lower() in _NO_OBJECT_VERBS:
        return None
    verb = porter_stem(asked.group(1).lower())
    for index, text in enumerate(texts):
        for word in re.finditer(r"[A-Za-z]+", text):
            said = word.group(0).lower()
            if porter_stem(said) != verb or said.endswith("ing"):
                # "including waits for tools" modifies what is before it: no object of a verb
                continue
            clause = clause_at(text, word.start())
            if len(clause.split()) >= 3:
                return clause, index
    return None


_EXCEPTION_NAME = re.compile(
    r"(?<![\w.])(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt|NotFound|"
    r"Found|Timeout|Failure)(?![\w.])"
)
"""An exception's name as code writes it: ``sqlalchemy.orm.exc.NoResultFound``,
``tornado.httpclient.HTTPError``, ``KeyError``."""
EXCEPTION_NOUNS = frozenset(["exception", "exceptions", "error", "errors", "warning"])
"""What "which exception ..." asks for: a name of one."""


def exception_named(texts: Sequence[str]) -> tuple[str, int] | None:
    """The first exception name in ``texts`` and that text's index, for "what exception does X
    raise?": ``tornado.httpclient.HTTPError`` of "If raise_error is True, a
    tornado.httpclient.HTTPError will be raised ...", never "False" or a method's name."""
    for index, text in enumerate(texts):
        found = _EXCEPTION_NAME.search(text)
        if found:
            return found.group(0), index
    return None


_ITEM = (
    r"(?=[`'\"\u2018\u201c]?[A-Z0-9])[`'\"\u2018\u201c]?[\w.+-]+[`'\"\u2019\u201d]?"
    r"(?:\s+[A-Z0-9][\w.+-]*){0,2}"
)
_MORE = re.compile(rf"(?:,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+)({_ITEM})")
"""The next item of a list: after a comma or "and" / "or", a name or a number of up to three
words, each opening in capitals or a digit ("3.5-3.9", "PyPy", "Draft 4")."""


def listed(found: ShortAnswer | None, noun: str, texts: Sequence[str]) -> ShortAnswer | None:
    """``found`` widened to the list its quote opens in the sentence of ``texts`` holding it,
    when the question asks for ``noun`` in the plural ("Which Python versions ...": "Python
    2.7, 3.5-3.9 and PyPy", not "Python 2.7"); else ``found`` as it is."""
    plural = len(noun) > 3 and re.search(r"[^s'\u2019ui]s$", noun) is not None
    if found is None or not plural or found.answer != found.quote or not found.quote:
        return found
    for text in texts:
        at = text.find(found.quote)
        if at < 0:
            continue
        end = at + len(found.quote)
        while (more := _MORE.match(text, end)) is not None:
            end = more.end()
        whole = text[at:end]
        return ShortAnswer(whole, whole, found.source)
    return found
