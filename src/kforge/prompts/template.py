"""Prompt templates: named sections, typed placeholders, and their validation."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "PLACEHOLDER_RE",
    "PLAIN_NAME",
    "PlaceholderDef",
    "PlaceholderType",
    "PromptSection",
    "PromptTemplate",
    "ValidationResult",
    "is_opener",
    "validate_template",
]

PlaceholderType = Literal["string", "array", "object"]
Delimiter = Literal["xml", "markdown", "plain"]

PLACEHOLDER_RE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
"""``{{name}}`` (spaces inside the braces allowed)."""
XML_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
XML_OPENER_RE = re.compile(r"<([A-Za-z_][A-Za-z0-9_.-]*)( optional)?>")
MARKDOWN_OPENER_RE = re.compile(r"## (\S.*?)( \(optional\))?")
IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
PLAIN_NAME = "body"
"""The name of the one section of a plain template."""


def is_opener(line: str) -> bool:
    """Whether ``line`` starts a section: ``<name>``, ``<name optional>`` or ``## Name``."""
    return bool(XML_OPENER_RE.fullmatch(line) or MARKDOWN_OPENER_RE.fullmatch(line))


@dataclass(frozen=True, slots=True)
class PlaceholderDef:
    name: str
    type: PlaceholderType = "string"
    required: bool = True


@dataclass(frozen=True, slots=True)
class PromptSection:
    name: str
    content: str
    delimiter: Delimiter = "xml"
    """``xml``: ``<name>...</name>``; ``markdown``: a ``## name`` heading; ``plain``: the whole
    body of a template without sections, rendered exactly as written."""
    required: bool = True
    """An optional section is left out of the rendered prompt when its placeholders are empty."""

    @property
    def placeholders(self) -> list[str]:
        """Names used in the content, in order of first use."""
        return list(dict.fromkeys(PLACEHOLDER_RE.findall(self.content)))


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    name: str
    sections: tuple[PromptSection, ...]
    placeholders: tuple[PlaceholderDef, ...] = ()
    description: str = ""

    def section(self, name: str) -> PromptSection:
        for section in self.sections:
            if section.name == name:
                return section
        raise KeyError(f"template '{self.name}' has no section '{name}'")

    def placeholder(self, name: str) -> PlaceholderDef:
        for placeholder in self.placeholders:
            if placeholder.name == name:
                return placeholder
        raise KeyError(f"template '{self.name}' declares no placeholder '{name}'")


@dataclass(frozen=True, slots=True)
class ValidationResult:
    errors: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        return not self.errors

    def __bool__(self) -> bool:
        return self.valid


def _single_line(value: str) -> bool:
    return value == value.strip() and "\n" not in value and "\r" not in value


def _plain_errors(section: PromptSection, where: str) -> list[str]:
    errors: list[str] = []
    if section.name != PLAIN_NAME or not section.required:
        errors.append(f"{where}: a plain body is the required section named '{PLAIN_NAME}'")
    if not section.content.strip():
        errors.append(f"{where}: a plain body needs text")
    if "\r" in section.content:
        errors.append(f"{where}: content must use \\n line endings")
    first = next((line for line in section.content.split("\n") if line.strip()), "")
    if is_opener(first):
        errors.append(
            f"{where}: a plain body must not begin with a section opener ({first!r}); "
            "write the template as sections instead"
        )
    return errors


def _section_errors(section: PromptSection, where: str) -> list[str]:
    if section.delimiter == "plain":
        return _plain_errors(section, where)
    errors: list[str] = []
    if section.delimiter == "xml" and not XML_NAME_RE.fullmatch(section.name):
        errors.append(
            f"{where}: an XML section name must match [A-Za-z_][A-Za-z0-9_.-]* (got {section.name!r})"
        )
    if section.delimiter == "markdown" and (
        not section.name
        or not _single_line(section.name)
        or not MARKDOWN_OPENER_RE.fullmatch(f"## {section.name}")
        or section.name.endswith("(optional)")
    ):
        errors.append(
            f"{where}: a Markdown section name must be one trimmed line (got {section.name!r})"
        )
    if section.required and not section.content.strip():
        errors.append(f"{where}: a required section needs content")
    if "\r" in section.content:
        errors.append(f"{where}: content must use \\n line endings")
    lines = section.content.split("\n")
    if section.content and (not lines[0].strip() or not lines[-1].strip()):
        errors.append(f"{where}: content must not begin or end with a blank line")
    for number, line in enumerate(lines, 1):
        if section.delimiter == "xml" and line == f"</{section.name}>":
            errors.append(f"{where}: content line {number} would close the section early")
        if section.delimiter == "markdown" and is_opener(line):
            errors.append(
                f"{where}: content line {number} looks like the start of a section: {line!r}"
            )
    return errors


def validate_template(template: PromptTemplate) -> ValidationResult:
    """Check names, required sections and placeholder declarations; list every problem."""
    errors: list[str] = []
    if not template.name or not _single_line(template.name):
        errors.append(f"template name must be one trimmed line (got {template.name!r})")
    if not _single_line(template.description) and template.description:
        errors.append("template description must be one trimmed line")
    if not template.sections:
        errors.append(f"template '{template.name}' has no sections")
    plain = [s for s in template.sections if s.delimiter == "plain"]
    if plain and len(template.sections) > 1:
        errors.append(
            f"template '{template.name}': a plain body is the template's only section "
            f"(it has {len(template.sections)})"
        )
    seen: set[str] = set()
    for index, section in enumerate(template.sections, 1):
        where = f"template '{template.name}' section {index} ('{section.name}')"
        if section.name in seen:
            errors.append(f"{where}: duplicate section name")
        seen.add(section.name)
        errors.extend(_section_errors(section, where))
    declared: dict[str, PlaceholderDef] = {}
    for placeholder in template.placeholders:
        if not IDENTIFIER_RE.fullmatch(placeholder.name):
            errors.append(f"placeholder name {placeholder.name!r} is not an identifier")
        if placeholder.name in declared:
            errors.append(f"placeholder '{placeholder.name}' is declared twice")
        if placeholder.type not in ("string", "array", "object"):
            errors.append(f"placeholder '{placeholder.name}' has unknown type {placeholder.type!r}")
        declared[placeholder.name] = placeholder
    used = {name for section in template.sections for name in section.placeholders}
    for name in sorted(used - declared.keys()):
        errors.append(f"placeholder '{name}' is used but not declared")
    for name in sorted(declared.keys() - used):
        errors.append(f"placeholder '{name}' is declared but used by no section")
    return ValidationResult(tuple(errors))
