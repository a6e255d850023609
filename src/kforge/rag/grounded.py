"""Grounded answers on any model: extractive first, generated text only when it passes the checks.

``write_answer`` is the one way an agent turns relevant passages into the text a user reads:

- **extractive** (the default for small models): a short answer line drawn by rule from the
  supporting sentences (``kforge.rag.short_answer``), then those sentences of the passages,
  each cited and quoted exactly;
- **generative**: the model writes with ``[n]`` markers; the text is cut where it starts to
  loop, refused when it repeats its instructions, and every sentence is checked against the
  passages it cites (re-cited to the passage that does support it, or dropped). A reply that
  fails is retried once with settings that discourage repetition, then replaced by the
  extractive answer.

Either way the text opens with the short answer line and its ``[n]`` marker, then a blank line,
then the supporting sentences; the markers are the numbers of the answer's own citation list,
in order of first use, and the list holds only what the text cites.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from kforge.errors import ModelError, ScriptedModelError
from kforge.llm.types import Message, ModelResponse, ModelSettings
from kforge.prompts import prompt_text
from kforge.rag.compose import Segment, compose_extractive
from kforge.rag.short_answer import ShortAnswer, short_answer
from kforge.rag.textcheck import (
    SUPPORT_THRESHOLD,
    cut_loop,
    echoed_phrase,
    split_sentences,
    support,
)
from kforge.rag.types import Chunk, Citation

__all__ = [
    "ANSWER_SENTENCES",
    "ANSWER_STYLES",
    "GENERATE_SYSTEM",
    "AnswerStyle",
    "GroundedAnswer",
    "WriteFn",
    "check_generated",
    "first_passing_reply",
    "number_segments",
    "write_answer",
]

AnswerStyle = Literal["extractive", "generative"]
ANSWER_STYLES: tuple[str, ...] = ("extractive", "generative")

WriteFn = Callable[[list[Message], ModelSettings], Awaitable[ModelResponse]]
"""Calls the model once for the answer (the agent decides on journaling and streaming)."""

GENERATE_SYSTEM = prompt_text("GROUNDED_GENERATE")

ANSWER_SENTENCES = 5
"""Units an extractive answer quotes at most (a comparison one more): with three, an answer
stated the key fact less often on documentation nobody here had read (99 of 200 questions
against 103 with four), the fourth being a further unit of a passage already quoted; with five,
111 → 113 of 200 held out and 269 → 272 of 354 designed on (six: 114 and 273, the median
answer growing from 451 to 490 and 511 characters). A unit past the first joins only when it
scores close to the best and adds a question term, so the room is not filled for its own sake."""

_PASSAGE_CHARS = 900
_FIRST = ModelSettings(temperature=0.2, max_tokens=300)
_RETRY = ModelSettings(temperature=0.5, max_tokens=300, repetition_penalty=1.3)
_MARKERS = re.compile(r"\s*\[(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\]")
_MIN_KEPT_SHARE = 0.5
"""A generated answer loses its claim to be the answer when more than half its sentences fail."""


@dataclass(frozen=True, slots=True)
class GroundedAnswer:
    text: str
    """The answer; each ``[n]`` names ``citations[n-1]``."""
    citations: tuple[Citation, ...]
    path: str
    """``extractive``, ``generative``, ``generative_retry`` or ``extractive_fallback``."""
    reason: str
    """Why this path produced the answer (which check failed, when one did)."""
    dropped: tuple[str, ...] = ()
    """Generated sentences removed because their passages do not say them."""
    sources: tuple[int, ...] = field(default=())
    """For each citation, the index of its passage in the list the answer was written from."""
    segments: tuple[Segment, ...] = field(default=())
    """The answer's sentences, each with the index of the passage it rests on."""
    short_answer: str = ""
    """The direct answer the text opens with (a quote of a supporting sentence, or ``Yes.`` /
    ``No.``); empty when there is no answer."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "short_answer": self.short_answer,
            "citations": [c.to_dict() for c in self.citations],
            "path": self.path,
            "reason": self.reason,
            "dropped": list(self.dropped),
            "sources": list(self.sources),
            "segments": [{"text": g.text, "source": g.source} for g in self.segments],
        }


def number_segments(
    segments: Sequence[Segment],
    passages: Sequence[Chunk],
    *,
    short: ShortAnswer | None = None,
) -> tuple[str, list[Citation], list[int]]:
    """The answer text with one marker per sentence, numbered by first use; the citations of
    exactly the passages cited; and each citation's passage index. With ``short``, the text
    opens with its line and marker, then a blank line, then the sentences (a lone sentence that
    is the whole short answer is written once). A sentence keeps its
    closing punctuation after the marker (``... saturates [1].``); a code block stands on its
    own lines with the marker under it."""
    order: list[int] = []

    def marker(source: int) -> str:
        if source not in order:
            order.append(source)
        return f"[{order.index(source) + 1}]"

    whole = len(segments) == 1 and short is not None
    if whole and short is not None and short.line == segments[0].text.strip().rstrip(".!?"):
        short = None  # one sentence that is all of its short answer: said once
    head = f"{short.line} {marker(short.source)}" if short is not None else ""
    body = ""
    listing = -1  # the source whose sentence ending in a colon introduced the items that follow
    for segment in segments:
        sentence = segment.text.rstrip()
        if "\n" in sentence or segment.code:  # code: never joined into a line
            body = f"{body.rstrip()}\n\n{sentence}\n{marker(segment.source)}\n\n"
            listing = -1
            continue
        # the marker goes before the closing punctuation, so that taking it out gives the
        # sentence back exactly ("... 0 ." keeps its space: the marker goes after it)
        part = _marked(sentence, marker(segment.source))
        if segment.source == listing:  # "... as a result of either:" then its items, a list
            body = f"{body.rstrip()}\n- {part}\n"
            continue
        if listing >= 0:
            body += "\n"  # the list ends before the next paragraph
        listing = segment.source if sentence.endswith(":") else -1
        body = f"{body} {part}" if body and not body.endswith("\n") else body + part
    body = body.lstrip("\n").rstrip()  # a code block keeps its first line's indentation
    text = f"{head}\n\n{body}" if head and body else head or body
    citations = [Citation.from_chunk(n, passages[i]) for n, i in enumerate(order, 1)]
    return text, citations, order


def _marked(text: str, mark: str) -> str:
    """``text`` with ``mark`` at the end of each of its sentences, before the closing
    punctuation ("A [1]. B [1]."), so that every sentence of a unit of two cites its passage.
    A sentence that ends inside quotes or markup ("testing.** Choose") shares the next one's
    mark, and a unit the splitter does not give back whole keeps one mark at its end."""
    parts = split_sentences(text)
    ends: list[int] = []
    at = 0
    for part in parts:
        found = text.find(part, at)
        if found < 0:
            ends = []
            break
        at = found + len(part)
        ends.append(at)
    if not ends or ends[-1] != len(text):
        ends = [len(text)]
    out, start = [], 0
    for end in ends:
        piece = text[start:end]
        closing = piece[-1] if piece[-1:] in (".", "!", "?") and piece[-2:-1].strip() else ""
        if end < len(text) and (not closing or not text[end : end + 1].isspace()):
            continue  # no plain sentence end here: the mark goes with the next sentence's
        out.append(f"{piece[: len(piece) - len(closing)]} {mark}{closing}")
        start = end
    return "".join(out)


def _numbered(passages: Sequence[Chunk]) -> str:
    blocks = []
    for number, chunk in enumerate(passages, 1):
        text = " ".join(chunk.text.split())
        if len(text) > _PASSAGE_CHARS:
            text = text[: _PASSAGE_CHARS - 1] + "…"
        blocks.append(f"[{number}] ({chunk.title or chunk.file})\n{text}")
    return "\n\n".join(blocks)


def answer_prompt(
    question: str,
    passages: Sequence[Chunk],
    *,
    history: str = "",
    instructions: str = "",
    system: str = GENERATE_SYSTEM,
) -> list[Message]:
    system = system + (f"\n{instructions}" if instructions else "")
    parts = [history] if history else []
    parts.append("Passages:\n" + _numbered(passages))
    parts.append(f"Question: {question}")
    return [Message.system(system), Message.user("\n\n".join(parts))]


@dataclass(frozen=True, slots=True)
class _Check:
    segments: tuple[Segment, ...]
    dropped: tuple[str, ...]
    problem: str
    """Why the reply cannot be the answer; empty when it can."""
    short: ShortAnswer | None = None
    """The reply's own short answer line, when it wrote one that a passage supports."""


