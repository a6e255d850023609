"""The model seam of the RAG steps: any callable shaped like ``Model.complete``.

Agents pass ``RunContext.complete`` (which journals every call); scripts pass a model's
``complete``. Both fit ``CompleteFn``; structured replies go through
``kforge.llm.structured.complete_structured``.
"""

from __future__ import annotations

from kforge.errors import ModelError, ScriptedModelError
from kforge.llm.base import CompleteFn

__all__ = ["CompleteFn", "is_recoverable"]


def is_recoverable(exc: BaseException) -> bool:
    """A model failure a RAG step may work around (timeout, bad output, unavailable server).

    A scripted model's complaint is a broken test, not a failure to work around.
    """
    return isinstance(exc, ModelError) and not isinstance(exc, ScriptedModelError)
