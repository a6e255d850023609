"""Content blocks of a tool result: text, image, audio and resource (MCP-aligned)."""

from __future__ import annotations

import base64
import enum
from dataclasses import dataclass
from typing import Any

from kforge.frames.slots import built_by_slots

__all__ = ["ContentBlock", "ContentType"]


class ContentType(enum.Enum):
    TEXT = "text"
    IMAGE = "image"
    AUDIO = "audio"
    RESOURCE = "resource"


@built_by_slots
@dataclass(frozen=True, slots=True)
class ContentBlock:
    """One piece of a tool result. Images and audio carry raw bytes; JSON carries them as base64."""

    type: ContentType
    text: str | None = None
    """The text of a text block, or the text of a resource when it has one."""
    data: bytes | None = None
    """Raw bytes of an image or audio clip, or of a binary resource."""
    mime_type: str | None = None
    uri: str | None = None
    """Where a resource lives."""

    @classmethod
    def of_text(cls, content: str) -> ContentBlock:
        return cls(type=ContentType.TEXT, text=content)

    @classmethod
    def image(cls, data: bytes, mime_type: str) -> ContentBlock:
        return cls(type=ContentType.IMAGE, data=data, mime_type=mime_type)

    @classmethod
    def audio(cls, data: bytes, mime_type: str) -> ContentBlock:
        return cls(type=ContentType.AUDIO, data=data, mime_type=mime_type)

    @classmethod
    def resource(
        cls,
        uri: str,
        *,
        text: str | None = None,
        data: bytes | None = None,
        mime_type: str | None = None,
    ) -> ContentBlock:
        return cls(type=ContentType.RESOURCE, uri=uri, text=text, data=data, mime_type=mime_type)

    def as_text(self) -> str:
        """A textual rendering, for prompts and summaries."""
        if self.type is ContentType.TEXT:
            return self.text or ""
        if self.type in (ContentType.IMAGE, ContentType.AUDIO):
            size = len(self.data or b"")
            return f"[{self.type.value} {self.mime_type or 'unknown type'}, {size} bytes]"
        if self.text is not None:
            return self.text
        return f"[resource {self.uri or ''}]"

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.type.value}
        if self.text is not None:
            data["text"] = self.text
        if self.data is not None:
            data["data"] = base64.b64encode(self.data).decode("ascii")
        if self.mime_type is not None:
            data["mime_type"] = self.mime_type
        if self.uri is not None:
            data["uri"] = self.uri
        return data
