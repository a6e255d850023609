"""Model configuration: ``provider:model`` names, provider defaults, env vars and the config file.

Precedence, highest first: arguments to ``get_model``; ``KFORGE_MODEL``, ``KFORGE_BASE_URL`` and
``KFORGE_API_KEY``; the config file (``KFORGE_CONFIG``, else ``./kforge.toml``, else
``kforge/config.toml`` in the user config directory); the provider's built-in defaults.
The provider's own key variable (``OPENAI_API_KEY``, ``OPENROUTER_API_KEY``) comes after
``KFORGE_API_KEY``. A config file looks like this (keys are never stored in it)::

    model = "ollama:qwen2.5:7b"              # the default model
    models = ["openai:gpt-4o-mini"]          # more models for `kforge models` to check

    [providers.ollama]
    base_url = "http://gpu-box:11434/v1"
    json_schema = false                      # ask for JSON in the prompt instead
    answer = "generative"                    # or "extractive": answers quote the documents

    [providers.mycorp]                       # any OpenAI-compatible endpoint
    base_url = "https://llm.example.com/v1"
    api_key_env = "MYCORP_API_KEY"

    [providers.local]
    n_ctx = 4096
    answer = "generative"                    # let a bigger local GGUF write its answers

    [prices]                                 # USD per million tokens
    "openai:gpt-4o-mini" = { input = 0.15, output = 0.60 }
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from kforge.errors import ConfigurationError

__all__ = [
    "DEFAULT_MODEL",
    "PROVIDERS",
    "ForgeConfig",
    "ProviderSettings",
    "configured_model_specs",
    "default_model_spec",
    "load_config",
    "provider_settings",
    "split_spec",
]

DEFAULT_MODEL = "local:smollm2"

ProviderKind = Literal["openai", "local", "test"]
AnswerStyle = Literal["extractive", "generative"]


@dataclass(frozen=True, slots=True)
class ProviderSettings:
    """Everything needed to build a model of one provider."""

    name: str
    kind: ProviderKind
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    """Resolved secret; never printed, logged or written to frames."""
    api_key_env: tuple[str, ...] = ()
    """Environment variables that may hold the key, in order."""
    needs_api_key: bool = False
    native_tools: bool = True
    """Send tools in the request; when False (or refused), tools are described in the prompt."""
    json_schema: bool = True
    """Send ``response_format=json_schema``; when False (or refused), JSON is asked for in the prompt."""
    timeout_s: float = 60.0
    max_attempts: int = 4
    repair_attempts: int = 2
    """Extra calls allowed to repair output that does not match the requested schema."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """Provider-specific options, e.g. ``n_ctx`` and ``n_threads`` for local models."""
    answer: AnswerStyle = "generative"
    """How agents write answers from documents with this provider's models: ``generative``
    (the model writes, every sentence is checked) or ``extractive`` (sentences of the
    documents, the model's text is never shown; the default for the bundled small model)."""


def _remote(
    base_url: str | None, key_env: tuple[str, ...] = (), *, needs_key: bool = False
) -> ProviderSettings:
    return ProviderSettings(
        name="", kind="openai", base_url=base_url, api_key_env=key_env, needs_api_key=needs_key
    )


PROVIDERS: dict[str, ProviderSettings] = {
    "openai": _remote("https://api.openai.com/v1", ("OPENAI_API_KEY",), needs_key=True),
    "openrouter": _remote("https://openrouter.ai/api/v1", ("OPENROUTER_API_KEY",), needs_key=True),
    "ollama": _remote("http://127.0.0.1:11434/v1"),
    "vllm": _remote("http://127.0.0.1:8000/v1", ("VLLM_API_KEY",)),
    "llamacpp": _remote("http://127.0.0.1:8080/v1"),
    "lmstudio": _remote("http://127.0.0.1:1234/v1"),
    "compat": _remote(None, ("OPENAI_API_KEY",)),
    "local": ProviderSettings(
        name="local", kind="local", timeout_s=600.0, max_attempts=1, answer="extractive"
    ),
    "test": ProviderSettings(name="test", kind="test", max_attempts=1),
}
"""Built-in providers. ``compat`` is any OpenAI-compatible endpoint given by its base URL."""

_SETTING_KEYS: dict[str, type | tuple[type, ...]] = {
    "base_url": str,
    "api_key_env": (str, list),
    "native_tools": bool,
    "json_schema": bool,
    "timeout_s": (int, float),
    "max_attempts": int,
    "repair_attempts": int,
    "answer": str,
}


@dataclass(frozen=True, slots=True)
class ForgeConfig:
    """The parsed config file."""

    path: Path | None = None
    model: str | None = None
    """The default model."""
    models: tuple[str, ...] = ()
    """Further models that ``kforge models`` lists and checks."""
    providers: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    prices: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """USD per million tokens: ``{"openai:gpt-4o-mini": {"input": 0.15, "output": 0.6}}``."""


def _config_path(path: str | os.PathLike[str] | None) -> Path | None:
    if path is not None:
        return Path(path).expanduser()
    env = os.environ.get("KFORGE_CONFIG")
    if env:
        return Path(env).expanduser()
    local = Path("kforge.toml")
    if local.is_file():
        return local
    import platformdirs

    user = Path(platformdirs.user_config_dir("kforge")) / "config.toml"
    return user if user.is_file() else None


def load_config(path: str | os.PathLike[str] | None = None) -> ForgeConfig:
    """Read the config file; a missing default file gives an empty config."""
    found = _config_path(path)
    if found is None:
        return ForgeConfig()
    explicit = path is not None or bool(os.environ.get("KFORGE_CONFIG"))
    if not found.is_file():
        if explicit:
            raise ConfigurationError(
                f"config file {found} does not exist; create it or unset KFORGE_CONFIG"
            )
        return ForgeConfig()
    try:
        data = tomllib.loads(found.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigurationError(f"config file {found} is not valid TOML: {exc}") from exc
    return _parse_config(data, found)


def _parse_config(data: Mapping[str, Any], path: Path) -> ForgeConfig:
    model = data.get("model")
    if model is not None and not isinstance(model, str):
        raise ConfigurationError(f"{path}: 'model' must be a string like \"ollama:llama3.2\"")
    models = data.get("models", [])
    if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
        raise ConfigurationError(f"{path}: 'models' must be a list of \"provider:model\" strings")
    providers = data.get("providers", {})
    if not isinstance(providers, dict):
        raise ConfigurationError(f"{path}: [providers] must be a table of tables")
    for name, table in providers.items():
        if not isinstance(table, dict):
            raise ConfigurationError(f"{path}: [providers.{name}] must be a table")
        if "api_key" in table:
            raise ConfigurationError(
                f"{path}: [providers.{name}] must not hold the key itself; name the "
                "environment variable that holds it with api_key_env"
            )
        for key, value in table.items():
            expected = _SETTING_KEYS.get(key)
            if expected is None and name != "local":
                known = ", ".join(sorted(_SETTING_KEYS))
                raise ConfigurationError(
                    f"{path}: [providers.{name}] has unknown setting '{key}' (known: {known})"
                )
            if expected is not None and not isinstance(value, expected):
                raise ConfigurationError(
                    f"{path}: [providers.{name}] '{key}' has the wrong type ({value!r})"
                )
            if key == "answer" and value not in ("extractive", "generative"):
                raise ConfigurationError(
                    f'{path}: [providers.{name}] answer must be "extractive" or '
                    f'"generative" (got {value!r})'
                )
    prices = data.get("prices", {})
    if not isinstance(prices, dict):
        raise ConfigurationError(f"{path}: [prices] must map model names to input/output prices")
    return ForgeConfig(
        path=path, model=model, models=tuple(models), providers=providers, prices=prices
    )


def split_spec(spec: str) -> tuple[str, str]:
    """``"ollama:qwen2.5:7b"`` -> ``("ollama", "qwen2.5:7b")``; ``"test"`` -> ``("test", "")``."""
    spec = spec.strip()
    if spec == "test":
        return "test", ""
    provider, sep, model = spec.partition(":")
    if not sep or not provider or not model:
        known = ", ".join(sorted(PROVIDERS))
        raise ConfigurationError(
            f"model '{spec}' is not of the form provider:model, e.g. local:smollm2 or "
            f"openai:gpt-4o-mini (providers: {known}, or one named in the config file)"
        )
    return provider.lower(), model


def default_model_spec(config: ForgeConfig | None = None) -> str:
    """``KFORGE_MODEL``, else the config file's ``model``, else ``local:smollm2``."""
    env = os.environ.get("KFORGE_MODEL", "").strip()
    if env:
        return env
    cfg = config if config is not None else load_config()
    return cfg.model or DEFAULT_MODEL


def configured_model_specs(config: ForgeConfig | None = None) -> list[str]:
    """The default model, the config file's models and the bundled local model, deduplicated."""
    cfg = config if config is not None else load_config()
    specs = [default_model_spec(cfg), *(cfg.model or "",), *cfg.models, DEFAULT_MODEL]
    seen: list[str] = []
    for spec in specs:
        if spec and spec not in seen:
            seen.append(spec)
    return seen


def provider_settings(
    provider: str, config: ForgeConfig | None = None, **overrides: Any
) -> ProviderSettings:
    """Resolve one provider's settings from defaults, the config file, env vars and overrides."""
    cfg = config if config is not None else load_config()
    table = dict(cfg.providers.get(provider, {}))
    base = PROVIDERS.get(provider)
    if base is None:
        if not table:
            known = ", ".join(sorted({*PROVIDERS, *cfg.providers}))
            raise ConfigurationError(
                f"unknown model provider '{provider}' (known: {known}); an OpenAI-compatible "
                f"endpoint can be added as [providers.{provider}] with a base_url in the config file"
            )
        base = _remote(None)
    settings = replace(base, name=provider)
    key_env = table.pop("api_key_env", None)
    if key_env is not None:
        names = (key_env,) if isinstance(key_env, str) else tuple(key_env)
        settings = replace(settings, api_key_env=names, needs_api_key=True)
    options = dict(settings.options)
    changes: dict[str, Any] = {}
    for key, value in table.items():
        if key in _SETTING_KEYS:
            changes[key] = float(value) if key == "timeout_s" else value
        else:
            options[key] = value
    settings = replace(settings, **changes)
    if settings.kind == "openai":
        env_url = os.environ.get("KFORGE_BASE_URL", "").strip()
        if env_url:
            settings = replace(settings, base_url=env_url)
        settings = replace(settings, api_key=_key_from_env(settings))
    changes = {}
    for key, value in overrides.items():
        if value is None:
            continue
        if key in ProviderSettings.__dataclass_fields__ and key not in ("name", "kind", "options"):
            changes[key] = value
        else:
            options[key] = value
    return replace(settings, options=options, **changes)


def _key_from_env(settings: ProviderSettings) -> str | None:
    for var in ("KFORGE_API_KEY", *settings.api_key_env):
        value = os.environ.get(var, "").strip()
        if value:
            return value
    return None
