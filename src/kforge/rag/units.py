"""The units a person reads in a passage: sentences, list items, definition entries, table rows,
code blocks and API signatures, each quoted exactly as the passage has it.

Every unit's text is a stretch of the passage with its whitespace collapsed (a list item without
its bullet), so an answer built from units quotes its sources exactly. Markup stays as written:
``ffi_type **argtypes`` and ``tm_type_elements[12]`` are code, not emphasis or citations.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Literal

from kforge.rag.terms import unit_terms
from kforge.rag.textcheck import split_sentences

__all__ = [
    "CALL_OPENING",
    "Unit",
    "UnitKind",
    "field_name",
    "normalized",
    "passage_units",
    "points_elsewhere",
    "reads_as_code",
    "refers_elsewhere",
]

UnitKind = Literal["sentence", "item", "row", "code", "signature"]

_FENCE = re.compile(r"^\s*(```|~~~)")
_BULLET = re.compile(r"^(\s*)(?:[-*+\u2022\u25e6]|\d{1,3}[.)])\s+(?=\S)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_RULE = re.compile(r"^\s*[-=*_]{3,}\s*$")
_ROW = re.compile(r"^\s*\|.*\|\s*$")
_ROW_RULE = re.compile(r"^\s*\|?[\s:|-]+\|?\s*$")
_SHORT_CELL = re.compile(r"^\s*[^\s|]{1,3} \| \S")
"""A table's row whose first cell is a mark or two ("+ | Enter TeX mode.", "# | Save ..."),
not a list's bullet or a heading."""
_DEFINITION = re.compile(r"^\s*[^\s:|][^:]{0,80}?(?:::|:)(?:\s+\S|\s*$)")
_ASCIIDOC_TERM = re.compile(r"^\s*\S.*::\s*$")
_TYPE_ONLY = re.compile(r"^(?:Returns:\s*|Type:\s*)?\{[^{}]*\}$")
_CODE_SPAN = re.compile(r"`[^`\n]+`")
_TAGS = re.compile(r"</?(?:table|thead|tbody|tr|td|th)\b", re.IGNORECASE)
_CODE_LINE = re.compile(
    r"[;{}(]\s*$|^\s*(?://|/\*|\*/|#!|\$ |>>>|\.\.\.(?:\s|$)|[}\])]|@\w(?!.*\): [A-Z]))"
    r"|^\s*(?:async\s+)?(?:def|class|for|while|with|try|except|finally|if|elif|else)\b.*:\s*$"
    r"|^\s*(?:import [\w.]+|from [\w.]+ import|return\b|(?:await|yield|raise) [\w(])"
    # an assignment statement: "app.config['MAX_CONTENT_LENGTH'] = 16 * 1000 * 1000"
    r"|^\s*[A-Za-z_][\w.]*(?:\[[^\]]*\])*\s*[-+*/|]?=\s*\S(?!.*[.!?]\s*$)"
    # a terminal's panel drawn with box lines: "╭─ Error ──╮", "│ Missing argument 'NAME'. │"
    r"|^\s*[\u2500-\u257f]|[\u2500-\u257f]\s*$"
    # markup, a template's tag: "<%def name="hello()">", "</%def>", "<div class="header">"
    r"|^\s*</?[%!]?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>(?:.*>)?\s*$"
)
"""A line of code: by its punctuation, a prompt (``$``, ``>>>``), a decorator (not an API
entry that opens with one: ``@functools.cache(user_function): Simple ...``), or a Python
statement."""
_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")
_WORDS_RUN = re.compile(r"\b[a-z]{2,} [a-z]{2,} [a-z]{2,} [a-z]{2,}\b")


def _code_line(line: str) -> bool:
    """True for a line of code (``_CODE_LINE``), not for a rule of a list written as prose
    and ended with a semicolon ("Escape characters are not recognized;"): outside its quotes,
    a run of four lower-case words and no assignment say it is prose."""
    if not _CODE_LINE.search(line) or _FIELD.match(line):
        return False  # "max_overflow=10 - the number of connections ..." is a parameter's entry
    if not line.rstrip().endswith(";"):
        return True
    bare = _QUOTED.sub(" ", line)
    return "=" in bare or _WORDS_RUN.search(bare) is None


