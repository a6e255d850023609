"""``explain_text_with_context``: explain a passage using its surrounding context (model-backed)."""

from __future__ import annotations

from typing import Any

from kforge.llm.base import Model
from kforge.llm.types import Message, ModelSettings
from kforge.prompts import prompt_text
from kforge.tools.annotations import ToolAnnotations
from kforge.tools.base import Tool
from kforge.tools.result import ToolResult
from kforge.tools.tool_context import ToolContext

__all__ = ["ExplainTextTool"]

_SYSTEM = prompt_text("EXPLAIN_TEXT")


class ExplainTextTool(Tool):
    """Uses the model it was given, or else the run's model."""

    timeout_s = 120.0

    def __init__(self, model: Model | None = None) -> None:
        self.model = model

    @property
    def name(self) -> str:
        return "explain_text_with_context"

    @property
    def description(self) -> str:
        return "Explain a passage of text in plain words, using the surrounding context."

    @property
    def input_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "text": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The passage to explain.",
                },
                "context": {"type": "string", "description": "Surrounding text or page content."},
                "audience": {
                    "type": "string",
                    "enum": ["beginner", "general", "expert"],
                    "default": "general",
                },
            },
            "required": ["text"],
            "additionalProperties": False,
        }

    @property
    def annotations(self) -> ToolAnnotations:
        return ToolAnnotations(
            title="Explain text", read_only_hint=True, destructive_hint=False,
            idempotent_hint=False, open_world_hint=False,
        )  # fmt: skip

    async def execute(
        self, arguments: dict[str, Any], context: ToolContext | None = None
    ) -> ToolResult:
        model = self.model or (context.model if context else None)
        if model is None:
            return ToolResult.error(
                "explain_text_with_context needs a language model; give the tool one or run it "
                "inside an agent run",
                kind="no_model",
            )
        audience = arguments.get("audience", "general")
        prompt = (
            f"Explain this for a {audience} reader:\n\n<passage>\n{arguments['text']}\n</passage>"
        )
        if arguments.get("context"):
            prompt += f"\n\n<context>\n{arguments['context'][:8000]}\n</context>"
        response = await model.complete(
            [Message.system(_SYSTEM), Message.user(prompt)],
            ModelSettings(max_tokens=600, temperature=0.3),
        )
        explanation = response.text.strip()
        if not explanation:
            return ToolResult.error("the model returned an empty explanation", kind="model_error")
        return ToolResult.success(explanation, {"explanation": explanation, "audience": audience})
