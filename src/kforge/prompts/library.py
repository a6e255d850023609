"""The built-in templates, stored as text files in ``kforge/prompts/templates``, and phase prompts."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from kforge.errors import ValidationError
from kforge.prompts.render import render_template
from kforge.prompts.syntax import parse_template
from kforge.prompts.template import PromptTemplate, validate_template

__all__ = ["TEMPLATES", "load_template", "phase_prompt", "prompt_text", "template_names"]

_SUFFIX = ".prompt"


def _directory() -> Any:
    return resources.files("kforge.prompts").joinpath("templates")


def template_names() -> list[str]:
    """Names of the built-in templates, e.g. ``REACT_SYSTEM``."""
    return sorted(
        entry.name[: -len(_SUFFIX)].upper()
        for entry in _directory().iterdir()
        if entry.name.endswith(_SUFFIX)
    )


@lru_cache(maxsize=64)
def _builtin(name: str) -> PromptTemplate:
    entry = _directory().joinpath(name.lower() + _SUFFIX)
    if not entry.is_file():
        raise KeyError(name)
    return _checked(
        parse_template(entry.read_text(encoding="utf-8"), source=f"{entry.name}"), entry.name
    )


def _checked(template: PromptTemplate, source: str) -> PromptTemplate:
    result = validate_template(template)
    if not result:
        raise ValidationError(f"{source}: invalid template: " + "; ".join(result.errors))
    return template


def load_template(name: str | Path) -> PromptTemplate:
    """A built-in template by name (``"REACT_SYSTEM"``, any case) or a template file by path.

    The template is validated; problems raise ``ValidationError``.
    """
    text_name = str(name)
    if isinstance(name, Path) or text_name.endswith(_SUFFIX) or "/" in text_name:
        path = Path(name).expanduser()
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValidationError(f"cannot read template file {path}: {exc.strerror}") from exc
        return _checked(parse_template(text, source=str(path)), str(path))
    try:
        return _builtin(text_name.upper())
    except KeyError:
        raise ValidationError(
            f"no built-in template '{text_name}' (built-in: {', '.join(template_names())})"
        ) from None


class _Library(Mapping[str, PromptTemplate]):
    """Read-only mapping of built-in template names to templates, loaded on first access."""

    def __getitem__(self, name: str) -> PromptTemplate:
        try:
            return _builtin(name.upper())
        except KeyError:
            raise KeyError(name) from None

    def __iter__(self) -> Iterator[str]:
        return iter(template_names())

    def __len__(self) -> int:
        return len(template_names())


TEMPLATES: Mapping[str, PromptTemplate] = _Library()
"""Every built-in template: ``TEMPLATES["RESULT_GRADING"]``."""


def prompt_text(name: str, **values: Any) -> str:
    """The built-in template ``name`` rendered with ``values``: the text a model is sent."""
    return render_template(load_template(name), values)


def phase_prompt(
    agent: str,
    phase: str,
    *,
    visit_count: int = 0,
    backward_trigger: str = "",
    backward_trigger_detail: str = "",
    existing_work_summary: str = "",
    **context: Any,
) -> str:
    """The prompt for ``phase`` of ``agent``: the full phase prompt on the first
    visit, the incremental re-entry prompt on later visits."""
    if visit_count <= 0:
        return render_template(load_template(f"{agent}_{phase}"), context)
    return render_template(
        load_template("PHASE_REENTRY"),
        phase=phase.upper(),
        backward_trigger=backward_trigger or "a later phase found work missing here",
        backward_trigger_detail=backward_trigger_detail,
        existing_work_summary=existing_work_summary or "(nothing recorded)",
    )
