"""Rendering a prompt template with context values, checked against the placeholder types."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kforge import jsoncodec
from kforge.errors import ValidationError
from kforge.prompts.template import PLACEHOLDER_RE, PlaceholderDef, PromptSection, PromptTemplate

__all__ = ["format_value", "render_template"]

_TYPE_NAMES = {
    "string": "a string",
    "array": "an array (list or tuple)",
    "object": "an object (dict)",
}


def _check(placeholder: PlaceholderDef, value: Any, template: str) -> None:
    ok = {
        "string": isinstance(value, (str, int, float)) and not isinstance(value, bool),
        "array": isinstance(value, (list, tuple)),
        "object": isinstance(value, Mapping),
    }[placeholder.type]
    if not ok:
        raise ValidationError(
            f"template '{template}': placeholder '{placeholder.name}' must be "
            f"{_TYPE_NAMES[placeholder.type]}, got {type(value).__name__}"
        )


def _item(value: Any) -> str:
    if isinstance(value, str):
        return value
    return jsoncodec.dumps(value, default=str, spaced=True)


def format_value(value: Any) -> str:
    """How a value appears in a prompt: strings as they are, arrays as ``- item`` lines,
    objects as ``- key: value`` lines, anything nested as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return "\n".join(f"- {key}: {_item(item)}" for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return "\n".join(f"- {_item(item)}" for item in value)
    return str(value)


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, (str, list, tuple, Mapping)) and len(value) == 0)


def _render_section(section: PromptSection, values: Mapping[str, Any]) -> str:
    body = PLACEHOLDER_RE.sub(lambda m: format_value(values.get(m.group(1))), section.content)
    if section.delimiter == "plain":
        return body
    if section.delimiter == "xml":
        return f"<{section.name}>\n{body}\n</{section.name}>"
    return f"## {section.name}\n{body}"


def render_template(
    template: PromptTemplate, context: Mapping[str, Any] | None = None, **values: Any
) -> str:
    """The prompt text: sections in order, placeholders filled from ``context`` and ``values``.

    Missing required placeholders and values of the wrong type raise ``ValidationError``.
    Optional sections whose placeholders are all empty are left out.
    """
    merged = {**(context or {}), **values}
    missing = [p.name for p in template.placeholders if p.required and _empty(merged.get(p.name))]
    if missing:
        raise ValidationError(
            f"template '{template.name}' needs a value for {', '.join(repr(m) for m in missing)}"
        )
    declared = {p.name: p for p in template.placeholders}
    for name, placeholder in declared.items():
        if merged.get(name) is not None:
            _check(placeholder, merged[name], template.name)
    parts = []
    for section in template.sections:
        used = section.placeholders
        if not section.required and used and all(_empty(merged.get(n)) for n in used):
            continue
        parts.append(_render_section(section, merged))
    return "\n\n".join(parts)
