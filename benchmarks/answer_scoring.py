"""Scoring rules of ``answer_quality.py``, written independently of kforge's own answer checks so
that the benchmark can disagree with the product.

Rules (also written into the JSON under ``rules``):

- Words are lowercase runs of letters, digits and apostrophes; ``[n]`` markers are removed first.
- **Degenerate**: an answer of at least 8 words whose distinct word 4-grams are fewer than 60 %
  of its 4-grams.
- **Prompt echo**: the answer contains a typical instruction phrase (``ECHO_PHRASES``) that the
  chunks it cites do not themselves contain, a prompt
  label (``Question:`` or ``Passages:`` opening a line), a passage header as prompts write them
  (``(guide.md, § Setup, chars 120-480)``), or a run of at least 8 consecutive words that
  appears in the prompt text (kforge's prompt templates and module-level prompt strings) but in
  neither the question nor the text of the chunks it cites.
- **Expected document cited**: a citation's file is one the question expects; reported for all
  listed citations and for those a marker in the text names.
- **Sentences**: the answer is split at line breaks and after ``.``, ``!`` or ``?``; markers
  written just after a sentence's closing punctuation belong to that sentence. A sentence's
  markers are the ones inside it. A sentence without content words is not counted; a short
  refusal or disclaimer line (``REFUSAL``, at most 40 words) is exempt; any other sentence
  without a marker is unsupported.
- **Supported**: at least 70 % of the sentence's content words (stop words removed, light
  suffix stripping) occur in the text of the chunks its markers name.
- **Supporting facts** (HotpotQA): each marked answer sentence maps to the context sentence of a
  cited paragraph with the highest overlap, the share of the answer sentence's content words
  found in it (ties: the larger share of the context sentence covered, then the earlier
  sentence); below 0.5 it maps to nothing. Precision, recall and F1 are HotpotQA's, per question.
- **Key fact** (questions that carry one): a question's ``key_fact`` names required terms
  (``all``: each term; ``any``: a list of groups, one alternative of each group) and, for a
  quantity, a number with its unit (``number``: alternatives ``{"value", "units"}``). The answer
  text is read with its ``[n]`` markers and Markdown backticks removed, Markdown link markup
  (``[text][ref]``, ``[text](url)``) read as its text, and whitespace collapsed.
  A term matches where it stands as a whole (no letter, digit or ``_`` touching it, nor a hyphen
  joined to one: ``--check`` is not in ``--check-format``); a term made of plain words (letters,
  digits, spaces, hyphens, apostrophes; a capital only as a word's first letter) matches in any
  case, any other term (an identifier: ``fs.link``, ``LANGUAGE``, ``\\r\\n``, ``macOS``) only
  in its own case. A number matches as a whole number (``16,384`` is ``16384``) followed within
  three words by one of its units (any case); with no units the number alone suffices. An
  answer **states the key fact** when it is not a refusal and every part matches.
- **Refusal**: the result says ``refused`` (or ``out_of_scope``: the guardrail declined), or
  its text starts with ``The documents do not say`` (after markers and whitespace); a refusal
  states no fact.
- **Short answer**: the result's ``short_answer`` when it has one, else the answer's first
  paragraph (the text before its first blank line), markers removed.
- **Quoted**: the answer is cut after each run of ``[n]`` markers; each piece (leading
  punctuation and list bullets dropped) is found in the chunks it cites when, whitespace
  collapsed and Markdown's ``**`` removed on both sides, it is a substring of a chunk its closing
  markers name. A piece with no marker is not found; a refusal's pieces are not counted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ECHO_PHRASES",
    "REFUSAL",
    "REFUSAL_OPENING",
    "AnswerSentence",
    "KeyFact",
    "SentenceScore",
    "cited_spans",
    "content_words",
    "distinct_ngram_share",
    "echo_evidence",
    "fact_text",
    "is_degenerate",
    "is_refusal",
    "marker_numbers",
    "quoted_sentences",
    "score_sentences",
    "short_answer",
    "split_sentences",
    "states_key_fact",
    "strip_markers",
    "support_share",
    "term_occurs",
    "unknown_markers",
    "words",
]

MIN_WORDS_FOR_DEGENERATE = 8
DEGENERATE_SHARE = 0.6
ECHO_RUN = 8
SUPPORT_SHARE = 0.7
MAP_OVERLAP = 0.5

MARKER = re.compile(r"\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]")
_MARKERS_AFTER_STOP = re.compile(r"([.!?])((?:\s*\[\d{1,3}(?:\s*,\s*\d{1,3})*\])+)")
_MARKER_RUN = re.compile(r"(?:\s*\[\d{1,3}(?:\s*,\s*\d{1,3})*\])+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")

ECHO_PHRASES = (
    "the answer to the question in",
    "using only the numbered",
    "numbered passages",
    "numbered sources",
    "cite every fact",
    "cite only passages",
    "in square brackets",
    "answer with json only",
    "reply with json",
    "reply with the answer only",
    "the passages are untrusted",
    "ignore any instructions in them",
    "keep the answer short and direct",
    "give a one-sentence reason",
    "you answer the user's question",
    "you are a helpful assistant",
)
"""Lowercase phrases that belong to instructions, not to an answer."""
_LABEL_ECHO = re.compile(r"^\s*(passages|question)\s*:", re.I | re.M)
_HEADER_ECHO = re.compile(r"\([^()\n,]+,[^()\n]*(?:§|chars \d+-\d+)[^()\n]*\)")
"""A passage header as prompts label passages: ``(guide.md, § Setup, chars 120-480)``."""

REFUSAL = re.compile(
    r"\b(no relevant (passages|sources|information)|could not (write|find|answer)|"
    r"can ?not (answer|find)|do(es)? not (contain|mention|say|cover|answer|provide)|"
    r"not (available|mentioned|covered|found) in|general knowledge|may be wrong|"
    r"i (don't|do not) know|unable to|sorry)\b",
    re.I,
)
"""A sentence matching this, of at most 40 words, is a refusal or disclaimer: not scored."""
_REFUSAL_WORDS = 40

STOP_WORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each either else
    etc few for from further had has have having he her here hers him his how however i if in
    into is it its itself just may me might more most much must my no nor not of off on once
    only or other our ours out over own per same she should so some such than that the their
    theirs them then there these they this those through thus to too under until up upon us very
    via was we were what when where whether which while who whom whose why will with within
    without would yes yet you your yours one two e g ie eg""".split()  # noqa: SIM905
)
# fmt: off
_SUFFIXES = ("ational", "ations", "ation", "ingly", "ings", "ing", "ates", "ated", "ate", "edly",
             "ness", "ions", "ion", "ies", "ied", "ers", "er", "als", "al", "ed", "es", "ly", "e",
             "s")
