"""Passages reranked by the unit that says it: a search's wider pool, ordered by how much of the
question's focus one sentence, list item or table row of each passage holds.

A chunk of a reference manual holds several entries (a page's OPTIONS section: ``-d, --delete:
Delete a branch.`` beside ten other options), and BM25 scores the chunk as a bag of words: for
"How do I delete a branch?" the NOTES section, which says "branch" a dozen times, outranks the
entry that says "Delete a branch". An answer is one of a passage's units, so the passage whose
best unit holds most of the question's focus (``kforge.rag.focus``: terms weighted by their idf in
the corpus) is the better one to read. A unit also counts its passage's title and heading terms
at ``CONTEXT_WEIGHT`` (``shutil.rmtree``'s entry says "Delete an entire directory tree" under a
heading that names the function), and the next sentence's terms at ``NEXT_WEIGHT``; the
search's own score, scaled to the best hit's, is added at ``SEARCH_WEIGHT`` so that of two
passages with equally good units the one the whole passage matches better comes first.

Where the corpus holds vectors (``kforge ingest --dense``), a passage's cosine similarity to
the question adds ``DENSE_WEIGHT`` times itself: the vectors see what a question means where its
words differ from the passage's ("why won't mypy let me assign a list of B to a variable
holding a list of A?" shares "variable", "holding" and "assign" with a page on literal types;
its vector is nearer the section on invariance, which words alone left out of the five read).
They rerank BM25's pool rather than add their own nearest passages to it: fusing the two
rankings (reciprocal rank) answered fewer questions than BM25 alone. When the passages they
put first do not hold the question's focus between them (the question would be answered "the
documents do not say"), the best passage of the ranking without vectors is read as well.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from kforge.rag.analyze import STOPWORDS, tokenize
from kforge.rag.defining import (
    after_maker,
    defined_subject,
    defines_subject,
    spelled_beside,
    subject_phrase,
)
from kforge.rag.focus import CorpusStatistics, Focus, FocusTerm, question_focus
from kforge.rag.idioms import plain_words
from kforge.rag.names import is_entry_of, kind_names
from kforge.rag.quantities import (
    NUMBER,
    asked_units,
    counted_noun,
    counts,
    gives_default,
    names_units,
    parameter_defaults,
    states_in_units,
)
from kforge.rag.question import (
    ENTRY,
    LOCATION,
    PROCEDURAL,
    Question,
    read_question,
    situation_terms,
    spells_question,
    term_of,
)
from kforge.rag.types import Chunk, SearchHit
from kforge.rag.unit_scores import names_subject, opens_with_identifier
from kforge.rag.units import Unit, field_name, passage_units, points_elsewhere

if TYPE_CHECKING:
    from kforge.rag.corpus import Corpus, SearchMode

__all__ = [
    "CONTEXT_WEIGHT",
    "DEFINES_WEIGHT",
    "HEADING_WEIGHT",
    "KIND_WEIGHT",
    "NEXT_WEIGHT",
    "POOL",
    "SEARCH_WEIGHT",
    "best_unit_share",
    "heading_fit",
    "rerank_hits",
    "search_units",
]

CONTEXT_WEIGHT = 0.5
"""What a focus term weighs in a unit when only its passage's title or heading holds it."""
SEARCH_WEIGHT = 0.6
"""What the search's own score (over the best hit's) adds to the best unit's share."""
DEFINES_WEIGHT = 0.5
"""What a unit defining the subject of a "what is X" question (or giving the default asked
about) adds."""
KIND_WEIGHT = 0.25
"""What a unit saying how to do something (code, a command) adds for a "how do I" question."""
DENSE_WEIGHT = 2.0
"""What a passage's cosine similarity to the question adds, where the corpus holds vectors."""
NEXT_WEIGHT = 0.25
"""What a focus term weighs in a sentence when only the next sentence of its passage holds it:
a value often stands a sentence after what it is the value of ("ttl_dns_cache: expire after
some seconds the DNS entries." then "By default 10 seconds.")."""
HEADING_WEIGHT = 0.3
"""What a passage whose own heading names exactly what is asked adds (``heading_fit``)."""
POOL = 40
"""Hits read before reranking: at least this many, or four times those asked for."""


