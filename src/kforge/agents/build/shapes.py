"""Program shapes: small, well-known programs the Build agent can always make correctly.

Each shape is a folder of ``kforge/agents/build/templates``: ``shape.toml`` (title, keywords,
concepts, and the plan: steps, each with the files it writes, its acceptance check as Python
run in the workspace, and what the check accepts) and the known-good file templates
(``NAME.tmpl``). A capable model writes the files a step lists in ``model_writes`` itself; the
known-good template is what a step falls back to when the model's file fails its check.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from kforge.errors import ValidationError

__all__ = ["Shape", "ShapeStep", "choose_shape", "load_shape", "shape_names"]

_TEMPLATE = ".tmpl"


@dataclass(frozen=True, slots=True)
class ShapeStep:
    id: str
    title: str
    files: tuple[str, ...]
    check: str
    """Python run in the workspace; the step passes when it runs without an exception."""
    accept: str
    """What the check accepts, in words."""
    model_writes: tuple[str, ...] = ()
    """Files a capable model writes itself (the others always come from the templates)."""
    interface: str = ""
    """What the model-written files must provide, for the model's prompt."""


@dataclass(frozen=True, slots=True)
class Shape:
    name: str
    title: str
    module: str
    description: str
    keywords: tuple[str, ...]
    concepts: tuple[tuple[str, str], ...]
    """(name, explanation) of each concept the program rests on."""
    steps: tuple[ShapeStep, ...]
    run: str
    check: str
    """The command that checks the finished artifact from its folder."""
    check_note: str

    def step(self, step_id: str) -> ShapeStep:
        for step in self.steps:
            if step.id == step_id:
                return step
        raise KeyError(step_id)

    def template(self, path: str) -> str:
        """The known-good content of ``path`` (README.md is filled in by the caller)."""
        return _read(self.name, path)

    def score(self, text: str) -> int:
        words = set(re.findall(r"[a-z0-9]+", text.lower()))
        return sum(1 for keyword in self.keywords if keyword in words)


def _root() -> Any:
    return resources.files("kforge.agents.build").joinpath("templates")


def _read(shape: str, path: str) -> str:
    folder = _root() if path == "README.md" else _root().joinpath(shape)
    *parents, name = path.split("/")
    text: str = folder.joinpath(*parents, name + _TEMPLATE).read_text(encoding="utf-8")
    return text


def shape_names() -> list[str]:
    return sorted(e.name for e in _root().iterdir() if e.joinpath("shape.toml").is_file())


@cache
def load_shape(name: str) -> Shape:
    if name not in shape_names():
        raise ValidationError(f"unknown program shape '{name}' (known: {', '.join(shape_names())})")
    data = tomllib.loads(_root().joinpath(name, "shape.toml").read_text(encoding="utf-8"))
    steps = tuple(
        ShapeStep(
            id=s["id"],
            title=s["title"],
            files=tuple(s["files"]),
            check=s["check"].strip() + "\n",
            accept=s["accept"],
            model_writes=tuple(s.get("model_writes", ())),
            interface=s.get("interface", ""),
        )
        for s in data["steps"]
    )
    return Shape(
        name=name,
        title=data["title"],
        module=data["module"],
        description=data["description"],
        keywords=tuple(data["keywords"]),
        concepts=tuple((c["name"], c["explanation"]) for c in data["concepts"]),
        steps=steps,
        run=data["run"],
        check=data["check"],
        check_note=data["check_note"],
    )


def choose_shape(goal: str, preferred: str = "") -> tuple[Shape, int]:
    """The shape that fits ``goal`` best by its keywords, with its score (0: none fits, the
    first shape is returned); ``preferred`` (a model's choice) wins when it names a shape that
    fits at least as well as any other."""
    shapes = [load_shape(name) for name in shape_names()]
    best = max(shapes, key=lambda s: s.score(goal))
    if preferred in shape_names():
        chosen = load_shape(preferred)
        if chosen.score(goal) >= best.score(goal):
            best = chosen
    return best, best.score(goal)
