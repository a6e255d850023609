"""Extractive answers: the sentences of the passages that best answer a question, each cited.

No model writes anything, so nothing can loop, echo or be invented: every sentence of the answer
is a sentence of the passage it cites. Sentences are ranked against the question's key terms
(idf-weighted over the candidate sentences), with a lead for better-ranked passages and for
sections whose heading matches. Each passage's best sentence comes first; a further sentence
must answer part of the question that its passage's chosen sentences leave open (near-duplicates
are skipped), and a lead sentence that only introduces its passage comes last, room permitting.
Multi-hop questions are followed by mention: a passage whose title the leading passage (or the
question) names is brought forward, since it describes something the answer refers to; of
several, the one holding most of the question's terms that the leading passage lacks, and
named beside the question's words ("... and Tyler in The Visit" for a question about Tyler).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from kforge.rag.analyze import analyze, tokenize
from kforge.rag.textcheck import key_terms, split_sentences
from kforge.rag.types import Chunk

__all__ = ["Segment", "candidate_sentences", "compose_extractive", "mentions_title"]

_MIN_WORDS = 5
_MAX_WORDS = 60
_REDUNDANT = 0.5
"""Skip a sentence sharing more than this share of its terms with one already chosen."""
_LEAD_SHARE = 0.6
"""The best-ranked passage leads the answer when its best sentence scores this share of the
best sentence overall: the retriever judged the whole passage, a sentence score sees words."""
_COPY = 0.8
"""A sentence of another passage is redundant only when it shares this share of its terms."""
_KEEP_RATIO = 0.4
"""Stop adding sentences scoring under this share of the best sentence's score."""
_BESIDE = 0.5
"""Weight of the question's words beside a mention, against those the named passage holds."""
_CLAUSE_MARKS = ",;."


@dataclass(frozen=True, slots=True)
class Segment:
    """One sentence of an answer and the passage it comes from."""

    text: str
    source: int
    """Index of the passage in the list the answer was composed from."""


@dataclass(slots=True)
class _Candidate:
    text: str
    source: int
    position: int
    """Sentence number within its passage (0 = lead sentence)."""
    terms: frozenset[str]


