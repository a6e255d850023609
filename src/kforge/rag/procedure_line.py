"""The short line of a "how do I" answer: the call, command or code that does it."""

from __future__ import annotations

import re
from collections.abc import Sequence

from kforge.rag.commands import (
    command_of,
    commands_typed,
    is_step,
    runs_example,
    says_what_is_asked,
)
from kforge.rag.compose import Segment
from kforge.rag.question import Question, identifiers, mentions, unit_terms
from kforge.rag.short_quote import ShortAnswer
from kforge.rag.units import CALL_OPENING

__all__ = ["CODE_NAME", "procedure_line"]

CODE_NAME = re.compile(r"[A-Za-z][a-z0-9]*(?:_[a-z0-9]+)+(?:\(\))?")
"""A name joined from words by underscores, which names a command made of the words asked."""

_CLASS_NAME = re.compile(r"(?<![\w.$])[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+(?![\w$])")
"""A class as prose names it: words in capitals run together (``TryAgain``, ``RetryError``)."""
_OPTIONS = re.compile(r"[\u2018'`]?-")
"""A quote that is an entry's options (``-x, --extract``; a GNU manual's in curly quotes)."""
_OPTION_SAYS = 2
"""Question terms an option's entry must hold to be the way to do what is asked."""
_ASKS_HELP = re.compile(r"^(?:\$ )?[\w./-]+(?: [\w-]+)?(?: --help| -h| help)(?: [\w-]+)?$")
"""A command that asks for its own help (``coverage combine --help``, ``coverage help run``)."""
_ONE_COMMAND = 120
"""The longest one-line code block quoted whole as the command."""


def procedure_line(question: Question, units: Sequence[Segment]) -> ShortAnswer | None:
    """The call, command or code that does it: of the supporting units that offer one, the
    one saying most of what is asked (ties: the better unit). A unit offers an API signature,
    the option or call an entry opens with, a code span naming what is asked or holding a
    call, or its code block's line that holds most of what is asked."""
    terms = set(question.terms)
    # "... by setting the MAX_CONTENT_LENGTH config key:" then its code: the line naming it
    # (or the class it names: "... by raising the TryAgain exception:" then ``raise TryAgain``)
    led = [
        (u.source, n)
        for u in units
        if u.text.rstrip().endswith(":")
        for n in identifiers(u.text) + _CLASS_NAME.findall(u.text)
    ]
    # the calls the prose names ("fs.mkdir(path[, options], callback)") for a block's line
    prose = [n for u in units if not u.code for n in identifiers(u.text)]
    offered = []
    for order, unit in enumerate(units):
        text = unit.text.strip()
        typed = commands_typed(text.splitlines())
        # of the code in the passage of the sentence leading to it, not another's example
        names = [n for source, n in led if source == unit.source]
        named = next((x.strip() for x in typed if any(mentions(x, n) for n in names)), "")
        quote = named if unit.code and named else command_of(text, question, prose)
        if not quote and unit.code and "\n" not in text and len(text) <= _ONE_COMMAND:
            # a code block of one line: ``scrapy startproject tutorial``, not ``import json``
            quote = text if is_step(text) else ""
        opened = CALL_OPENING.match(quote)
        if opened and quote.count("(") > quote.count(")"):
            # the first line of a synopsis over several lines: the command it calls
            # (``target_include_directories``), not a call cut open
            quote = opened.group(1)
        # of a session, what its commands say, not what they printed
        said = len(unit_terms("\n".join(typed) if unit.code else unit.text) & terms)
        if quote and not unit.code and _OPTIONS.match(quote) and said < _OPTION_SAYS:
            quote = ""  # an option whose entry shares a word with the question ("file")
        if unit.code and runs_example(text, question):
            quote = ""  # ``$ python main.py --name Rick`` shows what the example does
        if quote and _ASKS_HELP.search(quote) and "help" not in terms:
            quote = ""  # ``$ coverage combine --help`` shows the options, it combines nothing
        if quote:
            # a block's line saying nothing of what is asked is only its first call
            guessed = unit.code and "\n" in text and not says_what_is_asked(quote, question)
            # a synopsis spelling what is asked (``add_test(NAME <name> COMMAND ...)`` for "how
            # do I add tests") before a call a sentence mentions in passing
            spelled = unit.code and len(unit_terms(quote.split("(", 1)[0]) & terms) >= 2
            # of two entries saying as much, the option named for what is asked: "-x,
            # --extract" for "how do I extract files", not "-n, --seek" mentioning --extract
            own_name = not unit_terms(quote) & terms
            offered.append(
                (
                    not (unit.code and named),
                    guessed,
                    not spelled,
                    -said,
                    own_name,
                    order,
                    quote,
                    unit.source,
                )
            )
    if not offered:
        return None
    *_, quote, source = min(offered)
    return ShortAnswer(quote, quote, source)
