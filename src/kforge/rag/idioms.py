"""Everyday phrases of a question said in the words documentation uses for them.

A user asks whether a tool obeys robots.txt "out of the box" or sends requests "at the same
time"; its manual says "by default" and "concurrent". Search and sentence selection match
words, so the question is read with such a phrase replaced by the manual's words (what the
user wrote is still what the answer shows). The list holds only set phrases whose meaning
does not depend on the subject.
"""

from __future__ import annotations

import functools
import re

__all__ = ["plain_words"]

_IDIOMS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), plain)
    for pattern, plain in (
        (r"\bout of the box\b", "by default"),
        (r"\bat (?:the same time|once)\b", "concurrently simultaneously"),
        (r"\b(?:turn|switch)(?:s|ed|ing)? off\b", "disable"),
        # "switch the access log off", "turn the check off": the particle after its object
        (
            r"\b(?:turn|switch)(?:s|ed|ing)? ((?:the|a|an|my|this|that|its|their) "
            r"(?:[\w.-]+ ){0,2}[\w.-]+) off\b",
            r"disable \1",
        ),
        (r"\b(?:turn|switch)(?:s|ed|ing)? (?:it |them )?on\b(?! (?:the|a|an)\b)", "enable"),
        (r"\bgives? up\b|\bgave up\b", "times out"),
        (r"\bget(?:s|ting)? rid of\b", "remove"),
        # "make the counter start over": a manual resets it ("start from scratch" it says too)
        (r"\bstart(?:s|ed|ing)? (?:over|afresh)\b", "reset"),
        # "keep all of them out of the docs", "leave the tests out": what a manual excludes
        (r"\bkeep(?:s|ing)? ((?:\w+ ){0,3}?\w+) out of\b", r"exclude \1 from"),
        (r"\b(?:leav(?:e|es|ing)|left) out\b", "exclude"),
        (r"\b(?:leav(?:e|es|ing)|left) ((?:\w+ ){0,3}?\w+) out of\b", r"exclude \1 from"),
        (r"\b(?:leav(?:e|es|ing)|left) ((?:\w+ ){0,3}?\w+) out\b", r"exclude \1"),
        (r"\bkeep(?:s|ing)? track of\b", "track"),
        (r"\bshut(?:s|ting)? up\b", "silence"),
        (r"\b(?:poke|look|dig)(?:s|ed|ing)? around\b", "browse"),
        (r"\bsplit(?:s|ting)? off\b", "forked"),
        # "make an option mandatory": manuals say an option or a field is "required"
        (r"\b(?:mandatory|compulsory|obligatory)\b", "required"),
        # "which formats does it accept if I don't give any?": what it does by default
        (
            r"\b(?:if|when) (?:i|you|we|one) (?:(?:do|does) not|never) (?:give|pass|set|put|"
            r"specify|provide|supply|choose|pick|configure|change)(?: (?:any|one|it|them|anything|"
            r"a value))?\b",
            "by default",
        ),
        # "without setting anything, how long ...?", "if I forget to pass a capacity": the
        # value a manual gives as the default
        (
            r"\bwithout (?:setting|passing|giving|specifying|providing|supplying|configuring|"
            r"changing) (?:anything|any|it|one|a value)\b",
            "by default",
        ),
        (
            r"\b(?:forg[eo]t|forgotten|neglect(?:s|ed)?|omit(?:s|ted)?) (?:to )?(?:pass|set|give|"
            r"specify|provide|supply)(?:ing)?\b",
            "by default",
        ),
        # "the simplest way to send an email": the way is asked, not how simple it is (a
        # manual says "In most cases, you can send email using send_mail()")
        (
            r"\b(?:simplest|easiest|best|quickest|recommended|preferred|proper|correct|right|"
            r"cleanest|usual|standard|normal|most common) (ways?|method|approach)\b",
            r"\1",
        ),
        # "is there a switch for that?": a setting a manual calls an option
        (
            r"\b(a|any|some|the|which|what) (?:switch|knob|toggle)(?:es|s)?\b"
            r"(?=\s*(?:\?|for\b|to\b|that\b|which\b|i\b|you\b|we\b))",
            r"\1 option",
        ),
        # "visible only to people who are signed in": a manual's users are "logged in"
        (r"\bsign(?:ed|s|ing)? in\b", "logged in"),
        (r"\bsign(?:ed|s|ing)? out\b", "logged out"),
        # "back up several machines", "work with several databases": manuals say "multiple"
        (r"\bseveral\b", "multiple"),
        (r"\bquicker\b", "faster"),
        (r"\bquickest\b", "fastest"),
        # "stop as soon as one test fails": a manual says when, or after, a thing occurs
        (r"\bas soon as\b", "when"),
        # "show my own page for a 404": what a user makes instead of the default is "custom"
        (r"\b(my|our|your|their) own\b", r"\1 custom"),
        # "when a 404 error happens": a manual says an error occurs ("what happens" asks)
        (r"(?<!\bwhat )\bhappen(?:s|ed|ing)?\b", "occurs"),
        # "how can I tell whether ...": to check; "how do I tell the command which app to
        # load": to specify it
        (r"\btell (whether|if)\b", r"check \1"),
        (r"\b(how (?:do|can|could|should|would) (?:i|we|you|one)) tell\b", r"\1 specify"),
        # "how do I get it back into a database?", "get my files back": to restore them
        (
            r"\bget(?:s|ting)? (it|them|(?:my|our|the|those|these) [\w.-]+) back\b",
            r"restore \1",
        ),
        # "up and taking connections": a server accepts connections, or requests
        (r"\btak(?:e|es|ing) (connections|requests)\b", r"accept \1"),
        # "stop ... instead of carrying on": to continue
        (r"\bcarr(?:y|ies|ied|ying) on\b", "continue"),
        # "how do I clear the lock?": unlock
        (r"\b(?:clear|remove|release)(?:s|ed|ing)? (?:the|a|that|this|its|stale) lock\b", "unlock"),
        # "the highest weight I can give", "the longest name allowed": a manual gives the
        # maximum (or "maximal value") of what may be set
        (
            r"\b(?:highest|largest|biggest|greatest|longest)\s+((?:[\w-]+\s+){0,2}?[\w-]+)\s+"
            r"(?=(?:(?:that\s+)?(?:i|you|we|one|it)\s+(?:can|could|may)\b|(?:allowed|"
            r"possible|supported|permitted|accepted)\b))",
            r"maximum maximal \1 ",
        ),
        (
            r"\b(?:lowest|smallest|shortest|least)\s+((?:[\w-]+\s+){0,2}?[\w-]+)\s+"
            r"(?=(?:(?:that\s+)?(?:i|you|we|one|it)\s+(?:can|could|may)\b|(?:allowed|"
            r"possible|supported|permitted|accepted)\b))",
            r"minimum minimal \1 ",
        ),
        # "how many significant digits ...?": a manual may count them as figures ("The default
        # precision is 12 significant figures")
        (r"\bsignificant digits\b", "significant digits figures"),
        # "what does I18N stand for?": what it is ("I18N is an abbreviation for ...")
        (r"^what (?:does|do) (.+?) stand for\b", r"what is \1"),
        # "what makes a unit count as a 'reference unit'?": what one is ("A reference unit is
        # not defined as a function of another units but of a dimension")
        (
            r"(^|, )what makes (?:an? |the |one )?[\w-]+ (?:count as|qualify as|be) (an? |the )?"
            "['\"\u2018\u201c]?([^?'\"\u2019\u201d]+?)['\"\u2019\u201d]?"
            r"(?: rather than [^?]+)?(?=\?|$)",
            r"\1what is \2\3",
        ),
        # "what exactly makes a function pure?": what a pure function is ("A function is pure
        # if it meets the following conditions: ...")
        (
            r"(^|, )what (?:exactly |precisely )?makes (an? |the )?"
            r"(?!(?:it|its|them|this|that|these|those|me|us|you)\b)([\w-]+) ([a-z]{3,})"
            r"(?: in [^?]*)?(?=\?|$)",
            r"\1what is \2\4 \3",
        ),
        # "what is a Measurement object made of?": what one is ("Measurements are the
        # combination of two quantities: ...")
        (
            r"\bwhat (is|are) (.+?) (?:actually |really )?(?:made (?:up )?of|composed of|"
            r"consisting of)(?=\?|$)",
            r"what \1 \2",
        ),
        # "what exactly is a repository?": the stress is no word of what is asked
        (r"\b(what|how|why|when|where|who|which) (?:exactly|precisely|actually|really)\b", r"\1"),
    )
)


