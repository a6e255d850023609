"""Models for tests, no LLM needed: ``ScriptedModel`` (a strict queue of replies that fails
loudly when called more or less than expected), ``TestModel`` (schema-driven: calls every
tool with valid arguments, then answers with valid output) and ``FunctionModel`` (a Python
function decides each reply)."""

from __future__ import annotations

from kforge.llm.testing.function import CallInfo, FunctionModel
from kforge.llm.testing.scripted import ScriptedModel
from kforge.llm.testing.testmodel import TestModel

__all__ = ["CallInfo", "FunctionModel", "ScriptedModel", "TestModel"]