_PROMPT = re.compile(r"^\s*(?:>>> |\$ )")
_MAX_CODE_LINES = 20
_LINK_REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s+\S+\s*$")
"""A Markdown link reference definition: ``[reading files]: #example-read-file``."""
_WRAP = 60
"""A line shorter than this that is followed by another is no wrapped paragraph's line."""
_RUNS_ON = re.compile(r"(?:[,;(\-]|\b(?:and|or|the|a|an|of|to|in|with|for|by|is|are))\s*$")
_OPENS = re.compile(r"^\s*[A-Z0-9`\"'(\[*]")
_ENDS = re.compile(r"[.!?]\s*$")
_FIELD = re.compile(
    r"^\s*(?:[A-Z][\w ]{0,30}::? )?\*{0,2}"
    r"(?:([A-Za-z_][\w.]*)\*{0,2} \([^()\n]{1,80}(?:\([^()\n]*\))?\) [\u2013\u2014-]"
    r"|([A-Za-z_][\w.]*)=[^\s=]+\*{0,2} [\u2013\u2014-]"
    r"|([a-z_][\w.]*)\*{0,2} [\u2013\u2014]) \S"
)
"""A parameter's line in an API reference's field list, rendered one a line: "port
(Optional[int]) - the port of the webserver. Defaults to 5000 ...", with its default
("max_overflow=10 - the number of connections ...") or, untyped, "url_prefix - Blueprint
routes will be prefixed with this." (a new item however long the line before it)."""


@dataclass(frozen=True, slots=True)
class Unit:
    """One unit of a passage, quoted exactly (whitespace collapsed; code keeps its lines)."""

    text: str
    kind: UnitKind
    position: int
    """Order within the passage (0 = first unit)."""


def normalized(text: str) -> str:
    """``text`` with every run of whitespace made one space, as units are compared."""
    return " ".join(text.split())


def _blocks(lines: list[str]) -> list[tuple[str, list[str]]]:
    """The passage's lines grouped into (kind, lines): prose paragraphs, list items, table rows,
    code blocks and headings; HTML comments dropped."""
    blocks: list[tuple[str, list[str]]] = []
    fences = [line.strip() for line in lines if _FENCE.match(line)]
    # a passage cut from the middle of a code block or comment starts inside it
    fenced: list[str] | None = [] if len(fences) % 2 and fences[0] in ("```", "~~~") else None
    text = "\n".join(lines)
    opener, closer = text.find("<!--"), text.find("-->")
    comment = closer >= 0 and (opener < 0 or closer < opener)
    for line in lines:
        stripped = line.strip()
        if fenced is not None:
            fenced.append(line)
            if _FENCE.match(line):
                blocks.append(("code", fenced))
                fenced = None
            continue
        if comment or stripped.startswith("<!--"):
            comment = "-->" not in stripped
            continue
        if _TAGS.search(line) or _LINK_REFERENCE.match(line):
            blocks.append(("blank", []))  # raw HTML tables and link targets are no prose
            continue
        if _FENCE.match(line):
            fenced = [line]
            continue
        cell = _SHORT_CELL.match(line) is not None  # "# | Save ...": a row, no heading
        heading = None if cell else _HEADING.match(line)
        if heading:
            blocks.append(("heading", [heading.group(1)]))
        elif not stripped or _RULE.match(line):
            blocks.append(("blank", [] if stripped else [line]))  # the line, as code keeps it
        elif _ROW.match(line):
            if not _ROW_RULE.match(line):
                blocks.append(("row", [line]))
        elif _BULLET.match(line) and not cell:
            blocks.append(("item", [line]))
        elif _ASCIIDOC_TERM.match(line):
            if blocks and blocks[-1][0] == "term" and all(map(_ASCIIDOC_TERM.match, blocks[-1][1])):
                blocks[-1][1].append(line)  # `-f::` then `--force::`: one entry
            else:
                blocks.append(("term", [line]))
        elif blocks and blocks[-1][0] in ("prose", "item", "term"):
            blocks[-1][1].append(line)  # a continuation line
        else:
            blocks.append(("prose", [line]))
    if fenced is not None:
        blocks.append(("code", fenced))
    return _definition_lines(blocks)


def field_name(text: str) -> str | None:
    """The parameter a line of an API reference's field list documents ("port" for "port
    (Optional[int]) - the port of the webserver."), or None for any other text."""
    match = _FIELD.match(text)
    return next((g for g in match.groups() if g), None) if match else None


def _is_entry(line: str) -> bool:
    """True for a line of a ``term: definition`` list written one entry a line."""
    return bool(_DEFINITION.match(line)) and len(line.split()) <= 40


_DEFINITION_LINE = re.compile(r"^(?:@|def |async def |class )")
_IMPORT_LINE = re.compile(r"^\s*(?:import |from \S+ import )")