def best_unit_share(focus: Focus, hit: SearchHit, question: Question | None = None) -> float:
    """The largest share of ``focus`` that one unit of ``hit``'s passage holds, its title and
    heading counted at ``CONTEXT_WEIGHT``. For a "what is X" ``question``, a unit that defines
    X ("X: A collection of ...", "An X is ...") adds ``DEFINES_WEIGHT``; for "what is the
    default X", so does an entry whose signature gives X's default (``lru_cache(maxsize=128)``)."""
    chunk = hit.chunk
    context = set(focus.held(f"{chunk.title}\n{chunk.heading}"))
    subject = defined_subject(question) if question is not None else frozenset()
    best = focus.weight_of(context) * CONTEXT_WEIGHT
    before: Unit | None = None
    units_asked = asked_units(question) if question is not None else frozenset()
    if question is not None and "default" in question.terms:
        # "the default maximum size": the entry's default, whatever unit another value is in
        units_asked = frozenset()
    noun = counted_noun(focus.question) if question is not None else ""
    units = passage_units(chunk.text)
    for n, unit in enumerate(units):
        if points_elsewhere(unit):
            continue  # an index's row names a section; the section says it
        held = set(focus.held(unit.text))
        after = units[n + 1] if n + 1 < len(units) else None
        if noun and counts(unit.text, noun, focus.question):
            held_bonus = DEFINES_WEIGHT  # "how many plugins": "over 800+ external plugins"
        elif units_asked and states_in_units(unit.text, units_asked):
            # "How big is the header?": "The first 100 bytes ... comprise the header"
            held_bonus = DEFINES_WEIGHT
        elif (
            question is not None
            and question.kind == "quantity"
            and gives_default(unit.text)
            and after is not None
        ):
            # a settings entry: its name, "Default: 180", then what it is ("The amount of
            # time (in secs) that the downloader will wait ..."), in the units asked or none
            held |= set(focus.held(after.text))
            held |= set(focus.held(before.text)) if before is not None else set()
            fits = not units_asked or names_units(after.text, units_asked)
            held_bonus = DEFINES_WEIGHT if fits else 0.0
        elif question is not None and question.kind == "quantity" and _gives_number(unit, before):
            # "Activate inspector on host:port. Default is 127.0.0.1:9229.": the value's
            # sentence leaves its subject to the one before
            held |= set(focus.held(before.text)) if before is not None else set()
            held_bonus = DEFINES_WEIGHT
        else:
            held_bonus = 0.0
        nearby = _next_sentence_terms(focus, unit, after)
        before = unit
        share = (
            focus.weight_of(held)
            + CONTEXT_WEIGHT * focus.weight_of(context - held)
            + NEXT_WEIGHT * focus.weight_of(nearby - held - context)
        )
        if subject:
            defines = defines_subject(unit.text, subject) or names_subject(unit.text, subject)
            share += DEFINES_WEIGHT * defines
        if question is not None and (
            parameter_defaults(unit.text, question)
            or _names_spelled(unit.text, question)
            or _entry_of_asked(unit.text, question)
        ):
            share += DEFINES_WEIGHT
        if question is not None and question.kind == "procedure" and _does(unit):
            share += KIND_WEIGHT
        elif question is not None and question.kind == "where" and LOCATION.search(unit.text):
            share += KIND_WEIGHT  # "Flask will look for templates in the templates folder."
        best = max(best, share + held_bonus)
    return best + HEADING_WEIGHT * heading_fit(focus, chunk)


def _names_spelled(text: str, question: Question) -> bool:
    """True for a parameter's or an entry's line whose name a quantity question spells out in
    words: "request_timeout (float) - Timeout for entire request in seconds, default 20 seconds" for
    "What is the default request timeout?"."""
    if question.kind != "quantity":
        return False  # "exit_code: The exit code as integer" is no place an error is handled
    entry = ENTRY.match(text)
    name = field_name(text) or (entry.group(1) if entry else None)
    if name is None or not spells_question(name, question.terms):
        return False
    # its words side by side in the question ("reuse" and "address" asked apart do not
    # spell ``reuse_address``)
    parts = [term_of(w) for w in name.lower().split("_")]
    terms = list(question.terms)
    return any(terms[n : n + len(parts)] == parts for n in range(len(terms)))


def _entry_of_asked(text: str, question: Question) -> bool:
    """True for the entry of a name "what does X do" asks about (``is_entry_of``; "the X
    builtin" names X too, ``kind_names``): a
    parameter's line ("pool_pre_ping - boolean, if True will enable the connection pool
    pre-ping feature ..."), an API entry or a "term: definition" entry, where every passage
    naming X holds as much of the question's focus."""
    if question.kind != "definition":
        return False
    # or a sentence opening with it: "The send() method writes a string to the child ..."
    names = [*question.identifiers, *kind_names(question.text)]
    return (bool(names) and is_entry_of(text, names)) or opens_with_identifier(text, question)


