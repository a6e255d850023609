"""Extractive answers: the units of the passages that best answer a question, each cited.

No model writes anything, so nothing can loop, echo or be invented: every sentence of the answer
is a unit of the passage it cites (a sentence, list item, definition entry, table row, or for
"how do I" questions a code block or API signature), quoted exactly. Units are ranked against
the question's terms and the identifiers it names whole (idf-weighted over the candidate units),
with a lead for better-ranked passages, for sections whose heading names what is asked, and for
units that hold the kind of thing the question asks for (``kforge.rag.question``). Each
passage's best unit comes first; a further unit must answer part of the question that its
passage's chosen units leave open (near-duplicates are skipped), and a lead sentence that only
introduces its passage comes last, room permitting.

Multi-hop questions are followed by mention (``kforge.rag.hops``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from kforge.rag.analyze import analyze, tokenize
from kforge.rag.candidates import (
    NAME_PREFIX,
    Candidate,
    candidate_sentences,
    find_candidates,
    gives_name,
)
from kforge.rag.commands import is_command_line, runs_example
from kforge.rag.comparison import (
    compared_unit,
    lists_differences,
    names_option,
    own_terms,
    sets_apart,
)
from kforge.rag.consequence import asks_what_happens, states_consequence
from kforge.rag.defining import (
    defined_subject,
    defines_subject,
    is_about,
    meant_subject,
    opens_with_subject,
)
from kforge.rag.follow_on import (
    entry_opening,
    example_before,
    follow_on,
    inherit_antecedents,
    item_run,
    place_antecedent,
    refers_back,
    runs_into_list,
    subject_of,
    value_of,
    way_after,
)
from kforge.rag.hops import hop_to, named_passages
from kforge.rag.kinds import holds_kind
from kforge.rag.names import is_entry_of, is_entry_of_another, kind_names
from kforge.rag.quantities import (
    asked_units,
    asks_release,
    counted_noun,
    counts,
    gives_default,
    measures_other,
    names_release,
    parameter_defaults,
    states_in_units,
)
from kforge.rag.question import asked_noun, read_question, situation_terms, unit_terms
from kforge.rag.types import Chunk
from kforge.rag.unit_scores import (
    NAMED_HEADING,
    about_subject,
    completes,
    defining_units,
    entry_leads,
    heading_lead,
    led_code,
    names_what_is_asked,
    opens_with_asked,
    other_entry,
    parameter_item,
    term_overlap,
)
from kforge.rag.units import reads_as_code, refers_elsewhere

__all__ = ["Segment", "candidate_sentences", "compose_extractive"]

_REDUNDANT = 0.5
"""Skip a unit sharing more than this share of its terms with one already chosen."""
_LEAD_SHARE = 0.6
"""The best-ranked passage leads the answer when its best unit scores this share of the
best unit overall: the retriever judged the whole passage, a unit score sees words."""
_COPY = 0.8
"""A unit of another passage is redundant only when it shares this share of its terms."""
_WAYS_AFTER = ("procedure", "quantity", "where")
"""Kinds of question whose best unit's next units are read their own way (``value_of``)."""
_KEEP_RATIO = 0.4
"""Stop adding units scoring under this share of the best unit's score."""
_DECIDING_RATIO = 0.3
"""The least share of the best unit's score for a sentence saying "not" to answer yes or no."""
_KIND_BONUS = 0.25
"""Lead of a unit holding what the question asks for (a number, a command, a date, ...)."""
_PATH = re.compile(r"(?:^|[\s(\"'`])(?:~|\.{1,2})?/[\w.-]+/|(?:^|\s)~/\S+|\$[A-Z_]{3,}\b")
"""A path in documentation ("~/.cache/borg/", "/etc/app/", "$XDG_CONFIG_HOME"): for "where",
more than a proper name in a sentence ("Borg")."""
_NO_NUMBER = 0.6
"""Weight of a unit giving no number for a quantity question (no release for "which version")."""
_ENTRY_BONUS = 0.5
"""Lead of a unit that opens with what the question asks about (its entry in a list)."""
_OTHER_ENTRY = 0.5
"""Weight of a unit continuing the entry of a name not asked about, or a parameter's not named."""
_DEFAULTS = re.compile(r"\bdefault(?:s|ed)?\b", re.I)
_NEGATION = re.compile(
    r"\b(?:no|not|never|none|nothing|without|cannot|can't|don't|doesn't|isn't|won't)\b", re.I
)
_KINDS = re.compile(
    r"\b(?:what|which)(?:\s+\w+){0,3}?\s+(?:kinds|types|sorts|forms|categories)\s+of\b", re.I
)
"""A question asking what kinds of a thing there are, which a list names item by item."""
_MOST_KINDS = 8
"""The most items of such a list an answer quotes."""
_SAME_POLARITY = 0.1
"""Lead of a unit that negates, for a question that does: "Exit code 5: No tests were
collected" among the exit codes, for "which exit code when it collects no tests"."""


