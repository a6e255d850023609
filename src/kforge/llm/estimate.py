"""Token estimates without a tokenizer, for models whose tokenizer is not available offline.

BPE tokenizers of current chat models average about four characters of English text per
token; scripts outside ASCII take far more tokens per character, so each non-ASCII character
is counted as one token. Each chat message adds ``MESSAGE_OVERHEAD`` tokens for its role and
delimiters. The estimate errs on the high side, which is the safe side for budgets.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from kforge.llm.types import Message

__all__ = [
    "CHARS_PER_TOKEN",
    "MESSAGE_OVERHEAD",
    "estimate_messages_tokens",
    "estimate_text_tokens",
]

CHARS_PER_TOKEN = 4.0
MESSAGE_OVERHEAD = 4


def estimate_text_tokens(text: str) -> int:
    """Estimated tokens in ``text`` (0 for empty text)."""
    if not text:
        return 0
    ascii_chars = sum(1 for ch in text if ord(ch) < 128)
    other = len(text) - ascii_chars
    return max(1, math.ceil(ascii_chars / CHARS_PER_TOKEN) + other)


def estimate_messages_tokens(messages: Sequence[Message]) -> int:
    """Estimated prompt tokens of a chat, framing included."""
    total = 0
    for m in messages:
        total += MESSAGE_OVERHEAD + estimate_text_tokens(m.content)
        for call in m.tool_calls:
            total += estimate_text_tokens(call.name) + estimate_text_tokens(str(call.arguments))
    return total + (2 if messages else 0)
