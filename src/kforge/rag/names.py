"""Code names as a question writes them and as documentation writes them."""

from __future__ import annotations

import re

__all__ = ["name_forms"]

_CODE_LIKE = re.compile(r"_|[a-z][A-Z]|[A-Za-z]\d")
"""A name part no English word looks like: ``run_app``, ``readFileSync``, ``utf8``."""


def name_forms(name: str) -> tuple[str, ...]:
    """``name`` and, for a dotted name whose last part is itself a code name, that part alone:
    a user asks about ``web.run_app()``, the page documenting it under ``aiohttp.web`` says
    ``run_app()``. The last part of ``os.path.join`` is only the word "join", and is no form."""
    head, dot, last = name.rpartition(".")
    if dot and head and len(last) >= 4 and _CODE_LIKE.search(last):
        return (name, last)
    return (name,)
