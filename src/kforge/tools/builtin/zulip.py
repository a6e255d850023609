"""``zulip_send_message``: post to a Zulip stream topic or send a direct message.

Uses Zulip's REST API (``POST /api/v1/messages``, HTTP basic auth with the bot's email and API
key). Asks a person before sending by default, since a message cannot be unsent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kforge import jsoncodec
from kforge.tools.annotations import ToolAnnotations
from kforge.tools.base import Tool
from kforge.tools.result import ToolResult
from kforge.tools.tool_context import ToolContext

if TYPE_CHECKING:
    import httpx

__all__ = ["ZulipSendTool"]


class ZulipSendTool(Tool):
    def __init__(
        self,
        site: str,
        email: str,
        api_key: str,
        *,
        ask_before_sending: bool = True,
        timeout_s: float = 20.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.site = site.rstrip("/")
        self.email = email
        self._api_key = api_key
        self.requires_approval = ask_before_sending
        self.timeout_s = timeout_s
        self._transport = transport

    def __repr__(self) -> str:
        return f"ZulipSendTool({self.site!r}, {self.email!r})"

    @property
    def name(self) -> str:
        return "zulip_send_message"

    @property
    def description(self) -> str:
        return "Send a message to a Zulip stream (with a topic) or directly to people by email."

    @property
    def input_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "content": {"type": "string", "minLength": 1, "description": "Markdown text."},
                "stream": {"type": "string", "description": "Stream (channel) name."},
                "topic": {"type": "string", "default": "kforge", "description": "Stream topic."},
                "to": {
                    "type": "array",
                    "items": {"type": "string"},
                    "minItems": 1,
                    "description": "Emails of the people to message directly.",
                },
            },
            "required": ["content"],
            "oneOf": [{"required": ["stream"]}, {"required": ["to"]}],
            "additionalProperties": False,
        }

    @property
    def annotations(self) -> ToolAnnotations:
        return ToolAnnotations(
            title="Send Zulip message", read_only_hint=False, destructive_hint=False,
            idempotent_hint=False, open_world_hint=True,
        )  # fmt: skip

    async def execute(
        self, arguments: dict[str, Any], context: ToolContext | None = None
    ) -> ToolResult:
        import httpx

        if "stream" in arguments:
            data = {
                "type": "stream",
                "to": arguments["stream"],
                "topic": arguments.get("topic", "kforge"),
                "content": arguments["content"],
            }
            where = f"#{arguments['stream']} > {data['topic']}"
        else:
            data = {
                "type": "direct",
                "to": jsoncodec.dumps(arguments["to"], spaced=True),
                "content": arguments["content"],
            }
            where = ", ".join(arguments["to"])
        try:
            async with httpx.AsyncClient(
                timeout=self.timeout_s, transport=self._transport
            ) as client:
                response = await client.post(
                    f"{self.site}/api/v1/messages", data=data, auth=(self.email, self._api_key)
                )
        except httpx.HTTPError as exc:
            return ToolResult.error(
                f"Zulip at {self.site} is unreachable: {type(exc).__name__}", kind="unreachable"
            )
        try:
            body = response.json()
        except ValueError:
            body = {}
        if response.status_code == 401:
            return ToolResult.error(
                "Zulip refused the credentials (HTTP 401); check the bot's email and API key",
                kind="unauthorized",
            )
        if response.status_code >= 400 or body.get("result") != "success":
            reason = body.get("msg") or response.text[:200]
            return ToolResult.error(
                f"Zulip did not send the message to {where}: {reason}",
                kind="rejected_by_service",
                details={"code": body.get("code"), "status": response.status_code},
            )
        return ToolResult.success(
            f"Sent message {body.get('id')} to {where}", {"message_id": body.get("id"), "to": where}
        )