def check_generated(text: str, passages: Sequence[Chunk], *, instructions: Sequence[str]) -> _Check:
    """Cut a loop, refuse echo, and keep each sentence only where a passage supports it."""
    text, looped = cut_loop(text)
    echo = echoed_phrase(text, instructions)
    if echo:
        return _Check((), (), f"the reply repeats its instructions ('{echo}')")
    segments: list[Segment] = []
    dropped: list[str] = []
    short = _short_line(text, passages)
    if short is not None:
        text = text.split("\n\n", 1)[1] if "\n\n" in text.strip() else ""
    sentences = split_sentences(text)
    for sentence in sentences:
        cited = [
            int(n) - 1
            for group in _MARKERS.findall(sentence)
            for n in re.split(r"\s*[,;]\s*", group)
            if 1 <= int(n) <= len(passages)
        ]
        plain = " ".join(_MARKERS.sub("", sentence).split())
        if len(plain.split()) < 3:
            continue
        source = _supporting(plain, cited, passages)
        if source is None:
            dropped.append(plain)
            continue
        segments.append(Segment(plain, source))
    if looped:
        return _Check(tuple(segments), tuple(dropped), "the reply started to loop")
    if not segments:
        return _Check((), tuple(dropped), "no sentence of the reply is supported by the passages")
    if len(segments) < _MIN_KEPT_SHARE * (len(segments) + len(dropped)):
        return _Check(
            tuple(segments),
            tuple(dropped),
            f"{len(dropped)} of {len(segments) + len(dropped)} sentences are not supported "
            "by the passages they cite",
        )
    return _Check(tuple(segments), tuple(dropped), "", short)


