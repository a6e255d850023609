"""A model call's reply as the run receives it: streamed to live subscribers, and refused
when the record could not keep it as it is."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kforge.errors import ModelOutputError
from kforge.frames import TokenDelta
from kforge.jsoncodec import not_json
from kforge.llm.base import Model
from kforge.llm.estimate import estimate_messages_tokens, estimate_text_tokens
from kforge.llm.types import Message, ModelResponse, ModelSettings, ToolSpec, Usage

__all__ = ["refuse_unrecordable", "streamed"]


async def streamed(
    model: Model,
    on_delta: Callable[[TokenDelta], None],
    run_id: str,
    messages: Sequence[Message],
    settings: ModelSettings | None,
    tools: Sequence[ToolSpec],
    output_schema: dict[str, Any] | None,
    purpose: str,
    watch: Callable[[str], str | None] | None = None,
) -> ModelResponse:
    final: ModelResponse | None = None
    pieces: list[str] = []
    events = model.stream(messages, settings, tools=tools, output_schema=output_schema)
    try:
        async for event in events:
            if event.delta:
                on_delta(TokenDelta(run_id, event.delta, purpose))
                pieces.append(event.delta)
                kept = watch("".join(pieces)) if watch is not None else None
                if kept is not None:
                    return ModelResponse(
                        text=kept,
                        usage=Usage(estimate_messages_tokens(messages), estimate_text_tokens(kept)),
                        model=model.name,
                        finish_reason="stopped",
                    )
            if event.response is not None:
                final = event.response
    finally:
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()  # stops the generation at once, not when it is collected
    if final is None:
        raise ModelOutputError(f"model {model.name} ended its stream without a response")
    return final


def refuse_unrecordable(model: Model, response: ModelResponse) -> None:
    """A re-executed step must see the reply the first execution saw, so a reply holding
    what the record cannot keep as it is (NaN, infinities) is refused before it is used."""
    if not_json([[c.arguments for c in response.tool_calls], response.parsed]) is None:
        return
    problems: list[tuple[str, str]] = []
    for call in response.tool_calls:
        for name, value in call.arguments.items():
            found = not_json({name: value})
            if found is not None:
                at = f" at {found[0]}" if found[0] != name else ""
                problems.append((f"tool call '{call.name}', argument '{name}'{at}", found[1]))
    found = not_json(response.parsed)
    if found is not None:
        problems.append(("structured output" + (f" at {found[0]}" if found[0] else ""), found[1]))
    if problems:
        where, what = problems[0]
        raise ModelOutputError(
            f"model {response.model or model.name} replied with {what} in {where}, "
            "which JSON cannot record, so a re-executed step would see something else; "
            "ask for a finite number, or for the value as a string"
        )
