"""A step boundary's interventions: those recorded in the run's log while it waited, then
those left in the inbox while it executed, recorded in the log and applied to the agent in order."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kforge.engine.inbox import ENDING
from kforge.engine.run_context import RunContext
from kforge.engine.writer import StretchWriter
from kforge.frames import Intervention

if TYPE_CHECKING:
    from kforge.engine.agent import SteerableAgent, StepAgent

__all__ = ["BoundaryInterventions"]

_DELIVERED_KEPT = 64
"""Ids of the latest inbox interventions a run's state remembers, so none applies twice."""


class BoundaryInterventions(StretchWriter):
    """How a ``StepRunner`` takes interventions at its step boundaries."""

    if TYPE_CHECKING:
        agent: StepAgent[object]
        steered: SteerableAgent | None
        """The agent, when it takes interventions (``SteerableAgent``)."""
        _delivered: list[str]
        """Ids of the inbox interventions already recorded in the run's log (its state keeps them)."""
        _tail_interventions: list[Intervention]
        """Interventions recorded in the log after the last committed step, not applied yet."""

    async def _steering(self) -> None:
        """Return once a person's intervention waits for this run beyond those it took."""
        assert self.interventions is not None
        await self.interventions.arrival(self.run.id, known=frozenset(self._delivered))

    def _take_interventions(self, ctx: RunContext, *, fresh: bool = False) -> list[Intervention]:
        """The interventions waiting for this run, in order: those recorded in its log while
        it waited, then those left in the inbox while it executed (recorded here). None after
        a delete or a cancel: they stay in the inbox, which is cleared once the run ends."""
        found = list(self._tail_interventions)
        self._tail_interventions = []
        if self.interventions is not None:
            for item in self.interventions.take(self.run.id, fresh=fresh):
                if any(i.action in ENDING for i in found):
                    break
                if item.id in self._delivered:
                    self.interventions.done(self.run.id, [item.id])
                    continue
                found.append(ctx.emit(item))
                self._unacked.append(item.id)
                self._delivered = [*self._delivered, item.id][-_DELIVERED_KEPT:]
        return found

    def _apply_interventions(
        self, ctx: RunContext, found: list[Intervention]
    ) -> Intervention | None:
        """Apply interventions to the agent in order; returns the one that ends the run (a
        delete, or a cancel asked from another process), if any."""
        steered = self.steered
        for item in found:
            if item.action in ENDING:
                return item
            if steered is not None:
                steered.intervene(ctx, item.action, item.content)
        return None
