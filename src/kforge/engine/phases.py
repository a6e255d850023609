"""Phase graphs: phases, forward and backward transitions, checkpoints, and the phase context."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from kforge.errors import GraphDefinitionError
from kforge.frames import CheckpointKind, utc_now

__all__ = [
    "Checkpoint",
    "PhaseContext",
    "PhaseGraph",
    "PhaseTransition",
    "TransitionRecord",
    "evaluate_transitions",
]


@dataclass(frozen=True, slots=True)
class PhaseTransition:
    from_phase: enum.Enum
    to_phase: enum.Enum
    condition: str
    """Human-readable condition name; also the backward trigger when the transition is backward."""
    is_backward: bool = False
    priority: int = 0
    """Higher is evaluated first within the same direction."""


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A user gate after a phase."""

    after: enum.Enum
    kind: CheckpointKind
    message: str
    id: str = ""

    @property
    def checkpoint_id(self) -> str:
        return self.id or f"after_{self.after.value}"


@dataclass(slots=True)
class TransitionRecord:
    from_phase: str
    to_phase: str
    reason: str | None
    is_backward: bool
    timestamp: datetime = field(default_factory=utc_now)


@dataclass
class PhaseContext:
    """State that persists across visits to phases. Agents subclass it with their own fields.

    Extra fields must hold JSON values (or lists/dicts of them), or dataclasses of them: the
    context is saved by ``kforge.jsoncodec.to_builtins`` and read back by its fields' types.
    """

    phase_visits: dict[str, int] = field(default_factory=dict)
    transition_history: list[TransitionRecord] = field(default_factory=list)
    backward_trigger: str | None = None
    backward_trigger_detail: str | None = None


def evaluate_transitions(
    transitions: Iterable[PhaseTransition],
    current: enum.Enum,
    condition: Callable[[PhaseTransition], bool],
) -> PhaseTransition | None:
    """The transition to take: backward ones first, then higher priority, first match wins; None
    means stay in ``current``."""
    candidates = sorted(
        (t for t in transitions if t.from_phase == current),
        key=lambda t: (-int(t.is_backward), -t.priority),
    )
    for transition in candidates:
        if condition(transition):
            return transition
    return None


class PhaseGraph:
    """A validated phase graph. Malformed graphs fail at definition time with a clear error."""

    def __init__(
        self,
        phases: type[enum.Enum],
        transitions: Sequence[PhaseTransition],
        *,
        initial: enum.Enum | None,
        complete: enum.Enum | None,
        checkpoints: Sequence[Checkpoint] = (),
    ) -> None:
        name = phases.__name__
        if initial is None:
            raise GraphDefinitionError(f"phase graph {name}: no initial phase given")
        if complete is None:
            raise GraphDefinitionError(f"phase graph {name}: no complete phase given")
        for label, phase in (("initial", initial), ("complete", complete)):
            if not isinstance(phase, phases):
                raise GraphDefinitionError(
                    f"phase graph {name}: {label} phase {phase!r} is not a member of {name}"
                )
        for t in transitions:
            for end in (t.from_phase, t.to_phase):
                if not isinstance(end, phases):
                    raise GraphDefinitionError(
                        f"phase graph {name}: transition '{t.condition}' uses unknown phase "
                        f"{end!r}; known phases: {', '.join(p.name for p in phases)}"
                    )
            if t.from_phase == complete:
                raise GraphDefinitionError(
                    f"phase graph {name}: transition '{t.condition}' leaves the complete phase"
                )
        by_phase: dict[enum.Enum, Checkpoint] = {}
        for cp in checkpoints:
            if not isinstance(cp.after, phases):
                raise GraphDefinitionError(
                    f"phase graph {name}: checkpoint after unknown phase {cp.after!r}"
                )
            by_phase[cp.after] = cp
        self.phases = phases
        self.transitions = tuple(transitions)
        self.initial = initial
        self.complete = complete
        self.checkpoints = by_phase
        self._check_reachability()

    def _check_reachability(self) -> None:
        edges: dict[enum.Enum, set[enum.Enum]] = {}
        for t in self.transitions:
            edges.setdefault(t.from_phase, set()).add(t.to_phase)
        reachable = {self.initial}
        frontier = [self.initial]
        while frontier:
            for nxt in edges.get(frontier.pop(), ()):
                if nxt not in reachable:
                    reachable.add(nxt)
                    frontier.append(nxt)
        name = self.phases.__name__
        if self.complete not in reachable:
            raise GraphDefinitionError(
                f"phase graph {name}: no path from {self.initial.name} to the complete phase "
                f"{self.complete.name}"
            )
        for phase in reachable:
            if phase != self.complete and not self._reaches_complete(phase, edges):
                raise GraphDefinitionError(
                    f"phase graph {name}: phase {phase.name} has no path to the complete phase "
                    f"{self.complete.name}"
                )

    def _reaches_complete(self, start: enum.Enum, edges: dict[enum.Enum, set[enum.Enum]]) -> bool:
        seen = {start}
        frontier = [start]
        while frontier:
            for nxt in edges.get(frontier.pop(), ()):
                if nxt == self.complete:
                    return True
                if nxt not in seen:
                    seen.add(nxt)
                    frontier.append(nxt)
        return False

    def phase(self, value: str) -> enum.Enum:
        return self.phases(value)

    def is_backward(self, from_phase: enum.Enum, to_phase: enum.Enum) -> bool:
        return any(
            t.is_backward
            for t in self.transitions
            if t.from_phase == from_phase and t.to_phase == to_phase
        )

    def backward_from(self, phase: enum.Enum) -> list[PhaseTransition]:
        return sorted(
            (t for t in self.transitions if t.from_phase == phase and t.is_backward),
            key=lambda t: -t.priority,
        )
