"""Services: the capabilities a run hands to its agent, as one typed, frozen object.

Agents reach documents, tools, memory, earlier turns and child agents through narrow
capabilities named here; never the runtime or the store behind them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from kforge.errors import ConfigurationError

if TYPE_CHECKING:
    from kforge.rag.corpus import Corpus
    from kforge.store.documents import DocumentStore
    from kforge.tools.approval import ApprovalPolicy
    from kforge.tools.base import Tool
    from kforge.tools.cache import ToolResultCache
    from kforge.tools.registry import ToolRegistry
    from kforge.tools.tool_context import AgentSpawner, ToolServices

__all__ = ["CorpusSource", "Services", "SessionHistory"]


class CorpusSource(Protocol):
    """Opens a document corpus by name."""

    def open(self, name: str) -> Corpus: ...


class SessionHistory(Protocol):
    """The earlier turns of the run's conversation, read-only."""

    @property
    def session_id(self) -> str | None:
        """The run's session; None when the run is not part of a conversation."""
        ...

    def turns(self, agent_type: str) -> list[dict[str, str]]:
        """The session's completed runs of ``agent_type`` before this one, oldest first, as
        ``{"question", "answer"}``."""
        ...


_FIELDS = {
    "tools": "tools",
    "corpora": "corpora",
    "memory_store": "memory",
    "sessions": "sessions",
    "agents": "agents",
    "tool_approval": "approval",
    "tool_cache": "cache",
}
"""The string keys of the former services dict and the fields that replaced them, for the
error that names the field to use."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Services:
    """What agent code may use besides the model: ``ctx.services`` and ``Runtime(services=)``."""

    tools: ToolRegistry | Sequence[Tool] = ()
    """The tools offered to agents, by name (the ``react`` agent's ``tools`` argument)."""
    corpora: CorpusSource | None = None
    """Document corpora; ``ctx.corpus(name)`` opens one (the Runtime opens its store's)."""
    memory: DocumentStore | None = None
    """Where episodic memory (reflections) is kept across runs; None keeps it in the process."""
    sessions: SessionHistory | None = None
    """The earlier turns of the run's session (the Runtime gives each run its own)."""
    agents: AgentSpawner | None = None
    """Child agents: ``fork(prompt)`` and ``wait(handle)`` (the Runtime's are child runs)."""
    approval: ApprovalPolicy | None = None
    """Which tool calls need a person's approval (default: the destructive ones)."""
    cache: ToolResultCache | None = None
    """Results of read-only tool calls shared by the run (default: none)."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Anything else an application's own agents and tools need, by name."""

    _for_tools: ToolServices | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "extra", MappingProxyType(dict(self.extra)))

    @classmethod
    def of(cls, services: Services | None) -> Services:
        """``services``, or empty ones for None; ``TypeError`` for anything else (a dict, say)."""
        if services is None:
            return cls()
        if isinstance(services, Services):
            return services
        raise TypeError(
            f"services must be a kforge.Services, not {type(services).__name__}: pass "
            "Services(tools=..., corpora=..., memory=..., extra={...}) (an application's own "
            "values go in extra, by name)"
        )

    def corpus(self, name: str | None = None) -> Corpus:
        """The corpus ``name`` (default: ``kforge.rag.DEFAULT_CORPUS``)."""
        from kforge.rag.corpus import DEFAULT_CORPUS

        if self.corpora is None:
            raise ConfigurationError(
                f"this run has no corpora to open '{name or DEFAULT_CORPUS}' from: run it with "
                "kforge.Runtime over a store that is also a passage store (every built-in one "
                "is), or pass Services(corpora=kforge.rag.catalog.Corpora(passage_store))"
            )
        return self.corpora.open(name or DEFAULT_CORPUS)

    def tool_list(self) -> list[Tool]:
        """The tools in ``tools``, checked."""
        from kforge.tools.base import Tool
        from kforge.tools.registry import ToolRegistry

        supplied: Any = self.tools
        if isinstance(supplied, ToolRegistry):
            return supplied.list_tools()
        if isinstance(supplied, Iterable) and not isinstance(supplied, str | bytes | Mapping):
            tools = list(supplied)
            if all(isinstance(t, Tool) for t in tools):
                return tools
        raise ConfigurationError(
            "Services.tools must be a ToolRegistry or a list of tools "
            f"(got {type(supplied).__name__})"
        )

    @property
    def for_tools(self) -> ToolServices:
        """What a tool the run calls sees as ``ToolContext.services``: ``agents`` and
        ``extra``, typed."""
        view = self._for_tools
        if view is None:
            # built on first use: importing kforge.tools is left to runs that call tools
            from kforge.tools.tool_context import ToolServices

            view = ToolServices(agents=self.agents, extra=self.extra)
            object.__setattr__(self, "_for_tools", view)
        return view

    def __getitem__(self, key: str) -> Any:
        instead = _FIELDS.get(key, f"extra[{key!r}]")
        raise TypeError(f"services[{key!r}]: Services is not a dict; use services.{instead}")
