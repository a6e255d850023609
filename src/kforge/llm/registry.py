"""``get_model``: turn a ``provider:model`` name into a ready ``Model``."""

from __future__ import annotations

from typing import Any

from kforge.errors import ConfigurationError
from kforge.llm.base import Model
from kforge.llm.config import (
    ForgeConfig,
    default_model_spec,
    load_config,
    provider_settings,
    split_spec,
)
from kforge.llm.retry import RetryPolicy

__all__ = ["get_model"]

_OVERRIDES = {
    "base_url",
    "api_key",
    "timeout_s",
    "max_attempts",
    "repair_attempts",
    "native_tools",
    "json_schema",
    "retry",
    "n_ctx",
    "n_threads",
    "structured_attempts",
    "config",
    "seed",
    "answer",
}


def get_model(spec: str | None = None, **overrides: Any) -> Model:
    """The model named ``spec`` (``provider:model``), or the configured default.

    Without ``spec``: ``KFORGE_MODEL``, else the config file's ``model``, else ``local:smollm2``.
    Providers: ``local`` (``local:smollm2`` or ``local:/path/model.gguf``), ``openai``,
    ``openrouter``, ``ollama``, ``vllm``, ``llamacpp``, ``lmstudio``, ``compat`` (any
    OpenAI-compatible URL), providers added in the config file, and ``test`` (the schema-driven
    ``TestModel``). Overrides: base_url, api_key, timeout_s, max_attempts, repair_attempts,
    native_tools, json_schema, retry (a ``RetryPolicy``), n_ctx, n_threads, structured_attempts,
    seed (``test`` only), answer (``extractive`` or ``generative``: how agents write answers
    from documents with this model) and config (a ``ForgeConfig`` or a path to a config file).
    """
    unknown = set(overrides) - _OVERRIDES
    if unknown:
        raise ConfigurationError(
            f"get_model() got unknown option(s) {', '.join(sorted(unknown))}; "
            f"known: {', '.join(sorted(_OVERRIDES))}"
        )
    config_arg = overrides.pop("config", None)
    config = config_arg if isinstance(config_arg, ForgeConfig) else load_config(config_arg)
    name = spec or default_model_spec(config)
    provider, model_id = split_spec(name)
    retry = overrides.pop("retry", None)
    if retry is not None and not isinstance(retry, RetryPolicy):
        raise ConfigurationError("get_model(retry=...) must be a kforge.llm.RetryPolicy")
    settings = provider_settings(provider, config, **overrides)
    if settings.kind == "local":
        from kforge.llm.local import LocalModel

        opts = settings.options
        return LocalModel(
            model_id,
            n_ctx=_int_option(opts, "n_ctx"),
            n_threads=_int_option(opts, "n_threads"),
            structured_attempts=_int_option(opts, "structured_attempts") or 3,
            answer_style=settings.answer,
        )
    if settings.kind == "test":
        from kforge.llm.testing.testmodel import TestModel

        return TestModel(
            name=f"test:{model_id or 'model'}", seed=_int_option(settings.options, "seed") or 0
        )
    from kforge.llm.openai.compat import OpenAICompatibleModel

    return OpenAICompatibleModel(model_id, settings, retry=retry)


def _int_option(options: Any, key: str) -> int | None:
    value = options.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigurationError(f"model option '{key}' must be an integer, got {value!r}")
    return value
