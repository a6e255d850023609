"""The Research agent's phase context: categories, questions, answers, sources, insights and
frontier, kept with the run and restored on resume."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import Any

from kforge.engine.phases import PhaseContext

__all__ = [
    "FUNCTION_WORDS",
    "QUESTION_WORDS",
    "ResearchPhase",
    "ResearchPhaseContext",
    "clean_question",
    "dedupe_sentences",
    "is_question",
    "slug",
    "topic_name",
    "usable_text",
]


class ResearchPhase(enum.Enum):
    DECOMPOSE = "decompose"
    ANSWER = "answer"
    RISE_ABOVE = "rise_above"
    EXPAND = "expand"
    COMPLETE = "complete"


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


def _words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z'-]+", text)}


def dedupe_sentences(text: str, limit: int = 5) -> str:
    """Drop repeated sentences (small models loop) and keep at most ``limit``."""
    seen: set[str] = set()
    kept: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        key = " ".join(sorted(_words(sentence)))
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
    if len(_words(text)) < 4:
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


@dataclass
class ResearchPhaseContext(PhaseContext):
    """Everything the Research agent has found so far. Records are JSON objects:

    category: {id, name, question_ids}; question: {id, text, category_id};
    source: {id, chunk_id, file, location, heading, page, start, end, snippet};
    answer: {text, segments: [{text, source_id}], source_ids, fallback, disclaimer, queries, path};
    adjacent: {question, why}.
    """

    # DECOMPOSE
    categories: list[dict[str, Any]] = field(default_factory=list)
    questions: list[dict[str, Any]] = field(default_factory=list)
    focus: list[dict[str, Any]] = field(default_factory=list)
    """The focus of the question and of each of its parts in the corpus (``Focus.to_dict``):
    what a sub-question or a category the model proposes must be about."""
    documents: list[str] = field(default_factory=list)
    """The document most relevant to the question (``main_document``): searched on its own
    for every sub-question, so it is never left to the Frontier."""
    # ANSWER
    answered_questions: list[str] = field(default_factory=list)
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: list[dict[str, Any]] = field(default_factory=list)
    discovered_categories: list[str] = field(default_factory=list)
    """Categories found while answering or synthesising, not yet decomposed."""
    # RISE_ABOVE
    category_insights: dict[str, str] = field(default_factory=dict)
    insight_segments: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Each insight's sentences with the source each rests on: ``{"text", "source_id"}``."""
    synthesized_categories: list[str] = field(default_factory=list)
    needs_more_answers: bool = False
    # EXPAND
    adjacent_questions: list[dict[str, Any]] = field(default_factory=list)
    expanded: bool = False
    # bounds on backward transitions
    backtracks: dict[str, int] = field(default_factory=dict)

    def category(self, category_id: str) -> dict[str, Any] | None:
        return next((c for c in self.categories if c["id"] == category_id), None)

    def question(self, question_id: str) -> dict[str, Any] | None:
        return next((q for q in self.questions if q["id"] == question_id), None)

    def category_name(self, category_id: str) -> str:
        category = self.category(category_id)
        return category["name"] if category is not None else category_id

    def question_texts(self, category: dict[str, Any]) -> list[str]:
        return [q["text"] for q in self.questions if q["id"] in category["question_ids"]]

    def unanswered(self) -> list[dict[str, Any]]:
        done = set(self.answered_questions)
        return [q for q in self.questions if q["id"] not in done]

    def source(self, source_id: str) -> dict[str, Any] | None:
        return next((s for s in self.sources if s["id"] == source_id), None)

    def add_category(self, name: str) -> dict[str, Any]:
        name = " ".join(name.split())[:80]
        existing = next((c for c in self.categories if c["name"].lower() == name.lower()), None)
        if existing is not None:
            return existing
        category = {
            "id": slug(name, {c["id"] for c in self.categories}, "c-"),
            "name": name,
            "question_ids": [],
        }
        self.categories.append(category)
        return category

    def add_question(self, category: dict[str, Any], text: str) -> dict[str, Any] | None:
        raw = " ".join(str(text).split())
        text = clean_question(raw)
        if len(text) < 4 or not is_question(re.sub(r"^(\d+[.)]\s*)+", "", raw)):
            return None  # not a question (e.g. a statement the model wrote instead)
        words = _words(text)
        for q in self.questions:
            other = _words(q["text"])
            if q["text"].lower() == text.lower() or len(words & other) / len(words | other) >= 0.75:
                return None  # the same question again, in other words
        question = {
            "id": slug(text, {q["id"] for q in self.questions}, "q-"),
            "text": text,
            "category_id": category["id"],
        }
        self.questions.append(question)
        category["question_ids"].append(question["id"])
        return question

    def remove_question(self, question_id: str) -> None:
        self.questions = [q for q in self.questions if q["id"] != question_id]
        for category in self.categories:
            if question_id in category["question_ids"]:
                category["question_ids"].remove(question_id)
        self.answered_questions = [a for a in self.answered_questions if a != question_id]
        self.answers.pop(question_id, None)

    def edit_tree(self, modifications: dict[str, Any]) -> None:
        """A person's edit at the checkpoint: ``categories`` replaces the tree,
        ``add_questions`` and ``remove_questions`` (by text or id) change it."""
        if "categories" in modifications:
            self.categories, self.questions = [], []
            for item in modifications["categories"] or []:
                category = self.add_category(str(item.get("name", "Untitled")))
                for text in item.get("questions", []):
                    self.add_question(category, str(text))
        for item in modifications.get("add_questions", []) or []:
            category = self.add_category(str(item.get("category", "Added")))
            self.add_question(category, str(item.get("question", "")))
        for ref in modifications.get("remove_questions", []) or []:
            match = next((q for q in self.questions if q["id"] == ref or q["text"] == ref), None)
            if match is not None:
                self.remove_question(match["id"])
        self.categories = [c for c in self.categories if c["question_ids"]]
