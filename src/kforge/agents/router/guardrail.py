"""The router's guardrail: is the latest message in scope of the assistant?

The documents speak first. The question's focus (``kforge.rag.focus``) is looked up in the
corpus: when no passage found holds any of its terms, the documents have nothing on it and it
is refused, whatever a model says ("write me a poem about Paris" to a corpus about SQLite).
When the passages found hold the focus, it is in scope; one shared word is not enough. Between
the two, a model that writes its own answers judges, with the conversation so far (a short
follow-up continues its topic); a model too small to judge is not asked, and the question goes
on to retrieval, whose grading decides by the focus.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kforge.agents.conversation import Turn, format_history
from kforge.agents.decisions import structured
from kforge.agents.router.prompts import GuardrailVerdict, guardrail_system
from kforge.engine.run_context import RunContext
from kforge.errors import ModelOutputError
from kforge.frames import AgentThinking, ErrorFrame
from kforge.llm.types import Message, ModelSettings
from kforge.rag.corpus import Corpus
from kforge.rag.focus import Focus, passage_text

__all__ = ["ScopeEvidence", "judge_scope", "polite_refusal", "scope_evidence"]

_SETTINGS = ModelSettings(temperature=0.0, max_tokens=120)
_TOPICS = 15
_EVIDENCE_HITS = 5


@dataclass(frozen=True, slots=True)
class ScopeEvidence:
    terms: tuple[str, ...]
    """The question's focus terms, as it wrote them."""
    matched: tuple[str, ...]
    """The focus terms of the passage found that holds the most of the focus."""
    holds: bool
    """The passages found hold the focus between them (``kforge.rag.focus``)."""

    @property
    def clear_match(self) -> bool:
        return bool(self.terms) and self.holds

    @property
    def nothing(self) -> bool:
        return bool(self.terms) and not self.matched


async def scope_evidence(
    ctx: RunContext, corpus: Corpus, question: str, focus: Focus
) -> ScopeEvidence:
    """What the corpus holds of the question's focus; recorded, so a resumed step reads the
    evidence it saw the first time, not a corpus changed since."""

    def held_terms() -> dict[str, Any]:
        best: tuple[str, ...] = ()
        holds = False
        if focus.terms and len(corpus):
            # the focus alone finds what the request's words drown ("what does fs.link do")
            found = {}
            for query in (question, " ".join(t.text for t in focus.terms)):
                found.update({h.chunk.id: h.chunk for h in corpus.search(query, _EVIDENCE_HITS)})
            chunks = list(found.values())
            held = [focus.held(passage_text(c)) for c in chunks]
            top = max(held, key=focus.weight_of, default=())
            best = tuple(t.text for t in top)
            holds = focus.holds_any(chunks)
        return {"terms": [t.text for t in focus.terms], "matched": list(best), "holds": holds}

    payload = await ctx.step("guardrail.evidence", held_terms)
    terms = tuple(str(t) for t in payload.get("terms", []))
    matched = tuple(str(t) for t in payload.get("matched", []))
    # evidence recorded before it said whether the focus is held: two terms were a match
    holds = bool(payload.get("holds", len(matched) >= min(2, len(terms))))
    return ScopeEvidence(terms, matched, holds)


async def judge_scope(
    ctx: RunContext,
    corpus: Corpus,
    question: str,
    turns: Sequence[Turn],
    scope: str,
    *,
    evidence: ScopeEvidence,
    ask_model: bool = True,
    documents_only: bool = True,
) -> GuardrailVerdict:
    """In scope or not, given the ``evidence`` of ``scope_evidence``; ``documents_only`` is
    False when other sources (the web) may answer what the documents do not, and ``ask_model``
    False skips the model's judgement."""
    if evidence.nothing and documents_only and len(corpus):
        words = ", ".join(f"'{t}'" for t in evidence.terms[:4])
        return GuardrailVerdict(in_scope=False, reason=f"Your documents say nothing about {words}.")
    if evidence.clear_match or not ask_model:
        return GuardrailVerdict(in_scope=True, reason="the documents have passages on it")
    topics = sorted({s.title for s in corpus.sources() if s.title})[:_TOPICS]
    described = scope + (f" (documents: {'; '.join(topics)})" if topics else "")
    history = format_history(turns)
    user = (f"{history}\n\n" if history else "") + f"Latest message: {question}"
    messages = [Message.system(guardrail_system(described)), Message.user(user)]
    try:
        verdict = await structured(ctx, messages, _SETTINGS, GuardrailVerdict, "guardrail")
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


def polite_refusal(scope: str, verdict: GuardrailVerdict) -> str:
    reason = f" {verdict.reason.rstrip('.')}." if verdict.reason else ""
    return (
        f"Sorry, I can only help with questions about {scope}.{reason} "
        "Feel free to ask me something about those."
    )
