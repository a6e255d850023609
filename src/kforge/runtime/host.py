"""What the runtime's helpers may use of a runtime: the ``RuntimeHost`` protocol.

``Runtime`` satisfies it; helpers (interventions, recovery, services, the tree stream, answers,
workers) are typed against it, so none of them imports ``runtime.py`` back.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Literal, Protocol, overload

if TYPE_CHECKING:
    from kforge.engine.limits import RunLimits
    from kforge.engine.registry import AgentRegistry
    from kforge.frames import Frame, TokenDelta
    from kforge.runtime.bus import EventBus
    from kforge.runtime.inbox import InterventionInbox
    from kforge.store.base import RunLog, RunRecord

__all__ = ["RuntimeHost"]


class RuntimeHost(Protocol):
    """A runtime as its helpers see it: the store, the bus, the inbox and the run lifecycle."""

    store: RunLog
    bus: EventBus
    interventions: InterventionInbox
    registry: AgentRegistry
    owner: str
    """Who this runtime is in the leases of the runs it executes."""
    lease_ttl_s: float

    @property
    def queued(self) -> bool:
        """Whether stretches started here are queued for worker processes."""
        ...

    def is_active(self, run_id: str) -> bool: ...

    def get_run(self, run_id: str) -> RunRecord: ...

    def child_ended(self, run_id: str) -> None: ...

    async def start(
        self,
        agent_type: str,
        args: dict[str, Any] | None = None,
        *,
        limits: RunLimits | None = None,
        session_id: str | None = None,
        parent_id: str | None = None,
        run_id: str | None = None,
        annotations: dict[str, str] | None = None,
    ) -> str: ...

    async def resume(
        self,
        run_id: str,
        answer: Any = None,
        *,
        limits: RunLimits | None = None,
        durable: bool = False,
    ) -> str: ...

    async def wait(self, run_id: str) -> RunRecord: ...

    async def cancel(self, run_id: str, reason: str = ...) -> str: ...

    async def run(
        self, agent_type: str, args: dict[str, Any] | None = None, **kwargs: Any
    ) -> RunRecord: ...

    @overload
    def subscribe(
        self,
        run_id: str,
        *,
        after_seq: int = 0,
        follow: bool = False,
        deltas: Literal[False] = False,
    ) -> AsyncIterator[Frame]: ...

    @overload
    def subscribe(
        self, run_id: str, *, after_seq: int = 0, follow: bool = False, deltas: bool
    ) -> AsyncIterator[Frame | TokenDelta]: ...
