"""The call, command or code a passage's unit offers for a "how do I" question: an API
signature, the option or call an entry opens with (``-m, --move: ...``, ``shutil.copy2(src,
dst): ...``), a code span, or the line of a code block that does what is asked.

Quoted exactly from the unit, so a short answer line built from it is as exact as the unit.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from kforge.rag.question import Question, mentions, unit_terms

__all__ = [
    "command_of",
    "commands_typed",
    "description_of",
    "is_command_line",
    "is_step",
    "runs_example",
    "says_what_is_asked",
]

_CODE_SPAN = re.compile(r"`[^`\n]+`")
_NOT_A_STEP = re.compile(
    r"^(?:```|~~~|//|#|/\*|\*|import |from \S+ import |const .*require\(|'use strict'|\.\.\.\s|"
    r">>> import |(?:\$ )?cd |[\u2500-\u257f])"
)
"""Lines of a code block that do not do what it shows: comments, imports, a ``cd`` into the
folder the steps run in."""
_PROMPTS = ("$ ", ">>> ")
"""Prompts a session's commands follow: a shell's, Python's."""
_LINK_TARGET = re.compile(r"\s<[^`<>]+>`$")
"""The target a cross-reference's span ends with (``</usage/black_as_a_server>``)."""
_PROSE_LINE = re.compile(r"^[A-Z][a-z]*(?:[ ,]+\S+){11,}[.:]$")
"""A line of prose in a code block (a page's paragraph inside a fence its build did not
render): a sentence of twelve words or more, not a step, whatever brackets a link gives it."""
_SHOWS = re.compile(r"^(?:>>> )?(?:print|console\.(?:log|error|info)|echo|printf)\b")
"""A line that shows the result of the steps before it rather than taking one."""
_OPTION = (
    r"[\u2018'`]?-{1,2}[A-Za-z][\w-]*"
    r"(?:=[^\s\u2019'`,:]+|\[=?[^\]\s]+\]| <[^>]+>| [A-Z][A-Z_-]*)?[\u2019'`]?"
)
_API_ENTRY = re.compile(
    r"^(?:(?:class|classmethod|staticmethod|abstractmethod|async|coroutine|exception)\s+)?"
    rf"(?:((?:{_OPTION}(?:, )?)+|[A-Za-z_][\w.]*\([^()]*\)):{{1,2}}\s"
    # or an option's entry with its description after a dash: ``--host <str> - Bind ...``
    rf"|((?:{_OPTION}(?:, | / )?)+) [-\u2013\u2014] )"
)
"""An entry that opens with an option or a call: ``-m, --move: ...``, a GNU manual's quoted
options and their argument (``'-t NUMBER', '--tries=NUMBER': ...`` in curly quotes),
``shutil.copy2(src, dst):``, ``classmethod datetime.now(tz=None): ...`` (the call without its
kind)."""
_HELP_ENTRY = re.compile(rf"^((?:{_OPTION}(?:, )?)+) (?=[a-z]+ )")
"""An option's line of a program's help, its description in lower case after it
(``--list-locales print all known locales and exit``)."""
_PROSE_CALL = re.compile(r"(?<![\w.-])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\([^()\s]*\)")
"""A call named in prose (``shutil.rmtree()``); never the tail of a hyphenated name: the
``revert(1)`` of the manual page ``git-revert(1)``."""
_MAN_PAGE = re.compile(r"[\w.-]+\([1-9][a-z]?\)")
"""A manual page named with its section (``cmake(1)``, ``git-revert(1)``): no call."""
_USE = re.compile(r"\b(?:use|call|run|invoke|try)\s+(?:the\s+)?$", re.IGNORECASE)
"""Words offering the call that follows them as the way to do something."""
_PROSE_KEYWORD = re.compile(
    r"(?<![\w.=])[a-z_][a-z0-9_]*=(?:True|False|None|[0-9]+(?:\.[0-9]+)?|'[^'\s]+'|\"[^\"\s]+\")"
    r"(?![\w=])"
)
"""A keyword argument named in prose whose code spans were lost (``prompt=True``)."""
_PLURAL = re.compile(r"[A-Za-z]{3,}\((?:e?s)\)")
"""A word with its plural ending in brackets ("the drive(s)", "process(es)"): no call."""
_QUOTED = re.compile(r'"([^"\n]{3,60})"')
_REPORTED = re.compile(
    r"\b(?:with|says?|said|prints?|printed|reports?|reported|shows?|shown|reads?|message|"
    r"error|warning|output)\s+$",
    re.IGNORECASE,
)
"""Words before a quote of what a program said, not of what to run ('a fetch may fail with
"not found in commit"')."""
_ACTION = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`|[^\s'\"`]*/[^\s'\"`]*")
"""What a line of code does is in its words, not in the paths it runs in (``cd
../site.github.io``) nor in the strings it prints (``print('created temporary directory')``)."""
_DEFINES = re.compile(r"^(?:>>> )?(?:async\s+)?(?:def|class)\s")
_COMMAND = re.compile(r"^(?:\$ )?[a-z][\w.-]*(?: +\S+){1,8}$")
"""A shell command line: a lower-case command and its arguments (``mkdocs new my-project``)."""


def is_command_line(text: str) -> bool:
    """True for a line that is a shell command though the page did not mark it as code
    (``pytest -k "MyClass and not method"``): a lower-case command, its arguments, an option,
    path or quote among them, and no full stop."""
    line = text.strip()
    return (
        _COMMAND.fullmatch(line) is not None
        and re.search(r"\s-{1,2}\w|[/=\"']|\S\.\S|::", line) is not None
        and not line.endswith(".")
    )


def commands_typed(lines: list[str]) -> list[str]:
    """The lines of a code block that are typed: in a session, those after a prompt (the
    others are what the commands printed: "Coverage.py, version 6.5.0 with C extension" after
    ``$ coverage --version``); else all of them."""
    typed = [x for x in lines if x.lstrip().startswith(_PROMPTS)]
    return typed or lines


_RUNS_SCRIPT = re.compile(r"\$ (?:python[0-9.]*|py) +[\w./-]+\.py\b.*")
"""A session's command running a Python file (``$ python main.py --name Rick``)."""
_COMMENTS = ("//", "# ")
_PANEL = re.compile(r"[\u256d\u250c\u2554\u250f]")
"""The top left corner of a box a terminal draws around what it prints."""
_RUNNING = frozenset({"run", "start", "launch", "execut", "invok"})
"""Question terms asking how to run something."""


def runs_example(text: str, question: Question) -> bool:
    """True for code that does nothing asked: a session that only runs a program's file
    (``$ python main.py --help``) when the question does not ask how to run something (a
    tutorial shows what its example does that way, after the code that does what is asked),
    only comments (``// It asks for the missing CLI option --lastname``), or what a terminal
    printed in a box."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if lines and (all(line.startswith(_COMMENTS) for line in lines) or _PANEL.match(lines[0])):
        return True  # comments, or a terminal's panel ("╭─ Traceback ─╮"): what was printed
    typed = [line for line in lines if line.startswith("$ ")]
    return (
        bool(typed)
        and all(_RUNS_SCRIPT.fullmatch(line) for line in typed)
        and not _RUNNING & set(question.terms)
    )


def command_of(text: str, question: Question, names: Collection[str] = ()) -> str:
    """The call, command or code ``text`` offers for a "how do I" question, or "". Of a code
    block's lines that say nothing of what is asked, one calling a function in ``names`` (the
    ones the prose around it names, "fs.mkdir()") comes first."""
    terms = set(question.terms)
    if _CODE_SPAN.fullmatch(text) or is_command_line(text):
        return text
    if "\n" in text:  # a code block: the line that does what is asked, else a call
        lines = [x.strip() for x in text.splitlines() if x.strip()]
        steps = [x for x in lines if not (_NOT_A_STEP.match(x) or _PROSE_LINE.match(x))]
        steps = commands_typed(steps)
        said = {x: unit_terms(_ACTION.sub(" ", x)) & terms for x in steps}
        asked = [x for x in steps if said[x] and ("(" in x or _COMMAND.match(x))]
        # a call does it; a definition ("def show(page):") only names the example's function,
        # and printing ("console.log(`created ${dir}`)") shows what the call did
        asked.sort(key=lambda x: (bool(_DEFINES.match(x) or _SHOWS.match(x)), -len(said[x])))
        calls = [
            x
            for x in steps
            if ("(" in x or x.startswith("$ ") or is_command_line(x)) and not _DEFINES.match(x)
        ]
        calls.sort(key=lambda x: (bool(_SHOWS.match(x)), not any(_calls(x, n) for n in names)))
        return next(iter(asked or calls), "")
    entry = _API_ENTRY.match(text) or _HELP_ENTRY.match(text)
    if entry:
        return (entry.group(1) or entry.group(2)).rstrip(", /")
    # not a cross-reference left as written ({doc}`Black's HTTP server </usage/server>`)
    spans = [s for s in _CODE_SPAN.findall(text) if not _LINK_TARGET.search(s)]
    # a command quoted as prose quotes it: 'Running "git tag" without arguments lists ...'
    spans += _quoted_commands(text)
    named = [s for s in spans if any(mentions(s, n) for n in question.identifiers)]
    calls = [s for s in spans if "(" in s or " " in s.strip("`")]
    if named or calls:
        return (named or calls)[0]
    # a call named in prose whose code spans were lost (HTML): "use shutil.rmtree() to ..."
    written = [
        c for c in _PROSE_CALL.findall(text) if not (_PLURAL.fullmatch(c) or _MAN_PAGE.fullmatch(c))
    ]
    asked = [c for c in written if unit_terms(c) & terms]
    if asked or len(set(written)) == 1:
        return (asked or written)[0]
    # a keyword argument named so: "You can achieve the same using hide_input=True."
    given: list[str] = [] if written else _PROSE_KEYWORD.findall(text)
    if given and (len(set(given)) == 1 or any(unit_terms(k) & terms for k in given)):
        return next((k for k in given if unit_terms(k) & terms), given[0])
    first = written[0] if written else ""
    if first and _USE.search(text[: text.find(first)]):
        return first  # "Use shutil.rmtree() to delete a tree, or os.rmdir() for ..."
    # several calls, none of what is asked, none offered as the way: the sentence says what
    # they are ("mkstemp() and mkdtemp() are lower-level functions which require manual
    # cleanup"), not what to call
    return ""


def _quoted_commands(text: str) -> list[str]:
    """The commands ``text`` quotes as prose ('Running "git tag" without arguments ...'), not
    what a program said: a quote after "fail with", "prints", ... and those listed with it
    ('fail with "not found in commit" (file not seen) or "checksum mismatch"')."""
    found: list[str] = []
    reported, end = False, 0
    for m in _QUOTED.finditer(text):
        between = text[end : m.start()]
        reported = bool(_REPORTED.search(text[: m.start()])) or (
            reported
            and len(between) <= 40
            and re.search(r"(?:,|\bor|\band)\s*$", between) is not None
        )
        end = m.end()
        quote = m.group(1)
        if _COMMAND.match(quote) and (is_command_line(quote) or not reported):
            found.append(quote)
    return found


def says_what_is_asked(line: str, question: Question) -> bool:
    """Whether a line of code holds a word of ``question`` outside its strings and paths."""
    return bool(unit_terms(_ACTION.sub(" ", line)) & set(question.terms))


def _calls(line: str, name: str) -> bool:
    """Whether ``line`` calls ``name`` (its last dotted part: ``fs.mkdir`` is called as
    ``mkdir(`` once imported)."""
    short = name.rsplit(".", 1)[-1]
    return re.search(rf"(?<![\w$]){re.escape(short)}\s*\(", line) is not None


def is_step(line: str) -> bool:
    """False for a code line that takes no step of what its block shows: a comment, an import,
    a ``cd`` into the folder the steps run in."""
    return _NOT_A_STEP.match(line.strip()) is None


def description_of(text: str) -> str:
    """``text`` without the option or call an API entry opens with: what the entry says of
    it (``json.dump(obj, fp, *, ensure_ascii=True, ...): Serialize ...`` -> ``Serialize
    ...``), whose parameter names say nothing of what it does."""
    entry = _API_ENTRY.match(text)
    return text[entry.end() :] if entry else text
