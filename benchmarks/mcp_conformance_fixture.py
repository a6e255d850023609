"""The tools, resources and prompts the MCP conformance suite's server scenarios call.

Added to ``kforge serve``'s ``/mcp`` through kforge's own extension point:

    kforge serve --mcp-extension mcp_conformance_fixture   # with benchmarks/ on PYTHONPATH

Each one behaves as the suite's scenario descriptions ask (names, texts, schemas), and each goes
through the same code a kforge application's own tools, resources and prompts use: the tool
runner, the content conversion, the client channel for logs, progress, elicitation and sampling.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from kforge.mcp.catalog import (
    MCPCatalog,
    MCPClientChannel,
    MCPPrompt,
    MCPPromptArgument,
    MCPPromptMessage,
    MCPResource,
)
from kforge.tools.base import DefinedTool
from kforge.tools.content import ContentBlock
from kforge.tools.definition import ToolDefinition
from kforge.tools.result import ToolResult
from kforge.tools.tool_context import ToolContext

__all__ = ["register_mcp"]

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
"""A 1x1 red pixel."""
WAV = base64.b64decode("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=")
"""A minimal WAV file."""
NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}}

Handler = Callable[[dict[str, Any], MCPClientChannel], Awaitable[ToolResult]]


def _tool(
    name: str, description: str, handler: Handler, schema: dict[str, Any] | None = None
) -> DefinedTool:
    async def run(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        channel = context.services.client
        assert isinstance(channel, MCPClientChannel)
        return await handler(arguments, channel)

    definition = ToolDefinition(
        name=name, description=description, input_schema=schema or NO_ARGUMENTS
    )
    return DefinedTool(definition, run, timeout_s=60)


def _blocks(*blocks: ContentBlock) -> ToolResult:
    return ToolResult(content=blocks)


async def simple_text(arguments: dict[str, Any], mcp: MCPClientChannel) -> ToolResult:
    return ToolResult.success("This is a simple text response for testing.")


async def image(arguments: dict[str, Any], mcp: MCPClientChannel) -> ToolResult:
    return _blocks(ContentBlock.image(PNG, "image/png"))


async def audio(arguments: dict[str, Any], mcp: MCPClientChannel) -> ToolResult:
    return _blocks(ContentBlock.audio(WAV, "audio/wav"))


async def embedded_resource(arguments: dict[str, Any], mcp: MCPClientChannel) -> ToolResult:
    return _blocks(
        ContentBlock.resource(
            "test://embedded-resource",
            text="This is an embedded resource content.",
            mime_type="text/plain",
        )
    )


async def mixed(arguments: dict[str, Any], mcp: MCPClientChannel) -> ToolResult:
    return _blocks(
        ContentBlock.of_text("Multiple content types test:"),
        ContentBlock.image(PNG, "image/png"),
        ContentBlock.resource(
            "test://mixed-content-resource",
            text=json.dumps({"test": "data", "value": 123}),
            mime_type="application/json",
        ),
    )


async def with_logging(arguments: dict[str, Any], mcp: MCPClientChannel) -> ToolResult:
    for i, step in enumerate(
        ("Tool execution started", "Tool processing data", "Tool execution completed")
    ):
        if i:
            await asyncio.sleep(0.05)
        await mcp.log("info", step)
    return ToolResult.success("Tool with logging executed successfully")


async def with_progress(arguments: dict[str, Any], mcp: MCPClientChannel) -> ToolResult:
    for i, done in enumerate((0, 50, 100)):
        if i:
            await asyncio.sleep(0.05)
        await mcp.progress(done, 100, f"Completed step {done} of 100")
    return ToolResult.success("Progress reported: 0, 50, 100 of 100")


async def error(arguments: dict[str, Any], mcp: MCPClientChannel) -> ToolResult:
    raise RuntimeError("This tool intentionally returns an error for testing")


async def reconnection(arguments: dict[str, Any], mcp: MCPClientChannel) -> ToolResult:
    released = await mcp.release_stream()
    await asyncio.sleep(0.1)
    how = "after the client reconnected" if released else "on the stream it called on"
    return ToolResult.success(f"Reconnection test completed: the result arrived {how}.")


async def sampling(arguments: dict[str, Any], mcp: MCPClientChannel) -> ToolResult:
    text = await mcp.sample(arguments["prompt"], max_tokens=100)
    return ToolResult.success(f"LLM response: {text}")


async def _ask(
    mcp: MCPClientChannel, message: str, properties: dict[str, Any], required: Sequence[str] = ()
) -> ToolResult:
    schema = {"type": "object", "properties": properties, "required": list(required)}
    answer = await mcp.elicit(message, schema)
    return ToolResult.success(
        f"User response: action={answer.action}, content={json.dumps(dict(answer.content))}"
    )


async def elicitation(arguments: dict[str, Any], mcp: MCPClientChannel) -> ToolResult:
    response = {"type": "string", "description": "User's response"}
    return await _ask(mcp, arguments["message"], {"response": response}, ["response"])


async def elicitation_defaults(arguments: dict[str, Any], mcp: MCPClientChannel) -> ToolResult:
    return await _ask(
        mcp,
        "Please review and update the form fields with defaults",
        {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": True},
        },
    )


def _titled(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"const": value, "title": title} for value, title in pairs]


async def elicitation_enums(arguments: dict[str, Any], mcp: MCPClientChannel) -> ToolResult:
    options = ["option1", "option2", "option3"]
    return await _ask(
        mcp,
        "Please select options from the enum fields",
        {
            "untitledSingle": {
                "type": "string",
                "description": "Select one option",
                "enum": options,
            },
            "titledSingle": {
                "type": "string",
                "description": "Select one option with titles",
                "oneOf": _titled(
                    ("value1", "First Option"),
                    ("value2", "Second Option"),
                    ("value3", "Third Option"),
                ),
            },
            "legacyEnum": {
                "type": "string",
                "description": "Select one option (legacy)",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "description": "Select multiple options",
                "minItems": 1,
                "maxItems": 3,
                "items": {"type": "string", "enum": options},
            },
            "titledMulti": {
                "type": "array",
                "description": "Select multiple options with titles",
                "minItems": 1,
                "maxItems": 3,
                "items": {
                    "anyOf": _titled(
                        ("value1", "First Choice"),
                        ("value2", "Second Choice"),
                        ("value3", "Third Choice"),
                    )
                },
            },
        },
    )


async def json_schema(arguments: dict[str, Any], mcp: MCPClientChannel) -> ToolResult:
    return ToolResult.success(f"JSON Schema 2020-12 tool called with: {json.dumps(arguments)}")


JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}


def _text(content: str) -> Callable[[str, Mapping[str, str]], Awaitable[str | bytes]]:
    async def read(uri: str, values: Mapping[str, str]) -> str | bytes:
        return content

    return read


async def read_png(uri: str, values: Mapping[str, str]) -> str | bytes:
    return PNG


async def read_template(uri: str, values: Mapping[str, str]) -> str | bytes:
    item = values["id"]
    return json.dumps({"id": item, "templateTest": True, "data": f"Data for ID: {item}"})


def _user(*blocks: ContentBlock) -> list[MCPPromptMessage]:
    return [MCPPromptMessage("user", block) for block in blocks]


async def simple_prompt(arguments: Mapping[str, str]) -> Sequence[MCPPromptMessage]:
    return _user(ContentBlock.of_text("This is a simple prompt for testing."))


async def prompt_with_arguments(arguments: Mapping[str, str]) -> Sequence[MCPPromptMessage]:
    text = f"Prompt with arguments: arg1='{arguments['arg1']}', arg2='{arguments['arg2']}'"
    return _user(ContentBlock.of_text(text))


async def prompt_with_resource(arguments: Mapping[str, str]) -> Sequence[MCPPromptMessage]:
    return _user(
        ContentBlock.resource(
            arguments["resourceUri"],
            text="Embedded resource content for testing.",
            mime_type="text/plain",
        ),
        ContentBlock.of_text("Please process the embedded resource above."),
    )


async def prompt_with_image(arguments: Mapping[str, str]) -> Sequence[MCPPromptMessage]:
    return _user(
        ContentBlock.image(PNG, "image/png"),
        ContentBlock.of_text("Please analyze the image above."),
    )


def _starting_with(*values: str) -> Callable[[str], list[str]]:
    return lambda typed: [v for v in values if v.startswith(typed)]


def register_mcp(catalog: MCPCatalog) -> None:
    """Add the suite's fixture to ``catalog``."""
    prompt_schema = {"prompt": {"type": "string", "description": "The prompt to send to the LLM"}}
    message_schema = {"message": {"type": "string", "description": "The message to show the user"}}
    for tool in (
        _tool("test_simple_text", "Tests simple text content response", simple_text),
        _tool("test_image_content", "Tests image content response", image),
        _tool("test_audio_content", "Tests audio content response", audio),
        _tool(
            "test_embedded_resource", "Tests embedded resource content response", embedded_resource
        ),
        _tool(
            "test_multiple_content_types",
            "Tests response with multiple content types (text, image, resource)",
            mixed,
        ),
        _tool(
            "test_tool_with_logging",
            "Tests tool that emits log messages during execution",
            with_logging,
        ),
        _tool(
            "test_tool_with_progress",
            "Tests tool that reports progress notifications",
            with_progress,
        ),
        _tool("test_error_handling", "Tests error response handling", error),
        _tool(
            "test_reconnection",
            "Closes the SSE stream mid-call; the result arrives after the client reconnects",
            reconnection,
        ),
        _tool(
            "test_sampling",
            "Tests server-initiated sampling (LLM completion request)",
            sampling,
            {"type": "object", "properties": prompt_schema, "required": ["prompt"]},
        ),
        _tool(
            "test_elicitation",
            "Tests server-initiated elicitation (user input request)",
            elicitation,
            {"type": "object", "properties": message_schema, "required": ["message"]},
        ),
        _tool(
            "test_elicitation_sep1034_defaults",
            "Tests elicitation with default values per SEP-1034",
            elicitation_defaults,
        ),
        _tool(
            "test_elicitation_sep1330_enums",
            "Tests elicitation with enum schema improvements per SEP-1330",
            elicitation_enums,
        ),
        _tool(
            "json_schema_2020_12_tool",
            "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
            json_schema,
            JSON_SCHEMA_2020_12,
        ),
    ):
        catalog.add_tool(tool)
    for resource in (
        MCPResource(
            "test://static-text",
            "static-text",
            _text("This is the content of the static text resource."),
            title="Static Text Resource",
            description="A static text resource for testing",
            mime_type="text/plain",
        ),
        MCPResource(
            "test://static-binary",
            "static-binary",
            read_png,
            title="Static Binary Resource",
            description="A static binary resource (image) for testing",
            mime_type="image/png",
        ),
        MCPResource(
            "test://template/{id}/data",
            "template",
            read_template,
            title="Resource Template",
            description="A resource template with parameter substitution",
            mime_type="application/json",
        ),
        MCPResource(
            "test://watched-resource",
            "watched-resource",
            _text("Watched resource content"),
            title="Watched Resource",
            description="A resource clients may subscribe to",
            mime_type="text/plain",
        ),
    ):
        catalog.add_resource(resource)
    for prompt in (
        MCPPrompt(
            "test_simple_prompt",
            simple_prompt,
            title="Simple Test Prompt",
            description="A simple prompt without arguments",
        ),
        MCPPrompt(
            "test_prompt_with_arguments",
            prompt_with_arguments,
            title="Prompt With Arguments",
            description="A prompt with required arguments",
            arguments=(
                MCPPromptArgument(
                    "arg1", "First test argument", complete=_starting_with("paris", "park", "party")
                ),
                MCPPromptArgument("arg2", "Second test argument"),
            ),
        ),
        MCPPrompt(
            "test_prompt_with_embedded_resource",
            prompt_with_resource,
            title="Prompt With Embedded Resource",
            description="A prompt that includes an embedded resource",
            arguments=(MCPPromptArgument("resourceUri", "URI of the resource to embed"),),
        ),
        MCPPrompt(
            "test_prompt_with_image",
            prompt_with_image,
            title="Prompt With Image",
            description="A prompt that includes image content",
        ),
    ):
        catalog.add_prompt(prompt)