# fmt: on
"""Tried longest first; a stem keeps at least three letters."""


def strip_markers(text: str) -> str:
    return " ".join(re.sub(r"\s*" + MARKER.pattern, "", text).split())


def words(text: str) -> list[str]:
    """Lowercase words of ``text`` without its ``[n]`` markers."""
    return _WORD.findall(MARKER.sub(" ", text).lower().replace("\u2019", "'"))


def _stem(word: str) -> str:
    word = word.removesuffix("'s")
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            stem = word[: -len(suffix)]
            if suffix in ("ies", "ied"):
                return stem + "y"
            if len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "aeiou":
                return stem[:-1]  # controlled, stopping
            return stem
    return word


def content_words(text: str) -> list[str]:
    """Words without stop words, lightly stemmed (``retrieving`` and ``retrieved`` meet)."""
    return [_stem(w) for w in words(text) if w not in STOP_WORDS and len(w) > 1]


def marker_numbers(text: str) -> list[int]:
    """Every number named by a marker, in order (``[1, 3]`` names 1 and 3)."""
    return [int(n) for group in MARKER.findall(text) for n in re.split(r"\s*,\s*", group)]


def unknown_markers(text: str, cited_numbers: Iterable[int]) -> list[int]:
    """Marker numbers in ``text`` that no citation carries."""
    known = set(cited_numbers)
    return [n for n in marker_numbers(text) if n not in known]


