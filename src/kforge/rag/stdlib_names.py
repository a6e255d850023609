"""Names Python's standard library defines: ``typing.Any``, ``logging.Formatter``,
``decimal.Decimal``.

A page built from HTML loses the markup of its inline code, so "returning typing.Any so you
can ..." reads like two sentences run together without a space ("deficiency.Treatment").
A module of the standard library followed by a name that module defines is one dotted name
("typing.Any"); followed by a name it does not define, a sentence end ("over time.Furthermore",
"the first start site.The"). The names are read from a module's source without running it
(``this`` and ``antigravity`` do things when imported); a module built into the interpreter or
compiled (``time``, ``array``) runs no Python code when imported, so it is imported to list
them.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from functools import lru_cache

__all__ = ["defines"]


def defines(module: str, name: str) -> bool:
    """Whether the standard library's ``module`` defines ``name`` at its top level."""
    return module in sys.stdlib_module_names and name in _top_level(module)


@lru_cache(maxsize=64)
def _top_level(module: str) -> frozenset[str]:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return frozenset()
    origin = spec.origin if spec is not None else None
    if origin is None or not origin.endswith(".py"):
        try:
            return frozenset(dir(importlib.import_module(module)))
        except ImportError:
            return frozenset()
    try:
        with open(origin, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, UnicodeDecodeError):
        return frozenset()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if alias.name == "*":  # decimal: "from _decimal import *"
                    names |= _top_level(node.module)
                else:
                    names.add(alias.asname or alias.name)
        elif isinstance(node, ast.Try):  # "try: from _decimal import *" and its fallback
            for inner in [*node.body, *(s for h in node.handlers for s in h.body)]:
                if isinstance(inner, ast.ImportFrom) and inner.module and inner.level == 0:
                    if any(a.name == "*" for a in inner.names):
                        names |= _top_level(inner.module)
                    names.update(a.asname or a.name for a in inner.names if a.name != "*")
    return frozenset(names)