def _add_code(out: list[tuple[str, list[str]]], lines: list[str]) -> None:
    """Add code ``lines`` to ``out``, as more lines of the code just before them when only blank
    lines lie between (a code block with a blank line in it, its fences not in the passage)."""
    gap = 0
    while gap < len(out) and out[-1 - gap][0] == "blank" and out[-1 - gap][1]:
        gap += 1  # a blank line (a rule or a raw HTML table holds no line)
    if 0 < gap < len(out) and out[-1 - gap][0] == "code":
        before = out[-1 - gap][1]
        joined = [*before, *(line for _, blank in out[-gap:] for line in blank), *lines]
        # not a session after a program (or a program after one), nor a command's synopsis
        # after another's: each a block of its own
        alike = bool(_PROMPT.match(before[0])) == bool(_PROMPT.match(lines[0]))
        # a definition of its own after code (imports lead whatever follows them)
        defines = _DEFINITION_LINE.match(lines[0]) is not None and not all(
            _IMPORT_LINE.match(line) for line in before if line.strip()
        )
        apart = defines or _call_signature(before) or _call_signature(lines)
        fenced = _FENCE.match(before[0])
        if alike and not apart and not fenced and len(joined) <= _MAX_CODE_LINES:
            out[-1 - gap :] = [("code", joined)]
            return
    out.append(("code", lines))


def _definition_lines(blocks: list[tuple[str, list[str]]]) -> list[tuple[str, list[str]]]:
    """A prose paragraph whose lines are mostly ``term: definition`` entries is a list of them;
    so is one whose lines are table rows (``a | b``), or lines that each stand alone (a list
    rendered from HTML one item a line, without bullets)."""
    out: list[tuple[str, list[str]]] = []
    for kind, lines in blocks:
        table = _option_table(lines) if kind == "prose" else None
        if table:
            out.extend(table)
            continue
        code_lines = sum(_code_line(x) for x in lines)
        said = next((block for block in reversed(out) if block[0] != "blank"), None)
        if kind == "prose" and (
            code_lines * 2 > len(lines)
            # a code block's lines after a blank line in it ("from mako.template import
            # Template", then "mytemplate = Template(...)" and "print(mytemplate.render())")
            or (said is not None and said[0] == "code" and code_lines * 2 >= len(lines))
            or _PROMPT.match(lines[0])
            or _call_signature(lines)
            or _nested_block(lines)
        ):
            _add_code(out, lines)  # code whose fences lie in another passage
            continue
        if kind == "prose" and said and said[1][-1].rstrip().endswith(":") and _commands(lines):
            out.append(("code", lines))  # "run the following command:" then its lines
            continue
        if kind == "prose" and len(lines) >= 2:
            entries = sum(1 for line in lines if _is_entry(line))
            if entries >= 2 and entries * 2 >= len(lines):
                out.extend(("item", [line]) for line in lines)
                continue
            if all(" | " in line for line in lines):
                out.extend(("row", [line]) for line in lines)
                continue
            # after "The main differences with behave are:", each line standing alone is an
            # item of the list it introduces, though it ends a sentence
            listed = said is not None and _LISTS_POINTS.search(said[1][-1]) is not None
            out.extend(_standalone_lines(lines, listed=listed))
            continue
        out.append((kind, lines))
    return out


_HELP_OPTION = re.compile(
    r"^ {1,8}-{1,2}[A-Za-z0-9?]|^-{1,2}[A-Za-z0-9?]\S*(?:,? -{1,2}[A-Za-z0-9?]\S*)* {2,}\S"
)
"""An option's line in a program's help output: indented a little, its description after it
or on the lines below, indented further; or, as a manual page's summary writes it, at the
margin with its description in a column of its own ("--exclude=PATTERN        exclude files
matching PATTERN")."""


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _option_table(lines: list[str]) -> list[tuple[str, list[str]]]:
    """A program's help output (``--help``) as one item for each option: its line and the
    description lines indented below it ("  --data-file=INFILE    Read coverage data ...
    from this" then "file. Defaults to '.coverage'."), the lines before the first option
    prose; nothing when ``lines`` hold fewer than two options so written."""
    starts = [n for n, line in enumerate(lines) if _HELP_OPTION.match(line)]
    if len(starts) < 2:
        return []
    out: list[tuple[str, list[str]]] = [("prose", lines[: starts[0]])] if starts[0] else []
    n = starts[0]
    while n < len(lines) and _HELP_OPTION.match(lines[n]):
        end = n + 1
        while end < len(lines) and _indent(lines[end]) > _indent(lines[n]) + 2:
            end += 1
        out.append(("item", lines[n:end]))
        n = end
    if n < len(lines):
        out.append(("prose", lines[n:]))
    return out if sum(kind == "item" for kind, _ in out) >= 2 else []


