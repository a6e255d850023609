"""Prompt templates: named sections and typed placeholders; parse, validate, render, serialize."""

from __future__ import annotations

from kforge.prompts.library import (
    TEMPLATES,
    load_template,
    phase_prompt,
    prompt_text,
    template_names,
)
from kforge.prompts.render import format_value, render_template
from kforge.prompts.syntax import parse_template, serialize_template
from kforge.prompts.template import (
    PlaceholderDef,
    PromptSection,
    PromptTemplate,
    ValidationResult,
    validate_template,
)

__all__ = [
    "TEMPLATES",
    "PlaceholderDef",
    "PromptSection",
    "PromptTemplate",
    "ValidationResult",
    "format_value",
    "load_template",
    "parse_template",
    "phase_prompt",
    "prompt_text",
    "render_template",
    "serialize_template",
    "template_names",
    "validate_template",
]
