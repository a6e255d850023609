"""Health, registered agents, models and corpora (list, search, ingest an allowed folder)."""

from __future__ import annotations

import asyncio
import re
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query

from kforge.server.problems import Problem
from kforge.server.schemas import IngestBody, SearchBody
from kforge.server.state import ServerState, server_state

__all__ = ["router"]

router = APIRouter()
State = Annotated[ServerState, Depends(server_state)]


@router.get("/health", tags=["server"], summary="Whether the server and its store answer")
async def health(state: State) -> dict[str, Any]:
    state.runtime.store.list_runs(limit=1)
    return {"status": "ok", "open_streams": state.streams.open_streams}


@router.get("/agents", tags=["server"], summary="Agent types runs can be started with")
async def agents(state: State) -> dict[str, Any]:
    return {"agents": state.runtime.registry.names()}


@router.get("/models", tags=["server"], summary="The model runs use, and the configured ones")
async def models(
    state: State,
    check: Annotated[bool, Query(description="Send each model a tiny request")] = False,
    timeout: Annotated[float, Query(gt=0, le=120)] = 30.0,
) -> dict[str, Any]:
    from kforge.cli.models import ModelStatus, _endpoint, check_model
    from kforge.llm.config import configured_model_specs, default_model_spec, load_config

    config = load_config()
    default = default_model_spec(config)
    specs = configured_model_specs(config)
    if check:
        rows = [await check_model(s, timeout=timeout, default=s == default) for s in specs]
    else:
        rows = [ModelStatus(s, *_endpoint(s), s == default, "not checked") for s in specs]
    return {"server_model": state.model_spec, "models": [_public(asdict(r)) for r in rows]}


def _public(row: dict[str, Any]) -> dict[str, Any]:
    """No credentials in responses: drop any user:password@ from an endpoint URL."""
    row["endpoint"] = re.sub(r"//[^/@\s]*@", "//", str(row.get("endpoint", "")))
    return row


def _catalog(state: ServerState) -> list[dict[str, Any]]:
    """The corpora of the runtime's passage store (none when it was given no passage store)."""
    from kforge.rag.catalog import Corpora
    from kforge.rag.corpus import list_corpora

    corpora = state.runtime.services.corpora
    return list_corpora(corpora.store) if isinstance(corpora, Corpora) else []


@router.get("/corpora", tags=["corpora"], summary="Document corpora kept in the store")
async def corpora(state: State) -> dict[str, Any]:
    return {"corpora": _catalog(state)}


def _corpus(state: ServerState, name: str) -> Any:
    if name not in {str(c.get("name")) for c in _catalog(state)}:
        raise Problem(
            404,
            "corpus-not-found",
            f"no corpus named '{name}'; GET /corpora lists them, and POST "
            f"/corpora/{name}/ingest indexes an allowed folder into it",
        )
    return state.runtime.services.corpus(name)


@router.post("/corpora/{name}/search", tags=["corpora"], summary="The best passages for a query")
async def search(name: str, body: SearchBody, state: State) -> dict[str, Any]:
    corpus = _corpus(state, name)
    return {"hits": [hit.to_dict() for hit in corpus.search(body.query, body.k)]}


@router.post(
    "/corpora/{name}/ingest",
    tags=["corpora"],
    summary="Index a server-side folder the operator allowed (--allow-ingest)",
)
async def ingest(name: str, body: IngestBody, state: State) -> dict[str, Any]:
    from kforge.rag.ingest import ingest_folder

    roots = [r.resolve() for r in state.settings.ingest_roots]
    if not roots:
        raise Problem(
            403,
            "ingest-disabled",
            "this server ingests no folders; start it with --allow-ingest DIR to let clients "
            "index DIR and its subfolders",
        )
    folder = Path(body.path).expanduser().resolve()
    if not any(folder == r or folder.is_relative_to(r) for r in roots):
        raise Problem(
            403,
            "folder-not-allowed",
            f"{body.path} is outside the folders this server may ingest ("
            + ", ".join(str(r) for r in roots)
            + "); choose a folder inside one of them",
        )
    if not folder.is_dir():
        raise Problem(422, "not-a-folder", f"{body.path} is not a folder on the server")
    corpus = state.runtime.services.corpus(name)  # ConfigurationError: a bad name
    report = await asyncio.to_thread(ingest_folder, corpus, folder)
    return {"corpus": name, "report": report.to_dict(), "summary": report.summary()}
