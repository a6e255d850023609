"""The question tree's sub-questions and category names, checked against the documents.

The parts of the user's question come first; then the passages that hold the question's focus
(``kforge.rag.focus``: its terms weighed by how rare they are in the corpus) add aspects: the
sections of the document that holds the focus best, or headings that hold it themselves, where
that document would otherwise go unasked or while the tree is thin. A passage that shares only
a common word with the question ("agents") adds nothing. A category the model proposes is kept
only when the question or the documents say its name, its name holds a share of the focus of
the question or of one of its parts, it is no variant of one the tree has, and (once answers
exist) the passages that say it are not already cited. Every search and every focus is
recorded, so a re-executed step plans the same tree.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kforge import jsoncodec
from kforge.agents.common.naming import is_variant, name_terms, occurs_in, overlaps, topic_name
from kforge.agents.common.writing import plain_subject
from kforge.agents.research.decompose import Part, question_from_heading, question_parts
from kforge.engine.run_context import RunContext
from kforge.rag.focus import PASSAGE_SHARE, CorpusStatistics, Focus, passage_text, question_focus
from kforge.rag.types import Chunk

__all__ = [
    "NAMES_EVENT",
    "PASSAGES_EVENT",
    "CategoryCheck",
    "about_question",
    "check_category",
    "foci",
    "main_document",
    "passage_parts",
    "plan_parts",
]

PASSAGES_EVENT = "research.passages"
"""Records the passages the question and each of its parts find (ids, files, headings, the
share of the question's focus each holds) and the focus of the question and of each part."""
NAMES_EVENT = "research.names"
"""Records which passages say a proposed category's name."""
WHOLE = 8
"""Passages of the whole question a sub-question may be taken from."""
THIN = 3
"""A tree with fewer questions than this takes aspects from the passages while it is thin."""
ASPECTS = 2
"""Aspects the passages add at most."""
_LABEL = re.compile(r"[A-Z]+(?: [A-Z]+)?")
"""A section label of a manual page (upper-case words): it names no aspect."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CategoryCheck:
    name: str
    """The name as it would be added ("" when it is not a topic at all)."""
    accepted: bool
    reason: str
    """Why it was refused (empty when accepted)."""


def _hit(chunk: Chunk, focus: Focus | None = None, relevant: bool = False) -> dict[str, Any]:
    hit: dict[str, Any] = {
        "chunk_id": chunk.id,
        "file": chunk.file,
        "heading": chunk.heading,
        "title": chunk.title,
    }
    if focus is not None:
        hit["share"] = round(focus.share(passage_text(chunk)), 6)
        hit["relevant"] = relevant
    return hit


def foci(question: str, passages: dict[str, Any]) -> list[Focus]:
    """The recorded focus of the question and of each of its parts (the question's words,
    weighed alike, for a plan recorded before foci were)."""
    recorded = jsoncodec.convert(passages.get("focus", []), list[Focus])
    return recorded or [question_focus(question)]


def about_question(text: str, focus: Sequence[Focus]) -> bool:
    """``text`` is about the question or one of its parts: it holds a distinctive term of
    one's focus (weighing at least half of its heaviest term: a word the whole corpus uses,
    such as "agents" in a corpus about agents, is not enough) or a quarter of its weight.
    With no focus term to judge by, anything is."""
    judged = [f for f in focus if f.terms]
    if not judged:
        return True
    for f in judged:
        held = f.held(text)
        heaviest = max(t.weight for t in f.terms)
        if any(t.weight >= heaviest / 2 for t in held) or f.weight_of(held) >= PASSAGE_SHARE:
            return True
    return False


async def plan_parts(
    ctx: RunContext, corpus: str | None, question: str, k: int
) -> tuple[list[Part], dict[str, Any]]:
    """The parts of ``question`` and the recorded passages it and each part find, with the
    focus of each in the corpus."""
    parts = question_parts(question)

    def passages() -> dict[str, Any]:
        found = ctx.corpus(corpus)
        statistics = CorpusStatistics.of(found) if len(found) else None
        focus = question_focus(question, statistics)
        whole = [h.chunk for h in found.search(question, WHOLE)]
        asked = list(dict.fromkeys([question, *(p.question for p in parts)]))
        return {
            "whole": [_hit(c, focus, r) for c, r in zip(whole, focus.relevant(whole), strict=True)],
            "parts": [[_hit(h.chunk) for h in found.search(p.question, k)] for p in parts],
            "focus": jsoncodec.to_builtins([question_focus(q, statistics) for q in asked]),
        }

    return parts, await ctx.step(PASSAGES_EVENT, passages)


def _holding(question: str, passages: dict[str, Any]) -> list[dict[str, Any]]:
    """The whole question's hits that hold its focus, the largest share first."""
    hits = list(passages.get("whole", []))
    if hits and "relevant" not in hits[0]:  # recorded before shares were: headings decide
        focus = foci(question, passages)[0]
        hits = [{**h, "share": focus.share(f"{h.get('title')}\n{h.get('heading')}")} for h in hits]
        hits = [{**h, "relevant": h["share"] >= PASSAGE_SHARE} for h in hits]
    return sorted((h for h in hits if h.get("relevant")), key=lambda h: -float(h["share"]))


