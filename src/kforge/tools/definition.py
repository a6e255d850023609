"""ToolDefinition: the serializable description of a tool (name, schemas, annotations, examples).

Any definition serializes to JSON and parses back unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kforge import jsoncodec
from kforge.tools.annotations import ToolAnnotations

__all__ = ["ToolDefinition", "ToolExample"]


@dataclass(frozen=True, slots=True)
class ToolExample:
    """An example call shown to models that learn from examples."""

    input: dict[str, Any]
    description: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"input": self.input, "description": self.description}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolExample:
        return cls(input=dict(data.get("input") or {}), description=data.get("description", ""))


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    annotations: ToolAnnotations = field(default_factory=ToolAnnotations)
    examples: tuple[ToolExample, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
            "annotations": self.annotations.to_dict(),
        }
        if self.output_schema is not None:
            data["output_schema"] = self.output_schema
        if self.examples:
            data["examples"] = [e.to_dict() for e in self.examples]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolDefinition:
        return cls(
            name=data["name"],
            description=data.get("description", ""),
            input_schema=data.get("input_schema") or {"type": "object", "properties": {}},
            output_schema=data.get("output_schema"),
            annotations=ToolAnnotations.from_dict(data.get("annotations")),
            examples=tuple(ToolExample.from_dict(e) for e in data.get("examples") or ()),
        )

    def to_json(self) -> str:
        return jsoncodec.dumps(self.to_dict(), sort_keys=True, spaced=True)

    @classmethod
    def from_json(cls, text: str) -> ToolDefinition:
        return cls.from_dict(jsoncodec.loads(text))
