"""What a finished run says to a person: each agent's declared result type, read from its stored
result (citations as ``Citation`` objects), and the one rendering of an answer's Sources.

An agent declares ``result_type`` (a subclass of ``AgentResult``); its ``TEXT_FIELD`` names the
one field of the stored result that holds the text a person reads, so no reader guesses it.
A result is stored as JSON (the run's record); ``load`` reads what this and earlier versions
stored, and keeps the whole stored value for the fields particular to the agent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Self

from kforge import jsoncodec
from kforge.errors import StateCorruptionError

if TYPE_CHECKING:
    from kforge.engine.registry import AgentRegistry
    from kforge.rag.types import Citation
    from kforge.store.base import RunRecord

__all__ = [
    "AgentResult",
    "BuildResult",
    "CitedAnswer",
    "Report",
    "load_citations",
    "read_result",
    "result_type_of",
    "sources_text",
]


def load_citations(stored: Any) -> tuple[Citation, ...]:
    """The citations of a stored result, as ``Citation`` objects (a stored ``Citation`` as is)."""
    if not stored:
        return ()
    # imported here: ``kforge.rag`` is heavy, and the runtime reads results without it
    from kforge.rag.types import Citation

    if not isinstance(stored, list):
        raise StateCorruptionError(
            f"a stored result's 'citations' must be a list (got {type(stored).__name__}); "
            "the run's record was written outside kforge"
        )
    found = []
    for item in stored:
        if isinstance(item, Citation):
            found.append(item)
            continue
        try:
            found.append(Citation.from_dict(item))
        except (KeyError, TypeError, ValueError) as exc:
            raise StateCorruptionError(
                f"a stored citation cannot be read ({type(exc).__name__}: {exc}): {item!r:.200}"
            ) from exc
    return tuple(found)


def sources_text(citations: Iterable[Citation]) -> str:
    """The Sources list of an answer, one citation a line (``  [2] guide.md § Setup, chars
    120-480``); empty when there are none. Every interface renders Sources with this."""
    lines = [f"  {c.label}" for c in citations]
    return "Sources:\n" + "\n".join(lines) if lines else ""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentResult:
    """A finished run's result as its agent declares it. This base reads any agent's result:
    with no declared text field, its text is the stored result as JSON."""

    TEXT_FIELD: ClassVar[str] = ""
    """The stored field holding the text a person reads ("" for none: the whole result)."""

    text: str = ""
    """The text a person reads."""
    citations: tuple[Citation, ...] = ()
    """The passages the text cites, numbered as its ``[n]`` markers."""
    stored: Mapping[str, Any] = field(default_factory=dict)
    """The whole stored result, for the fields particular to the agent."""

    @classmethod
    def load(cls, stored: Mapping[str, Any] | None) -> Self:
        data = dict(stored or {})
        if cls.TEXT_FIELD:
            value = data.get(cls.TEXT_FIELD)
            text = value if isinstance(value, str) else ""
        else:
            text = jsoncodec.dumps(data, spaced=True) if data else ""
        return cls(
            text=text,
            citations=load_citations(data.get("citations")),
            stored=data,
            **cls._particular(data),
        )

    @classmethod
    def _particular(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        """The typed fields a subclass adds, read from ``data``."""
        return {}

    def with_sources(self) -> str:
        """The text followed by the Sources its markers name (the text alone when none)."""
        sources = sources_text(self.citations)
        return f"{self.text}\n\n{sources}" if sources and self.text else self.text


@dataclass(frozen=True, slots=True, kw_only=True)
class CitedAnswer(AgentResult):
    """An answer to a question, with the passages it cites (the router, the agent tree, the
    ReAct loop)."""

    TEXT_FIELD: ClassVar[str] = "answer"
    path: str = ""
    """Which path of the answering pipeline wrote it (``extractive``, ``generated``,
    ``extractive_fallback``, ...); "" when the agent does not say."""

    @classmethod
    def _particular(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        return {"path": str(data.get("answer_path") or "")}


@dataclass(frozen=True, slots=True, kw_only=True)
class Report(AgentResult):
    """A Markdown report (Research, Understand), with its sources inside it."""

    TEXT_FIELD: ClassVar[str] = "report"


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildResult(AgentResult):
    """What Build made: its summary, and the commands that run and check the program."""

    TEXT_FIELD: ClassVar[str] = "summary"
    check_command: str = ""
    run_command: str = ""
    complete: bool = False
    """Whether every step of the plan was done (each passed its check)."""

    @classmethod
    def _particular(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "check_command": str(data.get("check_command") or ""),
            "run_command": str(data.get("run_command") or ""),
            "complete": bool(data.get("complete")),
        }


def result_type_of(registry: AgentRegistry, agent_type: str) -> type[AgentResult]:
    """The result type ``agent_type`` declares (``AgentResult`` when it declares none)."""
    factory = registry.factory(agent_type)
    # a factory may be any callable: a class declares its type as ``result_type``
    declared = getattr(factory, "result_type", None)
    if isinstance(declared, type) and issubclass(declared, AgentResult):
        return declared
    return AgentResult


def read_result(run: RunRecord, registry: AgentRegistry | None = None) -> AgentResult:
    """A run's stored result as the type its agent declares (from ``registry``, by default the
    process-wide one)."""
    if registry is None:
        from kforge.agents.builtin import default_registry

        registry = default_registry
    return result_type_of(registry, run.agent_type).load(run.result)
