"""Program shapes: small, well-known programs the Build agent can always make correctly.

Each shape is a folder of ``kforge/agents/build/templates``: ``shape.toml`` (title, purpose and
keywords, concepts, and the plan: steps, each with the files it writes, its acceptance check as
Python run in the workspace, and what the check accepts) and the known-good file templates
(``NAME.tmpl``). A capable model writes the files a step lists in ``model_writes`` itself; the
known-good template is what a step falls back to when the model's file fails its check.

A shape is used only for a goal that asks for what the shape does: the goal must name one of
its purpose terms, and every other word of the goal that names what to build must be one the
shape speaks of (its keywords, title or description). "A table of contents from the headings
of a Markdown file" shares "table" with the CSV summary tool, and is not one.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from kforge.errors import ValidationError
from kforge.rag.textcheck import key_terms

__all__ = ["Shape", "ShapeStep", "choose_shape", "goal_terms", "load_shape", "shape_names"]

_TEMPLATE = ".tmpl"
_GENERIC = frozenset(
    key_terms(
        "tool tools script program app application utility command commands line cli python "
        "print prints printing show shows display output make makes build write writes "
        "create simple small little quick file files read reads take takes give gives want "
        "need help run runs use uses new"
    )
)
"""Words that say a program is wanted, not what it does: they never decide a shape."""


def goal_terms(goal: str) -> list[str]:
    """The stemmed words of ``goal`` that say what the program must do."""
    return [t for t in key_terms(goal) if t not in _GENERIC]


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
    purpose: tuple[str, ...]
    """Words that say what the shape does; a goal must name one of them."""
    keywords: tuple[str, ...]
    concepts: tuple[tuple[str, str], ...]
    """(name, explanation) of each concept the program rests on."""
    steps: tuple[ShapeStep, ...]
    run: str
    check: str
    """The command that checks the finished artifact from its folder."""
    check_note: str
    inline: tuple[tuple[str, str], ...] = ()
    """(path, content) of files whose known-good content is given here, not in the templates."""

    def step(self, step_id: str) -> ShapeStep:
        for step in self.steps:
            if step.id == step_id:
                return step
        raise KeyError(step_id)

    def template(self, path: str) -> str:
        """The known-good content of ``path`` (README.md is filled in by the caller)."""
        for known, content in self.inline:
            if known == path:
                return content
        return _read(self.name, path)

    def has_template(self, path: str) -> bool:
        if path == "README.md" or any(known == path for known, _ in self.inline):
            return True
        if self.name not in shape_names():
            return False
        *parents, name = path.split("/")
        return bool(_root().joinpath(self.name, *parents, name + _TEMPLATE).is_file())

    def vocabulary(self) -> set[str]:
        words = [*self.keywords, *self.purpose, self.title, self.description]
        return set(key_terms(" ".join(words)))

    def score(self, text: str) -> int:
        """How many of the goal's terms the shape speaks of, or 0 when the goal does not ask
        for what the shape does (it names none of its purpose terms, or something else too)."""
        terms = goal_terms(text)
        purpose = set(key_terms(" ".join(self.purpose)))
        vocabulary = self.vocabulary()
        if not terms or not purpose & set(terms) or not set(terms) <= vocabulary:
            return 0
        return len(terms)


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
        purpose=tuple(data["purpose"]),
        keywords=tuple(data["keywords"]),
        concepts=tuple((c["name"], c["explanation"]) for c in data["concepts"]),
        steps=steps,
        run=data["run"],
        check=data["check"],
        check_note=data["check_note"],
    )


def choose_shape(goal: str, preferred: str = "") -> tuple[Shape | None, int]:
    """The shape that fits ``goal`` best, with its score; ``(None, 0)`` when none does what the
    goal asks. ``preferred`` (a model's choice) wins when it fits at least as well as any other."""
    shapes = [load_shape(name) for name in shape_names()]
    best = max(shapes, key=lambda s: s.score(goal))
    if preferred in shape_names():
        chosen = load_shape(preferred)
        if chosen.score(goal) >= best.score(goal):
            best = chosen
    fit = best.score(goal)
    return (best, fit) if fit else (None, 0)
