"""Code names as a question writes them and as documentation writes them."""

from __future__ import annotations

import re
from collections.abc import Iterable

from kforge.rag.units import field_name

__all__ = [
    "ENTRY",
    "OWN_OBJECT",
    "documented_in",
    "documents_name",
    "entry_name",
    "identifiers",
    "is_entry_of",
    "is_entry_of_another",
    "kind_names",
    "name_forms",
    "name_pattern",
    "signature_name",
]

ENTRY = re.compile(r"^([^:]{1,60}?):{1,2}\s")
"""A "term: definition" entry, its term in group 1."""

_CODE_LIKE = re.compile(r"_|[a-z][A-Z]|[A-Za-z]\d")
"""A name part no English word looks like: ``run_app``, ``readFileSync``, ``utf8``."""


_IDENTIFIER = re.compile(
    r"`([^`\n]+)`"  # a code span, whatever it holds
    r"|(?<![\w.$-])(--?[A-Za-z][\w-]*)"  # a command-line option
    r"|(?<![\w$])([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+(?:\(\))?)"  # dotted: fs.link, os.EOL
    r"|(?<![\w$])([a-z]+[A-Z]\w*|[A-Za-z]+_\w+|[A-Za-z_]\w*\(\))"  # camelCase, snake_case, f()
    r"|(?<![\w:\\])(\\[A-Za-z]+)(?![\w$])"  # an escape or a markup command: \b, \brief
)
OWN_OBJECT = re.compile(r"^(?:self|cls|this)\.(?=[A-Za-z_])")
"""The user's own object before an attribute ("self.cmdqueue"), which the documents name by its
class (``Cmd.cmdqueue``) or alone."""


def identifiers(text: str) -> list[str]:
    """The code-like names in ``text``, as written: code spans, options, dotted, camelCase."""
    found = []
    for match in _IDENTIFIER.finditer(text):
        name = next(g for g in match.groups() if g)
        name = OWN_OBJECT.sub("", name.strip().removesuffix("()"))
        if len(name) >= 2 and name not in found:
            found.append(name)
    return found


def name_forms(name: str) -> tuple[str, ...]:
    """``name`` and, for a dotted name whose last part is itself a code name, that part alone:
    a user asks about ``web.run_app()``, the page documenting it under ``aiohttp.web`` says
    ``run_app()``. The last part of ``os.path.join`` is only the word "join", and is no form."""
    head, dot, last = name.rpartition(".")
    if dot and head and len(last) >= 4 and _CODE_LIKE.search(last):
        return (name, last)
    return (name,)


def name_pattern(name: str) -> str:
    """A regular expression for ``name``'s forms (``name_forms``), a long option's ``--`` also
    as the en or em dash a typesetting build makes of it in running text (Sphinx writes
    ``--check`` as an en dash and ``check`` where the manual did not mark it as code)."""
    forms = []
    for form in name_forms(name):
        escaped = re.escape(form)
        if form.startswith("--") and len(form) > 2 and form[2].isalpha():
            escaped = "(?:--|[\u2013\u2014])" + re.escape(form[2:])
        forms.append(escaped)
    return "|".join(forms)


_SIGNATURE = re.compile(
    r"^(?:(?:class|classmethod|staticmethod|method|function|async|abstractmethod)\s+)*"
    r"([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\s*[(\[]"
)
"""An API entry's opening signature and the name it documents, bare (``setdefault(key[,
default])``) or qualified (``Morsel.setdefault(key, value=None)``)."""


def signature_name(term: str) -> str:
    """The name an entry's term documents when the term is a call signature, else ""."""
    found = _SIGNATURE.match(_bare(term))
    return found.group(1) if found else ""


def _bare(term: str) -> str:
    """``term`` without the markup around it (backticks, emphasis), a dunder name kept whole."""
    term = term.strip("`* ")
    return term if _DUNDER.match(term) else term.strip("_")


def entry_name(text: str) -> str:
    """The name the entry ``text`` opens with documents: a parameter's line ("pool_pre_ping -
    boolean, ..."), an API entry's signature (``method sqlalchemy.orm.Session.flush(
    objects=None): Flush all ...``) or a "term: definition" entry's term; "" for other text."""
    entry = ENTRY.match(text)
    term = _bare(_ROLE.sub("", entry.group(1))) if entry else ""
    return field_name(text) or signature_name(term) or term