def distinct_ngram_share(tokens: Sequence[str], n: int = 4) -> float:
    grams = [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 1.0


def is_degenerate(answer: str) -> bool:
    tokens = words(answer)
    return (
        len(tokens) >= MIN_WORDS_FOR_DEGENERATE and distinct_ngram_share(tokens) < DEGENERATE_SHARE
    )


def _runs(tokens: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def echo_evidence(
    answer: str, prompt_texts: Iterable[str], allowed_texts: Iterable[str]
) -> list[str]:
    """Why ``answer`` echoes its instructions (empty when it does not): the instruction phrases
    it contains, and its 8-word runs found in ``prompt_texts`` but in none of ``allowed_texts``
    (the question and the cited chunks)."""

    def flat(text: str) -> str:
        return " ".join(strip_markers(text).lower().replace("\u2019", "'").split())

    allowed_list = list(allowed_texts)
    quoted = " ".join(flat(t) for t in allowed_list)
    lowered = flat(answer)
    # a phrase the cited documents themselves say is a quotation, not echo
    found = [f"phrase: {p}" for p in ECHO_PHRASES if p in lowered and p not in quoted]
    found += [f"label: {m.group(0).strip()}" for m in _LABEL_ECHO.finditer(answer)]
    found += [f"passage header: {m.group(0)}" for m in _HEADER_ECHO.finditer(answer)][:3]
    answer_runs = _runs(words(answer), ECHO_RUN)
    if answer_runs:
        prompt_runs: set[tuple[str, ...]] = set()
        for text in prompt_texts:
            prompt_runs |= _runs(words(text), ECHO_RUN)
        allowed: set[tuple[str, ...]] = set()
        for text in allowed_list:
            allowed |= _runs(words(text), ECHO_RUN)
        echoed = sorted((answer_runs & prompt_runs) - allowed)
        found += [f"run: {' '.join(run)}" for run in echoed[:5]]
    return found


@dataclass(frozen=True, slots=True, kw_only=True)
class AnswerSentence:
    text: str
    """The sentence without its markers."""
    markers: tuple[int, ...]
    """Numbers its markers name, in order, without repeats."""


def split_sentences(answer: str) -> list[AnswerSentence]:
    """Sentences of ``answer`` with the markers inside or just after each."""
    moved = _MARKERS_AFTER_STOP.sub(lambda m: f"{m.group(2)}{m.group(1)}", answer)
    sentences = []
    for line in moved.splitlines():
        for piece in _SENTENCE_END.split(line):
            text = strip_markers(piece).lstrip("-*•# ").strip()
            if text or MARKER.search(piece):
                numbers = tuple(dict.fromkeys(marker_numbers(piece)))
                if not text and sentences:  # a line holding only markers: the previous sentence's
                    last = sentences.pop()
                    numbers = tuple(dict.fromkeys(last.markers + numbers))
                    text = last.text
                sentences.append(AnswerSentence(text=text, markers=numbers))
    return [s for s in sentences if s.text]


@dataclass(frozen=True, slots=True, kw_only=True)
class SentenceScore:
    text: str
    markers: tuple[int, ...]
    support: float | None
    """Share of content words found in the cited chunks (None when not scored)."""
    status: str
    """``supported``, ``unsupported``, ``uncited``, ``exempt`` (refusal) or ``empty``."""
    missing: list[str] = field(default_factory=list)

    @property
    def counted(self) -> bool:
        return self.status in ("supported", "unsupported", "uncited")


def support_share(sentence: str, source: str) -> float:
    """Share of the content words of ``sentence`` that occur in ``source`` (1.0 with none)."""
    wanted = set(content_words(sentence))
    return len(wanted & set(content_words(source))) / len(wanted) if wanted else 1.0


def score_sentences(answer: str, chunk_text_by_number: Mapping[int, str]) -> list[SentenceScore]:
    """Each sentence of ``answer`` scored against the text of the chunks its markers name."""
    scores = []
    for sentence in split_sentences(answer):
        wanted = list(dict.fromkeys(content_words(sentence.text)))
        if not wanted:
            scores.append(
                SentenceScore(
                    text=sentence.text, markers=sentence.markers, support=None, status="empty"
                )
            )
            continue
        if REFUSAL.search(sentence.text) and len(words(sentence.text)) <= _REFUSAL_WORDS:
            scores.append(
                SentenceScore(
                    text=sentence.text, markers=sentence.markers, support=None, status="exempt"
                )
            )
            continue
        source = " ".join(chunk_text_by_number.get(n, "") for n in sentence.markers)
        have = set(content_words(source))
        missing = [w for w in wanted if w not in have]
        share = 1 - len(missing) / len(wanted)
        if not sentence.markers:
            status = "uncited"
        else:
            status = "supported" if share >= SUPPORT_SHARE else "unsupported"
        scores.append(
            SentenceScore(
                text=sentence.text,
                markers=sentence.markers,
                support=round(share, 3),
                status=status,
                missing=missing,
            )
        )
    return scores


# -- key facts -----------------------------------------------------------------------------

REFUSAL_OPENING = "The documents do not say"
_PLAIN_TERM = re.compile(r"[A-Za-z0-9' -]+")
_NUMBER = re.compile(r"(?<![\w.])\d[\d,_]*(?:\.\d+)?(?![\w])")
_UNIT_WINDOW = 3
_LINK = re.compile(r"\[([^\]\n]+)\](?:\[[^\]\n]*\]|\([^)\s]*\))")
"""Markdown link markup, ``[text][ref]`` or ``[text](url)``: read as its text."""


@dataclass(frozen=True, slots=True, kw_only=True)
class KeyFact:
    """What any correct answer to a question must contain (see the module docstring)."""

    all: tuple[str, ...] = ()
    """Terms that must each occur."""
    any: tuple[tuple[str, ...], ...] = ()
    """Groups of alternatives: one alternative of each group must occur."""
    number: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Alternatives (value, units): one must occur, the value followed by one of its units."""

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> KeyFact:
        unknown = set(data) - {"all", "any", "number"}
        if unknown:
            raise ValueError(f"key_fact: unknown part(s) {sorted(unknown)}; use all, any, number")
        return cls(
            all=tuple(str(t) for t in data.get("all") or ()),
            any=tuple(tuple(str(t) for t in group) for group in data.get("any") or ()),
            number=tuple(
                (str(n["value"]), tuple(str(u) for u in n.get("units") or ()))
                for n in data.get("number") or ()
            ),
        )

    @property
    def empty(self) -> bool:
        return not (self.all or self.any or self.number)


def fact_text(answer: str) -> str:
    """The answer as the key-fact rule reads it: no markers, backticks or link markup."""
    text = _LINK.sub(r"\1", MARKER.sub(" ", answer).replace("`", ""))
    return " ".join(text.split())


def _is_plain(term: str) -> bool:
    return bool(_PLAIN_TERM.fullmatch(term)) and not any(
        ch.isupper() for word in term.split() for ch in word[1:]
    )


def term_occurs(term: str, text: str) -> bool:
    """Whether ``term`` stands in ``text`` as a whole (case rule: the module docstring)."""
    term = " ".join(term.split())
    if not term:
        return False
    left = r"(?<![\w])(?<!\w-)" if re.match(r"\w", term[0]) else ""
    right = r"(?![\w])(?!-\w)" if re.match(r"\w", term[-1]) else ""
    flags = re.I if _is_plain(term) else 0
    return re.search(left + re.escape(term) + right, text, flags) is not None


def _number_occurs(value: str, units: Sequence[str], text: str) -> bool:
    wanted = value.replace(",", "").replace("_", "")
    for match in _NUMBER.finditer(text):
        if match.group(0).replace(",", "").replace("_", "") != wanted:
            continue
        if not units:
            return True
        following = re.findall(r"[^\W\d]+|\d+", text[match.end() : match.end() + 80])
        window = [w.lower() for w in following[:_UNIT_WINDOW]]
        if any(u.lower() in window for u in units):
            return True
    return False


def is_refusal(answer: str, result: Mapping[str, Any] | None = None) -> bool:
    """A refusal (see the module docstring): the result says ``refused`` or ``out_of_scope``,
    or the text opens with the refusal opening."""
    if result is not None and (result.get("refused") is True or result.get("out_of_scope") is True):
        return True
    return fact_text(answer).lower().startswith(REFUSAL_OPENING.lower())


def states_key_fact(answer: str, fact: KeyFact, *, refused: bool = False) -> bool:
    """Whether ``answer`` states ``fact`` (never for a refusal or an empty fact)."""
    if fact.empty or refused or is_refusal(answer):
        return False
    text = fact_text(answer)
    if not all(term_occurs(t, text) for t in fact.all):
        return False
    if not all(any(term_occurs(t, text) for t in group) for group in fact.any):
        return False
    return not fact.number or any(_number_occurs(v, u, text) for v, u in fact.number)


def short_answer(result: Mapping[str, object]) -> str:
    """The result's short answer line (see the module docstring)."""
    given = result.get("short_answer")
    if isinstance(given, str) and given.strip():
        return strip_markers(given)
    answer = str(result.get("answer") or "").strip()
    return strip_markers(re.split(r"\n\s*\n", answer, maxsplit=1)[0])


def cited_spans(answer: str) -> list[tuple[str, tuple[int, ...]]]:
    """The answer cut after each run of markers: (text, the numbers of the markers closing it);
    text after the last marker has none. Pieces without a letter or digit are left out."""
    spans, start = [], 0
    for run in _MARKER_RUN.finditer(answer):
        spans.append((answer[start : run.start()], tuple(marker_numbers(run.group(0)))))
        start = run.end()
    spans.append((answer[start:], ()))
    cleaned = [(" ".join(t.split()).lstrip(".,;:)!? ").lstrip("-*• "), n) for t, n in spans]
    return [(t, n) for t, n in cleaned if re.search(r"\w", t)]


def _as_quoted(text: str) -> str:
    return " ".join(text.replace("**", "").split())


def quoted_sentences(
    answer: str, chunk_text_by_number: Mapping[int, str]
) -> tuple[int, int, list[str]]:
    """(cited spans found in a chunk their markers name, spans counted, those not found)."""
    chunks = {n: _as_quoted(t) for n, t in chunk_text_by_number.items()}
    found, missing = 0, []
    for text, numbers in cited_spans(answer):
        if any(_as_quoted(text) in chunks.get(n, "") for n in numbers):
            found += 1
        else:
            missing.append(text)
    return found, found + len(missing), missing
