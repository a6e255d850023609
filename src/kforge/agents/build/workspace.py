"""The Build agent's workspace: the one folder it writes in. Paths that would leave it (absolute
paths, ``..``, symbolic links pointing out) are refused; a write whose content is already there
is not repeated."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from kforge.errors import ValidationError

__all__ = ["Workspace"]


class Workspace:
    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).expanduser().resolve()

    def path(self, relative: str) -> Path:
        """The absolute path of ``relative`` inside the workspace; ValidationError if outside."""
        parts = Path(relative)
        if not relative.strip() or parts.is_absolute() or ".." in parts.parts:
            raise ValidationError(
                f"'{relative}' is not a path inside the workspace {self.root}; use a relative "
                "path without '..'"
            )
        target = (self.root / parts).resolve()
        if target != self.root and self.root not in target.parents:
            raise ValidationError(f"'{relative}' leads outside the workspace {self.root}")
        return target

    def read(self, relative: str) -> str | None:
        try:
            return self.path(relative).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def write(self, relative: str, content: str) -> dict[str, Any]:
        """Write ``content`` to ``relative`` (atomically); nothing is written when the file holds
        it already. Returns ``{"path", "sha256", "bytes", "written"}``."""
        target = self.path(relative)
        data = content.encode("utf-8")
        digest = hashlib.sha256(data).hexdigest()
        record = {"path": relative, "sha256": digest, "bytes": len(data), "written": False}
        if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == digest:
            return record
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.partial")
        partial.write_bytes(data)
        os.replace(partial, target)
        return {**record, "written": True}
