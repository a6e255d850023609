"""``kforge`` as a subprocess, with this checkout's sources first on its Python path."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import kforge

__all__ = ["SRC", "kforge_popen"]

SRC = Path(kforge.__file__).resolve().parents[1]


def kforge_popen(
    args: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    path: Sequence[Path] = (),
    stdin: int = subprocess.DEVNULL,
) -> subprocess.Popen[str]:
    """``python -m kforge ARGS`` in ``cwd`` with ``env`` added to this environment and
    ``path`` after the sources on PYTHONPATH; KFORGE_APP and KFORGE_MODEL are left out."""
    merged = {**os.environ, **(env or {})}
    merged["PYTHONPATH"] = os.pathsep.join(
        [str(SRC), *map(str, path), os.environ.get("PYTHONPATH", "")]
    )
    for name in ("KFORGE_APP", "KFORGE_MODEL"):
        if name not in (env or {}):
            merged.pop(name, None)
    return subprocess.Popen(
        [sys.executable, "-m", "kforge", *args],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=merged,
        cwd=cwd,
    )
