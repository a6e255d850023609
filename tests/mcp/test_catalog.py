"""An application's own tools, resources and prompts on kforge's MCP server at ``/mcp``, through
the official MCP client against a real server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import base64
import subprocess
import sys
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
import mcp
import mcp.types as types
import pytest

from kforge.errors import ConfigurationError
from kforge.mcp import catalog as mcp_catalog
from kforge.mcp.catalog import MCPCatalog, MCPPromptMessage, MCPResource
from kforge.mcp.http import SessionEvents
from kforge.tools.content import ContentBlock
from kforge.tools.decorator import tool
from kforge.tools.tool_context import ToolContext
from tests.server.conftest import make_runtime
from tests.server.helpers import LiveServer, iter_events

NOTES = {"alpha": "first note", "beta": "second note"}


@tool
async def count_words(text: str, context: ToolContext) -> str:
    """Count the words of a text, reporting progress and logging as it goes."""
    channel = context.services.client
    assert isinstance(channel, mcp_catalog.MCPClientChannel)
    words = text.split()
    await channel.log("debug", "too detailed for a client that asked for info")
    for i, _ in enumerate(words, start=1):
        await channel.progress(i, len(words))
    await channel.log("info", f"counted {len(words)} words", logger="notes")
    return str(len(words))


@tool
async def confirm_delete(note: str, context: ToolContext) -> str:
    """Ask the person before deleting a note."""
    answer = await context.services.client.elicit(
        f"Delete {note}?", {"type": "object", "properties": {"sure": {"type": "boolean"}}}
    )
    return f"{answer.action}: {dict(answer.content)}"


@tool
async def title_for(note: str, context: ToolContext) -> str:
    """A title for a note, written by the client's model."""
    return await context.services.client.sample(f"Title for: {NOTES[note]}", max_tokens=20)


@tool
async def reindex(context: ToolContext) -> str:
    """A long job that lets go of the client's connection while it works."""
    released = await context.services.client.release_stream()
    await asyncio.sleep(0.05)
    return f"reindexed (stream released: {released})"


@tool
async def broken(context: ToolContext) -> str:
    """Always fails."""
    raise RuntimeError("the notes index is locked")


async def read_note(uri: str, values: Mapping[str, str]) -> str | bytes:
    return NOTES[values["name"]]


async def read_logo(uri: str, values: Mapping[str, str]) -> str | bytes:
    return b"\x89PNG-bytes"


async def summarize(arguments: Mapping[str, str]) -> Sequence[MCPPromptMessage]:
    note = arguments["note"]
    return [
        MCPPromptMessage("user", ContentBlock.resource(f"notes://{note}", text=NOTES[note])),
        MCPPromptMessage(
            "user", ContentBlock.of_text(f"Summarize {note} in {arguments.get('style', 'prose')}.")
        ),
    ]


def notes_catalog() -> MCPCatalog:
    catalog = MCPCatalog()
    for t in (count_words, confirm_delete, title_for, reindex, broken):
        catalog.add_tool(t)
    catalog.add_resource(MCPResource("notes://{name}", "note", read_note, mime_type="text/plain"))
    catalog.add_resource(MCPResource("notes://logo", "logo", read_logo, mime_type="image/png"))
    catalog.add_prompt(
        mcp_catalog.MCPPrompt(
            "summarize",
            summarize,
            description="Summarize a note",
            arguments=(
                mcp_catalog.MCPPromptArgument(
                    "note", complete=lambda typed: [n for n in NOTES if n.startswith(typed)]
                ),
                mcp_catalog.MCPPromptArgument("style", required=False),
            ),
        )
    )
    return catalog


@pytest.fixture
def notes_server(tmp_path: Path) -> Iterator[tuple[LiveServer, MCPCatalog]]:
    catalog = notes_catalog()
    with LiveServer(make_runtime(tmp_path), mcp_catalog=catalog) as live:
        yield live, catalog


