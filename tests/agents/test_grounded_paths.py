"""Every answering path (ask, chat, research, MCP's run_agent) catches a model that loops,
echoes its prompt, invents markers or cites nothing: what reaches the user is checked text
whose markers all name a listed source."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest

from kforge.cli import build_parser, main
from kforge.cli.chat import run_chat
from kforge.llm.testing.function import CallInfo, FunctionModel
from kforge.llm.types import Message
from kforge.rag.grounded import GENERATE_SYSTEM
from kforge.runtime.answers import run_to_answer
from tests.agents.test_research import Script, make_runtime, run_to_end
from tests.cli.test_ask_chat import docs, use_model  # noqa: F401 (the docs fixture)

LOOP = "Vision transformers are a way of life that is also " * 25
ECHO = GENERATE_SYSTEM.replace("\n", " ")
BAD_REPLIES = {
    "loops": LOOP,
    "echoes": ECHO,
    "invents markers": "Vision transformers split an image into patches [7]. They rival [12] CNNs.",
    "cites nothing": "Vision transformers split an image into patches and feed them to an encoder.",
}
MARKER = re.compile(r"\[(\d+)\]")


def bad_writer(reply: str) -> FunctionModel:
    """Grades every passage relevant and writes ``reply`` whenever it is asked for text."""

    def answer(messages: list[Message], info: CallInfo) -> Any:
        schema = info.output_schema or {}
        if "in_scope" in schema.get("properties", {}):
            return {"reason": "on topic", "in_scope": True}
        if "relevance" in schema.get("properties", {}):
            return {"relevance": "relevant", "confidence": 0.9, "reasoning": "on topic"}
        return reply

    return FunctionModel(answer, name="test:bad-writer")


def assert_clean(answer: str, sources: str) -> None:
    """No loop, no echo; every marker of ``answer`` is listed in ``sources``."""
    assert "way of life that is also way" not in answer.replace(",", "")
    assert answer.count("a way of life") <= 1
    assert "numbered passages" not in answer
    listed = {int(n) for n in re.findall(r"^\s*\[(\d+)\]", sources, flags=re.MULTILINE)}
    used = {int(n) for n in MARKER.findall(answer)}
    assert used and used <= listed, (answer, sources)


@pytest.mark.parametrize("behaviour", sorted(BAD_REPLIES))
def test_ask(
    behaviour: str,
    tmp_path: Path,
    docs: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    use_model(monkeypatch, bad_writer(BAD_REPLIES[behaviour]))
    db = tmp_path / "k.db"
    assert main(["--db", str(db), "ask", "What is a vision transformer?", "--docs", str(docs)]) == 0
    out = capsys.readouterr().out
    answer, _, sources = out.partition("Sources:")
    assert_clean(answer, sources)


@pytest.mark.parametrize("behaviour", sorted(BAD_REPLIES))
async def test_chat_keeps_only_the_checked_answer_as_history(
    behaviour: str,
    tmp_path: Path,
    docs: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kforge.store.sqlite import SQLiteStore

    use_model(monkeypatch, bad_writer(BAD_REPLIES[behaviour]))
    db = tmp_path / "k.db"
    args = build_parser().parse_args(["--db", str(db), "chat", "--docs", str(docs)])
    stdin = io.StringIO("What is a vision transformer?\nHow does it split images?\n/exit\n")
    out = io.StringIO()
    assert await run_chat(args, stdin=stdin, out=out, progress=io.StringIO()) == 0
    store = SQLiteStore(db)
    runs = sorted(store.list_runs(), key=lambda r: r.created_at)
    history = runs[1].input["args"]["history"]
    answer = (runs[0].result or {})["answer"]
    assert history[0]["answer"] == answer  # the checked answer, not the model's reply
    numbers = "\n".join(f"[{c['number']}]" for c in (runs[0].result or {})["citations"])
    assert_clean(answer, numbers)
    store.close()


class BadResearch(Script):
    reply: str = ""

    def __call__(self, messages: list[Message], info: CallInfo) -> Any:
        value = super().__call__(messages, info)
        return self.reply if isinstance(value, str) else value


@pytest.mark.parametrize("behaviour", sorted(BAD_REPLIES))
async def test_research(behaviour: str, tmp_path: Path) -> None:
    (tmp_path / "vit.md").write_text(
        "# Vision Transformers\n\nVision transformers split an image into patches and feed "
        "them to a transformer encoder. They rival convolutional networks.\n"
    )
    script = BadResearch(
        tree=[{"name": "Vision", "questions": ["How do vision transformers handle images?"]}]
    )
    script.reply = BAD_REPLIES[behaviour]
    rt = make_runtime(tmp_path, script)
    run = await run_to_end(rt, {"question": "What are vision transformers?"})
    report = (run.result or {})["report"]
    body, _, sources = report.partition("## Sources")
    assert_clean(body, sources)


@pytest.mark.parametrize("behaviour", sorted(BAD_REPLIES))
async def test_mcp_run_agent(behaviour: str, tmp_path: Path) -> None:
    from kforge.rag.ingest import ingest_folder
    from kforge.runtime import Runtime
    from kforge.store import MemoryStore

    (tmp_path / "vit.md").write_text(
        "# Vision Transformers\n\nVision transformers split an image into patches and feed "
        "them to a transformer encoder.\n"
    )
    rt = Runtime(MemoryStore(), model=bad_writer(BAD_REPLIES[behaviour]))
    ingest_folder(rt.services.corpus("docs"), tmp_path)
    text = await run_to_answer(rt, "router", "What is a vision transformer?", corpus="docs")
    answer, _, sources = text.partition("Sources:")
    assert_clean(answer, sources)


def test_runs_explain_counts_the_answers_and_their_real_citations(
    tmp_path: Path,
    docs: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from kforge.store.sqlite import SQLiteStore

    use_model(monkeypatch, bad_writer(BAD_REPLIES["invents markers"]))
    db = tmp_path / "k.db"
    assert main(["--db", str(db), "ask", "What is a vision transformer?", "--docs", str(docs)]) == 0
    store = SQLiteStore(db)
    [run] = store.list_runs()
    store.close()
    capsys.readouterr()
    assert main(["--db", str(db), "runs", "explain", run.id]) == 0
    out = capsys.readouterr().out
    # two sentences, both about the one passage that says them: one citation, not [7] and [12]
    assert "answers: 1 (generative x1) | citations in them: 1" in out
