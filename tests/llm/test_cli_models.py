"""``kforge models`` against a real OpenAI-compatible server and the bundled local model."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from kforge.cli import models
from tests.llm.fake_openai import FakeOpenAI, Reply, completion


def run_models(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    models.register(parser.add_subparsers())
    args = parser.parse_args(["models", *argv])
    return int(args.func(args))


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in (
        "KFORGE_MODEL",
        "KFORGE_BASE_URL",
        "KFORGE_API_KEY",
        "KFORGE_CONFIG",
        "OPENAI_API_KEY",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def test_lists_default_config_and_bundled_models(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "kforge.toml").write_text(
        'model = "ollama:llama3.2"\nmodels = ["openai:gpt-4o-mini"]\n'
    )
    assert run_models("--no-check") == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert (
        lines[1].startswith("*")
        and "ollama:llama3.2" in lines[1]
        and "http://127.0.0.1:11434/v1" in lines[1]
    )
    assert "openai:gpt-4o-mini" in out and "https://api.openai.com/v1" in out
    assert "local:smollm2" in out and "bundled SmolLM2-135M-Instruct" in out


def test_checks_each_model_and_reports_failures(
    server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KFORGE_BASE_URL", server.base_url)
    monkeypatch.setenv("KFORGE_API_KEY", "sk-test")
    server.push(completion("OK"), Reply(status=401, body={"error": {"message": "bad key"}}))
    code = run_models("--json", "--timeout", "10", "vllm:good", "vllm:bad", "test")
    rows = {r["model"]: r for r in json.loads(capsys.readouterr().out)}
    assert code == 1
    assert rows["vllm:good"]["status"] == "ok" and rows["vllm:good"]["detail"] == "replied 'OK'"
    assert rows["vllm:bad"]["status"] == "auth error" and "bad key" in rows["vllm:bad"]["detail"]
    assert rows["test"]["status"] == "ok"
    assert [r["model"] for r in server.requests] == ["good", "bad"]


@pytest.mark.slow
def test_the_bundled_model_answers(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_models("local:smollm2") == 0
    assert "ok ·" in capsys.readouterr().out


def test_an_unreachable_server_is_reported(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KFORGE_BASE_URL", "http://127.0.0.1:9/v1")
    assert run_models("--timeout", "5", "ollama:llama3") == 1
    out = capsys.readouterr().out
    assert "unreachable" in out and "cannot reach ollama:llama3" in out


def test_a_chatty_probe_reply_is_not_quoted_and_no_footnote_marks_nothing(
    server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KFORGE_BASE_URL", server.base_url)
    monkeypatch.setenv("KFORGE_API_KEY", "sk-test")
    server.push(completion("I'm sorry for your loss. I"))
    assert run_models("--timeout", "10", "vllm:chatty") == 0
    out = capsys.readouterr().out
    assert "sorry" not in out
    assert "ok · " in out and "it does not follow one-word instructions" in out
    assert "default model" not in out  # the default is not in the table, so nothing is marked
