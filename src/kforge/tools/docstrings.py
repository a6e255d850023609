"""Read a function's description and parameter docs from its docstring (Google, NumPy or Sphinx)."""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

__all__ = ["ParsedDocstring", "parse_docstring"]

_GOOGLE_PARAMS = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments):\s*$"
)
_GOOGLE_OTHER = re.compile(
    r"^(Returns?|Yields?|Raises|Examples?|Notes?|Attributes|See Also|Warnings?|Todo|References)"
    r":\s*$"
)
_GOOGLE_ITEM = re.compile(r"^(\*{0,2}[A-Za-z_][A-Za-z0-9_]*)\s*(\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_HEADER = re.compile(r"^-{3,}\s*$")
# One entry may document several names: "x, y : array_like".
_NUMPY_ITEM = re.compile(r"^(\*{0,2}[A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*)\s*(:\s*.*)?$")
_SPHINX_PARAM = re.compile(r"^:param\s+(?:[^:]*\s)?([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*)$")
_SPHINX_OTHER = re.compile(r"^:(type|rtype|returns?|raises?|vartype|var)\b")


@dataclass(frozen=True, slots=True)
class ParsedDocstring:
    description: str = ""
    """The text before the first section."""
    params: dict[str, str] = field(default_factory=dict)
    """Parameter name -> its description (continuation lines joined with spaces)."""


def parse_docstring(doc: str | None) -> ParsedDocstring:
    if not doc:
        return ParsedDocstring()
    lines = inspect.cleandoc(doc).splitlines()
    description: list[str] = []
    params: dict[str, str] = {}
    i = 0
    in_description = True
    while i < len(lines):
        stripped = lines[i].strip()
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if _GOOGLE_PARAMS.match(stripped):
            i = _google_section(lines, i + 1, params)
            in_description = False
            continue
        if _NUMPY_HEADER.match(nxt) and stripped:
            in_description = False
            if stripped.lower() in ("parameters", "params", "arguments", "other parameters"):
                i = _numpy_section(lines, i + 2, params)
            else:
                i = _skip_numpy_section(lines, i + 2)
            continue
        sphinx = _SPHINX_PARAM.match(stripped)
        if sphinx:
            in_description = False
            i = _continued(lines, i, sphinx.group(1), sphinx.group(2), params)
            continue
        if _GOOGLE_OTHER.match(stripped) or _SPHINX_OTHER.match(stripped):
            in_description = False
        elif in_description:
            description.append(lines[i])
        i += 1
    return ParsedDocstring(description="\n".join(description).strip(), params=params)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _google_section(lines: list[str], i: int, params: dict[str, str]) -> int:
    base: int | None = None
    name: str | None = None
    parts: list[str] = []
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        indent = _indent(line)
        if base is None:
            if indent == 0:
                break
            base = indent
        if indent < base:
            break
        match = _GOOGLE_ITEM.match(line.strip()) if indent == base else None
        if match:
            if name is not None:
                params[name] = " ".join(parts).strip()
            name, parts = match.group(1).lstrip("*"), [match.group(3)]
        elif name is not None:
            parts.append(line.strip())
        i += 1
    if name is not None:
        params[name] = " ".join(parts).strip()
    return i


def _numpy_section(lines: list[str], i: int, params: dict[str, str]) -> int:
    names: list[str] = []
    parts: list[str] = []

    def flush() -> None:
        for name in names:
            params[name] = " ".join(parts).strip()

    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and _NUMPY_HEADER.match(nxt.strip()):
            break
        if not line.strip():
            i += 1
            continue
        match = _NUMPY_ITEM.match(line) if _indent(line) == 0 else None
        if match:
            flush()
            names = [name.strip().lstrip("*") for name in match.group(1).split(",")]
            parts = []
        elif names:
            parts.append(line.strip())
        i += 1
    flush()
    return i


def _skip_numpy_section(lines: list[str], i: int) -> int:
    while i < len(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if lines[i].strip() and _NUMPY_HEADER.match(nxt.strip()):
            return i
        i += 1
    return i


def _continued(lines: list[str], i: int, name: str, first: str, params: dict[str, str]) -> int:
    parts = [first]
    i += 1
    while i < len(lines) and lines[i].strip() and _indent(lines[i]) > 0:
        parts.append(lines[i].strip())
        i += 1
    params[name] = " ".join(parts).strip()
    return i
