"""Common words: the words the bundled local model spells with one token of its vocabulary,
read from the header of its GGUF file. A corpus may well not use such a word for what it does
speak of ("big" where it says "size"), unlike a name such as ``libffi``.
"""

from __future__ import annotations

import struct
from functools import lru_cache
from pathlib import Path

__all__ = ["MODIFIERS", "adverb_of_common_word", "common_words", "gguf_tokens", "is_common_word"]


_GGUF_SCALARS = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
"""Byte sizes of GGUF's fixed-size value types (8 is a string, 9 an array)."""


def gguf_tokens(path: Path) -> list[str]:
    """The ``tokenizer.ggml.tokens`` of a GGUF file, read from its header alone."""
    with path.open("rb") as f:

        def number(fmt: str) -> int:
            size = struct.calcsize(fmt)
            return int(struct.unpack(fmt, f.read(size))[0])

        def text() -> str:
            return f.read(number("<Q")).decode("utf-8", "replace")

        def skip(kind: int) -> None:
            if kind == 8:
                f.seek(number("<Q"), 1)
            elif kind == 9:
                inner, count = number("<I"), number("<Q")
                if inner in _GGUF_SCALARS:
                    f.seek(_GGUF_SCALARS[inner] * count, 1)
                else:
                    for _ in range(count):
                        skip(inner)
            else:
                f.seek(_GGUF_SCALARS[kind], 1)

        if f.read(4) != b"GGUF":
            return []
        number("<I")  # version
        number("<Q")  # tensors
        for _ in range(number("<Q")):
            key, kind = text(), number("<I")
            if key == "tokenizer.ggml.tokens" and kind == 9:
                inner, count = number("<I"), number("<Q")
                return [text() for _ in range(count)] if inner == 8 else []
            skip(kind)
    return []


@lru_cache(maxsize=1)
def common_words() -> frozenset[str]:
    """Words the bundled local model spells with one token of its vocabulary (a word-start
    token, "Ġword"): common English and common programming words. Empty without that model."""
    try:
        from kforge.llm.local.runtime import bundled_model_path

        tokens = gguf_tokens(bundled_model_path())
    except Exception:  # no bundled model: no word is known to be common
        return frozenset()
    return frozenset(t[1:].lower() for t in tokens if t.startswith("\u0120") and t[1:].isalpha())


def is_common_word(word: str) -> bool:
    """True when ``word`` is a common word (see ``common_words``): a word a corpus may well
    not use for what it does speak of ("big" where it says "size"), unlike a name such as
    ``libffi`` or a term such as "rebase"."""
    return word.isalpha() and word.lower() in common_words()


MODIFIERS = frozenset(
    """too also whole entire entirely several various certain even really actually quite very
    rather already still ever instead together altogether completely fully properly correctly
    exactly simply basically generally usually typically normally just merely anyway somehow
    particular specific specifically possible possibly easily quickly seem seems seemed
    seemingly apparently""".split()  # noqa: SIM905
)
"""Words that modify what a question asks rather than name it (see ``kforge.rag.focus``): "doit
*seems* to ignore it" is about what doit ignores."""


def adverb_of_common_word(word: str) -> bool:
    """True for an adverb made of a common word ("conceptually", "automatically"): how a
    question asks, which a corpus that never names it may well speak of."""
    word = word.lower()
    if not word.endswith("ly"):
        return False
    bases = [word[:-2], word[:-4] if word.endswith("ally") else "", word[:-3] + "y"]
    return any(len(base) >= 5 and is_common_word(base) for base in bases)
