"""What goes with a chosen unit of an answer: the units that finish what it says, or say what
it is of."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from kforge.rag.candidates import Candidate, runs_on
from kforge.rag.commands import is_command_line
from kforge.rag.names import ENTRY
from kforge.rag.quantities import NUMBER, gives_default
from kforge.rag.units import normalized

__all__ = [
    "entry_opening",
    "example_before",
    "follow_on",
    "inherit_antecedents",
    "item_run",
    "place_antecedent",
    "refers_back",
    "runs_into_list",
    "said_before",
    "subject_of",
    "value_of",
    "way_after",
]

_EXPLETIVE = r"it(?:'s|\u2019s| is| was)(?: \w+){1,3} (?:to|that)\b"
"""An "it" standing for what its sentence goes on to say ("It's also possible to retry
...", "It is more efficient to use ..."), not for anything before it."""
_ANAPHOR = re.compile(
    rf"^(?!{_EXPLETIVE})"
    r"(?:he|she|it|they|his|her|its|their|this|these|those|such|the latter|the former)\b",
    re.IGNORECASE,
)


def refers_back(sentence: str) -> bool:
    """True when ``sentence`` opens with a word pointing to an earlier one ("It was ...")."""
    return _ANAPHOR.match(sentence) is not None


_CONTINUES_EXAMPLE = re.compile(r"(?:[a-z]{3,}s|will|would)\b(?![.(_\-])")
"""A sentence going on from the example before it, as a manual writes after ``grep -r
'hello' /home/gigi``: "searches for 'hello' in all files under ...", "lists names of ..."."""


def example_before(c: Candidate, own: Sequence[Candidate]) -> Candidate | None:
    """The example (code, or a command line) right before ``c`` in its passage when ``c`` goes
    on from it, else None."""
    if not _CONTINUES_EXAMPLE.match(c.text):
        return None
    return next(
        (
            o
            for o in own
            if o.position == c.position - 1 and (o.kind == "code" or is_command_line(o.text))
        ),
        None,
    )


def entry_opening(c: Candidate, own: Sequence[Candidate]) -> Candidate | None:
    """The unit opening the entry ``c`` continues (``--recursive, -r: Travel the directory
    structure recursively.`` for a later sentence of that option's text), or None."""
    if not c.entry:
        return None
    openings = [
        o
        for o in own
        if o.position < c.position
        and not o.entry
        and o.text.lstrip("\u2018'`*").startswith(c.entry)
    ]
    return max(openings, key=lambda o: o.position, default=None)


_GOES_ON = re.compile(
    r"^(?:doing so|in (?:that|this) case|as a result|therefore|thus|hence|otherwise|"
    r"because of this|for (?:this|that) reason|that is|instead|(?:that|this) way(?=,)|in doing so"
    # why it is so: "For efficiency reasons, Babel uses the fastest decimal implementation"
    r"|for (?:\w+ ){1,2}reasons?"
    # an API entry's next sentence, its subject the entry's name: "Returns the exit code."
    r"|(?-i:Returns|Raises|Yields))\b",
    re.IGNORECASE,
)
_MAX_LISTED = 3
_MAX_CODE = 2
"""Code blocks a sentence ending in a colon leads ("... set the key:" then its lines)."""


def follow_on(
    best: Candidate,
    own: Sequence[Candidate],
    *,
    why: bool = False,
    said: bool = False,
    entry: bool = False,
) -> list[Candidate]:
    """The units right after ``best`` that finish what it says: a sentence that goes on from
    it ("Doing so introduces a race condition" after "Do not use fs.access() to check ...";
    "They do not use getaddrinfo(3)" after "These functions are implemented quite
    differently"), or the items a sentence ending in a colon introduces ("... is about to
    exit as a result of either:"); for ``why``, one that gives a reason ("Dimensional reduction
    can be slow, so auto-reducing is disabled by default." after how to turn it on); with
    ``said``, only a sentence saying in so many words that it goes on ("That way, if two
    events get scheduled for the same time, ..." after "To fix this, we also store ...");
    for the ``entry`` of a name asked about, the sentence after its summary, whatever it says
    ("If value is not a member, raise KeyError." after "remove(value): Remove value from
    sorted set; value must be a member.")."""
    after = sorted((c for c in own if c.position > best.position), key=lambda c: c.position)
    if best.text.endswith(":"):  # the items it introduces, or the code it says to use
        if after and after[0].position == best.position + 1 and runs_on(after[0]):
            return [after[0]]  # the items read as one sentence
        items: list[Candidate] = []
        for c in after:
            kind = items[0].kind if items else c.kind
            if kind not in ("item", "code") or c.kind != kind:
                break
            if c.position != best.position + 1 + len(items):
                break
            items.append(c)
        return items[: _MAX_LISTED if not items or items[0].kind == "item" else _MAX_CODE]
    if runs_into_list(best, own) or (_BASES.search(best.text) and after):
        # "At the moment kitchen only requires" then "python: 2.4 or later"; a class's entry
        # naming its bases ("...WeakNamespace(...): Bases: weakref.WeakValueDictionary") then
        # what the class is
        return [after[0]]
    if best.answers:  # the page's answer to its own question: its next units too
        listed = [best]
        for c in after:
            if c.kind != best.kind or c.position != listed[-1].position + 1:
                break
            listed.append(c)
        return listed[1:_MAX_LISTED]
    if not after or after[0].position != best.position + 1 or after[0].kind != "sentence":
        return []
    nxt = after[0]
    if entry:  # the entry's next sentence, unless it opens the next entry
        return [] if ENTRY.match(nxt.text) else [nxt]
    if said:  # only a sentence saying in so many words that it goes on
        return [nxt] if _GOES_ON.match(nxt.text) else []
    goes_on = refers_back(nxt.text) or _GOES_ON.match(nxt.text)
    return [nxt] if goes_on or (why and _GIVES_REASON.search(nxt.text)) else []


_GIVES_REASON = re.compile(
    r",\s+so\s+(?!that\b)|\b(?:because|the reason|this is why|that is why)\b", re.IGNORECASE
)
"""A sentence saying why: "... can be slow, so auto-reducing is disabled by default"."""
_BASES = re.compile(r":\s*Bases:\s*[\w.,\s]+$")
"""A class's entry that names only its base classes; its description comes next."""
_UNFINISHED = re.compile(r"(?:\w+\s+){3,}[a-z]+$")
"""A sentence of four words or more that stops after a lower-case word, without punctuation."""
_ENTRY = re.compile(r"^[^:\s][^:]{0,40}:\s+\S")
"""An entry of a list written "term: text" ("python: 2.4 or later")."""


def runs_into_list(best: Candidate, own: Sequence[Candidate]) -> bool:
    """True when ``best`` stops without ending ("At the moment kitchen only requires") and the
    unit of ``own`` (its passage's) right after it is an entry or an item of the list that
    finishes it ("python: 2.4 or later"): a page rendered a sentence's end as a list."""
    nxt = next((c for c in own if c.position == best.position + 1), None)
    return (
        best.kind == "sentence"
        and _UNFINISHED.search(best.text) is not None
        and nxt is not None
        and (nxt.kind in ("item", "row") or _ENTRY.match(nxt.text) is not None)
    )


_SAYS_HOW = re.compile(
    r"^(?:to do (?:that|this|so|it)\b"
    r"|(?:you|we|one) (?:can|could|may|need to|have to|must) (?:do|achieve|accomplish|get) "
    r"(?:it|that|this|so|the same)\b"
    r"|(?:this|that|it) (?:can|could) (?:also )?be (?:done|achieved|accomplished)\b"
    r"|.*\b(?:make sure|be sure|remember|(?:do not|don't|don\u2019t) forget) to\b"
    # "This needs to be of the form module::function and will result in ..."
    r"|(?:this|it|they|these|the \w+) (?:needs? to|must|should|has to|have to) be "
    r"(?:(?:of|in) the (?:form|format)|written as|given as)\b"
    # "(If the full traceback is desired, then set ParserElement.verbose_traceback to True.)"
    r"|\(?if (?:you (?:want|need|prefer|wish)\b|[^,.]{3,60} (?:is|are) (?:desired|wanted|needed)\b)"
    r"[^.]*?,? (?:then )?(?:set|use|call|pass|add|run|enable|disable|specify)\b)",
    re.IGNORECASE,
)
"""A sentence saying how what the sentence before it describes is done: "You can do it passing
the parameter confirmation_prompt=True.", "To do that, use the envvar parameter ..."; or what
must be done with it ("If you do use a single instance though, make sure to call the reset
method appropriately"; "This needs to be of the form module::function"), or in which case to
do what ("(If the full traceback is desired, then set ParserElement.verbose_traceback to
True.)")."""


def way_after(best: Candidate, own: Sequence[Candidate]) -> list[Candidate]:
    """For "how do I": the sentence right after ``best`` that says how what ``best`` describes
    is done ("In some cases you could want to ... confirm it by typing it twice." then "You can
    do it passing the parameter confirmation_prompt=True."), else nothing. A few sentences on,
    one saying what to do in the case described says it too ("... you might want to terminate
    at some point in the middle of it." then "In that case, you can raise a typer.Exit()
    exception:")."""
    nxt = next((c for c in own if c.position == best.position + 1), None)
    if nxt is not None and nxt.kind == "sentence" and _SAYS_HOW.match(nxt.text):
        return [nxt]
    later = (c for c in own if 0 < c.position - best.position <= _CASE_SPAN)
    return [c for c in later if c.kind == "sentence" and _IN_THAT_CASE.match(c.text)][:1]


_IN_THAT_CASE = re.compile(
    r"^(?:in (?:that|this|such a|these|those|such) cases?|if so|for (?:that|this)),? (?:you|we|one) "
    r"(?:can|could|should|must|need to|may)\b",
    re.IGNORECASE,
)
"""What to do in the case the sentences before describe: "In that case, you can raise ..."."""
_CASE_SPAN = 3
"""How far after the sentence describing a case the one saying what to do in it may come."""


def subject_of(value: Candidate, own: Sequence[Candidate]) -> Candidate | None:
    """The unit right before ``value`` ("Specify the maximum size, in bytes, of HTTP
    headers." before "Defaults to 16 KiB."), else, after an entry's name, the one right after
    it ("Default: 2" then "Maximum number of times to retry ..."); None when neither is a
    candidate."""
    before = next((c for c in own if c.position == value.position - 1), None)
    return before or next((c for c in own if c.position == value.position + 1), None)


def value_of(best: Candidate, own: Sequence[Candidate]) -> list[Candidate]:
    """The unit next to ``best`` giving the value it leaves out ("MAX_COOKIE_SIZE: Warn if
    cookie headers are larger than this many bytes." then "Defaults to 4093."; a settings
    entry's "Default: 180" before "The amount of time (in secs) ...")."""
    if NUMBER.search(best.text):
        return []
    for step in (1, -1):  # a settings entry gives it first: "Default: 180", then what it is
        near = next((c for c in own if c.position == best.position + step), None)
        if near is not None and gives_default(near.text):
            return [near]
    if _THIS_VALUE.search(best.text):
        # "If the number of nodes in a graph becomes larger than this value, ..." and, after
        # notes on it, the entry's "Minimum value: 0, maximum value: 10000, default value: 50."
        later = sorted(
            (c for c in own if 1 < c.position - best.position <= _ENTRY_SPAN),
            key=lambda c: c.position,
        )
        return next(([c] for c in later if gives_default(c.text)), [])
    return []


_THIS_VALUE = re.compile(r"\b(?:this|that) (?:value|number|many|limit|amount|size)\b", re.I)
"""A sentence pointing to a value its entry gives elsewhere."""
_ENTRY_SPAN = 4
"""How far after such a sentence its entry's value may come."""


_THIS_THING = re.compile(
    r"\b(?:by|with|in|for|of|to|on|under|using|use) (?:this|these) (?:option|flag|switch|"
    r"setting|case|command|mode|parameter|argument|variable|feature|style|method|function)s?\b",
    re.IGNORECASE,
)
"""What the sentence before a sentence names, named again after a preposition: "enabled by
this option", "in this case" (a sentence opening "This method ..." is about the entry it is
in, not about the sentence before it)."""
_POINTS_BACK = re.compile(
    # not "It is possible to ...", "It's more efficient to use ...": an "it" standing for what
    # follows
    rf"(?!{_EXPLETIVE})(?:it|they)\b"
    r"|(?:this|that|these|those) (?:is|are|was|were|will|would|can|could|may|might|must|"
    r"should|has|have|had|does|also|means|makes|lets|allows|reduces|ensures|causes|requires|"
    r"gives|works|happens)\b"
    r"|(?:this|that|these|those) (?:change|approach|behaviou?r|limitation|restriction)s? \w",
    re.IGNORECASE,
)
"""A sentence opening with a pronoun that stands for what the sentence before it says ("It
is ...", "This means ...", "This change removes ..."), not with a noun it determines ("This
method ...", which names the entry it is part of), nor with an "it" that stands for what the
sentence goes on to say.
"He" and "she" stand for the person a passage is about, whom its lead sentence names (see
the lead taken in ``compose_extractive``), not for the sentence before: adding that one put
sentences no question needed into HotpotQA's answers (supporting-fact precision 63.9 → 62.7)."""


def place_antecedent(
    c: Candidate,
    chosen: list[Candidate],
    own: Sequence[Candidate],
    room: int,
    pointed: Mapping[int, Candidate] | None = None,
) -> None:
    """The sentence ``c`` points back to (``said_before``: "This change removes the security
    problems ..." says nothing without "Pint does not use eval") put right before it in
    ``chosen``, room permitting (one taking another's room cost as many answers as it gave);
    and after ``c``, the sentence that raised it (``pointed``, by ``inherit_antecedents``)."""
    before = said_before(c, own)
    quoted = {normalized(o.text) for o in chosen}
    if before is not None and normalized(before.text) not in quoted and len(chosen) < room:
        chosen.insert(chosen.index(c), before)
    after = pointed.get(id(c)) if pointed else None  # raised by it (``inherit_antecedents``)
    if after is not None and normalized(after.text) not in quoted and len(chosen) < room:
        chosen.insert(chosen.index(c) + 1, after)


def follows_from(c: Candidate) -> bool:
    """True for a sentence saying what follows from the one before it (``_FOLLOWS_FROM``)."""
    return _FOLLOWS_FROM.match(c.text) is not None


def inherit_antecedents(
    candidates: Sequence[Candidate], scores: dict[int, float]
) -> dict[int, Candidate]:
    """A sentence another points back to (``said_before``) scores at least what that one does:
    "Since version 0.7, Pint does not use eval under the hood." is what "This change removes
    the serious security problems ..." is about, and says the more of it. Returns, by the id
    of each sentence raised so, the one pointing to it (``place_antecedent`` reads them
    together)."""
    by_source: dict[int, list[Candidate]] = {}
    for c in candidates:
        by_source.setdefault(c.source, []).append(c)
    pointed: dict[int, Candidate] = {}
    for c in candidates:
        # what follows from a sentence is no more of it than it is its cause: read with it,
        # not raised by it
        raises = c.kind == "sentence" and not follows_from(c)
        before = said_before(c, by_source[c.source]) if raises else None
        if before is not None and scores[id(c)] > scores[id(before)]:
            scores[id(before)] = scores[id(c)]
            pointed[id(before)] = c
    return pointed


_FOLLOWS_FROM = re.compile(r"(?:thus|therefore|hence|consequently|as a result),", re.IGNORECASE)
"""A sentence saying what follows from the one before it: "Thus, the succeed() and fail()
methods cannot be called again ..." after "It triggers itself during its creation ..."."""


def said_before(c: Candidate, own: Sequence[Candidate]) -> Candidate | None:
    """The sentence right before ``c`` in its passage when ``c`` opens with a pronoun standing
    for what that sentence says (``_POINTS_BACK``), or names it as "this option", "in this
    case" ("Uvicorn supports two versions of auto-reloading behavior enabled by this option"
    after "--reload - Enable auto-reload."), else None."""
    if not (_POINTS_BACK.match(c.text) or _THIS_THING.search(c.text) or follows_from(c)):
        return None
    return next((o for o in own if o.position == c.position - 1 and o.kind == "sentence"), None)


def item_run(item: Candidate, own: Sequence[Candidate]) -> list[Candidate]:
    """The items of the list ``item`` stands in, in order: its neighbours item by item."""
    at = {c.position: c for c in own if c.kind == "item"}
    start = item.position
    while start - 1 in at:
        start -= 1
    run = []
    while start in at:
        run.append(at[start])
        start += 1
    return run
