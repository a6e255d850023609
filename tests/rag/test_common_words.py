"""Common words: the tokens of a GGUF file's vocabulary, read from its header alone."""

from __future__ import annotations

import struct
from pathlib import Path

from kforge.rag.common_words import gguf_tokens


def test_the_common_words_come_from_the_header_of_a_gguf_file(tmp_path: Path) -> None:
    def string(text: str) -> bytes:
        data = text.encode()
        return struct.pack("<Q", len(data)) + data

    tokens = ["<s>", "\u0120big", "\u0120lib", "ffi"]
    header = b"GGUF" + struct.pack("<IQQ", 3, 0, 3)
    header += string("general.name") + struct.pack("<I", 8) + string("tiny")
    header += string("tokenizer.ggml.scores") + struct.pack("<IIQ", 9, 6, 2) + bytes(8)
    header += string("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, len(tokens))
    header += b"".join(string(t) for t in tokens)
    path = tmp_path / "tiny.gguf"
    path.write_bytes(header)
    assert gguf_tokens(path) == tokens
    (tmp_path / "other.bin").write_bytes(b"NOPE")
    assert gguf_tokens(tmp_path / "other.bin") == []