def test_resources_are_listed_read_and_refused_by_uri(
    notes_server: tuple[LiveServer, MCPCatalog],
) -> None:
    server, _ = notes_server

    async def session() -> tuple[Any, ...]:
        async with mcp.Client(f"{server.url}/mcp", mode="legacy") as client:
            fixed = await client.list_resources()
            templates = await client.list_resource_templates()
            note = await client.read_resource("notes://beta")
            logo = await client.read_resource("notes://logo")
            with pytest.raises(
                mcp.MCPError, match="no resource at 'files://x'; resources: notes://"
            ):
                await client.read_resource("files://x")
            return fixed, templates, note, logo

    fixed, templates, note, logo = asyncio.run(session())
    assert [r.uri for r in fixed.resources] == ["notes://logo"]
    assert [t.uri_template for t in templates.resource_templates] == ["notes://{name}"]
    assert note.contents[0].text == "second note" and note.contents[0].uri == "notes://beta"
    assert (
        base64.b64decode(logo.contents[0].blob) == b"\x89PNG-bytes"
    )  # fixed URI wins over template


def test_prompts_are_filled_in_completed_and_checked(
    notes_server: tuple[LiveServer, MCPCatalog],
) -> None:
    server, _ = notes_server

    async def session() -> tuple[Any, ...]:
        async with mcp.Client(f"{server.url}/mcp", mode="legacy") as client:
            listed = await client.list_prompts()
            got = await client.get_prompt("summarize", {"note": "alpha", "style": "verse"})
            done = await client.complete(
                types.PromptReference(name="summarize"), {"name": "note", "value": "al"}
            )
            with pytest.raises(
                mcp.MCPError, match="missing note; it takes: note, style \\(optional\\)"
            ):
                await client.get_prompt("summarize", {"style": "verse"})
            with pytest.raises(mcp.MCPError, match="unknown prompt 'nope'; prompts: summarize"):
                await client.get_prompt("nope")
            return listed, got, done

    listed, got, done = asyncio.run(session())
    assert [(a.name, a.required) for a in listed.prompts[0].arguments] == [
        ("note", True),
        ("style", False),
    ]
    assert got.messages[0].content.resource.text == "first note"
    assert got.messages[1].content.text == "Summarize alpha in verse."
    assert done.completion.values == ["alpha"] and done.completion.total == 1


def test_a_tool_logs_reports_progress_and_fails_cleanly(
    notes_server: tuple[LiveServer, MCPCatalog],
) -> None:
    server, _ = notes_server
    logs: list[types.LoggingMessageNotificationParams] = []
    progress: list[tuple[float, float | None]] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total))

    async def session() -> tuple[Any, Any]:
        async with mcp.Client(
            f"{server.url}/mcp", mode="legacy", logging_callback=on_log
        ) as client:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await client.set_logging_level("info")
            counted = await client.call_tool(
                "count_words", {"text": "one two three"}, progress_callback=on_progress
            )
            failed = await client.call_tool("broken", {})
            return counted, failed

    counted, failed = asyncio.run(session())
    assert counted.content[0].text == "3"
    assert [(p.level, p.data, p.logger) for p in logs] == [("info", "counted 3 words", "notes")]
    assert progress == [(1, 3), (2, 3), (3, 3)]
    assert failed.is_error and "the notes index is locked" in failed.content[0].text


def test_a_tool_asks_the_person_and_the_clients_model(
    notes_server: tuple[LiveServer, MCPCatalog],
) -> None:
    server, _ = notes_server
    asked: list[str] = []

    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"sure": True})

    async def on_sample(
        context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        prompt = params.messages[0].content.text  # type: ignore[union-attr]
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text=f"«{prompt}»"), model="client-model"
        )

    async def session() -> tuple[Any, Any, Any]:
        async with mcp.Client(
            f"{server.url}/mcp",
            mode="legacy",
            elicitation_callback=on_elicit,
            sampling_callback=on_sample,
        ) as client:
            deleted = await client.call_tool("confirm_delete", {"note": "alpha"})
            title = await client.call_tool("title_for", {"note": "beta"})
        async with mcp.Client(f"{server.url}/mcp", mode="legacy") as plain:
            refused = await plain.call_tool("confirm_delete", {"note": "alpha"})
        return deleted, title, refused

    deleted, title, refused = asyncio.run(session())
    assert asked == ["Delete alpha?"]
    assert deleted.content[0].text == "accept: {'sure': True}"
    assert title.content[0].text == "«Title for: second note»"
    assert refused.is_error and "does not support elicitation" in refused.content[0].text