@dataclass(frozen=True, slots=True)
class Segment:
    """One sentence of an answer and the passage it comes from."""

    text: str
    source: int
    """Index of the passage in the list the answer was composed from."""
    rank: int = 0
    """How well it answers among the answer's sentences (0 = best)."""
    code: bool = False
    """A code block (or a command): written on its own lines, never joined into a sentence."""


def compose_extractive(
    question: str,
    passages: Sequence[Chunk],
    *,
    max_sentences: int = 4,
    exclude: Collection[str] = (),
) -> list[Segment]:
    """Up to ``max_sentences`` units of ``passages`` that answer ``question`` (one more for a
    comparison), quoted exactly.

    ``passages`` are in relevance order (best first). The answer draws on the passage holding
    the best unit and a second one that the question or the first passage names (a multi-hop
    bridge, see the module doc); failing such a bridge, on the passages whose best unit scores
    close to the best one, and on the first whose best unit adds a question term (each naming
    the question's identifiers when the question has some). It takes the two first passages'
    best units first (for "how do I", also the passage's API signature or code block that
    holds a question term), then further units of any of them that score close to the best
    and hold a question term their passage's chosen units do not (or complete a list item
    chosen), and, while there is room, the lead sentence (which says what the passage is
    about) of a passage whose best unit opens by referring back ("He designed ...") or that
    the answer hops to. A chosen unit is followed by the units that finish what it says
    (``kforge.rag.follow_on``). Units in ``exclude`` (already said elsewhere, e.g. earlier in a
    report) are not used. Each segment's ``rank`` says how well it answers.
    Returns no segment only when no passage has a usable unit.
    """
    asked = read_question(question)
    candidates = find_candidates(asked, passages, exclude)
    if not candidates:
        return []
    query = list(asked.terms) + [NAME_PREFIX + n for n in asked.identifiers]
    if not query:
        query = list(dict.fromkeys(analyze(question)))
    df = Counter(term for c in candidates for term in c.terms)
    total = len(candidates)
    situation = situation_terms(asked)

    def idf(term: str) -> float:  # a term only the user's situation names weighs less
        return math.log(1 + total / (1 + df.get(term, 0))) * situation.get(term, 1.0)

    query_weight = sum(idf(t) for t in query) or 1.0
    subject = defined_subject(asked)
    about = about_subject(passages, subject)
    heading_match = [heading_lead(asked, p, query) * about[n] for n, p in enumerate(passages)]
    named = [n for n in named_passages(question, passages) if about[n]]
    asks_name = not subject or any(unit_terms(n) & subject for n in asked.identifiers)
    if subject:
        defining = defining_units(candidates, passages, subject)
        # "the SQLite amalgamation" over SQLite's own manual: "The amalgamation contains ..."
        # defines it too; a word most passages hold names the documents, not the subject
        core = frozenset(t for t in subject if df.get(t, 0) * 2 < total)
        if core and core != subject:
            for key, weight in defining_units(candidates, passages, core).items():
                defining[key] = max(defining.get(key, 0.0), weight)
    elif asked.kind == "definition":
        defining = entry_leads(asked, candidates, passages)
        # the entry of what is asked: "shift [n]: The positional parameters ..." for "the
        # shift builtin", ``method sqlalchemy.orm.Session.flush(...): ...``
        entries = [*asked.identifiers, *kind_names(question)]
        for c in candidates:
            if entries and is_entry_of(c.text, entries):
                defining[id(c)] = max(defining.get(id(c), 0.0), 1.0)
        # "what does the type affinity of a column mean": "The type affinity of a column is
        # ...", "... is called its "affinity""
        meant = meant_subject(asked)
        if meant and not asked.identifiers:  # a name's entry says what it means: as above
            for key, weight in defining_units(candidates, passages, meant, head=True).items():
                defining[key] = max(defining.get(key, 0.0), weight)
    else:
        defining = {}

    kind_named = kind_names(question) if asked.kind == "definition" else []
    negated = _NEGATION.search(question) is not None
    noun = counted_noun(question)
    sized = asked_units(asked)
    versioned = asks_release(question, asked_noun(question))
    happens = asks_what_happens(question)

    def gives(c: Candidate) -> bool:
        """``c`` holds the kind of thing asked; for "how do I", any code block does; for "what
        is X", a sentence saying what X is or does ("Blinker provides fast & simple ...")."""
        if asked.kind == "procedure" and c.kind == "code" and runs_example(c.text, asked):
            return False
        if asked.kind == "procedure" and c.kind == "code":
            return True
        says = bool(subject) and defines_subject(c.text, subject) >= 1
        return says or holds_kind(c.text, asked)

    def score(c: Candidate) -> float:
        coverage = sum(idf(t) for t in query if t in c.terms) / query_weight
        value = coverage / (1 + 0.15 * c.source) + heading_match[c.source]
        if c.source in named:
            value += 0.25
        if (
            asked.kind not in ("thing", "yesno")
            and gives(c)
            and not (noun and measures_other(c.text, noun, question))
        ):
            value += _KIND_BONUS * min(1.0, 2 * coverage + heading_match[c.source])
            if noun and counts(c.text, noun, question):
                value += _KIND_BONUS  # "how many plugins": "over 800+ external plugins"
            elif asked.kind == "where" and _PATH.search(c.text):
                value += _KIND_BONUS  # "where does it keep its cache": "~/.cache/borg/"
            elif (
                sized
                and states_in_units(c.text, sized)
                and ("default" not in asked.terms or _DEFAULTS.search(c.text))
            ):
                # "how short ... durations": "too small (<0.005s)"; a default is its entry's,
                # whatever unit another entry's value is in, unless the value is the default:
                # "This argument defaults to 300 seconds (5 minutes)."
                value += _KIND_BONUS
        elif asked.kind == "quantity":
            value *= _NO_NUMBER  # "how many times ...?" is answered by a number
        # "--onto <newbase>: ..."; for "what is X", "Deques are ..." or "fast-forward:: A
        # fast-forward is ...", not an entry sharing a word with X ("copy.copy(x): ...")
        opens = opens_with_asked(c, asked, idf) if asks_name else 0.0
        value += _ENTRY_BONUS * max(opens, defining.get(id(c), 0.0))
        both = asked.kind == "comparison" and all(names_option(c.text, o) for o in asked.options)
        if asked.kind == "comparison" and sets_apart(c, asked.options):
            # "a brief description is a short one-liner, whereas the detailed description
            # provides longer ...": how the two differ, in one sentence
            value += 2 * _ENTRY_BONUS
        elif asked.kind == "comparison" and lists_differences(c, asked.options, passages):
            value += 2 * _ENTRY_BONUS  # "The main differences with behave are:" under "Lettuce"
        elif asked.kind == "comparison" and any(
            opens_with_subject(c.text, own_terms(o, asked.options)) for o in asked.options
        ):
            value += _ENTRY_BONUS  # "A shallow copy constructs ..." for "shallow or deep copy"
        elif both and all(is_about(c.text, o) for o in asked.options):
            # "The importance of the distinction between exec() and execFile() can vary":
            # naming both without setting them apart, it says what neither is
            value *= _OTHER_ENTRY
        if c.answers:  # the page's own answer to what is asked, the more so asked alike
            value += _ENTRY_BONUS * coverage * (2 if c.answers_alike else 1)
        if asked.kind == "definition" and c.text.endswith(":") and not defining.get(id(c)):
            # "Each column ... is assigned one of the following type affinities:" introduces
            # kinds of it, not what it is
            value *= _OTHER_ENTRY
        if c.kind == "sentence" and len(tokenize(c.text)) < 8:
            value *= 0.8
        if c.kind == "sentence" and refers_elsewhere(c.text):
            value *= _OTHER_ENTRY  # "More details are in ...": where it is said, not what
        if asked.kind != "procedure" and c.kind != "code" and reads_as_code(c.text):
            value *= _OTHER_ENTRY  # code run into a line says how, not what or why
        if gives_name(c.text, asked):  # "You can also use the NOXSESSION environment variable:"
            value += _KIND_BONUS * coverage
        if versioned:  # "which Python version": "requires Python 3.7+", not a unit naming none
            value = value + _KIND_BONUS if names_release(c.text, question) else value * _NO_NUMBER
        if happens and states_consequence(c.text, query):  # "... so it is dropped and a 503 ..."
            value += _KIND_BONUS
        if negated and _NEGATION.search(c.text):
            value += _SAME_POLARITY  # "when it collects no tests": "No tests were collected"
        if parameter_defaults(c.text, asked):
            value += _ENTRY_BONUS  # "lru_cache(maxsize=128)" for "the default maxsize"
        if (
            other_entry(c, asked)
            or parameter_item(c.text, asked)
            or (kind_named and is_entry_of_another(c.text, kind_named))
        ):
            value *= _OTHER_ENTRY
        return value

    scores = {id(c): score(c) for c in candidates}
    pointed = inherit_antecedents(candidates, scores)
    ranked = sorted(candidates, key=lambda c: (-scores[id(c)], c.source, c.position))
    top = ranked[0]
    first = next((c for c in ranked if c.source == 0), None)
    typed = asked.kind not in ("thing", "yesno")
    if (
        first is not None
        and scores[id(first)] >= _LEAD_SHARE * scores[id(top)]
        and (not typed or gives(first) or not gives(top))
        and heading_match[0] - heading_match[top.source] > -NAMED_HEADING  # not for os.EOL's
        and defining.get(id(first), 0.0) >= defining.get(id(top), 0.0)  # nor over what defines
        and not other_entry(first, asked)  # nor Morsel.setdefault's entry over dict.setdefault's
    ):
        top = first  # the retriever's best passage leads when it answers nearly as well
    owns = {s: [c for c in ranked if c.source == s] for s in range(len(passages))}
    sources = [top.source]
    linked = hop_to(top, passages, named, query, idf, owns)
    if linked is not None:
        sources.append(linked)
    else:
        # other passages join, best unit first: one that answers nearly as well, or the first
        # to add what the best lacks (what is asked is often said across pages: "wrap it in
        # sync_to_async()" on one, "doesn't support async views" on another)
        for runner_up in (c for c in ranked if c is owns[c.source][0] and c.source != top.source):
            if scores[id(runner_up)] < _KEEP_RATIO * scores[id(top)]:
                break
            close = scores[id(runner_up)] >= _LEAD_SHARE * scores[id(top)]
            adds = len(sources) == 1 and any(
                t in runner_up.terms and t not in top.terms for t in query
            )
            if (adds or close) and names_what_is_asked(asked, passages[runner_up.source]):
                sources.append(runner_up.source)
    best_score = scores[id(top)]
    chosen: list[Candidate] = []
    follows: dict[int, list[Candidate]] = {}

    def take(c: Candidate) -> None:
        # another passage may restate a fact to name its subject: only a near copy is redundant;
        # a sentence introducing a list ("... as a result of either:") only leads, with its items
        if c.text.endswith(":") and c is not owns[c.source][0]:
            return
        if c not in chosen and not any(
            term_overlap(c.terms, o.terms) > (_REDUNDANT if o.source == c.source else _COPY)
            for o in chosen
        ):
            chosen.append(c)

    for source in sources:
        # what each source's best unit's next words say of it, when it is chosen: never
        # redundant, and not counted apart (for why, how they differ or what it is; for which
        # thing, only a sentence saying it goes on: "It was founded ..." says something else)
        best_here, why, thing = owns[source][0], asked.kind == "reason", asked.kind == "thing"
        # the entry of a name asked about: its next sentence ("If value is not a member, ...")
        entry = asked.kind not in _WAYS_AFTER and is_entry_of(best_here.text, asked.identifiers)
        if (
            asked.kind in ("reason", "comparison", "definition", "thing")
            or entry
            or best_here.text[-1:] == ":"
            or best_here.answers
            or runs_into_list(best_here, owns[source])
        ):
            follows[id(best_here)] = [
                c
                for c in follow_on(best_here, owns[source], why=why, said=thing, entry=entry)
                if asked.kind in ("procedure", "where")  # a command; a path ("it's:" then it)
                or (c.kind != "code" and not reads_as_code(c.text))
            ]
        elif asked.kind == "quantity":
            follows[id(best_here)] = value_of(best_here, owns[source])
        elif asked.kind == "procedure":
            follows[id(best_here)] = way_after(best_here, owns[source])
        elif asked.kind == "where" and not _PATH.search(best_here.text):
            # "... it needs to keep a local cache ..." then "This cache is stored in
            # ~/.cache/borg/."
            follows[id(best_here)] = [
                c for c in follow_on(best_here, owns[source]) if _PATH.search(c.text)
            ]
    for source in sources[:2]:  # the two first sources' best units (each has one)
        take(owns[source][0])
        best_here = owns[source][0]
        asked_here = [c for c in owns[source] if c.terms & set(query)]

        # the call or code holding most of what is asked ("mkdocs new my-project" for "create
        # a new project", not the page's other block, "mkdocs serve")
        def said(c: Candidate) -> float:
            return sum(idf(t) for t in query if t in c.terms)

        calls = [
            c
            for c in asked_here
            if c.kind == "signature" or (c.kind == "code" and not runs_example(c.text, asked))
        ]
        call = max(
            calls, key=lambda c: (said(c), c.kind == "signature", -len(c.terms)), default=None
        )
        if call is None:  # the API entry the best unit documents: "Returns the string path of
            # the current user's home directory" under `os.homedir()`
            best_here = owns[source][0]
            heads = [
                c for c in owns[source] if c.kind == "signature" and c.position < best_here.position
            ]
            call = max(heads, key=lambda c: c.position, default=None)
        led = led_code(best_here, owns[source]) if asked.kind == "procedure" else []
        if led:  # "... you will have to set up a new project." then "... and run:" and its code
            chosen.extend(c for c in led if c not in chosen)
        elif asked.kind == "procedure" and call is not None and call not in chosen:
            chosen.append(call)  # the call or code that does it: never redundant
    if asked.kind == "comparison":  # one unit about each compared item, both always
        for option in asked.options:
            unit = compared_unit(option, asked.options, ranked, chosen, passages)
            if unit is not None:
                chosen.insert(1, unit)  # before what else the best passage says
                if unit.source not in sources:
                    sources.append(unit.source)
    for c in ranked:  # then whatever else scores close to the best
        if len(chosen) >= max_sentences:
            break
        if c.source in sources and scores[id(c)] >= _KEEP_RATIO * best_score > 0:
            # a further unit must answer part of the question its passage has not yet
            said_here = set().union(*(o.terms for o in chosen if o.source == c.source))
            # or it gives the kind of thing asked that no chosen unit gives (the number itself
            # after "The magic number will always signal GNU MO files")
            gives_kind = typed and gives(c) and not any(gives(o) for o in chosen)
            new_terms = any(t in c.terms and t not in said_here for t in query)
            if gives_kind and c not in chosen:
                chosen.append(c)  # what is asked for: never redundant
            elif new_terms or completes(c, chosen):
                take(c)
    if asked.kind == "yesno" and not any(_NEGATION.search(o.text) for o in chosen):
        # the best sentence of a source read saying "not" of two things asked decides, if
        # any ("Migrations are not run inside a transaction.")
        decides = (c for c in ranked if c.source in sources and len(c.terms & set(query)) > 1)
        no = next((c for c in decides if _NEGATION.search(c.text)), None)
        if no is not None and scores[id(no)] >= _DECIDING_RATIO * best_score:
            chosen.append(no)
    kinds: list[Candidate] = []
    if _KINDS.search(question):
        # "What are the kinds of interaction?": the list that names them, whole and first,
        # read as one answer (as the items a sentence introduces are)
        items = [c for c in chosen if c.kind == "item"]
        if items:
            kinds = item_run(items[0], owns[items[0].source])[:_MOST_KINDS]
            chosen[:] = kinds + [
                c for c in chosen if c not in kinds and c.source == kinds[0].source
            ]
    for source in sources:  # and, room permitting, what makes a sentence understood
        own = owns[source]
        lead = next((c for c in own if c.position == min(o.position for o in own)), None)
        # the lead says what the passage is about: needed when its best sentence points back
        # ("He designed ...") or the answer hops to the passage
        needed = refers_back(own[0].text) or source == linked
        if len(chosen) < max_sentences and lead is not None and own[0] is not lead and needed:
            take(lead)
    # what finishes a unit's words comes right after it, before any unit chosen later; a
    # comparison has room for one more unit, one about each item
    placed: list[Candidate] = []
    subjects = 0
    for c in chosen:
        # "Defaults to 16 KiB." says what of the unit before it: that unit comes first, and
        # does not take the room of another unit
        of = subject_of(c, owns[c.source]) if gives_default(c.text) else None
        subjects += of is not None and of not in chosen and of not in placed
        placed.extend(u for u in (of, c, *follows.get(id(c), ())) if u and u not in placed)
    # the items a sentence introduces ("A citation should include:") are read as one answer
    # with it, not as further sentences
    listed = sum(
        c.kind == "item" for b in chosen if b.text.endswith(":") for c in follows.get(id(b), ())
    )
    room = max_sentences + (asked.kind == "comparison") + listed + subjects
    chosen = placed[: room + max(0, len(kinds) - 1)]
    for c in list(chosen):
        # room permitting, a sentence pointing back ("It is a recommended replacement for this
        # module ...") comes after the one naming what it points to
        place_antecedent(c, chosen, owns[c.source], room, pointed)
        # the example a sentence goes on from ("searches for 'hello' in all files ...") is
        # what that sentence says: it comes before it, room or not
        example = example_before(c, owns[c.source])
        if example is not None and example not in chosen:
            chosen.insert(chosen.index(c), example)
        # how to do it: the option whose entry a sentence continues ("If any of the file names
        # ... are directories, gzip will descend ..." under "--recursive, -r: ...")
        opening = entry_opening(c, owns[c.source]) if asked.kind == "procedure" else None
        if opening is not None and opening not in chosen:
            chosen.insert(chosen.index(c), opening)
    rank = {id(c): n for n, c in enumerate(sorted(chosen, key=lambda c: -scores[id(c)]))}
    chosen.sort(key=lambda c: (sources.index(c.source), c.position))
    return [
        Segment(c.text, c.source, rank[id(c)], c.kind == "code" or is_command_line(c.text))
        for c in chosen
    ]
