"""What agents write for a person to read: answers, insights and frontier questions (Research,
Understand, Build and the tree).

Answers and insights come from ``kforge.rag.grounded.write_answer``: sentences of the passages
(small models) or generated text that passed the checks, each sentence tied to the source it
rests on, so the report can number its markers by its own Sources list. Frontier questions the
model proposes are kept only when they read as real questions; when fewer than two do, the
headings of relevant documents the report did not use become the frontier.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from kforge.agents.common.naming import topic_name
from kforge.engine.run_context import RunContext
from kforge.frames import DataEvent
from kforge.llm.types import Message, ModelResponse, ModelSettings
from kforge.rag.grounded import AnswerStyle, GroundedAnswer, write_answer
from kforge.rag.textcheck import LoopWatch, cut_loop, echoed_phrase, is_degenerate, key_terms
from kforge.rag.types import Chunk

__all__ = [
    "FRONTIER_EVENT",
    "Written",
    "frontier_from_headings",
    "plain_subject",
    "question_from_title",
    "usable_frontier_question",
    "write_grounded",
]

FRONTIER_EVENT = "frontier.candidates"
"""Records the headings a frontier was built from, so a resumed step builds the same one."""
_PREPOSITIONS = frozenset(
    ["in", "of", "for", "on", "with", "at", "to", "from", "by", "about", "over", "between"]
)


@dataclass(frozen=True, slots=True)
class Written:
    """An answer or insight: its sentences, each with the passage index it rests on."""

    segments: list[dict[str, Any]]
    """``{"text", "source"}`` with ``source`` an index into the passages written from."""
    path: str
    reason: str

    @property
    def text(self) -> str:
        return " ".join(s["text"] for s in self.segments)


async def write_grounded(
    ctx: RunContext,
    question: str,
    passages: Sequence[Chunk],
    *,
    style: AnswerStyle,
    purpose: str,
    settings: ModelSettings,
    system: str,
    exclude: Collection[str] = (),
    max_sentences: int = 3,
) -> Written:
    """Write from ``passages`` (best first) with the checks; records which path wrote it."""

    async def write(messages: list[Message], s: ModelSettings) -> ModelResponse:
        capped = ModelSettings(
            temperature=s.temperature,
            max_tokens=min(s.max_tokens or settings.max_tokens or 400, settings.max_tokens or 400),
            repetition_penalty=s.repetition_penalty,
        )
        return await ctx.complete(messages, capped, purpose=purpose, watch=LoopWatch())

    answer: GroundedAnswer = await write_answer(
        question,
        passages,
        write,
        style=style,
        system=system,
        exclude=exclude,
        max_sentences=max_sentences,
    )
    ctx.emit(
        DataEvent(
            name="answer.checked",
            payload={
                "purpose": purpose,
                "path": answer.path,
                "reason": answer.reason,
                "dropped": list(answer.dropped),
                "citations": len(answer.citations),
            },
        )
    )
    segments = [{"text": g.text, "source": g.source} for g in answer.segments]
    return Written(segments, answer.path, answer.reason)


def question_from_title(title: str) -> str:
    """A plain question about a document's subject: "Approval Workflows" -> "What are
    approval workflows?"; a title that is already a question keeps its words."""
    title = topic_name(title) or " ".join(title.split()).strip(" .?!")
    if not title:
        return ""
    first = title.split()[0].lower()
    if first in {"what", "how", "why", "when", "which", "who", "where", "is", "are", "can", "do"}:
        return title[0].upper() + title[1:] + "?"
    subject = plain_subject(title)
    words = subject.split()
    if words[0].endswith("ing") and len(words) > 1:
        # "Designing tools" is an activity, "Chunking strategies" a thing: ask what fits both
        return f"What should I know about {subject}?"
    # the verb agrees with the head noun: "memory in agent systems" is, "kinds of work" are
    head: list[str] = []
    for word in words:
        if word.lower() in _PREPOSITIONS and head:
            break
        head.append(word.lower())
    last = head[-1]
    plural = "and" in head or (last.endswith("s") and not last.endswith(("ss", "is", "us")))
    return f"What {'are' if plural else 'is'} {subject}?"


def plain_subject(title: str) -> str:
    """A title as a phrase inside a sentence: "Human-in-the-Loop Design" -> "human-in-the-loop
    design"; acronyms and names keep their case (BM25, ReAct, fs.link)."""
    return " ".join(w if _keeps_case(w) else w.lower() for w in title.split())


def _keeps_case(word: str) -> bool:
    """Acronyms and names keep their case (BM25, ReAct, LangGraph); other words are lowered,
    each piece of a hyphenated one too ("Human-in-the-Loop")."""
    core = word.strip("()[],.;:'\"")
    identifier = any(c in core for c in "._`/") or any(
        c.isupper() for piece in core.split("-") for c in piece[1:]
    )
    return any(c.isdigit() for c in core) or identifier


def usable_frontier_question(text: str, instructions: str) -> bool:
    """A frontier question worth showing: a real question with a topic, no loop, no echo."""
    return (
        len(key_terms(text)) >= 2
        and not is_degenerate(text)
        and not cut_loop(text)[1]
        and not echoed_phrase(text, [instructions], words=5)
    )


async def frontier_from_headings(
    ctx: RunContext,
    search: Callable[[], Sequence[Chunk]],
    used_files: set[str],
    asked: set[str],
    limit: int,
    question: str = "",
) -> list[dict[str, str]]:
    """Questions from the headings of the passages ``search`` finds in documents the report
    did not cite, whose heading shares a word with ``question`` (when given). The search and
    the headings are recorded, so a re-executed step builds the same."""

    def unused_headings() -> dict[str, Any]:
        candidates = []
        for chunk in search():
            if chunk.file in used_files:
                continue
            heading = chunk.heading.split(" > ")[-1] if chunk.heading else chunk.title
            candidates.append({"heading": heading, "file": chunk.file})
        return {"candidates": candidates}

    candidates = (await ctx.step(FRONTIER_EVENT, unused_headings)).get("candidates", [])
    out: list[dict[str, str]] = []
    focus = set(key_terms(question))
    for item in candidates:
        heading = str(item.get("heading", ""))
        adjacent = question_from_title(heading)
        if not adjacent or adjacent.lower() in asked or len(key_terms(adjacent)) < 2:
            continue
        if focus and not focus & set(key_terms(heading)):
            continue  # a passage that matched on words the question does not turn on
        asked.add(adjacent.lower())
        out.append({"question": adjacent, "why": f"covered in {item.get('file')}, not used above"})
        if len(out) >= limit:
            break
    return out
