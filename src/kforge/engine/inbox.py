"""Where interventions on an executing run wait for its next step boundary: the protocol the
step runner takes them through (the runtime's ``InterventionInbox`` keeps them in the store)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Protocol

from kforge.frames import Intervention

__all__ = ["ENDING", "InterventionSource"]

ENDING = ("delete", "cancel")
"""Interventions that end the run: nothing after one of them is applied."""


class InterventionSource(Protocol):
    """Where interventions on executing runs wait for the run's next step boundary."""

    def take(self, run_id: str, *, fresh: bool = False) -> list[Intervention]:
        """What waits for ``run_id``, oldest first; it stays until ``done``. ``fresh``: read
        now, whenever it was last read."""
        ...

    def closing(self, run_id: str, owner: str) -> None:
        """The run's last step is done (``owner``: its writer): senders wait for its end or
        ``reopened``."""
        ...

    def reopened(self, run_id: str) -> None:
        """The closing run took interventions and goes on."""
        ...

    def done(self, run_id: str, ids: list[str]) -> None:
        """Forget interventions now recorded in the run's log."""
        ...

    async def arrival(self, run_id: str, *, known: Collection[str] = ()) -> None:
        """Return once an intervention other than ``known`` waits for ``run_id``."""
        ...

    def forget(self, run_id: str) -> None:
        """Drop whatever still waits for a run that has ended (nothing will take it)."""
        ...