def _prose_lines(text: str) -> list[str]:
    """The passage's lines that are prose: no headings, code blocks or table rows."""
    lines, fenced = [], False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```") or stripped.startswith("~~~"):
            fenced = not fenced
            continue
        if (
            fenced
            or stripped.startswith(("#", "|", "<!--"))
            or re.fullmatch(r"[-=*_ ]{3,}", stripped)
        ):
            lines.append("")
            continue
        lines.append(line)
    return lines


def _tidy(sentence: str) -> str:
    sentence = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", sentence)
    sentence = sentence.replace("**", "").replace("__", "")
    sentence = re.sub(r"\s*\[\d+(?:\s*,\s*\d+)*\]", "", sentence)  # the source's own markers
    sentence = " ".join(sentence.split()).strip()
    if sentence and sentence[-1] not in ".!?:":
        sentence += "."
    return sentence


def candidate_sentences(chunk: Chunk) -> list[str]:
    """The sentences of ``chunk`` that could stand in an answer, tidied, in order."""
    out = []
    for raw in split_sentences("\n".join(_prose_lines(chunk.text))):
        sentence = _tidy(raw)
        words = len(sentence.split())
        if _MIN_WORDS <= words <= _MAX_WORDS and not sentence.endswith(":"):
            out.append(sentence)
    return out


def _core_title(title: str) -> str:
    """``title`` without a trailing disambiguation such as "(1945 film)"."""
    return " ".join(re.sub(r"\s*\([^)]*\)\s*$", "", title).split())


def _title_spans(text: str, title: str) -> list[tuple[int, int]]:
    title = _core_title(title)
    if len(title) < 3:
        return []
    pattern = rf"(?<!\w){re.escape(title)}(?!\w)"
    return [m.span() for m in re.finditer(pattern, text, re.IGNORECASE)]


def mentions_title(text: str, title: str) -> bool:
    """True when ``text`` names the document titled ``title`` (without a trailing
    disambiguation such as "(1945 film)")."""
    return bool(_title_spans(text, title))


def _named(text: str, passages: Sequence[Chunk]) -> list[int]:
    """The passages whose title ``text`` names, other than as part of a longer title it names
    ("Cold Comfort" inside "Operation Cold Comfort" names only the operation)."""
    spans = {i: _title_spans(text, p.title) for i, p in enumerate(passages)}
    longer = [span for found in spans.values() for span in found]
    return [
        i
        for i, found in spans.items()
        if any(
            not any(a <= start and end <= b and (a, b) != (start, end) for a, b in longer)
            for start, end in found
        )
    ]


def compose_extractive(
    question: str,
    passages: Sequence[Chunk],
    *,
    max_sentences: int = 4,
    exclude: Collection[str] = (),
) -> list[Segment]:
    """Up to ``max_sentences`` sentences of ``passages`` that answer ``question``.

    ``passages`` are in relevance order (best first). The answer draws on at most two
    passages: the one holding the best sentence, and a second one that the question or the
    first passage names (a multi-hop bridge: of several, the one that holds most of the
    question's terms the first lacks) or, failing that, the one holding the next best
    sentence. It takes each passage's best sentence first, then further sentences that score
    close to the best and hold a question term their passage's chosen sentences do not, and,
    while there is room, the lead sentence (which says what the passage is about) of a
    passage whose best sentence opens by referring back ("He designed ...") or that the answer
    hops to. Sentences in ``exclude`` (already said elsewhere, e.g. earlier in a report) are
    not used. Returns no segment only when no passage
    has a usable sentence.
    """
    said = {" ".join(s.split()) for s in exclude}
    candidates = [
        _Candidate(sentence, index, position, frozenset(analyze(sentence)))
        for index, chunk in enumerate(passages)
        for position, sentence in enumerate(candidate_sentences(chunk))
        if sentence not in said
    ]
    if not candidates:
        return []
    query = key_terms(question) or list(dict.fromkeys(analyze(question)))
    df: dict[str, int] = {}
    for c in candidates:
        for term in c.terms:
            df[term] = df.get(term, 0) + 1
    total = len(candidates)

    def idf(term: str) -> float:
        return math.log(1 + total / (1 + df.get(term, 0)))

    query_weight = sum(idf(t) for t in query) or 1.0
    heading_match = [
        len(set(analyze(f"{p.title} {p.heading}")) & set(query)) / max(1, len(query))
        for p in passages
    ]
    named = _named(question, passages)

    def score(c: _Candidate) -> float:
        coverage = sum(idf(t) for t in query if t in c.terms) / query_weight
        value = coverage / (1 + 0.15 * c.source) + 0.3 * heading_match[c.source]
        if c.source in named:
            value += 0.25
        if len(tokenize(c.text)) < 8:
            value *= 0.8
        return value

    scores = {id(c): score(c) for c in candidates}
    ranked = sorted(candidates, key=lambda c: (-scores[id(c)], c.source, c.position))
    top = ranked[0]
    first = next((c for c in ranked if c.source == 0), None)
    if first is not None and scores[id(first)] >= _LEAD_SHARE * scores[id(top)]:
        top = first  # the retriever's best passage leads when it answers nearly as well
    sources = [top.source]
    # the second hop: what the leading passage names, else what the question names; a
    # namesake of the leading passage ("Revenge (album)" beside "Revenge (song)") is no hop
    own_name = _core_title(passages[top.source].title).lower()
    linked = [
        i
        for i in _named(passages[top.source].text, passages) + named
        if i != top.source and _core_title(passages[i].title).lower() != own_name
    ]
    if linked:
        anchor = passages[top.source]
        lacking = set(query) - _passage_terms(anchor)

        def hop_value(i: int) -> float:
            """What the question asks that the leading passage lacks and passage ``i`` holds
            (the actress the question describes, not her film), and the question's words
            beside the leading passage's mention of it."""
            held = sum(idf(t) for t in lacking & _passage_terms(passages[i]))
            mentions = _beside(anchor.text, passages[i].title, query)
            return held + _BESIDE * max((sum(map(idf, m)) for m in mentions), default=0.0)

        sources.append(max(dict.fromkeys(linked), key=hop_value))
    else:
        runner_up = next((c for c in ranked if c.source != top.source), None)
        if runner_up is not None and scores[id(runner_up)] >= _KEEP_RATIO * scores[id(top)]:
            sources.append(runner_up.source)
    best_score = scores[id(top)]
    chosen: list[_Candidate] = []

    def take(c: _Candidate) -> None:
        # another passage may restate a fact to name its subject: only a near copy is redundant
        if c not in chosen and not any(
            _overlap(c.terms, o.terms) > (_REDUNDANT if o.source == c.source else _COPY)
            for o in chosen
        ):
            chosen.append(c)

    owns = {source: [c for c in ranked if c.source == source] for source in sources}
    for source in sources:  # each source's best sentence
        take(owns[source][0])
    for c in ranked:  # then whatever else scores close to the best
        if len(chosen) >= max_sentences:
            break
        if c.source in sources and scores[id(c)] >= _KEEP_RATIO * best_score > 0:
            # a further sentence must answer part of the question its passage has not yet
            said_here = set().union(*(o.terms for o in chosen if o.source == c.source))
            if any(t in c.terms and t not in said_here for t in query):
                take(c)
    for source in sources:  # and, room permitting, what makes a sentence understood
        own = owns[source]
        lead = next((c for c in own if c.position == 0), None)
        needed = _refers_back(own[0].text) or (source != top.source and source in linked)
        if len(chosen) < max_sentences and lead is not None and own[0] is not lead and needed:
            take(lead)
    chosen = chosen[:max_sentences]
    chosen.sort(key=lambda c: (sources.index(c.source), c.position))
    return [Segment(c.text, c.source) for c in chosen]


_ANAPHOR = re.compile(
    r"^(?:he|she|it|they|his|her|its|their|this|these|those|such|the latter|the former)\b",
    re.IGNORECASE,
)


def _refers_back(sentence: str) -> bool:
    """True when ``sentence`` opens with a word pointing to an earlier one ("It was ...")."""
    return _ANAPHOR.match(sentence) is not None


def _beside(text: str, title: str, query: Collection[str]) -> list[set[str]]:
    """For each mention of ``title`` in ``text``, the ``query`` terms in its clause (other than
    the title's own words): in "Dylan in Paper Planes, and Tyler in The Visit", only "Tyler"
    stands beside "The Visit"."""
    own = set(analyze(title))
    found = []
    for start, end in _title_spans(text, title):
        left = max(text.rfind(mark, 0, start) for mark in _CLAUSE_MARKS) + 1
        ends = [i for i in (text.find(mark, end) for mark in _CLAUSE_MARKS) if i >= 0]
        clause = text[left : min(ends, default=len(text))]
        found.append((set(analyze(clause)) - own) & set(query))
    return found


def _passage_terms(chunk: Chunk) -> set[str]:
    return set(analyze(f"{chunk.title} {chunk.text}"))


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))