_ROLE = re.compile(
    r"^(?:(?:abstract|async|class|classmethod|staticmethod|method|function|property|attribute|"
    r"exception|data)\s+)+(?=[A-Za-z_$])"
)
"""What a Sphinx entry says its name is, before it: ``property total_errors: The total ...``."""
_DUNDER = re.compile(r"^__\w+__\b")


def is_entry_of(text: str, names: Iterable[str]) -> bool:
    """True for the entry of one of ``names`` (whole, or the end of a qualified name:
    ``sqlalchemy.orm.Session.flush`` is the entry of ``Session.flush``; a class's member
    listed by its own name, ``total_errors: ...``, that of ``ErrorTree.total_errors``)."""
    name = entry_name(text)
    return bool(name) and any(
        name == n
        or name.endswith("." + n)
        or (" " not in name and n.endswith("." + name))
        or _reexported(name, n)
        for n in names
    )


def _reexported(documented: str, asked: str) -> bool:
    """``toolz.merge`` asked, ``toolz.dicttoolz.merge`` documented: the package's own name for
    what a module of it defines (its first and last parts the same)."""
    full, short = documented.split("."), asked.split(".")
    return 1 < len(short) < len(full) and full[0] == short[0] and full[-1] == short[-1]


def is_entry_of_another(text: str, names: Iterable[str]) -> bool:
    """True for the entry of a name made from one of ``names`` and more: ``shift_verbose:
    If set, the shift builtin prints ...`` is another entry than that of ``shift``."""
    name = entry_name(text)
    parts = set(re.split(r"[_.-]", name.lower()))
    return (
        bool(name)
        and " " not in name
        and not is_entry_of(text, names)
        and any(n.lower() in parts for n in names)
    )


_KIND_NAMED = re.compile(
    r"\bthe ([A-Za-z_][\w.-]*) (?:builtin|built-in|command|function|method|option|directive|"
    r"setting|variable|keyword|macro|module|hook|filter|decorator|flag|parameter|argument|"
    r"attribute|property|field|tag|element|statement)\b",
    re.IGNORECASE,
)


def kind_names(question: str) -> list[str]:
    """The names a question gives as what kind of thing they name: ``shift`` of "What does
    the shift builtin do?", ``truncate`` of "the truncate filter". Words, not code, so they
    count only where an entry is named so (see ``is_entry_of``)."""
    return [m.group(1) for m in _KIND_NAMED.finditer(question)]


def documents_name(entry: str, context: str, name: str) -> bool | None:
    """Whether the entry named ``entry`` documents the dotted ``name`` the question asks about:
    True for ``setdefault`` under a heading naming ``dict`` (``context``) when ``name`` is
    ``dict.setdefault``, or for the whole name; False for ``Morsel.setdefault``, an entry of
    the same method on another class; None when ``entry`` says nothing either way (another
    method, a bare name under a heading that does not name the class, or ``name`` is not
    dotted)."""
    head, dot, last = name.rpartition(".")
    if not (dot and head and entry):
        return None
    own_head, _, own_last = entry.rpartition(".")
    if own_last.lower() != last.lower():
        return None
    if not own_head:
        words = re.findall(r"[\w$.]+", context.lower())
        return head.lower() in words or head.lower().rsplit(".", 1)[-1] in words or None
    own, asked = own_head.lower(), head.lower()
    return own == asked or own.endswith("." + asked) or asked.endswith("." + own)


_ENTRY_PREFIX = r"(?m)^[ \t]*(?:(?:class|classmethod|staticmethod|method|function|async)\s+)*"


def documented_in(text: str, name: str) -> bool:
    """True when ``text`` (a passage with its title and heading before it) documents the
    dotted ``name`` as a bare entry: ``setdefault(key[, default]): ...`` after a heading or
    line naming ``dict``, for ``dict.setdefault``. A class's methods are listed under it by
    their own names, and "dict.setdefault" is nowhere on the page."""
    head, dot, last = name.rpartition(".")
    if not (dot and head and last):
        return False
    entry = re.search(_ENTRY_PREFIX + re.escape(last) + r"\s*\(", text)
    if entry is None:
        return False
    before = text[: entry.start()]
    owner = head.rsplit(".", 1)[-1]
    return re.search(rf"(?<![\w$.]){re.escape(owner)}(?![\w$])", before, re.IGNORECASE) is not None
