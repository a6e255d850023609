"""The text form of a prompt template: parse and serialize, round-tripping exactly.

    ---
    name: RESULT_GRADING
    description: Grade one search result.
    placeholders:
      query: string
      notes: array, optional
    ---

    <task>
    Grade the result for {{query}}.
    </task>

    ## Notes (optional)
    {{notes}}

A section is ``<name>`` ... ``</name>`` (``<name optional>`` when optional) or a ``## Name``
heading (``## Name (optional)``) running to the next section. Sections are separated by one
blank line.

A body whose first non-blank line opens no section is plain text: everything after the blank
line that follows the front matter, up to the file's final newline, rendered exactly as written
(blank lines, ``## `` lines and tags inside it included).
"""

from __future__ import annotations

from typing import cast

from kforge.errors import ValidationError
from kforge.prompts.template import (
    IDENTIFIER_RE,
    MARKDOWN_OPENER_RE,
    PLAIN_NAME,
    XML_OPENER_RE,
    PlaceholderDef,
    PlaceholderType,
    PromptSection,
    PromptTemplate,
    is_opener,
    validate_template,
)

__all__ = ["parse_template", "serialize_template"]


def serialize_template(template: PromptTemplate) -> str:
    """The template as text; ``parse_template`` of the result equals ``template``."""
    problems = validate_template(template)
    if not problems:
        raise ValidationError("cannot serialize an invalid template: " + "; ".join(problems.errors))
    lines = ["---", f"name: {template.name}"]
    if template.description:
        lines.append(f"description: {template.description}")
    if template.placeholders:
        lines.append("placeholders:")
        for p in template.placeholders:
            lines.append(f"  {p.name}: {p.type}" + ("" if p.required else ", optional"))
    lines.append("---")
    if template.sections[0].delimiter == "plain":
        return "\n".join([*lines, "", template.sections[0].content]) + "\n"
    for section in template.sections:
        lines.append("")
        if section.delimiter == "xml":
            lines.append(f"<{section.name}{'' if section.required else ' optional'}>")
            if section.content:
                lines.append(section.content)
            lines.append(f"</{section.name}>")
        else:
            lines.append(f"## {section.name}{'' if section.required else ' (optional)'}")
            if section.content:
                lines.append(section.content)
    return "\n".join(lines) + "\n"


def _fail(source: str, number: int, message: str) -> ValidationError:
    return ValidationError(f"{source} line {number}: {message}")


def _front_matter(
    lines: list[str], source: str
) -> tuple[dict[str, str], list[PlaceholderDef], int]:
    if not lines or lines[0] != "---":
        raise _fail(source, 1, "a template starts with a '---' line, then name: and placeholders:")
    fields: dict[str, str] = {}
    placeholders: list[PlaceholderDef] = []
    index = 1
    in_placeholders = False
    while index < len(lines) and lines[index] != "---":
        line = lines[index]
        number = index + 1
        if in_placeholders and line.startswith("  "):
            name, sep, spec = line[2:].partition(": ")
            parts = [p.strip() for p in spec.split(",")]
            kind = parts[0]
            if (
                not sep
                or not IDENTIFIER_RE.fullmatch(name)
                or kind not in ("string", "array", "object")
            ):
                raise _fail(
                    source, number, "a placeholder is '  name: string|array|object[, optional]'"
                )
            if parts[1:] not in ([], ["optional"]):
                raise _fail(
                    source, number, f"unknown placeholder flag in {spec!r}; only 'optional' exists"
                )
            placeholders.append(PlaceholderDef(name, cast(PlaceholderType, kind), len(parts) == 1))
        elif line == "placeholders:":
            in_placeholders = True
        else:
            key, sep, value = line.partition(": ")
            if not sep or key not in ("name", "description"):
                raise _fail(
                    source,
                    number,
                    f"expected 'name: ...', 'description: ...' or 'placeholders:', got {line!r}",
                )
            fields[key] = value
            in_placeholders = False
        index += 1
    if index >= len(lines):
        raise _fail(source, len(lines), "the front matter is not closed with '---'")
    if "name" not in fields:
        raise _fail(source, 1, "the front matter needs 'name: ...'")
    return fields, placeholders, index + 1


def parse_template(text: str, *, source: str = "template") -> PromptTemplate:
    """Parse the text form; raises ``ValidationError`` naming the line that is wrong."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    fields, placeholders, index = _front_matter(lines, source)
    sections: list[PromptSection] = []
    first = next((line for line in lines[index:] if line.strip()), None)
    if first is not None and not is_opener(first):
        start = index + 1 if lines[index] == "" else index
        sections.append(PromptSection(PLAIN_NAME, "\n".join(lines[start:]), "plain"))
        index = len(lines)
    while index < len(lines):
        line = lines[index]
        if not line.strip():
            index += 1
            continue
        if xml := XML_OPENER_RE.fullmatch(line):
            name = xml.group(1)
            closing = f"</{name}>"
            end = index + 1
            while end < len(lines) and lines[end] != closing:
                end += 1
            if end >= len(lines):
                raise _fail(source, index + 1, f"section <{name}> is never closed with {closing}")
            content = "\n".join(lines[index + 1 : end])
            sections.append(PromptSection(name, content, "xml", xml.group(2) is None))
            index = end + 1
        elif md := MARKDOWN_OPENER_RE.fullmatch(line):
            end = index + 1
            while end < len(lines) and not is_opener(lines[end]):
                end += 1
            body = lines[index + 1 : end]
            while body and not body[-1].strip():
                body.pop()
            sections.append(
                PromptSection(md.group(1), "\n".join(body), "markdown", md.group(2) is None)
            )
            index = end
        else:
            raise _fail(
                source,
                index + 1,
                f"text outside any section: {line[:60]!r}; wrap it in <name>...</name> or start a '## Name' section",
            )
    return PromptTemplate(
        name=fields["name"],
        sections=tuple(sections),
        placeholders=tuple(placeholders),
        description=fields.get("description", ""),
    )
