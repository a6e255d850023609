"""The units a quantity question asks in without naming them, and whether a sentence gives a
number in them: "How big is the header?" asks for bytes, so "The first 100 bytes of the file
comprise the header" answers it and "at offset 28 into the header" does not."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Protocol

from kforge.rag.analyze import STOPWORDS, tokenize
from kforge.rag.stem import porter_stem


class _Asked(Protocol):
    """What ``asked_units`` reads of a question (``kforge.rag.question.Question``, which
    imports this module)."""

    @property
    def kind(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def terms(self) -> tuple[str, ...]: ...

    @property
    def identifiers(self) -> tuple[str, ...]: ...


__all__ = [
    "MEASURES",
    "NUMBER",
    "RELEASE_AFTER",
    "asked_units",
    "asks_release",
    "counted_noun",
    "counted_numbers",
    "counts",
    "default_entry",
    "gives_default",
    "marked_default",
    "measures_other",
    "names_release",
    "names_units",
    "parameter_defaults",
    "states_in_units",
    "value_in_words",
    "words_of_value",
]

NUMBER = re.compile(
    r"(?<![\w.])(?:(?<==)-(?=\d))?(?:0x[0-9a-f]+|\d(?:,?\d)*(?:\.\d+)?|two|three|four|five|six|seven|eight|nine|ten|"
    r"eleven|twelve|twenty|thirty|forty|fifty|hundred|thousand|million|billion|"
    r"(?:an?|one|half)(?=\s+(?:year|month|week|day|hour|minute)s?\b)|one(?=\s+seconds?\b))"
    r"(?:(?=(?:ms|s|min|h|[kKMGT]i?B|[kmgt]b|px|x)\b)|(?![\w]))",
    re.IGNORECASE,
)
"""A number, in digits or words ("one" left out: it is mostly "one of", "one potential"),
also when its unit is written on to it ("0.005s", "16MB"); "a", "an", "one" or "half" before
a unit of time ("at least for a year and half", "once an hour", "one second"; not "a second
call"); its minus sign where it is assigned ("pool_recycle=-1")."""
_ONE = frozenset({"a", "an", "one", "half"})

_NAMING = re.compile(
    r"(?:\b(?:issues?|bugs?|fix(?:es)?|pr|pep|rfc|sections?|chapters?|figures?|tables?|steps?|"
    r"lines?|version|release|v)\s*#?|\b(?-i:[A-Z]{2,})[ -]|[A-Za-z]-)$",
    re.IGNORECASE,
)
"""What makes the number after it a name, not an amount: "issue 1735", "PEP 8", "HTTP 500",
"version 0.21", "utf-8"."""
_NAMED_RELEASE = re.compile(r"(?<=[\w,;(] )[A-Z][A-Za-z]+ $")
"""A name in mid-sentence before a release number: "Scrapy 2.8", "Python 3.7"."""


_SIZE_UNITS = frozenset(
    """byte bytes kb kib mb mib gb gib tb tib kilobyte kilobytes megabyte megabytes gigabyte
    gigabytes bit bits characters chars words tokens lines""".split()  # noqa: SIM905
)
"""The units a size is given in: of data, and of text ("500 to 1,500 characters")."""
_TIME_UNITS = frozenset(
    """ms millisecond milliseconds sec secs second seconds minute minutes hour hours day days
    week weeks month months year years""".split()  # noqa: SIM905
)


RELEASE_AFTER = re.compile(r"\+|\s+or\s+(?:newer|later|above|higher|greater)\b", re.IGNORECASE)
"""What makes the dotted number before it a release: "3.8+", "10.12 or newer"."""


def counted_numbers(text: str, question: str) -> Iterator[re.Match[str]]:
    """The numbers of ``text`` that count or measure something, not those that name a thing
    ("issue 1735", "HTTP 500", "Scrapy 2.8", a reference ``[12]`` or ``#2606``, an escape
    ``\\000``, a manual page's section ``cmake(1)``, a piece of an address or version, a
    port or a path's piece: ``host:443``, ``http/1.1``) nor
    those ``question`` already says: the answer to "which Python version for Scrapy 2.8?" is
    never 2.8."""
    said = set(re.findall(r"\d[\d,.]*|[a-z]+", question.lower()))
    for match in NUMBER.finditer(text):
        before = text[: match.start()]
        number = match.group(0).lower()
        if (number in said and number not in _ONE) or before[-1:] in ("[", "#", "\\"):
            continue
        if re.search(r"[\w-]\($", before) and text[match.end() : match.end() + 1] == ")":
            continue  # a manual page's section: ``cmake(1)``
        if re.match(r"\.\d", text[match.end() :]) or re.search(r"\d\.$", before):
            continue
        if re.search(r"(?:\d|localhost|\w\.[A-Za-z]{2,}):$|[A-Za-z]/$", before):
            continue  # a port or a path's piece: "192.168.0.1:443", "http/1.1"
        if _NAMING.search(before[-24:]):
            continue
        if "." in match.group(0) and _NAMED_RELEASE.search(before[-24:]):
            continue
        yield match


_DEFAULT_VALUE = re.compile(
    r"^(?:Defaults? (?:to|is)|Default(?: value)?:)\s+\S"
    r"|^(?:M(?:ax|in)imum value: [^,]+, ){1,2}default value: \S+$",
    re.I,
)
"""An entry's value: "Defaults to 4093.", "Default: 180", and a range that ends with it
("Minimum value: 0, maximum value: 10000, default value: 50.")."""


def gives_default(text: str) -> bool:
    """True for a unit giving the value of an entry ("Defaults to 4093.", "Default: 180",
    "Minimum value: 0, maximum value: 10000, default value: 50.")."""
    return _DEFAULT_VALUE.match(text) is not None


_NO_LIMIT = re.compile(
    r"\b(?:unbounded|unlimited|infinite|no (?:upper )?(?:limit|maximum|bound))\b", re.IGNORECASE
)
_DEFAULT_CHOICE = re.compile(r"[.:;]\s+(?:Default|This is the default)\.?\s*$|\((?:the )?default\)")
"""A choice marked as the default among those an entry lists (the item ``"xhtml": Outputs XHTML
style tags. Default.``, "html5 (the default)")."""


def words_of_value(text: str, terms: Sequence[str]) -> list[tuple[int, int]]:
    """Where ``text`` gives a value in words (see ``value_in_words``): the word saying there is
    no limit ("unbounded"), or the name of the choice marked as the default (``"xhtml"``)."""
    spans = [m.span() for m in _NO_LIMIT.finditer(text)]
    if "default" in terms and _DEFAULT_CHOICE.search(text):
        choice = re.match(r"\s*(\"[^\"]+\"|'[^']+'|`[^`]+`|[\w.-]+)\s*:", text)
        # or the one a list marks in passing: "short, medium (the default), long, and full"
        marked = re.search(
            r"(?:^|,\s*|\bor\s+)(\"[^\"]+\"|'[^']+'|`[^`]+`|[\w.-]+)\s*\((?:the )?default\)", text
        )
        spans += [choice.span(1)] if choice else [marked.span(1)] if marked else []
    return spans


def value_in_words(text: str, terms: Sequence[str]) -> bool:
    """True when ``text`` gives a value in words: that a quantity has no limit ("the size is
    unbounded"), or for a question asking a default (its ``terms``), the choice marked as the
    default."""
    if _NO_LIMIT.search(text):
        return True
    return "default" in terms and _DEFAULT_CHOICE.search(text) is not None


def names_units(text: str, units: frozenset[str]) -> bool:
    """True when ``text`` names one of ``units`` ("The amount of time (in secs) ...")."""
    return any(w in units for w in re.findall(r"[a-z]+", text.lower()))


_HOW_MANY = re.compile(
    r"\bhow many\s+((?:[a-z][\w-]*\s+){0,3}?[a-z][\w-]*?)(?:\s+(?:do|does|did|are|is|was|were|can|could|will|would|should|exist|there|of|in|on|per|to|has|have|had)\b|\s*[?,.]|$)",
    re.I,
)


_RELEASE_NUMBER = re.compile(r"(?<![\w.])v?\d+(?:\.\d+)+\+?(?![\w.])")


def names_release(text: str, question: str) -> bool:
    """True when ``text`` names a release ("Python 3.7+") other than one ``question`` names."""
    said = set(_RELEASE_NUMBER.findall(question))
    return any(m.group(0) not in said for m in _RELEASE_NUMBER.finditer(text))


_WHICH_RELEASE = re.compile(
    r"\b(?:oldest|earliest|minimum|lowest|newest|latest|highest)\s+(?:supported\s+)?"
    r"(?-i:[A-Z][\w.+-]*)(?!\s+(?:of|in|for)\b)"
    # "which version dropped support for Python 2?": the version, whatever verb follows
    # "Which structlog release first allowed ...?", after the sentences telling the situation
    r"|(?:^|[.!?]\s+)(?:in |since )?(?:which|what) (?:[\w.-]+ )?(?:version|release)s?\b",
    re.IGNORECASE,
)


def asks_release(question: str, noun: str) -> bool:
    """True when ``question`` (whose asked noun is ``noun``) asks which release: "which Python
    version ...", "since which release ...", "what's the oldest Python that mypy runs on?"."""
    return noun.rstrip("s") in ("version", "release") or _WHICH_RELEASE.search(question) is not None


def counted_noun(question: str) -> str:
    """What "how many X ...?" counts, as written ("plugins" of "how many external plugins
    exist"), or ""."""
    match = _HOW_MANY.search(question)
    return match.group(1).split()[-1].lower() if match else ""


def counts(text: str, noun: str, question: str) -> bool:
    """True when ``text`` gives a number of ``noun`` ("over 800+ external plugins" for
    plugins): a number with the noun among the three words after it."""
    stem = noun.rstrip("s")
    for match in counted_numbers(text, question):
        after = re.findall(r"[A-Za-z][\w-]*", text[match.end() : match.end() + 40])[:3]
        if any(w.lower().rstrip("s") == stem for w in after):
            return True
    return False


_WRITTEN_ON = {"s": "seconds", "ms": "ms", "min": "minutes", "h": "hours"} | {
    unit: unit for unit in ("kb", "kib", "mb", "mib", "gb", "gib", "tb", "tib")
}
"""Units written on to their number ("0.005s", "16MB"), as the unit sets name them."""
MEASURES = (
    _SIZE_UNITS | _TIME_UNITS | frozenset(_WRITTEN_ON) | {"pixel", "pixels", "px", "percent", "dpi"}
)
"""Units of measure: of data, of text, of time, of images, and their abbreviations."""


def measures_other(text: str, noun: str, question: str) -> bool:
    """True when every number ``text`` counts with is in a unit of measure that is not
    ``noun``: "limit the width of the image to 1024 pixels" gives no number of nodes."""
    stem = noun.rstrip("s")
    units = [re.match(r"\s*([A-Za-z]+)", text[m.end() :]) for m in counted_numbers(text, question)]
    return bool(units) and all(
        u is not None and u.group(1).lower() in MEASURES and u.group(1).lower().rstrip("s") != stem
        for u in units
    )


def asked_units(question: _Asked) -> frozenset[str]:
    """The units a quantity question asks in without naming them: sizes for "how big", "how
    large", "the size of"; durations for "how long", a timeout or an interval."""
    text = question.text.lower()
    if question.kind != "quantity":
        return frozenset()
    if re.search(r"\bhow (?:big|large|small)\b|\bsizes?\b", text):
        return _SIZE_UNITS
    if re.search(
        r"\bhow (?:long|short|often|frequently)\b|\btimeouts?\b|\bdurations?\b|\bintervals?\b", text
    ):
        return _TIME_UNITS
    return frozenset()


def states_in_units(text: str, units: frozenset[str]) -> bool:
    """True when ``text`` gives a number in one of ``units`` ("The first 100 bytes ...",
    "(<0.005s)")."""
    return any(
        (after := re.match(r"(\s+)?([A-Za-z]+)", text[m.end() :])) is not None
        and (
            after.group(2).lower() in units
            or (not after.group(1) and _WRITTEN_ON.get(after.group(2).lower()) in units)
        )
        for m in NUMBER.finditer(text)
    )


_DEFAULT_ENTRY = re.compile(
    r"^([^:\n]{1,40}?):{1,2}\s+(?:This|It) is the default\b(.*)$", re.DOTALL
)
"""An entry whose description says it is the default ("ort: This is the default merge ...")."""


def default_entry(text: str, terms: Sequence[str]) -> list[tuple[int, int]]:
    """For a question about a default (``terms``: its key terms, "default" among them), where
    ``text`` names the entry that says it is that default (another of the terms following):
    the default, whatever its kind (a strategy's name, not a number)."""
    if "default" not in terms:
        return []
    entry = _DEFAULT_ENTRY.match(text)
    wanted = {t for t in terms if t != "default"}
    if (
        entry is None
        or not {porter_stem(w) for w in re.findall(r"[a-z]+", entry.group(2).lower())} & wanted
    ):
        return []
    return [entry.span(1)]


_MARKED_DEFAULT = re.compile(r"\s*\((?:the |by )?default\)")


def marked_default(text: str, at: int) -> bool:
    """Whether the value ending at ``at`` is marked as the default among others the text
    lists ("100,000 bytes through 900,000 bytes (the default)")."""
    return _MARKED_DEFAULT.match(text, at) is not None


def parameter_defaults(text: str, question: _Asked) -> list[tuple[int, int]]:
    """Where ``text`` gives the default of a parameter a "what is the default X" question
    names, as the signature an entry opens with writes it: the span of ``128`` in
    ``lru_cache(maxsize=128, typed=False): Decorator ...`` (not a call in a sentence, "Returns
    the same as lru_cache(maxsize=None)"), or as a parameter's entry opens
    (``max_overflow=10 - the number of connections ...``). None for a question that asks no
    default."""
    if question.kind != "quantity" or "default" not in question.terms:
        return []
    head = _SIGNATURE_HEAD.match(text) or _DEFAULTED_ENTRY.match(text)
    if head is None:
        return []
    words = {w for w in tokenize(question.text) if w not in STOPWORDS and len(w) > 2}
    words.discard("default")  # "default=None" is a parameter named default
    named = {n.lower() for n in question.identifiers}  # "max_overflow", read as two words
    return [
        m.span(2)
        for m in _PARAMETER_DEFAULT.finditer(text, 0, head.end())
        if m.group(1).lower() in words | named
    ]


_SIGNATURE_HEAD = re.compile(r"^@?[A-Za-z_$][\w.$]*\(.*?\)(?=:\s)")
"""An API entry's signature: ``name(...)`` up to the ``: `` its description follows."""
_DEFAULTED_ENTRY = re.compile(r"^[A-Za-z_]\w*\s*=\s*[^\s,)\]}]+(?= [\u2013\u2014-] )")
"""A parameter's entry written with its default: ``pool_recycle=-1 - this setting causes the
pool to recycle connections ...``."""
_PARAMETER_DEFAULT = re.compile(r"(?<![\w.$])([A-Za-z_]\w*)\s*=\s*([^\s,)\]}]+)")
