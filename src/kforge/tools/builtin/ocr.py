"""``extract_screenshot_text``: OCR of an image with the ``tesseract`` program (Debian's
tesseract-ocr package)."""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import shutil
from pathlib import Path
from typing import Any

from kforge.tools.annotations import ToolAnnotations
from kforge.tools.base import Tool
from kforge.tools.result import ToolResult
from kforge.tools.tool_context import ToolContext

__all__ = ["OcrTool"]

_MAX_IMAGE_BYTES = 20_000_000


class OcrTool(Tool):
    """Reads an image given as base64, or as a path inside ``base_dir`` when one is set."""

    def __init__(self, *, base_dir: Path | None = None, timeout_s: float = 60.0) -> None:
        self.base_dir = base_dir.resolve() if base_dir is not None else None
        self.timeout_s = timeout_s

    @property
    def name(self) -> str:
        return "extract_screenshot_text"

    @property
    def description(self) -> str:
        return "Extract the text visible in a screenshot or other image (OCR)."

    @property
    def input_schema(self) -> dict[str, Any]:
        props: dict[str, Any] = {
            "image_base64": {
                "type": "string",
                "description": "The image (PNG, JPEG, ...) in base64.",
            },
            "language": {
                "type": "string",
                "pattern": "^[a-z_]{3,}(\\+[a-z_]{3,})*$",
                "default": "eng",
                "description": "Tesseract language code(s), e.g. 'eng' or 'eng+deu'.",
            },
        }
        alternatives: list[dict[str, Any]] = [{"required": ["image_base64"]}]
        if self.base_dir is not None:
            props["path"] = {"type": "string", "description": f"Image file under {self.base_dir}."}
            alternatives.append({"required": ["path"]})
        return {
            "type": "object",
            "properties": props,
            "anyOf": alternatives,
            "additionalProperties": False,
        }

    @property
    def annotations(self) -> ToolAnnotations:
        return ToolAnnotations.read_only(title="Extract text from an image")

    async def execute(
        self, arguments: dict[str, Any], context: ToolContext | None = None
    ) -> ToolResult:
        binary = shutil.which("tesseract")
        if binary is None:
            return ToolResult.error(
                "OCR is unavailable: the 'tesseract' program is not installed; install Debian's "
                "tesseract-ocr package (apt-get install tesseract-ocr)",
                kind="unavailable",
            )
        image = self._image(arguments)
        if isinstance(image, ToolResult):
            return image
        language = arguments.get("language", "eng")
        proc = await asyncio.create_subprocess_exec(
            binary, "stdin", "stdout", "-l", language,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            out, err = await proc.communicate(image)
        finally:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        if proc.returncode != 0:
            reason = err.decode("utf-8", "replace").strip().splitlines()
            return ToolResult.error(
                f"tesseract could not read the image: {reason[-1] if reason else 'unknown error'}",
                kind="ocr_failed",
            )
        text = "\n".join(line.rstrip() for line in out.decode("utf-8", "replace").splitlines())
        text = text.strip()
        return ToolResult.success(
            text or "(no text found in the image)", {"text": text, "language": language}
        )

    def _image(self, arguments: dict[str, Any]) -> bytes | ToolResult:
        if "image_base64" in arguments:
            try:
                data = base64.b64decode(arguments["image_base64"], validate=True)
            except (binascii.Error, ValueError):
                return ToolResult.error(
                    "image_base64 is not valid base64", kind="invalid_arguments"
                )
        elif "path" in arguments and self.base_dir is not None:
            path = (self.base_dir / arguments["path"]).resolve()
            if not path.is_relative_to(self.base_dir):
                return ToolResult.error(
                    f"path {arguments['path']!r} is outside {self.base_dir}",
                    kind="invalid_arguments",
                )
            if not path.is_file():
                return ToolResult.error(f"no image file at {path}", kind="invalid_arguments")
            data = path.read_bytes()
        else:
            return ToolResult.error("give the image as image_base64", kind="invalid_arguments")
        if len(data) > _MAX_IMAGE_BYTES:
            return ToolResult.error(
                f"the image is too large ({len(data)} bytes; at most {_MAX_IMAGE_BYTES})",
                kind="invalid_arguments",
            )
        return data