_YES_NO = re.compile(r"^(yes|no)\b[.,:;!]?\s*", re.IGNORECASE)


def _short_line(text: str, passages: Sequence[Chunk]) -> ShortAnswer | None:
    """The reply's opening line when it is a short answer (a line of at most twelve words
    before a blank line) that a passage supports, its words or the words after "Yes"/"No"."""
    first, _, rest = text.strip().partition("\n\n")
    if not rest.strip() or "\n" in first:
        return None
    cited = [
        int(n) - 1 for group in _MARKERS.findall(first) for n in re.split(r"\s*[,;]\s*", group)
    ]
    plain = " ".join(_MARKERS.sub("", first).split()).rstrip(".")
    if not plain or len(plain.split()) > 12:
        return None
    verdict = _YES_NO.match(plain)
    claim = plain[verdict.end() :] if verdict else plain
    answer = f"{verdict.group(1).capitalize()}." if verdict else claim
    if not claim:
        source = next((i for i in cited if 0 <= i < len(passages)), None)
        return ShortAnswer(answer, "", source) if source is not None else None
    source = _supporting(claim, [i for i in cited if 0 <= i < len(passages)], passages)
    return ShortAnswer(answer, claim, source) if source is not None else None


def _supporting(sentence: str, cited: Sequence[int], passages: Sequence[Chunk]) -> int | None:
    """The passage that supports ``sentence``: a cited one when it does, else the best other."""
    for index in cited:
        if support(sentence, [passages[index].text]).supported:
            return index
    best, best_share = None, SUPPORT_THRESHOLD
    for index, chunk in enumerate(passages):
        share = support(sentence, [chunk.text]).share
        if share >= best_share and (best is None or share > best_share):
            best, best_share = index, share
    return best


Checked = TypeVar("Checked")


async def first_passing_reply(
    write: WriteFn,
    prompt: list[Message],
    check: Callable[[str], tuple[Checked, str]],
    *,
    paths: tuple[str, str],
    settings: tuple[ModelSettings, ModelSettings] = (_FIRST, _RETRY),
) -> tuple[str, Checked | None, list[str]]:
    """Ask the model; when ``check`` names a problem with the reply, ask once more with
    settings that discourage repetition. Returns the path of the reply that passed (with what
    ``check`` made of it) or ("", None), and the problems met on the way."""
    problems: list[str] = []
    for path, attempt in zip(paths, settings, strict=True):
        try:
            response = await write(prompt, attempt)
        except ScriptedModelError:
            raise
        except ModelError as exc:
            problems.append(f"the model failed ({exc})")
            break
        value, problem = check(response.text)
        if not problem:
            return path, value, problems
        problems.append(problem)
    return "", None, problems


async def write_answer(
    question: str,
    passages: Sequence[Chunk],
    write: WriteFn | None,
    *,
    style: AnswerStyle = "extractive",
    history: str = "",
    instructions: str = "",
    system: str = GENERATE_SYSTEM,
    max_sentences: int = ANSWER_SENTENCES,
    exclude: Collection[str] = (),
) -> GroundedAnswer:
    """The answer to ``question`` from ``passages`` (relevance order), cited; see the module doc.

    ``write`` calls the model (needed for the generative style only); ``system`` replaces the
    default instructions of the generative prompt; an extractive answer leaves out the
    sentences in ``exclude``. With no passages the
    answer is empty: the caller decides what to say when the documents have nothing.
    """
    if not passages:
        return GroundedAnswer("", (), "none", "no relevant passages")
    reason = "extractive answers for this model"
    if style == "generative" and write is not None:
        prompt = answer_prompt(
            question, passages, history=history, instructions=instructions, system=system
        )
        fixed = [prompt[0].content, "Passages:", "Question:"]

        def checked(text: str) -> tuple[_Check, str]:
            check = check_generated(text, passages, instructions=fixed)
            return check, check.problem

        path, check, problems = await first_passing_reply(
            write, prompt, checked, paths=("generative", "generative_retry")
        )
        if check is not None:
            short = check.short or short_answer(question, check.segments, passages)
            text, citations, order = number_segments(check.segments, passages, short=short)
            why = "the reply passed the checks" + (f" after: {problems[0]}" if problems else "")
            return GroundedAnswer(
                text,
                tuple(citations),
                path,
                why,
                check.dropped,
                tuple(order),
                check.segments,
                short.answer if short else "",
            )
        reason = "the generated reply failed the checks: " + "; then ".join(problems)
    segments = compose_extractive(question, passages, max_sentences=max_sentences, exclude=exclude)
    short = short_answer(question, segments, passages)
    text, citations, order = number_segments(segments, passages, short=short)
    path = "extractive" if style == "extractive" or write is None else "extractive_fallback"
    return GroundedAnswer(
        text,
        tuple(citations),
        path,
        reason,
        (),
        tuple(order),
        tuple(segments),
        short.answer if short else "",
    )
