"""Language models: the ``Model`` protocol, providers, test models and ``get_model``.

The OpenAI SDK and llama-cpp-python are imported on first use, so importing this package
stays fast.
"""

from __future__ import annotations

from kforge.llm.base import Model
from kforge.llm.config import DEFAULT_MODEL, ForgeConfig, load_config
from kforge.llm.local import LocalModel
from kforge.llm.openai.compat import OpenAICompatibleModel
from kforge.llm.registry import get_model
from kforge.llm.retry import RetryPolicy
from kforge.llm.structured import complete_structured, parse_output, schema_for
from kforge.llm.testing.function import CallInfo, FunctionModel
from kforge.llm.testing.scripted import ScriptedModel
from kforge.llm.testing.testmodel import TestModel
from kforge.llm.types import (
    Message,
    ModelResponse,
    ModelSettings,
    StreamEvent,
    ToolCall,
    ToolSpec,
    Usage,
)

__all__ = [
    "DEFAULT_MODEL",
    "CallInfo",
    "ForgeConfig",
    "FunctionModel",
    "LocalModel",
    "Message",
    "Model",
    "ModelResponse",
    "ModelSettings",
    "OpenAICompatibleModel",
    "RetryPolicy",
    "ScriptedModel",
    "StreamEvent",
    "TestModel",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "complete_structured",
    "get_model",
    "load_config",
    "parse_output",
    "schema_for",
]