_SENTENCE_END = re.compile(r"[A-Za-z]{2}[.!?:]\s*$")


def _nested_block(lines: list[str]) -> bool:
    """True for a configuration's block (``backend www`` then its indented ``server s1
    10.0.0.1:80``, ``stats enable`` lines): short lines, most indented below the least
    indented, none ending a sentence (a wrapped paragraph's lines run longer, or end one)."""
    if len(lines) < 3 or any(len(x.strip()) > _WRAP or _SENTENCE_END.search(x) for x in lines):
        return False
    least = min(len(x) - len(x.lstrip()) for x in lines)
    nested = sum(1 for x in lines if len(x) - len(x.lstrip()) >= least + 2)
    return nested * 2 >= len(lines)


CALL_OPENING = re.compile(r"([A-Za-z_][\w.:]*)\(")
"""A call opened where it is matched, the name called in group 1: ``add_subdirectory(``."""


def _call_signature(lines: list[str]) -> bool:
    """True for a command's or function's synopsis written as a call over one or more lines,
    its parentheses closing at its end (``add_subdirectory(source_dir [binary_dir]
    [EXCLUDE_FROM_ALL] [SYSTEM])``): code, not a sentence, whatever its words."""
    text = " ".join(line.strip() for line in lines)
    if not CALL_OPENING.match(text) or not text.endswith(")") or len(lines) > _MAX_CODE_LINES:
        return False
    depth = 0
    for n, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and n < len(text) - 1 and char == ")":
            return False  # "f(x) does ..." or "f(a) or g(b)": the call is part of a sentence
    return depth == 0


_COMMAND_LINE = re.compile(r"^\s*[a-z./$~-][\w./~-]*(?: +\S+){0,8}\s*$")


def _commands(lines: list[str]) -> bool:
    """True for lines that read as commands, not prose: each a lower-case command name or
    path and a few arguments, none ending a sentence (``mkdocs new my-project``), nor running
    words together as a sentence does ("code 1 if some files would be reformatted; or", an
    item of a list rendered one a line), nor naming one thing each: "including:" then "edit",
    "run_pyscript", "shell" is a list of names."""
    if len(lines) >= 2 and all(len(x.split()) == 1 for x in lines):
        return False
    return all(_COMMAND_LINE.match(x) and not _ENDS.search(x) and not _says(x) for x in lines)


_FUNCTION_WORDS = frozenset(
    "if when unless there was were is are be been would will "  # noqa: SIM905
    "should could can must not no nothing some any the an of to that this it".split()
)


def _says(line: str) -> bool:
    """True for a line holding four lower-case words in a row, two of them words that only
    prose runs together ("if nothing would change"): a command's arguments do not."""
    return any(
        len(_FUNCTION_WORDS.intersection(run.group().split())) >= 2
        for run in _WORDS_RUN.finditer(_QUOTED.sub(" ", line))
    )


_LISTS_POINTS = re.compile(
    r"\b(?:differences|issues|reasons|advantages|disadvantages|benefits|drawbacks|"
    r"limitations|problems)\b[^:]*:\s*$",
    re.IGNORECASE,
)
"""A sentence introducing a list of points ("The main differences with behave are:")."""


def _standalone_lines(lines: list[str], *, listed: bool = False) -> list[tuple[str, list[str]]]:
    """``lines`` cut where a line stands alone: a short one not running on into the next
    (which opens like a new item). A paragraph wrapped at a fixed width runs on instead.
    ``listed``: the lines follow a sentence introducing a list, each piece is an item."""
    pieces: list[list[str]] = [[lines[0]]]
    for before, line in itertools.pairwise(lines):
        ended = (len(before.strip()) < _WRAP or (listed and _ENDS.search(before))) and not (
            _RUNS_ON.search(before)
        )
        # a parameter's line, or an option's entry ("--no-abbrev: Display ..."), after a line
        # that ends a sentence starts a unit of its own; a typed parameter's line ("timeout
        # (float) - Timeout in seconds, default 20 seconds"), or one giving its default
        # ("max_overflow=10 - the number of ..."), or named in snake_case ("pool_pre_ping -
        # boolean, ..."), after any line
        typed = _FIELD.match(line)
        field = (typed and (typed.group(1) or typed.group(2) or "_" in typed.group(3))) or (
            (typed or _DEFINITION.match(line)) and _ENDS.search(before)
        )
        if (ended and _OPENS.match(line)) or field or " | " in before or " | " in line:
            pieces.append([line])
        else:
            pieces[-1].append(line)
    if len(pieces) == 1:
        return [("prose", lines)]
    return [(_line_kind(piece, listed=listed), piece) for piece in pieces]


