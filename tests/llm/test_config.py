"""Model names, env vars, the config file, and get_model."""

from __future__ import annotations

from pathlib import Path

import pytest

from kforge.errors import ConfigurationError
from kforge.llm import get_model
from kforge.llm.config import (
    configured_model_specs,
    default_model_spec,
    load_config,
    provider_settings,
    split_spec,
)
from kforge.llm.local import LocalModel
from kforge.llm.openai.compat import OpenAICompatibleModel
from kforge.llm.retry import RetryPolicy

ENV = (
    "KFORGE_MODEL",
    "KFORGE_BASE_URL",
    "KFORGE_API_KEY",
    "KFORGE_CONFIG",
    "OPENAI_API_KEY",
    "OPENROUTER_API_KEY",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ENV:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "kforge.toml"
    path.write_text(text)
    return path


def test_split_spec() -> None:
    assert split_spec("ollama:qwen2.5:7b") == ("ollama", "qwen2.5:7b")
    assert split_spec("local:/models/a.gguf") == ("local", "/models/a.gguf")
    assert split_spec("test") == ("test", "")
    with pytest.raises(ConfigurationError, match="not of the form provider:model"):
        split_spec("gpt-4o")


def test_default_is_the_bundled_local_model() -> None:
    assert default_model_spec() == "local:smollm2"
    model = get_model()
    assert isinstance(model, LocalModel) and model.name == "local:smollm2"


def test_env_vars_choose_model_endpoint_and_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KFORGE_MODEL", "vllm:qwen")
    monkeypatch.setenv("KFORGE_BASE_URL", "http://10.0.0.5:8000/v1")
    monkeypatch.setenv("KFORGE_API_KEY", "sk-env")
    model = get_model()
    assert isinstance(model, OpenAICompatibleModel)
    assert model.name == "vllm:qwen" and model.base_url == "http://10.0.0.5:8000/v1"
    assert provider_settings("vllm").api_key == "sk-env"


def test_provider_key_variable_and_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    settings = provider_settings("openai")
    assert settings.api_key == "sk-openai" and settings.base_url == "https://api.openai.com/v1"
    assert "sk-openai" not in repr(settings)
    assert provider_settings("ollama").base_url == "http://127.0.0.1:11434/v1"
    assert provider_settings("ollama").api_key is None


def test_config_file_sets_default_providers_and_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(
        tmp_path,
        """
model = "mycorp:big-model"
models = ["ollama:llama3.2"]

[providers.mycorp]
base_url = "https://llm.mycorp.example/v1"
api_key_env = "MYCORP_KEY"
json_schema = false
timeout_s = 30

[providers.local]
n_ctx = 2048

[prices]
"mycorp:big-model" = { input = 1.0, output = 2.0 }
""",
    )
    monkeypatch.setenv("MYCORP_KEY", "sk-corp")
    config = load_config()
    assert config.model == "mycorp:big-model"
    assert configured_model_specs(config) == [
        "mycorp:big-model",
        "ollama:llama3.2",
        "local:smollm2",
    ]
    settings = provider_settings("mycorp", config)
    assert (settings.base_url, settings.api_key, settings.json_schema, settings.timeout_s) == (
        "https://llm.mycorp.example/v1",
        "sk-corp",
        False,
        30.0,
    )
    model = get_model()
    assert isinstance(model, OpenAICompatibleModel) and model.name == "mycorp:big-model"
    assert model.json_schema is False
    assert provider_settings("local", config).options["n_ctx"] == 2048


def test_overrides_beat_env_and_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KFORGE_BASE_URL", "http://env:1/v1")
    policy = RetryPolicy(max_attempts=1)
    model = get_model("ollama:llama3", base_url="http://arg:2/v1", retry=policy, native_tools=False)
    assert isinstance(model, OpenAICompatibleModel)
    assert (
        model.base_url == "http://arg:2/v1"
        and model.retry is policy
        and model.native_tools is False
    )


def test_configuration_mistakes_are_explained(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ConfigurationError, match="unknown model provider 'acme'"):
        get_model("acme:x")
    with pytest.raises(ConfigurationError, match="needs a base URL"):
        get_model("compat:some-model")
    with pytest.raises(ConfigurationError, match="unknown option"):
        get_model("test", temprature=0.1)
    write_config(tmp_path, "[providers.ollama]\napi_key = 'sk-secret'\n")
    with pytest.raises(ConfigurationError, match="must not hold the key itself"):
        load_config()
    write_config(tmp_path, "model = [\n")
    with pytest.raises(ConfigurationError, match="not valid TOML"):
        load_config()
    monkeypatch.setenv("KFORGE_CONFIG", str(tmp_path / "missing.toml"))
    with pytest.raises(ConfigurationError, match="does not exist"):
        load_config()