def main_document(question: str, passages: dict[str, Any]) -> str:
    """The document most relevant to the whole question: the one with the most passages
    holding its focus among those the question finds, then the largest share ("" when none
    holds it). A general index holds every term once; the page on the subject holds them in
    several passages."""
    held = _holding(question, passages)
    files = list(dict.fromkeys(str(h.get("file", "")) for h in held))
    count = {f: sum(1 for h in held if h.get("file") == f) for f in files}
    return max(files, key=lambda f: (count[f], -files.index(f)), default="")


def passage_parts(question: str, passages: dict[str, Any], taken: Sequence[str]) -> list[Part]:
    """Aspects of the question from the passages that hold its focus, the best holder first:
    one for the most relevant document (``main_document``) when no part finds it, and, while the
    tree is thin (fewer than ``THIN`` questions), one for each next passage on another subject.
    A passage counts when it holds the focus (``Focus.relevant``) and is a section of that
    document or has a heading that holds a share of the focus itself, and the question asked
    of it is about the user's question (``about_question``). A manual page's section label
    ("DESCRIPTION", "OPTIONS") names no aspect."""
    every = foci(question, passages)
    focus = every[0]
    main = main_document(question, passages)
    ranked = sorted(_holding(question, passages), key=lambda h: h.get("file") != main)
    if not ranked:
        return []
    covered = {h["file"] for found in passages.get("parts", []) for h in found}
    names = list(taken)
    out: list[Part] = []
    for rank, hit in enumerate(ranked):
        heading = str(hit.get("heading") or "").split(" > ")[-1]
        name = topic_name(heading) or topic_name(hit.get("title", ""))
        if _LABEL.fullmatch(name):
            continue
        if not name or is_variant(name, names) or overlaps(name, names):
            continue
        if hit.get("file") != main and focus.share(name) < PASSAGE_SHARE - 1e-9:
            continue  # another document's passage, whose heading is not about the question
        needed = rank == 0 and main not in covered
        if not needed and len(names) >= THIN:
            continue
        asked = _aspect_question(name, topic_name(hit.get("title", "")), focus)
        if asked and about_question(asked, every):
            out.append(Part(question=asked, category=name))
            names.append(name)
        if len(out) >= ASPECTS:
            break
    return out


def _aspect_question(name: str, title: str, focus: Focus) -> str:
    """A question about a section ("Kinds of interaction"), asked of its document's subject
    when the heading alone holds none of the question's focus ("What are kinds of interaction
    in human-in-the-loop design?"), so its own search finds that document."""
    asked = question_from_heading(name)
    if not asked or not title or focus.held(name) or name_terms(title) <= name_terms(name):
        return asked
    return f"{asked.rstrip('?')} in {plain_subject(title)}?"


async def check_category(
    ctx: RunContext,
    corpus: str | None,
    value: object,
    *,
    question: str,
    existing: Sequence[str],
    focus: Sequence[Focus] = (),
    questions: Sequence[str] = (),
    instructions: Sequence[str] = (),
    cited: set[str] | None = None,
) -> CategoryCheck:
    """Whether a proposed category may join the tree. ``focus`` is the focus of the question
    and of its parts: a name that, with the ``questions`` proposed under it, is not about
    them (``about_question``) is about something else.
    ``instructions`` are the prompts the model was given: a name they say and the question
    does not is an echo. ``cited`` (the chunk ids answers cite) is given once answers exist: a
    name whose passages are all cited adds nothing."""
    name = topic_name(value)
    if not name:
        return CategoryCheck(name="", accepted=False, reason="not a topic name")
    if focus and not about_question(" ".join([name, *questions]), focus):
        return CategoryCheck(name=name, accepted=False, reason="the question is not about it")
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

    chunks = list((await ctx.step(NAMES_EVENT, saying)).get("chunks", []))
    if not chunks and not in_question:
        return CategoryCheck(
            name=name, accepted=False, reason="neither the question nor the documents say it"
        )
    if cited is not None and chunks and set(chunks) <= cited:
        return CategoryCheck(name=name, accepted=False, reason="its passages are already cited")
    return CategoryCheck(name=name, accepted=True, reason="")
