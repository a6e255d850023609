"""What an extractive answer quotes for each item a question compares: a unit that says what
the item is, not one that names both items."""

from __future__ import annotations

import re
from collections.abc import Sequence

from kforge.rag.candidates import Candidate, bare_heading
from kforge.rag.defining import is_about, opens_with_subject
from kforge.rag.question import unit_terms
from kforge.rag.types import Chunk

__all__ = [
    "compared_unit",
    "lists_differences",
    "names_option",
    "own_terms",
    "own_words",
    "said_of",
    "sets_apart",
]


def compared_unit(
    option: str,
    options: Sequence[str],
    ranked: Sequence[Candidate],
    chosen: Sequence[Candidate],
    passages: Sequence[Chunk],
) -> Candidate | None:
    """The unit to add for the compared item ``option``, or None when one already chosen
    says what it is (or nothing speaks of it). A unit that says what the item is (it opens
    with it, or opens the item's own section: "mkdocs build" opens "Build the MkDocs
    documentation") beats one that mentions it ("... differ for mkdocs serve"); a unit naming
    both items says nothing of either. Of equals, one beside what is said of the other item
    contrasts the two ("If you want to throw away uncommitted changes, see git-reset")."""

    others = [o for o in options if o != option]

    def defines(c: Candidate) -> bool:
        if not _describes(c.text, option):
            return False  # a synopsis, "git fetch [<options>] [<repository>]", says no what
        if all(is_about(c.text, own_words(o, options)) for o in options):
            return False  # "DEFERRED, IMMEDIATE, and EXCLUSIVE transactions" names them all
        opens = opens_with_subject(c.text, own_terms(option, options))
        return (said_of(c.text, option, options) and opens) or (
            _leads_section_on(c, passages, option, ranked)
            and not any(is_about(passages[c.source].heading.split(">")[-1], o) for o in others)
        )

    if any(defines(c) for c in chosen):
        return None
    about = [c for c in ranked if defines(c)]
    if not about:
        if any(said_of(c.text, option, options) for c in chosen):
            return None
        about = [c for c in ranked if said_of(c.text, option, options)]
    beside = {c.source for c in chosen if any(is_about(c.text, o) for o in options)}
    # a unit saying what only this item does, or unlike what, sets it apart ("pg_dump dumps
    # only a single database at a time, and it does not dump ... roles")
    about.sort(
        key=lambda c: (
            not _describes(c.text, option),
            _SETS_APART.search(c.text) is None,
            c.source not in beside,
        )
    )
    return about[0] if about else None


def own_terms(option: str, options: Sequence[str]) -> frozenset[str]:
    """The terms of ``own_words``."""
    return unit_terms(own_words(option, options)) or unit_terms(option)


def own_words(option: str, options: Sequence[str]) -> str:
    """``option`` past the words every compared item opens with: "BEGIN DEFERRED" beside
    "BEGIN IMMEDIATE" is said "DEFERRED means that ..." ("application context" beside
    "request context" keeps its noun; so does an item of one word)."""
    said = [o.split() for o in options]
    if len(said) < 2 or min(map(len, said)) < 2:
        return option
    shared = 0
    while all(len(w) > shared + 1 and w[shared].lower() == said[0][shared].lower() for w in said):
        shared += 1
    return " ".join(option.split()[shared:])


_SETS_APART = re.compile(r"\b(?:only|unlike|whereas|rather than|instead of)\b", re.I)
"""What sets an item apart in a sentence about it alone ("dumps only a single database")."""


def _describes(text: str, option: str) -> bool:
    """True when ``text`` says something besides the item's name, options and arguments:
    "git-fetch - Download objects and refs ...", not the synopsis "git fetch --multiple
    [<options>] [<repository>]"."""
    bare = re.sub(r"\[[^\]]*\]|<[^>]*>|\{[^}]*\}|(?<![\w-])--?[A-Za-z][\w-]*", " ", text)
    return bool(unit_terms(bare) - unit_terms(option))


