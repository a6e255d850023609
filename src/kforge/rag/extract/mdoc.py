"""A BSD manual page (troff with the mdoc(7) macros: ``ssh_config(5)``, ``tmux(1)``) rendered
to the text ``man`` shows.

``.Sh`` and ``.Ss`` are headings; a ``.Bl -tag`` list's ``.It`` entries are ``tag: text``
lines (``Host: Restricts the following declarations ...``), other lists' items lines of their
own; ``.Bd -literal`` blocks and ``.Dl`` lines are code. The inline macros become what they
show: ``.Fl o`` is ``-o``, ``.Xr ssh 1`` is ``ssh(1)``, ``.Dq text`` is "text", ``.Op``
brackets, ``.Pq`` parentheses, and punctuation after them closes up.
"""

from __future__ import annotations

import re

from kforge.rag.extract.document import ExtractedDocument, TextBlock, layout_blocks
from kforge.rag.extract.troff import fold_short_sections, inline

__all__ = ["extract_mdoc"]

_ENCLOSE = {
    "Dq": ("\u201c", "\u201d"),
    "Qq": ('"', '"'),
    "Sq": ("\u2018", "\u2019"),
    "Ql": ("\u2018", "\u2019"),
    "Pq": ("(", ")"),
    "Op": ("[", "]"),
    "Aq": ("<", ">"),
    "Bq": ("[", "]"),
    "Brq": ("{", "}"),
}
_OPEN = {"Do": "\u201c", "Qo": '"', "So": "\u2018", "Po": "(", "Oo": "[", "Ao": "<", "Bo": "["}
_CLOSE = {"Dc": "\u201d", "Qc": '"', "Sc": "\u2019", "Pc": ")", "Oc": "]", "Ac": ">", "Bc": "]"}
_PLAIN = {"Ar", "Cm", "Pa", "Va", "Ev", "Ic", "Dv", "Er", "Fa", "Ft", "Em", "Sy", "Li", "No"}
_PLAIN |= {"Tn", "Sx", "Vt", "Lb", "Ms", "Mt", "Lk", "Cd", "Ad", "An", "Ot", "Fd"}
_NAMED = {"Ux": "UNIX", "At": "AT&T UNIX", "Bx": "BSD", "Bsx": "BSD/OS", "Fx": "FreeBSD"}
_NAMED |= {"Nx": "NetBSD", "Ox": "OpenBSD", "Dx": "DragonFly"}
_IGNORED = {"Dd", "Os", "Tg", "Bk", "Ek", "Sm", "Rs", "Re", "Ud", "Xo", "Xc", "Ns"}
_PUNCTUATION = {".", ",", ";", ":", ")", "]", "?", "!", "'"}
_CLOSERS = set(")]}>.,;:!?\u201d\u2019")
_ARGUMENT = re.compile(r'"((?:[^"]|"")*)"|(\S+)')
_MACRO = re.compile(r"^[A-Z][a-z][a-z]?$|^%[A-Z]$")


def _tokens(rest: str) -> list[str]:
    return [q.replace('""', '"') if b == "" else b for q, b in _ARGUMENT.findall(rest)]


def _macro(word: str) -> bool:
    return bool(_MACRO.match(word)) and (
        word in _ENCLOSE
        or word in _OPEN
        or word in _CLOSE
        or word in _PLAIN
        or word in _NAMED
        or word in {"Fl", "Xr", "Nm", "Fn", "In", "Pf", "Ns", "Sx"}
    )


def _join(pieces: list[tuple[str, bool]]) -> str:
    """Words with a space between, none before punctuation or where ``Ns`` asked for none."""
    out = ""
    for word, glued in pieces:
        if not word:
            continue
        if (
            out
            and not glued
            and word not in _PUNCTUATION
            and not out.endswith(("(", "[", "\u201c"))
        ):
            out += " "
        out += word
    return out


def render(tokens: list[str], name: str = "", spaced: bool = True) -> str:
    """What one line's macros and words show (with no space between them after ``.Sm
    off``)."""
    if not spaced:
        return render(tokens, name).replace(" ", "")
    pieces: list[tuple[str, bool]] = []
    glue = False
    at = 0
    while at < len(tokens):
        word = tokens[at]
        at += 1
        if not _macro(word):
            pieces.append((inline(word), glue))
            glue = False
            continue
        if word == "Ns":
            glue = True
            continue
        if word == "Pf":  # a prefix glued to what follows
            if at < len(tokens):
                pieces.append((inline(tokens[at]), glue))
                at += 1
            glue = True
            continue
        if word in _ENCLOSE:
            end = len(tokens)
            while end > at and tokens[end - 1] in _PUNCTUATION:
                end -= 1
            left, right = _ENCLOSE[word]
            pieces.append((f"{left}{render(tokens[at:end], name)}{right}", glue))
            at, glue = end, False
            continue
        if word in _OPEN:
            pieces.append((_OPEN[word], glue))
            glue = True
            continue
        if word in _CLOSE:
            pieces.append((_CLOSE[word], True))
            continue
        if word in _NAMED:
            pieces.append((_NAMED[word], glue))
            continue
        if word == "Nm" and (at >= len(tokens) or _macro(tokens[at]) or tokens[at] in _PUNCTUATION):
            pieces.append((name, glue))
            continue
        if word == "Xr" and at + 1 < len(tokens):
            pieces.append((f"{tokens[at]}({tokens[at + 1]})", glue))
            at += 2
            continue
        if word == "Fn" and at < len(tokens):
            args = []
            function = tokens[at]
            at += 1
            while at < len(tokens) and not _macro(tokens[at]) and tokens[at] not in _PUNCTUATION:
                args.append(tokens[at])
                at += 1
            pieces.append((f"{function}({', '.join(args)})", glue))
            continue
        if word == "In" and at < len(tokens):
            pieces.append((f"#include <{tokens[at]}>", glue))
            at += 1
            continue
        dash = "-" if word == "Fl" else ""
        if dash and (at >= len(tokens) or _macro(tokens[at]) or tokens[at] in _PUNCTUATION):
            pieces.append(("-", glue))
        while at < len(tokens) and not _macro(tokens[at]) and tokens[at] not in _PUNCTUATION:
            pieces.append((dash + inline(tokens[at]), glue))
            glue = False
            at += 1
        glue = False
    return _join(pieces)


