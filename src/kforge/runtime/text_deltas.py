"""What an agent says, as ``text-delta`` pieces: the model's text while it is generated, then
what the recorded text adds to it, in pieces. Joined, an agent's pieces are the text it said.

Model text streams live only (it is never stored); the text an agent says is recorded once, in
its ``agent.speaking`` frame. A listener that saw the live text gets only the rest of the
recorded text; one that came later (a replay) gets the recorded text in pieces; one that
reconnects after ``sent`` characters gets the recorded text from there.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

__all__ = ["SpokenText", "pieces"]

_BOUNDARY = re.compile(r"[.!?:;]+[)\]\"'\u201d\u2019]*[ \t]+|\n+")


def pieces(text: str) -> list[str]:
    """``text`` cut after each sentence's end and each line break; the pieces join to ``text``."""
    cuts = [m.end() for m in _BOUNDARY.finditer(text)]
    bounds = [0, *(c for c in cuts if 0 < c < len(text)), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if b > a]


def _after(streamed: str, text: str) -> int | None:
    """Where ``text`` goes on past ``streamed`` when ``streamed`` begins it, spacing aside
    (the recorded text is the streamed one tidied); None when it does not."""
    if text.startswith(streamed):
        return len(streamed)
    j = 0
    for char in streamed:
        if char.isspace():
            continue
        while j < len(text) and text[j].isspace():
            j += 1
        if j >= len(text) or text[j] != char:
            return None
        j += 1
    return j


class SpokenText:
    """One agent's text pieces for one listener. ``sent``: characters of the agent's current
    text a listener had before it reconnected (their content is not known here)."""

    def __init__(self, sent: int = 0) -> None:
        self._streamed: list[str] = []
        self._given = sent
        self._blind = sent > 0
        """Reconnected mid-text: what streamed meanwhile is lost, the recorded text has it."""

    @property
    def sent(self) -> int:
        """Characters of the current text given to the listener so far."""
        return self._given

    def live(self, delta: str) -> list[str]:
        """A piece of model text as it is generated."""
        if self._blind or not delta:
            return []
        self._streamed.append(delta)
        self._given += len(delta)
        return [delta]

    def spoken(self, text: str) -> Iterator[str]:
        """The recorded text the agent said: the pieces of it the listener has not had, each
        counted in ``sent`` as it is taken; then a new text begins."""
        if self._blind:
            rest = text[self._given :]
        else:
            streamed = "".join(self._streamed)
            start = _after(streamed, text)
            # None: the text was revised after it streamed, so it is said as recorded
            rest = ("\n\n" if streamed else "") + text if start is None else text[start:]
        for piece in pieces(rest):
            self._given += len(piece)
            yield piece
        self._streamed, self._given, self._blind = [], 0, False
