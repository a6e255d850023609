"""The Research agent's phase prompts and the JSON Schemas its decisions are constrained to."""

from __future__ import annotations

from typing import Any

__all__ = [
    "ANSWER_SCHEMA",
    "DECOMPOSE_SCHEMA",
    "EXPAND_SCHEMA",
    "INITIAL_PROMPTS",
    "INSIGHT_SCHEMA",
    "NEW_CATEGORY_SCHEMA",
]

INITIAL_PROMPTS: dict[str, str] = {
    "decompose": (
        "You are a research assistant. Break the user's research question into 2 or 3 "
        "categories. For each category write 1 or 2 short, specific questions that together "
        "answer the research question. Reply in JSON."
    ),
    "answer": (
        "You are a research assistant. Answer the question using only the numbered sources. "
        "Write 2 to 4 sentences. If the sources show a topic that none of the existing "
        "categories covers, name it in new_category; otherwise leave new_category empty. "
        "Reply in JSON."
    ),
    "rise_above": (
        "You are a research assistant. Read the answers in one category and write the insight "
        "they add up to in 2 or 3 sentences. Set needs_more_answers to true only if an "
        "important question is clearly missing, and write it in follow_up_question. Name a "
        "missing category only if the answers show one. Reply in JSON."
    ),
    "expand": (
        "You are a research assistant. Given the research question and what was found, list up "
        "to 4 adjacent questions worth exploring next, each with one sentence on why. "
        "Reply in JSON."
    ),
}

_short_text: dict[str, Any] = {"type": "string", "maxLength": 160}

DECOMPOSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "categories": {
            "type": "array",
            "minItems": 1,
            "maxItems": 3,
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "maxLength": 60},
                    "questions": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": 2,
                        "items": _short_text,
                    },
                },
                "required": ["name", "questions"],
            },
        }
    },
    "required": ["categories"],
}

NEW_CATEGORY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "questions": {"type": "array", "minItems": 1, "maxItems": 3, "items": _short_text}
    },
    "required": ["questions"],
}

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "maxLength": 700},
        "new_category": {"type": "string", "maxLength": 60},
    },
    "required": ["answer", "new_category"],
}

INSIGHT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "insight": {"type": "string", "maxLength": 600},
        "needs_more_answers": {"type": "boolean"},
        "follow_up_question": {"type": "string", "maxLength": 160},
        "missing_category": {"type": "string", "maxLength": 60},
    },
    "required": ["insight", "needs_more_answers", "follow_up_question", "missing_category"],
}

EXPAND_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "questions": {
            "type": "array",
            "maxItems": 4,
            "items": {
                "type": "object",
                "properties": {
                    "question": _short_text,
                    "why": {"type": "string", "maxLength": 200},
                },
                "required": ["question", "why"],
            },
        }
    },
    "required": ["questions"],
}
