"""What the ReAct loop's model may decide each step, the schema it decides against, and how its
reply is read: call a tool, respond, ask the user, or plan. A tool call in the JSON is read by
``llm.toolprompt.read_tool_call``, the reader the prompted providers use too.

A reply that cannot be used raises ``ModelOutputError`` with a message that says what was wrong;
the loop turns that into an error frame and a bounded retry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from kforge import jsoncodec
from kforge.errors import ModelOutputError
from kforge.frames import AgentAction
from kforge.llm.structured import structured_value
from kforge.llm.toolprompt import read_tool_call
from kforge.llm.types import ModelResponse, ToolCall, ToolSpec

__all__ = [
    "ASK_USER_TOOL",
    "Decision",
    "DecisionKind",
    "decision_schema",
    "native_tools",
    "parse_decision",
]

DecisionKind = Literal["tool_call", "respond", "ask_user", "plan"]

_THOUGHT = {"type": "string", "maxLength": 300}
_ANSWER_CHARS = 4000

ASK_USER_TOOL = ToolSpec(
    name="ask_user",
    description="Ask the user one clarifying question when the goal is ambiguous and no tool "
    "can resolve it. The run waits for the answer.",
    input_schema={
        "type": "object",
        "properties": {"question": {"type": "string", "minLength": 1, "maxLength": 500}},
        "required": ["question"],
        "additionalProperties": False,
    },
)
"""The control tool offered in native mode so that the model can ask a question."""


@dataclass(frozen=True, slots=True)
class Decision:
    kind: DecisionKind
    thought: str
    """The model's reasoning for this decision; every decision records one, so a run explains itself."""
    tool: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    answer: str = ""
    question: str = ""

    @property
    def action(self) -> AgentAction:
        return {
            "tool_call": AgentAction.TOOL_CALL,
            "respond": AgentAction.RESPOND,
            "ask_user": AgentAction.ASK_USER,
            "plan": AgentAction.PLAN,
        }[self.kind]

    def to_call(self) -> ToolCall:
        return ToolCall(self.tool, dict(self.arguments))


def _self_contained(schema: dict[str, Any]) -> bool:
    """False when the schema refers to definitions that would break once nested elsewhere."""
    text = jsoncodec.dumps(schema)
    return '"$ref"' not in text and '"$defs"' not in text and '"definitions"' not in text


def decision_schema(tools: Sequence[ToolSpec], *, allow_ask: bool = True) -> dict[str, Any]:
    """One decision: a call of one of ``tools`` with valid arguments, an answer, a question, or a
    plan. ``thought`` comes first so that a constrained model reasons before it acts."""

    def variant(action: str, extra: dict[str, Any]) -> dict[str, Any]:
        properties = {"thought": _THOUGHT, "action": {"const": action}, **extra}
        return {
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "additionalProperties": False,
        }

    variants = [
        variant(
            "tool_call",
            {
                "tool": {"const": spec.name},
                "arguments": spec.input_schema
                if spec.input_schema and _self_contained(spec.input_schema)
                else {"type": "object"},
            },
        )
        for spec in tools
    ]
    variants.append(variant("respond", {"answer": {"type": "string", "maxLength": _ANSWER_CHARS}}))
    if allow_ask:
        variants.append(
            variant("ask_user", {"question": {"type": "string", "minLength": 1, "maxLength": 500}})
        )
    variants.append(variant("plan", {}))
    return {"anyOf": variants}


def native_tools(tools: Sequence[ToolSpec], *, allow_ask: bool = True) -> list[ToolSpec]:
    """The tools offered in native mode: the real ones plus ``ask_user`` when asking is allowed."""
    offered = list(tools)
    if allow_ask and all(t.name != ASK_USER_TOOL.name for t in tools):
        offered.append(ASK_USER_TOOL)
    return offered


def parse_decision(
    response: ModelResponse, *, native: bool = False, allow_ask: bool = True
) -> Decision:
    """Read one decision: a native tool call, plain text as the answer (``native``), or the
    structured JSON decision."""
    if response.tool_calls or (native and response.parsed is None):
        return _from_native(response, allow_ask=allow_ask)
    value = structured_value(response, "the decision")
    if not isinstance(value, dict):
        raise ModelOutputError(
            f"the decision must be a JSON object with 'thought' and 'action' (got {type(value).__name__})"
        )
    return _from_object(value, allow_ask=allow_ask)


def _from_native(response: ModelResponse, *, allow_ask: bool) -> Decision:
    thought = response.text.strip()
    if response.tool_calls:
        call = response.tool_calls[0]
        if call.name == ASK_USER_TOOL.name:
            question = str(call.arguments.get("question") or "").strip()
            if not allow_ask:
                raise ModelOutputError("asking the user is not allowed in this run")
            if not question:
                raise ModelOutputError("ask_user was called without a 'question'")
            return Decision("ask_user", thought, question=question)
        if not isinstance(call.arguments, dict):
            raise ModelOutputError(f"the arguments of '{call.name}' must be a JSON object")
        return Decision("tool_call", thought, tool=call.name, arguments=dict(call.arguments))
    if not thought:
        raise ModelOutputError("the reply is empty: neither a tool call nor an answer")
    return Decision("respond", "", answer=thought)


def _from_object(value: dict[str, Any], *, allow_ask: bool) -> Decision:
    thought = value.get("thought", value.get("reasoning", ""))
    if not isinstance(thought, str):
        raise ModelOutputError(f"'thought' must be a string (got {type(thought).__name__})")
    action = value.get("action")
    if action is None:  # lenient: infer the action from the fields present
        inferred = (("tool", "tool_call"), ("answer", "respond"), ("question", "ask_user"))
        action = next((a for k, a in inferred if k in value), "plan" if thought else None)
    if action == "tool_call":
        try:
            call = read_tool_call(value)
        except ValueError as exc:  # the JSON of string arguments too
            raise ModelOutputError(f"a 'tool_call' decision is unusable: {exc}") from exc
        tool = call.name.strip()
        if not tool:
            raise ModelOutputError("a 'tool_call' decision needs the tool's name in 'tool'")
        return Decision("tool_call", thought.strip(), tool=tool, arguments=dict(call.arguments))
    if action == "respond":
        answer = value.get("answer")
        if not isinstance(answer, str):
            raise ModelOutputError(
                "a 'respond' decision needs the final answer as text in 'answer'"
            )
        return Decision("respond", thought.strip(), answer=answer)
    if action == "ask_user":
        if not allow_ask:
            raise ModelOutputError("asking the user is not allowed in this run")
        question = value.get("question")
        if not isinstance(question, str) or not question.strip():
            raise ModelOutputError("an 'ask_user' decision needs the question in 'question'")
        return Decision("ask_user", thought.strip(), question=question.strip())
    if action == "plan":
        if not thought.strip():
            raise ModelOutputError("a 'plan' decision needs its reasoning in 'thought'")
        return Decision("plan", thought.strip())
    raise ModelOutputError(
        f"'action' must be one of tool_call, respond, ask_user, plan (got {action!r})"
    )
