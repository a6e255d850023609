"""One SSE stream for a run and every run below it: the merge of their frame streams.

The event id is a cursor naming the last seq received of each run (``RUN:SEQ,RUN:SEQ``), so
``Last-Event-ID`` resumes every run of the tree where it stopped, nothing lost or repeated.
With ``deltas``, what agents say streams as ``text-delta`` events (model text while it is
written, then the rest of the recorded text in pieces); their ids add the characters given of
the agent's current text (``RUN:SEQ+CHARS``), so a resumed stream goes on from there.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterable
from typing import Any

from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.requests import Request

from kforge import jsoncodec
from kforge.frames import AgentSpeaking, Frame, TokenDelta, frame_to_dict
from kforge.runtime.interventions import descendants
from kforge.runtime.text_deltas import SpokenText
from kforge.server.problems import Problem
from kforge.server.sse import counted_stream
from kforge.server.state import ServerState
from kforge.server.streams import RunProgress

__all__ = ["parse_cursor", "tree_event_stream"]

MAX_RUNS = 200
_DISCOVER_S = 1.0
"""How often a quiet tree is checked for new child runs (a parent may fork while it commits
nothing, e.g. inside one tool call that forks and waits)."""
_PAIR = re.compile(r"^[A-Za-z0-9_.-]{1,200}:\d{1,12}(\+\d{1,9})?$")


def parse_cursor(text: str | None) -> dict[str, tuple[int, int]]:
    """Per run: the last seq received, and the characters received of its current text."""
    if text is None or not text.strip():
        return {}
    pairs = text.strip().split(",")
    if len(pairs) > MAX_RUNS or not all(_PAIR.match(p) for p in pairs):
        raise Problem(
            400,
            "invalid-last-event-id",
            "Last-Event-ID of a tree stream must be the id of the last event received "
            "(RUN:SEQ pairs separated by commas)",
        )
    found: dict[str, tuple[int, int]] = {}
    for run, _, place in (p.rpartition(":") for p in pairs):
        seq, _, chars = place.partition("+")
        found[run] = (int(seq), int(chars or 0))
    return found


def _cursor(seen: dict[str, int], texts: dict[str, SpokenText]) -> str:
    parts = []
    for run, seq in seen.items():
        text = texts.get(run)
        sent = text.sent if text is not None else 0
        if seq > 0 or sent:
            parts.append(f"{run}:{seq}" + (f"+{sent}" if sent else ""))
    return ",".join(parts)


def tree_event_stream(
    state: ServerState, request: Request, root: str, *, deltas: bool
) -> EventSourceResponse:
    runtime = state.runtime
    runtime.get_run(root)
    cursor = parse_cursor(request.headers.get("last-event-id"))
    seen = {run: seq for run, (seq, _) in cursor.items()}
    texts = {run: SpokenText(sent) for run, (_, sent) in cursor.items()}

    async def events() -> AsyncIterator[ServerSentEvent]:
        # bounded: a slow client makes the pumps wait, their mailboxes overflow, and they catch
        # up from the store instead of piling frames up here
        merged: asyncio.Queue[tuple[str, Frame | TokenDelta | None]] = asyncio.Queue(100)
        tasks: dict[str, asyncio.Task[None]] = {}

        async def pump(run_id: str) -> None:
            try:
                async for item in state.streams.events(
                    run_id, after_seq=seen.get(run_id, 0), deltas=deltas
                ):
                    if not isinstance(item, RunProgress):  # asked for none: never comes
                        await merged.put((run_id, item))
            finally:
                await merged.put((run_id, None))

        def discover() -> None:
            for run in [runtime.get_run(root), *descendants(runtime.store, root, limit=MAX_RUNS)]:
                if run.id not in tasks and len(tasks) < MAX_RUNS:
                    tasks[run.id] = asyncio.get_running_loop().create_task(pump(run.id))

        yield ServerSentEvent(retry=1000, comment="kforge tree stream")
        discover()
        ended: set[str] = set()
        try:
            while len(ended) < len(tasks):
                try:
                    run_id, item = await asyncio.wait_for(merged.get(), _DISCOVER_S)
                except TimeoutError:
                    discover()
                    continue
                if item is None:
                    ended.add(run_id)
                    discover()
                else:
                    text = texts.setdefault(run_id, SpokenText())
                    said: Iterable[str] = ()
                    if isinstance(item, TokenDelta):
                        said = text.live(item.text)
                    elif isinstance(item, AgentSpeaking) and deltas:
                        said = text.spoken(item.text)
                    for piece in said:
                        chunk = {"type": "text-delta", "agentId": run_id, "textDelta": piece}
                        yield ServerSentEvent(
                            _dumps(chunk), event="text-delta", id=_cursor(seen, texts)
                        )
                    if isinstance(item, TokenDelta):
                        continue
                    seen[run_id] = item.seq
                    if item.type in ("status.changed", "intervention"):
                        discover()
                    yield ServerSentEvent(
                        _dumps(frame_to_dict(item)), event=item.type, id=_cursor(seen, texts)
                    )
        finally:
            for task in tasks.values():
                task.cancel()
        yield ServerSentEvent(_dumps({"root": root, "runs": len(tasks)}), event="end")

    return counted_stream(state, request, events())


def _dumps(data: dict[str, Any]) -> str:
    return jsoncodec.dumps(data)