def extract_mdoc(text: str, fallback_title: str) -> ExtractedDocument:
    """``text`` (an mdoc(7) page) rendered to plain text with its sections as headings."""
    blocks: list[TextBlock] = []
    words: list[str] = []
    kind, prefix = "p", ""
    lists: list[str] = []  # the open lists' types: "tag", "bullet", "column", ...
    literal: list[str] | None = None
    title, name, section = fallback_title, "", ""
    names_line = ""
    spaced = fresh = True
    tag_open = False

    def flush() -> None:
        nonlocal words, kind, prefix
        body = " ".join(" ".join(words).split())
        line = f"{prefix}: {body}" if prefix and body else prefix or body
        if line:
            blocks.append(TextBlock(kind, line))
        words, kind, prefix = [], "line" if lists else "p", ""

    for raw in text.splitlines():
        if literal is not None and not raw.startswith(".Ed"):
            literal.append(
                inline(raw) if not raw.startswith(".") else render(_tokens(raw[1:]), name)
            )
            continue
        if not raw.startswith((".", "'")):
            if raw.strip():
                words.append(inline(raw))
            elif words:
                flush()
            continue
        if raw.startswith(('.\\"', "'\\\"")):
            continue
        macro, _, rest = raw[1:].strip().partition(" ")
        tokens = _tokens(rest)
        if macro == "Dt" and tokens:
            title = tokens[0]
        elif macro in ("Sh", "Ss"):
            flush()
            heading = render(tokens, name)
            blocks.append(TextBlock("h", heading, 2 if macro == "Sh" else 3))
            section = heading.upper() if macro == "Sh" else section
        elif macro == "Nm" and section == "NAME" and tokens:
            name = name or tokens[0]
            words.append(render(tokens, name))
        elif macro == "Nd":
            words.append("- " + render(tokens, name))
            names_line = " ".join(words)
        elif macro in ("Pp", "Lp", "sp", "br"):
            flush()
        elif macro == "Bl":
            flush()
            lists.append(next((t[1:] for t in tokens if t.startswith("-")), "item"))
        elif macro == "El":
            flush()
            if lists:
                lists.pop()
            kind = "line" if lists else "p"
        elif macro == "It":
            flush()
            kind = "line"
            style = lists[-1] if lists else "item"
            continued = tokens[-1:] == ["Xo"]  # the tag goes on over the lines up to .Xc
            if continued:
                words.append(render(tokens[:-1], name))
                tag_open = True
            elif style in ("tag", "ohang", "inset", "diag", "hang"):
                prefix = render(tokens, name)
            elif style == "column":
                cells: list[list[str]] = [[]]
                for token in tokens:  # cells are parted by the word Ta
                    if token == "Ta":
                        cells.append([])
                    else:
                        cells[-1].append(token)
                words.append(" | ".join(render(cell, name) for cell in cells))
        elif macro == "Bd":
            flush()
            if "-literal" in tokens or "-unfilled" in tokens:
                literal = []
        elif macro == "Ed":
            if literal is not None and any(x.strip() for x in literal):
                blocks.append(TextBlock("pre", "\n".join(literal).strip("\n")))
            literal = None
        elif macro == "Dl":
            flush()
            blocks.append(TextBlock("pre", render(tokens, name)))
        elif macro == "D1":
            flush()
            blocks.append(TextBlock("p", render(tokens, name)))
        elif macro == "Xc" and tag_open:
            prefix, words, tag_open = " ".join(words), [], False
        elif macro == "Sm":
            spaced = tokens[:1] != ["off"]
            fresh = True
        elif macro in _IGNORED or not _macro(macro):
            continue
        elif spaced:
            shown = render([macro, *tokens], name)
            if words and shown[:1] in _CLOSERS:  # ".Pc ." after the words it closes
                words[-1] += shown
            else:
                words.append(shown)
        elif words and not fresh:  # ".Sm off": glued to the word before it
            words[-1] += render([macro, *tokens], name, spaced=False)
        else:
            words.append(render([macro, *tokens], name, spaced=False))
            fresh = False
    flush()
    named = (name or names_line.split(" ", 1)[0]).strip()
    if named and named.lower() == title.lower():
        title = named
    blocks.insert(0, TextBlock("h", title, 1))
    rendered, sections, code = layout_blocks(fold_short_sections(blocks))
    return ExtractedDocument(rendered, title, "man", sections, code=code)
