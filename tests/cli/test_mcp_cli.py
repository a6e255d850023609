"""``kforge mcp`` as an MCP client starts it: search_documents over the chosen corpus, the
configured model for tools that need one, checkpoints returned as questions and answered."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

import kforge


async def test_mcp_searches_a_folder_explains_with_the_model_and_returns_checkpoints(
    tmp_path: Path,
) -> None:
    import mcp

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "alpha.md").write_text("# Alpha\n\nThe alpha protocol keeps durable checkpoints.\n")
    db = tmp_path / "k.db"
    env = {**os.environ, "PYTHONPATH": str(Path(kforge.__file__).parents[1])}
    env.pop("KFORGE_MODEL", None)
    params = mcp.StdioServerParameters(
        command=sys.executable,
        args=["-m", "kforge", "mcp", "--db", str(db), "--docs", str(docs), "--model", "test"],
        env=env,
    )
    async with mcp.Client(params) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert {"search_documents", "explain_text_with_context", "run_agent", "answer_run"} <= tools

        found = await client.call_tool("search_documents", {"query": "durable checkpoints"})
        assert not found.is_error
        assert found.content[0].text.startswith("[1] alpha.md")  # type: ignore[union-attr]

        explained = await client.call_tool(
            "explain_text_with_context",
            {"text": "durable checkpoints", "context": "The alpha protocol keeps them."},
        )
        assert not explained.is_error, explained.content

        asked = await client.call_tool(
            "run_agent", {"prompt": "How does alpha keep runs?", "agent": "research"}
        )
        text = asked.content[0].text  # type: ignore[union-attr]
        assert "is waiting for a person: Approve the question tree?]" in text
        assert '"question": "How does alpha keep runs?"' in text
        assert "Options: approve, modify, reject." in text
        assert "remove_questions" in text
        run_id = re.search(r"\[run ([0-9a-f]{32}) ", text).group(1)  # type: ignore[union-attr]
        assert f"kforge --db {db} runs resume {run_id} --answer approve" in text

        bad = await client.call_tool(
            "answer_run",
            {"run_id": run_id[:8], "answer": {"action": "modify", "modifications": {"x": 1}}},
        )
        assert bad.is_error
        assert "allowed: categories, add_questions, remove_questions" in bad.content[0].text  # type: ignore[union-attr]


async def test_mcp_over_stdio_serves_an_applications_resources_and_prompts(
    tmp_path: Path,
) -> None:
    import mcp

    (tmp_path / "notes_ext.py").write_text(
        "from kforge.mcp.catalog import MCPPrompt, MCPPromptMessage, MCPResource\n"
        "from kforge.tools.content import ContentBlock\n"
        "async def read(uri, values):\n"
        "    return 'note ' + values['name']\n"
        "async def render(arguments):\n"
        "    return [MCPPromptMessage('user', ContentBlock.of_text('Shorten ' + arguments['text']))]\n"
        "def add(catalog):\n"
        "    catalog.add_resource(MCPResource('notes://{name}', 'note', read))\n"
        "    catalog.add_prompt(MCPPrompt('shorten', render))\n"
    )
    src = str(Path(kforge.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, str(tmp_path)])}
    params = mcp.StdioServerParameters(
        command=sys.executable,
        args=["-m", "kforge", "mcp", "--db", str(tmp_path / "k.db"), "--model", "test",
              "--agents", "none", "--no-python", "--mcp-extension", "notes_ext:add"],
        env=env,
    )  # fmt: skip
    async with mcp.Client(params, mode="legacy") as client:
        read = await client.read_resource("notes://alpha")
        assert read.contents[0].text == "note alpha"  # type: ignore[union-attr]
        with pytest.raises(mcp.MCPError, match="unknown prompt 'nope'; prompts: shorten"):
            await client.get_prompt("nope")


async def test_mcp_explain_and_summarize_check_a_looping_model_and_quote_the_text(
    tmp_path: Path,
) -> None:
    import mcp

    from tests.cli.function_endpoint import FunctionEndpoint

    loop = "Frameworks for Interoperability. " * 12
    context = (
        "Interoperability lets two systems exchange data. A framework for it names the formats "
        "both sides read. Without one, every pair of systems needs its own converter."
    )
    src = str(Path(kforge.__file__).parents[1])
    with FunctionEndpoint(lambda messages, schema: loop) as endpoint:
        env = {
            **os.environ,
            "PYTHONPATH": src,
            "KFORGE_BASE_URL": endpoint.base_url,
            "OPENAI_API_KEY": "test-key",
        }
        env.pop("KFORGE_MODEL", None)
        params = mcp.StdioServerParameters(
            command=sys.executable,
            args=["-m", "kforge", "mcp", "--db", str(tmp_path / "k.db"), "--model",
                  "openai:fake", "--agents", "none", "--no-python"],
            env=env,
        )  # fmt: skip
        async with mcp.Client(params) as client:
            explained = await client.call_tool(
                "explain_text_with_context",
                {"text": "Frameworks for Interoperability", "context": context},
            )
            summary = await client.call_tool(
                "summarize_page_content", {"text": context, "max_sentences": 2}
            )
        asked = len(endpoint.requests)
    assert asked == 4  # each tool asked twice (the reply, then the retry), both refused
    for result in (explained, summary):
        assert not result.is_error, result.content
        text = result.content[0].text  # type: ignore[union-attr]
        assert text.count("Frameworks for Interoperability") == 0, text
        assert "not supported by the" in text
    explanation = explained.content[0].text  # type: ignore[union-attr]
    assert explanation.startswith("Interoperability lets two systems exchange data.")


async def test_mcp_fetch_page_refusing_a_loopback_address_names_the_cli_flag(
    tmp_path: Path,
) -> None:
    import mcp

    env = {**os.environ, "PYTHONPATH": str(Path(kforge.__file__).parents[1])}
    env.pop("KFORGE_MODEL", None)
    params = mcp.StdioServerParameters(
        command=sys.executable,
        args=["-m", "kforge", "mcp", "--db", str(tmp_path / "k.db"), "--model", "test"],
        env=env,
    )
    async with mcp.Client(params) as client:
        refused = await client.call_tool("fetch_page", {"url": "http://127.0.0.1:9/x"})
        assert refused.is_error
        text = refused.content[0].text  # type: ignore[union-attr]
        assert "to permit it: restart kforge mcp with --allow-private-network" in text
        assert "allow_private" not in text