_NOT = re.compile(r"\b(?:(ca)|(wo)|(sha)|(\w+?))n['\u2019]t\b", re.IGNORECASE)
_CONTRACTED = re.compile(r"(?<=\w)['\u2019](?:d|ll|re|ve|m)\b", re.IGNORECASE)
""""I'd", "you'll", "we're", "I've", "I'm": the pronoun is the word ("'s" may be a possessive
or "is", and stays)."""


def _spelled_not(match: re.Match[str]) -> str:
    can, will, shall, other = match.groups()
    if can or will or shall:
        head = can or will or shall
        word = {"ca": "can", "wo": "will", "sha": "shall"}[head.lower()]
        other = word.capitalize() if head[0].isupper() else word
    return f"{other} not"


_QUOTED = re.compile(r'"[^"\n]*"|\u201c[^\u201d\n]*\u201d')
"""A name the question quotes ("You're Next"), read as written."""


def plain_words(text: str) -> str:
    """``text`` with each set phrase of ``_IDIOMS`` in the words manuals use, and its
    contractions spelled out: "shouldn't" is "should not" and "you'll" is "you", so that no
    "shouldn", "t" or "ll" is read as a word of what is asked. What it quotes stays as it is."""
    parts, start = [], 0
    for quoted in _QUOTED.finditer(text):
        parts += [_plain(text[start : quoted.start()]), quoted.group(0)]
        start = quoted.end()
    return "".join([*parts, _plain(text[start:])])


def _plain(text: str) -> str:
    text = _CONTRACTED.sub("", _NOT.sub(_spelled_not, text))
    for pattern, plain in _IDIOMS:
        text = pattern.sub(functools.partial(_cased, plain), text)
    return text


def _cased(plain: str, match: re.Match[str]) -> str:
    """``plain`` (with ``match``'s groups) opening with a capital where the phrase it stands for
    did ("If I don't pass a stream, ..." is "By default a stream, ...": a sentence still starts
    there)."""
    said = match.expand(plain)
    return said[:1].upper() + said[1:] if match.group(0)[:1].isupper() else said