def _next_sentence_terms(focus: Focus, unit: Unit, after: Unit | None) -> set[FocusTerm]:
    """The focus terms of the sentence after ``unit``, when both are sentences (a list item,
    a table row or a code block stands alone)."""
    if after is None or unit.kind != "sentence" or after.kind != "sentence":
        return set()
    return set(focus.held(after.text))


def _gives_number(unit: Unit, before: Unit | None) -> bool:
    """True for a sentence giving a number (not a version or a section number), right after
    another sentence of its paragraph."""
    if unit.kind != "sentence" or before is None or before.kind != "sentence":
        return False
    return any(
        m.group(0)[0].isdigit() and not re.match(r"\.\d", unit.text[m.end() :])
        for m in NUMBER.finditer(unit.text)
    )


def _does(unit: Unit) -> bool:
    """A unit that says how to do something: code, a signature, or a procedural sentence."""
    return unit.kind in ("code", "signature") or bool(PROCEDURAL.search(unit.text))


def heading_fit(focus: Focus, chunk: Chunk) -> float:
    """How exactly the passage's own heading (its last part) names what is asked: the share of
    the focus it holds times the share of its words that are focus terms ("Installing MkDocs"
    fits "How do I install MkDocs?"; "Installing for Development" half as well)."""
    own = chunk.heading.split(">")[-1].strip() if chunk.heading else ""
    words = [w for w in tokenize(own) if w not in STOPWORDS]
    if not words:
        return 0.0
    held = focus.held(own)
    named = sum(1 for w in words if focus.held(w))
    return focus.weight_of(held) * named / len(words)


def rerank_hits(
    focus: Focus,
    hits: Sequence[SearchHit],
    k: int,
    similarity: Mapping[str, float] | None = None,
) -> list[SearchHit]:
    """The ``k`` best of ``hits`` by their best unit (see the module docstring), ranks renumbered
    from 1; ties keep the search's order. Without focus terms, the search's first ``k``. With
    ``similarity`` (a passage's cosine similarity to the question, by chunk id), that adds
    ``DENSE_WEIGHT`` times itself."""
    if not focus.terms or not hits:
        return list(hits[:k])
    top = max(h.score for h in hits) or 1.0
    question = read_question(focus.question)
    situation = situation_terms(question)
    if situation:  # what the user's situation alone names weighs less (``situation_terms``)
        terms = [replace(t, weight=t.weight * situation.get(t.match, 1.0)) for t in focus.terms]
        focus = replace(focus, terms=tuple(terms))
    near = similarity or {}
    scored = [
        (
            best_unit_share(focus, hit, question)
            + SEARCH_WEIGHT * hit.score / top
            + DENSE_WEIGHT * near.get(hit.chunk.id, 0.0),
            -n,
            hit,
        )
        for n, hit in enumerate(hits)
    ]
    scored.sort(key=lambda item: (item[0], item[1]), reverse=True)
    return [replace(hit, rank=n) for n, (_, _, hit) in enumerate(scored[:k], 1)]


def search_units(
    corpus: Corpus, query: str, k: int, *, mode: SearchMode = "auto"
) -> list[SearchHit]:
    """``corpus.search`` over a wider pool, reranked by the unit that best holds ``query``'s
    focus (its terms weighted by this corpus's statistics). For "what is X", the page titled
    X joins the pool at the best hit's score: where every page names X ("spider" across
    Scrapy's manual), its own page need not rank among the words' best matches; so do the
    pages titled by the items a comparison names."""
    statistics = CorpusStatistics.of(corpus)
    asking = query
    query = _without_own_release(plain_words(query), statistics)
    # with vectors, "auto" keeps BM25's pool and lets the vectors rerank it (module docstring)
    pool = corpus.search(query, max(POOL, 4 * k), mode="lexical" if mode == "auto" else mode)
    asked = read_question(query)
    names = [subject_phrase(asked)] if subject_phrase(asked) else []
    if asked.kind == "comparison":
        names += asked.options  # "git fetch and git pull": the pages git-fetch and git-pull
    titled: dict[str, Chunk] = {}
    if names:
        top = max((hit.score for hit in pool), default=1.0)
        forms = [form for name in names for form in _number_forms(name)]
        titled = {c.id: c for c in corpus.titled_chunks(forms, limit=len(names) + 1)}
        pool = [SearchHit(c, top, 0) for c in titled.values()] + [
            hit for hit in pool if hit.chunk.id not in titled
        ]
    if names and asked.kind == "definition":
        pool = _defining_first(corpus, asked, pool)
    focus = question_focus(query, statistics)
    similarity = corpus.similarities(asking, [hit.chunk.id for hit in pool])
    ranked = rerank_hits(focus, pool, k, similarity)
    if similarity and not focus.holds_any([hit.chunk for hit in ranked]):
        # the vectors reorder what the words found; they never make a question the words
        # answer one the documents "do not say": the words' best passage is read too
        words = {hit.chunk.id for hit in ranked}
        lexical = next(
            (hit for hit in rerank_hits(focus, pool, k) if hit.chunk.id not in words), None
        )
        if lexical is not None:
            ranked = [replace(hit, rank=n) for n, hit in enumerate([*ranked, lexical], 1)]
    # a page titled by what is asked stays among those read, in place of the last ones
    kept = {hit.chunk.id for hit in ranked}
    missing = [hit for hit in pool if hit.chunk.id in titled and hit.chunk.id not in kept]
    if missing and k > len(missing):
        ranked = ranked[: k - len(missing)] + missing
        ranked = [replace(hit, rank=n) for n, hit in enumerate(ranked, 1)]
    return ranked


