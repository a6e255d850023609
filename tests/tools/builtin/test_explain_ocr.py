"""explain_text_with_context (model-backed) and extract_screenshot_text (tesseract OCR)."""

from __future__ import annotations

import base64
import shutil
import struct
import zlib

import pytest

from kforge.llm.testing.scripted import ScriptedModel
from kforge.tools import ToolContext
from kforge.tools.builtin.explain import ExplainTextTool
from kforge.tools.builtin.ocr import OcrTool

CACHE = (
    "Flushing the cache empties it. The browser then downloads every page again. Pages load "
    "slowly for a while."
)


async def test_explain_uses_the_model_with_passage_and_context() -> None:
    model = ScriptedModel(["Flushing the cache empties it [2]."])
    result = await ExplainTextTool(model).execute(
        {"text": "flush the cache", "context": CACHE, "audience": "beginner"}
    )
    assert result.text == "Flushing the cache empties it."
    assert result.structured_content is not None
    assert result.structured_content["method"] == "model"
    assert result.structured_content["sentences"] == [
        {"text": "Flushing the cache empties it.", "from": "context"}
    ]
    prompt = model.calls[0].messages[-1].content
    assert "[1] (passage)\nflush the cache" in prompt and "(context)\nFlushing the cache" in prompt
    assert "beginner" in model.calls[0].messages[0].content


@pytest.mark.parametrize(
    "reply",
    [
        "Frameworks for Interoperability. " * 12,  # a loop
        "It means the cache is emptied by the network administrator every night at midnight.",
    ],
)
async def test_an_explanation_that_loops_or_invents_gives_way_to_the_context(reply: str) -> None:
    model = ScriptedModel([reply, reply])
    result = await ExplainTextTool(model).execute({"text": "flush the cache", "context": CACHE})
    assert result.structured_content is not None
    assert result.structured_content["method"] == "extractive"
    assert "Frameworks" not in result.text and "midnight" not in result.text
    assert result.text.startswith("Flushing the cache empties it.")
    assert "not supported by the passage and its context" in result.text
    model.assert_consumed()


async def test_explain_says_when_the_context_does_not_explain_the_passage() -> None:
    model = ScriptedModel([])
    model.answer_style = "extractive"  # type: ignore[attr-defined]
    result = await ExplainTextTool(model).execute({"text": "Frameworks for Interoperability."})
    assert result.text.startswith("The context does not explain this passage")
    assert result.structured_content is not None
    assert result.structured_content["method"] == "none"
    assert not model.calls


async def test_explain_falls_back_to_the_run_model_or_says_it_needs_one() -> None:
    model = ScriptedModel(["Flushing the cache empties it [2]."])
    result = await ExplainTextTool().execute(
        {"text": "flush the cache", "context": CACHE}, ToolContext(model=model)
    )
    assert result.text == "Flushing the cache empties it."
    missing = await ExplainTextTool().execute({"text": "x"})
    assert missing.is_error and missing.error_kind == "no_model"


# A 5x7 bitmap font for the letters the OCR test draws.
GLYPHS = {
    "H": ["10001", "10001", "10001", "11111", "10001", "10001", "10001"],
    "E": ["11111", "10000", "10000", "11110", "10000", "10000", "11111"],
    "L": ["10000", "10000", "10000", "10000", "10000", "10000", "11111"],
    "O": ["01110", "10001", "10001", "10001", "10001", "10001", "01110"],
    " ": ["00000"] * 7,
    "W": ["10001", "10001", "10001", "10101", "10101", "10101", "01010"],
    "R": ["11110", "10001", "10001", "11110", "10100", "10010", "10001"],
    "D": ["11110", "10001", "10001", "10001", "10001", "10001", "11110"],
}


def render_png(text: str, scale: int = 6, margin: int = 30) -> bytes:
    """Black text on white as a greyscale PNG, using only the standard library."""
    columns = sum(6 for _ in text)
    width, height = columns * scale + 2 * margin, 7 * scale + 2 * margin
    pixels = [[255] * width for _ in range(height)]
    for i, char in enumerate(text):
        for row, bits in enumerate(GLYPHS[char]):
            for col, bit in enumerate(bits):
                if bit == "1":
                    for dy in range(scale):
                        for dx in range(scale):
                            y = margin + row * scale + dy
                            x = margin + (i * 6 + col) * scale + dx
                            pixels[y][x] = 0
    raw = b"".join(b"\x00" + bytes(row) for row in pixels)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


needs_tesseract = pytest.mark.skipif(
    shutil.which("tesseract") is None, reason="tesseract not installed (Debian: tesseract-ocr)"
)


@needs_tesseract
async def test_ocr_reads_text_from_an_image() -> None:
    image = base64.b64encode(render_png("HELLO WORLD")).decode()
    result = await OcrTool().execute({"image_base64": image})
    assert not result.is_error, result.text
    assert "HELLO WORLD" in result.text.upper()


@needs_tesseract
async def test_ocr_reads_a_file_inside_its_folder_only(tmp_path: object) -> None:
    from pathlib import Path

    folder = Path(str(tmp_path))
    (folder / "shot.png").write_bytes(render_png("HELLO"))
    tool = OcrTool(base_dir=folder)
    assert "HELLO" in (await tool.execute({"path": "shot.png"})).text.upper()
    outside = await tool.execute({"path": "../../etc/passwd"})
    assert outside.is_error and "outside" in outside.text
    assert "path" not in OcrTool().input_schema["properties"]


@needs_tesseract
async def test_ocr_rejects_garbage() -> None:
    bad = await OcrTool().execute({"image_base64": "not base64!!"})
    assert bad.is_error and "not valid base64" in bad.text
    unreadable = await OcrTool().execute(
        {"image_base64": base64.b64encode(b"plain bytes").decode()}
    )
    assert unreadable.is_error and unreadable.error_kind == "ocr_failed"


async def test_ocr_without_tesseract_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    result = await OcrTool().execute({"image_base64": ""})
    assert result.is_error and result.error_kind == "unavailable"
    assert "apt-get install tesseract-ocr" in result.text
