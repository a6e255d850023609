"""Multi-turn conversations: a chat session is a ``session_id``; each turn is a run of
the router agent, and the earlier turns of its session inform routing and answers.

A question is searched with the conversation's topic folded in only when it refers back to
it: it opens with "and", "also", "but", "so", "what about", "how about" or "what else"; a
pronoun (it, they, this, that, those, …) is its subject (among its first three words) or its
object (its last word); or it names nothing at all ("Why?"). The topic is the last question,
after those it followed up itself. A short question (at most ``SHORT_FOLLOW_UP`` focus terms)
that does none of these is searched both ways, and the folded search wins only when a passage
it finds holds half of the question's focus and half of the topic's ("What is the default?"
after a question on ``highWaterMark``); any other question is searched on its own, so a
standalone question after an unrelated one is not steered by it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kforge.engine.run_context import RunContext
from kforge.errors import ValidationError
from kforge.rag.corpus import Corpus
from kforge.rag.focus import FOCUS_SHARE, CorpusStatistics, passage_text, question_focus

__all__ = [
    "SHORT_FOLLOW_UP",
    "Turn",
    "folded_question",
    "format_history",
    "is_short",
    "load_session_turns",
    "refers_back",
    "search_question",
    "topic",
    "turns_from_args",
]

SHORT_FOLLOW_UP = 3
"""A question with at most this many focus terms may be a follow-up without saying so."""
_OPENER = re.compile(
    r"^\W*(?:and|also|but|so|or|plus|what\s+about|how\s+about|what\s+else)\b", re.I
)
_PRONOUNS = frozenset(
    {
        *("it", "its", "they", "them", "their", "theirs", "this", "that", "these", "those"),
        *("he", "she", "him", "her", "his", "one", "ones"),
    }
)
_SUBJECT_WORDS = 3
_TOPIC_TURNS = 3
_FOLLOW_UP_HITS = 5

_ANSWER_CHARS = 600
_MAX_TURNS = 6


@dataclass(frozen=True, slots=True)
class Turn:
    """One finished exchange of a conversation."""

    question: str
    answer: str

    @classmethod
    def from_dict(cls, data: Any) -> Turn:
        if not isinstance(data, dict):
            raise ValidationError(
                f"a conversation turn must be an object with 'question' and 'answer' (got {data!r:.80})"
            )
        question, answer = data.get("question"), data.get("answer", "")
        if not isinstance(question, str) or not isinstance(answer, str):
            raise ValidationError("a conversation turn needs 'question' and 'answer' as text")
        return cls(question, answer)


def turns_from_args(value: Any) -> list[Turn]:
    """The ``history`` argument of a run: a list of ``{"question", "answer"}`` objects."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValidationError("'history' must be a list of {question, answer} objects")
    return [Turn.from_dict(item) for item in value]


async def load_session_turns(ctx: RunContext, agent_type: str) -> list[Turn] | None:
    """The earlier turns of the run's session; None when the run has no session. Recorded, so
    a re-executed step sees the same turns."""
    sessions = ctx.services.sessions
    if sessions is None or not sessions.session_id:
        return None
    payload = await ctx.step("conversation.loaded", lambda: {"turns": sessions.turns(agent_type)})
    return turns_from_args(payload.get("turns"))


def format_history(turns: Sequence[Turn], *, max_turns: int = _MAX_TURNS) -> str:
    """The latest turns as prompt text (answers shortened); empty when there are none."""
    if not turns:
        return ""
    lines = ["Conversation so far:"]
    for turn in turns[-max_turns:]:
        answer = " ".join(turn.answer.split())
        if len(answer) > _ANSWER_CHARS:
            answer = answer[: _ANSWER_CHARS - 1] + "…"
        lines.append(f"User: {turn.question}")
        lines.append(f"Assistant: {answer}")
    return "\n".join(lines)


def _words(question: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:['\u2019][a-z]+)?", question.lower())


def refers_back(question: str) -> bool:
    """True when ``question`` points back at the conversation (see the module docstring)."""
    if _OPENER.match(question):
        return True
    words = _words(question)
    if any(w in _PRONOUNS for w in words[:_SUBJECT_WORDS]) or (words and words[-1] in _PRONOUNS):
        return True
    return not question_focus(question).terms


def is_short(question: str) -> bool:
    """True when ``question`` names at most ``SHORT_FOLLOW_UP`` focus terms."""
    return len(question_focus(question).terms) <= SHORT_FOLLOW_UP


def topic(turns: Sequence[Turn]) -> str:
    """What the conversation is about: the last question, after the ones it follows up
    (at most ``_TOPIC_TURNS`` of them)."""
    asked: list[str] = []
    for turn in reversed(turns[-_TOPIC_TURNS:]):
        asked.insert(0, turn.question)
        if not refers_back(turn.question):
            break
    return " ".join(asked)


def folded_question(question: str, turns: Sequence[Turn]) -> str:
    """``question`` after the conversation's ``topic``, for a search that follows up."""
    return f"{topic(turns)} {question}" if turns else question


def search_question(corpus: Corpus, question: str, turns: Sequence[Turn]) -> str:
    """What to search for ``question`` in a conversation: folded with the topic when it refers
    back, or when it is short and the folded search finds both (see the module docstring)."""
    if not turns:
        return question
    folded = folded_question(question, turns)
    if refers_back(question) or (is_short(question) and _follows_up(corpus, question, turns)):
        return folded
    return question


def _follows_up(corpus: Corpus, question: str, turns: Sequence[Turn]) -> bool:
    """True when a search for the folded question finds a passage that holds half of the
    question's focus and half of the topic's (by weight): the question continues the topic."""
    statistics = CorpusStatistics.of(corpus) if len(corpus) else None
    own = question_focus(question, statistics)
    earlier = question_focus(topic(turns), statistics)
    if not own.terms or not {t.match for t in earlier.terms} - {t.match for t in own.terms}:
        return False
    for hit in corpus.search(folded_question(question, turns), _FOLLOW_UP_HITS):
        text = passage_text(hit.chunk)
        if own.share(text) >= FOCUS_SHARE and earlier.share(text) >= FOCUS_SHARE:
            return True
    return False
