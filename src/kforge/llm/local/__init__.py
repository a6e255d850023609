"""The bundled local model: a GGUF file run by llama-cpp-python with grammar-constrained
decoding.

``model`` is the ``Model``; ``runtime`` loads and shares the weights; ``decode`` samples tokens;
``grammar`` turns a JSON Schema into the GBNF grammar that constrains decoding, and
``schema_values`` and ``regex_values`` build values that satisfy a schema or a pattern.
"""

from __future__ import annotations

from kforge.llm.local.model import BUNDLED_MODEL, LocalModel

__all__ = ["BUNDLED_MODEL", "LocalModel"]
