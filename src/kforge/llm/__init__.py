"""Language models: the ``Model`` protocol, providers, test models and ``get_model``.

Public names are imported lazily (``kforge.lazy``): importing this package, or one of its
modules (``kforge.llm.types``), loads no provider, no test model, neither the OpenAI SDK nor
llama-cpp-python.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kforge.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "DEFAULT_MODEL": "kforge.llm.config",
    "CallInfo": "kforge.llm.testing.function",
    "ForgeConfig": "kforge.llm.config",
    "FunctionModel": "kforge.llm.testing.function",
    "LocalModel": "kforge.llm.local",
    "Message": "kforge.llm.types",
    "Model": "kforge.llm.base",
    "ModelResponse": "kforge.llm.types",
    "ModelSettings": "kforge.llm.types",
    "OpenAICompatibleModel": "kforge.llm.openai.compat",
    "RetryPolicy": "kforge.llm.retry",
    "ScriptedModel": "kforge.llm.testing.scripted",
    "StreamEvent": "kforge.llm.types",
    "TestModel": "kforge.llm.testing.testmodel",
    "ToolCall": "kforge.llm.types",
    "ToolSpec": "kforge.llm.types",
    "Usage": "kforge.llm.types",
    "complete_structured": "kforge.llm.structured",
    "get_model": "kforge.llm.registry",
    "load_config": "kforge.llm.config",
    "parse_output": "kforge.llm.structured",
    "schema_for": "kforge.llm.structured",
}

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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
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
