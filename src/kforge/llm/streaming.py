"""Relaying text deltas from a producer task to an async iterator, for the streaming providers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

__all__ = ["relay"]


async def relay(
    queue: asyncio.Queue[str | None], producer: asyncio.Future[Any]
) -> AsyncIterator[str]:
    """Yield what ``producer`` puts on ``queue`` until it puts None or finishes.

    Items queued before the producer finished are always delivered, even when it failed; the
    caller awaits ``producer`` afterwards for its result or its exception.
    """
    while True:
        if producer.done():
            while not queue.empty():
                item = queue.get_nowait()
                if item is None:
                    return
                yield item
            return
        getter = asyncio.ensure_future(queue.get())
        try:
            await asyncio.wait({getter, producer}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not getter.done():
                getter.cancel()
        if getter.done() and not getter.cancelled():
            item = getter.result()
            if item is None:
                return
            yield item
