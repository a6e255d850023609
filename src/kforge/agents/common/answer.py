"""The answer when no passage was graded relevant (router, Research, the tree): the model's
own, checked, disclaimed; and the short answer line of an answer.

With relevant passages the answer comes from ``kforge.rag.grounded.write_answer``. Without
them, a model that writes its own answers may answer from general knowledge: the reply is cut
where it loops, refused when it repeats its instructions, and carries no citation (nothing
supports it). A model too small to be trusted alone is not asked; the caller then says that the
documents have nothing on the question.
"""

from __future__ import annotations

import re

from kforge.llm.types import Message, ModelSettings
from kforge.prompts import prompt_text
from kforge.rag.grounded import GroundedAnswer, WriteFn, first_passing_reply
from kforge.rag.textcheck import cut_loop, echoed_phrase, split_sentences

__all__ = ["FALLBACK_NOTE", "MODEL_ONLY_SYSTEM", "model_only_answer", "short_answer"]

FALLBACK_NOTE = (
    "Note: no relevant passages were found in the documents, so this answer comes from the "
    "model's general knowledge and may be wrong."
)
MODEL_ONLY_SYSTEM = prompt_text("ROUTER_MODEL_ONLY")
_SETTINGS = ModelSettings(temperature=0.2, max_tokens=200)
_RETRY = ModelSettings(temperature=0.5, max_tokens=200, repetition_penalty=1.3)
_MARKER_FREE = str.maketrans("", "", "[]")


async def model_only_answer(
    question: str, write: WriteFn | None, *, history: str = ""
) -> GroundedAnswer:
    if write is None:
        return GroundedAnswer(
            "", (), "none", "no relevant passages; this model does not answer alone"
        )
    parts = [history] if history else []
    parts.append(f"Question: {question}")
    prompt = [Message.system(MODEL_ONLY_SYSTEM), Message.user("\n\n".join(parts))]

    def checked(reply: str) -> tuple[str, str]:
        text, looped = cut_loop(reply)
        echo = echoed_phrase(text, [MODEL_ONLY_SYSTEM, "Question:"])
        sentences = split_sentences(text.translate(_MARKER_FREE))
        if echo:
            return "", f"the reply repeats its instructions ('{echo}')"
        if not sentences:
            return "", "the reply loops" if looped else "the reply is empty"
        return " ".join(sentences), ""

    path, answer, problems = await first_passing_reply(
        write,
        prompt,
        checked,
        paths=("model_only", "model_only_retry"),
        settings=(_SETTINGS, _RETRY),
    )
    if answer is not None:
        return GroundedAnswer(answer, (), path, "no relevant passages; the model answered alone")
    return GroundedAnswer(
        "", (), "none", "the model's own answer failed the checks: " + "; then ".join(problems)
    )


def short_answer(answer: str) -> str:
    """The answer's opening line when it stands apart (a blank line after it), without its
    ``[n]`` markers; empty otherwise."""
    first, blank, _ = answer.strip().partition("\n\n")
    if not blank or "\n" in first.strip():
        return ""
    return " ".join(re.sub(r"\s*\[\d+\]", "", first).split())
