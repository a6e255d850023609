"""Any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, llama.cpp server, LM Studio, ...):
``compat`` is the ``Model``; ``wire`` turns kforge's messages, tools and schemas into the
chat-completions API's shapes and back. The ``openai`` SDK is imported on first use."""

from __future__ import annotations

from kforge.llm.openai.compat import OpenAICompatibleModel

__all__ = ["OpenAICompatibleModel"]
