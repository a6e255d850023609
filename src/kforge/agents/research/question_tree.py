"""The Research agent's phase context: categories, questions, answers, sources, insights and
frontier, kept with the run and restored on resume."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import Any

from kforge.agents.common.naming import clean_question, is_question, slug, words_of
from kforge.engine.phases import PhaseContext

__all__ = ["ResearchPhase", "ResearchPhaseContext"]


class ResearchPhase(enum.Enum):
    DECOMPOSE = "decompose"
    ANSWER = "answer"
    RISE_ABOVE = "rise_above"
    EXPAND = "expand"
    COMPLETE = "complete"


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
    """The focus of the question and of each of its parts in the corpus (a ``Focus`` as JSON values):
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
    insight_gaps: dict[str, str] = field(default_factory=dict)
    """Why a category's insight is empty, by category id (the report says it)."""
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
        words = words_of(text)
        for q in self.questions:
            other = words_of(q["text"])
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
