"""The question tree's sub-questions and category names, checked against the documents.

The parts of the user's question come first; then the passages the question finds add a
sub-question where the best of them would otherwise go unasked; a category the model proposes
is kept only when the question or the documents say its name, it is no variant of one the tree
has, and (once answers exist) the passages that say it are not already cited. Every search is
recorded, so a re-executed step plans the same tree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kforge.agents.research.decompose import (
    Part,
    is_variant,
    name_terms,
    occurs_in,
    overlaps,
    question_from_heading,
    question_parts,
)
from kforge.agents.research.question_tree import topic_name
from kforge.engine.run_context import RunContext

__all__ = [
    "NAMES_EVENT",
    "PASSAGES_EVENT",
    "CategoryCheck",
    "check_category",
    "passage_parts",
    "plan_parts",
]

PASSAGES_EVENT = "research.passages"
"""Records the passages the question and each of its parts find (ids, files, headings)."""
NAMES_EVENT = "research.names"
"""Records which passages say a proposed category's name."""
WHOLE = 8
"""Passages of the whole question a sub-question may be taken from."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CategoryCheck:
    name: str
    """The name as it would be added ("" when it is not a topic at all)."""
    accepted: bool
    reason: str
    """Why it was refused (empty when accepted)."""


def _hit(chunk: Any) -> dict[str, Any]:
    return {
        "chunk_id": chunk.id,
        "file": chunk.file,
        "heading": chunk.heading,
        "title": chunk.title,
    }


async def plan_parts(
    ctx: RunContext, corpus: str | None, question: str, k: int
) -> tuple[list[Part], dict[str, Any]]:
    """The parts of ``question`` and the recorded passages it and each part find."""
    parts = question_parts(question)

    def passages() -> dict[str, Any]:
        found = ctx.corpus(corpus)
        return {
            "whole": [_hit(h.chunk) for h in found.search(question, WHOLE)],
            "parts": [[_hit(h.chunk) for h in found.search(p.question, k)] for p in parts],
        }

    return parts, await ctx.recorded(PASSAGES_EVENT, passages)


def passage_parts(question: str, passages: dict[str, Any], taken: Sequence[str]) -> list[Part]:
    """Sub-questions from the headings of the passages the whole question finds, best first:
    one for the best passage when no part finds its document, and, while the tree is thin
    (fewer than three questions), one for each next passage on another subject. A heading
    counts only when it shares a content word with the question."""
    focus = name_terms(question)
    covered = {h["file"] for hits in passages.get("parts", []) for h in hits}
    names = list(taken)
    out: list[Part] = []
    for rank, hit in enumerate(passages.get("whole", [])):
        heading = str(hit.get("heading") or "").split(" > ")[-1]
        name = topic_name(heading) or topic_name(hit.get("title", ""))
        if not name or not (name_terms(name) & focus) or is_variant(name, names):
            continue
        needed = rank == 0 and hit.get("file") not in covered
        if not needed and len(names) + len(out) >= 3:
            continue
        asked = question_from_heading(name)
        if asked:
            out.append(Part(question=asked, category=name))
            names.append(name)
        if len(out) >= 2:
            break
    return out


async def check_category(
    ctx: RunContext,
    corpus: str | None,
    value: object,
    *,
    question: str,
    existing: Sequence[str],
    instructions: Sequence[str] = (),
    cited: set[str] | None = None,
) -> CategoryCheck:
    """Whether a proposed category may join the tree. ``instructions`` are the prompts the
    model was given: a name they say and the question does not is an echo. ``cited`` (the
    chunk ids answers cite) is given once answers exist: a name whose passages are all cited
    adds nothing."""
    name = topic_name(value)
    if not name:
        return CategoryCheck(name="", accepted=False, reason="not a topic name")
    in_question = occurs_in(name, question, words=True)
    if not in_question and any(occurs_in(name, text) for text in instructions):
        return CategoryCheck(name=name, accepted=False, reason="echoed from the instructions")
    if is_variant(name, existing):
        return CategoryCheck(name=name, accepted=False, reason="a variant of a category")
    if overlaps(name, existing):
        return CategoryCheck(name=name, accepted=False, reason="the tree has this category")

    def saying() -> dict[str, Any]:
        holds = []
        for hit in ctx.corpus(corpus).search(name, 8):
            chunk = hit.chunk
            if occurs_in(name, f"{chunk.title}\n{chunk.heading}\n{chunk.text}"):
                holds.append(chunk.id)
        return {"name": name, "chunks": holds}

    chunks = list((await ctx.recorded(NAMES_EVENT, saying)).get("chunks", []))
    if not chunks and not in_question:
        return CategoryCheck(
            name=name, accepted=False, reason="neither the question nor the documents say it"
        )
    if cited is not None and chunks and set(chunks) <= cited:
        return CategoryCheck(name=name, accepted=False, reason="its passages are already cited")
    return CategoryCheck(name=name, accepted=True, reason="")
