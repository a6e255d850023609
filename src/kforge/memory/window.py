"""The agent's context window: a grounding section that is always kept, plus history entries.

Compaction (``kforge.memory.compaction``) shrinks the history and never the grounding.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal, get_args

from kforge import jsoncodec
from kforge.errors import ConfigurationError, ValidationError
from kforge.frames import utc_now
from kforge.llm.types import Message

__all__ = [
    "COMPACTION_THRESHOLD",
    "ContextEntry",
    "ContextWindow",
    "CountTokens",
    "EntryKind",
    "GroundingSection",
    "approximate_tokens",
]

CountTokens = Callable[[str], int]
"""Counts the tokens of a text; plug in a real tokenizer's counter where one is available."""

EntryKind = Literal["user", "assistant", "tool", "observation", "summary"]
"""``summary`` entries are written by compaction and stand for the entries they replaced."""

_KINDS: frozenset[str] = frozenset(get_args(EntryKind))

COMPACTION_THRESHOLD = 0.8
"""Compaction is due once the context holds more than this share of the model's window."""

_FORMAT_VERSION = 1


def approximate_tokens(text: str) -> int:
    """About four characters per token: ``ceil(len(text) / 4)``, 0 for the empty string."""
    return math.ceil(len(text) / 4)


@dataclass(frozen=True, slots=True)
class GroundingSection:
    """What the agent must never lose sight of, rendered first in every prompt."""

    current_goal: str
    completed_subtasks: tuple[str, ...] = ()
    key_decisions: tuple[str, ...] = ()
    user_preferences: tuple[tuple[str, str], ...] = ()
    """(name, value) pairs in the order they were set; a name appears at most once."""

    def with_completed_subtask(self, subtask: str) -> GroundingSection:
        return replace(self, completed_subtasks=(*self.completed_subtasks, subtask))

    def with_decision(self, decision: str) -> GroundingSection:
        return replace(self, key_decisions=(*self.key_decisions, decision))

    def with_preference(self, name: str, value: str) -> GroundingSection:
        kept = tuple((k, v) for k, v in self.user_preferences if k != name)
        return replace(self, user_preferences=(*kept, (name, value)))

    def preferences(self) -> dict[str, str]:
        return dict(self.user_preferences)

    def render(self) -> str:
        lines = ["<grounding>", f"Current goal: {self.current_goal}"]
        if self.completed_subtasks:
            lines.append("Completed subtasks:")
            lines.extend(f"- {s}" for s in self.completed_subtasks)
        if self.key_decisions:
            lines.append("Key decisions:")
            lines.extend(f"- {d}" for d in self.key_decisions)
        if self.user_preferences:
            lines.append("User preferences:")
            lines.extend(f"- {k}: {v}" for k, v in self.user_preferences)
        lines.append("</grounding>")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "current_goal": self.current_goal,
            "completed_subtasks": list(self.completed_subtasks),
            "key_decisions": list(self.key_decisions),
            "user_preferences": dict(self.user_preferences),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GroundingSection:
        goal = data.get("current_goal")
        if not isinstance(goal, str):
            raise ValidationError("grounding: 'current_goal' must be a string")
        prefs = data.get("user_preferences") or {}
        if not isinstance(prefs, Mapping):
            raise ValidationError("grounding: 'user_preferences' must be an object of strings")
        return cls(
            current_goal=goal,
            completed_subtasks=_strings(data.get("completed_subtasks"), "completed_subtasks"),
            key_decisions=_strings(data.get("key_decisions"), "key_decisions"),
            user_preferences=tuple((str(k), str(v)) for k, v in prefs.items()),
        )


@dataclass(frozen=True, slots=True)
class ContextEntry:
    kind: EntryKind
    content: str
    token_count: int
    """Tokens of ``content`` as counted when the entry was added."""
    timestamp: datetime = field(default_factory=utc_now)
    compacted: bool = False
    """True for entries written by compaction in place of older ones."""
    name: str | None = None
    """The tool's name for ``tool`` entries."""

    def render(self) -> str:
        label = f"{self.kind}:{self.name}" if self.name else self.kind
        return f"[{label}] {self.content}"


