"""What a finished run says to a person: each agent's declared result type, and the one
rendering of an answer's Sources.

An agent declares ``result_type`` (a frozen dataclass below) and its steps return their
result as that type (``StepOutcome[CitedAnswer]``, say); the engine keeps it in the run's
record as JSON (``kforge.engine.agent.record_result``) and ``read_result`` reads it back as
the same value, with citations as ``Citation`` objects. Results stored by earlier
versions (citations without a title or a quote, say) are upgraded as they are read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeVar

from kforge import jsoncodec
from kforge.engine.agent import record_result
from kforge.errors import StateCorruptionError

if TYPE_CHECKING:
    from kforge.engine.registry import AgentRegistry
    from kforge.rag.types import Citation
    from kforge.store.base import RunRecord

__all__ = [
    "AgentResult",
    "BuildResult",
    "CitedAnswer",
    "ReactResult",
    "Report",
    "ResearchReport",
    "TreeResult",
    "UnderstandReport",
    "UntypedResult",
    "load_result",
    "read_result",
    "result_type_of",
    "sources_lines",
    "sources_text",
    "upgrade_citations",
]

R = TypeVar("R", bound="AgentResult")


def sources_lines(citations: Iterable[Citation]) -> list[str]:
    """Each citation's label (``[2] guide.md § Setup, chars 120-480``), in order."""
    return [c.label for c in citations]


def sources_text(citations: Iterable[Citation]) -> str:
    """The Sources list of an answer, one citation a line (``  [2] guide.md § Setup, chars
    120-480``); empty when there are none. Every interface renders Sources with this."""
    lines = [f"  {label}" for label in sources_lines(citations)]
    return "Sources:\n" + "\n".join(lines) if lines else ""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentResult:
    """A finished run's result as its agent declares it; each agent's type adds its fields."""

    TEXT_FIELD: ClassVar[str] = ""
    """The field holding the text a person reads ("" for none)."""

    @property
    def text(self) -> str:
        """The text a person reads."""
        value = getattr(self, self.TEXT_FIELD) if self.TEXT_FIELD else ""
        return value if isinstance(value, str) else ""

    @property
    def citations(self) -> tuple[Citation, ...]:
        """The passages the text cites, numbered as its ``[n]`` markers."""
        return ()

    def with_sources(self) -> str:
        """The text followed by the Sources its markers name (the text alone when none)."""
        sources = sources_text(self.citations)
        return f"{self.text}\n\n{sources}" if sources and self.text else self.text

    def stored(self) -> dict[str, Any]:
        """The result as the run's record keeps it (JSON values, as the engine stores the
        result a step returns: ``record_result``); ``load`` reads it back."""
        return record_result(self)

    @classmethod
    def load(cls, stored: Mapping[str, Any] | None) -> Self:
        """A stored result (this version's or an earlier one's) as this type."""
        return load_result(cls, stored)


@dataclass(frozen=True, slots=True, kw_only=True)
class UntypedResult(AgentResult):
    """The result of an agent that declares no type: the stored value as it is."""

    value: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return jsoncodec.dumps(self.value, spaced=True) if self.value else ""

    def stored(self) -> dict[str, Any]:
        return dict(self.value)


@dataclass(frozen=True, slots=True, kw_only=True)
class CitedAnswer(AgentResult):
    """The router's answer to one question (what ``kforge ask`` prints), with the passages it
    cites."""

    TEXT_FIELD: ClassVar[str] = "answer"
    question: str = ""
    answer: str = ""
    short_answer: str = ""
    """The direct answer the text opens with; empty when the answer cites nothing."""
    refused: bool = False
    """The documents do not say: the answer says so instead of answering."""
    citations: tuple[Citation, ...] = ()
    out_of_scope: bool = False
    """The guardrail declined the question."""
    fallback: bool = False
    """No passage was relevant: the model answered alone (the answer says so)."""
    answer_path: str = ""
    """Which path wrote it (``extractive``, ``generative``, ``extractive_fallback``, ...)."""
    answer_reason: str = ""
    queries: tuple[str, ...] = ()
    """The searches made, in order."""
    route: tuple[str, ...] = ()
    """The graph's nodes, in the order they ran."""
    iterations: int = 0
    history_turns: int = 0

    @property
    def path(self) -> str:
        return self.answer_path


@dataclass(frozen=True, slots=True, kw_only=True)
class TreeResult(AgentResult):
    """The agent tree's answer: the summary of the main execution and its subagents."""

    TEXT_FIELD: ClassVar[str] = "answer"
    answer: str = ""
    main_answer: str = ""
    """The main execution's own answer, before the subagents' were added."""
    citations: tuple[Citation, ...] = ()
    subagents: tuple[dict[str, Any], ...] = ()
    """Each subagent's ``{id, status, answer, main_answer, sources, error}``."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Depth, step, clarifications, comments, modifications, answer path, partial, note."""

    @property
    def path(self) -> str:
        return str(self.metadata.get("answer_path") or "")