def _leads_section_on(
    c: Candidate, passages: Sequence[Chunk], option: str, ranked: Sequence[Candidate]
) -> bool:
    """True when ``c`` is the first sentence of a section whose own heading names the compared
    item ``option`` and no other (the section "mkdocs build" opens "Build the MkDocs
    documentation."; "Static method: ``Buffer.allocUnsafe(size)``", after its parameter list,
    "Allocates a new ``Buffer`` of ``size`` bytes.")."""
    if c.kind != "sentence":
        return False
    passage = passages[c.source]
    own = passage.heading.split(">")[-1] if passage.heading else ""
    first_line = passage.text.lstrip().split("\n", 1)[0].lstrip("#= ")
    # the passage starts its section: its first line is the heading
    if bare_heading(first_line).replace("`", "") != bare_heading(own).replace("`", ""):
        return False
    if len(own.split()) > 8 or not is_about(own, option):
        return False
    first = min(
        (o.position for o in ranked if o.source == c.source and o.kind == "sentence"),
        default=c.position,
    )
    return c.position == first


def said_of(text: str, option: str, options: Sequence[str]) -> bool:
    """True when ``text`` speaks of the compared item ``option``: it opens with it ("A deep
    copy constructs ..."), or names it and no other compared item."""
    if not is_about(text, option) and not opens_with_subject(text, own_terms(option, options)):
        return False  # "DEFERRED means ..." speaks of BEGIN DEFERRED beside BEGIN IMMEDIATE
    others = [o for o in options if o != option]
    if not any(is_about(text, o) for o in others):
        return True
    return opens_with_subject(text, own_terms(option, options)) and not any(
        opens_with_subject(text, own_terms(o, options)) for o in others
    )


def names_option(text: str, option: str) -> bool:
    """True when ``text`` names the compared item ``option``, or it without the noun both
    items share ("The tmpdir and tmpdir_factory fixtures" for "the tmp_path and tmpdir
    fixtures")."""
    words = option.split()
    return is_about(text, option) or (len(words) > 1 and is_about(text, " ".join(words[:-1])))


_DIFFERENCES = re.compile(
    r"^(?:the |some )?(?:main |key |major |most important |important )?differences? "
    r"(?:with|from|to|between|of)\b.*:$",
    re.IGNORECASE,
)


def lists_differences(c: Candidate, options: Sequence[str], passages: Sequence[Chunk]) -> bool:
    """True for a sentence introducing the list of how the compared items differ ("The main
    differences with behave are:" in the section "Lettuce"), each item named in it or in its
    passage's title and headings."""
    if not _DIFFERENCES.match(c.text):
        return False
    passage = passages[c.source]
    context = f"{c.text}\n{passage.title}\n{passage.heading}"
    return all(names_option(context, o) for o in options)


_CONTRASTS = re.compile(
    r"\b(?:whereas|unlike|rather than|instead of|differs? from|in contrast|as opposed to|"
    r"similar to\b.{1,80}?\bbut|(?:more|less) \w+ than|(?:faster|slower|smaller|larger) than|"
    r"(?:main|key|only|major|chief) difference|difference (?:is|being) that|except that)\b",
    re.I,
)
"""What sets two items apart in one sentence ("X is a short one-liner, whereas Y ..."; "X
is similar to Y, but ..."; "A little faster and a little less versatile than PrintLogger"; "A
RelatedFactory behaves mostly like a SubFactory, with the main difference that ..."),
more than a "but" or "only" of any kind."""


def sets_apart(c: Candidate, options: Sequence[str]) -> bool:
    """True when ``c`` says how the compared items differ: it names both (the item whose API
    entry it continues is named: "A little faster ... than structlog.PrintLogger." in
    WriteLogger's entry) and sets one against the other."""
    named = f"{c.entry} {c.text}"
    return all(names_option(named, o) for o in options) and _CONTRASTS.search(c.text) is not None
