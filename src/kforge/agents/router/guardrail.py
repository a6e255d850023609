"""The router's guardrail: is the latest message in scope of the assistant?

The documents speak first. The question's key terms are looked up in the corpus: when no
passage holds them (two of them, for a question with two or more), the documents have nothing
on it and it is refused, whatever a model says ("write me a poem about Paris" to a corpus about
SQLite). When a passage clearly matches, it is in scope. Between the two, a model that writes
its own answers judges, with the conversation so far (a short follow-up continues its topic);
a model too small to judge is not asked, and the question goes on to retrieval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kforge.agents.conversation import Turn, format_history
from kforge.agents.router.schema import GuardrailVerdict, guardrail_system
from kforge.engine.run_context import RunContext
from kforge.errors import ModelOutputError
from kforge.frames import AgentThinking, ErrorFrame
from kforge.llm.types import Message, ModelSettings
from kforge.rag.analyze import analyze, tokenize
from kforge.rag.corpus import Corpus
from kforge.rag.stem import porter_stem
from kforge.rag.textcheck import key_terms

__all__ = ["ScopeEvidence", "judge_scope", "polite_refusal", "scope_evidence"]

_SETTINGS = ModelSettings(temperature=0.0, max_tokens=120)
_TOPICS = 15
_EVIDENCE_HITS = 5


@dataclass(frozen=True, slots=True)
class ScopeEvidence:
    terms: tuple[str, ...]
    """The question's key terms (stemmed)."""
    matched: tuple[str, ...]
    """The most key terms any one passage holds."""

    @property
    def clear_match(self) -> bool:
        return bool(self.terms) and len(self.matched) >= min(2, len(self.terms))

    @property
    def nothing(self) -> bool:
        return bool(self.terms) and not self.matched


async def scope_evidence(ctx: RunContext, corpus: Corpus, question: str) -> ScopeEvidence:
    """What the corpus holds of the question's key terms; recorded, so a resumed step reads
    the evidence it saw the first time, not a corpus changed since."""

    def held_terms() -> dict[str, Any]:
        terms = key_terms(question)
        best: list[str] = []
        if terms and len(corpus):
            for hit in corpus.search(question, _EVIDENCE_HITS):
                chunk = hit.chunk
                present = set(analyze(f"{chunk.title} {chunk.heading} {chunk.text}"))
                held = [t for t in terms if t in present]
                if len(held) > len(best):
                    best = held
        return {"terms": terms, "matched": best}

    payload = await ctx.recorded("guardrail.evidence", held_terms)
    return ScopeEvidence(
        tuple(str(t) for t in payload.get("terms", [])),
        tuple(str(t) for t in payload.get("matched", [])),
    )


async def judge_scope(
    ctx: RunContext,
    corpus: Corpus,
    question: str,
    turns: Sequence[Turn],
    scope: str,
    *,
    ask_model: bool = True,
    documents_only: bool = True,
) -> GuardrailVerdict:
    """In scope or not; ``documents_only`` is False when other sources (the web) may answer
    what the documents do not, and ``ask_model`` False skips the model's judgement."""
    evidence = await scope_evidence(ctx, corpus, question)
    if evidence.nothing and documents_only and len(corpus):
        return GuardrailVerdict(
            in_scope=False,
            reason="Your documents say nothing about " + ", ".join(_words(question)) + ".",
        )
    if evidence.clear_match or not ask_model:
        return GuardrailVerdict(in_scope=True, reason="the documents have passages on it")
    topics = sorted({s.title for s in corpus.sources() if s.title})[:_TOPICS]
    described = scope + (f" (documents: {'; '.join(topics)})" if topics else "")
    history = format_history(turns)
    user = (f"{history}\n\n" if history else "") + f"Latest message: {question}"
    messages = [Message.system(guardrail_system(described)), Message.user(user)]
    try:
        verdict = await ctx.complete(
            messages, _SETTINGS, output_type=GuardrailVerdict, purpose="guardrail"
        )
    except ModelOutputError as exc:
        ctx.emit(
            ErrorFrame(
                error_type="invalid_guardrail_verdict",
                recoverable=True,
                message=f"the guardrail's verdict could not be read ({exc}); the question is "
                "treated as in scope",
            )
        )
        return GuardrailVerdict(in_scope=True, reason="the verdict could not be read")
    if not verdict.in_scope and evidence.matched:
        ctx.emit(
            AgentThinking(
                message=f"The guardrail judged the question out of scope ({verdict.reason}) but "
                "the documents have passages matching it; continuing"
            )
        )
        return GuardrailVerdict(in_scope=True, reason=verdict.reason)
    return verdict


def _words(question: str) -> list[str]:
    """The question's topic words as the user wrote them, for the refusal."""
    terms = set(key_terms(question))
    seen: list[str] = []
    for token in tokenize(question):
        if token not in seen and porter_stem(token) in terms:
            seen.append(token)
    return [f"'{w}'" for w in seen[:4]]


def polite_refusal(scope: str, verdict: GuardrailVerdict) -> str:
    reason = f" {verdict.reason.rstrip('.')}." if verdict.reason else ""
    return (
        f"Sorry, I can only help with questions about {scope}.{reason} "
        "Feel free to ask me something about those."
    )
