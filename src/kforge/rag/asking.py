"""The sentence of a question that asks (without a phrase opening it with the user's setting),
what it names only to set its subject against, and the names that are the user's own."""

from __future__ import annotations

import re

from kforge.rag.textcheck import split_sentences

__all__ = ["asking_sentence", "contrasted", "users_own"]


def asking_sentence(question: str) -> str:
    """The sentence of ``question`` that asks (the last ending in "?"); the ones before it say
    the user's situation ("In CI I want to set the build number. How can I pass a setting
    from the command line?"): a name there that the documents never name is the user's, and
    does not alone make the question one they cannot answer."""
    sentences = split_sentences(question)
    asking = [s for s in sentences if s.rstrip().endswith("?")]
    sentence = asking[-1] if len(sentences) > 1 and asking else question
    # "In an ER triage model using PriorityResource, does a patient with priority 1 ...?": the
    # phrase before the comma tells the situation as a sentence before it would
    return _SETTING.sub("", sentence, count=1) or sentence


_SETTING = re.compile(r"^(?:in|for|with|on) (?:an?|my|our) [^,?]{3,80}, (?=\w[^?]*\?)", re.I)
"""A phrase opening the sentence that asks with the user's setting, then a comma."""


_CONTRAST = re.compile(r"\b(?:instead of|rather than|in place of|unlike)\s+([^,;?]+)", re.I)


def contrasted(term: str, question: str) -> bool:
    """True when ``question`` names ``term`` only as what it sets its subject against: "Why
    use plain assert instead of self.assertEqual?" asks about plain assert."""
    spans = [m.group(1) for m in _CONTRAST.finditer(question)]
    return any(term in span for span in spans) and not any(
        term in part for part in _CONTRAST.split(question)[::2]
    )


_FILE_NAME = re.compile(
    r"^[\w-]+\.(?:py|txt|sh|js|ts|json|ya?ml|toml|cfg|ini|md|rst|html?|csv|log|conf|db|sql|"
    r"c|h|cpp|go|rb|java)$"
)
_GIVEN_AS = re.compile(
    r"\b(?:python3?|node|bash|sh|ruby|perl|run|runs|my|called|named)\s+$", re.IGNORECASE
)
_PLACEHOLDER = re.compile(r"^(?:My[A-Z][a-z]\w*|my_\w+|my[A-Z]\w*|[Ff]oo|[Bb]ar|[Bb]az)(?:\.|$)")
"""A name a user makes up for their own code: ``MyClass``, ``my_app``, ``foo``."""


def users_own(term: str, question: str) -> bool:
    """True for a name that is the user's own, which documents need not name: a file name
    given as their example ("run my script as python myscript.py"; not one asked about by
    name, "Which tsconfig.json option ..."), or a name made up for their code, alone or
    before what the documents name ("MyClass.__wrapped__")."""
    if _PLACEHOLDER.match(term):
        return True
    if not _FILE_NAME.match(term):
        return False
    at = question.find(term)
    return at > 0 and _GIVEN_AS.search(question[:at]) is not None
