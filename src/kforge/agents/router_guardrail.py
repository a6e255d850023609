"""The router's guardrail (seed 003): is the latest message in scope of the assistant?

The model judges, with the conversation so far (a short follow-up continues its topic). When it
says "out of scope" but the documents have passages matching the question, the documents win:
a small model's verdict should not turn away questions the documents can answer.
"""

from __future__ import annotations

from collections.abc import Sequence

from kforge.agents.conversation import Turn, format_history
from kforge.agents.router_schema import GUARDRAIL_SCHEMA, GUARDRAIL_SYSTEM, GuardrailVerdict
from kforge.engine.context import RunContext
from kforge.errors import ModelOutputError
from kforge.frames import AgentThinking, DataEvent, ErrorFrame
from kforge.llm.types import Message, ModelSettings
from kforge.rag.corpus import Corpus

__all__ = ["judge_scope", "polite_refusal"]

_SETTINGS = ModelSettings(temperature=0.0, max_tokens=120)
_TOPICS = 15


async def judge_scope(
    ctx: RunContext, corpus: Corpus, question: str, turns: Sequence[Turn], scope: str
) -> GuardrailVerdict:
    topics = sorted({s.title for s in corpus.sources() if s.title})[:_TOPICS]
    described = scope + (f" (documents: {'; '.join(topics)})" if topics else "")
    history = format_history(turns)
    user = (f"{history}\n\n" if history else "") + f"Latest message: {question}"
    messages = [Message.system(GUARDRAIL_SYSTEM.format(scope=described)), Message.user(user)]
    try:
        response = await ctx.complete(
            messages, _SETTINGS, output_schema=GUARDRAIL_SCHEMA, purpose="guardrail"
        )
        verdict = GuardrailVerdict.from_response(response)
    except ModelOutputError as exc:
        ctx.emit(
            ErrorFrame(
                error_type="invalid_guardrail_verdict",
                recoverable=True,
                message=f"the guardrail's verdict could not be read ({exc}); the question is "
                "treated as in scope",
            )
        )
        return GuardrailVerdict(True, "the verdict could not be read")
    if verdict.in_scope:
        return verdict
    matches = len(corpus.search(question, 3)) if len(corpus) else 0
    # Recorded as a frame: a resumed step reads the count from the log, not a changed corpus.
    evidence = ctx.emit(DataEvent(name="guardrail.evidence", payload={"matches": matches}))
    if int(evidence.payload.get("matches", 0)) == 0:
        return verdict
    ctx.emit(
        AgentThinking(
            message=f"The guardrail judged the question out of scope ({verdict.reason}) but the "
            "documents have passages matching it; continuing"
        )
    )
    return GuardrailVerdict(True, verdict.reason)


def polite_refusal(scope: str, verdict: GuardrailVerdict) -> str:
    reason = f" {verdict.reason.rstrip('.')}." if verdict.reason else ""
    return (
        f"Sorry, I can only help with questions about {scope}.{reason} "
        "Feel free to ask me something about those."
    )