class ContextWindow:
    """Grounding plus history, measured in tokens against the model's window.

    ``token_count`` is the grounding's tokens plus each entry's ``token_count``; it is the number
    that ``needs_compaction`` and the compaction guarantee refer to.
    """

    def __init__(
        self,
        grounding: GroundingSection,
        *,
        max_tokens: int,
        history: Iterable[ContextEntry] = (),
        count_tokens: CountTokens = approximate_tokens,
        threshold: float = COMPACTION_THRESHOLD,
    ) -> None:
        if max_tokens <= 0:
            raise ConfigurationError(
                f"context window: max_tokens must be the model's window size, a positive "
                f"integer (got {max_tokens})"
            )
        if not 0.0 < threshold <= 1.0:
            raise ConfigurationError(
                f"context window: threshold must be a share of the window in (0, 1] "
                f"(got {threshold})"
            )
        self.grounding = grounding
        self.max_tokens = max_tokens
        self.threshold = threshold
        self.count_tokens = count_tokens
        self.history: list[ContextEntry] = list(history)

    @classmethod
    def create(
        cls,
        goal: str,
        max_tokens: int,
        *,
        count_tokens: CountTokens = approximate_tokens,
        threshold: float = COMPACTION_THRESHOLD,
    ) -> ContextWindow:
        return cls(
            GroundingSection(current_goal=goal),
            max_tokens=max_tokens,
            count_tokens=count_tokens,
            threshold=threshold,
        )

    # -- growing ------------------------------------------------------------------------------

    def add(
        self,
        kind: EntryKind,
        content: str,
        *,
        name: str | None = None,
        timestamp: datetime | None = None,
    ) -> ContextEntry:
        if kind not in _KINDS:
            raise ValidationError(
                f"context entry: kind must be one of {', '.join(sorted(_KINDS))} (got {kind!r})"
            )
        entry = ContextEntry(
            kind=kind,
            content=content,
            token_count=self.count_tokens(content),
            timestamp=timestamp or utc_now(),
            name=name,
        )
        self.history.append(entry)
        return entry

    def complete_subtask(self, subtask: str) -> None:
        self.grounding = self.grounding.with_completed_subtask(subtask)

    def record_decision(self, decision: str) -> None:
        self.grounding = self.grounding.with_decision(decision)

    def set_preference(self, name: str, value: str) -> None:
        self.grounding = self.grounding.with_preference(name, value)

    # -- measuring ----------------------------------------------------------------------------

    @property
    def grounding_tokens(self) -> int:
        return self.count_tokens(self.grounding.render())

    @property
    def history_tokens(self) -> int:
        return sum(e.token_count for e in self.history)

    @property
    def token_count(self) -> int:
        return self.grounding_tokens + self.history_tokens

    @property
    def usage_ratio(self) -> float:
        return self.token_count / self.max_tokens

    def needs_compaction(self, overhead: int = 0) -> bool:
        """True once the context, with the ``overhead`` tokens sent along with it (system
        prompt, tool descriptions, request), holds more than ``threshold`` (80 %) of the window."""
        return self.token_count + overhead > self.threshold * self.max_tokens

    # -- prompting ----------------------------------------------------------------------------

    def serialize(self) -> str:
        """The context as prompt text: the grounding section first, then the history."""
        parts = [self.grounding.render()]
        if self.history:
            parts.append(
                "<history>\n" + "\n".join(e.render() for e in self.history) + "\n</history>"
            )
        return "\n\n".join(parts)

    def to_messages(self, system_prompt: str = "") -> list[Message]:
        """Chat messages: one system message (``system_prompt`` then the grounding), then history.

        Tool and observation entries become user and assistant messages with a label, because
        a ``tool`` message needs the id of a native tool call that history entries do not keep.
        """
        head = (
            f"{system_prompt}\n\n{self.grounding.render()}"
            if system_prompt
            else self.grounding.render()
        )
        messages = [Message.system(head)]
        for entry in self.history:
            if entry.kind == "user":
                messages.append(Message.user(entry.content))
            elif entry.kind == "assistant":
                messages.append(Message.assistant(entry.content))
            elif entry.kind == "tool":
                messages.append(
                    Message.user(f"Tool result ({entry.name or 'tool'}): {entry.content}")
                )
            elif entry.kind == "observation":
                messages.append(Message.assistant(f"Observation: {entry.content}"))
            else:
                messages.append(Message.user(f"Summary of earlier context: {entry.content}"))
        return messages

    # -- persistence --------------------------------------------------------------------------

    def copy(self, *, history: Iterable[ContextEntry] | None = None) -> ContextWindow:
        return ContextWindow(
            self.grounding,
            max_tokens=self.max_tokens,
            history=self.history if history is None else history,
            count_tokens=self.count_tokens,
            threshold=self.threshold,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": _FORMAT_VERSION,
            "grounding": self.grounding.to_dict(),
            "history": jsoncodec.to_builtins(self.history),
            "max_tokens": self.max_tokens,
            "threshold": self.threshold,
            "token_count": self.token_count,
        }

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], *, count_tokens: CountTokens = approximate_tokens
    ) -> ContextWindow:
        """Rebuild a context saved by ``to_dict``; entry token counts are kept as saved."""
        version = data.get("version")
        if version != _FORMAT_VERSION:
            raise ValidationError(
                f"context: unsupported format version {version!r} (this kforge reads version "
                f"{_FORMAT_VERSION}); start a new session or upgrade kforge"
            )
        grounding, history = data.get("grounding"), data.get("history")
        if not isinstance(grounding, Mapping) or not isinstance(history, list):
            raise ValidationError("context: needs a 'grounding' object and a 'history' list")
        try:
            entries = jsoncodec.convert(history, list[ContextEntry])
        except ValueError as exc:
            raise ValidationError(f"context: a history entry does not fit: {exc}") from None
        if any(entry.token_count < 0 for entry in entries):
            raise ValidationError("context: an entry's 'token_count' must not be negative")
        return cls(
            GroundingSection.from_dict(grounding),
            max_tokens=int(data.get("max_tokens", 0)),
            history=entries,
            count_tokens=count_tokens,
            threshold=float(data.get("threshold", COMPACTION_THRESHOLD)),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ContextWindow):
            return NotImplemented
        return (
            self.grounding == other.grounding
            and self.history == other.history
            and self.max_tokens == other.max_tokens
            and self.threshold == other.threshold
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"ContextWindow(goal={self.grounding.current_goal!r}, entries={len(self.history)}, "
            f"tokens={self.token_count}/{self.max_tokens})"
        )


def _strings(value: Any, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValidationError(f"grounding: '{name}' must be a list of strings")
    return tuple(value)


jsoncodec.json_form(ContextWindow, ContextWindow.to_dict, ContextWindow.from_dict)
