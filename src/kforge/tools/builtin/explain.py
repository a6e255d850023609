"""``explain_text_with_context``: explain a passage using its surrounding context (model-backed).

The explanation is checked as every answer from documents is (``given_text``): only what the
passage and its context support is said; otherwise the context's own sentences about the
passage are quoted, and when the context says nothing more, the tool says so."""

from __future__ import annotations

from typing import Any

from kforge.llm.base import Model
from kforge.prompts import prompt_text
from kforge.rag.textcheck import split_sentences
from kforge.tools.annotations import ToolAnnotations
from kforge.tools.base import Tool
from kforge.tools.builtin.given_text import GENERATED, answer_about, plain_text, text_passages
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
        text, around = arguments["text"], arguments.get("context") or ""
        passages = text_passages("passage", text[:4000])
        passages += text_passages("context", around[:8000], first_index=len(passages))
        answer = await answer_about(
            model,
            f"What does this mean: {' '.join(text.split())}",
            passages,
            system=_SYSTEM,
            instructions=f"Explain the passages titled 'passage' for a {audience} reader.",
            exclude=split_sentences(" ".join(text.split())),  # quoting it back explains nothing
        )
        explanation = plain_text(answer, 6)
        method = "model" if answer.path in GENERATED else "extractive"
        structured = {
            "explanation": explanation,
            "audience": audience,
            "method": method if explanation else "none",
            "reason": answer.reason,
            "sentences": [
                {"text": g.text, "from": passages[g.source].file} for g in answer.segments[:6]
            ],
        }
        if not explanation:
            return ToolResult.success(
                "The context does not explain this passage; give the text around it as 'context'.",
                structured,
            )
        if answer.path == "extractive_fallback":
            explanation += (
                "\n\n(The model's explanation was not supported by the passage and its "
                "context; these are sentences of the context instead.)"
            )
        return ToolResult.success(explanation, structured)