def _line_kind(lines: list[str], *, listed: bool = False) -> str:
    if len(lines) == 1 and " | " in lines[0]:
        return "row"
    if _FIELD.match(lines[0]) or listed:
        return "item"
    return "prose" if _ENDS.search(lines[-1]) else "item"


def _item_text(lines: list[str]) -> str:
    first = _BULLET.sub("", lines[0], count=1)
    return normalized(" ".join([first, *lines[1:]]))


def _code_text(lines: list[str]) -> str:
    body = [line for line in lines if not _FENCE.match(line)]
    while body and not body[0].strip():
        body.pop(0)
    while body and not body[-1].strip():
        body.pop()
    return "\n".join(lines) if body else ""


def passage_units(text: str) -> list[Unit]:
    """The units of passage ``text`` in order; see the module doc."""
    units: list[Unit] = []

    def add(unit_text: str, kind: UnitKind) -> None:
        if unit_text:
            units.append(Unit(unit_text, kind, len(units)))

    for kind, lines in _blocks(text.splitlines()):
        if kind == "code":
            if len(lines) <= _MAX_CODE_LINES:
                add(_code_text(lines), "code")
        elif kind == "heading":
            if _CODE_SPAN.fullmatch(lines[0].strip()):
                add(lines[0].strip(), "signature")  # an API heading: `fs.link(path, ...)`
        elif kind == "row":
            add(normalized(lines[0]), "row")
        elif kind in ("item", "term"):
            item = _item_text(lines) if kind == "item" else normalized(" ".join(lines))
            if _TYPE_ONLY.match(item):
                continue
            if len(item.split()) > 60:
                for sentence in split_sentences(item):
                    add(sentence, "sentence")
            else:
                add(item, "item")
        elif kind == "prose":
            for sentence in split_sentences("\n".join(lines)):
                add(sentence, "sentence")
    return units


_SECTION_REFERENCE = re.compile(r"\|\s*(?:[A-Z]|\d{1,3})(?:\.\d{1,3})+\.?\s+\S[^|]*\|?\s*$")


def points_elsewhere(unit: Unit) -> bool:
    """True for a row of an index or a table of contents ("magic signature of MO files | 10.3
    The Format of GNU MO Files"): it names the section that says something, not what it says;
    and for a glossary's entry whose text only names another ("code points: code point")."""
    if unit.kind == "item":
        entry = _ALIAS.match(unit.text)
        if entry is None:
            return False
        said = unit_terms(entry.group(2))
        return bool(said) and said <= unit_terms(entry.group(1))
    return unit.kind == "row" and _SECTION_REFERENCE.search(unit.text) is not None


_ALIAS = re.compile(r"^([^:]{1,60}):\s+([^:.]{1,60})$")
"""An entry of a few words: its term, and what it says."""


_ELSEWHERE = re.compile(
    r"^(?:(?:for )?(?:more |further )?(?:details|information)(?: about [^,.]+)?"
    r"(?:,)? (?:see|are in|is in|can be found in|are given in|is given in)"
    r"|see (?:also )?(?:the )?[^,]+? for (?:more |further )?(?:details|information)\b"
    r"|refer to [^,]+ for\b|read more (?:about [^,.]+ )?(?:in|at|here)\b)",
    re.IGNORECASE,
)


def refers_elsewhere(text: str) -> bool:
    """True for a sentence that sends the reader to another section for what it does not
    say ("More details are in Excluding code from coverage.py.", "See Specifying source files
    for details."): it names where an answer is, not the answer."""
    return _ELSEWHERE.match(text) is not None


_FLAT_CODE = re.compile(
    r"^(?:def |async (?:def|with|for) |await [\w.]+\(|with [\w.]+\(|import |from [\w.]+ import |"
    r"@[\w.]+|>>> |\$ |E\s+\w)"
    r"|\b(?:def|assert|return) [\w(]|\w\(\)\s+\w+\s*=|\s==\s|\bd = |\)\s*>\s*assert\b"
)
"""Statements in a line of prose: a code block whose lines the page ran together
(``def test_create_file(tmp_path): d = tmp_path / "sub" d.mkdir() ...``, ``async with
aiohttp.ClientSession(trust_env=True) as session: ...``)."""


def reads_as_code(text: str) -> bool:
    """True for a sentence or item that is code run together, not prose about it."""
    return len(_FLAT_CODE.findall(text)) >= 2 or _FLAT_CODE.match(text) is not None
