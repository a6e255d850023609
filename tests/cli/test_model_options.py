"""``--timeout``, ``--retries`` and the API key check, through the real command line against a
real HTTP server on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

from kforge.cli import main
from kforge.store.sqlite import SQLiteStore
from tests.llm.fake_openai import FakeOpenAI, Reply


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("KFORGE_MODEL", "KFORGE_BASE_URL", "KFORGE_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "empty.toml").write_text("")
    monkeypatch.setenv("KFORGE_CONFIG", str(tmp_path / "empty.toml"))
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\n\nAlpha keeps durable checkpoints.\n")
    return folder


@pytest.fixture
def server() -> FakeOpenAI:
    fake = FakeOpenAI().start()
    yield fake  # type: ignore[misc]
    fake.stop()


def runs_in(db: Path) -> int:
    store = SQLiteStore(db)
    try:
        return len(store.list_runs())
    finally:
        store.close()


def test_a_missing_api_key_is_caught_before_a_run_or_an_index_exists(
    tmp_path: Path, docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "k.db"
    for command in (
        ["ask", "What is alpha?", "--docs", str(docs), "--model", "openai:gpt-4o-mini"],
        ["research", "What is alpha?", "--model", "openrouter:some/model"],
    ):
        assert main(["--db", str(db), *command]) == 1
        err = capsys.readouterr().err
        assert err.startswith("kforge: error: no API key for ") and "nothing was started" in err
        assert "KFORGE_API_KEY or OPENAI_API_KEY" in err or "OPENROUTER_API_KEY" in err
        assert "corpus '" not in err
    assert runs_in(db) == 0


def test_retries_and_timeout_bound_a_failing_endpoint(
    tmp_path: Path,
    docs: Path,
    server: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("KFORGE_BASE_URL", server.base_url)
    db = tmp_path / "k.db"
    ask = ["--db", str(db), "ask", "What is alpha?", "--docs", str(docs), "--model", "vllm:m"]
    failing = Reply(status=503, body={"error": {"message": "busy"}})
    server.push(failing, failing, failing, failing)
    # an outage that outlasts the retries pauses the run (exit 4), resumable once it is back
    assert main([*ask, "--retries", "1", "--timeout", "5"]) == 4
    err = capsys.readouterr().err
    assert "paused (model_unavailable)" in err and "runs resume" in err

    server.requests.clear()
    server.replies.clear()
    server.push(*[Reply(hold=True)] * 8)
    assert main([*ask, "--retries", "0", "--timeout", "0.5"]) == 4
    err = capsys.readouterr().err
    assert "paused (model_unavailable)" in err

    with pytest.raises(SystemExit):
        main([*ask, "--retries", "many"])
    assert main([*ask, "--retries", "-1"]) == 2
    assert "--retries must be 0 or more" in capsys.readouterr().err
