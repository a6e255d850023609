from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from kforge.agents.router import RouterAgent
from kforge.rag.ingest import ingest_folder
from kforge.rag.samples import sample_corpus_path
from kforge.runtime import AgentRegistry, Runtime
from kforge.server import ServerSettings
from kforge.store.sqlite import SQLiteStore
from tests.server.agents import PacedAgent
from tests.server.helpers import LiveServer


def make_runtime(tmp_path: Path, model: object = "test") -> Runtime:
    registry = AgentRegistry()
    registry.register(PacedAgent.agent_type, PacedAgent)
    registry.register(RouterAgent.agent_type, RouterAgent)
    runtime = Runtime(SQLiteStore(tmp_path / "k.db"), model=model, registry=registry)  # type: ignore[arg-type]
    ingest_folder(runtime.services.corpus("samples"), sample_corpus_path())
    return runtime


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    docs = tmp_path / "allowed"
    docs.mkdir()
    (docs / "note.md").write_text("# Note\n\nServers stream frames as server-sent events.\n")
    settings = ServerSettings(ingest_roots=(docs,), max_body_bytes=10_000)
    with LiveServer(make_runtime(tmp_path), settings, model="test") as live:
        yield live


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where the web UI's tests save screenshots: KFORGE_SCREENSHOTS, or a tmp folder."""
    folder = Path(os.environ.get("KFORGE_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder
