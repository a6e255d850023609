"""Names and questions from text, for any agent: topic names from titles, headings or model
output, slugs for ids, questions cleaned of numbering and markup, and whether two names are
variants of one another or overlap."""

from __future__ import annotations

import re
from collections.abc import Iterable

from kforge.rag.analyze import STOPWORDS
from kforge.rag.stem import porter_stem

__all__ = [
    "FUNCTION_WORDS",
    "QUESTION_WORDS",
    "clean_question",
    "dedupe_sentences",
    "is_question",
    "is_variant",
    "name_terms",
    "normalized",
    "occurs_in",
    "overlaps",
    "slug",
    "topic_name",
    "usable_text",
    "words_of",
]


def slug(text: str, taken: set[str] | None = None, prefix: str = "") -> str:
    base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "item"
    candidate = f"{prefix}{base}"
    n = 2
    while taken is not None and candidate in taken:
        candidate = f"{prefix}{base}-{n}"
        n += 1
    return candidate


QUESTION_WORDS = frozenset(
    [
        "what",
        "how",
        "why",
        "when",
        "which",
        "who",
        "whom",
        "whose",
        "where",
        "can",
        "could",
        "does",
        "do",
        "did",
        "is",
        "are",
        "was",
        "were",
        "should",
        "would",
        "will",
        "may",
        "might",
    ]
)
_NOT_TOPICS = frozenset(
    {
        "research question",
        "question",
        "category",
        "categories",
        "topic",
        "new category",
        "none",
        "empty",
        "n/a",
        "unknown",
        "1 to 4 words",
        "missing category",
    }
)


FUNCTION_WORDS = frozenset(
    re.findall(
        r"[a-z']+",
        """a about above after again all also an and any are as at back be because been before
        below between both but by can could did do does each even every few for from get gets
        give gives got had has have here how i if in into is it its it's just least less like
        many may might more most much must my never no not now of off on one only or other our
        out over own same should since so some still such than that the their them then there
        these they this those through to too under until upon very was we were what when where
        which while who whom whose why will with would you your""",
    )
)
"""Words that name nothing on their own ("before", "each", "what")."""


def words_of(text: str) -> set[str]:
    """The words of ``text``, lowercased (for overlap between questions)."""
    return {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z'-]+", text)}


def dedupe_sentences(text: str, limit: int = 5) -> str:
    """Drop repeated sentences (small models loop) and keep at most ``limit``."""
    seen: set[str] = set()
    kept: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        key = " ".join(sorted(words_of(sentence)))
        if not key or key in seen:
            continue
        seen.add(key)
        kept.append(sentence)
        if len(kept) >= limit:
            break
    return " ".join(kept)


def clean_question(text: str) -> str:
    """A tidy question, or "" when the text is not a usable question (e.g. "1.1.1.1")."""
    text = " ".join(str(text).split()).strip(" -*\"'")
    text = re.sub(r"^(\d+[.)]\s*)+", "", text)
    words = re.findall(r"[A-Za-z][A-Za-z'-]+", text)
    if len(words) < 3 or len(set(w.lower() for w in words)) < 3:
        return ""
    if text.count("?") > 1 or re.search(r"\b[QA]:", text) or len(text) > 200:
        return ""  # several questions run together, or a transcript echoed back
    if not text.endswith("?"):
        text = text.rstrip(".") + "?"
    return text


def usable_text(text: str) -> str:
    """The text with whitespace tidied, or "" when it is degenerate (too few distinct words,
    e.g. "n" or "1.1.1.1")."""
    text = dedupe_sentences(" ".join(str(text).split()))
    text = re.sub(r"\b[QA]:\s*", "", text)
    if len(words_of(text)) < 4:
        return ""
    return text


_SECTION_NUMBER = re.compile(
    r"^(?:(?:chapter|section|appendix|part)\s+)?"
    # each run of digits ends at a dot or at the number's end, so a long number that is no
    # section number ("10.2023.2023.2023.20") fails at once rather than in every split of it
    r"(?:\d+\.(?:\d+\.)*(?:\d+)?|\d+(?:\.\d+)+|[A-Z]\.(?:\d+\.)*(?:\d+)?)\s+(?=\S)",
    re.IGNORECASE,
)
_DASH = re.compile(r"\s+[-\u2013\u2014|]\s+")
_LABELS = frozenset(
    ["class", "event", "module", "method", "function", "chapter", "section", "appendix", "part"]
)
_ARTICLES = frozenset(["a", "an", "the"])
_FILE_NAME = re.compile(r"\w\.(?:md|txt|html?|rst|adoc|pdf|json|ya?ml|py|toml|cfg)\b", re.I)


def _main_title(title: str) -> str:
    """The title without its subtitle: one in parentheses at the end, after a dash, or after a
    colon ("Agent Architectures: An Overview"); after a colon the part that names the subject
    is kept ("GNU gettext utilities: 10. Producing Binary MO Files", "Class: Worker")."""
    name = re.sub(r"\s*\([^()]+\)\s*$", "", title).strip() or title
    if "(" in name and ")" not in name.split("(")[-1]:  # a parenthesis cut short
        name = name.rsplit("(", 1)[0].strip() or name
    name = next((p for p in _DASH.split(name) if p.strip(" -*\"'`")), name)
    while re.search(r":\s", name):
        before, after = re.split(r":\s+", name, maxsplit=1)
        first = after.split(maxsplit=1)[0] if after.split() else ""
        words = before.split()
        if not after.strip() or not before.strip():
            name = before.strip() or after.strip()
        elif _SECTION_NUMBER.match(after) or (
            first[:1].isupper()
            and first.lower() not in _ARTICLES
            and (len(words) >= 3 or (len(words) == 1 and words[0].lower() in _LABELS))
        ):
            name = after
        elif first[:1].islower() or first.lower() in _ARTICLES or len(words) < 3:
            name = before
        else:
            name = after
    return _SECTION_NUMBER.sub("", name.strip())


def topic_name(value: object) -> str:
    """A topic name from a title, a heading or model output, or "" when it is not one: a
    subtitle and a leading section number are split off ("The Closure API (libffi: the
    portable foreign function interface library)" -> "The Closure API"); questions, paths,
    file names, bare numbers and echoes of the instructions are not topics."""
    text = " ".join(str(value).split()).strip(" .,:-*\"'`")
    if not text or text.endswith("?") or re.search(r"[/\\<>{}]", text):
        return ""  # a question or a path, not a topic
    name = _main_title(text).strip(" .,:;-*\"'`")
    words = re.findall(r"[A-Za-z][A-Za-z'-]{2,}", name)
    if not words or len(name) > 80 or len(name.split()) > 8:
        return ""
    if _FILE_NAME.search(name) or (name.split()[0].lower() in QUESTION_WORDS and "?" in text):
        return ""
    if name.lower() in _NOT_TOPICS:
        return ""  # the model echoed the instructions
    if all(w.lower() in FUNCTION_WORDS for w in re.findall(r"[A-Za-z']+", name)):
        return ""  # "What", "Each": no subject at all
    return name


def is_question(text: str) -> bool:
    """Starts with a question word or ends with a question mark."""
    first = text.split(maxsplit=1)[0].lower() if text.split() else ""
    return text.rstrip().endswith("?") or first in QUESTION_WORDS


_GENERIC = frozenset(
    ["category", "categories", "topic", "topics", "section", "overview", "misc", "general"]
)


def normalized(text: str) -> str:
    """Lowercase words separated by single spaces: camelCase, snake_case and kebab-case split."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def name_terms(name: str) -> set[str]:
    """A name's content words, stemmed, without generic words such as "category"."""
    words = normalized(name).split()
    return {porter_stem(w) for w in words if w not in STOPWORDS and w not in _GENERIC}


def is_variant(name: str, others: Iterable[str]) -> bool:
    """``name`` joins several names (a list), or is a case, slug or join variant of one of
    ``others``: the same content words, or the same letters run together."""
    if "," in name or not name_terms(name):
        return True
    terms = name_terms(name)
    joined = "".join(normalized(name).split())
    for other in others:
        known = name_terms(other)
        if not known:
            continue
        if terms == known:
            return True
        if joined == "".join(normalized(other).split()):
            return True
    return False


def overlaps(name: str, others: Iterable[str]) -> bool:
    """``name`` shares half its content words or more with one of ``others`` (a narrower or
    broader name for the same thing: "Worker Threads" beside "Worker thread in Node.js")."""
    terms = name_terms(name)
    for other in others:
        known = name_terms(other)
        if terms and known and len(terms & known) / len(terms | known) >= 0.5:
            return True
    return False


def occurs_in(name: str, text: str, *, words: bool = False) -> bool:
    """The name is said in ``text`` as a phrase (case, punctuation and spacing aside); with
    ``words`` (a name made from a question's words), every content word of it (stemmed) is."""
    phrase = normalized(name)
    if phrase and f" {phrase} " in f" {normalized(text)} ":
        return True
    terms = name_terms(name)
    if not words:
        return False
    return bool(terms) and terms <= {porter_stem(w) for w in normalized(text).split()}
