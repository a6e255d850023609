"""The ReAct loop's prompts: deciding, observing a tool result, and writing the final answer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from kforge import jsoncodec
from kforge.llm.structured import decoder_bounds
from kforge.llm.types import Message, ToolCall, ToolSpec
from kforge.prompts import load_template, prompt_text, render_template

__all__ = [
    "OBSERVE_SYSTEM",
    "SYNTHESIZE_SYSTEM",
    "ObservationReply",
    "call_text",
    "decision_request",
    "merge_messages",
    "observation_messages",
    "react_system",
    "retry_request",
    "synthesis_request",
]

OBSERVE_SYSTEM = prompt_text("LOOP_OBSERVE")
SYNTHESIZE_SYSTEM = prompt_text("LOOP_SYNTHESIZE")


class ObservationReply(BaseModel):
    """The model's judgement of a tool result against the goal."""

    model_config = ConfigDict(
        str_strip_whitespace=True, json_schema_extra={"additionalProperties": False}
    )

    observation: Annotated[str, Field(min_length=1), decoder_bounds(max_length=300)]
    goal_achieved: StrictBool


_RESULT_CHARS = 3000


def call_text(call: ToolCall) -> str:
    """``name({"arg": ...})``: a call as one line for prompts, frames and logs."""
    return f"{call.name}({jsoncodec.dumps(call.arguments, sort_keys=True, spaced=True)})"


def merge_messages(messages: Sequence[Message]) -> list[Message]:
    """Join consecutive messages of the same role (many chat templates expect alternation)."""
    merged: list[Message] = []
    for message in messages:
        if (
            merged
            and merged[-1].role == message.role
            and message.role in ("user", "assistant")
            and not merged[-1].tool_calls
            and not message.tool_calls
        ):
            merged[-1] = Message(message.role, f"{merged[-1].content}\n\n{message.content}")
        else:
            merged.append(message)
    return merged


def _tool_lines(tools: Sequence[ToolSpec]) -> list[str]:
    lines = []
    for spec in tools:
        properties = spec.input_schema.get("properties", {})
        required = spec.input_schema.get("required", [])
        args = jsoncodec.dumps(properties)
        needed = f"; required: {', '.join(required)}" if required else ""
        lines.append(f"{spec.name}: {spec.description.strip()} Arguments: {args}{needed}")
    return lines


def react_system(
    goal: str, tools: Sequence[ToolSpec], max_steps: int, lessons: Sequence[str]
) -> str:
    """The loop's system prompt: the built-in REACT_SYSTEM template with the offered tools and
    the lessons of earlier failures (the grounding section follows it, from the context)."""
    listed = _tool_lines(tools) or ["(none: respond with what you know, or plan)"]
    return render_template(
        load_template("REACT_SYSTEM"),
        goal=goal,
        tools=listed,
        max_steps=str(max_steps),
        reflections=list(lessons),
    )


def decision_request(
    *,
    step: int,
    max_steps: int,
    suggestion: ToolCall | None,
    suggestion_reason: str,
    retired: Sequence[str],
    structured: bool,
    allow_ask: bool,
) -> str:
    """The user turn that asks for the next decision."""
    lines = [f"Step {step} of {max_steps}."]
    if step == max_steps:
        lines.append("This is the last step: respond with the best answer you can give now.")
    if retired:
        lines.append(f"No longer available after repeated failures: {', '.join(retired)}.")
    if suggestion is not None:
        args = jsoncodec.dumps(suggestion.arguments, sort_keys=True, spaced=True)
        why = f" ({suggestion_reason})" if suggestion_reason else ""
        lines.append(
            f"Suggested alternative after a repeated failure: {suggestion.name}({args}){why}."
        )
    if structured:
        actions = ["tool_call", "respond", *(["ask_user"] if allow_ask else []), "plan"]
        lines.append(
            "Reply with one JSON object: "
            '{"thought": "...", "action": "' + '" | "'.join(actions) + '", ...} with "tool" and '
            '"arguments" for tool_call, "answer" for respond'
            + (', "question" for ask_user' if allow_ask else "")
            + "."
        )
    else:
        lines.append("Call one tool, or reply with the final answer as plain text.")
    return "\n".join(lines)


def observation_messages(goal: str, call: ToolCall, result_text: str) -> list[Message]:
    shown = result_text if len(result_text) <= _RESULT_CHARS else result_text[:_RESULT_CHARS] + " …"
    request = prompt_text("LOOP_OBSERVE_REQUEST", goal=goal, call=call_text(call), result=shown)
    return [Message.system(OBSERVE_SYSTEM), Message.user(request)]


def retry_request(problem: str) -> str:
    """The user turn after a decision that could not be used, saying why."""
    return prompt_text("LOOP_RETRY_REQUEST", problem=problem)


def synthesis_request(goal: str, stop_reason: str) -> str:
    if not stop_reason:
        return prompt_text("LOOP_SYNTHESIS_REQUEST", goal=goal)
    return prompt_text("LOOP_PARTIAL_SYNTHESIS_REQUEST", stop_reason=stop_reason, goal=goal)