@dataclass(frozen=True, slots=True, kw_only=True)
class ReactResult(AgentResult):
    """The ReAct loop's answer and how it stopped."""

    TEXT_FIELD: ClassVar[str] = "answer"
    goal: str = ""
    answer: str = ""
    goal_achieved: bool = False
    finished: bool = False
    stop_reason: str = ""
    iterations: int = 0
    tools_called: tuple[str, ...] = ()
    reflections: tuple[str, ...] = ()
    """The ids of the reflections the run wrote to episodic memory."""
    metrics: dict[str, Any] = field(default_factory=dict)
    """The trajectory's metrics (``TrajectoryMetrics.to_dict``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Report(AgentResult):
    """A Markdown report a command saves to a file (Research, Understand): ``text`` is it."""

    TEXT_FIELD: ClassVar[str] = "report"


@dataclass(frozen=True, slots=True, kw_only=True)
class ResearchReport(Report):
    """Research's Markdown report (its sources inside it) and the records it was written
    from: categories, questions, answers by question id, sources, insights by category id,
    frontier questions."""

    question: str = ""
    report: str = ""
    categories: tuple[dict[str, Any], ...] = ()
    questions: tuple[dict[str, Any], ...] = ()
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: tuple[dict[str, Any], ...] = ()
    insights: dict[str, str] = field(default_factory=dict)
    frontier: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class UnderstandReport(Report):
    """Understand's Markdown learning record and what it was written from."""

    topic: str = ""
    report: str = ""
    knowledge: dict[str, Any] = field(default_factory=dict)
    objectives: tuple[dict[str, Any], ...] = ()
    questions: tuple[dict[str, Any], ...] = ()
    sources: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildResult(AgentResult):
    """What Build made: its summary, and the commands that run and check the program."""

    TEXT_FIELD: ClassVar[str] = "summary"
    goal: str = ""
    workspace: str = ""
    program: str = ""
    summary: str = ""
    plan: tuple[dict[str, Any], ...] = ()
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    concepts: tuple[dict[str, Any], ...] = ()
    constraints: tuple[str, ...] = ()
    sources: tuple[dict[str, Any], ...] = ()
    run_command: str = ""
    check_command: str = ""
    log: str = ""
    complete: bool = False
    """Whether every step of the plan was done (each passed its check)."""


def _bind_citation() -> None:
    """Bind ``Citation`` for the typed reader, which resolves the annotations above by name:
    imported on the first read, as ``kforge.rag`` is heavy and the runtime imports this
    module without it."""
    if "Citation" not in globals():
        from kforge.rag.types import Citation

        globals()["Citation"] = Citation


def upgrade_citations(data: Mapping[str, Any]) -> dict[str, Any]:
    """A result or a state as earlier versions stored it, in this version's shape: each of its
    ``citations`` with every field (an older one may lack its title, heading, page or quote)."""
    stored = data.get("citations")
    if stored is None:
        return dict(data)
    if not isinstance(stored, list):
        raise StateCorruptionError(
            f"a stored value's 'citations' must be a list (got {type(stored).__name__}); "
            "the run's record was written outside kforge"
        )
    from kforge.rag.types import Citation

    citations = []
    for item in stored:
        try:
            citations.append(Citation.from_dict(item).to_dict())
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise StateCorruptionError(
                f"a stored citation cannot be read ({type(exc).__name__}: {exc}): {item!r:.200}"
            ) from exc
    return {**data, "citations": citations}


def load_result(kind: type[R], stored: Mapping[str, Any] | None) -> R:
    """``stored`` (a run's result, as this or an earlier version kept it) as a ``kind``;
    ``StateCorruptionError`` naming the field that does not fit."""
    data = dict(stored or {})
    if issubclass(kind, UntypedResult):
        return kind(value=data)
    _bind_citation()
    try:
        return jsoncodec.convert(data, kind)
    except ValueError:
        pass  # written by an earlier version: upgraded, then read again
    try:
        return jsoncodec.convert(upgrade_citations(data), kind)
    except ValueError as exc:
        raise StateCorruptionError(
            f"a stored result does not read as {kind.__name__} ({exc}); the run's record was "
            "written outside kforge or by a newer version"
        ) from exc


def result_type_of(registry: AgentRegistry, agent_type: str) -> type[AgentResult]:
    """The result type ``agent_type`` declares (``UntypedResult`` when it declares none)."""
    factory = registry.factory(agent_type)
    # a factory may be any callable: a class declares its type as ``result_type``
    declared = getattr(factory, "result_type", None)
    if isinstance(declared, type) and issubclass(declared, AgentResult):
        return declared
    return UntypedResult


def read_result(run: RunRecord, registry: AgentRegistry | None = None) -> AgentResult:
    """A run's stored result as the type its agent declares (from ``registry``, by default the
    process-wide one)."""
    if registry is None:
        from kforge.agents.builtin import default_registry

        registry = default_registry
    return load_result(result_type_of(registry, run.agent_type), run.result)
