"""Prompt templates: the round trip, parsing errors, validation, rendering, built-ins."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kforge.errors import ValidationError
from kforge.prompts import (
    TEMPLATES,
    PlaceholderDef,
    PromptSection,
    PromptTemplate,
    load_template,
    parse_template,
    phase_prompt,
    render_template,
    serialize_template,
    template_names,
    validate_template,
)
from kforge.prompts.template import PLAIN_NAME, is_opener

IDENT = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
XML_NAME = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,10}", fullmatch=True)
MD_NAME = (
    st.text(alphabet="abcdefghijklmnopqrstuvwxyzABC0123 -:'é()#", min_size=1, max_size=20)
    .map(str.strip)
    .filter(lambda s: bool(s) and not s.endswith("(optional)"))
)
LINE = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=30
)


def _content(draw: Any, placeholders: list[str], name: str, delimiter: str) -> str:
    lines = draw(st.lists(LINE, min_size=1, max_size=5))
    for ref in draw(st.lists(st.sampled_from(placeholders), max_size=2)) if placeholders else []:
        lines.insert(draw(st.integers(0, len(lines))), f"{{{{{ref}}}}}")
    lines = [ln for ln in lines if not is_opener(ln) and ln != f"</{name}>"]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines) or "text"


@st.composite
def templates(draw: Any) -> PromptTemplate:
    names = draw(st.lists(IDENT, max_size=4, unique=True))
    placeholders = [
        PlaceholderDef(n, draw(st.sampled_from(["string", "array", "object"])), draw(st.booleans()))
        for n in names
    ]
    sections: list[PromptSection] = []
    used_names: set[str] = set()
    for _ in range(draw(st.integers(1, 5))):
        delimiter = draw(st.sampled_from(["xml", "markdown"]))
        name = draw(XML_NAME if delimiter == "xml" else MD_NAME.filter(lambda s: "{" not in s))
        if name in used_names:
            continue
        used_names.add(name)
        required = draw(st.booleans())
        content = _content(draw, names, name, delimiter)
        if not required and draw(st.booleans()):
            content = ""
        sections.append(PromptSection(name, content, delimiter, required))
    used = {n for s in sections for n in s.placeholders}
    for n in names:
        if n not in used:
            last = sections[-1]
            sections[-1] = PromptSection(
                last.name,
                f"{last.content}\n{{{{{n}}}}}".lstrip("\n"),
                last.delimiter,
                last.required,
            )
    template = PromptTemplate(
        name=draw(st.from_regex(r"[A-Z][A-Z_]{0,12}", fullmatch=True)),
        sections=tuple(sections),
        placeholders=tuple(placeholders),
        description=draw(st.sampled_from(["", "A template.", "Grade: one result"])),
    )
    assert validate_template(template).valid, validate_template(template).errors
    return template


@st.composite
def plain_templates(draw: Any) -> PromptTemplate:
    """A template whose body is plain text: any lines, blank ones and look-alike headings
    included, as long as the first non-blank line opens no section."""
    names = draw(st.lists(IDENT, max_size=3, unique=True))
    lines = draw(
        st.lists(st.one_of(LINE, st.sampled_from(["", "## Heading", "<tag>", "---"])), max_size=6)
    )
    lines.extend(f"{{{{{n}}}}} and more" for n in names)
    first = next((line for line in lines if line.strip()), None)
    if first is None or is_opener(first):
        lines.insert(0, "Plain words.")
    template = PromptTemplate(
        name=draw(st.from_regex(r"[A-Z][A-Z_]{0,12}", fullmatch=True)),
        sections=(PromptSection(PLAIN_NAME, "\n".join(lines), "plain"),),
        placeholders=tuple(PlaceholderDef(n, "string", draw(st.booleans())) for n in names),
    )
    assert validate_template(template).valid, validate_template(template).errors
    return template


@settings(max_examples=200)
@given(st.one_of(templates(), plain_templates()))
def test_prompt_template_round_trip(template: PromptTemplate) -> None:
    """For any valid prompt template, serializing it to a string and parsing it back produces
    an equivalent template."""
    text = serialize_template(template)
    parsed = parse_template(text)
    assert parsed == template
    assert serialize_template(parsed) == text


def test_every_builtin_file_round_trips_byte_for_byte() -> None:
    directory = Path(__file__).resolve().parents[2] / "src" / "kforge" / "prompts" / "templates"
    for name in template_names():
        source = (directory / f"{name.lower()}.prompt").read_text(encoding="utf-8")
        assert serialize_template(parse_template(source)) == source


def test_the_seed_templates_are_built_in() -> None:
    names = set(template_names())
    assert {
        "REACT_SYSTEM",
        "REFLECTION",
        "RESULT_GRADING",
        "QUERY_REWRITE",
        "CONTEXT_COMPACTION",
        "ROUTER",
    } <= names
    assert {
        "RESEARCH_DECOMPOSE",
        "UNDERSTAND_CALIBRATE",
        "BUILD_GROUNDING",
        "PHASE_REENTRY",
    } <= names
    assert all(validate_template(TEMPLATES[n]).valid for n in names)
    assert len(TEMPLATES) == len(names) and set(TEMPLATES) == names


def test_parse_errors_name_the_line() -> None:
    with pytest.raises(ValidationError, match="line 1: a template starts with"):
        parse_template("name: X\n")
    with pytest.raises(ValidationError, match="line 5: section <a> is never closed"):
        parse_template("---\nname: X\n---\n\n<a>\ntext\n")
    with pytest.raises(ValidationError, match="line 9: text outside any section"):
        parse_template("---\nname: X\n---\n\n<a>\ntext\n</a>\n\nstray words\n")
    with pytest.raises(ValidationError, match="line 4: a placeholder is"):
        parse_template("---\nname: X\nplaceholders:\n  q: number\n---\n")
    with pytest.raises(ValidationError, match="not closed with '---'"):
        parse_template("---\nname: X\n")


def test_validation_lists_every_problem() -> None:
    template = PromptTemplate(
        "T",
        (
            PromptSection("a b", "x", "xml"),
            PromptSection("Body", "", "markdown", required=True),
            PromptSection("Body", "{{missing}}", "markdown"),
        ),
        (PlaceholderDef("unused"),),
    )
    errors = "\n".join(validate_template(template).errors)
    assert "XML section name" in errors
    assert "a required section needs content" in errors
    assert "duplicate section name" in errors
    assert "placeholder 'missing' is used but not declared" in errors
    assert "placeholder 'unused' is declared but used by no section" in errors
    with pytest.raises(ValidationError, match="cannot serialize an invalid template"):
        serialize_template(template)


def test_render_checks_placeholders_and_drops_empty_optional_sections() -> None:
    template = TEMPLATES["REACT_SYSTEM"]
    text = render_template(
        template,
        goal="Explain ViT",
        tools=["search: find papers", "read: open a page"],
        max_steps="5",
        grounding={"goal": "Explain ViT", "decided": "use 2021+ papers"},
    )
    assert "<goal>\nExplain ViT\n</goal>" in text
    assert "- search: find papers\n- read: open a page" in text
    assert "- decided: use 2021+ papers" in text
    assert "<reflections>" not in text
    assert "{{" not in text
    with pytest.raises(ValidationError, match="needs a value for 'goal'"):
        render_template(template, tools=[], max_steps="5")
    with pytest.raises(ValidationError, match="placeholder 'tools' must be an array"):
        render_template(template, goal="g", tools="search", max_steps="5")


def test_markdown_sections_render_as_headings() -> None:
    template = parse_template(
        "---\nname: G\nplaceholders:\n  query: string\n  context: string, optional\n---\n\n"
        "<task>\nGrade {{query}}.\n</task>\n\n<context optional>\n{{context}}\n</context>\n\n"
        "## Output format\nReply with JSON.\n"
    )
    text = render_template(template, query="q")
    assert text == "<task>\nGrade q.\n</task>\n\n## Output format\nReply with JSON."


def test_load_template_by_path_and_unknown_name(tmp_path: Path) -> None:
    path = tmp_path / "mine.prompt"
    path.write_text("---\nname: MINE\nplaceholders:\n  who: string\n---\n\n## Hello\nHi {{who}}\n")
    assert render_template(load_template(path), who="Ada") == "## Hello\nHi Ada"
    assert load_template(str(path)).name == "MINE"
    with pytest.raises(ValidationError, match="no built-in template 'NOPE'"):
        load_template("NOPE")


def test_phase_prompts_differ_on_reentry() -> None:
    first = phase_prompt("build", "grounding", project="solar power", shapes=["cli"])
    again = phase_prompt(
        "build",
        "grounding",
        visit_count=1,
        backward_trigger="synthesis_reveals_missing_category",
        existing_work_summary="4 categories, 14 questions",
    )
    assert "solar power" in first and "returning" not in first
    assert "You are returning to the GROUNDING phase." in again
    assert "synthesis_reveals_missing_category" in again
    assert "4 categories, 14 questions" in again


def test_a_plain_body_renders_exactly_as_written() -> None:
    text = (
        "---\nname: P\nplaceholders:\n  who: string\n  note: string, optional\n---\n\n"
        "Hello {{who}},\n\n## not a heading here\n<b>kept</b>{{note}}\n\n"
    )
    template = parse_template(text)
    assert [s.delimiter for s in template.sections] == ["plain"]
    assert serialize_template(template) == text
    assert render_template(template, who="Ada") == (
        "Hello Ada,\n\n## not a heading here\n<b>kept</b>\n"
    )
    assert render_template(template, who="{{note}}", note="{x}").startswith("Hello {{note}},")


def test_a_plain_body_is_the_only_section_and_opens_none() -> None:
    mixed = PromptTemplate(
        "M", (PromptSection(PLAIN_NAME, "text", "plain"), PromptSection("a", "x", "xml"))
    )
    assert "a plain body is the template's only section" in "; ".join(
        validate_template(mixed).errors
    )
    opener = PromptTemplate("O", (PromptSection(PLAIN_NAME, "\n<a>\nx", "plain"),))
    assert "must not begin with a section opener" in "; ".join(validate_template(opener).errors)
    empty = PromptTemplate("E", (PromptSection(PLAIN_NAME, " ", "plain"),))
    assert "a plain body needs text" in "; ".join(validate_template(empty).errors)
    with pytest.raises(ValidationError, match="cannot serialize an invalid template"):
        serialize_template(opener)
