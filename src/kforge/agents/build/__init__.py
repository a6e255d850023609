"""The Build agent: grounds a goal in concepts and a plan of checked steps, then makes the
artifact in a workspace folder, checking each step in the sandbox."""

from __future__ import annotations

from kforge.agents.build.agent import BuildAgent
from kforge.agents.build.context import BuildPhase, BuildPhaseContext

__all__ = ["BuildAgent", "BuildPhase", "BuildPhaseContext"]