def test_subscribers_hear_of_a_changed_resource(
    notes_server: tuple[LiveServer, MCPCatalog],
) -> None:
    server, catalog = notes_server
    updated: list[str] = []
    heard = asyncio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))
            heard.set()

    async def session() -> tuple[int, int]:
        async with mcp.Client(
            f"{server.url}/mcp", mode="legacy", message_handler=on_message
        ) as client:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await client.subscribe_resource("notes://alpha")
                told = server.call(catalog.resource_updated("notes://alpha"))
                await asyncio.wait_for(heard.wait(), 30)
                await client.unsubscribe_resource("notes://alpha")
                after = server.call(catalog.resource_updated("notes://alpha"))
                with pytest.raises(mcp.MCPError, match="no resource at"):
                    await client.subscribe_resource("elsewhere://x")
            return told, after

    told, after = asyncio.run(session())
    assert (told, after) == (1, 0)
    assert updated == ["notes://alpha"]


def test_a_catalog_refuses_a_second_entry_with_the_same_name() -> None:
    catalog = notes_catalog()
    with pytest.raises(ValueError, match="already has a tool named 'broken'"):
        catalog.add_tool(broken)
    with pytest.raises(ValueError, match="already has a resource at 'notes://logo'"):
        catalog.add_resource(MCPResource("notes://logo", "again", read_logo))


def test_an_extension_that_cannot_be_loaded_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot import no_such_module"):
        mcp_catalog.load_mcp_extension("no_such_module")
    with pytest.raises(ConfigurationError, match=r"has no function register_mcp\(catalog\)"):
        mcp_catalog.load_mcp_extension("json")
    result = subprocess.run(
        [sys.executable, "-m", "kforge", "--db", str(tmp_path / "k.db"), "serve", "--no-samples",
         "--port", "1", "--mcp-extension", "no_such_module:add"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode != 0
    assert "MCP extension 'no_such_module:add': cannot import no_such_module" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_released_stream_resumes_with_last_event_id(
    notes_server: tuple[LiveServer, MCPCatalog],
) -> None:
    server, _ = notes_server
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    hello = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    with httpx.Client(base_url=server.url, timeout=30) as http:
        opened = http.post(
            "/mcp",
            headers=headers,
            json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello},
        )
        headers |= {
            "mcp-session-id": opened.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-11-25",
        }
        http.post(
            "/mcp", headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
        )
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "reindex", "arguments": {}},
        }
        with http.stream("POST", "/mcp", headers=headers, json=call) as response:
            first = list(iter_events(response))  # the server closes it before the result
        assert [(e.data, e.id is not None) for e in first] == [("", True)]  # the priming event
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        assert "retry: 1000" in http.post("/mcp", headers=headers, json=ping).text
        resume = {**headers, "last-event-id": first[0].id or ""}
        with http.stream("GET", "/mcp", headers=resume) as resumed:
            reply = next(e.json() for e in iter_events(resumed) if e.data)
    assert reply["id"] == 1
    assert reply["result"]["content"][0]["text"] == "reindexed (stream released: True)"


async def test_session_events_replay_one_stream_after_an_id_within_their_bound() -> None:
    events = SessionEvents(limit=4)
    ids = [await events.store_event(stream, message) for stream, message in
           [("1", None), ("1", "a"), ("2", "x"), ("1", "b"), ("1", "c")]]  # fmt: skip
    sent: list[tuple[Any, str | None]] = []

    async def send(event: Any) -> None:
        sent.append((event.message, event.event_id))

    assert await events.replay_events_after(ids[1], send) == "1"
    assert sent == [("b", ids[3]), ("c", ids[4])]
    assert await events.replay_events_after(ids[0], send) is None  # dropped past the bound
    assert await events.replay_events_after("nonsense", send) is None


def test_the_official_client_resumes_a_released_stream(
    notes_server: tuple[LiveServer, MCPCatalog],
) -> None:
    server, _ = notes_server

    async def session() -> Any:
        async with mcp.Client(f"{server.url}/mcp", mode="legacy") as client:
            return await client.call_tool("reindex", {})

    result = asyncio.run(session())
    assert result.content[0].text == "reindexed (stream released: True)"
