"""Episodic memory: reflections on failures, kept in a store per agent type and per user.

Every failed action's reflection is stored and found again for a similar action;
``kforge.memory.reflexion`` writes the reflections.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal
from urllib.parse import quote

from kforge import jsoncodec
from kforge.errors import ValidationError
from kforge.frames import Reflection, utc_now
from kforge.llm.types import ToolCall
from kforge.store.documents import DocumentStore

__all__ = [
    "EpisodicMemory",
    "FailureKind",
    "ReflectionRecord",
    "action_similarity",
    "call_key",
]

log = logging.getLogger(__name__)

FailureKind = Literal["tool", "check"]
"""``tool``: a tool call failed; ``check``: a check on a result (a grade, a validation) failed."""


@dataclass(frozen=True, slots=True)
class ReflectionRecord:
    """One reflection as kept in episodic memory."""

    id: str
    error_type: str
    failed_action: ToolCall
    error: str
    analysis: str
    suggested_fix: str
    kind: FailureKind = "tool"
    created_at: datetime = field(default_factory=utc_now)
    repeated: bool = False
    """True when this error type was already in memory when the reflection was made."""
    applied: bool = False
    """True once a later attempt used the suggested fix."""
    run_id: str = ""

    def to_frame(self) -> Reflection:
        return Reflection(
            reflection_id=self.id,
            error_type=self.error_type,
            failed_action={**_action_dict(self.failed_action), "error": self.error},
            analysis=self.analysis,
            suggested_fix=self.suggested_fix,
            repeated=self.repeated,
        )


class EpisodicMemory:
    """Reflections of one agent type for one user, persisted as documents in a store.

    Everything is read from the store on each call, so several runs (and processes sharing a
    database) see each other's reflections. The oldest are evicted past ``max_reflections``.
    """

    def __init__(
        self,
        store: DocumentStore,
        *,
        agent_type: str,
        user_id: str = "default",
        max_reflections: int = 200,
    ) -> None:
        if not agent_type:
            raise ValidationError("episodic memory: agent_type must name the agent (got '')")
        if max_reflections < 1:
            raise ValidationError(
                f"episodic memory: max_reflections must be at least 1 (got {max_reflections})"
            )
        self.store = store
        self.agent_type = agent_type
        self.user_id = user_id
        self.max_reflections = max_reflections

    @property
    def namespace(self) -> str:
        return f"reflexion/{quote(self.agent_type, safe='')}/{quote(self.user_id, safe='')}"

    # -- reading ------------------------------------------------------------------------------

    def reflections(self) -> list[ReflectionRecord]:
        """Every stored reflection, oldest first; unreadable documents are skipped and logged."""
        records = []
        for key, doc in self.store.get_docs(self.namespace).items():
            try:
                records.append(_record(doc))
            except ValidationError as exc:
                log.warning(
                    "episodic memory %s: skipping document %s: %s", self.namespace, key, exc
                )
        return sorted(records, key=lambda r: (r.created_at, r.id))

    def error_counts(self) -> dict[str, int]:
        return dict(Counter(r.error_type for r in self.reflections()))

    def is_repeated(self, error_type: str) -> bool:
        """True when a reflection with this error type is already in memory."""
        return self.error_counts().get(error_type, 0) > 0

    def relevant(
        self, action: ToolCall, *, limit: int = 3, min_score: float = 0.5
    ) -> list[ReflectionRecord]:
        """Reflections on actions similar to ``action``: best match first, newer before older."""
        scored = [(action_similarity(action, r.failed_action), r) for r in self.reflections()]
        kept = [(s, r) for s, r in scored if s >= min_score]
        kept.sort(key=lambda sr: (sr[0], sr[1].created_at), reverse=True)
        return [r for _, r in kept[:limit]]

    def failed_calls(self) -> list[ToolCall]:
        return [r.failed_action for r in self.reflections()]

    # -- writing ------------------------------------------------------------------------------

    def save(self, record: ReflectionRecord) -> None:
        """Insert or replace ``record`` (saving the same id twice keeps one copy)."""
        self.store.put_docs(self.namespace, {record.id: jsoncodec.to_builtins(record)})
        records = self.reflections()
        excess = len(records) - self.max_reflections
        if excess > 0:
            self.store.delete_docs(self.namespace, [r.id for r in records[:excess]])

    def mark_applied(self, reflection_id: str) -> ReflectionRecord:
        docs = self.store.get_docs(self.namespace, [reflection_id])
        if reflection_id not in docs:
            raise ValidationError(
                f"episodic memory {self.namespace}: no reflection with id '{reflection_id}'"
            )
        updated = replace(_record(docs[reflection_id]), applied=True)
        self.store.put_docs(self.namespace, {updated.id: jsoncodec.to_builtins(updated)})
        return updated

    def clear(self) -> None:
        self.store.delete_docs(self.namespace)


# -- similarity ---------------------------------------------------------------------------------


def action_similarity(a: ToolCall, b: ToolCall) -> float:
    """0 for different tools; otherwise 0.5 plus half the similarity of the arguments (0..1).

    Arguments are compared key by key: equal values score 1, other values by the overlap of
    their words (Jaccard), keys present in only one call score 0.
    """
    if a.name != b.name:
        return 0.0
    keys = set(a.arguments) | set(b.arguments)
    if not keys:
        return 1.0
    total = 0.0
    for key in keys:
        if key in a.arguments and key in b.arguments:
            total += _value_similarity(a.arguments[key], b.arguments[key])
    return 0.5 + 0.5 * total / len(keys)


def _value_similarity(x: Any, y: Any) -> float:
    left, right = _canonical(x), _canonical(y)
    if left == right:
        return 1.0
    wx, wy = set(re.findall(r"\w+", left.lower())), set(re.findall(r"\w+", right.lower()))
    return len(wx & wy) / len(wx | wy) if wx | wy else 0.0


def _canonical(value: Any) -> str:
    return jsoncodec.dumps(value, sort_keys=True, default=str, spaced=True)


def _record(document: Any) -> ReflectionRecord:
    """The reflection a stored document holds; ``ValidationError`` saying what does not fit."""
    try:
        return jsoncodec.convert(document, ReflectionRecord)
    except ValueError as exc:
        raise ValidationError(f"reflection record is malformed: {exc}") from None


def _action_dict(call: ToolCall) -> dict[str, Any]:
    return {"name": call.name, "arguments": dict(call.arguments)}


def call_key(call: ToolCall) -> str:
    """Canonical JSON of a call's name and arguments: equal keys mean the identical call."""
    return _canonical(_action_dict(call))
