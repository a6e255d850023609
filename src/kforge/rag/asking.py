"""The sentence of a question that asks (without a phrase opening it with the user's setting),
and what it names only to set its subject against."""

from __future__ import annotations

import re

from kforge.rag.textcheck import split_sentences

__all__ = ["asking_sentence", "contrasted"]


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
