"""What the Build agent's plan and README are made of, from a shape: the plan's step records
and the README's text (which says so when a step failed its check)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kforge.agents.build.shapes import Shape

__all__ = ["plan_records", "readme_text"]


def plan_records(shape: Shape) -> list[dict[str, Any]]:
    return [
        {
            "id": step.id,
            "title": step.title,
            "files": list(step.files),
            "accept": step.accept,
            "status": "pending",
            "attempts": 0,
            "origin": "",
            "checks": [],
        }
        for step in shape.steps
    ]


def readme_text(shape: Shape, *, goal: str, summary: str = "", failed: Sequence[str] = ()) -> str:
    """The README of ``shape`` built for ``goal``; it never describes as working a program
    whose step ``failed`` its check."""
    status = (
        f"**Not working:** {'; '.join(failed)}: did not pass its check, so the program does "
        "not do what is described here; see BUILD_LOG.md.\n\n"
        if failed
        else ""
    )
    return shape.template("README.md").format(
        status=status,
        title=shape.title,
        description=summary or shape.description,
        goal=goal,
        run=shape.run,
        check=shape.check,
        check_note=shape.check_note,
        files=", ".join(f"`{f}`" for s in shape.steps for f in s.files),
    )
