"""What an extractive answer quotes for each item a question compares: a unit that says what
the item is, not one that names both items."""

from __future__ import annotations

import re
from collections.abc import Sequence

from kforge.rag.candidates import Candidate, bare_heading
from kforge.rag.defining import is_about, opens_with_subject
from kforge.rag.question import unit_terms
from kforge.rag.types import Chunk

__all__ = ["compared_unit", "said_of"]


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
        opens = opens_with_subject(c.text, unit_terms(option))
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
    if not is_about(text, option):
        return False
    others = [o for o in options if o != option]
    if not any(is_about(text, o) for o in others):
        return True
    return opens_with_subject(text, unit_terms(option)) and not any(
        opens_with_subject(text, unit_terms(o)) for o in others
    )