DEFINING_POOL = 200
"""How deep the search for what a "what is X" question names is read for passages that open
by saying what X is."""
_DEFINING_KEPT = 3


def _defining_first(corpus: Corpus, asked: Question, pool: list[SearchHit]) -> list[SearchHit]:
    """``pool`` with, at its best hit's score, the first passages of a search for X alone that
    open by defining X ("Scrapy is an application framework for crawling web sites"), and the
    opening of the page titled X and a tagline ("Kitchen, everything but the sink"): where
    every page names X (the product the documents are about), the question's own words rank
    any of them first, and the page introducing X need not be among the pool's 40. So do those
    writing an acronym X beside the words it stands for, wherever the pool ranks them."""
    phrase = subject_phrase(asked)
    if not phrase or not pool:
        return pool
    says_what = re.compile(
        rf"^(?:the )?{re.escape(phrase)}(?: \([^()]*\))? (?:is|are) (?:an?|the|one)\b",
        re.I,
    )
    held = {hit.chunk.id for hit in pool}
    wider = corpus.search(phrase, DEFINING_POOL, mode="lexical")
    subject = defined_subject(asked)
    # an acronym spelled out beside it, wherever in the passage ("the CLDR (Common Locale Data
    # Repository)"): where the documents say what it stands for, raised though in the pool
    spelled = {hit.chunk.id for hit in wider if spelled_beside(hit.chunk.text, subject)}
    # the opening of the page titled X and what it is ("Kitchen, everything but the sink"),
    # or "X Documentation": the documents' front page, which says what X is for
    tagline = re.compile(
        rf"^{re.escape(phrase)}(?:\s*(?:[,:|\u2013\u2014]|-\s)\s*\S|\s+(?:documentation|manual)$)",
        re.I,
    )
    defining = [
        hit.chunk
        for hit in wider
        if hit.chunk.id in spelled
        or (hit.chunk.index == 0 and tagline.match(hit.chunk.title))
        or (
            hit.chunk.id not in held
            and any(
                unit.kind == "sentence"
                and any(says_what.match(t) for t in (unit.text, *after_maker(unit.text)))
                for unit in passage_units(hit.chunk.text)[:_DEFINING_UNITS]
            )
        )
    ]
    top = max(hit.score for hit in pool)
    raised = {c.id for c in defining[:_DEFINING_KEPT]}
    return [SearchHit(c, top, 0) for c in defining[:_DEFINING_KEPT]] + [
        hit for hit in pool if hit.chunk.id not in raised
    ]


_DEFINING_UNITS = 3
"""The units a passage opens with that are read for a definition of X."""

_RELEASE = re.compile(r"\b([A-Za-z][\w-]*)\s+v?\d+(?:\.\d+)+\b")


def _without_own_release(query: str, statistics: CorpusStatistics) -> str:
    """``query`` without the release number the user gives of what the documents are about
    ("for Scrapy 2.8" over Scrapy's manual): it says which release they run, and would find
    the release notes that name it rather than what is asked. Another product's release
    ("Python 3.12") stays."""
    if not statistics.passages:
        return query

    def strip(match: re.Match[str]) -> str:
        own = statistics.names_the_corpus(match.group(1))
        return match.group(1) if own else match.group(0)

    return _RELEASE.sub(strip, query)


def _number_forms(phrase: str) -> list[str]:
    """``phrase`` with its last word singular and plural ("spider", "spiders")."""
    bare = phrase.removesuffix("es") if phrase.endswith(("ses", "xes", "ches", "shes")) else phrase
    bare = bare.removesuffix("s") if bare == phrase and not phrase.endswith("ss") else bare
    return list(dict.fromkeys([phrase, bare, bare + "s", bare + "es"]))
